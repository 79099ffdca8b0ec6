/*
 * export.c — CSV and JSON exports of one run (schema: doc/kmview-export.md).
 *
 * Owns the stable names of every exported column and key.  Adding a column
 * or key is allowed; renaming or removing one breaks users' scripts and
 * needs a new schema version.  Numbers are written with full precision
 * (the shortest text that reads back exactly); identifiers are 1-based, as
 * in KM_output.  Every time carries a `<name>_estimated` flag beside it
 * (schema version 2).  Must never compute figures (stats.c does).
 */
#include "kmview/views/export.h"

#include "kmview/views/files.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/views/timeline.h"
#include "support/buf.h"

/* ------------------------------------------------------------------------ */
/* CSV                                                                       */

/* `sep` (unless '\0') and an integer, as ",%d" / ",%llu" would print them:
 * printf's format parsing is most of a row's cost at 10^5 ranks. */
static void put_i(FILE *f, char sep, long long v)
{
    char b[32], *q = b;
    if (sep)
        *q++ = sep;
    kv_put_end(f, b, kv_put_int(q, v));
}

static void put_u(FILE *f, char sep, unsigned long long v)
{
    char b[32], *q = b;
    if (sep)
        *q++ = sep;
    kv_put_end(f, b, kv_put_uint(q, v));
}

static const char *const stat_columns[] = { "min", "mean", "max", "sum",
                                            "min_rank", "max_rank",
                                            "max_over_mean" };
#define NSTATCOLS (sizeof stat_columns / sizeof *stat_columns)

static void csv_stat_header(FILE *f, const char *prefix)
{
    for (size_t i = 0; i < NSTATCOLS; i++)
        fprintf(f, ",%s_%s", prefix, stat_columns[i]);
}

static void csv_stat(FILE *f, const struct kv_stat *s)
{
    double v[] = { s->min, s->mean, s->max, s->sum };
    for (int i = 0; i < 4; i++) {
        fputc(',', f);
        kv_csv_num(f, v[i]);
    }
    put_i(f, ',', s->min_rank);
    put_i(f, ',', s->max_rank);
    fputc(',', f);
    kv_csv_num(f, kv_max_over_mean(s));
}

static void csv_pair(FILE *f, const char *key, const char *value)
{
    kv_csv_str(f, key);
    fputc(',', f);
    kv_csv_str(f, value);
    fputc('\n', f);
}

static void csv_pair_num(FILE *f, const char *key, double v)
{
    char b[32];
    csv_pair(f, key, kv_num(b, v));
}

/* key, key_estimated, and the share of the mean total time if share_key */
static void csv_time(FILE *f, const struct kv_stats *st, const char *key,
                     double v, bool est, const char *share_key)
{
    char k[64];
    csv_pair_num(f, key, v);
    snprintf(k, sizeof k, "%s_estimated", key);
    csv_pair_num(f, k, est);
    if (share_key)
        csv_pair_num(f, share_key, kv_share(st, v));
}

static void csv_run_prediction(FILE *f, const struct kv_run *run)
{
    const struct kv_prediction *pr = &run->pred;
    char k[64];
    if (!pr->present)
        return;
    csv_pair_num(f, "prediction_available", pr->available);
    csv_pair(f, "prediction_note", pr->note);
    csv_pair(f, "prediction_reason", pr->reason);
    csv_pair_num(f, "prediction_without_startup", run->format_version >= 2);
    for (int k2 = 0; k2 < KV_NPRFIGS; k2++) {
        csv_pair_num(f, kv_pred_fig_key[k2], pr->fig[k2]);
        snprintf(k, sizeof k, "%s_estimated", kv_pred_fig_key[k2]);
        csv_pair_num(f, k, pr->est >> k2 & 1);
    }
    csv_pair_num(f, "prediction_without_overhead", pr->without_overhead);
}

static void csv_run(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    const bool *e = st->fig_est;
    struct km_buf b = { 0 };
    fputs("key,value\n", f);
    for (size_t i = 0; i < run->nsources; i++)
        csv_pair(f, "source", run->sources[i]);
    csv_pair_num(f, "format_version", run->format_version);
    csv_pair(f, "program", run->program);
    csv_pair(f, "started", run->started);
    csv_pair(f, "written_at", run->written_at);
    csv_pair(f, "clock", run->clock);
    csv_pair(f, "times", kv_cpu_time(run) ? "cpu" : "elapsed");
    csv_pair(f, "overhead", run->overhead);
    csv_pair_num(f, "ranks_in_run", run->nranks);
    csv_pair_num(f, "ranks_read", (double)run->nsections);
    csv_pair_num(f, "ranks_lost", (double)(run->nsections - st->n));
    for (size_t i = 0; i < run->nextra; i++) {
        b.len = 0;
        km_buf_printf(&b, "header:%s", run->extra[i].key);
        csv_pair(f, km_buf_cstr(&b), run->extra[i].value);
    }
    csv_time(f, st, "total_time", st->total, e[KV_F_TOTAL], NULL);
    csv_time(f, st, "mpi_time", st->mpi, e[KV_F_MPI], "mpi_share");
    csv_time(f, st, "mpi_startup_time", st->startup, e[KV_F_STARTUP],
             "mpi_startup_share");
    csv_pair_num(f, "mpi_startup_from_statements", run->startup_from_statements);
    csv_time(f, st, "io_time", st->io, e[KV_F_IO], "io_share");
    csv_time(f, st, "computation_time", st->comp, st->comp_est,
             "computation_share");
    csv_time(f, st, "routines_net_time", st->net_sum, st->net_sum_est,
             "routines_net_share");
    csv_pair_num(f, "routines_net_estimated_fraction", st->net_frac);
    csv_time(f, st, "libkm_overhead", st->fig[KV_F_OVERHEAD].mean,
             e[KV_F_OVERHEAD], "libkm_overhead_share");
    csv_pair_num(f, "estimated_time", st->fig[KV_F_ESTIMATED].mean);
    csv_pair_num(f, "estimated_share", kv_share(st, st->fig[KV_F_ESTIMATED].mean));
    csv_pair_num(f, "any_estimated", st->any_est);
    csv_run_prediction(f, run);
    km_buf_free(&b);
}

