/*
 * htmlpaths.c — the Paths view's data in the HTML report: the calling-
 * context trees of KM_output's Paths blocks (format 6), which flame.js
 * draws as a flame graph.
 *
 * The ranks' trees of one thread number merge into one (paths.c's
 * kv_paths_merge: a path of one rank is the same path on another when
 * its sequence of regions from the root is the same) whose figures are
 * means over the live ranks (a rank without the path counts 0, as in
 * every other mean of the report), its Est(%) the mean weighted by
 * elapsed time and its marks those of any rank.  The merged trees are
 * always in the page, each cut to its KV_HTML_PATHS longest paths when it
 * has more (the ranks' trees may differ everywhere); each rank's own
 * trees only as long as they fit a budget of KV_HTML_PATHS paths, so
 * that a big run's page stays small (the page says what it holds;
 * kmview --json has every path of every rank).
 *
 * A tree travels as one array of W numbers per path, parents first:
 * parent index (-1: under the thread's root), routine (run->routines,
 * -1 unknown), location (run->locations, -1: the routine itself),
 * counts, elapsed (inclusive), net (its own), Est(%), and flags: 1 a
 * count with '+', 2 elapsed with '~', 4 net with '~', 8 the path holds
 * deeper recursion of its region (Fold r).  Paths folded at KM_PATHS_MAX
 * (Fold m) are under a row of routine KV_FOLDED (-2), a frame
 * "[folded at KM_PATHS_MAX]" that holds their time, under their parent.
 */
#include "kmview/views/htmlpaths.h"

#include <stdlib.h>
#include <string.h>

#include "kmview/write/html.h"
#include "kmview/write/out.h"
#include "kmview/views/paths.h"
#include "support/buf.h"

/* Paths of per-rank trees the page holds at most, all ranks together,
 * and of each merged tree. */
#define KV_HTML_PATHS 100000
#define W 8

enum { F_PLUS = 1, F_ELAPSED = 2, F_NET = 4, F_RFOLD = 8 };

static unsigned path_flags(const struct kv_path *p)
{
    return (p->extrap ? F_PLUS : 0) |
           (p->est & KV_EST(KV_M_ELAPSED) ? F_ELAPSED : 0) |
           (p->est & KV_EST(KV_M_NET) ? F_NET : 0) |
           (p->fold == KV_FOLD_RECURSION ? F_RFOLD : 0);
}

static void write_tree_values(FILE *f, const double *v, size_t n)
{
    kv_html_array(f, v, n * W, 0);
}

/* One rank's tree as the page has it: its paths at most KV_PATHS_DEPTH
 * levels deep (the page names a path by its regions from the root; the
 * deeper ones' time is in their ancestors' at that depth). */
static void write_tree(FILE *f, const struct kv_tree *t)
{
    /* (with a row for each frame of paths folded at KM_PATHS_MAX) */
    double *v = km_xcalloc(2 * t->npaths * W + 1, sizeof *v);
    long *at = km_xcalloc(t->npaths + 1, sizeof *at);   /* new index, -1 */
    long *folded_at = km_xmalloc((t->npaths + 1) * sizeof *folded_at);
    int *depth = km_xcalloc(t->npaths + 1, sizeof *depth);
    size_t n = 0, kept = 0;
    for (size_t k = 0; k <= t->npaths; k++)
        folded_at[k] = -1;          /* [parent + 1]: its frame's row */
    for (size_t k = 0; k < t->npaths; k++) {
        const struct kv_path *p = &t->paths[k];
        depth[k] = p->parent < 0 ? 1 : depth[p->parent] + 1;
        at[k] = depth[k] <= KV_PATHS_DEPTH ? (long)n : -1;
        if (at[k] < 0)
            continue;
        double parent = p->parent < 0 ? -1 : (double)at[p->parent];
        if (p->fold == KV_FOLD_MAX) {   /* under [folded at KM_PATHS_MAX] */
            long *fa = &folded_at[p->parent + 1];
            if (*fa < 0) {
                *fa = (long)n;
                double *o = v + n++ * W;
                o[0] = parent;
                o[1] = KV_FOLDED;
                o[2] = -1;
            }
            double *o = v + *fa * W;
            o[4] += p->elapsed;
            o[7] = (double)((unsigned)o[7] |
                            (p->est & KV_EST(KV_M_ELAPSED) ? F_ELAPSED : 0));
            parent = (double)*fa;
            at[k] = (long)n;
        }
        kept++;
        double *o = v + n++ * W;
        o[0] = parent;
        o[1] = p->routine;
        o[2] = p->location;
        o[3] = (double)p->count;
        o[4] = p->elapsed;
        o[5] = p->net;
        o[6] = p->est_pct;
        o[7] = path_flags(p);
    }
    fprintf(f, "{\"thread\":%d,\"folded\":%lld,\"n\":%zu,\"deeper\":%zu,"
            "\"v\":", t->thread, t->folded, n, t->npaths - kept);
    write_tree_values(f, v, n);
    fputc('}', f);
    free(v);
    free(at);
    free(folded_at);
    free(depth);
}

