/*
 * ranks.c — clustering the ranks of one run by their profiles.
 *
 * A rank's profile is its time split into parts that add up to its total:
 * per routine the computation (net minus the routine's own I/O), its own
 * MPI calls and its own I/O statements, plus the time outside routines,
 * the time in uninstrumented routines and MPI start-up (apart: rank 0's
 * MPI_INIT often takes longer, and that is no behaviour of the program).
 * libkm's own overhead is left out.  Parts that are zero on every rank
 * are dropped.  A part that contains an estimate on some rank is marked
 * with '~' where kmview names it.
 *
 * The distance between two ranks is the Manhattan (L1) distance between
 * their profiles divided by the mean total time of the ranks:
 *   d(p, q) = sum over parts f of |x(p, f) - x(q, f)| / mean total time.
 * Because the parts partition each rank's time, the L1 distance is the
 * amount of time the two ranks spend differently; divided by the mean total
 * it is a fraction of the run (0.05: 5% of the run), comparable between
 * programs and machines, so one default cut fits every run.  Per-part
 * standardisation (z-scores) is not used: it would give a routine that
 * takes a microsecond, with nanoseconds of noise, the weight of the main
 * loop, and noise would decide the groups.  Nor are the parts divided by
 * each rank's own total: ranks of an MPI program end together, and a rank
 * that computes more makes the others wait, which shows in seconds of MPI
 * time, the very difference to find.
 *
 * With --paths a rank's profile is instead its own time on every call
 * path (thread 0's calling-context tree, KM_output 6) any rank took: a
 * path's inclusive time less its children's, so that the parts still
 * partition the rank's time in regions and the distance keeps its
 * meaning; a rank that took a path the others did not differs by the
 * time it spent there, once, not once more for every path above it.
 * Every group besides the main one is then explained (and in
 * differences.csv), outlier or not: ranks that take other paths are
 * what --paths looks for, however many they are.
 *
 * Groups: complete linkage (iScopes' choice: every member of a group is
 * within the cut of every other), cut at a height.  The main group is the
 * largest (the one with the lowest rank on a tie); an outlier group is a
 * group other than the main one holding at most a tenth of the ranks (at
 * least one rank) and fewer than half of them, and only when the main
 * group holds at least half of the ranks: an outlier differs from what
 * most ranks do, and when no behaviour is shared by most ranks, no rank
 * is odd (the groups still tell who does what).
 *
 * Must never: read files, or print anything but through kv_ranks_print.
 */
#include "kmview/views/ranks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/write/out.h"
#include "kmview/views/paths.h"
#include "support/buf.h"

static const char *const part_name[] = {
    [KV_P_COMPUTATION] = "computation", [KV_P_MPI] = "MPI",
    [KV_P_IO] = "I/O", [KV_P_OUTSIDE] = "time outside routines",
    [KV_P_CALLEES] = "time in uninstrumented routines",
    [KV_P_STARTUP] = "MPI start-up", [KV_P_PATH] = "own time",
};

void kv_feature_name(char *buf, size_t size, const struct kv_feature *ft,
                     const struct kv_stats *st)
{
    if (ft->part == KV_P_PATH)
        snprintf(buf, size, "%s", ft->path);
    else if (ft->routine < 0)
        snprintf(buf, size, "%s", part_name[ft->part]);
    else
        snprintf(buf, size, "%s %s", st->run->routines[ft->routine].name,
                 part_name[ft->part]);
}

/* The header figure a whole-rank part is. */
static int part_figure(enum kv_feature_part part)
{
    return part == KV_P_OUTSIDE ? KV_F_OUTSIDE
         : part == KV_P_CALLEES ? KV_F_UNINSTRUMENTED : KV_F_STARTUP;
}