static void csv_figures(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    fputs("figure", f);
    for (size_t i = 0; i < NSTATCOLS; i++)
        fprintf(f, ",%s", stat_columns[i]);
    fputs(",estimated\n", f);
    for (int k = 0; k < KV_NFIGS; k++) {
        fputs(kv_figures[k].key, f);
        csv_stat(f, &st->fig[k]);
        fprintf(f, ",%d\n", st->fig_est[k]);
    }
}

static void csv_rank_figures(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    fputs("rank,processors,lost", f);
    for (int k = 0; k < KV_NFIGS; k++)
        fprintf(f, ",%s", kv_figures[k].key);
    fputs(",warnings", f);
    for (int k = 0; k < KV_NFIGS; k++)
        if (!kv_figures[k].integer)
            fprintf(f, ",%s_estimated", kv_figures[k].key);
    fputs(",routines_net_estimated_fraction\n", f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        put_i(f, 0, r->rank);
        put_i(f, ',', r->processors);
        put_i(f, ',', r->lost);
        for (int k = 0; k < KV_NFIGS; k++) {
            fputc(',', f);
            if (!r->lost)
                kv_csv_num(f, r->fig[k]);
        }
        put_u(f, ',', r->nwarn);
        for (int k = 0; k < KV_NFIGS; k++)
            if (!kv_figures[k].integer)
                put_i(f, ',', r->fig_est[k]);
        fputc(',', f);
        if (r->total_row.present)
            kv_csv_num(f, r->total_row.est_pct / 100);
        fputc('\n', f);
    }
}

/* A prediction column as exported: the value or its `_estimated` flag.
 * Schema 1's columns come first, then those schema 2 added, in the order
 * they were added: a column never moves. */
struct pred_column {
    int col;                 /* enum kv_pred_col */
    bool est;
};

static const struct pred_column csv_pred_columns[] = {
    { KV_PR_TOTAL, 0 }, { KV_PR_MPI, 0 }, { KV_PR_REDUNDANT, 0 },
    { KV_PR_PARALLEL, 0 }, { KV_PR_STARTUP, 0 },
    { KV_PR_TOTAL, 1 }, { KV_PR_STARTUP, 1 }, { KV_PR_MPI, 1 },
    { KV_PR_REDUNDANT, 1 }, { KV_PR_PARALLEL, 1 },
    { KV_PR_OVERHEAD, 0 }, { KV_PR_WAITED, 0 },
    { KV_PR_OVERHEAD, 1 }, { KV_PR_WAITED, 1 },
};

static const struct pred_column json_pred_columns[] = {
    { KV_PR_TOTAL, 0 }, { KV_PR_STARTUP, 0 }, { KV_PR_MPI, 0 },
    { KV_PR_REDUNDANT, 0 }, { KV_PR_PARALLEL, 0 },
    { KV_PR_TOTAL, 1 }, { KV_PR_STARTUP, 1 }, { KV_PR_MPI, 1 },
    { KV_PR_REDUNDANT, 1 }, { KV_PR_PARALLEL, 1 },
    { KV_PR_OVERHEAD, 0 }, { KV_PR_WAITED, 0 },
    { KV_PR_OVERHEAD, 1 }, { KV_PR_WAITED, 1 },
};
_Static_assert(sizeof json_pred_columns == sizeof csv_pred_columns,
               "CSV and JSON export the same prediction columns");

#define NPREDCOLUMNS (sizeof csv_pred_columns / sizeof *csv_pred_columns)

static const char *pred_column_name(char k[64], const struct pred_column *c)
{
    snprintf(k, 64, "%s%s", kv_pred_key[c->col], c->est ? "_estimated" : "");
    return k;
}

static void csv_prediction(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_prediction *pr = &st->run->pred;
    char k[64];
    fputs("rank", f);
    for (size_t c = 0; c < NPREDCOLUMNS; c++)
        fprintf(f, ",%s", pred_column_name(k, &csv_pred_columns[c]));
    fputc('\n', f);
    for (size_t i = 0; i < pr->nrows; i++) {
        const struct kv_prediction_row *r = &pr->rows[i];
        put_i(f, 0, r->rank);
        for (size_t c = 0; c < NPREDCOLUMNS; c++) {
            const struct pred_column *pc = &csv_pred_columns[c];
            fputc(',', f);
            if (pc->est)
                put_u(f, 0, r->est >> pc->col & 1);
            else
                kv_csv_num(f, r->v[pc->col]);
        }
        fputc('\n', f);
    }
}

