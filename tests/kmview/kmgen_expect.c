/*
 * kmgen_expect.c — kmgen's expectations: from the run alone, every figure
 * kmview's CSV and JSON exports must hold, as "key<TAB>value" lines (one
 * for the CSV export and one for the JSON export of every figure).
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmgen.h"

/* ------------------------------------------------------------------------ */
/* Expectations                                                              */

struct stat5 {
    double min, mean, max, sum, mom;
    int min_rank, max_rank;
};

static struct stat5 stat_of(const double *v, const int *rank, int n)
{
    struct stat5 s = { .min_rank = -1, .max_rank = -1 };
    for (int i = 0; i < n; i++) {
        if (i == 0 || v[i] < s.min)
            s.min = v[i], s.min_rank = rank[i];
        if (i == 0 || v[i] > s.max)
            s.max = v[i], s.max_rank = rank[i];
        s.sum += v[i];
    }
    s.mean = n ? s.sum / n : 0;
    s.mom = s.mean > 0 ? s.max / s.mean : NAN;
    return s;
}

static void expect_num(FILE *e, const char *csv, const char *json, double v)
{
    char b[40];
    if (csv)
        fprintf(e, "%s\t%s\n", csv, num(b, v));
    if (json)
        fprintf(e, "%s\t%s\n", json, isnan(v) ? "null" : num(b, v));
}

static void expect_str(FILE *e, const char *csv, const char *json,
                       const char *v)
{
    if (csv)
        fprintf(e, "%s\t%s\n", csv, v);
    if (json)
        fprintf(e, "%s\t%s\n", json, v);
}

/* A boolean: 0/1 in CSV, false/true in JSON. */
static void expect_bool(FILE *e, const char *csv, const char *json, bool v)
{
    if (csv)
        fprintf(e, "%s\t%d\n", csv, v);
    if (json)
        fprintf(e, "%s\t%s\n", json, v ? "true" : "false");
}

/* The seven columns of a statistic: CSV "file:key:prefix_min", JSON
 * "path.min". */
static void expect_stat(FILE *e, const char *csv, const char *json,
                        const char *prefix, const struct stat5 *s)
{
    static const char *const col[] = { "min", "mean", "max", "sum",
                                       "max_over_mean" };
    double v[] = { s->min, s->mean, s->max, s->sum, s->mom };
    char c[256], j[256];
    for (int i = 0; i < 5; i++) {
        snprintf(c, sizeof c, "%s:%s%s%s", csv, prefix, *prefix ? "_" : "",
                 col[i]);
        snprintf(j, sizeof j, "%s.%s", json, col[i]);
        expect_num(e, c, j, v[i]);
    }
    snprintf(c, sizeof c, "%s:%s%smin_rank", csv, prefix, *prefix ? "_" : "");
    snprintf(j, sizeof j, "%s.min_rank", json);
    expect_num(e, c, j, s->min_rank);
    snprintf(c, sizeof c, "%s:%s%smax_rank", csv, prefix, *prefix ? "_" : "");
    snprintf(j, sizeof j, "%s.max_rank", json);
    expect_num(e, c, j, s->max_rank);
}

static const char *const fig_keys[NFIGS] = {
    "total_time", "counts_of_routines", "counts_of_time_get_function",
    "time_get_function_cost_1_call", "libkm_overhead",
    "output_counts_by_km_writ", "mpi_time", "mpi_startup_time", "io_time",
    "time_outside_routines", "time_in_uninstrumented_routines",
    "estimated_time", "routines",
};
static const bool fig_integer[NFIGS] = { [1] = true, [2] = true, [5] = true,
                                         [12] = true };
/* The header figures of rank p as kmview shows them (version 1's brought
 * into version 2's shape), and their marks. */
static void rank_figures(const struct gen *g, int p, double *v, bool *est)
{
    struct rank_sums s = sums(g, p);
    bool v2 = g->version >= 2;
    double mpi_file = printed(s.mpi_file);
    v[0] = s.total;
    v[1] = (double)s.counts;
    v[2] = (double)g->reads[p];
    v[3] = g->read_cost[p];
    v[4] = s.overhead;
    v[5] = 1 + p % 2;
    v[6] = v2 ? printed(s.mpi) : less(mpi_file, g->startup[p]);
    v[7] = g->startup[p];
    v[8] = printed(s.io);
    v[9] = g->outside[p];
    v[10] = v2 ? g->unmeasured[p]
               : less(printed(g->unmeasured[p] + s.mpi_file), mpi_file);
    v[11] = v2 ? s.est_time : NAN;
    v[12] = s.routines;
    memset(est, 0, NFIGS * sizeof *est);
    est[F_OVERHEAD] = v2 && s.plus;
    est[F_MPI] = mpi_est(&s);
    est[F_IO] = io_est(&s);
    est[F_UNINST] = uninst_est(g, &s, p);
    est[F_EST] = v2 && s.est_time > 0;
}

