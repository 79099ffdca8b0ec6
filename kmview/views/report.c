/*
 * report.c — the report of one run: the data element of kmview's
 * self-contained HTML page (the frame and arrays: write/html.c).
 *
 * Owns the report's data element: a JSON object whose bulk, the routine
 * x rank and location x rank tables, is base64 of little-endian float
 * arrays, which keeps a report of 1,000 routines x 1,000 ranks compact
 * and quick to decode.  Which cells contain an estimate, and how much of
 * them, travels the same way: one 16-bit word per cell (the est mask in
 * bits 0-4, Est(%) in tenths above it), and not at all when the run has
 * no estimate.
 *
 * A run of more than KV_HTML_COLUMNS ranks is shown in bins: each column
 * of the per-rank tables is the mean of up to `per` consecutive ranks
 * (their est masks or'ed, the header figures averaged), so that 100,000
 * ranks make a report of a few megabytes that a browser still draws; the
 * page says so ("binned"), names each column by its first and last rank,
 * leaves out the per-thread table, and lists the rank groups as text.
 * The summary figures, the prediction and the groups are those of every
 * rank.  The Messages view's data (htmlmsg.c), the Files view's
 * (htmlfiles.c), the Paths view's (htmlpaths.c) and the Trace view's
 * (trace/tracehtml.c) are bounded their own ways.
 *
 * Must never reference anything outside the page: no URL, font, image or
 * script that a browser would fetch.
 */
#include "kmview/views/report.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/trace/trace.h"
#include "kmview/views/htmlfiles.h"
#include "kmview/views/htmlmsg.h"
#include "kmview/views/htmlpaths.h"
#include "kmview/views/summary.h"
#include "kmview/views/threads.h"
#include "kmview/views/timeline.h"
#include "kmview/write/html.h"
#include "kmview/write/out.h"
#include "support/buf.h"

/* Columns of per-rank tables at most; more ranks are binned. */
#define KV_HTML_COLUMNS 1000

/* ------------------------------------------------------------------------ */
/* The report's data                                                         */

static void json_member_str(FILE *f, const char *key, const char *v)
{
    kv_json_str(f, key);
    fputc(':', f);
    kv_json_str(f, v);
    fputc(',', f);
}

/* The columns of the report: every rank, or bins of `per` ranks. */
struct columns {
    size_t n, per;           /* per 1: every rank */
    const struct kv_stats *st;
};

static void column_range(const struct columns *c, size_t j, size_t *lo,
                         size_t *hi)
{
    *lo = j * c->per;
    *hi = *lo + c->per < c->st->n ? *lo + c->per : c->st->n;
}

/* rows x columns of per-rank values v[row * st->n + p], binned (means). */
static double *bin_values(const struct columns *c, const double *v,
                          size_t rows)
{
    double *out = km_xcalloc(rows * c->n + 1, sizeof *out);
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < c->n; j++) {
            size_t lo, hi;
            column_range(c, j, &lo, &hi);
            double sum = 0;
            for (size_t p = lo; p < hi; p++)
                sum += v[r * c->st->n + p];
            out[r * c->n + j] = sum / (double)(hi - lo);
        }
    return out;
}

static void data_run(FILE *f, const struct kv_stats *st,
                     const struct columns *c)
{
    const struct kv_run *run = st->run;
    struct km_buf sources = { 0 };
    char ranks[128];
    for (size_t i = 0; i < run->nsources; i++)
        km_buf_printf(&sources, "%s%s", i ? ", " : "", run->sources[i]);
    kv_describe_ranks(ranks, sizeof ranks, st);
    json_member_str(f, "source", km_buf_cstr(&sources));
    json_member_str(f, "program", run->program);
    json_member_str(f, "started", run->started);
    json_member_str(f, "writtenAt", run->written_at);
    json_member_str(f, "clock", run->clock);
    fprintf(f, "\"cpuTime\":%d,", kv_cpu_time(run));
    json_member_str(f, "overhead", run->overhead);
    json_member_str(f, "rankText", ranks);
    fprintf(f, "\"format\":%d,\"startupFromStatements\":%d,\"anyEst\":%d,",
            run->format_version, run->startup_from_statements, st->any_est);
    fprintf(f, "\"nranks\":%d,\"ranks\":[", run->nranks);
    for (size_t j = 0; j < c->n; j++) {
        size_t lo, hi;
        column_range(c, j, &lo, &hi);
        if (c->per == 1)
            fprintf(f, "%s%d", j ? "," : "", st->rank[j]);
        else
            fprintf(f, "%s\"%d-%d\"", j ? "," : "", st->rank[lo],
                    st->rank[hi - 1]);
    }
    fputs("],\"binned\":", f);
    if (c->per == 1)
        fputs("null", f);
    else
        fprintf(f, "{\"ranks\":%zu,\"columns\":%zu,\"per\":%zu}", st->n,
                c->n, c->per);
    fputs(",\"extra\":[", f);
    for (size_t i = 0; i < run->nextra; i++) {
        fputs(i ? ",[" : "[", f);
        kv_json_str(f, run->extra[i].key);
        fputc(',', f);
        kv_json_str(f, run->extra[i].value);
        fputc(']', f);
    }
    fputs("],\n", f);
    km_buf_free(&sources);
}