/* The four time metrics a routine row has, in CSV and JSON order. */
static const int time_metrics[] = { KV_M_ELAPSED, KV_M_NET, KV_M_MPI, KV_M_IO };

static void csv_est_header(FILE *f)
{
    for (int k = 0; k < 4; k++)
        fprintf(f, ",%s_estimated", kv_metric_key[time_metrics[k]]);
    fputs(",estimated_fraction", f);
}

static void csv_est(FILE *f, unsigned est, double frac)
{
    for (int k = 0; k < 4; k++)
        put_i(f, ',', (est & KV_EST(time_metrics[k])) != 0);
    fputc(',', f);
    kv_csv_num(f, frac);
}

static void csv_routines(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    fputs("id,name,file,line,extrapolated,net_share", f);
    for (int m = 0; m < KV_NMETRICS; m++)
        csv_stat_header(f, kv_metric_key[m]);
    csv_est_header(f);
    fputc('\n', f);
    for (size_t i = 0; i < st->nr; i++) {
        const struct kv_routine *rt = &run->routines[i];
        fprintf(f, "%zu,", i + 1);
        kv_csv_str(f, rt->name);
        fputc(',', f);
        kv_csv_str(f, rt->file);
        fprintf(f, ",%d,%d,", rt->line, st->r_extrap[i]);
        kv_csv_num(f, kv_share(st, st->rs[KV_M_NET][i].mean));
        for (int m = 0; m < KV_NMETRICS; m++)
            csv_stat(f, &st->rs[m][i]);
        csv_est(f, st->r_est[i], st->r_frac[i]);
        fputc('\n', f);
    }
}

static void csv_location_key(FILE *f, const struct kv_run *run, size_t id)
{
    const struct kv_location *l = &run->locations[id];
    put_u(f, 0, id + 1);
    put_i(f, ',', l->routine + 1);
    fputc(',', f);
    kv_csv_str(f, run->routines[l->routine].name);
    fputc(',', f);
    fputs(kv_kind_name(l->kind), f);
    put_i(f, ',', l->line);
    put_i(f, ',', l->occurrence);
    fputc(',', f);
    kv_csv_str(f, l->text);
}

static bool is_startup(const struct kv_location *l)
{
    return l->kind == KV_MPI && kv_is_mpi_startup(l->text);
}

static void csv_locations(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    fputs("id,routine_id,routine,kind,line,occurrence,statement,extrapolated", f);
    csv_stat_header(f, "elapsed");
    csv_stat_header(f, "counts");
    fputs(",elapsed_estimated,estimated_fraction,mpi_startup\n", f);
    for (size_t i = 0; i < st->nl; i++) {
        csv_location_key(f, st->run, i);
        fprintf(f, ",%d", st->l_extrap[i]);
        csv_stat(f, &st->ls[KV_M_ELAPSED][i]);
        csv_stat(f, &st->ls[KV_M_COUNTS][i]);
        fprintf(f, ",%d,", st->l_est[i]);
        kv_csv_num(f, st->l_frac[i]);
        fprintf(f, ",%d\n", is_startup(&st->run->locations[i]));
    }
}

static void csv_rank_routines(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    fputs("rank,id,name,elapsed,net,counts,extrapolated,mpi,io", f);
    csv_est_header(f);
    fputc('\n', f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->nrc; k++) {
            const struct kv_rcell *c = &r->rc[k];
            put_i(f, 0, r->rank);
            put_i(f, ',', c->routine + 1);
            fputc(',', f);
            kv_csv_str(f, run->routines[c->routine].name);
            fputc(',', f);
            kv_csv_num(f, c->elapsed);
            fputc(',', f);
            kv_csv_num(f, c->net);
            put_u(f, ',', c->count);
            put_i(f, ',', c->extrap);
            fputc(',', f);
            kv_csv_num(f, c->mpi);
            fputc(',', f);
            kv_csv_num(f, c->io);
            csv_est(f, c->est, c->est_pct / 100);
            fputc('\n', f);
        }
    }
}

/* The estimate columns sit beside elapsed, so that the row still ends
 * with counts and extrapolated (scripts read the count from the end: a
 * statement may hold commas). */
static void csv_rank_locations(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    fputs("rank,id,routine_id,routine,kind,line,occurrence,statement,elapsed,"
          "elapsed_estimated,estimated_fraction,counts,extrapolated\n", f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->nlc; k++) {
            const struct kv_lcell *c = &r->lc[k];
            put_i(f, 0, r->rank);
            fputc(',', f);
            csv_location_key(f, run, (size_t)c->location);
            fputc(',', f);
            kv_csv_num(f, c->elapsed);
            put_i(f, ',', c->est);
            fputc(',', f);
            kv_csv_num(f, c->est_pct / 100);
            put_u(f, ',', c->count);
            put_i(f, ',', c->extrap);
            fputc('\n', f);
        }
    }
}