struct live live_ranks(const struct gen *g)
{
    struct live l = { 0, xcalloc((size_t)g->n, sizeof(int)) };
    for (int p = 0; p < g->n; p++)
        if (p != g->lost)
            l.rank[l.n++] = p;
    return l;
}

static void expect_rank_figures(FILE *e, const struct gen *g, int p)
{
    double v[NFIGS];
    bool est[NFIGS];
    char c[128], j[128];
    rank_figures(g, p, v, est);
    for (int k = 0; k < NFIGS; k++) {
        snprintf(c, sizeof c, "rank_figures.csv:%d:%s", p, fig_keys[k]);
        snprintf(j, sizeof j, "ranks[%d].figures.%s", p, fig_keys[k]);
        expect_num(e, c, j, v[k]);
        if (fig_integer[k])
            continue;
        snprintf(c, sizeof c, "rank_figures.csv:%d:%s_estimated", p, fig_keys[k]);
        snprintf(j, sizeof j, "ranks[%d].figures.%s_estimated", p, fig_keys[k]);
        expect_bool(e, c, j, est[k]);
    }
    struct rank_sums s = sums(g, p);
    snprintf(c, sizeof c, "rank_figures.csv:%d:routines_net_estimated_fraction", p);
    snprintf(j, sizeof j, "ranks[%d].figures.routines_net_estimated_fraction", p);
    expect_num(e, c, j, g->version >= 2 ? s.net_pct / 100 : NAN);
}

/* mean_fig: every figure's mean; fig_est: marked on some live rank. */
void expect_figures(FILE *e, const struct gen *g, const struct live *lv,
                    double *mean_fig, bool *fig_est)
{
    double *col = xcalloc((size_t)g->n, sizeof(double));
    double v[NFIGS];
    bool est[NFIGS];
    char c[128], j[128];
    memset(fig_est, 0, NFIGS * sizeof *fig_est);
    for (int k = 0; k < NFIGS; k++) {
        for (int i = 0; i < lv->n; i++) {
            rank_figures(g, lv->rank[i], v, est);
            col[i] = v[k];
            fig_est[k] |= est[k];
        }
        struct stat5 s = stat_of(col, lv->rank, lv->n);
        if (k == F_EST && g->version < 2)        /* version 1 has none */
            s = (struct stat5){ NAN, NAN, NAN, NAN, NAN, -1, -1 };
        mean_fig[k] = s.mean;
        snprintf(c, sizeof c, "figures.csv:%s", fig_keys[k]);
        snprintf(j, sizeof j, "figures.%s", fig_keys[k]);
        expect_stat(e, c, j, "", &s);
        snprintf(c, sizeof c, "figures.csv:%s:estimated", fig_keys[k]);
        snprintf(j, sizeof j, "figures.%s.estimated", fig_keys[k]);
        expect_bool(e, c, j, fig_est[k]);
    }
    for (int i = 0; i < lv->n; i++)
        expect_rank_figures(e, g, lv->rank[i]);
    free(col);
}

/* key, key_estimated and share_key (when given) in run.csv and JSON time */
static void expect_time(FILE *e, const char *key, double v, bool est,
                        const char *share_key, double total)
{
    char c[128], j[128];
    snprintf(c, sizeof c, "run.csv:%s:value", key);
    snprintf(j, sizeof j, "time.%s", key);
    expect_num(e, c, j, v);
    snprintf(c, sizeof c, "run.csv:%s_estimated:value", key);
    snprintf(j, sizeof j, "time.%s_estimated", key);
    expect_bool(e, c, j, est);
    if (!share_key)
        return;
    snprintf(c, sizeof c, "run.csv:%s:value", share_key);
    snprintf(j, sizeof j, "time.%s", share_key);
    expect_num(e, c, j, v / total);
}