/* Does part (routine, part) contain an estimate in column p? */
static bool part_estimated(const struct kv_stats *st, int routine,
                           enum kv_feature_part part, size_t p)
{
    if (routine < 0)
        return st->sec[p]->fig_est[part_figure(part)];
    unsigned est = st->rest[(size_t)routine * st->n + p];
    unsigned of = part == KV_P_MPI ? KV_EST(KV_M_MPI)
                : part == KV_P_IO ? KV_EST(KV_M_IO)
                : KV_EST(KV_M_NET) | KV_EST(KV_M_IO);
    return (est & of) != 0;
}

/* The value of part (routine, part) in column p. */
static double part_value(const struct kv_stats *st, int routine,
                         enum kv_feature_part part, size_t p)
{
    const struct kv_rank *r = st->sec[p];
    if (routine < 0)
        return r->fig[part_figure(part)];
    size_t at = (size_t)routine * st->n + p;
    double io = st->rv[KV_M_IO][at];
    if (part == KV_P_IO)
        return io;
    if (part == KV_P_MPI)
        return st->rv[KV_M_MPI][at];
    return st->rv[KV_M_NET][at] - io;
}

static void add_feature_if_used(struct kv_rank_groups *g,
                                const struct kv_stats *st, int routine,
                                enum kv_feature_part part, size_t *cap)
{
    bool used = false;
    for (size_t p = 0; p < st->n && !used; p++)
        used = part_value(st, routine, part, p) != 0;
    if (!used)
        return;
    KM_GROW(g->features, *cap, g->nfeatures + 1);
    g->features[g->nfeatures++] = (struct kv_feature){ routine, part, NULL };
}

static void build_features(struct kv_rank_groups *g, const struct kv_stats *st)
{
    size_t cap = 0;
    for (size_t r = 0; r < st->nr; r++)
        for (int part = KV_P_COMPUTATION; part <= KV_P_IO; part++)
            add_feature_if_used(g, st, (int)r, part, &cap);
    add_feature_if_used(g, st, -1, KV_P_OUTSIDE, &cap);
    add_feature_if_used(g, st, -1, KV_P_CALLEES, &cap);
    add_feature_if_used(g, st, -1, KV_P_STARTUP, &cap);
    size_t nf = g->nfeatures;
    g->x = km_xcalloc(st->n * nf + 1, sizeof *g->x);
    g->xest = km_xcalloc(st->n * nf + 1, sizeof *g->xest);
    for (size_t p = 0; p < st->n; p++)
        for (size_t f = 0; f < nf; f++) {
            const struct kv_feature *ft = &g->features[f];
            g->x[p * nf + f] = part_value(st, ft->routine, ft->part, p);
            g->xest[p * nf + f] = part_estimated(st, ft->routine, ft->part, p);
        }
}

/* Renumber the groups: the main group 0, the others by their lowest rank. */
static void order_groups(struct kv_rank_groups *g)
{
    size_t *size = km_xcalloc(g->ngroups + 1, sizeof *size);
    for (size_t p = 0; p < g->n; p++)
        size[g->group[p]]++;
    size_t main = 0;
    for (size_t k = 1; k < g->ngroups; k++)
        if (size[k] > size[main])
            main = k;
    /* labels are already in order of lowest point: move main to front */
    for (size_t p = 0; p < g->n; p++) {
        size_t k = (size_t)g->group[p];
        g->group[p] = k == main ? 0 : (int)(k < main ? k + 1 : k);
    }
    g->group_size = km_xcalloc(g->ngroups + 1, sizeof *g->group_size);
    for (size_t p = 0; p < g->n; p++)
        g->group_size[g->group[p]]++;
    free(size);
}

/* The exact ways: the highest merge inside each group (complete linkage:
 * its largest distance); with cells, scale.c computes it. */