/* The Threads blocks: a row per thread of every rank that ran several. */
static void csv_rank_threads(FILE *f, const void *ctx)
{
    const struct kv_run *run = ((const struct kv_stats *)ctx)->run;
    fputs("rank,thread,omp", f);
    for (int k = 0; k < KV_NTFIGS; k++)
        fprintf(f, ",%s,%s_estimated", kv_thread_key[k], kv_thread_key[k]);
    fputs(",estimated_fraction,counts,extrapolated\n", f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->nthreads; k++) {
            const struct kv_thread *t = &r->threads[k];
            fprintf(f, "%d,%d,%d", r->rank, t->thread, t->omp);
            for (int m = 0; m < KV_NTFIGS; m++) {
                fputc(',', f);
                kv_csv_num(f, t->v[m]);
                fprintf(f, ",%d", (t->est >> m) & 1);
            }
            fputc(',', f);
            kv_csv_num(f, t->est_pct / 100);
            fprintf(f, ",%llu,%d\n", (unsigned long long)t->count, t->extrap);
        }
    }
}

/* The columns every row of the two files below ends with. */
static void csv_tregion_tail(FILE *f, const struct kv_tregion *t)
{
    fprintf(f, ",%d,", t->threads);
    kv_csv_num(f, t->min);
    fputc(',', f);
    kv_csv_num(f, t->mean);
    fputc(',', f);
    kv_csv_num(f, t->max);
    fprintf(f, ",%d,", t->est);
    kv_csv_num(f, t->imbal / 100);
    fprintf(f, ",%llu,%d\n", (unsigned long long)t->count, t->extrap);
}

static const char tregion_columns[] =
    "threads,min,mean,max,times_estimated,imbalance,counts,extrapolated\n";

/* The routines threads other than 0 ran, per rank. */
static void csv_rank_thread_routines(FILE *f, const void *ctx)
{
    const struct kv_run *run = ((const struct kv_stats *)ctx)->run;
    fprintf(f, "rank,id,name,%s", tregion_columns);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->ntregions; k++) {
            const struct kv_tregion *t = &r->tregions[k];
            if (t->location >= 0)
                continue;
            fprintf(f, "%d,%d,", r->rank, t->routine + 1);
            kv_csv_str(f, run->routines[t->routine].name);
            csv_tregion_tail(f, t);
        }
    }
}

/* The locations threads other than 0 ran, per rank (counts last, as in
 * rank_locations.csv). */
static void csv_rank_thread_locations(FILE *f, const void *ctx)
{
    const struct kv_run *run = ((const struct kv_stats *)ctx)->run;
    fprintf(f, "rank,id,routine_id,routine,kind,line,occurrence,statement,%s",
            tregion_columns);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->ntregions; k++) {
            const struct kv_tregion *t = &r->tregions[k];
            if (t->location < 0)
                continue;
            fprintf(f, "%d,", r->rank);
            csv_location_key(f, run, (size_t)t->location);
            csv_tregion_tail(f, t);
        }
    }
}

/* A call site's size bins as "bin:messages" pairs, blank-separated. */
static void csv_sizes(FILE *f, const struct kv_rank *r, const struct kv_msg *m)
{
    const struct kv_msg_bin *bin = kv_msg_bins(r, m);
    for (uint32_t b = 0; b < m->nbins; b++) {
        put_i(f, b ? ' ' : 0, bin[b].bin);
        put_u(f, ':', bin[b].messages);
    }
}

/* What every MPI call site moved, per rank. */
static void csv_rank_messages(FILE *f, const void *ctx)
{
    const struct kv_run *run = ((const struct kv_stats *)ctx)->run;
    fputs("rank,id,routine_id,routine,kind,line,occurrence,statement,"
          "messages,sent,received,sizes\n", f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->nmsgs; k++) {
            const struct kv_msg *m = &r->msgs[k];
            put_i(f, 0, r->rank);
            fputc(',', f);
            csv_location_key(f, run, (size_t)m->location);
            put_u(f, ',', m->messages);
            put_u(f, ',', m->sent);
            put_u(f, ',', m->received);
            fputc(',', f);
            csv_sizes(f, r, m);
            fputc('\n', f);
        }
    }
}

/* The communication matrix, row by row: what each rank sent to and
 * received from each of its peers. */
static void csv_rank_peers(FILE *f, const void *ctx)
{
    const struct kv_run *run = ((const struct kv_stats *)ctx)->run;
    fputs("rank,peer,messages_sent,bytes_sent,messages_received,"
          "bytes_received,alltoall_messages,alltoall_bytes\n", f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->npeers; k++) {
            const struct kv_peer *p = &r->peers[k];
            put_i(f, 0, r->rank);
            put_i(f, ',', p->peer);
            for (int c = 0; c < 3; c++) {
                put_u(f, ',', p->messages[c]);
                put_u(f, ',', p->bytes[c]);
            }
            fputc('\n', f);
        }
    }
}

/* A path's Fold as KM_output 7 writes it: -, r or m. */
static char fold_letter(int fold)
{
    return fold == KV_FOLD_RECURSION ? 'r' : fold == KV_FOLD_MAX ? 'm' : '-';
}

/* The Paths blocks: a row per path of every thread's tree, per rank.
 * `path` and `parent` number the tree's rows from 1 as KM_output does
 * (parent 0: outside every region); `kind` is ROUTINE for a routine's
 * path, empty (and routine empty) for a region of no routine. */