static void expect_prediction_figures(FILE *e, const struct gen *g,
                                      const double pred[3], bool pred_est)
{
    static const char *const key[] = { "t_1pe", "speedup", "efficiency" };
    char c[128], j[128];
    for (int k = 0; k < 3; k++) {
        snprintf(c, sizeof c, "run.csv:%s:value", key[k]);
        snprintf(j, sizeof j, "prediction.%s", key[k]);
        expect_num(e, c, j, pred[k]);
        snprintf(c, sizeof c, "run.csv:%s_estimated:value", key[k]);
        snprintf(j, sizeof j, "prediction.%s_estimated", key[k]);
        expect_bool(e, c, j, pred_est && !g->no_prediction);
    }
    expect_bool(e, "run.csv:prediction_available:value", "prediction.available",
                !g->no_prediction);
    expect_bool(e, "run.csv:prediction_without_startup:value",
                "prediction.without_startup", g->version >= 2);
    expect_bool(e, "run.csv:prediction_without_overhead:value",
                "prediction.without_overhead", pred_has(g, PR_O));
    if (g->no_prediction)
        expect_str(e, "run.csv:prediction_reason:value", "prediction.reason",
                   no_prediction_note + strlen("No prediction: "));
}

void expect_run(FILE *e, const struct gen *g, const double *mf,
                const bool *fe, double net_sum, bool net_est,
                double net_frac, const double pred[3], bool pred_est)
{
    double t = mf[F_TOTAL], mpi = mf[F_MPI], su = mf[F_STARTUP], io = mf[F_IO];
    expect_time(e, "total_time", t, false, NULL, t);
    expect_time(e, "mpi_time", mpi, fe[F_MPI], "mpi_share", t);
    expect_time(e, "mpi_startup_time", su, false, "mpi_startup_share", t);
    expect_time(e, "io_time", io, fe[F_IO], "io_share", t);
    expect_time(e, "computation_time", t - mpi - su - io, fe[F_MPI] || fe[F_IO],
                "computation_share", t);
    expect_time(e, "routines_net_time", net_sum, net_est, "routines_net_share", t);
    expect_time(e, "libkm_overhead", mf[F_OVERHEAD], fe[F_OVERHEAD],
                "libkm_overhead_share", t);
    expect_num(e, "run.csv:estimated_time:value", "time.estimated_time", mf[F_EST]);
    expect_num(e, "run.csv:estimated_share:value", "time.estimated_share",
               mf[F_EST] / t);
    expect_num(e, "run.csv:routines_net_estimated_fraction:value",
               "time.routines_net_estimated_fraction", net_frac);
    expect_bool(e, "run.csv:mpi_startup_from_statements:value",
                "time.mpi_startup_from_statements", g->version < 2);
    expect_num(e, "run.csv:format_version:value", "format_version", g->version);
    expect_num(e, NULL, "schema_version", 2);
    expect_num(e, "run.csv:ranks_in_run:value", "ranks_in_run", g->n);
    expect_num(e, "run.csv:ranks_lost:value", "ranks_lost", g->lost >= 0);
    expect_str(e, "run.csv:program:value", "program", "./gen, \"quoted\"");
    if (g->version >= 2)
        expect_str(e, "run.csv:overhead:value", "overhead", overhead_line);
    expect_prediction_figures(e, g, pred, pred_est);
    if (g->extras)
        expect_str(e, "run.csv:header\\:Compiler:value", "header_lines.Compiler",
                   "gfortran -O2");
}

static void expect_routine_estimates(FILE *e, const struct gen *g,
                                     const struct live *lv, int id, int r,
                                     bool *net_est)
{
    static const char *const key[] = { "elapsed", "net", "mpi", "io" };
    static const unsigned bit[] = { E_EL, E_NET, E_MPI, E_IO };
    char c[128], j[128];
    unsigned est = 0;
    double part = 0, sum = 0;
    for (int i = 0; i < lv->n; i++) {
        size_t at = (size_t)lv->rank[i] * g->nr + r;
        if (!g->present[at])
            continue;
        est |= g->est[at];
        part += g->el[at] * g->pct[at] / 100;
        sum += g->el[at];
    }
    for (int k = 0; k < 4; k++) {
        snprintf(c, sizeof c, "routines.csv:%d:%s_estimated", id, key[k]);
        snprintf(j, sizeof j, "routines[%d].%s.estimated", id - 1, key[k]);
        expect_bool(e, c, j, est & bit[k]);
    }
    snprintf(c, sizeof c, "routines.csv:%d:estimated_fraction", id);
    snprintf(j, sizeof j, "routines[%d].estimated_fraction", id - 1);
    expect_num(e, c, j, g->version < 2 ? NAN : sum > 0 ? part / sum : 0);
    *net_est |= (est & E_NET) != 0;
}

