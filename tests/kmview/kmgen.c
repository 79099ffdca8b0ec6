/*
 * kmgen.c — test helper for kmview: writes KM_output files of known
 * content, with every figure kmview derives from them computed here,
 * independently, and flattens kmview's CSV and JSON exports so that a
 * test can compare them with those expectations value by value.
 *
 *   kmgen profile OUT EXPECT [options]   a run of known content
 *       --ranks N --routines R --locations L --seed S
 *       --lost K          rank K's results were lost
 *       --extras          comments, header lines, figures and a section
 *                         this kmview does not know (must be skipped)
 *       --uniform         every rank has the same profile, within 0.5%
 *       --outlier K:R:F   rank K spends F times the computation in
 *                         routine R (and less in MPI, so totals stay equal)
 *   kmgen flatten-json FILE              "path<TAB>value" per JSON leaf
 *   kmgen flatten-csv DIR FILE...        "FILE:key:column<TAB>value"
 *   kmgen compare EXPECT GOT             every expected value present and
 *                                        equal (numbers within 1e-9)
 *
 * EXPECT holds the same "key<TAB>value" lines: one for the CSV export and
 * one for the JSON export of every figure.  Values are printed with
 * %.7e as libkm prints them and read back, so the expectations start from
 * exactly the numbers kmview reads.  Must never include kmview's code:
 * the point is a second, independent computation.
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fputs("kmgen: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

static uint64_t rng_state;

static double uniform(void)                      /* [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* v as KM_output prints it (%.7e), read back. */
static double printed(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.7e", v);
    return strtod(b, NULL);
}

