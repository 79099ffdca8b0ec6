/*
 * export.c — CSV and JSON exports of one run (schema: doc/kmview-export.md).
 *
 * Owns the stable names of every exported column and key.  Adding a column
 * or key is allowed; renaming or removing one breaks users' scripts and
 * needs a new schema version.  Numbers are written with full precision
 * (the shortest text that reads back exactly); identifiers are 1-based, as
 * in KM_output.  Must never compute figures (stats.c does).
 */
#include "kmview/export.h"

#include <stdlib.h>
#include <string.h>

#include "support/buf.h"

FILE *kv_out_open_in(struct kv_out *o, const char *dir, const char *name)
{
    struct km_buf path = { 0 };
    km_buf_printf(&path, "%s/%s", dir, name);
    FILE *f = kv_out_open(o, km_buf_cstr(&path));
    km_buf_free(&path);
    return f;
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                       */

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
    fprintf(f, ",%d,%d,", s->min_rank, s->max_rank);
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

static void csv_run(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    struct km_buf b = { 0 };
    fputs("key,value\n", f);
    for (size_t i = 0; i < run->nsources; i++)
        csv_pair(f, "source", run->sources[i]);
    csv_pair_num(f, "format_version", run->format_version);
    csv_pair(f, "program", run->program);
    csv_pair(f, "started", run->started);
    csv_pair(f, "written_at", run->written_at);
    csv_pair(f, "clock", run->clock);
    csv_pair_num(f, "ranks_in_run", run->nranks);
    csv_pair_num(f, "ranks_read", (double)run->nsections);
    csv_pair_num(f, "ranks_lost", (double)(run->nsections - st->n));
    for (size_t i = 0; i < run->nextra; i++) {
        b.len = 0;
        km_buf_printf(&b, "header:%s", run->extra[i].key);
        csv_pair(f, km_buf_cstr(&b), run->extra[i].value);
    }
    double mpi = st->fig[KV_F_MPI].mean, io = st->fig[KV_F_IO].mean;
    csv_pair_num(f, "total_time", st->total);
    csv_pair_num(f, "mpi_time", mpi);
    csv_pair_num(f, "mpi_share", kv_share(st, mpi));
    csv_pair_num(f, "io_time", io);
    csv_pair_num(f, "io_share", kv_share(st, io));
    csv_pair_num(f, "computation_time", st->total - mpi - io);
    csv_pair_num(f, "computation_share", kv_share(st, st->total - mpi - io));
    csv_pair_num(f, "routines_net_time", st->net_sum);
    csv_pair_num(f, "routines_net_share", kv_share(st, st->net_sum));
    if (run->pred.present) {
        csv_pair_num(f, "t_1pe", run->pred.t_1pe);
        csv_pair_num(f, "speedup", run->pred.speedup);
        csv_pair_num(f, "efficiency", run->pred.efficiency);
    }
    km_buf_free(&b);
}

static void csv_figures(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    fputs("figure", f);
    for (size_t i = 0; i < NSTATCOLS; i++)
        fprintf(f, ",%s", stat_columns[i]);
    fputc('\n', f);
    for (int k = 0; k < KV_NFIGS; k++) {
        fputs(kv_figures[k].key, f);
        csv_stat(f, &st->fig[k]);
        fputc('\n', f);
    }
}

static void csv_rank_figures(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    fputs("rank,processors,lost", f);
    for (int k = 0; k < KV_NFIGS; k++)
        fprintf(f, ",%s", kv_figures[k].key);
    fputs(",warnings\n", f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        fprintf(f, "%d,%d,%d", r->rank, r->processors, r->lost);
        for (int k = 0; k < KV_NFIGS; k++) {
            fputc(',', f);
            if (!r->lost)
                kv_csv_num(f, r->fig[k]);
        }
        fprintf(f, ",%zu\n", r->nwarn);
    }
}

static void csv_prediction(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_prediction *pr = &st->run->pred;
    fputs("rank,total,mpi,redundant,parallel\n", f);
    for (size_t i = 0; i < pr->nrows; i++) {
        const struct kv_prediction_row *r = &pr->rows[i];
        double v[] = { r->total, r->mpi, r->redundant, r->parallel };
        fprintf(f, "%d", r->rank);
        for (int k = 0; k < 4; k++) {
            fputc(',', f);
            kv_csv_num(f, v[k]);
        }
        fputc('\n', f);
    }
}

static void csv_routines(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    fputs("id,name,file,line,extrapolated,net_share", f);
    for (int m = 0; m < KV_NMETRICS; m++)
        csv_stat_header(f, kv_metric_key[m]);
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
        fputc('\n', f);
    }
}

