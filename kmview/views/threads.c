/*
 * threads.c — what the threads of a run did (see threads.h).
 *
 * A rank's routine table is thread 0's; the Threads block adds one row
 * per thread and one per region another thread ran.  Over ranks, regions
 * are matched by routine and location, as everywhere in kmview.
 */
#include "kmview/views/threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/figures/scale.h"
#include "kmview/write/out.h"
#include "support/buf.h"

bool kv_any_threads(const struct kv_run *run)
{
    for (size_t i = 0; i < run->nsections; i++)
        if (run->ranks[i].nthreads > 0)
            return true;
    return false;
}

static int by_mean(const void *a, const void *b)
{
    const struct kv_tregion_sum *x = a, *y = b;
    if (x->mean != y->mean)
        return (x->mean < y->mean) - (x->mean > y->mean);
    if (x->routine != y->routine)
        return (x->routine > y->routine) - (x->routine < y->routine);
    return (x->location > y->location) - (x->location < y->location);
}

/* Index of a region in the sums: routines first, then locations. */
static size_t slot_of(const struct kv_run *run, const struct kv_tregion *t)
{
    return t->location < 0 ? (size_t)t->routine
                           : run->nroutines + (size_t)t->location;
}

static void add_rank(struct kv_tregion_sum *s, const struct kv_tregion *t,
                     int rank)
{
    if (s->ranks == 0) {
        s->routine = t->routine;
        s->location = t->location;
        s->min = t->min;
        s->max = -1;
    }
    s->ranks++;
    if (t->threads > s->threads)
        s->threads = t->threads;
    s->count += t->count;
    s->extrap |= t->extrap;
    s->est |= t->est;
    if (t->min < s->min)
        s->min = t->min;
    s->mean += t->mean;              /* divided by ranks at the end */
    if (t->max > s->max) {
        s->max = t->max;
        s->max_rank = rank;
    }
    if (t->imbal > s->imbal)
        s->imbal = t->imbal;
}

struct kv_tregion_sum *kv_tregions_over_ranks(const struct kv_run *run,
                                              size_t *n)
{
    size_t cap = run->nroutines + run->nlocations;
    struct kv_tregion_sum *all = km_xcalloc(cap + 1, sizeof *all);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->ntregions; k++)
            add_rank(&all[slot_of(run, &r->tregions[k])], &r->tregions[k],
                     r->rank);
    }
    *n = 0;
    for (size_t k = 0; k < cap; k++)
        if (all[k].ranks > 0) {
            all[k].mean /= all[k].ranks;
            all[*n] = all[k];
            (*n)++;
        }
    qsort(all, *n, sizeof *all, by_mean);
    return all;
}

/* ---- the summary --------------------------------------------------------- */

/* One rank's threads, a row each. */
static void thread_rows(FILE *f, const struct kv_rank *r)
{
    char b[6][32];
    fprintf(f, "  %6s %4s %10s %10s %10s %10s %10s %10s\n", "Thread", "OMP",
            "Total(s)", "Net(s)", "Counts", "MPI(s)", "Outside(s)",
            "Overhead(s)");
    for (size_t k = 0; k < r->nthreads; k++) {
        const struct kv_thread *t = &r->threads[k];
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%s%llu", t->extrap ? "+" : "",
                 (unsigned long long)t->count);
        fprintf(f, "  %6d %4d %10s %10s %10s %10s %10s %10s\n", t->thread,
                t->omp, kv_human_mark(b[0], t->v[KV_T_TOTAL], false),
                kv_human_mark(b[1], t->v[KV_T_NET], t->est & 1u << KV_T_NET),
                cnt, kv_human_mark(b[2], t->v[KV_T_MPI], t->est & 1u << KV_T_MPI),
                kv_human_mark(b[3], t->v[KV_T_OUTSIDE],
                              t->est & 1u << KV_T_OUTSIDE),
                kv_human_mark(b[4], t->v[KV_T_OVERHEAD], true));
    }
}

/* Several ranks: a line each, the spread of its threads' net time. */
static void rank_lines(FILE *f, const struct kv_run *run, int top)
{
    char b[5][32];
    fprintf(f, "  %6s %7s %10s %10s %10s %8s %10s\n", "Rank", "Threads",
            "min net(s)", "mean(s)", "max(s)", "Imbal", "max out(s)");
    size_t shown = 0, with = 0;
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        if (r->nthreads == 0)
            continue;
        with++;
        if (top > 0 && shown >= (size_t)top)
            continue;
        shown++;
        double mn = INFINITY, mx = 0, sum = 0, out = 0;
        bool est = false;
        for (size_t k = 0; k < r->nthreads; k++) {
            double v = r->threads[k].v[KV_T_NET];
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
            sum += v;
            est |= r->threads[k].est & 1u << KV_T_NET;
            if (r->threads[k].v[KV_T_OUTSIDE] > out)
                out = r->threads[k].v[KV_T_OUTSIDE];
        }
        double mean = sum / (double)r->nthreads;
        fprintf(f, "  %6d %7zu %10s %10s %10s %8s %10s\n", r->rank,
                r->nthreads, kv_human_mark(b[0], mn, est),
                kv_human_mark(b[1], mean, est), kv_human_mark(b[2], mx, est),
                kv_percent(b[3], mx > 0 ? (mx - mean) / mx : 0),
                kv_human(b[4], out));
    }
    if (shown < with)
        fprintf(f, "  (%zu more ranks; kmview -n 0 lists them all)\n",
                with - shown);
}

