/*
 * summary.c — what `kmview FILE` prints: the run, its header figures over
 * ranks, where the time goes (MPI, I/O, computation), the prediction, the
 * top routines by net time with their imbalance across ranks, and libkm's
 * warnings.
 *
 * Every number comes from stats.c; this file only lays them out, 4
 * significant digits for people (CSV and JSON carry full precision), with
 * a '~' before every one that contains an estimate and a legend saying so.
 * MPI start-up is shown apart from MPI communication, and the prediction
 * says what it leaves out (MPI start-up; libkm's overhead and the time
 * ranks waited for a processor, when the file gives them; with the CPU
 * clock, that every time and the prediction are CPU time).  Given the
 * plain build's time of the same run (--plain), it sets what measuring
 * really cost beside libkm's own figure.  Must never compute a figure of
 * its own beyond a difference shown as such.
 */
#include "kmview/views/summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/views/files.h"
#include "kmview/views/messages.h"
#include "kmview/write/out.h"
#include "kmview/views/threads.h"
#include "kmview/views/timeline.h"

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
    if (kv_cpu_time(run))
        fprintf(f, "  every time is CPU time (KM_CLOCK=cpu), not elapsed "
                "time\n");
    if (run->overhead)
        fprintf(f, "  libkm's overhead: %s\n", run->overhead);
    for (size_t i = 0; i < run->nextra; i++)
        fprintf(f, "  %s: %s\n", run->extra[i].key, run->extra[i].value);
    if (run->format_version < 2)
        fprintf(f, "  KM_output format %d: estimates are not marked (a + on a "
                "count says its time was\n  extrapolated)\n",
                run->format_version);
}

/* A count (or a mean of counts, to 7 digits), or seconds. */
static void figure_value(FILE *f, double v, bool integer, bool est)
{
    char b[32];
    if (integer && v == floor(v))
        fprintf(f, " %12.0f", v);
    else if (integer)
        fprintf(f, " %12.7g", v);
    else
        fprintf(f, " %12s", kv_human_mark(b, v, est));
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
        bool integer = kv_figures[k].integer, est = st->fig_est[k];
        char label[64];
        if (!kv_figure_known(st->run->format_version, k))
            continue;
        snprintf(label, sizeof label, "%s%s", kv_figures[k].label,
                 integer ? "" : " (s)");
        fprintf(f, "  %-34s", label);
        if (st->n > 1) {
            figure_value(f, s->min, integer, est);
            figure_value(f, s->mean, integer, est);
        }
        figure_value(f, s->max, integer, est);
        if (st->n > 1)
            fprintf(f, "  %d", s->max_rank);
        fputc('\n', f);
    }
}

/* A row of seconds and the share they are of something. */
static void seconds_line(FILE *f, const char *what, double v, bool est,
                         double share)
{
    char b[32], p[32];
    fprintf(f, "  %-42s %12s %8s\n", what, kv_human_mark(b, v, est),
            kv_percent(p, share));
}

static void share_line(FILE *f, const struct kv_stats *st, const char *what,
                       double v, bool est)
{
    seconds_line(f, what, v, est, kv_share(st, v));
}

/* MPI start-up apart from MPI: a short run spends much of its time in
 * MPI_INIT, which is no communication the program does. */
static void time_shares(FILE *f, const struct kv_stats *st)
{
    if (st->n == 0)
        return;
    const bool *e = st->fig_est;
    fprintf(f, "\nWhere the time goes (mean over ranks) %17s %8s\n", "seconds",
            "share");
    share_line(f, st, "Total time", st->total, e[KV_F_TOTAL]);
    share_line(f, st, "MPI communication (after start-up)", st->mpi,
               e[KV_F_MPI]);
    share_line(f, st, "MPI start-up (MPI_INIT)", st->startup, e[KV_F_STARTUP]);
    share_line(f, st, "I/O", st->io, e[KV_F_IO]);
    share_line(f, st, "Computation (total - MPI - start-up - I/O)", st->comp,
               st->comp_est);
    share_line(f, st, "Net time of the routines", st->net_sum, st->net_sum_est);
    share_line(f, st, "Outside routines", st->fig[KV_F_OUTSIDE].mean,
               e[KV_F_OUTSIDE]);
    share_line(f, st, "In uninstrumented routines",
               st->fig[KV_F_UNINSTRUMENTED].mean, e[KV_F_UNINSTRUMENTED]);
    share_line(f, st, "libkm overhead", st->fig[KV_F_OVERHEAD].mean,
               e[KV_F_OVERHEAD]);
    if (kv_figure_known(st->run->format_version, KV_F_ESTIMATED))
        share_line(f, st, "Estimated (place of the time estimated)",
                   st->fig[KV_F_ESTIMATED].mean, e[KV_F_ESTIMATED]);
    if (st->run->startup_from_statements && st->startup > 0)
        fprintf(f, "  (KM_output format 1 counts MPI_INIT in MPI time: kmview "
                "took the time of the\n  CALL MPI_INIT statements out of MPI "
                "as MPI start-up)\n");
    else if (st->run->startup_from_statements && st->mpi > 0)
        fprintf(f, "  (KM_output format 1 counts MPI_INIT in MPI time, and "
                "this file has no measured\n  CALL MPI_INIT: MPI may hold "
                "MPI start-up)\n");
}