void expect_routines(FILE *e, const struct gen *g, const struct live *lv,
                     double total, double *net_sum, bool *net_est)
{
    double *col = xcalloc((size_t)g->n, sizeof(double));
    const double *metric[] = { g->el, g->net, NULL, g->mpi, g->io };
    static const char *const mkey[] = { "elapsed", "net", "counts", "mpi", "io" };
    char c[128], j[128], name[16];
    *net_sum = 0;
    *net_est = false;
    for (int id = 1; id <= g->nids; id++) {
        int r = g->routine_of_id[id];
        bool plus = false;
        for (int i = 0; i < lv->n; i++)
            plus |= g->present[(size_t)lv->rank[i] * g->nr + r] &&
                    g->plus[(size_t)lv->rank[i] * g->nr + r];
        snprintf(c, sizeof c, "routines.csv:%d:extrapolated", id);
        snprintf(j, sizeof j, "routines[%d].extrapolated", id - 1);
        expect_bool(e, c, j, plus);
        routine_name(name, sizeof name, r);
        snprintf(c, sizeof c, "routines.csv:%d:name", id);
        snprintf(j, sizeof j, "routines[%d].name", id - 1);
        expect_str(e, c, j, name);
        expect_routine_estimates(e, g, lv, id, r, net_est);
        for (int m = 0; m < 5; m++) {
            for (int i = 0; i < lv->n; i++) {
                size_t at = (size_t)lv->rank[i] * g->nr + r;
                col[i] = !g->present[at] ? 0 : metric[m] ? metric[m][at]
                                                          : (double)g->cnt[at];
            }
            struct stat5 s = stat_of(col, lv->rank, lv->n);
            if (m == 1) {
                *net_sum += s.mean;
                snprintf(c, sizeof c, "routines.csv:%d:net_share", id);
                snprintf(j, sizeof j, "routines[%d].net_share", id - 1);
                expect_num(e, c, j, s.mean / total);
            }
            snprintf(c, sizeof c, "routines.csv:%d", id);
            snprintf(j, sizeof j, "routines[%d].%s", id - 1, mkey[m]);
            expect_stat(e, c, j, mkey[m], &s);
        }
        if (g->nl) {
            snprintf(c, sizeof c, "routines.csv:%d:line", id);
            snprintf(j, sizeof j, "routines[%d].line", id - 1);
            expect_num(e, c, j, 10 * (r + 1) - 5);
            char file[64];
            snprintf(file, sizeof file, "src/%s, v2.f", name);
            snprintf(c, sizeof c, "routines.csv:%d:file", id);
            snprintf(j, sizeof j, "routines[%d].file", id - 1);
            expect_str(e, c, j, file);
        }
    }
    free(col);
}

static void expect_location_estimates(FILE *e, const struct gen *g,
                                      const struct live *lv, int id, int r,
                                      int k)
{
    char c[128], j[128];
    bool est = false;
    double part = 0, sum = 0;
    for (int i = 0; i < lv->n; i++) {
        size_t at = ((size_t)r * g->nl + k) * g->n + lv->rank[i];
        est |= g->lest[at];
        part += g->lel[at] * g->lpct[at] / 100;
        sum += g->lel[at];
    }
    snprintf(c, sizeof c, "locations.csv:%d:elapsed_estimated", id);
    snprintf(j, sizeof j, "locations[%d].elapsed.estimated", id - 1);
    expect_bool(e, c, j, est);
    snprintf(c, sizeof c, "locations.csv:%d:estimated_fraction", id);
    snprintf(j, sizeof j, "locations[%d].estimated_fraction", id - 1);
    expect_num(e, c, j, g->version < 2 ? NAN : sum > 0 ? part / sum : 0);
    snprintf(c, sizeof c, "locations.csv:%d:mpi_startup", id);
    snprintf(j, sizeof j, "locations[%d].mpi_startup", id - 1);
    expect_bool(e, c, j, is_init(g, r, k));
}

