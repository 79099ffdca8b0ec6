/*
 * summary.c — what `kmview FILE` prints: the run, its header figures over
 * ranks, where the time goes (MPI, I/O, computation), the prediction, the
 * top routines by net time with their imbalance across ranks, and libkm's
 * warnings.
 *
 * Every number comes from stats.c; this file only lays them out, 4
 * significant digits for people (CSV and JSON carry full precision).  Must
 * never compute a figure of its own beyond a difference shown as such.
 */
#include "kmview/summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/out.h"

void kv_describe_ranks(char *buf, size_t size, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    size_t lost = run->nsections - st->n;
    int n = snprintf(buf, size, "%d rank%s", run->nranks,
                     run->nranks == 1 ? "" : "s");
    if (run->nsections != (size_t)run->nranks && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ", %zu of them in %s",
                      run->nsections, run->nsources > 1 ? "these files"
                                                        : "this file");
    if (lost && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ", %zu with results lost", lost);
}

static void run_heading(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    char ranks[128];
    kv_describe_ranks(ranks, sizeof ranks, st);
    for (size_t i = 0; i < run->nsources; i++)
        fprintf(f, "%s%s", i ? ", " : "", run->sources[i]);
    fprintf(f, ": %s, %s\n", run->program ? run->program : "(program unknown)",
            ranks);
    fprintf(f, "  started %s, written at %s, clock %s\n",
            run->started ? run->started : "?",
            run->written_at ? run->written_at : "?",
            run->clock ? run->clock : "?");
    for (size_t i = 0; i < run->nextra; i++)
        fprintf(f, "  %s: %s\n", run->extra[i].key, run->extra[i].value);
}

/* A count (or a mean of counts, to 7 digits), or seconds. */
static void figure_value(FILE *f, double v, bool integer)
{
    char b[32];
    if (integer && v == floor(v))
        fprintf(f, " %12.0f", v);
    else if (integer)
        fprintf(f, " %12.7g", v);
    else
        fprintf(f, " %12s", kv_human(b, v));
}

static void header_figures(FILE *f, const struct kv_stats *st)
{
    if (st->n == 0)
        return;
    char heading[64];
    snprintf(heading, sizeof heading, "Header figures over %zu ranks", st->n);
    if (st->n == 1)
        fprintf(f, "\n%-36s %12s\n", "Header figures", "value");
    else
        fprintf(f, "\n%-36s %12s %12s %12s  max at rank\n", heading, "min",
                "mean", "max");
    for (int k = 0; k < KV_NFIGS; k++) {
        const struct kv_stat *s = &st->fig[k];
        bool integer = kv_figures[k].integer;
        char label[64];
        snprintf(label, sizeof label, "%s%s", kv_figures[k].label,
                 integer ? "" : " (s)");
        fprintf(f, "  %-34s", label);
        if (st->n > 1) {
            figure_value(f, s->min, integer);
            figure_value(f, s->mean, integer);
        }
        figure_value(f, s->max, integer);
        if (st->n > 1)
            fprintf(f, "  %d", s->max_rank);
        fputc('\n', f);
    }
}

static void share_line(FILE *f, const struct kv_stats *st, const char *what,
                       double v)
{
    char b[32], p[32];
    fprintf(f, "  %-36s %12s %8s\n", what, kv_human(b, v),
            kv_percent(p, kv_share(st, v)));
}

static void time_shares(FILE *f, const struct kv_stats *st)
{
    if (st->n == 0)
        return;
    double total = st->total, mpi = st->fig[KV_F_MPI].mean;
    double io = st->fig[KV_F_IO].mean;
    fprintf(f, "\nWhere the time goes (mean over ranks) %11s %8s\n", "seconds",
            "share");
    share_line(f, st, "Total time", total);
    share_line(f, st, "MPI", mpi);
    share_line(f, st, "I/O", io);
    share_line(f, st, "Computation (total - MPI - I/O)", total - mpi - io);
    share_line(f, st, "Net time of the routines", st->net_sum);
    share_line(f, st, "Outside routines", st->fig[KV_F_OUTSIDE].mean);
    share_line(f, st, "In unmeasured callees", st->fig[KV_F_UNMEASURED].mean);
}

static void prediction_rows(FILE *f, const struct kv_prediction *pr)
{
    char b[4][32];
    fprintf(f, "  %6s %12s %12s %12s %12s\n", "rank", "Total(s)", "MPI(s)",
            "Redundant(s)", "Parallel(s)");
    for (size_t i = 0; i < pr->nrows; i++) {
        const struct kv_prediction_row *r = &pr->rows[i];
        fprintf(f, "  %6d %12s %12s %12s %12s\n", r->rank,
                kv_human(b[0], r->total), kv_human(b[1], r->mpi),
                kv_human(b[2], r->redundant), kv_human(b[3], r->parallel));
    }
}