static const char *const pred_heading[KV_NPRCOLS] = {
    [KV_PR_TOTAL] = "Total(s)", [KV_PR_STARTUP] = "Start-up(s)",
    [KV_PR_MPI] = "MPI(s)", [KV_PR_REDUNDANT] = "Redundant(s)",
    [KV_PR_OVERHEAD] = "Overhead(s)", [KV_PR_PARALLEL] = "Parallel(s)",
    [KV_PR_WAITED] = "Waited(s)",
};

/* The columns a run's prediction rows have (version 1: no start-up; no
 * overhead and waited but in version 2's rows of 8 fields). */
static bool pred_column(const struct kv_run *run, int k)
{
    if (k == KV_PR_OVERHEAD || k == KV_PR_WAITED)
        return run->pred.without_overhead;
    return k != KV_PR_STARTUP || run->format_version >= 2;
}

static void prediction_rows(FILE *f, const struct kv_run *run)
{
    const struct kv_prediction *pr = &run->pred;
    char b[32];
    fprintf(f, "  %6s", "rank");
    for (int k = 0; k < KV_NPRCOLS; k++)
        if (pred_column(run, k))
            fprintf(f, " %12s", pred_heading[k]);
    fputc('\n', f);
    for (size_t i = 0; i < pr->nrows; i++) {
        const struct kv_prediction_row *r = &pr->rows[i];
        fprintf(f, "  %6d", r->rank);
        for (int k = 0; k < KV_NPRCOLS; k++)
            if (pred_column(run, k))
                fprintf(f, " %12s", kv_human_mark(b, r->v[k],
                                                  r->est >> k & 1));
        fputc('\n', f);
    }
}

static void prediction_spread(FILE *f, const struct kv_run *run)
{
    const struct kv_prediction *pr = &run->pred;
    size_t n = pr->nrows;
    double *v = malloc((n + 1) * sizeof *v);
    int *rank = malloc((n + 1) * sizeof *rank);
    if (!v || !rank) {
        free(v);
        free(rank);
        return;
    }
    fprintf(f, "  %-12s %12s %12s %12s\n", "per rank", "min", "mean", "max");
    for (int k = 0; k < KV_NPRCOLS; k++) {
        struct kv_stat s;
        char b[3][32], what[32];
        bool est = false;
        if (!pred_column(run, k))
            continue;
        for (size_t i = 0; i < n; i++) {
            v[i] = pr->rows[i].v[k];
            rank[i] = pr->rows[i].rank;
            est |= pr->rows[i].est >> k & 1;
        }
        kv_stat_of(&s, v, n, rank);
        snprintf(what, sizeof what, "%s", pred_heading[k]);
        what[strlen(what) - 3] = '\0';           /* no "(s)" */
        fprintf(f, "  %-12s %12s %12s %12s\n", what,
                kv_human_mark(b[0], s.min, est), kv_human_mark(b[1], s.mean, est),
                kv_human_mark(b[2], s.max, est));
    }
    free(v);
    free(rank);
}

/* The instrumented run against the plain build's run of the same input
 * (--plain): what measuring really cost, and how much of it libkm's
 * overhead figure accounts for.  libkm calibrates its costs on a region
 * of its own, hot in the caches, so the figure leaves out what the
 * instrumented code does to the program's own (the calls themselves,
 * another code layout, caches and branch predictors shared with libkm):
 * measured on LAPACK's tests, half or more of the cost.  Only a plain run
 * shows it; the routines' times hold it. */