static void csv_paths(FILE *f, const void *ctx)
{
    const struct kv_run *run = ((const struct kv_stats *)ctx)->run;
    fputs("rank,thread,path,parent,routine,kind,line,counts,plus,elapsed,net,"
          "est_pct,elapsed_estimated,net_estimated,fold\n", f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t t = 0; t < r->ntrees; t++) {
            const struct kv_tree *tr = &r->trees[t];
            for (size_t k = 0; k < tr->npaths; k++) {
                const struct kv_path *p = &tr->paths[k];
                put_i(f, 0, r->rank);
                put_i(f, ',', tr->thread);
                put_u(f, ',', k + 1);
                put_i(f, ',', p->parent + 1);
                fputc(',', f);
                if (p->routine >= 0)
                    kv_csv_str(f, run->routines[p->routine].name);
                fputc(',', f);
                if (p->location >= 0) {
                    const struct kv_location *l = &run->locations[p->location];
                    fputs(kv_kind_name(l->kind), f);
                    put_i(f, ',', l->line);
                } else if (p->routine >= 0) {
                    fputs("ROUTINE", f);
                    put_i(f, ',', run->routines[p->routine].line);
                } else {
                    fputs(",0", f);
                }
                put_u(f, ',', p->count);
                put_i(f, ',', p->extrap);
                fputc(',', f);
                kv_csv_num(f, p->elapsed);
                fputc(',', f);
                kv_csv_num(f, p->net);
                fputc(',', f);
                kv_csv_num(f, p->est_pct);
                put_i(f, ',', (p->est & KV_EST(KV_M_ELAPSED)) != 0);
                put_i(f, ',', (p->est & KV_EST(KV_M_NET)) != 0);
                fprintf(f, ",%c\n", fold_letter(p->fold));
            }
        }
    }
}

static void csv_warnings(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    fputs("rank,warning\n", f);
    for (size_t i = 0; i < run->nsections; i++)
        for (size_t w = 0; w < run->ranks[i].nwarn; w++) {
            fprintf(f, "%d,", run->ranks[i].rank);
            kv_csv_str(f, run->ranks[i].warnings[w]);
            fputc('\n', f);
        }
}