/* ------------------------------------------------------------------------ */
/* The merged trees (paths.c's kv_paths_merge)                               */

static unsigned mpath_flags(const struct kv_mpath *p)
{
    return (p->extrap ? F_PLUS : 0) | (p->est ? F_ELAPSED : 0) |
           (p->net_est ? F_NET : 0) | (p->rfold ? F_RFOLD : 0);
}

/* A merged tree as the page has it, W per path, figures the means over
 * the `nlive` live ranks (a rank without the path counts 0). */
struct merged {
    double *v;
    size_t n;
    size_t deeper;           /* paths deeper than KV_PATHS_DEPTH, left out */
};

static void merged_of(struct merged *m, const struct kv_mpaths *mp,
                      size_t nlive)
{
    m->v = km_xcalloc(mp->n * W + 1, sizeof *m->v);
    long *at = km_xcalloc(mp->n + 1, sizeof *at);   /* new index, -1 */
    m->n = 0;
    for (size_t k = 0; k < mp->n; k++) {
        const struct kv_mpath *p = &mp->v[k];
        at[k] = p->depth <= KV_PATHS_DEPTH ? (long)m->n : -1;
        if (at[k] < 0)
            continue;
        double *o = m->v + m->n++ * W;
        o[0] = p->parent < 0 ? -1 : (double)at[p->parent];
        o[1] = p->routine;
        o[2] = p->location;
        o[3] = (double)p->count / (double)nlive;
        o[4] = p->incl / (double)nlive;
        o[5] = p->net / (double)nlive;
        o[6] = p->est_pct;
        o[7] = mpath_flags(p);
    }
    m->deeper = mp->n - m->n;
    free(at);
}

static int by_double_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Keep m's `cap` longest paths: the elapsed time of the cap-th longest is
 * the cut; a path is never longer than its parent, so what is kept still
 * holds every kept path's parent (at the cut, in the file's order). */
static void merged_cut(struct merged *m, size_t cap)
{
    double *el = km_xcalloc(m->n, sizeof *el);
    for (size_t k = 0; k < m->n; k++)
        el[k] = m->v[k * W + 4];
    qsort(el, m->n, sizeof *el, by_double_desc);
    double cut = el[cap - 1];
    free(el);
    size_t ties = cap;       /* paths at the cut that may be kept */
    for (size_t k = 0; k < m->n; k++)
        ties -= m->v[k * W + 4] > cut;
    long *at = km_xcalloc(m->n, sizeof *at);   /* new index, -1 dropped */
    size_t kept = 0;
    for (size_t k = 0; k < m->n; k++) {
        double *o = m->v + k * W, e = o[4];
        int parent = (int)o[0];
        bool keep = (parent < 0 || at[parent] >= 0) &&
                    (e > cut || (e == cut && ties > 0 && ties--));
        at[k] = keep ? (long)kept : -1;
        if (!keep)
            continue;
        if (parent >= 0)
            o[0] = (double)at[parent];
        memmove(m->v + kept * W, o, W * sizeof *o);
        kept++;
    }
    free(at);
    m->n = kept;
}