static void group_diameters(struct kv_rank_groups *g, size_t applied,
                            const struct kv_linkage *lk)
{
    size_t n = g->n;
    g->diameter = km_xcalloc(g->ngroups + 1, sizeof *g->diameter);
    g->diameter_bound = km_xcalloc(g->ngroups + 1, sizeof *g->diameter_bound);
    if (lk->method == KV_LINK_CELLS) {
        for (size_t k = 0; k < g->ngroups; k++)
            g->diameter[k] = kv_linkage_diameter(lk, g->group, (int)k,
                                                 g->group_size[k],
                                                 &g->diameter_bound[k]);
        return;
    }
    int *leaf = km_xcalloc(2 * n, sizeof *leaf);
    for (size_t i = 0; i < n; i++)
        leaf[i] = (int)i;
    for (size_t k = 0; k < applied; k++) {
        leaf[n + k] = leaf[g->merges[k].a];
        int grp = g->group[leaf[n + k]];
        if (g->merges[k].height > g->diameter[grp])
            g->diameter[grp] = g->merges[k].height;
    }
    free(leaf);
}

static void outliers(struct kv_rank_groups *g, const struct kv_linkage *lk)
{
    size_t n = g->n;
    size_t small = n / 10 > 1 ? n / 10 : 1;
    g->outlier_group = km_xcalloc(g->ngroups + 1, sizeof *g->outlier_group);
    g->to_main = km_xcalloc(g->ngroups + 1, sizeof *g->to_main);
    bool shared = 2 * g->group_size[0] >= n;
    for (size_t k = 1; k < g->ngroups; k++) {
        g->outlier_group[k] = shared && g->group_size[k] <= small &&
                              2 * g->group_size[k] < n;
        if (g->outlier_group[k] || g->paths)   /* --paths: explained */
            g->to_main[k] = kv_linkage_farthest(lk, g->group, (int)k, 0);
    }
}

void kv_rank_groups_build(struct kv_rank_groups *g, const struct kv_stats *st,
                          double cut, size_t groups,
                          const struct kv_cluster_opts *how)
{
    memset(g, 0, sizeof *g);
    g->n = st->n;
    g->scale = st->total;
    build_features(g, st);
    kv_rank_groups_cluster(g, cut, groups, how);
}

/* The paths some rank spent time on, as features, and every rank's own
 * time on each. */
static void build_path_features(struct kv_rank_groups *g,
                                const struct kv_stats *st)
{
    struct kv_mpaths m;
    kv_paths_merge(&m, st->run, 0);
    size_t n = st->n, np = m.n;
    double *own = km_xcalloc(n * np + 1, sizeof *own);
    bool *oest = km_xcalloc(n * np + 1, sizeof *oest);
    kv_paths_own_times(&m, st->sec, n, own, oest);
    /* a path deeper than KV_PATHS_DEPTH levels is its ancestor's at that
     * depth (a feature's name is as long as its path is deep) */
    size_t *at = km_xcalloc(np + 1, sizeof *at);
    for (size_t k = 0; k < np; k++) {        /* parents first */
        at[k] = m.v[k].depth <= KV_PATHS_DEPTH ? k : at[m.v[k].parent];
        if (at[k] != k)
            for (size_t p = 0; p < n; p++) {
                own[p * np + at[k]] += own[p * np + k];
                oest[p * np + at[k]] |= oest[p * np + k];
                own[p * np + k] = 0;
            }
    }
    free(at);
    size_t *keep = km_xcalloc(np + 1, sizeof *keep), nf = 0;
    for (size_t k = 0; k < np; k++) {
        bool used = false;
        for (size_t p = 0; p < n && !used; p++)
            used = own[p * np + k] != 0;
        if (used)
            keep[nf++] = k;
    }
    g->features = km_xcalloc(nf + 1, sizeof *g->features);
    g->nfeatures = nf;
    struct km_buf b = { 0 };
    for (size_t f = 0; f < nf; f++) {
        b.len = 0;
        kv_mpath_label(&b, st->run, &m, keep[f]);
        g->features[f] = (struct kv_feature){
            (int)f, KV_P_PATH, km_xstrdup(km_buf_cstr(&b)) };
    }
    km_buf_free(&b);
    g->x = km_xcalloc(n * nf + 1, sizeof *g->x);
    g->xest = km_xcalloc(n * nf + 1, sizeof *g->xest);
    for (size_t p = 0; p < n; p++)
        for (size_t f = 0; f < nf; f++) {
            g->x[p * nf + f] = own[p * np + keep[f]];
            g->xest[p * nf + f] = oest[p * np + keep[f]];
        }
    free(keep);
    free(own);
    free(oest);
    kv_mpaths_free(&m);
}