static const char *region_kind(const struct kv_run *run,
                               const struct kv_tregion_sum *s)
{
    return s->location < 0 ? "ROUT"
                           : kv_kind_name(run->locations[s->location].kind);
}

static int region_line(const struct kv_run *run,
                       const struct kv_tregion_sum *s)
{
    return s->location < 0 ? run->routines[s->routine].line
                           : run->locations[s->location].line;
}

static void region_rows(FILE *f, const struct kv_run *run, int top)
{
    size_t n;
    struct kv_tregion_sum *all = kv_tregions_over_ranks(run, &n);
    size_t shown = top > 0 && (size_t)top < n ? (size_t)top : n;
    int w = 7;
    for (size_t k = 0; k < shown; k++) {
        int len = (int)strlen(run->routines[all[k].routine].name);
        w = len > w ? len : w;
    }
    char b[5][32];
    fprintf(f, "\nTop %zu of %zu regions threads other than 0 ran, by mean "
            "time per thread%s\n", shown, n,
            run->nsections > 1 ? " (over ranks: counts added, the least "
                                 "min, the mean mean, the largest max)" : "");
    fprintf(f, "  %-*s %-5s %5s %7s %10s %10s %10s %10s %7s", w, "Routine",
            "Kind", "Line", "Threads", "Counts", "min(s)", "mean(s)",
            "max(s)", "Imbal");
    fprintf(f, run->nsections > 1 ? " %7s\n" : "\n", "at rank");
    for (size_t k = 0; k < shown; k++) {
        const struct kv_tregion_sum *s = &all[k];
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%s%llu", s->extrap ? "+" : "",
                 (unsigned long long)s->count);
        fprintf(f, "  %-*s %-5s %5d %7d %10s %10s %10s %10s %7s", w,
                run->routines[s->routine].name, region_kind(run, s),
                region_line(run, s), s->threads, cnt,
                kv_human_mark(b[0], s->min, s->est),
                kv_human_mark(b[1], s->mean, s->est),
                kv_human_mark(b[2], s->max, s->est),
                kv_percent(b[3], s->imbal / 100));
        if (run->nsections > 1)
            fprintf(f, " %7d", s->max_rank);
        fputc('\n', f);
    }
    if (shown < n)
        fprintf(f, "  (%zu more; kmview -n 0 lists them all)\n", n - shown);
    free(all);
}

void kv_summary_threads(FILE *f, const struct kv_stats *st, int top)
{
    const struct kv_run *run = st->run;
    if (!kv_any_threads(run))
        return;
    fprintf(f, "\nThreads (each rank's figures above are its thread 0's, "
            "the program's thread)\n");
    if (run->nsections == 1)
        thread_rows(f, &run->ranks[0]);
    else
        rank_lines(f, run, top);
    region_rows(f, run, top);
}

/* ---- clustering the threads ---------------------------------------------- */

/* One thread of one rank, and what it spent its time on. */
struct titem {
    int rank, thread, omp;
    double v[KV_NTFIGS];
};

/* Every thread of every live rank: its Threads row, or the rank's own
 * figures when it ran one thread. */
static struct titem *thread_items(const struct kv_run *run, size_t *n)
{
    size_t cap = 0;
    for (size_t i = 0; i < run->nsections; i++)
        cap += run->ranks[i].nthreads ? run->ranks[i].nthreads : 1;
    struct titem *it = km_xcalloc(cap + 1, sizeof *it);
    *n = 0;
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        if (r->lost)
            continue;
        for (size_t k = 0; k < r->nthreads; k++) {
            struct titem *t = &it[(*n)++];
            t->rank = r->rank;
            t->thread = r->threads[k].thread;
            t->omp = r->threads[k].omp;
            memcpy(t->v, r->threads[k].v, sizeof t->v);
        }
        if (r->nthreads == 0) {
            struct titem *t = &it[(*n)++];
            t->rank = r->rank;
            t->omp = -1;
            t->v[KV_T_TOTAL] = r->fig[KV_F_TOTAL];
            t->v[KV_T_NET] = r->total_row.present ? r->total_row.net : NAN;
            t->v[KV_T_MPI] = r->fig[KV_F_MPI];
            t->v[KV_T_OUTSIDE] = r->fig[KV_F_OUTSIDE];
            t->v[KV_T_OVERHEAD] = r->fig[KV_F_OVERHEAD];
        }
    }
    return it;
}

/* Each item's net, MPI, outside and overhead time (NaN read as 0): the
 * coordinates the threads are clustered by. */
enum { TDIM = KV_NTFIGS - KV_T_NET };