/* The tree of thread number `thread`, merged over the live ranks. */
static void write_merged(FILE *f, const struct kv_stats *st, int thread)
{
    struct kv_mpaths mp;
    kv_paths_merge(&mp, st->run, thread);
    struct merged m;
    merged_of(&m, &mp, st->n);
    size_t all = m.n;
    if (m.n > KV_HTML_PATHS)
        merged_cut(&m, KV_HTML_PATHS);
    long long folded = 0;    /* entries on folded paths, over the ranks */
    for (size_t p = 0; p < st->n; p++)
        for (size_t k = 0; k < st->sec[p]->ntrees; k++)
            if (st->sec[p]->trees[k].thread == thread)
                folded += st->sec[p]->trees[k].folded;
    fprintf(f, "{\"thread\":%d,\"ranks\":%d,\"n\":%zu,\"all\":%zu,"
            "\"deeper\":%zu,\"folded\":%lld,\"v\":", thread, mp.nranks, m.n,
            all, m.deeper, folded);
    write_tree_values(f, m.v, m.n);
    fputc('}', f);
    free(m.v);
    kv_mpaths_free(&mp);
}

/* ------------------------------------------------------------------------ */

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The thread numbers that have a tree on some live rank, in order. */
static int *thread_numbers(const struct kv_stats *st, size_t *n)
{
    int *t = NULL;
    size_t cap = 0;
    *n = 0;
    for (size_t p = 0; p < st->n; p++)
        for (size_t k = 0; k < st->sec[p]->ntrees; k++) {
            int th = st->sec[p]->trees[k].thread;
            bool seen = false;
            for (size_t i = 0; i < *n && !seen; i++)
                seen = t[i] == th;
            if (seen)
                continue;
            KM_GROW(t, cap, *n + 1);
            t[(*n)++] = th;
        }
    if (*n)
        qsort(t, *n, sizeof *t, by_int);
    return t;
}

static size_t rank_paths(const struct kv_rank *r)
{
    size_t n = 0;
    for (size_t k = 0; k < r->ntrees; k++)
        n += r->trees[k].npaths;
    return n;
}

void kv_html_paths(FILE *f, const struct kv_stats *st, bool per_rank)
{
    size_t nthreads;
    int *threads = thread_numbers(st, &nthreads);
    fputs(",\n\"paths\":", f);
    if (nthreads == 0) {
        fputs("null", f);
        free(threads);
        return;
    }
    fputs("{\"threads\":[", f);
    for (size_t i = 0; i < nthreads; i++)
        fprintf(f, "%s%d", i ? "," : "", threads[i]);
    fputs("],\"mean\":[", f);
    for (size_t i = 0; i < nthreads; i++) {
        fputs(i ? ",\n" : "\n", f);
        write_merged(f, st, threads[i]);
    }
    /* each rank's own trees, in rank order, while they fit */
    size_t rows = 0, held = 0, with = 0;
    fputs("],\"ranks\":[", f);
    for (size_t p = 0; p < st->n; p++) {
        const struct kv_rank *r = st->sec[p];
        size_t n = rank_paths(r);
        if (r->ntrees == 0)
            continue;
        with++;
        if (!per_rank || rows + n > KV_HTML_PATHS)
            continue;
        rows += n;
        fprintf(f, "%s\n{\"col\":%zu,\"trees\":[", held++ ? "," : "", p);
        for (size_t k = 0; k < r->ntrees; k++) {
            if (k)
                fputc(',', f);
            write_tree(f, &r->trees[k]);
        }
        fputs("]}", f);
    }
    fprintf(f, "],\"held\":%zu,\"withTrees\":%zu}", held, with);
    free(threads);
}
