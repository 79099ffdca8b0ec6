/*
 * htmlmsg.c — the Messages view's data in kmview's HTML report: the
 * communication matrix (its point-to-point and all-to-all parts apart;
 * bytes and messages sent, the sender's row as its Peers block gives it)
 * and, per MPI call site over the ranks, its messages, bytes and
 * message-size histogram.
 *
 * The page stays small whatever the run.  Up to KV_HTML_MATRIX ranks a
 * matrix cell is a pair of ranks; beyond, ranks are aggregated into blocks
 * of `per` consecutive ranks (a cell is the sum over its block's pairs),
 * because a screen has no more pixels than that for a map the mouse can
 * point into: at most KV_HTML_MATRIX^2 cells of each part travel, dense,
 * as base64 arrays (2.8 MB at worst for both parts, far less when every
 * figure is exact in float32).  The table of pairs lists single ranks:
 * every pair when they are few, else the HTML_PAIRS heaviest by bytes and
 * as many by messages, found with a bounded heap in one pass over the
 * peers.  Call sites are at most the run's locations, which the page
 * holds anyway.
 *
 * Must never write anything but the "messages" member of the data, nor
 * read anything but the run.
 */
#include "kmview/views/htmlmsg.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "kmview/write/html.h"
#include "kmview/views/messages.h"
#include "support/buf.h"

/* Cells per side of the matrix at most (a cell of 2 pixels at least in a
 * map of 512); more ranks are aggregated into blocks. */
#define KV_HTML_MATRIX 256
/* Pairs of the table by each measure when there are more than twice. */
#define HTML_PAIRS 250

/* The parts of the matrix: the column of kv_peer's figures. */
static const struct { const char *key; int col; } parts[] = {
    { "p2p", 0 },            /* sent point to point */
    { "a2a", 2 },            /* sent in all-to-all collectives */
};

struct pair {
    int from, to;
    uint64_t messages, bytes;
};

/* The matrix's extent: ranks 0 .. n - 1, and its blocks. */
struct grid {
    size_t n, per, side;
};

static bool any_messages(const struct kv_run *run)
{
    for (size_t i = 0; i < run->nsections; i++)
        if (run->ranks[i].nmsgs || run->ranks[i].npeers)
            return true;
    return false;
}

/* Every rank a row or column can name: the Ranks line's, and any rank
 * or peer beyond it (a file without one). */
static struct grid grid_of(const struct kv_run *run)
{
    size_t n = run->nranks > 0 ? (size_t)run->nranks : 0;
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        if ((size_t)r->rank + 1 > n)
            n = (size_t)r->rank + 1;
        if (r->npeers && (size_t)r->peers[r->npeers - 1].peer + 1 > n)
            n = (size_t)r->peers[r->npeers - 1].peer + 1;
    }
    struct grid g = { n, 1, n };
    if (n > KV_HTML_MATRIX) {
        g.per = (n + KV_HTML_MATRIX - 1) / KV_HTML_MATRIX;
        g.side = (n + g.per - 1) / g.per;
    }
    return g;
}

/* ---- the heaviest pairs -------------------------------------------------- */

/* a weighs less than b by `key` (bytes, else messages), then by the
 * other; among equals the later pair weighs less, so that the lowest
 * ranks win ties. */
static bool lighter(const struct pair *a, const struct pair *b, bool bytes)
{
    uint64_t x = bytes ? a->bytes : a->messages, y = bytes ? b->bytes
                                                          : b->messages;
    if (x != y)
        return x < y;
    x = bytes ? a->messages : a->bytes;
    y = bytes ? b->messages : b->bytes;
    if (x != y)
        return x < y;
    if (a->from != b->from)
        return a->from > b->from;
    return a->to > b->to;
}

/* A min-heap of the k heaviest pairs so far: h[0] the lightest. */
static void heap_down(struct pair *h, size_t n, size_t i, bool bytes)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && lighter(&h[l], &h[m], bytes))
            m = l;
        if (l + 1 < n && lighter(&h[l + 1], &h[m], bytes))
            m = l + 1;
        if (m == i)
            return;
        struct pair t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void heap_offer(struct pair *h, size_t *n, size_t k,
                       const struct pair *p, bool bytes)
{
    if (*n < k) {
        size_t i = (*n)++;
        h[i] = *p;
        while (i > 0 && lighter(&h[i], &h[(i - 1) / 2], bytes)) {
            struct pair t = h[i];
            h[i] = h[(i - 1) / 2];
            h[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    } else if (lighter(&h[0], p, bytes)) {
        h[0] = *p;
        heap_down(h, *n, 0, bytes);
    }
}

/* The k heaviest pairs of part column `col` by bytes or messages into
 * out (k of them at most); how many. */
static size_t heaviest(const struct kv_run *run, int col, bool bytes,
                       struct pair *out, size_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t j = 0; j < r->npeers; j++) {
            const struct kv_peer *p = &r->peers[j];
            if (!p->messages[col])
                continue;
            struct pair x = { r->rank, p->peer, p->messages[col],
                              p->bytes[col] };
            heap_offer(out, &n, k, &x, bytes);
        }
    }
    return n;
}