void expect_locations(FILE *e, const struct gen *g, const struct live *lv)
{
    double *col = xcalloc((size_t)g->n, sizeof(double));
    char c[128], j[128], text[64];
    int id = 0;
    for (int rid = 1; rid <= g->nids; rid++) {
        int r = g->routine_of_id[rid];
        for (int k = 0; k < g->nl; k++) {
            id++;
            loc_text(text, sizeof text, r, k);
            snprintf(c, sizeof c, "locations.csv:%d:statement", id);
            snprintf(j, sizeof j, "locations[%d].statement", id - 1);
            expect_str(e, c, j, text);
            snprintf(c, sizeof c, "locations.csv:%d:kind", id);
            snprintf(j, sizeof j, "locations[%d].kind", id - 1);
            expect_str(e, c, j, kinds[loc_kind(k)]);
            snprintf(c, sizeof c, "locations.csv:%d:occurrence", id);
            snprintf(j, sizeof j, "locations[%d].occurrence", id - 1);
            expect_num(e, c, j, k == 5);          /* DO on k = 0's line */
            snprintf(c, sizeof c, "locations.csv:%d:routine_id", id);
            snprintf(j, sizeof j, "locations[%d].routine_id", id - 1);
            expect_num(e, c, j, rid);
            snprintf(c, sizeof c, "locations.csv:%d:line", id);
            snprintf(j, sizeof j, "locations[%d].line", id - 1);
            expect_num(e, c, j, loc_line(r, k));
            expect_location_estimates(e, g, lv, id, r, k);
            for (int m = 0; m < 2; m++) {
                for (int i = 0; i < lv->n; i++) {
                    size_t at = ((size_t)r * g->nl + k) * g->n + lv->rank[i];
                    col[i] = m ? (double)g->lcnt[at] : g->lel[at];
                }
                struct stat5 s = stat_of(col, lv->rank, lv->n);
                snprintf(c, sizeof c, "locations.csv:%d", id);
                snprintf(j, sizeof j, "locations[%d].%s", id - 1,
                         m ? "counts" : "elapsed");
                expect_stat(e, c, j, m ? "counts" : "elapsed", &s);
            }
        }
    }
    free(col);
}

/* The columns routine and location rows of a rank share. */
static void expect_cell_tail(FILE *e, const char *file, int p, int id,
                             double pct, uint64_t count, bool plus)
{
    char c[128];
    snprintf(c, sizeof c, "%s:%d/%d:estimated_fraction", file, p, id);
    expect_num(e, c, NULL, pct / 100);
    snprintf(c, sizeof c, "%s:%d/%d:counts", file, p, id);
    expect_num(e, c, NULL, (double)count);
    snprintf(c, sizeof c, "%s:%d/%d:extrapolated", file, p, id);
    expect_bool(e, c, NULL, plus);
}

static void expect_routine_cell(FILE *e, const struct gen *g, int p, int r)
{
    size_t at = (size_t)p * g->nr + r;
    int id = g->id_of[r];
    char c[128];
    const char *col[] = { "elapsed", "net", "mpi", "io" };
    static const unsigned bit[] = { E_EL, E_NET, E_MPI, E_IO };
    double v[] = { g->el[at], g->net[at], g->mpi[at], g->io[at] };
    for (int k = 0; k < 4; k++) {
        snprintf(c, sizeof c, "rank_routines.csv:%d/%d:%s", p, id, col[k]);
        expect_num(e, c, NULL, v[k]);
        snprintf(c, sizeof c, "rank_routines.csv:%d/%d:%s_estimated", p, id,
                 col[k]);
        expect_bool(e, c, NULL, g->est[at] & bit[k]);
    }
    expect_cell_tail(e, "rank_routines.csv", p, id,
                     g->version < 2 ? NAN : g->pct[at], g->cnt[at], g->plus[at]);
}

/* rank_locations.csv is keyed by rank and location id. */
static void expect_location_cell(FILE *e, const struct gen *g, int p, int r,
                                 int k)
{
    size_t at = ((size_t)r * g->nl + k) * g->n + p;
    int id = (g->id_of[r] - 1) * g->nl + k + 1;
    char c[128];
    snprintf(c, sizeof c, "rank_locations.csv:%d/%d:elapsed", p, id);
    expect_num(e, c, NULL, g->lel[at]);
    snprintf(c, sizeof c, "rank_locations.csv:%d/%d:elapsed_estimated", p, id);
    expect_bool(e, c, NULL, g->lest[at]);
    expect_cell_tail(e, "rank_locations.csv", p, id,
                     g->version < 2 ? NAN : g->lpct[at], g->lcnt[at],
                     g->lplus[at]);
}