/* The shortest text that reads back as v ("" for NaN). */
static const char *num(char b[40], double v)
{
    if (isnan(v) || isinf(v)) {
        b[0] = '\0';
        return b;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(b, 40, "%.*g", prec, v);
        if (strtod(b, NULL) == v)
            break;
    }
    return b;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                   */

static const char *const kinds[] = { "DO", "CALL", "MPI", "IO", "USER" };

struct gen {
    int n, nr, nl, lost;
    bool extras, uniform;
    int out_rank, out_routine;
    double out_factor;
    /* [p * nr + r] */
    bool *present;
    double *el, *net, *mpi, *io;
    uint64_t *cnt;
    bool *plus;
    /* locations [(r * nl + k) * n + p] */
    double *lel;
    uint64_t *lcnt;
    bool *lplus;
    double *outside, *unmeasured, *redundant, *read_cost;
    uint64_t *reads;
    int *id_of;              /* routine -> kmview's id (1-based) */
    int *routine_of_id;
    int nids;
};

static bool absent(const struct gen *g, int p, int r)
{
    return g->n > 1 && r % 5 == 3 && p % 3 == 0;
}

static void make_routine(struct gen *g, int p, int r, const double *base)
{
    size_t at = (size_t)p * g->nr + r;
    double jitter = g->uniform ? 1 + 0.005 * (2 * uniform() - 1) : 0;
    double net, callee, mpi, io;
    if (g->uniform) {
        net = base[4 * r] * jitter;
        mpi = base[4 * r + 1] * jitter;
        io = base[4 * r + 2] * jitter;
        callee = base[4 * r + 3] * jitter;
        if (p == g->out_rank && r == g->out_routine) {
            double extra = (g->out_factor - 1) * (net - io);
            net += extra;
            mpi = mpi > extra ? mpi - extra : 0;
        }
    } else {
        net = 10 * uniform();
        mpi = uniform() < 0.3 ? 0 : 2 * uniform();
        io = uniform() < 0.5 ? 0 : net * uniform() * 0.5;
        callee = 5 * uniform();
    }
    g->net[at] = printed(net);
    g->mpi[at] = printed(mpi);
    g->io[at] = printed(io);
    g->el[at] = printed(net + mpi + callee);
    g->cnt[at] = g->uniform ? (uint64_t)(100 * (r + 1))
                            : (uint64_t)(1 + uniform() * 100000);
    g->plus[at] = !g->uniform && uniform() < 0.2;
}

static void make_run(struct gen *g)
{
    size_t cells = (size_t)g->n * g->nr;
    g->present = xcalloc(cells, sizeof *g->present);
    g->el = xcalloc(cells, sizeof(double));
    g->net = xcalloc(cells, sizeof(double));
    g->mpi = xcalloc(cells, sizeof(double));
    g->io = xcalloc(cells, sizeof(double));
    g->cnt = xcalloc(cells, sizeof(uint64_t));
    g->plus = xcalloc(cells, sizeof(bool));
    size_t lcells = (size_t)g->nr * g->nl * g->n;
    g->lel = xcalloc(lcells, sizeof(double));
    g->lcnt = xcalloc(lcells, sizeof(uint64_t));
    g->lplus = xcalloc(lcells, sizeof(bool));
    g->outside = xcalloc((size_t)g->n, sizeof(double));
    g->unmeasured = xcalloc((size_t)g->n, sizeof(double));
    g->redundant = xcalloc((size_t)g->n, sizeof(double));
    g->read_cost = xcalloc((size_t)g->n, sizeof(double));
    g->reads = xcalloc((size_t)g->n, sizeof(uint64_t));
    double *base = xcalloc(4 * (size_t)g->nr, sizeof(double));
    for (int r = 0; r < g->nr; r++) {
        base[4 * r] = 0.5 + 10 * uniform();
        base[4 * r + 1] = r % 3 == 1 ? 0.2 + 2 * uniform() : 0;
        base[4 * r + 2] = r % 4 == 2 ? 0.1 * base[4 * r] : 0;
        base[4 * r + 3] = r % 2 ? uniform() : 0;
    }
    for (int p = 0; p < g->n; p++) {
        for (int r = 0; r < g->nr; r++) {
            g->present[(size_t)p * g->nr + r] = !absent(g, p, r);
            make_routine(g, p, r, base);
            for (int k = 0; k < g->nl; k++) {
                size_t at = ((size_t)r * g->nl + k) * g->n + p;
                g->lel[at] = absent(g, p, r) ? 0 : printed(3 * uniform());
                g->lcnt[at] = absent(g, p, r) ? 0 : (uint64_t)(uniform() * 5000);
                g->lplus[at] = !absent(g, p, r) && uniform() < 0.1;
            }
        }
        g->outside[p] = printed(0.01 * uniform());
        g->unmeasured[p] = printed(0.5 * uniform());
        g->redundant[p] = printed(0.2 * uniform());
        g->read_cost[p] = printed(2e-8 * (1 + uniform()));
        g->reads[p] = (uint64_t)(uniform() * 1e6);
    }
    free(base);
    /* kmview numbers routines in order of first appearance: rank 0's
     * table, then names new in rank 1's table, ... */
    g->id_of = xcalloc((size_t)g->nr, sizeof(int));
    g->routine_of_id = xcalloc((size_t)g->nr + 1, sizeof(int));
    int next = 1;
    for (int p = 0; p < g->n; p++)
        for (int k = 0; k < g->nr; k++) {
            int r = (k + p) % g->nr;             /* rank p's table order */
            if (g->present[(size_t)p * g->nr + r] && !g->id_of[r]) {
                g->id_of[r] = next;
                g->routine_of_id[next++] = r;
                g->nids = next - 1;
            }
        }
}

static void free_run(struct gen *g)
{
    void *arrays[] = { g->present, g->el, g->net, g->mpi, g->io, g->cnt,
                       g->plus, g->lel, g->lcnt, g->lplus, g->outside,
                       g->unmeasured, g->redundant, g->read_cost, g->reads,
                       g->id_of, g->routine_of_id };
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        free(arrays[i]);
}

static void routine_name(char *b, size_t size, int r)
{
    snprintf(b, size, "SUB%04d", r + 1);
}

/* Location k of routine r: kind, line, statement (with characters CSV and
 * the reader must handle: commas, quotes, '!', a second location of the
 * same kind on the same line). */
static int loc_kind(int k) { return k % 5; }
static int loc_line(int r, int k) { return 10 * (r + 1) + (k == 5 ? 0 : k); }
static void loc_text(char *b, size_t size, int r, int k)
{
    static const char *const text[] = {
        "DO 10 I=1, N", "CALL WORK(A, B, \"X\")", "CALL MPI_ALLREDUCE(X, Y, 1,",
        "WRITE(6,*) 'done!'", "!KM_measure start", "DO 20 J=1, M",
    };
    snprintf(b, size, "%s %d", text[k % 6], r + 1);
}

/* ------------------------------------------------------------------------ */
/* Sums per rank                                                             */

struct rank_sums {
    double net, mpi, io, total;
    uint64_t counts;
    bool plus;
    int routines;
};

static struct rank_sums sums(const struct gen *g, int p)
{
    struct rank_sums s = { 0 };
    for (int r = 0; r < g->nr; r++) {
        size_t at = (size_t)p * g->nr + r;
        if (!g->present[at])
            continue;
        s.net += g->net[at];
        s.mpi += g->mpi[at];
        s.io += g->io[at];
        s.counts += g->cnt[at];
        s.plus |= g->plus[at];
        s.routines++;
    }
    s.total = printed(s.net + g->outside[p] + g->unmeasured[p] + s.mpi);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Writing KM_output                                                         */

static void write_header(FILE *f, const struct gen *g)
{
    fprintf(f, "! kmtool KM_output 1\n! Program    : ./gen, \"quoted\"\n"
            "! Started    : 2026-11-22 13:40:00\n! Written at : MPI_FINALIZE\n"
            "! Clock      : CLOCK_MONOTONIC\n");
    if (g->extras)
        fprintf(f, "! Compiler   : gfortran -O2\n! a comment kmview skips\n");
    fprintf(f, "! Ranks      : %d\n!\n", g->n);
}

static void write_prediction(FILE *f, const struct gen *g, double *t1, double *su,
                             double *eff)
{
    double min_r = 0, sum_p = 0, max_t = 0;
    fprintf(f, "! ===== Prediction =====\n!   Rank        Total(s)          MPI(s)"
            "    Redundant(s)     Parallel(s)\n");
    for (int p = 0; p < g->n; p++) {
        struct rank_sums s = sums(g, p);
        double par = printed(s.total - s.mpi - g->redundant[p]);
        fprintf(f, "%8d %15.7e %15.7e %15.7e %15.7e\n", p, s.total, s.mpi,
                g->redundant[p], par);
        if (p == 0 || g->redundant[p] < min_r)
            min_r = g->redundant[p];
        if (s.total > max_t)
            max_t = s.total;
        sum_p += par;
    }
    *t1 = printed(min_r + sum_p);
    *su = printed(*t1 / max_t);
    *eff = printed(*su / g->n);
    fprintf(f, "%-15.7e ! Predicted one-PE time T_1pe\n", *t1);
    fprintf(f, "%-15.7e ! Predicted speedup\n", *su);
    fprintf(f, "%-15.7e ! Predicted parallel efficiency\n", *eff);
}

static void write_count(FILE *f, uint64_t c, bool plus, int width)
{
    char b[32];
    snprintf(b, sizeof b, "%s%llu", plus ? "+" : "", (unsigned long long)c);
    fprintf(f, " %*s", width, b);
}

static void write_locations(FILE *f, const struct gen *g, int p, int no, int r)
{
    char name[16], text[64];
    routine_name(name, sizeof name, r);
    fprintf(f, "!\n! Routine %d %s, file src/%s, v2.f, line %d, %d locations\n",
            no, name, name, 10 * (r + 1) - 5, g->nl);
    fprintf(f, "!     No Kind    Line      Elapsed(s)     Counts Statement\n");
    for (int k = 0; k < g->nl; k++) {
        size_t at = ((size_t)r * g->nl + k) * g->n + p;
        loc_text(text, sizeof text, r, k);
        fprintf(f, "%8d %-5s %6d %15.7e", k + 1, kinds[loc_kind(k)],
                loc_line(r, k), g->lel[at]);
        write_count(f, g->lcnt[at], g->lplus[at], 10);
        fprintf(f, " %s\n", text);
    }
}

static void write_rank(FILE *f, const struct gen *g, int p)
{
    char name[16];
    struct rank_sums s = sums(g, p);
    fprintf(f, "! ===== Rank %d =====\n", p);
    if (p == g->lost) {
        fprintf(f, "! Warning: this rank's results were lost (out of memory)\n");
        return;
    }
    fprintf(f, "%04d %-10d ! Processors and Rank\n", g->n, p);
    fprintf(f, "%-15.7e ! Total time\n", s.total);
    fprintf(f, "%-15llu ! Counts of routines\n", (unsigned long long)s.counts);
    fprintf(f, "%-15llu ! Counts of time get function\n",
            (unsigned long long)g->reads[p]);
    fprintf(f, "%-15.7e ! Time get function cost(1 call)\n", g->read_cost[p]);
    fprintf(f, "%-15.7e ! Time get function cost (Total)\n",
            printed(g->read_cost[p] * (double)g->reads[p]));
    fprintf(f, "%-15d ! Output counts by KM_writ\n", 1 + p % 2);
    fprintf(f, "%-15.7e ! MPI time\n", s.mpi);
    fprintf(f, "%-15.7e ! I/O time\n", s.io);
    if (g->extras)
        fprintf(f, "4.2             ! A figure a later libkm may add\n");
    fprintf(f, "%-15.7e ! Time outside routines\n", g->outside[p]);
    fprintf(f, "%-15.7e ! Time in unmeasured callees\n",
            g->unmeasured[p] + s.mpi);
    fprintf(f, "%-15d ! Routines\n", s.routines);
    fprintf(f, "!     No Routine                   Elapsed(s)          Net(s)"
            "     Counts          MPI(s)           IO(s)\n");
    int no = 0;
    for (int k = 0; k < g->nr; k++) {
        int r = (k + p) % g->nr;
        size_t at = (size_t)p * g->nr + r;
        if (!g->present[at])
            continue;
        routine_name(name, sizeof name, r);
        fprintf(f, "%8d %-22s %15.7e %15.7e", ++no, name, g->el[at], g->net[at]);
        write_count(f, g->cnt[at], g->plus[at], 10);
        fprintf(f, " %15.7e %15.7e\n", g->mpi[at], g->io[at]);
    }
    fprintf(f, "!%7s %-22s %15s %15.7e %10s %15.7e %15.7e\n", "", "Total", "",
            s.net, "(sums)", s.mpi, s.io);
    no = 0;
    for (int k = 0; k < g->nr; k++) {
        int r = (k + p) % g->nr;
        if (!g->present[(size_t)p * g->nr + r])
            continue;
        no++;
        if (g->nl)
            write_locations(f, g, p, no, r);
    }
    if (p == 1)
        fprintf(f, "! Warning: 3 KM_OUT calls for regions that were not open "
                "were ignored\n");
}

/* unmeasured: the header figure holds callee time including MPI. */
static void write_run(FILE *f, const struct gen *g, double pred[3])
{
    write_header(f, g);
    write_prediction(f, g, &pred[0], &pred[1], &pred[2]);
    for (int p = 0; p < g->n; p++)
        write_rank(f, g, p);
    if (g->extras)
        fprintf(f, "! ===== Notes =====\nfree text a later libkm may write\n");
    fprintf(f, "! ===== End =====\n");
}

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

static const char *const fig_keys[] = {
    "total_time", "counts_of_routines", "counts_of_time_get_function",
    "time_get_function_cost_1_call", "time_get_function_cost_total",
    "output_counts_by_km_writ", "mpi_time", "io_time",
    "time_outside_routines", "time_in_unmeasured_callees", "routines",
};

/* The eleven header figures of rank p. */
static void rank_figures(const struct gen *g, int p, double *v)
{
    struct rank_sums s = sums(g, p);
    v[0] = s.total;
    v[1] = (double)s.counts;
    v[2] = (double)g->reads[p];
    v[3] = g->read_cost[p];
    v[4] = printed(g->read_cost[p] * (double)g->reads[p]);
    v[5] = 1 + p % 2;
    v[6] = printed(s.mpi);
    v[7] = printed(s.io);
    v[8] = g->outside[p];
    v[9] = printed(g->unmeasured[p] + s.mpi);
    v[10] = s.routines;
}

struct live {
    int n;
    int *rank;
};

static struct live live_ranks(const struct gen *g)
{
    struct live l = { 0, xcalloc((size_t)g->n, sizeof(int)) };
    for (int p = 0; p < g->n; p++)
        if (p != g->lost)
            l.rank[l.n++] = p;
    return l;
}

static void expect_figures(FILE *e, const struct gen *g, const struct live *lv,
                           double *mean_fig)
{
    double *col = xcalloc((size_t)g->n, sizeof(double));
    double v[11];
    char c[128], j[128];
    for (int k = 0; k < 11; k++) {
        for (int i = 0; i < lv->n; i++) {
            rank_figures(g, lv->rank[i], v);
            col[i] = v[k];
        }
        struct stat5 s = stat_of(col, lv->rank, lv->n);
        mean_fig[k] = s.mean;
        snprintf(c, sizeof c, "figures.csv:%s", fig_keys[k]);
        snprintf(j, sizeof j, "figures.%s", fig_keys[k]);
        expect_stat(e, c, j, "", &s);
    }
    for (int i = 0; i < lv->n; i++) {
        int p = lv->rank[i];
        rank_figures(g, p, v);
        for (int k = 0; k < 11; k++) {
            snprintf(c, sizeof c, "rank_figures.csv:%d:%s", p, fig_keys[k]);
            snprintf(j, sizeof j, "ranks[%d].figures.%s", p, fig_keys[k]);
            expect_num(e, c, j, v[k]);
        }
    }
    free(col);
}

static void expect_run(FILE *e, const struct gen *g, const double *mf,
                       double net_sum, const double pred[3])
{
    double t = mf[0], mpi = mf[6], io = mf[7];
    struct { const char *key; double v; } rows[] = {
        { "total_time", t }, { "mpi_time", mpi }, { "mpi_share", mpi / t },
        { "io_time", io }, { "io_share", io / t },
        { "computation_time", t - mpi - io },
        { "computation_share", (t - mpi - io) / t },
        { "routines_net_time", net_sum }, { "routines_net_share", net_sum / t },
    };
    char c[128], j[128];
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        snprintf(c, sizeof c, "run.csv:%s:value", rows[i].key);
        snprintf(j, sizeof j, "time.%s", rows[i].key);
        expect_num(e, c, j, rows[i].v);
    }
    expect_num(e, "run.csv:ranks_in_run:value", "ranks_in_run", g->n);
    expect_num(e, "run.csv:ranks_lost:value", "ranks_lost", g->lost >= 0);
    expect_str(e, "run.csv:program:value", "program", "./gen, \"quoted\"");
    expect_num(e, "run.csv:t_1pe:value", "prediction.t_1pe", pred[0]);
    expect_num(e, "run.csv:speedup:value", "prediction.speedup", pred[1]);
    expect_num(e, "run.csv:efficiency:value", "prediction.efficiency", pred[2]);
    if (g->extras)
        expect_str(e, "run.csv:header\\:Compiler:value", "header_lines.Compiler",
                   "gfortran -O2");
}

static void expect_routines(FILE *e, const struct gen *g, const struct live *lv,
                            double total, double *net_sum)
{
    double *col = xcalloc((size_t)g->n, sizeof(double));
    const double *metric[] = { g->el, g->net, NULL, g->mpi, g->io };
    static const char *const mkey[] = { "elapsed", "net", "counts", "mpi", "io" };
    char c[128], j[128], name[16];
    *net_sum = 0;
    for (int id = 1; id <= g->nids; id++) {
        int r = g->routine_of_id[id];
        bool plus = false;
        for (int i = 0; i < lv->n; i++)
            plus |= g->present[(size_t)lv->rank[i] * g->nr + r] &&
                    g->plus[(size_t)lv->rank[i] * g->nr + r];
        snprintf(c, sizeof c, "routines.csv:%d:extrapolated", id);
        snprintf(j, sizeof j, "routines[%d].extrapolated", id - 1);
        expect_num(e, c, NULL, plus);
        expect_str(e, NULL, j, plus ? "true" : "false");
        routine_name(name, sizeof name, r);
        snprintf(c, sizeof c, "routines.csv:%d:name", id);
        snprintf(j, sizeof j, "routines[%d].name", id - 1);
        expect_str(e, c, j, name);
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

static void expect_locations(FILE *e, const struct gen *g, const struct live *lv)
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

static void expect_cells(FILE *e, const struct gen *g)
{
    char c[128];
    for (int p = 0; p < g->n; p++) {
        if (p == g->lost)
            continue;
        for (int r = 0; r < g->nr; r++) {
            size_t at = (size_t)p * g->nr + r;
            if (!g->present[at])
                continue;
            int id = g->id_of[r];
            const char *col[] = { "elapsed", "net", "mpi", "io" };
            double v[] = { g->el[at], g->net[at], g->mpi[at], g->io[at] };
            for (int k = 0; k < 4; k++) {
                snprintf(c, sizeof c, "rank_routines.csv:%d/%d:%s", p, id, col[k]);
                expect_num(e, c, NULL, v[k]);
            }
            snprintf(c, sizeof c, "rank_routines.csv:%d/%d:counts", p, id);
            expect_num(e, c, NULL, (double)g->cnt[at]);
            snprintf(c, sizeof c, "rank_routines.csv:%d/%d:extrapolated", p, id);
            expect_num(e, c, NULL, g->plus[at]);
        }
    }
}

static void expect_prediction(FILE *e, const struct gen *g)
{
    char c[128], j[128];
    for (int p = 0; p < g->n; p++) {
        struct rank_sums s = sums(g, p);
        double v[] = { s.total, printed(s.mpi), g->redundant[p],
                       printed(s.total - s.mpi - g->redundant[p]) };
        const char *col[] = { "total", "mpi", "redundant", "parallel" };
        for (int k = 0; k < 4; k++) {
            snprintf(c, sizeof c, "prediction.csv:%d:%s", p, col[k]);
            snprintf(j, sizeof j, "prediction.ranks[%d].%s", p, col[k]);
            expect_num(e, c, j, v[k]);
        }
    }
}

static int profile(int argc, char **argv)
{
    struct gen g = { .n = 4, .nr = 10, .nl = 0, .lost = -1, .out_rank = -1 };
    rng_state = 88172645463325252ULL;
    if (argc < 4)
        return fputs("usage: kmgen profile OUT EXPECT [options]\n", stderr), 2;
    for (int i = 4; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(a, "--ranks")) g.n = atoi(v), i++;
        else if (!strcmp(a, "--routines")) g.nr = atoi(v), i++;
        else if (!strcmp(a, "--locations")) g.nl = atoi(v), i++;
        else if (!strcmp(a, "--seed")) rng_state += strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--lost")) g.lost = atoi(v), i++;
        else if (!strcmp(a, "--extras")) g.extras = true;
        else if (!strcmp(a, "--uniform")) g.uniform = true;
        else if (!strcmp(a, "--outlier") &&
                 sscanf(v, "%d:%d:%lf", &g.out_rank, &g.out_routine,
                        &g.out_factor) == 3) i++;
        else
            return fprintf(stderr, "kmgen: bad option %s\n", a), 2;
    }
    if (g.n < 1 || g.nr < 1 || g.nl < 0 || g.nl > 6)
        return fputs("kmgen: bad sizes (locations at most 6)\n", stderr), 2;
    make_run(&g);
    /* EXPECT "-": no expectations (a run made only to be big) */
    FILE *f = fopen(argv[2], "w");
    FILE *e = strcmp(argv[3], "-") ? fopen(argv[3], "w") : fopen("/dev/null", "w");
    if (!f || !e)
        return perror("kmgen"), 2;
    double pred[3], mf[11], net_sum;
    write_run(f, &g, pred);
    struct live lv = live_ranks(&g);
    expect_figures(e, &g, &lv, mf);
    expect_routines(e, &g, &lv, mf[0], &net_sum);
    expect_run(e, &g, mf, net_sum, pred);
    expect_locations(e, &g, &lv);
    expect_cells(e, &g);
    expect_prediction(e, &g);
    free(lv.rank);
    free_run(&g);
    return fclose(f) || fclose(e) ? 2 : 0;
}

/* ------------------------------------------------------------------------ */
/* Flattening JSON                                                           */

struct json {
    const char *p;
    char path[512];
    int bad;
};

static void json_ws(struct json *j)
{
    while (isspace((unsigned char)*j->p))
        j->p++;
}

static void json_string(struct json *j, char *out, size_t size)
{
    size_t n = 0;
    if (*j->p != '"') {
        j->bad = 1;
        return;
    }
    for (j->p++; *j->p && *j->p != '"'; j->p++) {
        char c = *j->p;
        if ((unsigned char)c < 0x20) {
            j->bad = 1;
            return;
        }
        if (c == '\\') {
            c = *++j->p;
            if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
            else if (c == 'u') {
                unsigned v = 0;
                if (sscanf(j->p + 1, "%4x", &v) != 1) {
                    j->bad = 1;
                    return;
                }
                j->p += 4;
                c = v < 0x80 ? (char)v : '?';
            } else if (!strchr("\"\\/", c)) {
                j->bad = 1;
                return;
            }
        }
        if (n + 1 < size)
            out[n++] = c;
    }
    out[n] = '\0';
    if (*j->p != '"')
        j->bad = 1;
    else
        j->p++;
}

static void json_value(struct json *j);

static void json_leaf(struct json *j, const char *text)
{
    printf("%s\t%s\n", j->path, text);
}

static void json_children(struct json *j, bool object)
{
    size_t base = strlen(j->path);
    int index = 0;
    j->p++;
    json_ws(j);
    if (*j->p == (object ? '}' : ']')) {
        j->p++;
        return;
    }
    for (;;) {
        json_ws(j);
        if (object) {
            char key[256];
            json_string(j, key, sizeof key);
            json_ws(j);
            if (j->bad || *j->p != ':') {
                j->bad = 1;
                return;
            }
            j->p++;
            snprintf(j->path + base, sizeof j->path - base, "%s%s",
                     base ? "." : "", key);
        } else {
            snprintf(j->path + base, sizeof j->path - base, "[%d]", index++);
        }
        json_value(j);
        j->path[base] = '\0';
        json_ws(j);
        if (j->bad)
            return;
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p != (object ? '}' : ']'))
            j->bad = 1;
        else
            j->p++;
        return;
    }
}

static void json_value(struct json *j)
{
    json_ws(j);
    char buf[65536];
    if (*j->p == '{' || *j->p == '[')
        json_children(j, *j->p == '{');
    else if (*j->p == '"') {
        json_string(j, buf, sizeof buf);
        json_leaf(j, buf);
    } else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
        snprintf(buf, 5, "%s", j->p);
        j->p += 4;
        json_leaf(j, buf);
    } else if (!strncmp(j->p, "false", 5)) {
        j->p += 5;
        json_leaf(j, "false");
    } else {
        char *end;
        strtod(j->p, &end);
        if (end == j->p || *j->p == '+' || *j->p == '.') {
            j->bad = 1;
            return;
        }
        snprintf(buf, sizeof buf, "%.*s", (int)(end - j->p), j->p);
        j->p = end;
        json_leaf(j, buf);
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, len = 0;
    char *b = xcalloc(cap, 1);
    size_t n;
    while ((n = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            b = realloc(b, cap *= 2);
            if (!b)
                exit(2);
        }
    }
    b[len] = '\0';
    fclose(f);
    return b;
}

static int flatten_json(const char *path)
{
    char *text = slurp(path);
    if (!text)
        return perror(path), 2;
    struct json j = { .p = text };
    json_value(&j);
    json_ws(&j);
    if (j.bad || *j.p) {
        fprintf(stderr, "%s: invalid JSON at byte %ld\n", path,
                (long)(j.p - text));
        return 1;
    }
    free(text);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Flattening CSV                                                            */

/* One CSV record (RFC 4180) from *p into fields; false at the end. */
static bool csv_record(char **p, char fields[][512], int *n, int max)
{
    char *s = *p;
    if (!*s)
        return false;
    *n = 0;
    for (;;) {
        size_t len = 0;
        char *out = fields[*n];
        if (*s == '"') {
            for (s++; *s; s++) {
                if (*s == '"' && s[1] == '"')
                    s++;
                else if (*s == '"') {
                    s++;
                    break;
                }
                if (len < 511)
                    out[len++] = *s;
            }
        } else {
            while (*s && *s != ',' && *s != '\n')
                if (len < 511)
                    out[len++] = *s++;
                else
                    s++;
        }
        out[len] = '\0';
        if (*n < max - 1)
            (*n)++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\n')
            s++;
        break;
    }
    *p = s;
    return true;
}

static int flatten_csv(const char *dir, const char *name)
{
    char path[1024];
    static char head[64][512], row[64][512];
    int nh, nr;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = slurp(path), *p = text;
    if (!text)
        return perror(path), 2;
    if (!csv_record(&p, head, &nh, 64))
        return free(text), 0;
    /* rank_* files are keyed by rank and id, the others by their first
     * column (escaping ':' in keys) */
    bool two = !strncmp(name, "rank_routines", 13) ||
               !strncmp(name, "rank_locations", 14);
    while (csv_record(&p, row, &nr, 64)) {
        if (nr != nh) {
            fprintf(stderr, "%s: a record of %d fields under %d columns\n",
                    path, nr, nh);
            return free(text), 1;
        }
        char key[1100];
        if (two)
            snprintf(key, sizeof key, "%s/%s", row[0], row[1]);
        else {
            size_t k = 0;
            for (const char *s = row[0]; *s && k + 2 < sizeof key; s++) {
                if (*s == ':')
                    key[k++] = '\\';
                key[k++] = *s;
            }
            key[k] = '\0';
        }
        for (int i = two ? 2 : 1; i < nh; i++)
            printf("%s:%s:%s\t%s\n", name, key, head[i], row[i]);
    }
    free(text);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Comparing                                                                 */

struct kv {
    char *key, *value;
};

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key);
}

static struct kv *load(const char *path, size_t *n, char **keep)
{
    char *text = *keep = slurp(path);
    if (!text) {
        perror(path);
        exit(2);
    }
    size_t cap = 1024;
    struct kv *v = xcalloc(cap, sizeof *v);
    *n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        if (*n == cap && !(v = realloc(v, (cap *= 2) * sizeof *v)))
            exit(2);
        v[*n].key = line;
        v[*n].value = tab ? (*tab = '\0', tab + 1) : (char *)"";
        (*n)++;
    }
    qsort(v, *n, sizeof *v, by_key);
    return v;
}