int kv_rank_groups_build_paths(struct kv_rank_groups *g,
                               const struct kv_stats *st, double cut,
                               size_t groups,
                               const struct kv_cluster_opts *how)
{
    memset(g, 0, sizeof *g);
    struct kv_paths_opts o = { .rank = -1, .thread = 0 };
    if (kv_paths_check(st->run, &o) < 0)
        return -1;
    g->n = st->n;
    g->scale = st->total;
    g->paths = true;
    build_path_features(g, st);
    kv_rank_groups_cluster(g, cut, groups, how);
    return 0;
}

void kv_rank_groups_cluster(struct kv_rank_groups *g, double cut,
                            size_t groups, const struct kv_cluster_opts *how)
{
    size_t n = g->n;
    struct kv_points pt = { n, g->nfeatures, g->x, g->scale };
    struct kv_linkage lk;
    kv_linkage_build(&lk, &pt, how->exact, how->max_exact, cut);
    g->merges = lk.merges;
    g->method = lk.method;
    g->order = km_xcalloc(n + 1, sizeof *g->order);
    kv_dendrogram_order(g->merges, n, g->order);
    g->group = km_xcalloc(n + 1, sizeof *g->group);
    g->ngroups = kv_linkage_cut(&lk, cut, groups, g->group);
    size_t applied = n - g->ngroups;
    if (groups > 0)
        g->cut = applied > 0 ? g->merges[applied - 1].height : 0;
    else
        g->cut = cut;
    g->certified = lk.certified;
    kv_linkage_describe(g->method_note, sizeof g->method_note, &lk, "ranks");
    if (n > 0) {
        order_groups(g);
        group_diameters(g, applied, &lk);
        outliers(g, &lk);
    }
    lk.merges = NULL;                            /* g's now */
    kv_linkage_free(&lk);
}

void kv_rank_groups_free(struct kv_rank_groups *g)
{
    for (size_t f = 0; g->paths && f < g->nfeatures; f++)
        free((char *)g->features[f].path);
    free(g->features);
    free(g->x);
    free(g->xest);
    free(g->merges);
    free(g->order);
    free(g->group);
    free(g->group_size);
    free(g->diameter);
    free(g->to_main);
    free(g->outlier_group);
    free(g->diameter_bound);
    memset(g, 0, sizeof *g);
}

void kv_group_ranks(char *buf, size_t size, const struct kv_rank_groups *g,
                    const struct kv_stats *st, size_t group)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t p = 0; p < g->n; p++) {
        if (g->group[p] != (int)group)
            continue;
        size_t q = p;                 /* a run of consecutive columns */
        while (q + 1 < g->n && g->group[q + 1] == (int)group &&
               st->rank[q + 1] == st->rank[q] + 1)
            q++;
        char item[32];
        int w = q == p ? snprintf(item, sizeof item, "%s%d", len ? "," : "",
                                  st->rank[p])
                       : snprintf(item, sizeof item, "%s%d-%d",
                                  len ? "," : "", st->rank[p], st->rank[q]);
        /* the list ends after its last whole member, with ",..." (room
         * for which every member left) */
        if (len + (size_t)w + 4 >= size) {
            snprintf(buf + len, size - len, "%s", len ? ",..." : "...");
            return;
        }
        memcpy(buf + len, item, (size_t)w + 1);
        len += (size_t)w;
        p = q;
    }
}

/* ------------------------------------------------------------------------ */
/* What makes a group differ                                                 */

struct difference {
    size_t feature;
    double group_mean, main_mean;
    bool estimated;          /* some rank of either group has an estimate */
};