static void against_plain(FILE *f, const struct kv_stats *st, double plain)
{
    if (st->n == 0)
        return;
    if (!(plain > 0)) {
        if (!isnan(st->fig[KV_F_OVERHEAD].mean))
            fprintf(f, "  (libkm overhead: libkm's own work.  What measuring "
                    "cost in all needs the\n  plain build's time: "
                    "--plain=SECONDS.)\n");
        return;
    }
    double added = st->total - plain;
    double libkm = st->fig[KV_F_OVERHEAD].mean;
    bool known = !isnan(libkm);
    fprintf(f, "\nAgainst the plain run (--plain, mean over ranks) %9s %8s\n",
            "seconds", "of plain");
    seconds_line(f, "Plain run (as given)", plain, false, 1);
    seconds_line(f, "Instrumented run (total time)", st->total,
                 st->fig_est[KV_F_TOTAL], st->total / plain);
    /* (no negative figure: a run no slower than the plain one, or one
     * that lost less than libkm's figure, is said so below) */
    if (added > 0)
        seconds_line(f, "Added by measuring (the difference)", added, false,
                     added / plain);
    if (known) {
        bool est = st->fig_est[KV_F_OVERHEAD];
        seconds_line(f, "  libkm's overhead figure", libkm, est,
                     libkm / plain);
        if (added > libkm)
            seconds_line(f, "  the rest, held in the routines' times",
                         added - libkm, est, (added - libkm) / plain);
    }
    if (kv_cpu_time(st->run))
        fprintf(f, "  (Every time of this run is CPU time: give the plain "
                "run's CPU time.)\n");
    if (added <= 0)
        fprintf(f, "  (The instrumented run was no slower than the plain one: "
                "what measuring cost is\n  below the difference between two "
                "runs of either.)\n");
    else if (known && added > libkm)
        fprintf(f, "  libkm's figure accounts for %.0f%% of the cost.  The "
                "rest is what the instrumented\n  code does to the program's "
                "own (the calls, another code layout, caches and\n  branch "
                "predictors shared with libkm): libkm cannot see it, so the "
                "routines'\n  times hold it, most in those that run most often "
                "or share the most with it.\n", 100 * libkm / added);
    else if (known)
        fprintf(f, "  (libkm's figure is above what the run lost: its "
                "calibrated costs overstate the\n  cost here, or the plain "
                "run was slower than usual.)\n");
}

/* Why there is no prediction: the file's reason, and the warnings that
 * name the routines. */
static void no_prediction(FILE *f, const struct kv_run *run)
{
    const struct kv_prediction *pr = &run->pred;
    fprintf(f, "  n/a: %s\n", pr->reason ? pr->reason : "the file gives no "
            "figures");
    for (size_t i = 0; i < run->nsections; i++)
        for (size_t w = 0; w < run->ranks[i].nwarn; w++)
            if (strncmp(run->ranks[i].warnings[w], "MPI calls were not "
                        "measured", 27) == 0)
                fprintf(f, "  rank %d: %s\n", run->ranks[i].rank,
                        run->ranks[i].warnings[w]);
}