/* Header figures, figure-major: fig[k * n + p], and figEst the same way;
 * each figure as [label, integer, known (the format has it)]. */
static void data_figures(FILE *f, const struct kv_stats *st,
                         const struct columns *c)
{
    size_t n = st->n;
    double *all = km_xcalloc(KV_NFIGS * n + 1, sizeof *all);
    fputs("\"figures\":[", f);
    for (int k = 0; k < KV_NFIGS; k++) {
        fprintf(f, "%s[", k ? "," : "");
        kv_json_str(f, kv_figures[k].label);
        fprintf(f, ",%s,%s]", kv_figures[k].integer ? "true" : "false",
                kv_figure_known(st->run->format_version, k) ? "true" : "false");
        for (size_t p = 0; p < n; p++)
            all[(size_t)k * n + p] = st->sec[p]->fig[k];
    }
    fputs("],\n\"fig\":", f);
    double *v = c->per == 1 ? all : bin_values(c, all, KV_NFIGS);
    kv_html_array(f, v, KV_NFIGS * c->n, 0);
    if (v != all)
        free(v);
    free(all);
    fputs(",\n\"figEst\":[", f);
    for (int k = 0; k < KV_NFIGS; k++)
        for (size_t j = 0; j < c->n; j++) {
            size_t lo, hi;
            bool est = false;
            column_range(c, j, &lo, &hi);
            for (size_t p = lo; p < hi; p++)
                est |= st->sec[p]->fig_est[k];
            fprintf(f, "%s%d", k || j ? "," : "", est);
        }
    fprintf(f, "],\n\"timeEst\":{\"net\":%d,\"netFrac\":", st->net_sum_est);
    kv_json_num(f, st->net_frac);
    fputs("},\n", f);
}

/* The Prediction: per row its rank and its columns in the order of enum
 * kv_pred_col (NaN where the file has none), and the rows' est masks. */
static void data_prediction(FILE *f, const struct kv_stats *st)
{
    const struct kv_prediction *pr = &st->run->pred;
    fputs("\"pred\":", f);
    if (!pr->present) {
        fputs("null,\n", f);
        return;
    }
    size_t w = 1 + KV_NPRCOLS;
    double *v = km_xcalloc(w * pr->nrows + 1, sizeof *v);
    for (size_t i = 0; i < pr->nrows; i++) {
        v[w * i] = pr->rows[i].rank;
        memcpy(v + w * i + 1, pr->rows[i].v, sizeof pr->rows[i].v);
    }
    fprintf(f, "{\"available\":%s,\"est\":%u,\"withoutStartup\":%s,"
            "\"withoutOverhead\":%s,", pr->available ? "true" : "false",
            pr->est, st->run->format_version >= 2 ? "true" : "false",
            pr->without_overhead ? "true" : "false");
    json_member_str(f, "note", pr->note);
    json_member_str(f, "reason", pr->reason);
    fputs("\"fig\":[", f);
    for (int k = 0; k < KV_NPRFIGS; k++) {
        if (k)
            fputc(',', f);
        kv_json_num(f, pr->fig[k]);
    }
    fputs("],\"rowEst\":[", f);
    for (size_t i = 0; i < pr->nrows; i++)
        fprintf(f, "%s%u", i ? "," : "", pr->rows[i].est);
    fputs("],\"rows\":", f);
    kv_html_array(f, v, w * pr->nrows, 0);
    fputs("},\n", f);
    free(v);
}