static int by_size_of_difference(const void *pa, const void *pb)
{
    const struct difference *a = pa, *b = pb;
    double x = fabs(a->group_mean - a->main_mean);
    double y = fabs(b->group_mean - b->main_mean);
    if (x != y)
        return x > y ? -1 : 1;
    return (a->feature > b->feature) - (a->feature < b->feature);
}

/* The features sorted by how much group k's mean differs from the main
 * group's (malloc'd, g->nfeatures of them). */
static struct difference *differences(const struct kv_rank_groups *g, size_t k)
{
    size_t nf = g->nfeatures;
    struct difference *d = km_xcalloc(nf + 1, sizeof *d);
    for (size_t f = 0; f < nf; f++) {
        d[f].feature = f;
        for (size_t p = 0; p < g->n; p++) {
            double v = g->x[p * nf + f];
            if (g->group[p] == (int)k)
                d[f].group_mean += v;
            else if (g->group[p] == 0)
                d[f].main_mean += v;
            if (g->group[p] == (int)k || g->group[p] == 0)
                d[f].estimated |= g->xest[p * nf + f];
        }
        d[f].group_mean /= (double)g->group_size[k];
        d[f].main_mean /= (double)g->group_size[0];
    }
    qsort(d, nf, sizeof *d, by_size_of_difference);
    return d;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */

static void print_method(FILE *f, const struct kv_rank_groups *g)
{
    char b[32], c[32];
    if (g->paths)
        fprintf(f, "Ranks clustered by complete linkage of their call paths "
                "(thread 0).  Distance:\nthe time two ranks spend "
                "differently (Manhattan distance of their own time on\n"
                "each call path: %zu paths), as a fraction of the mean total "
                "time (%s s).\nGroups: clusters below %s.\n", g->nfeatures,
                kv_human(b, g->scale), kv_human(c, g->cut));
    else
        fprintf(f, "Ranks clustered by complete linkage.  Distance: the time two "
                "ranks spend\ndifferently (Manhattan distance of their per-routine "
                "computation, MPI and I/O\ntimes, time outside routines, in "
                "uninstrumented routines and in MPI start-up:\n%zu parts), as a "
                "fraction of the mean total time "
                "(%s s).  Groups: clusters below %s.\n", g->nfeatures,
                kv_human(b, g->scale), kv_human(c, g->cut));
    if (g->method_note[0])
        kv_print_wrapped(f, g->method_note, 79);
}

static void print_groups(FILE *f, const struct kv_rank_groups *g,
                         const struct kv_stats *st)
{
    char ranks[256], b[32], c[32];
    fprintf(f, "\n%zu ranks, %zu group%s\n", g->n, g->ngroups,
            g->ngroups == 1 ? "" : "s");
    for (size_t k = 0; k < g->ngroups; k++) {
        kv_group_ranks(ranks, sizeof ranks, g, st, k);
        fprintf(f, "  group %zu: %zu rank%s (%s), diameter %s%s", k + 1,
                g->group_size[k], g->group_size[k] == 1 ? "" : "s", ranks,
                g->diameter_bound[k] ? "<= " : "", kv_human(b, g->diameter[k]));
        if (k == 0)
            fputs(", the main group", f);
        if (g->outlier_group[k])
            fprintf(f, ", %s from the main group: outlier",
                    kv_human(c, g->to_main[k]));
        fputc('\n', f);
    }
}

/* Returns whether a difference it names contains an estimate. */
static bool print_outlier(FILE *f, const struct kv_rank_groups *g,
                          const struct kv_stats *st, size_t k, int reasons)
{
    bool any_est = false;
    char ranks[256], name[256], b[4][32];
    kv_group_ranks(ranks, sizeof ranks, g, st, k);
    fprintf(f, "  rank%s %s differ%s from the main group by %s of the run "
            "time:\n", g->group_size[k] == 1 ? "" : "s", ranks,
            g->group_size[k] == 1 ? "s" : "", kv_percent(b[0], g->to_main[k]));
    struct difference *d = differences(g, k);
    for (size_t i = 0; i < g->nfeatures && (int)i < reasons; i++) {
        double delta = d[i].group_mean - d[i].main_mean;
        if (delta == 0)
            break;
        kv_feature_name(name, sizeof name, &g->features[d[i].feature], st);
        bool est = d[i].estimated;
        any_est |= est;
        fprintf(f, "    %-40s %10s s vs %10s s (%s%s%s s, %s of the run)\n",
                name,
                kv_human_mark(b[0], d[i].group_mean, est),
                kv_human_mark(b[1], d[i].main_mean, est), est ? "~" : "",
                delta > 0 ? "+" : "", kv_human(b[2], delta),
                kv_percent(b[3], fabs(delta) / g->scale));
    }
    free(d);
    return any_est;
}

static void print_merges(FILE *f, const struct kv_rank_groups *g,
                         const struct kv_stats *st)
{
    char b[32];
    fprintf(f, "\nDendrogram: merges in order (clusters %zu and up are earlier "
            "merges)\n  %5s %10s  %s\n", g->n, "step", "height", "joins");
    for (size_t k = 0; k + 1 < g->n; k++) {
        const struct kv_merge *m = &g->merges[k];
        fprintf(f, "  %5zu %10s  ", g->n + k, kv_human(b, m->height));
        if ((size_t)m->a < g->n)
            fprintf(f, "rank %d", st->rank[m->a]);
        else
            fprintf(f, "cluster %d", m->a);
        if ((size_t)m->b < g->n)
            fprintf(f, " + rank %d", st->rank[m->b]);
        else
            fprintf(f, " + cluster %d", m->b);
        fprintf(f, " (%d ranks)\n", m->size);
    }
}

void kv_ranks_print(FILE *f, const struct kv_rank_groups *g,
                    const struct kv_stats *st, int reasons)
{
    print_method(f, g);
    if (g->n == 0)
        return;
    print_groups(f, g, st);
    bool any = false, est = false;
    for (size_t k = 1; k < g->ngroups; k++)
        if (g->outlier_group[k]) {
            if (!any)
                fprintf(f, "\nOutliers\n");
            any = true;
            est |= print_outlier(f, g, st, k, reasons);
        }
    /* --paths: a group that took other paths is worth naming whatever
     * its size (the outlier rule wants a tenth of the ranks at most) */
    bool other = false;
    for (size_t k = 1; g->paths && k < g->ngroups; k++)
        if (!g->outlier_group[k]) {
            if (!other)
                fprintf(f, "\nOther groups\n");
            other = true;
            est |= print_outlier(f, g, st, k, reasons);
        }
    if (est)
        fprintf(f, "  (~ contains an estimate: some rank's figure was "
                "estimated by libkm)\n");
    if (!any && 2 * g->group_size[0] < g->n)
        fprintf(f, "\nNo outlier ranks: no group holds half of the ranks at "
                "this cut, so no\nbehaviour is shared by most ranks (a larger "
                "--cut joins more ranks).\n");
    else if (!any)
        fprintf(f, "\nNo outlier ranks at this cut.\n");
    if (g->n <= 64)
        print_merges(f, g, st);
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                       */

struct ranks_csv {
    const struct kv_rank_groups *g;
    const struct kv_stats *st;
};

static void csv_ranks(FILE *f, const void *ctx)
{
    const struct ranks_csv *c = ctx;
    const struct kv_rank_groups *g = c->g;
    const struct kv_stats *st = c->st;
    int *position = km_xcalloc(g->n + 1, sizeof *position);
    for (size_t i = 0; i < g->n; i++)
        position[g->order[i]] = (int)i;
    fputs("rank,group,outlier,leaf_order\n", f);
    for (size_t p = 0; p < g->n; p++)
        fprintf(f, "%d,%d,%d,%d\n", st->rank[p], g->group[p] + 1,
                g->outlier_group[g->group[p]], position[p] + 1);
    free(position);
}

static void csv_groups(FILE *f, const void *ctx)
{
    const struct ranks_csv *c = ctx;
    const struct kv_rank_groups *g = c->g;
    const struct kv_stats *st = c->st;
    char ranks[4096];
    bool cells = g->method == KV_LINK_CELLS;
    fputs("group,size,main,outlier,diameter,distance_to_main,ranks", f);
    fputs(cells ? ",diameter_bound,certified\n" : "\n", f);
    for (size_t k = 0; k < g->ngroups; k++) {
        kv_group_ranks(ranks, sizeof ranks, g, st, k);
        fprintf(f, "%zu,%zu,%d,%d,", k + 1, g->group_size[k], k == 0,
                g->outlier_group[k]);
        kv_csv_num(f, g->diameter[k]);
        fputc(',', f);
        if (g->outlier_group[k] || (g->paths && k > 0))
            kv_csv_num(f, g->to_main[k]);
        fputc(',', f);
        kv_csv_str(f, ranks);
        if (cells)
            fprintf(f, ",%d,%d", g->diameter_bound[k], g->certified);
        fputc('\n', f);
    }
}

static void csv_merges(FILE *f, const void *ctx)
{
    const struct ranks_csv *c = ctx;
    const struct kv_rank_groups *g = c->g;
    const struct kv_stats *st = c->st;
    fputs("cluster,a,b,a_rank,b_rank,height,size\n", f);
    for (size_t k = 0; k + 1 < g->n; k++) {
        const struct kv_merge *m = &g->merges[k];
        fprintf(f, "%zu,%d,%d,", g->n + k, m->a, m->b);
        if ((size_t)m->a < g->n)
            fprintf(f, "%d", st->rank[m->a]);
        fputc(',', f);
        if ((size_t)m->b < g->n)
            fprintf(f, "%d", st->rank[m->b]);
        fputc(',', f);
        kv_csv_num(f, m->height);
        fprintf(f, ",%d\n", m->size);
    }
}

static void csv_differences(FILE *f, const void *ctx)
{
    const struct ranks_csv *c = ctx;
    const struct kv_rank_groups *g = c->g;
    const struct kv_stats *st = c->st;
    fputs(g->paths ? "group,path,part,group_mean,main_mean,difference,"
                     "estimated\n"
                   : "group,routine,part,group_mean,main_mean,difference,"
                     "estimated\n", f);
    for (size_t k = 1; k < g->ngroups; k++) {
        if (!g->outlier_group[k] && !g->paths)
            continue;
        struct difference *d = differences(g, k);
        for (size_t i = 0; i < g->nfeatures; i++) {
            const struct kv_feature *ft = &g->features[d[i].feature];
            fprintf(f, "%zu,", k + 1);
            if (ft->part == KV_P_PATH)
                kv_csv_str(f, ft->path);
            else if (ft->routine >= 0)
                kv_csv_str(f, st->run->routines[ft->routine].name);
            fputc(',', f);
            kv_csv_str(f, part_name[ft->part]);
            fputc(',', f);
            kv_csv_num(f, d[i].group_mean);
            fputc(',', f);
            kv_csv_num(f, d[i].main_mean);
            fputc(',', f);
            kv_csv_num(f, d[i].group_mean - d[i].main_mean);
            fprintf(f, ",%d\n", d[i].estimated);
        }
        free(d);
    }
}

int kv_ranks_csv(struct kv_out *o, const char *dir,
                 const struct kv_rank_groups *g, const struct kv_stats *st)
{
    static const struct kv_csv_file files[] = {
        { "ranks.csv", csv_ranks }, { "groups.csv", csv_groups },
        { "merges.csv", csv_merges }, { "differences.csv", csv_differences },
    };
    struct ranks_csv c = { g, st };
    return kv_csv_files(o, dir, files, sizeof files / sizeof *files, &c);
}