static void prediction(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    const struct kv_prediction *pr = &run->pred;
    char b[32];
    if (!pr->present) {
        fprintf(f, "\nPrediction: none in this file (a serial program, or "
                "results written before MPI_FINALIZE)\n");
        return;
    }
    bool v2 = run->format_version >= 2, libkm = pr->without_overhead;
    bool cpu = kv_cpu_time(run);
    fprintf(f, "\nPrediction from one run of %zu ranks%s\n", pr->nrows,
            libkm && cpu ? " (CPU times without MPI start-up and libkm)"
            : libkm ? " (times without MPI start-up and libkm)"
            : v2  ? " (times without MPI start-up)"
                  : " (format 1: T_1pe holds MPI start-up)");
    if (!pr->available)
        no_prediction(f, run);
    else {
        fprintf(f, "  %-40s %12s s\n",
                cpu ? "T_1pe (one-PE CPU time: min R + sum P)"
                : libkm ? "T_1pe (one-PE time: min R + sum P)"
                : v2  ? "T_1pe (one-PE time, no start-up)"
                      : "T_1pe (one-PE time)",
                kv_human_mark(b, pr->fig[KV_PF_T1PE], pr->est & 1));
        fprintf(f, "  %-40s %12s\n",
                cpu ? "Speedup of CPU time (not of wall time)"
                : libkm ? "Speedup (T_1pe / max (T - S - O))" : "Speedup",
                kv_human_mark(b, pr->fig[KV_PF_SPEEDUP], pr->est >> 1 & 1));
        snprintf(b, sizeof b, "%s", pr->est >> 2 & 1 ? "~" : "");
        kv_percent(b + strlen(b), pr->fig[KV_PF_EFFICIENCY]);
        fprintf(f, "  %-40s %12s\n",
                cpu ? "Efficiency of CPU time" : "Efficiency", b);
    }
    if (libkm && cpu)
        fprintf(f, "  (P = T - S - C - R - O leaves out MPI start-up S and "
                "libkm's overhead O, and so\n  does the speedup; CPU time "
                "leaves out W, how long the rank waited for a\n  processor: "
                "the run took longer in wall time)\n");
    else if (libkm)
        fprintf(f, "  (P = T - S - C - R - O leaves out MPI start-up S and "
                "libkm's overhead O, and so\n  does the speedup; W, how long "
                "the rank waited for a processor, is in P)\n");
    if (pr->note && strncmp(pr->note, "Ranks waited", 12) == 0)
        fprintf(f, "  %s\n", pr->note);
    if (pr->nrows <= 16)
        prediction_rows(f, run);
    else
        prediction_spread(f, run);
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
    unsigned est = st->r_est[id];
    bool net_est = est & KV_EST(KV_M_NET);
    fprintf(f, "  %4zu  %-*s %10s %7s", k + 1, w, st->run->routines[id].name,
            kv_human_mark(b[0], net->mean, net_est),
            kv_percent(b[1], kv_share(st, net->mean)));
    if (st->n > 1)
        fprintf(f, " %10s %10s %8s %7d", kv_human_mark(b[2], net->min, net_est),
                kv_human_mark(b[3], net->max, net_est),
                kv_human(b[4], kv_max_over_mean(net)), net->max_rank);
    /* a whole count is shown whole while it fits the column */
    double count = st->rs[KV_M_COUNTS][id].mean;
    const char *form = count == floor(count) && count < 1e9 ? "%s%.0f"
                                                             : "%s%.6g";
    snprintf(b[5], sizeof b[5], form, st->r_extrap[id] ? "+" : "", count);
    fprintf(f, " %10s %10s", kv_human_mark(b[6], st->rs[KV_M_ELAPSED][id].mean,
                                          est & KV_EST(KV_M_ELAPSED)), b[5]);
    fprintf(f, " %10s %10s %6s\n",
            kv_human_mark(b[7], st->rs[KV_M_MPI][id].mean, est & KV_EST(KV_M_MPI)),
            kv_human_mark(b[0], st->rs[KV_M_IO][id].mean, est & KV_EST(KV_M_IO)),
            kv_percent(b[1], st->r_frac[id]));
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
    fprintf(f, " %10s %10s %10s %10s %6s\n", "Elapsed(s)", "Counts", "MPI(s)",
            "I/O(s)", "Est");
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

/* What the marks mean, once, when the run has any. */
static void legend(FILE *f, const struct kv_stats *st)
{
    if (!st->any_est && st->run->format_version >= 2)
        return;
    fputc('\n', f);
    if (st->any_est)
        fprintf(f, "~ contains an estimate: libkm measured only a sample of "
                "the executions past\n  the region's threshold and estimated "
                "the others.\n");
    fprintf(f, "Est: the estimated share of a routine's elapsed time (over "
            "ranks)%s.\n", st->run->format_version < 2
                           ? "; '-': format 1 does not say" : "");
}

void kv_summary(FILE *f, const struct kv_stats *st, int top, double plain)
{
    run_heading(f, st);
    header_figures(f, st);
    time_shares(f, st);
    against_plain(f, st, plain);
    prediction(f, st);
    if (st->n > 0)
        top_routines(f, st, top);
    kv_summary_threads(f, st, top);
    kv_summary_messages(f, st, top);
    kv_summary_peers(f, st, top);
    kv_summary_files(f, st, top);
    kv_summary_timeline(f, st);
    warnings(f, st);
    legend(f, st);
}