static void csv_location_key(FILE *f, const struct kv_run *run, size_t id)
{
    const struct kv_location *l = &run->locations[id];
    fprintf(f, "%zu,%d,", id + 1, l->routine + 1);
    kv_csv_str(f, run->routines[l->routine].name);
    fprintf(f, ",%s,%d,%d,", kv_kind_name(l->kind), l->line, l->occurrence);
    kv_csv_str(f, l->text);
}

static void csv_locations(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    fputs("id,routine_id,routine,kind,line,occurrence,statement,extrapolated", f);
    csv_stat_header(f, "elapsed");
    csv_stat_header(f, "counts");
    fputc('\n', f);
    for (size_t i = 0; i < st->nl; i++) {
        csv_location_key(f, st->run, i);
        fprintf(f, ",%d", st->l_extrap[i]);
        csv_stat(f, &st->ls[KV_M_ELAPSED][i]);
        csv_stat(f, &st->ls[KV_M_COUNTS][i]);
        fputc('\n', f);
    }
}

static void csv_rank_routines(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    fputs("rank,id,name,elapsed,net,counts,extrapolated,mpi,io\n", f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->nrc; k++) {
            const struct kv_rcell *c = &r->rc[k];
            fprintf(f, "%d,%d,", r->rank, c->routine + 1);
            kv_csv_str(f, run->routines[c->routine].name);
            fputc(',', f);
            kv_csv_num(f, c->elapsed);
            fputc(',', f);
            kv_csv_num(f, c->net);
            fprintf(f, ",%llu,%d,", (unsigned long long)c->count, c->extrap);
            kv_csv_num(f, c->mpi);
            fputc(',', f);
            kv_csv_num(f, c->io);
            fputc('\n', f);
        }
    }
}