static int by_ranks(const void *pa, const void *pb)
{
    const struct pair *a = pa, *b = pb;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    return (a->to > b->to) - (a->to < b->to);
}

/* The pairs the table lists: all of `pairs` when there are at most
 * 2 x HTML_PAIRS, else the heaviest by bytes and by messages; by rank,
 * no pair twice.  Caller frees. */
static struct pair *table_pairs(const struct kv_run *run, int col,
                                size_t pairs, size_t *n)
{
    size_t k = pairs <= 2 * HTML_PAIRS ? pairs : HTML_PAIRS;
    struct pair *v = km_xcalloc(2 * k + 1, sizeof *v);
    size_t a = heaviest(run, col, true, v, k);
    size_t b = pairs <= 2 * HTML_PAIRS ? 0
                                       : heaviest(run, col, false, v + a, k);
    qsort(v, a + b, sizeof *v, by_ranks);
    size_t m = 0;
    for (size_t i = 0; i < a + b; i++)
        if (m == 0 || by_ranks(&v[m - 1], &v[i]) != 0)
            v[m++] = v[i];
    *n = m;
    return v;
}

/* ---- the matrix ------------------------------------------------------------ */

/* The cells of one part: bytes and messages sent, block row to block
 * column; its pairs and totals. */
struct cells {
    double *bytes, *messages;
    size_t pairs;
    uint64_t total_bytes, total_messages;
};

static void fill_cells(struct cells *c, const struct kv_run *run, int col,
                       const struct grid *g)
{
    size_t cells = g->side * g->side;
    c->bytes = km_xcalloc(cells + 1, sizeof *c->bytes);
    c->messages = km_xcalloc(cells + 1, sizeof *c->messages);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        size_t row = (size_t)r->rank / g->per;
        for (size_t j = 0; j < r->npeers; j++) {
            const struct kv_peer *p = &r->peers[j];
            if (!p->messages[col])
                continue;
            size_t at = row * g->side + (size_t)p->peer / g->per;
            c->bytes[at] += (double)p->bytes[col];
            c->messages[at] += (double)p->messages[col];
            c->pairs++;
            c->total_bytes += p->bytes[col];
            c->total_messages += p->messages[col];
        }
    }
}

/* One part: null when no rank sent anything in it, else its totals, its
 * cells and the pairs of its table as [from, to, messages, bytes, ...]. */
static void data_part(FILE *f, const struct kv_run *run, int col,
                      const struct grid *g)
{
    struct cells c = { 0 };
    fill_cells(&c, run, col, g);
    if (!c.pairs) {
        fputs("null", f);
        free(c.bytes);
        free(c.messages);
        return;
    }
    size_t n;
    struct pair *top = table_pairs(run, col, c.pairs, &n);
    fprintf(f, "{\"pairs\":%zu,\"bytes\":%llu,\"messages\":%llu,"
            "\"allPairs\":%s,\"b\":", c.pairs,
            (unsigned long long)c.total_bytes,
            (unsigned long long)c.total_messages,
            n == c.pairs ? "true" : "false");
    kv_html_array(f, c.bytes, g->side * g->side, 0);
    fputs(",\"m\":", f);
    kv_html_array(f, c.messages, g->side * g->side, 0);
    fputs(",\"top\":[", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%d,%d,%llu,%llu", i ? "," : "", top[i].from, top[i].to,
                (unsigned long long)top[i].messages,
                (unsigned long long)top[i].bytes);
    fputs("]}", f);
    free(top);
    free(c.bytes);
    free(c.messages);
}

/* ---- the call sites ---------------------------------------------------------- */

/* [location, ranks, messages, sent, received, [bin, messages, ...]] per
 * site, the most bytes first. */
static void data_sites(FILE *f, const struct kv_run *run)
{
    size_t n;
    struct kv_msg_site *v = kv_msg_sites(run, &n);
    fputs("\"sites\":[", f);
    for (size_t k = 0; k < n; k++) {
        const struct kv_msg_site *s = &v[k];
        fprintf(f, "%s\n[%d,%d,%llu,%llu,%llu,[", k ? "," : "", s->location,
                s->ranks, (unsigned long long)s->messages,
                (unsigned long long)s->sent, (unsigned long long)s->received);
        bool first = true;
        for (int b = 0; b < KV_MSG_BINS; b++)
            if (s->bins[b]) {
                fprintf(f, "%s%d,%llu", first ? "" : ",", b,
                        (unsigned long long)s->bins[b]);
                first = false;
            }
        fputs("]]", f);
    }
    fputc(']', f);
    free(v);
}

void kv_html_messages(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    fputs("\"messages\":", f);
    if (!any_messages(run)) {
        fputs("null,\n", f);
        return;
    }
    struct grid g = grid_of(run);
    fputc('{', f);
    data_sites(f, run);
    fprintf(f, ",\n\"ranks\":%zu,\"per\":%zu,\"side\":%zu", g.n, g.per,
            g.side);
    for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
        fprintf(f, ",\n\"%s\":", parts[k].key);
        data_part(f, run, parts[k].col, &g);
    }
    fputs("},\n", f);
}