static void prediction_spread(FILE *f, const struct kv_prediction *pr)
{
    size_t n = pr->nrows;
    double *v = malloc(4 * n * sizeof *v);
    int *rank = malloc(n * sizeof *rank);
    static const char *const what[] = { "Total", "MPI", "Redundant",
                                        "Parallel" };
    if (!v || !rank) {
        free(v);
        free(rank);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        v[i] = pr->rows[i].total;
        v[n + i] = pr->rows[i].mpi;
        v[2 * n + i] = pr->rows[i].redundant;
        v[3 * n + i] = pr->rows[i].parallel;
        rank[i] = pr->rows[i].rank;
    }
    fprintf(f, "  %-12s %12s %12s %12s\n", "per rank", "min", "mean", "max");
    for (int k = 0; k < 4; k++) {
        struct kv_stat s;
        char b[3][32];
        kv_stat_of(&s, v + (size_t)k * n, n, rank);
        fprintf(f, "  %-12s %12s %12s %12s\n", what[k], kv_human(b[0], s.min),
                kv_human(b[1], s.mean), kv_human(b[2], s.max));
    }
    free(v);
    free(rank);
}

static void prediction(FILE *f, const struct kv_stats *st)
{
    const struct kv_prediction *pr = &st->run->pred;
    char b[32];
    if (!pr->present) {
        fprintf(f, "\nPrediction: none in this file (a serial program, or "
                "results written before MPI_FINALIZE)\n");
        return;
    }
    fprintf(f, "\nPrediction from one run of %zu ranks\n", pr->nrows);
    fprintf(f, "  %-28s %12s s\n", "T_1pe (one-PE time)",
            kv_human(b, pr->t_1pe));
    fprintf(f, "  %-28s %12s\n", "Speedup", kv_human(b, pr->speedup));
    fprintf(f, "  %-28s %12s\n", "Efficiency", kv_percent(b, pr->efficiency));
    if (pr->nrows <= 16)
        prediction_rows(f, pr);
    else
        prediction_spread(f, pr);
}

static int name_width(const struct kv_stats *st, const int *order, size_t n)
{
    int w = 7;
    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(st->run->routines[order[i]].name);
        if (len > w)
            w = len;
    }
    return w;
}

static void routine_line(FILE *f, const struct kv_stats *st, size_t k, int id,
                         int w)
{
    char b[8][32];
    const struct kv_stat *net = &st->rs[KV_M_NET][id];
    fprintf(f, "  %4zu  %-*s %10s %7s", k + 1, w, st->run->routines[id].name,
            kv_human(b[0], net->mean), kv_percent(b[1], kv_share(st, net->mean)));
    if (st->n > 1)
        fprintf(f, " %10s %10s %8s %7d", kv_human(b[2], net->min),
                kv_human(b[3], net->max),
                kv_human(b[4], kv_max_over_mean(net)), net->max_rank);
    snprintf(b[5], sizeof b[5], "%s%.6g", st->r_extrap[id] ? "+" : "",
             st->rs[KV_M_COUNTS][id].mean);
    fprintf(f, " %10s %10s %10s %10s\n",
            kv_human(b[6], st->rs[KV_M_ELAPSED][id].mean), b[5],
            kv_human(b[7], st->rs[KV_M_MPI][id].mean),
            kv_human(b[0], st->rs[KV_M_IO][id].mean));
}

static void top_routines(FILE *f, const struct kv_stats *st, int top)
{
    int *order = kv_routines_by(st, KV_M_NET);
    size_t n = top > 0 && (size_t)top < st->nr ? (size_t)top : st->nr;
    int w = name_width(st, order, n);
    fprintf(f, "\nTop %zu of %zu routines by net time (mean over ranks; share "
            "of the mean total time)\n", n, st->nr);
    fprintf(f, "  %4s  %-*s %10s %7s", "#", w, "Routine", "Net(s)", "Share");
    if (st->n > 1)
        fprintf(f, " %10s %10s %8s %7s", "min(s)", "max(s)", "max/mean",
                "at rank");
    fprintf(f, " %10s %10s %10s %10s\n", "Elapsed(s)", "Counts", "MPI(s)",
            "I/O(s)");
    for (size_t k = 0; k < n; k++)
        routine_line(f, st, k, order[k], w);
    if (n < st->nr)
        fprintf(f, "  (%zu more; kmview -n 0 lists them all)\n", st->nr - n);
    free(order);
}

static void warnings(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    bool any = false;
    for (size_t i = 0; i < run->nsections; i++)
        for (size_t w = 0; w < run->ranks[i].nwarn; w++) {
            if (!any)
                fprintf(f, "\nWarnings\n");
            any = true;
            fprintf(f, "  rank %d: %s\n", run->ranks[i].rank,
                    run->ranks[i].warnings[w]);
        }
}

void kv_summary(FILE *f, const struct kv_stats *st, int top)
{
    run_heading(f, st);
    header_figures(f, st);
    time_shares(f, st);
    prediction(f, st);
    if (st->n > 0)
        top_routines(f, st, top);
    warnings(f, st);
}