static void csv_rank_locations(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    const struct kv_run *run = st->run;
    fputs("rank,id,routine_id,routine,kind,line,occurrence,statement,elapsed,"
          "counts,extrapolated\n", f);
    for (size_t i = 0; i < run->nsections; i++) {
        const struct kv_rank *r = &run->ranks[i];
        for (size_t k = 0; k < r->nlc; k++) {
            const struct kv_lcell *c = &r->lc[k];
            fprintf(f, "%d,", r->rank);
            csv_location_key(f, run, (size_t)c->location);
            fputc(',', f);
            kv_csv_num(f, c->elapsed);
            fprintf(f, ",%llu,%d\n", (unsigned long long)c->count, c->extrap);
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

int kv_csv_files(struct kv_out *o, const char *dir,
                 const struct kv_csv_file *files, size_t n, const void *ctx)
{
    if (kv_make_dir(o, dir))
        return -1;
    for (size_t i = 0; i < n; i++) {
        FILE *f = kv_out_open_in(o, dir, files[i].name);
        if (!f)
            return -1;
        files[i].write(f, ctx);
    }
    return 0;
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

static void json_stat(FILE *f, const char *key, const struct kv_stat *s)
{
    json_key(f, key);
    fputc('{', f);
    json_num_member(f, "min", s->min, true);
    json_num_member(f, "mean", s->mean, true);
    json_num_member(f, "max", s->max, true);
    json_num_member(f, "sum", s->sum, true);
    fprintf(f, "\"min_rank\":%d,\"max_rank\":%d,", s->min_rank, s->max_rank);
    json_num_member(f, "max_over_mean", kv_max_over_mean(s), false);
    fputc('}', f);
}

static void json_run(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    fputs("\"schema\":\"kmview-profile\",\"schema_version\":1,\"sources\":[", f);
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

static void json_shares(FILE *f, const struct kv_stats *st)
{
    double mpi = st->fig[KV_F_MPI].mean, io = st->fig[KV_F_IO].mean;
    fputs("\"time\":{", f);
    json_num_member(f, "total_time", st->total, true);
    json_num_member(f, "mpi_time", mpi, true);
    json_num_member(f, "mpi_share", kv_share(st, mpi), true);
    json_num_member(f, "io_time", io, true);
    json_num_member(f, "io_share", kv_share(st, io), true);
    json_num_member(f, "computation_time", st->total - mpi - io, true);
    json_num_member(f, "computation_share", kv_share(st, st->total - mpi - io),
                    true);
    json_num_member(f, "routines_net_time", st->net_sum, true);
    json_num_member(f, "routines_net_share", kv_share(st, st->net_sum), false);
    fputs("},\n\"figures\":{", f);
    for (int k = 0; k < KV_NFIGS; k++) {
        if (k)
            fputc(',', f);
        json_stat(f, kv_figures[k].key, &st->fig[k]);
    }
    fputs("},\n", f);
}

static void json_prediction(FILE *f, const struct kv_stats *st)
{
    const struct kv_prediction *pr = &st->run->pred;
    fputs("\"prediction\":", f);
    if (!pr->present) {
        fputs("null,\n", f);
        return;
    }
    fputc('{', f);
    json_num_member(f, "t_1pe", pr->t_1pe, true);
    json_num_member(f, "speedup", pr->speedup, true);
    json_num_member(f, "efficiency", pr->efficiency, true);
    fputs("\"ranks\":[", f);
    for (size_t i = 0; i < pr->nrows; i++) {
        const struct kv_prediction_row *r = &pr->rows[i];
        fprintf(f, "%s{\"rank\":%d,", i ? ",\n" : "\n", r->rank);
        json_num_member(f, "total", r->total, true);
        json_num_member(f, "mpi", r->mpi, true);
        json_num_member(f, "redundant", r->redundant, true);
        json_num_member(f, "parallel", r->parallel, false);
        fputc('}', f);
    }
    fputs("]},\n", f);
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
        for (int m = 0; m < KV_NMETRICS; m++) {
            if (m)
                fputc(',', f);
            json_stat(f, kv_metric_key[m], &st->rs[m][i]);
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
        fprintf(f, "\"extrapolated\":%s,", st->l_extrap[i] ? "true" : "false");
        json_stat(f, "elapsed", &st->ls[KV_M_ELAPSED][i]);
        fputc(',', f);
        json_stat(f, "counts", &st->ls[KV_M_COUNTS][i]);
        fputc('}', f);
    }
    fputs("],\n", f);
}

static void json_rank_cells(FILE *f, const struct kv_rank *r)
{
    fputs(",\"routines\":[", f);
    for (size_t k = 0; k < r->nrc; k++) {
        const struct kv_rcell *c = &r->rc[k];
        fprintf(f, "%s{\"id\":%d,", k ? "," : "", c->routine + 1);
        json_num_member(f, "elapsed", c->elapsed, true);
        json_num_member(f, "net", c->net, true);
        fprintf(f, "\"counts\":%llu,\"extrapolated\":%s,",
                (unsigned long long)c->count, c->extrap ? "true" : "false");
        json_num_member(f, "mpi", c->mpi, true);
        json_num_member(f, "io", c->io, false);
        fputc('}', f);
    }
    fputs("],\"locations\":[", f);
    for (size_t k = 0; k < r->nlc; k++) {
        const struct kv_lcell *c = &r->lc[k];
        fprintf(f, "%s{\"id\":%d,", k ? "," : "", c->location + 1);
        json_num_member(f, "elapsed", c->elapsed, true);
        fprintf(f, "\"counts\":%llu,\"extrapolated\":%s}",
                (unsigned long long)c->count, c->extrap ? "true" : "false");
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
        else {
            fputc('{', f);
            for (int k = 0; k < KV_NFIGS; k++)
                json_num_member(f, kv_figures[k].key, r->fig[k],
                                k + 1 < KV_NFIGS);
            fputc('}', f);
        }
        fputs(",\"warnings\":[", f);
        for (size_t w = 0; w < r->nwarn; w++) {
            if (w)
                fputc(',', f);
            kv_json_str(f, r->warnings[w]);
        }
        fputc(']', f);
        json_rank_cells(f, r);
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
