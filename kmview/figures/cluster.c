/*
 * cluster.c — complete-linkage clustering by the nearest-neighbour chain.
 *
 * Complete linkage (the iScopes paper's choice: its groups are compact,
 * every member close to every other) is a reducible linkage, so the
 * nearest-neighbour chain finds exactly the merges of the naive algorithm
 * in O(n^2) time instead of O(n^3): a thousand ranks take milliseconds.
 * Ties are broken by the lowest index, so results never depend on chance.
 * Must never know what the points are.
 */
#include "kmview/figures/cluster.h"

#include <stdbool.h>
#include <stdlib.h>

#include "support/buf.h"

size_t kv_condensed_index(size_t n, size_t i, size_t j)
{
    if (i > j) {
        size_t t = i;
        i = j;
        j = t;
    }
    return i * n - i * (i + 1) / 2 + (j - i - 1);
}

/* The active cluster nearest to a (not a itself); `prefer` wins ties. */
static size_t nearest(const float *d, size_t n, const bool *active, size_t a,
                      long prefer, float *dist)
{
    size_t best = n;
    float bd = 0;
    for (size_t c = 0; c < n; c++) {
        if (c == a || !active[c])
            continue;
        float v = d[kv_condensed_index(n, a, c)];
        if (best == n || v < bd || (v == bd && (long)c == prefer)) {
            best = c;
            bd = v;
        }
    }
    if (prefer >= 0 && best != (size_t)prefer &&
        d[kv_condensed_index(n, a, (size_t)prefer)] == bd)
        best = (size_t)prefer;
    *dist = bd;
    return best;
}

static int by_height(const void *pa, const void *pb)
{
    const struct kv_raw_merge *x = pa, *y = pb;
    if (x->height != y->height)
        return x->height < y->height ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static size_t find(size_t *parent, size_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

void kv_label_merges(struct kv_raw_merge *raw, size_t n, struct kv_merge *out)
{
    if (n < 2)
        return;
    qsort(raw, n - 1, sizeof *raw, by_height);
    size_t *parent = km_xcalloc(2 * n, sizeof *parent);
    int *cluster = km_xcalloc(2 * n, sizeof *cluster);  /* root -> cluster id */
    int *size = km_xcalloc(2 * n, sizeof *size);
    for (size_t i = 0; i < n; i++) {
        parent[i] = i;
        cluster[i] = (int)i;
        size[i] = 1;
    }
    for (size_t k = 0; k + 1 < n; k++) {
        size_t ra = find(parent, raw[k].a), rb = find(parent, raw[k].b);
        int ca = cluster[ra], cb = cluster[rb];
        out[k] = (struct kv_merge){
            .a = ca < cb ? ca : cb, .b = ca < cb ? cb : ca,
            .height = raw[k].height, .size = size[ra] + size[rb],
        };
        parent[rb] = ra;
        cluster[ra] = (int)(n + k);
        size[ra] += size[rb];
    }
    free(parent);
    free(cluster);
    free(size);
}

/* Note the first time point a enters the chain. */
static void push(size_t *chain, size_t *len, size_t a, size_t *first_seen,
                 size_t *seen)
{
    chain[(*len)++] = a;
    if (first_seen && first_seen[a] == (size_t)-1)
        first_seen[a] = (*seen)++;
}

void kv_chain_linkage(float *d, size_t n, struct kv_raw_merge *raw,
                      size_t *first_seen)
{
    if (first_seen)
        for (size_t i = 0; i < n; i++)
            first_seen[i] = (size_t)-1;
    if (n < 2) {
        if (first_seen && n == 1)
            first_seen[0] = 0;
        return;
    }
    bool *active = km_xcalloc(n, sizeof *active);
    size_t *chain = km_xcalloc(n, sizeof *chain);
    size_t len = 0, nactive = n, nmerges = 0, seen = 0;
    for (size_t i = 0; i < n; i++)
        active[i] = true;
    while (nactive > 1) {
        if (len == 0) {
            size_t first = 0;
            while (!active[first])
                first++;
            push(chain, &len, first, first_seen, &seen);
        }
        size_t a, b;
        float h;
        for (;;) {
            a = chain[len - 1];
            long prev = len >= 2 ? (long)chain[len - 2] : -1;
            b = nearest(d, n, active, a, prev, &h);
            if ((long)b == prev)
                break;
            push(chain, &len, b, first_seen, &seen);
        }
        len -= 2;                                /* a and b are reciprocal */
        size_t keep = a < b ? a : b, gone = a < b ? b : a;
        for (size_t c = 0; c < n; c++) {         /* Lance-Williams: max */
            if (!active[c] || c == keep || c == gone)
                continue;
            float *dk = &d[kv_condensed_index(n, keep, c)];
            float dg = d[kv_condensed_index(n, gone, c)];
            if (dg > *dk)
                *dk = dg;
        }
        active[gone] = false;
        nactive--;
        raw[nmerges] = (struct kv_raw_merge){ keep, gone, h, nmerges };
        nmerges++;
    }
    free(active);
    free(chain);
}

void kv_complete_linkage(float *d, size_t n, struct kv_merge *out)
{
    if (n < 2)
        return;
    struct kv_raw_merge *raw = km_xcalloc(n, sizeof *raw);
    kv_chain_linkage(d, n, raw, NULL);
    kv_label_merges(raw, n, out);
    free(raw);
}

void kv_dendrogram_order(const struct kv_merge *m, size_t n, int *order)
{
    if (n == 0)
        return;
    if (n == 1) {
        order[0] = 0;
        return;
    }
    int *stack = km_xcalloc(2 * n, sizeof *stack);
    size_t sp = 0, k = 0;
    stack[sp++] = (int)(2 * n - 2);              /* the root */
    while (sp > 0) {
        int c = stack[--sp];
        if ((size_t)c < n) {
            order[k++] = c;
            continue;
        }
        const struct kv_merge *mg = &m[(size_t)c - n];
        stack[sp++] = mg->b;                     /* a first: pushed last */
        stack[sp++] = mg->a;
    }
    free(stack);
}

/* Apply the first `count` merges and label the groups. */
static size_t cut_after(const struct kv_merge *m, size_t n, size_t count,
                        int *label)
{
    size_t *parent = km_xcalloc(2 * n, sizeof *parent);
    for (size_t i = 0; i < 2 * n; i++)
        parent[i] = i;
    for (size_t k = 0; k < count && k + 1 < n; k++) {
        parent[m[k].a] = n + k;
        parent[m[k].b] = n + k;
    }
    int *group_of_root = km_xcalloc(2 * n, sizeof *group_of_root);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++) {
        size_t r = find(parent, i);
        if (!group_of_root[r])
            group_of_root[r] = (int)++groups;
        label[i] = group_of_root[r] - 1;
    }
    free(parent);
    free(group_of_root);
    return groups;
}

size_t kv_cut_height(const struct kv_merge *m, size_t n, double h, int *label)
{
    size_t count = 0;
    while (count + 1 < n && m[count].height <= h)
        count++;
    return cut_after(m, n, count, label);
}

size_t kv_cut_count(const struct kv_merge *m, size_t n, size_t k, int *label)
{
    size_t count = k >= n ? 0 : k == 0 ? n - 1 : n - k;
    return cut_after(m, n, count, label);
}