static double *thread_coordinates(const struct titem *it, size_t n)
{
    double *x = km_xcalloc(n * TDIM + 1, sizeof *x);
    for (size_t k = 0; k < n; k++)
        for (int f = KV_T_NET; f < KV_NTFIGS; f++)
            x[k * TDIM + (size_t)(f - KV_T_NET)] =
                isnan(it[k].v[f]) ? 0 : it[k].v[f];
    return x;
}

static void print_members(FILE *f, const struct titem *it, size_t n,
                          const int *label, int g)
{
    int shown = 0, rank = -1;
    for (size_t k = 0; k < n; k++) {
        if (label[k] != g)
            continue;
        if (shown == 12) {
            fprintf(f, ", ...");
            break;
        }
        if (it[k].rank != rank)
            fprintf(f, "%srank %d thread %d", shown ? "; " : "", it[k].rank,
                    it[k].thread);
        else
            fprintf(f, ", %d", it[k].thread);
        rank = it[k].rank;
        shown++;
    }
    fputc('\n', f);
}

int kv_thread_groups(FILE *f, const struct kv_stats *st, double cut,
                     size_t groups, const struct kv_cluster_opts *how,
                     struct kv_out *o, const char *csv_dir)
{
    size_t n;
    struct titem *it = thread_items(st->run, &n);
    double scale = 0;
    for (size_t k = 0; k < n; k++)
        if (it[k].thread == 0 && !isnan(it[k].v[KV_T_TOTAL]))
            scale += it[k].v[KV_T_TOTAL];
    size_t nranks = 0;
    for (size_t k = 0; k < n; k++)
        nranks += it[k].thread == 0;
    scale = nranks ? scale / (double)nranks : 0;
    double *x = thread_coordinates(it, n);
    struct kv_points pt = { n, TDIM, x, scale };
    struct kv_linkage lk;
    kv_linkage_build(&lk, &pt, how->exact, how->max_exact, cut);
    int *label = km_xcalloc(n + 1, sizeof *label);
    size_t ng = kv_linkage_cut(&lk, cut, groups, label);
    char note[256];
    kv_linkage_describe(note, sizeof note, &lk, "threads");
    kv_linkage_free(&lk);
    free(x);
    size_t *size = km_xcalloc(ng + 1, sizeof *size);
    for (size_t k = 0; k < n; k++)
        size[label[k]]++;
    size_t main = 0;
    for (size_t g = 1; g < ng; g++)
        if (size[g] > size[main])
            main = g;
    if (f) {
        double (*mean)[KV_NTFIGS] = km_xcalloc(ng + 1, sizeof *mean);
        for (size_t k = 0; k < n; k++)
            for (int v = 0; v < KV_NTFIGS; v++)
                mean[label[k]][v] += (isnan(it[k].v[v]) ? 0 : it[k].v[v]) /
                                     (double)size[label[k]];
        char b[5][32];
        fprintf(f, "%zu threads of %zu ranks: complete linkage over each "
                "thread's net, MPI, outside and overhead time (L1, shares of "
                "the mean rank total, %s s), ", n, nranks, kv_human(b[0], scale));
        if (groups > 0)
            fprintf(f, "cut into %zu groups\n", ng);
        else
            fprintf(f, "cut at %g\n", cut);
        if (note[0])
            kv_print_wrapped(f, note, 79);
        fprintf(f, "  %5s %7s %10s %10s %10s %10s  %s\n", "group", "threads",
                "net(s)", "MPI(s)", "outside(s)", "overhead(s)",
                "(means; members)");
        for (size_t g = 0; g < ng; g++) {
            const double *x = mean[g];
            fprintf(f, "  %5zu %7zu %10s %10s %10s %10s  %s", g + 1, size[g],
                    kv_human(b[1], x[KV_T_NET]), kv_human(b[2], x[KV_T_MPI]),
                    kv_human(b[3], x[KV_T_OUTSIDE]),
                    kv_human(b[4], x[KV_T_OVERHEAD]),
                    g == main ? "main: " : 10 * size[g] <= n ? "outliers: " : "");
            print_members(f, it, n, label, (int)g);
        }
        free(mean);
    }
    int rc = 0;
    FILE *c = csv_dir ? (kv_make_dir(o, csv_dir) ? NULL
                                                  : kv_out_open_in(o, csv_dir,
                                                        "thread_groups.csv"))
                      : NULL;
    if (csv_dir && !c)
        rc = -1;
    if (c) {
        fputs("rank,thread,omp,group,net,mpi,outside,overhead\n", c);
        for (size_t k = 0; k < n; k++) {
            fprintf(c, "%d,%d,%d,%d", it[k].rank, it[k].thread, it[k].omp,
                    label[k] + 1);
            for (int v = KV_T_NET; v < KV_NTFIGS; v++) {
                fputc(',', c);
                kv_csv_num(c, it[k].v[v]);
            }
            fputc('\n', c);
        }
    }
    free(size);
    free(label);
    free(it);
    return rc;
}