static bool same_value(const char *a, const char *b)
{
    if (!strcmp(a, b))
        return true;
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    if (*ea || *eb || ea == a || eb == b)
        return false;
    return fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y)) + 1e-300;
}

static int compare(const char *expect, const char *got)
{
    size_t ne, ng, bad = 0;
    char *te, *tg;
    struct kv *e = load(expect, &ne, &te), *g = load(got, &ng, &tg);
    for (size_t i = 0; i < ne; i++) {
        struct kv *hit = bsearch(&e[i], g, ng, sizeof *g, by_key);
        if (!hit || !same_value(e[i].value, hit->value)) {
            if (bad++ < 10)
                printf("    %s: expected '%s', got %s%s%s\n", e[i].key,
                       e[i].value, hit ? "'" : "nothing",
                       hit ? hit->value : "", hit ? "'" : "");
        }
    }
    printf("    %zu of %zu values as expected\n", ne - bad, ne);
    free(e);
    free(g);
    free(te);
    free(tg);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "profile"))
        return profile(argc, argv);
    if (argc == 3 && !strcmp(argv[1], "flatten-json"))
        return flatten_json(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "flatten-csv")) {
        for (int i = 3; i < argc; i++)
            if (flatten_csv(argv[2], argv[i]))
                return 1;
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "compare"))
        return compare(argv[2], argv[3]);
    fputs("usage: kmgen profile|flatten-json|flatten-csv|compare ...\n", stderr);
    return 2;
}