/* Est(%) in tenths, 1023 when unknown. */
static unsigned pct_tenths(double pct)
{
    return isnan(pct) ? 1023u : (unsigned)lround(pct * 10);
}

/* One word per cell (est mask | Est(%) tenths << 5), or null when no cell
 * holds an estimate. */
static void data_est_cells(FILE *f, const unsigned char *mask, const bool *flag,
                           const double *pct, size_t rows,
                           const struct columns *c)
{
    size_t n = c->st->n, cells = rows * n;
    bool any = false;
    for (size_t i = 0; i < cells && !any; i++)
        any = (mask ? mask[i] : flag[i]) || (pct[i] > 0);
    if (!any) {
        fputs("null", f);
        return;
    }
    uint16_t *w = km_xcalloc(rows * c->n + 1, sizeof *w);
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < c->n; j++) {
            size_t lo, hi;
            column_range(c, j, &lo, &hi);
            unsigned m = 0;
            double sum = 0;
            for (size_t p = lo; p < hi; p++) {
                size_t i = r * n + p;
                m |= mask ? mask[i] : flag[i];
                sum += pct[i];
            }
            w[r * c->n + j] = (uint16_t)(m | pct_tenths(sum / (double)(hi - lo))
                                                 << 5);
        }
    kv_html_u16_array(f, w, rows * c->n);
    free(w);
}

/* A per-rank table, as the columns show it. */
static void data_table(FILE *f, const double *v, size_t rows,
                       const struct columns *c, int lossy_ok)
{
    double *b = c->per == 1 ? NULL : bin_values(c, v, rows);
    kv_html_array(f, b ? b : v, rows * c->n, lossy_ok);
    free(b);
}

static void data_routines(FILE *f, const struct kv_stats *st,
                          const struct columns *c)
{
    const struct kv_run *run = st->run;
    fputs("\"routines\":[", f);
    for (size_t i = 0; i < st->nr; i++) {
        const struct kv_routine *rt = &run->routines[i];
        fputs(i ? ",\n[" : "\n[", f);
        kv_json_str(f, rt->name);
        fputc(',', f);
        kv_json_str(f, rt->file ? rt->file : "");
        fprintf(f, ",%d,%d,%u,", rt->line, st->r_extrap[i], st->r_est[i]);
        kv_json_num(f, st->r_frac[i]);
        fputc(']', f);
    }
    fputs("],\n\"rv\":{", f);
    for (int m = 0; m < KV_NMETRICS; m++) {
        fprintf(f, "%s\"%s\":", m ? ",\n" : "", kv_metric_key[m]);
        /* times need no more than float's 7 digits on a chart; counts
         * stay exact */
        data_table(f, st->rv[m], st->nr, c, m != KV_M_COUNTS);
    }
    fputs("},\n\"re\":", f);
    data_est_cells(f, st->rest, NULL, st->rpct, st->nr, c);
    fputs(",\n", f);
}

static void data_locations(FILE *f, const struct kv_stats *st,
                           const struct columns *c)
{
    const struct kv_run *run = st->run;
    fputs("\"locations\":[", f);
    for (size_t i = 0; i < st->nl; i++) {
        const struct kv_location *l = &run->locations[i];
        fprintf(f, "%s[%d,\"%s\",%d,", i ? ",\n" : "\n", l->routine,
                kv_kind_name(l->kind), l->line);
        kv_json_str(f, l->text);
        fprintf(f, ",%d,%d,", st->l_extrap[i], st->l_est[i]);
        kv_json_num(f, st->l_frac[i]);
        fprintf(f, ",%d]", l->kind == KV_MPI && kv_is_mpi_startup(l->text));
    }
    fputs("],\n\"lv\":{\"elapsed\":", f);
    data_table(f, st->lv[KV_M_ELAPSED], st->nl, c, 1);
    fputs(",\n\"counts\":", f);
    data_table(f, st->lv[KV_M_COUNTS], st->nl, c, 0);
    fputs("},\n\"le\":", f);
    data_est_cells(f, NULL, st->lest, st->lpct, st->nl, c);
    fputs(",\n", f);
}

/* The Threads blocks, or null: per rank column p and thread t (below the
 * most threads any rank ran) the KV_NTFIGS figures, the routine entries
 * and the OpenMP number, NaN where the rank ran fewer threads; and the
 * regions threads other than 0 ran, over ranks, the longest first. */