void expect_cells(FILE *e, const struct gen *g)
{
    for (int p = 0; p < g->n; p++) {
        if (p == g->lost)
            continue;
        for (int r = 0; r < g->nr; r++) {
            if (!g->present[(size_t)p * g->nr + r])
                continue;
            expect_routine_cell(e, g, p, r);
            for (int k = 0; k < g->nl; k++)
                expect_location_cell(e, g, p, r, k);
        }
    }
}

void expect_prediction(FILE *e, const struct gen *g)
{
    static const char *const col[NPR] = { "total", "startup", "mpi",
                                          "redundant", "overhead", "parallel",
                                          "waited" };
    char c[128], j[128];
    double v[NPR];
    bool est[NPR];
    for (int p = 0; p < g->n; p++) {
        prediction_row(g, p, v, est);
        for (int k = 0; k < NPR; k++) {
            snprintf(c, sizeof c, "prediction.csv:%d:%s", p, col[k]);
            snprintf(j, sizeof j, "prediction.ranks[%d].%s", p, col[k]);
            expect_num(e, c, j, v[k]);
            snprintf(c, sizeof c, "prediction.csv:%d:%s_estimated", p, col[k]);
            snprintf(j, sizeof j, "prediction.ranks[%d].%s_estimated", p, col[k]);
            expect_bool(e, c, j, est[k]);
        }
    }
}

/* The estimated fraction of the routines' net time over live ranks, from
 * the Total rows (version 2). */
double net_fraction(const struct gen *g, const struct live *lv)
{
    double part = 0, sum = 0;
    if (g->version < 2)
        return NAN;
    for (int i = 0; i < lv->n; i++) {
        struct rank_sums s = sums(g, lv->rank[i]);
        double net = printed(s.net);
        part += net * s.net_pct / 100;
        sum += net;
    }
    return sum > 0 ? part / sum : 0;
}

static void expect_tregion(FILE *e, const struct gen *g, int p, int no,
                           int loc, int index)
{
    int r = table_routine(g, p, no);
    int id = loc ? (g->id_of[r] - 1) * g->nl + 1 : g->id_of[r];
    struct treg t = thread_region(g, p, no, loc);
    const char *file = loc ? "rank_thread_locations.csv"
                           : "rank_thread_routines.csv";
    const char *arr = loc ? "thread_locations" : "thread_routines";
    const char *key[] = { "threads", "min", "mean", "max", "imbalance",
                          "counts" };
    double v[] = { t.threads, t.min, t.mean, t.max, t.imbal / 100,
                   (double)t.count };
    char c[160], j[160];
    for (int k = 0; k < 6; k++) {
        snprintf(c, sizeof c, "%s:%d/%d:%s", file, p, id, key[k]);
        snprintf(j, sizeof j, "ranks[%d].%s[%d].%s", p, arr, index, key[k]);
        expect_num(e, c, j, v[k]);
    }
    snprintf(j, sizeof j, "ranks[%d].%s[%d].id", p, arr, index);
    expect_num(e, NULL, j, id);
    snprintf(c, sizeof c, "%s:%d/%d:times_estimated", file, p, id);
    snprintf(j, sizeof j, "ranks[%d].%s[%d].times_estimated", p, arr, index);
    expect_bool(e, c, j, t.est);
}