int kv_export_csv(struct kv_out *o, const char *dir, const struct kv_stats *st)
{
    static const struct kv_csv_file files[] = {
        { "run.csv", csv_run },
        { "figures.csv", csv_figures },
        { "rank_figures.csv", csv_rank_figures },
        { "prediction.csv", csv_prediction },
        { "routines.csv", csv_routines },
        { "locations.csv", csv_locations },
        { "rank_routines.csv", csv_rank_routines },
        { "rank_locations.csv", csv_rank_locations },
        { "warnings.csv", csv_warnings },
        { "rank_threads.csv", csv_rank_threads },
        { "rank_thread_routines.csv", csv_rank_thread_routines },
        { "rank_thread_locations.csv", csv_rank_thread_locations },
        { "rank_messages.csv", csv_rank_messages },
        { "rank_peers.csv", csv_rank_peers },
        { "rank_files.csv", kv_csv_rank_files },
        { "rank_timeline.csv", kv_csv_rank_timeline },
        { "rank_timeline_routines.csv", kv_csv_rank_timeline_routines },
        { "paths.csv", csv_paths },
    };
    return kv_csv_files(o, dir, files, sizeof files / sizeof *files, st);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */

static void json_key(FILE *f, const char *key)
{
    kv_json_str(f, key);
    fputc(':', f);
}

static void json_num_member(FILE *f, const char *key, double v, bool comma)
{
    json_key(f, key);
    kv_json_num(f, v);
    if (comma)
        fputc(',', f);
}

static void json_str_member(FILE *f, const char *key, const char *v)
{
    json_key(f, key);
    kv_json_str(f, v);
    fputc(',', f);
}

static void json_bool_member(FILE *f, const char *key, bool v, bool comma)
{
    json_key(f, key);
    fputs(v ? "true" : "false", f);
    if (comma)
        fputc(',', f);
}

/* A statistic; `est` >= 0 adds its "estimated" key (times only). */
static void json_stat(FILE *f, const char *key, const struct kv_stat *s,
                      int est)
{
    json_key(f, key);
    fputc('{', f);
    json_num_member(f, "min", s->min, true);
    json_num_member(f, "mean", s->mean, true);
    json_num_member(f, "max", s->max, true);
    json_num_member(f, "sum", s->sum, true);
    fprintf(f, "\"min_rank\":%d,\"max_rank\":%d,", s->min_rank, s->max_rank);
    json_num_member(f, "max_over_mean", kv_max_over_mean(s), est >= 0);
    if (est >= 0)
        json_bool_member(f, "estimated", est, false);
    fputc('}', f);
}

static void json_run(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    fputs("\"schema\":\"kmview-profile\",\"schema_version\":2,\"sources\":[", f);
    for (size_t i = 0; i < run->nsources; i++) {
        if (i)
            fputc(',', f);
        kv_json_str(f, run->sources[i]);
    }
    fprintf(f, "],\n\"format_version\":%d,", run->format_version);
    json_str_member(f, "program", run->program);
    json_str_member(f, "started", run->started);
    json_str_member(f, "written_at", run->written_at);
    json_str_member(f, "clock", run->clock);
    json_str_member(f, "times", kv_cpu_time(run) ? "cpu" : "elapsed");
    json_str_member(f, "overhead", run->overhead);
    fprintf(f, "\"ranks_in_run\":%d,\"ranks_read\":%zu,\"ranks_lost\":%zu,\n",
            run->nranks, run->nsections, run->nsections - st->n);
    fputs("\"header_lines\":{", f);
    for (size_t i = 0; i < run->nextra; i++) {
        if (i)
            fputc(',', f);
        json_key(f, run->extra[i].key);
        kv_json_str(f, run->extra[i].value);
    }
    fputs("},\n", f);
}

/* key, key_estimated and (if share_key) its share, each followed by ','. */
static void json_time(FILE *f, const struct kv_stats *st, const char *key,
                      double v, bool est, const char *share_key)
{
    char k[64];
    json_num_member(f, key, v, true);
    snprintf(k, sizeof k, "%s_estimated", key);
    json_bool_member(f, k, est, true);
    if (share_key)
        json_num_member(f, share_key, kv_share(st, v), true);
}

static void json_shares(FILE *f, const struct kv_stats *st)
{
    const bool *e = st->fig_est;
    fputs("\"time\":{", f);
    json_time(f, st, "total_time", st->total, e[KV_F_TOTAL], NULL);
    json_time(f, st, "mpi_time", st->mpi, e[KV_F_MPI], "mpi_share");
    json_time(f, st, "mpi_startup_time", st->startup, e[KV_F_STARTUP],
              "mpi_startup_share");
    json_bool_member(f, "mpi_startup_from_statements",
                     st->run->startup_from_statements, true);
    json_time(f, st, "io_time", st->io, e[KV_F_IO], "io_share");
    json_time(f, st, "computation_time", st->comp, st->comp_est,
              "computation_share");
    json_time(f, st, "routines_net_time", st->net_sum, st->net_sum_est,
              "routines_net_share");
    json_num_member(f, "routines_net_estimated_fraction", st->net_frac, true);
    json_time(f, st, "libkm_overhead", st->fig[KV_F_OVERHEAD].mean,
              e[KV_F_OVERHEAD], "libkm_overhead_share");
    json_num_member(f, "estimated_time", st->fig[KV_F_ESTIMATED].mean, true);
    json_num_member(f, "estimated_share",
                    kv_share(st, st->fig[KV_F_ESTIMATED].mean), true);
    json_bool_member(f, "any_estimated", st->any_est, false);
    fputs("},\n\"figures\":{", f);
    for (int k = 0; k < KV_NFIGS; k++) {
        if (k)
            fputc(',', f);
        json_stat(f, kv_figures[k].key, &st->fig[k], st->fig_est[k]);
    }
    fputs("},\n", f);
}

static void json_prediction_row(FILE *f, const struct kv_prediction_row *r)
{
    char k[64];
    fprintf(f, "{\"rank\":%d,", r->rank);
    for (size_t c = 0; c < NPREDCOLUMNS; c++) {
        const struct pred_column *pc = &json_pred_columns[c];
        bool more = c + 1 < NPREDCOLUMNS;
        pred_column_name(k, pc);
        if (pc->est)
            json_bool_member(f, k, r->est >> pc->col & 1, more);
        else
            json_num_member(f, k, r->v[pc->col], more);
    }
    fputc('}', f);
}

static void json_prediction(FILE *f, const struct kv_stats *st)
{
    const struct kv_prediction *pr = &st->run->pred;
    char k[64];
    fputs("\"prediction\":", f);
    if (!pr->present) {
        fputs("null,\n", f);
        return;
    }
    fputc('{', f);
    json_bool_member(f, "available", pr->available, true);
    json_str_member(f, "note", pr->note);
    json_str_member(f, "reason", pr->reason);
    json_bool_member(f, "without_startup", st->run->format_version >= 2, true);
    for (int c = 0; c < KV_NPRFIGS; c++) {
        json_num_member(f, kv_pred_fig_key[c], pr->fig[c], true);
        snprintf(k, sizeof k, "%s_estimated", kv_pred_fig_key[c]);
        json_bool_member(f, k, pr->est >> c & 1, true);
    }
    fputs("\"ranks\":[", f);
    for (size_t i = 0; i < pr->nrows; i++) {
        fputs(i ? ",\n" : "\n", f);
        json_prediction_row(f, &pr->rows[i]);
    }
    fputs("],", f);
    json_bool_member(f, "without_overhead", pr->without_overhead, false);
    fputs("},\n", f);
}

static void json_routines(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    fputs("\"routines\":[", f);
    for (size_t i = 0; i < st->nr; i++) {
        const struct kv_routine *rt = &run->routines[i];
        fprintf(f, "%s{\"id\":%zu,", i ? ",\n" : "\n", i + 1);
        json_str_member(f, "name", rt->name);
        json_str_member(f, "file", rt->file);
        fprintf(f, "\"line\":%d,\"extrapolated\":%s,", rt->line,
                st->r_extrap[i] ? "true" : "false");
        json_num_member(f, "net_share", kv_share(st, st->rs[KV_M_NET][i].mean),
                        true);
        json_num_member(f, "estimated_fraction", st->r_frac[i], true);
        for (int m = 0; m < KV_NMETRICS; m++) {
            if (m)
                fputc(',', f);
            json_stat(f, kv_metric_key[m], &st->rs[m][i],
                      m == KV_M_COUNTS ? -1
                                       : (st->r_est[i] & KV_EST(m)) != 0);
        }
        fputc('}', f);
    }
    fputs("],\n", f);
}

static void json_locations(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    fputs("\"locations\":[", f);
    for (size_t i = 0; i < st->nl; i++) {
        const struct kv_location *l = &run->locations[i];
        fprintf(f, "%s{\"id\":%zu,\"routine_id\":%d,", i ? ",\n" : "\n", i + 1,
                l->routine + 1);
        json_str_member(f, "routine", run->routines[l->routine].name);
        fprintf(f, "\"kind\":\"%s\",\"line\":%d,\"occurrence\":%d,",
                kv_kind_name(l->kind), l->line, l->occurrence);
        json_str_member(f, "statement", l->text);
        json_bool_member(f, "mpi_startup", is_startup(l), true);
        fprintf(f, "\"extrapolated\":%s,", st->l_extrap[i] ? "true" : "false");
        json_num_member(f, "estimated_fraction", st->l_frac[i], true);
        json_stat(f, "elapsed", &st->ls[KV_M_ELAPSED][i], st->l_est[i]);
        fputc(',', f);
        json_stat(f, "counts", &st->ls[KV_M_COUNTS][i], -1);
        fputc('}', f);
    }
    fputs("],\n", f);
}

static void json_rank_routine(FILE *f, const struct kv_rcell *c)
{
    char k[64];
    fprintf(f, "{\"id\":%d,", c->routine + 1);
    json_num_member(f, "elapsed", c->elapsed, true);
    json_num_member(f, "net", c->net, true);
    fprintf(f, "\"counts\":%llu,\"extrapolated\":%s,",
            (unsigned long long)c->count, c->extrap ? "true" : "false");
    json_num_member(f, "mpi", c->mpi, true);
    json_num_member(f, "io", c->io, true);
    for (int m = 0; m < 4; m++) {
        snprintf(k, sizeof k, "%s_estimated", kv_metric_key[time_metrics[m]]);
        json_bool_member(f, k, c->est & KV_EST(time_metrics[m]), true);
    }
    json_num_member(f, "estimated_fraction", c->est_pct / 100, false);
    fputc('}', f);
}

/* A cell's last members, counts and whether they were extrapolated, and
 * its closing brace. */
static void json_count_end(FILE *f, uint64_t count, bool extrap)
{
    fprintf(f, "\"counts\":%llu,\"extrapolated\":%s}",
            (unsigned long long)count, extrap ? "true" : "false");
}

static void json_rank_cells(FILE *f, const struct kv_rank *r)
{
    fputs(",\"routines\":[", f);
    for (size_t k = 0; k < r->nrc; k++) {
        if (k)
            fputc(',', f);
        json_rank_routine(f, &r->rc[k]);
    }
    fputs("],\"locations\":[", f);
    for (size_t k = 0; k < r->nlc; k++) {
        const struct kv_lcell *c = &r->lc[k];
        fprintf(f, "%s{\"id\":%d,", k ? "," : "", c->location + 1);
        json_num_member(f, "elapsed", c->elapsed, true);
        json_bool_member(f, "elapsed_estimated", c->est, true);
        json_num_member(f, "estimated_fraction", c->est_pct / 100, true);
        json_count_end(f, c->count, c->extrap);
    }
    fputc(']', f);
}

static void json_rank_figures(FILE *f, const struct kv_rank *r)
{
    char k[64];
    fputc('{', f);
    for (int i = 0; i < KV_NFIGS; i++) {
        json_num_member(f, kv_figures[i].key, r->fig[i], true);
        if (kv_figures[i].integer)
            continue;
        snprintf(k, sizeof k, "%s_estimated", kv_figures[i].key);
        json_bool_member(f, k, r->fig_est[i], true);
    }
    json_num_member(f, "routines_net_estimated_fraction",
                    r->total_row.present ? r->total_row.est_pct / 100 : NAN,
                    false);
    fputc('}', f);
}

static void json_rank_threads(FILE *f, const struct kv_rank *r)
{
    char k[64];
    fputs(",\"threads\":[", f);
    for (size_t i = 0; i < r->nthreads; i++) {
        const struct kv_thread *t = &r->threads[i];
        fprintf(f, "%s{\"thread\":%d,\"omp\":%d,", i ? "," : "", t->thread,
                t->omp);
        for (int m = 0; m < KV_NTFIGS; m++) {
            json_num_member(f, kv_thread_key[m], t->v[m], true);
            snprintf(k, sizeof k, "%s_estimated", kv_thread_key[m]);
            json_bool_member(f, k, (t->est >> m) & 1, true);
        }
        json_num_member(f, "estimated_fraction", t->est_pct / 100, true);
        json_count_end(f, t->count, t->extrap);
    }
    for (int loc = 0; loc <= 1; loc++) {
        fputs(loc ? "],\"thread_locations\":[" : "],\"thread_routines\":[", f);
        bool first = true;
        for (size_t i = 0; i < r->ntregions; i++) {
            const struct kv_tregion *t = &r->tregions[i];
            if ((t->location >= 0) != loc)
                continue;
            fprintf(f, "%s{\"id\":%d,\"threads\":%d,", first ? "" : ",",
                    (loc ? t->location : t->routine) + 1, t->threads);
            first = false;
            json_num_member(f, "min", t->min, true);
            json_num_member(f, "mean", t->mean, true);
            json_num_member(f, "max", t->max, true);
            json_bool_member(f, "times_estimated", t->est, true);
            json_num_member(f, "imbalance", t->imbal / 100, true);
            json_count_end(f, t->count, t->extrap);
        }
    }
    fputc(']', f);
}

static void json_rank_messages(FILE *f, const struct kv_rank *r)
{
    fputs(",\"messages\":[", f);
    for (size_t i = 0; i < r->nmsgs; i++) {
        const struct kv_msg *m = &r->msgs[i];
        fprintf(f, "%s{\"id\":%d,\"messages\":%llu,\"sent\":%llu,"
                "\"received\":%llu,\"sizes\":{", i ? "," : "",
                m->location + 1, (unsigned long long)m->messages,
                (unsigned long long)m->sent, (unsigned long long)m->received);
        const struct kv_msg_bin *bin = kv_msg_bins(r, m);
        for (uint32_t b = 0; b < m->nbins; b++)
            fprintf(f, "%s\"%d\":%llu", b ? "," : "", bin[b].bin,
                    (unsigned long long)bin[b].messages);
        fputs("}}", f);
    }
    fputc(']', f);
}

static void json_rank_peers(FILE *f, const struct kv_rank *r)
{
    fputs(",\"peers\":[", f);
    for (size_t i = 0; i < r->npeers; i++) {
        const struct kv_peer *p = &r->peers[i];
        fprintf(f, "%s{\"peer\":%d,\"messages_sent\":%llu,\"bytes_sent\":%llu,"
                "\"messages_received\":%llu,\"bytes_received\":%llu,"
                "\"alltoall_messages\":%llu,\"alltoall_bytes\":%llu}",
                i ? "," : "", p->peer, (unsigned long long)p->messages[0],
                (unsigned long long)p->bytes[0],
                (unsigned long long)p->messages[1],
                (unsigned long long)p->bytes[1],
                (unsigned long long)p->messages[2],
                (unsigned long long)p->bytes[2]);
    }
    fputc(']', f);
}

/* A path of a tree: `parent` its parent's index in the tree's `paths`
 * (-1: outside every region), `routine` null for a region of no routine,
 * `location` null for the routine itself. */
static void json_path(FILE *f, const struct kv_run *run,
                      const struct kv_path *p)
{
    fprintf(f, "{\"parent\":%d,\"routine\":", p->parent);
    if (p->routine >= 0)
        kv_json_str(f, run->routines[p->routine].name);
    else
        fputs("null", f);
    fputs(",\"location\":", f);
    if (p->location >= 0) {
        const struct kv_location *l = &run->locations[p->location];
        fprintf(f, "{\"id\":%d,\"kind\":\"%s\",\"line\":%d,\"text\":",
                p->location + 1, kv_kind_name(l->kind), l->line);
        kv_json_str(f, l->text);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ",\"counts\":%llu,", (unsigned long long)p->count);
    json_bool_member(f, "estimated_counts", p->extrap, true);
    json_num_member(f, "elapsed", p->elapsed, true);
    json_num_member(f, "net", p->net, true);
    json_num_member(f, "est_pct", p->est_pct, true);
    json_bool_member(f, "elapsed_est", p->est & KV_EST(KV_M_ELAPSED), true);
    json_bool_member(f, "net_est", p->est & KV_EST(KV_M_NET), true);
    fprintf(f, "\"fold\":\"%c\"}", fold_letter(p->fold));
}

/* The Paths block: every thread's calling-context tree. */
static void json_rank_trees(FILE *f, const struct kv_run *run,
                            const struct kv_rank *r)
{
    fputs(",\"trees\":[", f);
    for (size_t t = 0; t < r->ntrees; t++) {
        const struct kv_tree *tr = &r->trees[t];
        fprintf(f, "%s{\"thread\":%d,\"folded\":%lld,\"paths\":[", t ? "," : "",
                tr->thread, tr->folded);
        for (size_t k = 0; k < tr->npaths; k++) {
            fputs(k ? ",\n" : "\n", f);
            json_path(f, run, &tr->paths[k]);
        }
        fputs("]}", f);
    }
    fputc(']', f);
}

static void json_ranks(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    fputs("\"ranks\":[", f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        fprintf(f, "%s{\"rank\":%d,\"processors\":%d,\"lost\":%s,\"figures\":",
                i ? ",\n" : "\n", r->rank, r->processors,
                r->lost ? "true" : "false");
        if (r->lost)
            fputs("null", f);
        else
            json_rank_figures(f, r);
        fputs(",\"warnings\":[", f);
        for (size_t w = 0; w < r->nwarn; w++) {
            if (w)
                fputc(',', f);
            kv_json_str(f, r->warnings[w]);
        }
        fputc(']', f);
        json_rank_cells(f, r);
        json_rank_threads(f, r);
        json_rank_messages(f, r);
        json_rank_peers(f, r);
        kv_json_rank_files(f, r);
        kv_json_rank_timeline(f, run, r);
        json_rank_trees(f, run, r);
        fputc('}', f);
    }
    fputs("]\n", f);
}

int kv_export_json(struct kv_out *o, const char *path, const struct kv_stats *st)
{
    FILE *f = kv_out_open(o, path);
    if (!f)
        return -1;
    fputs("{", f);
    json_run(f, st);
    json_shares(f, st);
    json_prediction(f, st);
    json_routines(f, st);
    json_locations(f, st);
    json_ranks(f, st);
    fputs("}\n", f);
    return 0;
}