#define HTML_TREGIONS 200

static void data_threads(FILE *f, const struct kv_stats *st,
                         const struct columns *c)
{
    const struct kv_run *run = st->run;
    fputs("\"threads\":", f);
    if (!kv_any_threads(run) || c->per > 1) {
        fputs("null,\n", f);
        return;
    }
    size_t maxt = 0, w = KV_NTFIGS + 2;
    for (size_t p = 0; p < st->n; p++)
        if (st->sec[p]->nthreads > maxt)
            maxt = st->sec[p]->nthreads;
    double *v = km_xcalloc(st->n * maxt * w + 1, sizeof *v);
    for (size_t i = 0; i < st->n * maxt * w; i++)
        v[i] = NAN;
    for (size_t p = 0; p < st->n; p++)
        for (size_t k = 0; k < st->sec[p]->nthreads; k++) {
            const struct kv_thread *t = &st->sec[p]->threads[k];
            double *o = v + (p * maxt + k) * w;
            memcpy(o, t->v, sizeof t->v);
            o[KV_NTFIGS] = (double)t->count;
            o[KV_NTFIGS + 1] = t->omp;
        }
    fprintf(f, "{\"max\":%zu,\"w\":%zu,\"keys\":[", maxt, w);
    for (int m = 0; m < KV_NTFIGS; m++)
        fprintf(f, "\"%s\",", kv_thread_key[m]);
    fputs("\"counts\",\"omp\"],\"v\":", f);
    kv_html_array(f, v, st->n * maxt * w, 0);
    free(v);
    size_t n;
    struct kv_tregion_sum *all = kv_tregions_over_ranks(run, &n);
    fprintf(f, ",\"nregions\":%zu,\"regions\":[", n);
    for (size_t k = 0; k < n && k < HTML_TREGIONS; k++) {
        const struct kv_tregion_sum *s = &all[k];
        fprintf(f, "%s[%d,%d,%d,%llu,%d,%d,", k ? "," : "", s->routine,
                s->location, s->threads, (unsigned long long)s->count,
                s->extrap, s->est);
        kv_json_num(f, s->min);
        fputc(',', f);
        kv_json_num(f, s->mean);
        fputc(',', f);
        kv_json_num(f, s->max);
        fputc(',', f);
        kv_json_num(f, s->imbal / 100);
        fprintf(f, ",%d,%d]", s->max_rank, s->ranks);
    }
    fputs("]},\n", f);
    free(all);
}

static void data_warnings(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    bool first = true;
    fputs("\"warnings\":[", f);
    for (size_t i = 0; i < run->nsections; i++)
        for (size_t w = 0; w < run->ranks[i].nwarn; w++) {
            fprintf(f, "%s[%d,", first ? "" : ",", run->ranks[i].rank);
            kv_json_str(f, run->ranks[i].warnings[w]);
            fputc(']', f);
            first = false;
        }
    fputs("],\n", f);
}

/* Binned: the groups as text rows [group, size, outlier, ranks]. */
static void data_group_rows(FILE *f, const struct kv_stats *st,
                            const struct kv_rank_groups *g)
{
    char *ranks = km_xcalloc(1, 2048);
    fputs("{\"rows\":[", f);
    for (size_t k = 0; k < g->ngroups; k++) {
        kv_group_ranks(ranks, 2048, g, st, k);
        fprintf(f, "%s[%zu,%zu,%d,", k ? "," : "", k, g->group_size[k],
                g->outlier_group[k]);
        kv_json_str(f, ranks);
        fputc(']', f);
    }
    fputs("],\"cut\":", f);
    kv_json_num(f, g->cut);
    fputs(",\"note\":", f);
    kv_json_str(f, g->method_note);
    fputc('}', f);
    free(ranks);
}