void expect_threads(FILE *e, const struct gen *g)
{
    if (g->threads < 2)
        return;
    char c[160], j[160];
    for (int p = 0; p < g->n; p++) {
        if (p == g->lost)
            continue;
        for (int k = 0; k < g->threads; k++) {
            struct trow t = thread_row(g, p, k);
            for (int m = 0; m < NTF; m++) {
                snprintf(c, sizeof c, "rank_threads.csv:%d/%d:%s", p, k,
                         tf_key[m]);
                snprintf(j, sizeof j, "ranks[%d].threads[%d].%s", p, k,
                         tf_key[m]);
                expect_num(e, c, j, t.v[m]);
                snprintf(c, sizeof c, "rank_threads.csv:%d/%d:%s_estimated",
                         p, k, tf_key[m]);
                snprintf(j, sizeof j, "ranks[%d].threads[%d].%s_estimated", p,
                         k, tf_key[m]);
                expect_bool(e, c, j, t.est[m]);
            }
            snprintf(c, sizeof c, "rank_threads.csv:%d/%d:omp", p, k);
            snprintf(j, sizeof j, "ranks[%d].threads[%d].omp", p, k);
            expect_num(e, c, j, t.omp);
            snprintf(c, sizeof c, "rank_threads.csv:%d/%d:counts", p, k);
            snprintf(j, sizeof j, "ranks[%d].threads[%d].counts", p, k);
            expect_num(e, c, j, (double)t.count);
            snprintf(c, sizeof c, "rank_threads.csv:%d/%d:extrapolated", p, k);
            snprintf(j, sizeof j, "ranks[%d].threads[%d].extrapolated", p, k);
            expect_bool(e, c, j, t.plus);
            snprintf(c, sizeof c, "rank_threads.csv:%d/%d:estimated_fraction",
                     p, k);
            snprintf(j, sizeof j, "ranks[%d].threads[%d].estimated_fraction",
                     p, k);
            expect_num(e, c, j, t.pct / 100);
        }
        for (int no = 1; no <= thread_rows_of(g, p); no++) {
            expect_tregion(e, g, p, no, 0, no - 1);
            if (g->nl)
                expect_tregion(e, g, p, no, 1, no - 1);
        }
    }
}

/* rank_messages.csv (keyed by rank and location id) and rank_peers.csv
 * (by rank and peer), and the same in the JSON's ranks. */
static void expect_sites(FILE *e, const struct gen *g, int p)
{
    static const char *const key[] = { "messages", "sent", "received" };
    struct site_row s[3];
    int n = sites_of(g, p, s);
    char c[160], j[160];
    for (int k = 0; k < n; k++) {
        int id = (g->id_of[s[k].r] - 1) * g->nl + 3;
        uint64_t v[] = { s[k].messages, s[k].sent, s[k].received };
        for (int m = 0; m < 3; m++) {
            snprintf(c, sizeof c, "rank_messages.csv:%d/%d:%s", p, id, key[m]);
            snprintf(j, sizeof j, "ranks[%d].messages[%d].%s", p, k, key[m]);
            fprintf(e, "%s\t%llu\n%s\t%llu\n", c, (unsigned long long)v[m], j,
                    (unsigned long long)v[m]);
        }
        fprintf(e, "ranks[%d].messages[%d].id\t%d\n", p, k, id);
        fprintf(e, "rank_messages.csv:%d/%d:sizes\t", p, id);
        bool first = true;
        for (int b = 0; b < 48; b++)
            if (s[k].bins[b]) {
                fprintf(e, "%s%d:%llu", first ? "" : " ", b,
                        (unsigned long long)s[k].bins[b]);
                first = false;
            }
        fputc('\n', e);
        for (int b = 0; b < 48; b++)
            if (s[k].bins[b])
                fprintf(e, "ranks[%d].messages[%d].sizes.%d\t%llu\n", p, k, b,
                        (unsigned long long)s[k].bins[b]);
    }
}

static void expect_peers(FILE *e, const struct gen *g, int p,
                         struct peer_row *peers)
{
    static const char *const key[NPC] = {
        "messages_sent", "bytes_sent", "messages_received", "bytes_received",
        "alltoall_messages", "alltoall_bytes" };
    int n = peers_of(g, p, peers);
    for (int k = 0; k < n; k++) {
        fprintf(e, "ranks[%d].peers[%d].peer\t%d\n", p, k, peers[k].peer);
        for (int c = 0; c < NPC; c++)
            fprintf(e, "rank_peers.csv:%d/%d:%s\t%llu\nranks[%d].peers[%d].%s"
                    "\t%llu\n", p, peers[k].peer, key[c],
                    (unsigned long long)peers[k].v[c], p, k, key[c],
                    (unsigned long long)peers[k].v[c]);
    }
}

void expect_messages(FILE *e, const struct gen *g)
{
    if (!g->messages)
        return;
    struct peer_row *peers = xcalloc((size_t)g->n, sizeof *peers);
    for (int p = 0; p < g->n; p++)
        if (p != g->lost) {
            expect_sites(e, g, p);
            expect_peers(e, g, p, peers);
        }
    free(peers);
}