static void data_groups(FILE *f, const struct kv_stats *st,
                        const struct kv_rank_groups *g,
                        const struct columns *c)
{
    fputs("\"groups\":", f);
    if (!g || g->n != st->n || g->n == 0) {
        fputs("null", f);
        return;
    }
    if (c->per > 1) {
        fputs("null,\"groupRows\":", f);
        data_group_rows(f, st, g);
        return;
    }
    fputs("{\"order\":[", f);
    for (size_t i = 0; i < g->n; i++)
        fprintf(f, "%s%d", i ? "," : "", g->order[i]);
    fputs("],\"group\":[", f);
    for (size_t i = 0; i < g->n; i++)
        fprintf(f, "%s%d", i ? "," : "", g->group[i]);
    fputs("],\"outlier\":[", f);
    for (size_t k = 0; k < g->ngroups; k++)
        fprintf(f, "%s%d", k ? "," : "", g->outlier_group[k]);
    fputs("],\"cut\":", f);
    kv_json_num(f, g->cut);
    fputc('}', f);
}

/* The ranks x slots grid (binned as the other per-rank tables: each row
 * the mean of its ranks), the phases and the ranks that depart over
 * time: "timeline":{slots, width, originMpi, est, v (rows x slots x 4
 * floats: computation, MPI, I/O, other), phases [[first, last, kind]],
 * departs [[rank, slot, worst slot]]}. */
static void data_timeline(FILE *f, const struct kv_stats *st,
                          const struct kv_rank_groups *groups,
                          const struct columns *c)
{
    struct kv_cluster_opts how = { false, KV_EXACT_MAX };
    struct kv_tl_analysis a;
    fputs(",\"timeline\":", f);
    if (kv_tl_analyse(&a, st, groups ? groups->cut : 0.05, 0, &how)) {
        fputs("null", f);
        return;
    }
    const struct kv_tl_grid *g = &a.grid;
    size_t cells = (size_t)g->slots * KV_TL_NCAT;
    double *v = km_xcalloc(c->n * cells + 1, sizeof *v);
    for (size_t j = 0; j < c->n; j++) {
        size_t lo, hi;
        column_range(c, j, &lo, &hi);
        for (size_t p = lo; p < hi; p++)
            for (size_t k = 0; k < cells; k++)
                v[j * cells + k] += g->v[p * cells + k] / (double)(hi - lo);
    }
    fprintf(f, "{\"slots\":%d,\"width\":", g->slots);
    kv_json_num(f, g->width);
    fprintf(f, ",\"originMpi\":%s,\"est\":%u,\"v\":",
            g->origin_mpi ? "true" : "false", g->est);
    kv_html_array(f, v, c->n * cells, 1);
    fputs(",\"phases\":[", f);
    for (int k = 0; k < a.nphases; k++)
        fprintf(f, "%s[%d,%d,%d]", k ? "," : "", a.phase_first[k],
                a.phase_last[k], a.phase_kind[k]);
    fputs("],\"departs\":[", f);
    int n = 0;
    for (size_t p = 0; p < a.groups.n; p++)
        if (a.departs[p] >= 0)
            fprintf(f, "%s[%d,%d,%d]", n++ ? "," : "", st->rank[p],
                    a.departs[p], a.worst[p]);
    fputs("]}", f);
    free(v);
    kv_tl_analysis_free(&a);
}

int kv_html_report(FILE *f, const struct kv_stats *st,
                   const struct kv_rank_groups *groups,
                   struct kv_trace_set *traces, double plain)
{
    struct km_buf title = { 0 };
    km_buf_printf(&title, "kmview: %s", st->run->program ? st->run->program
                                                         : st->run->sources[0]);
    kv_html_begin(f, km_buf_cstr(&title));
    km_buf_free(&title);
    fputs("<script type=\"application/json\" id=\"kmdata\">{\"kind\":\"report\",",
          f);
    struct columns c = { st->n, 1, st };
    if (st->n > KV_HTML_COLUMNS) {
        c.per = (st->n + KV_HTML_COLUMNS - 1) / KV_HTML_COLUMNS;
        c.n = (st->n + c.per - 1) / c.per;
    }
    data_run(f, st, &c);
    if (plain > 0)
        fprintf(f, "\"plain\":%.17g,", plain);
    data_figures(f, st, &c);
    data_prediction(f, st);
    data_routines(f, st, &c);
    data_locations(f, st, &c);
    data_warnings(f, st);
    data_threads(f, st, &c);
    kv_html_messages(f, st);
    kv_html_files(f, st);
    data_groups(f, st, groups, &c);
    data_timeline(f, st, groups, &c);
    kv_html_paths(f, st, c.per == 1);
    int rc = traces ? kv_trace_html(f, traces) : 0;
    fputs("}</script>\n", f);
    kv_html_end(f, "report");
    return rc;
}
