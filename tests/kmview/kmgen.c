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
 *       --v1              write format version 1 (no estimate marks, MPI
 *                         time holding MPI_INIT); the default is version 2,
 *                         with estimated figures marked ~ and Est(%)
 *       --no-prediction   the Prediction section says n/a, and why
 *       --old-prediction  version 2's Prediction rows as its earlier
 *                         development versions wrote them: T, S, C, R, P,
 *                         without libkm's overhead O and the time waited W
 *   Version 2's Prediction rows are T, S, C, R, O, P, W: O is the rank's
 *   libkm overhead (marked as that figure is), P = T - S - C - R - O, W a
 *   known time waited for a processor (0 on every third rank).
 *   With --locations 3 or more, SUB0001's third location is CALL
 *   MPI_INIT(IERR): the rank's MPI start-up (in version 1 also counted in
 *   SUB0001's and the header's MPI time, which kmview takes out).
 *       --outlier K:R:F   rank K spends F times the computation in
 *                         routine R (and less in MPI, so totals stay equal)
 *       --threads T       every rank ran T threads: a Threads block (format
 *                         version 3) with a row per thread and rows for
 *                         its first three routines and their first
 *                         locations
 *       --messages        Messages and Peers blocks (format version 4): a
 *                         ring of point-to-point messages of known sizes
 *                         (see write_messages); needs 3 routines and 3
 *                         locations
 *       --alltoall        also an all-to-all collective, every rank to
 *                         every rank (5 routines)
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

/* A routine cell's estimate marks, as bits of kmview's est mask (1 << its
 * metric: elapsed 0, net 1, MPI 3, I/O 4). */
enum { E_EL = 1, E_NET = 2, E_MPI = 8, E_IO = 16 };

struct gen {
    int n, nr, nl, lost, version, threads;
    bool extras, uniform, no_prediction, old_prediction;
    bool messages, alltoall; /* Messages and Peers blocks (version 4) */
    int out_rank, out_routine;
    double out_factor;
    /* [p * nr + r] */
    bool *present;
    double *el, *net, *mpi, *io;
    double *mpi_file;        /* the MPI column as written: version 1's holds
                                SUB0001's MPI_INIT, which kmview takes out */
    double *pct;             /* Est(%) */
    unsigned *est;
    uint64_t *cnt;
    bool *plus;
    /* locations [(r * nl + k) * n + p] */
    double *lel, *lpct;
    uint64_t *lcnt;
    bool *lplus, *lest;
    double *outside, *unmeasured, *redundant, *read_cost, *startup, *waited;
    uint64_t *reads;
    int *id_of;              /* routine -> kmview's id (1-based) */
    int *routine_of_id;
    int nids;
};

/* v as an Est(%) column prints it (one decimal), read back. */
static double printed1(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.1f", v);
    return strtod(b, NULL);
}

/* a - b, never below 0 (as kmview takes version 1's start-up out) */
static double less(double a, double b)
{
    return a > b ? a - b : 0;
}

static bool absent(const struct gen *g, int p, int r)
{
    return g->n > 1 && r % 5 == 3 && p % 3 == 0;
}

/* SUB0001's third location is CALL MPI_INIT: MPI start-up. */
static bool is_init(const struct gen *g, int r, int k)
{
    return r == 0 && k == 2 && g->nl >= 3;
}

/* Version 2's marks: a routine with + counts has estimated elapsed and
 * net time (and MPI and I/O when it has some); one without may still
 * hold its callees' estimates in its elapsed time.  A uniform run marks
 * every fourth routine, drawing no random number (its profile stays). */
static void make_estimates(struct gen *g, size_t at, int r)
{
    g->est[at] = 0;
    g->pct[at] = 0;
    if (g->version < 2)
        return;
    if (g->uniform) {                /* every fourth routine, no draws */
        g->est[at] = r % 4 == 0 ? E_EL | E_NET : 0;
        g->pct[at] = r % 4 == 0 ? 10 : 0;
        return;
    }
    bool callee = uniform() < 0.15;
    if (g->plus[at])
        g->est[at] = E_EL | E_NET | (g->mpi[at] > 0 ? E_MPI : 0) |
                     (g->io[at] > 0 ? E_IO : 0);
    else if (callee)
        g->est[at] = E_EL;
    if (g->est[at])
        g->pct[at] = printed1((g->plus[at] ? 100 : 20) * uniform());
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
    make_estimates(g, at, r);
    /* version 1 counts MPI_INIT in the MPI column of the routine that
     * calls it; kmview takes it out again */
    g->mpi_file[at] = g->mpi[at];
    if (g->version < 2 && r == 0 && g->startup[p] > 0) {
        g->mpi_file[at] = printed(g->mpi[at] + g->startup[p]);
        g->mpi[at] = less(g->mpi_file[at], g->startup[p]);
    }
}

static void make_location(struct gen *g, int p, int r, int k)
{
    size_t at = ((size_t)r * g->nl + k) * g->n + p;
    if (absent(g, p, r))
        return;
    if (is_init(g, r, k)) {
        g->lel[at] = g->startup[p];
        g->lcnt[at] = 1;
        return;
    }
    g->lel[at] = printed(3 * uniform());
    g->lcnt[at] = (uint64_t)(uniform() * 5000);
    g->lplus[at] = uniform() < 0.1;
    if (g->version < 2 || g->uniform)
        return;
    g->lest[at] = g->lplus[at] || uniform() < 0.1;
    if (g->lest[at])
        g->lpct[at] = printed1(100 * uniform());
}

static void make_run(struct gen *g)
{
    size_t cells = (size_t)g->n * g->nr;
    g->present = xcalloc(cells, sizeof *g->present);
    g->el = xcalloc(cells, sizeof(double));
    g->net = xcalloc(cells, sizeof(double));
    g->mpi = xcalloc(cells, sizeof(double));
    g->mpi_file = xcalloc(cells, sizeof(double));
    g->io = xcalloc(cells, sizeof(double));
    g->pct = xcalloc(cells, sizeof(double));
    g->est = xcalloc(cells, sizeof(unsigned));
    g->cnt = xcalloc(cells, sizeof(uint64_t));
    g->plus = xcalloc(cells, sizeof(bool));
    size_t lcells = (size_t)g->nr * g->nl * g->n;
    g->lel = xcalloc(lcells, sizeof(double));
    g->lpct = xcalloc(lcells, sizeof(double));
    g->lcnt = xcalloc(lcells, sizeof(uint64_t));
    g->lplus = xcalloc(lcells, sizeof(bool));
    g->lest = xcalloc(lcells, sizeof(bool));
    g->outside = xcalloc((size_t)g->n, sizeof(double));
    g->unmeasured = xcalloc((size_t)g->n, sizeof(double));
    g->redundant = xcalloc((size_t)g->n, sizeof(double));
    g->read_cost = xcalloc((size_t)g->n, sizeof(double));
    g->startup = xcalloc((size_t)g->n, sizeof(double));
    g->waited = xcalloc((size_t)g->n, sizeof(double));
    g->reads = xcalloc((size_t)g->n, sizeof(uint64_t));
    double *base = xcalloc(4 * (size_t)g->nr, sizeof(double));
    for (int r = 0; r < g->nr; r++) {
        base[4 * r] = 0.5 + 10 * uniform();
        base[4 * r + 1] = r % 3 == 1 ? 0.2 + 2 * uniform() : 0;
        base[4 * r + 2] = r % 4 == 2 ? 0.1 * base[4 * r] : 0;
        base[4 * r + 3] = r % 2 ? uniform() : 0;
    }
    for (int p = 0; p < g->n; p++) {
        if (g->nl >= 3 && !g->uniform)
            g->startup[p] = printed(0.5 + uniform());
        for (int r = 0; r < g->nr; r++) {
            g->present[(size_t)p * g->nr + r] = !absent(g, p, r);
            make_routine(g, p, r, base);
            for (int k = 0; k < g->nl; k++)
                make_location(g, p, r, k);
        }
        g->outside[p] = printed(0.01 * uniform());
        g->unmeasured[p] = printed(0.5 * uniform());
        g->redundant[p] = printed(0.2 * uniform());
        g->read_cost[p] = printed(2e-8 * (1 + uniform()));
        g->reads[p] = (uint64_t)(uniform() * 1e6);
        /* no random number: the profiles of the other tests stay */
        g->waited[p] = p % 3 ? printed(0.0125 * (1 + p % 4)) : 0;
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
    void *arrays[] = { g->present, g->el, g->net, g->mpi, g->mpi_file, g->io,
                       g->pct, g->est, g->cnt, g->plus, g->lel, g->lpct,
                       g->lcnt, g->lplus, g->lest, g->outside, g->unmeasured,
                       g->redundant, g->read_cost, g->startup, g->waited,
                       g->reads,
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
    if (r == 0 && k == 2)
        snprintf(b, size, "CALL MPI_INIT(IERR)");
    else
        snprintf(b, size, "%s %d", text[k % 6], r + 1);
}

/* ------------------------------------------------------------------------ */
/* Sums per rank                                                             */

struct rank_sums {
    double net, mpi, mpi_file, io, total, overhead, est_time, net_pct;
    uint64_t counts;
    bool plus;
    unsigned est;            /* every cell's marks */
    int routines;
};

static struct rank_sums sums(const struct gen *g, int p)
{
    struct rank_sums s = { 0 };
    double est = 0;
    for (int r = 0; r < g->nr; r++) {
        size_t at = (size_t)p * g->nr + r;
        if (!g->present[at])
            continue;
        s.net += g->net[at];
        s.mpi += g->mpi[at];
        s.mpi_file += g->mpi_file[at];
        s.io += g->io[at];
        s.counts += g->cnt[at];
        s.plus |= g->plus[at];
        s.est |= g->est[at];
        est += g->net[at] * g->pct[at] / 100;
        s.routines++;
    }
    s.overhead = printed(g->read_cost[p] * (double)g->reads[p]);
    s.est_time = printed(est);
    s.net_pct = printed1(s.net > 0 ? 100 * est / s.net : 0);
    /* version 2's figures add up; version 1's unmeasured callees held MPI */
    if (g->version >= 2)
        s.total = printed(s.net + s.mpi + g->startup[p] + g->unmeasured[p] +
                          g->outside[p] + s.overhead);
    else
        s.total = printed(s.net + g->outside[p] + g->unmeasured[p] + s.mpi_file);
    return s;
}

/* The marks of rank p's header figures (version 2). */
static bool mpi_est(const struct rank_sums *s) { return s->est & E_MPI; }
static bool io_est(const struct rank_sums *s) { return s->est & E_IO; }
static bool uninst_est(const struct gen *g, const struct rank_sums *s, int p)
{
    return g->version >= 2 && s->plus && p % 2 == 0;
}

/* ------------------------------------------------------------------------ */
/* Writing KM_output                                                         */

/* A time as version 2 prints it: %.7e, '~' first when estimated. */
static const char *tm(char b[32], double v, bool est)
{
    snprintf(b, 32, "%s%.7e", est ? "~" : "", v);
    return b;
}

static const char overhead_line[] =
    "2.05e-08 s per measured entry and exit, 4.10e-09 s per estimated one, "
    "1.02e-08 s inside a measured region; taken out of every time";

static void write_header(FILE *f, const struct gen *g)
{
    fprintf(f, "! kmtool KM_output %d\n! Program    : ./gen, \"quoted\"\n"
            "! Started    : 2026-11-22 13:40:00\n! Written at : MPI_FINALIZE\n"
            "! Clock      : CLOCK_MONOTONIC\n", g->version);
    if (g->version >= 2)
        fprintf(f, "! Overhead   : %s\n", overhead_line);
    if (g->extras)
        fprintf(f, "! Compiler   : gfortran -O2\n! a comment kmview skips\n");
    fprintf(f, "! Ranks      : %d\n!\n", g->n);
}

static const char no_prediction_note[] =
    "No prediction: MPI calls were not measured in some routines (see the "
    "ranks' warnings)";

/* The columns of a Prediction row, as version 2 writes them. */
enum { PR_T, PR_S, PR_C, PR_R, PR_O, PR_P, PR_W, NPR };

/* Does this run's Prediction row have column k (version 1: T, C, R, P)? */
static bool pred_has(const struct gen *g, int k)
{
    if (k == PR_S)
        return g->version >= 2;
    if (k == PR_O || k == PR_W)
        return g->version >= 2 && !g->old_prediction;
    return true;
}

/* The prediction row of rank p (NaN where the run has no such column)
 * and its marks. */
static void prediction_row(const struct gen *g, int p, double v[NPR],
                           bool e[NPR])
{
    struct rank_sums s = sums(g, p);
    bool v2 = g->version >= 2;
    v[PR_T] = s.total;
    v[PR_S] = g->startup[p];
    v[PR_C] = printed(v2 ? s.mpi : s.mpi_file);
    v[PR_R] = g->redundant[p];
    v[PR_O] = s.overhead;
    v[PR_W] = g->waited[p];
    memset(e, 0, NPR * sizeof *e);
    e[PR_C] = v2 && mpi_est(&s);
    e[PR_O] = v2 && s.plus;                      /* as the header figure */
    e[PR_W] = 0;                                  /* measured, not guessed */
    for (int k = 0; k < NPR; k++) {
        if (pred_has(g, k))
            continue;
        v[k] = NAN;
        e[k] = false;
    }
    /* P = T - S - C - R - O - W, as far as the row has them */
    double par = v[PR_T] - v[PR_C] - v[PR_R];
    if (pred_has(g, PR_S))
        par -= v[PR_S];
    if (pred_has(g, PR_O))
        par -= v[PR_O];
    v[PR_P] = printed(par);
    e[PR_P] = e[PR_C] || e[PR_O];
}

static void write_prediction(FILE *f, const struct gen *g, double pred[3],
                             bool *pred_est)
{
    static const char *const heading[NPR] = {
        "Total(s)", "Start-up(s)", "MPI(s)", "Redundant(s)", "Overhead(s)",
        "Waited(s)", "Parallel(s)",
    };
    double min_r = 0, sum_p = 0, max_t = 0, v[NPR];
    bool e[NPR], est = false;
    char b[32];
    fprintf(f, "! ===== Prediction =====\n");
    if (g->version >= 2)
        fprintf(f, "! %-98s\n", g->no_prediction ? no_prediction_note
                : g->old_prediction ? "Times without MPI start-up (MPI_INIT); "
                  "~ marks figures that contain estimates"
                : "Times without MPI start-up (MPI_INIT) and libkm; ~ marks "
                  "figures that contain estimates");
    fprintf(f, "!   Rank");
    for (int k = 0; k < NPR; k++)
        if (pred_has(g, k))
            fprintf(f, "%16s", heading[k]);
    fputc('\n', f);
    for (int p = 0; p < g->n; p++) {
        prediction_row(g, p, v, e);
        fprintf(f, "%8d", p);
        for (int k = 0; k < NPR; k++)
            if (pred_has(g, k))
                fprintf(f, " %15s", tm(b, v[k], e[k]));
        fputc('\n', f);
        if (p == 0 || v[PR_R] < min_r)
            min_r = v[PR_R];
        /* the speedup divides by max (T - S - O), as far as the row has
         * them (version 1: max T) */
        double t = v[PR_T];
        if (pred_has(g, PR_S))
            t -= v[PR_S];
        if (pred_has(g, PR_O))
            t -= v[PR_O];
        if (t > max_t)
            max_t = t;
        sum_p += v[PR_P];
        est |= e[PR_P] || e[PR_O];
    }
    pred[0] = printed(min_r + sum_p);
    pred[1] = printed(pred[0] / max_t);
    pred[2] = printed(pred[1] / g->n);
    *pred_est = est;
    static const char *const what[] = { "Predicted one-PE time T_1pe",
                                        "Predicted speedup",
                                        "Predicted parallel efficiency" };
    for (int k = 0; k < 3; k++) {
        if (g->no_prediction)
            pred[k] = NAN;
        fprintf(f, "%-15s ! %s\n", g->no_prediction ? "n/a"
                : g->version >= 2 ? tm(b, pred[k], est)
                : (snprintf(b, 32, "%.7e", pred[k]), b), what[k]);
    }
}

static void write_count(FILE *f, uint64_t c, bool plus, int width)
{
    char b[32];
    snprintf(b, sizeof b, "%s%llu", plus ? "+" : "", (unsigned long long)c);
    fprintf(f, " %*s", width, b);
}

static void write_locations(FILE *f, const struct gen *g, int p, int no, int r)
{
    char name[16], text[64], b[32];
    bool v2 = g->version >= 2;
    routine_name(name, sizeof name, r);
    fprintf(f, "!\n! Routine %d %s, file src/%s, v2.f, line %d, %d locations\n",
            no, name, name, 10 * (r + 1) - 5, g->nl);
    fprintf(f, "!     No Kind    Line      Elapsed(s)     Counts %sStatement\n",
            v2 ? " Est(%) " : "");
    for (int k = 0; k < g->nl; k++) {
        size_t at = ((size_t)r * g->nl + k) * g->n + p;
        loc_text(text, sizeof text, r, k);
        fprintf(f, "%8d %-5s %6d %15s", k + 1, kinds[loc_kind(k)],
                loc_line(r, k), tm(b, g->lel[at], g->lest[at]));
        write_count(f, g->lcnt[at], g->lplus[at], 10);
        if (v2)
            fprintf(f, " %7.1f", g->lpct[at]);
        fprintf(f, " %s\n", text);
    }
}

static void write_figures(FILE *f, const struct gen *g, int p,
                          const struct rank_sums *s)
{
    bool v2 = g->version >= 2;
    char b[32];
    fprintf(f, "%04d %-10d ! Processors and Rank\n", g->n, p);
    fprintf(f, "%-15.7e ! Total time\n", s->total);
    fprintf(f, "%-15llu ! Counts of routines\n", (unsigned long long)s->counts);
    fprintf(f, "%-15llu ! Counts of time get function\n",
            (unsigned long long)g->reads[p]);
    fprintf(f, "%-15.7e ! Time get function cost(1 call)\n", g->read_cost[p]);
    fprintf(f, "%-15s ! %s\n", tm(b, s->overhead, v2 && s->plus),
            v2 ? "libkm overhead" : "Time get function cost (Total)");
    fprintf(f, "%-15d ! Output counts by KM_writ\n", 1 + p % 2);
    fprintf(f, "%-15s ! MPI time\n",
            tm(b, printed(v2 ? s->mpi : s->mpi_file), mpi_est(s)));
    if (v2)
        fprintf(f, "%-15.7e ! MPI start-up time\n", g->startup[p]);
    fprintf(f, "%-15s ! I/O time\n", tm(b, printed(s->io), io_est(s)));
    if (g->extras)
        fprintf(f, "4.2             ! A figure a later libkm may add\n");
    fprintf(f, "%-15.7e ! Time outside routines\n", g->outside[p]);
    if (v2) {
        fprintf(f, "%-15s ! Time in uninstrumented routines\n",
                tm(b, g->unmeasured[p], uninst_est(g, s, p)));
        fprintf(f, "%-15s ! Estimated time\n", tm(b, s->est_time, s->est_time > 0));
    } else {
        fprintf(f, "%-15.7e ! Time in unmeasured callees\n",
                printed(g->unmeasured[p] + s->mpi_file));
    }
    fprintf(f, "%-15d ! Routines\n", s->routines);
}

static void write_table(FILE *f, const struct gen *g, int p,
                        const struct rank_sums *s)
{
    bool v2 = g->version >= 2;
    char name[16], b[4][32];
    fprintf(f, "!     No Routine                   Elapsed(s)          Net(s)"
            "     Counts          MPI(s)           IO(s)%s\n", v2 ? "  Est(%)" : "");
    int no = 0;
    for (int k = 0; k < g->nr; k++) {
        int r = (k + p) % g->nr;
        size_t at = (size_t)p * g->nr + r;
        if (!g->present[at])
            continue;
        unsigned e = g->est[at];
        routine_name(name, sizeof name, r);
        fprintf(f, "%8d %-22s %15s %15s", ++no, name, tm(b[0], g->el[at], e & E_EL),
                tm(b[1], g->net[at], e & E_NET));
        write_count(f, g->cnt[at], g->plus[at], 10);
        fprintf(f, " %15s %15s", tm(b[2], g->mpi_file[at], e & E_MPI),
                tm(b[3], g->io[at], e & E_IO));
        if (v2)
            fprintf(f, " %7.1f", g->pct[at]);
        fputc('\n', f);
    }
    if (v2) {
        char c[32];
        snprintf(c, sizeof c, "%s%llu", s->plus ? "+" : "",
                 (unsigned long long)s->counts);
        fprintf(f, "!%7s %-22s %15s %15s %10s %15s %15s %7.1f\n", "", "Total", "",
                tm(b[0], s->net, s->est & E_NET), c, tm(b[1], s->mpi, mpi_est(s)),
                tm(b[2], s->io, io_est(s)), s->net_pct);
    } else {
        fprintf(f, "!%7s %-22s %15s %15.7e %10s %15.7e %15.7e\n", "", "Total", "",
                s->net, "(sums)", s->mpi_file, s->io);
    }
}

/* ---- threads (--threads T) ------------------------------------------------ */

enum { NTF = 5 };                    /* total, net, MPI, outside, overhead */
static const char *const tf_key[NTF] = { "total", "net", "mpi", "outside",
                                         "overhead" };

struct trow {
    int omp;
    double v[NTF];
    bool est[NTF];
    uint64_t count;
    bool plus;
    double pct;
};

/* Thread k of rank p. */
static struct trow thread_row(const struct gen *g, int p, int k)
{
    struct trow t = { .omp = (3 * k) % g->threads };
    double total = printed(1.0 + 0.25 * k + 0.01 * p);
    t.v[0] = total;
    t.v[1] = printed(total * 0.5);
    t.v[2] = printed(0.01 * k);
    t.v[3] = printed(total * 0.25);
    t.v[4] = printed(1e-4 * (k + 1));
    t.est[1] = k % 2 == 1;
    t.est[4] = true;
    t.count = 1000u * (unsigned)(k + 1) + (unsigned)p;
    t.plus = k % 2 == 1;
    t.pct = t.est[1] ? printed1(1.5 * k) : 0;
    return t;
}

struct treg {
    int threads;
    uint64_t count;
    double min, mean, max, imbal;
    bool est;
};

/* Table row `no` (its routine, loc 0, or its first location, loc 1) over
 * the threads of rank p. */
static struct treg thread_region(const struct gen *g, int p, int no, int loc)
{
    struct treg t = { .threads = g->threads - (no % 2 == 0),
                      .count = 100u * (unsigned)no + 10u * (unsigned)loc +
                               (unsigned)p,
                      .min = printed(0.001 * no), .mean = printed(0.002 * no),
                      .max = printed(0.004 * no), .imbal = 50.0,
                      .est = no == 2 };
    return t;
}

/* The routine of rank p's table row `no` (1-based), or -1. */
static int table_routine(const struct gen *g, int p, int no)
{
    int seen = 0;
    for (int k = 0; k < g->nr; k++) {
        int r = (k + p) % g->nr;
        if (g->present[(size_t)p * g->nr + r] && ++seen == no)
            return r;
    }
    return -1;
}

static int thread_rows_of(const struct gen *g, int p)
{
    int n = 0;
    while (n < 3 && table_routine(g, p, n + 1) >= 0)
        n++;
    return n;
}

static void write_tregion(FILE *f, const struct gen *g, int p, int no, int loc)
{
    char id[16], name[16], text[64], b[3][32];
    int r = table_routine(g, p, no);
    struct treg t = thread_region(g, p, no, loc);
    snprintf(id, sizeof id, loc ? "%d.1" : "%d", no);
    routine_name(name, sizeof name, r);
    fprintf(f, "%10s %-22s %-5s %6d %7d", id, name, loc ? kinds[loc_kind(0)]
            : "ROUT", loc ? loc_line(r, 0) : 10 * (r + 1) - 5, t.threads);
    write_count(f, t.count, false, 12);
    fprintf(f, " %16s %16s %16s %8.1f", tm(b[0], t.min, t.est),
            tm(b[1], t.mean, t.est), tm(b[2], t.max, t.est), t.imbal);
    if (loc) {
        loc_text(text, sizeof text, r, 0);
        fprintf(f, " %s", text);
    }
    fputc('\n', f);
}

static void write_threads(FILE *f, const struct gen *g, int p)
{
    char b[NTF][32];
    fprintf(f, "!\n! ===== Threads =====\n%-15d ! Threads\n", g->threads);
    fprintf(f, "! Thread    OMP         Total(s)           Net(s)       Counts"
            "           MPI(s)       Outside(s)      Overhead(s)  Est(%%)\n");
    for (int k = 0; k < g->threads; k++) {
        struct trow t = thread_row(g, p, k);
        fprintf(f, "%8d %6d %16s %16s", k, t.omp, tm(b[0], t.v[0], t.est[0]),
                tm(b[1], t.v[1], t.est[1]));
        write_count(f, t.count, t.plus, 12);
        fprintf(f, " %16s %16s %16s %7.1f\n", tm(b[2], t.v[2], t.est[2]),
                tm(b[3], t.v[3], t.est[3]), tm(b[4], t.v[4], t.est[4]), t.pct);
    }
    fprintf(f, "!\n! Regions run by threads other than 0, over the threads "
            "that ran them\n!   Region Routine                Kind    Line "
            "Threads       Counts           Min(s)          Mean(s)         "
            "  Max(s) Imbal(%%) Statement\n");
    for (int no = 1; no <= thread_rows_of(g, p); no++) {
        write_tregion(f, g, p, no, 0);
        if (g->nl)
            write_tregion(f, g, p, no, 1);
    }
}

/* ---- messages (--messages, --alltoall) ------------------------------------ */

/* A ring of point-to-point messages (format version 4), with figures that
 * differ from rank to rank so that sizes fall in several bins:
 *   SUB0002's third location (MPI) sends 3 messages of ring_size(p) bytes
 *   to the right, p + 1, and receives the left neighbour's 3;
 *   SUB0003's third location sends one message of big_size(p) bytes and an
 *   empty one to the left, p - 1, and receives the right neighbour's;
 *   with --alltoall, SUB0005's third location sends a2a_size(p) bytes to
 *   every rank, itself included (an all-to-all collective).
 * A site is written where its routine is in the rank's table; the peers
 * are every rank's, whatever its sites. */
enum { NPC = 6 };            /* a peer row: sent, received, all-to-all */
struct peer_row {
    int peer;
    uint64_t v[NPC];         /* messages, bytes of each part */
};

static uint64_t ring_size(int p) { return 100 + 10 * (uint64_t)(p % 40); }
static uint64_t big_size(int p) { return 4096 * (uint64_t)(1 + p % 3); }
static uint64_t a2a_size(int p) { return 8 * (uint64_t)(1 + p % 4); }
static int right_of(const struct gen *g, int p) { return (p + 1) % g->n; }
static int left_of(const struct gen *g, int p) { return (p + g->n - 1) % g->n; }

/* The size bin of b bytes: 0 empty, k for 2^(k-1) <= b < 2^k. */
static int size_bin(uint64_t b)
{
    int k = 0;
    while (b)
        b >>= 1, k++;
    return k;
}

/* What one call site of a rank moved. */
struct site_row {
    int r;                   /* its routine; its location is the third */
    uint64_t messages, sent, received;
    uint64_t bins[48];
};

static void site_add(struct site_row *s, uint64_t bytes, uint64_t n)
{
    s->messages += n;
    s->bins[size_bin(bytes)] += n;
}

/* The sites of rank p, in the order written; how many. */
static int sites_of(const struct gen *g, int p, struct site_row out[3])
{
    int n = 0;
    struct site_row s[3] = { { .r = 1 }, { .r = 2 }, { .r = 4 } };
    int l = left_of(g, p), rt = right_of(g, p);
    site_add(&s[0], ring_size(p), 3);
    site_add(&s[0], ring_size(l), 3);
    s[0].sent = 3 * ring_size(p);
    s[0].received = 3 * ring_size(l);
    site_add(&s[1], big_size(p), 1);
    site_add(&s[1], 0, 1);
    site_add(&s[1], big_size(rt), 1);
    site_add(&s[1], 0, 1);
    s[1].sent = big_size(p);
    s[1].received = big_size(rt);
    site_add(&s[2], a2a_size(p), (uint64_t)g->n);
    s[2].sent = (uint64_t)g->n * a2a_size(p);
    for (int k = 0; k < (g->alltoall ? 3 : 2); k++)
        if (g->present[(size_t)p * g->nr + s[k].r])
            out[n++] = s[k];
    return n;
}

/* Peer q's row of rank p (zero where they exchange nothing). */
static struct peer_row peer_row_of(const struct gen *g, int p, int q)
{
    struct peer_row row = { .peer = q };
    if (q == right_of(g, p)) {               /* the ring, to the right */
        row.v[0] += 3, row.v[1] += 3 * ring_size(p);
        row.v[2] += 1, row.v[3] += big_size(q);
    }
    if (q == left_of(g, p)) {                /* to the left */
        row.v[0] += 2, row.v[1] += big_size(p);
        row.v[2] += 3, row.v[3] += 3 * ring_size(q);
    }
    if (g->alltoall)
        row.v[4] = 1, row.v[5] = a2a_size(p);
    return row;
}

/* Rank p's peer rows in peer order (every rank with --alltoall, else its
 * one or two neighbours); how many.  out holds g->n rows. */
static int peers_of(const struct gen *g, int p, struct peer_row *out)
{
    int n = 0, l = left_of(g, p), r = right_of(g, p);
    int near[2] = { l < r ? l : r, l < r ? r : l };
    for (int k = 0; k < (g->alltoall ? g->n : 2); k++) {
        int q = g->alltoall ? k : near[k];
        if (!g->alltoall && k == 1 && near[1] == near[0])
            break;
        out[n++] = peer_row_of(g, p, q);
    }
    return n;
}

/* The table row (1-based) of routine r in rank p's table, 0 if absent. */
static int row_of(const struct gen *g, int p, int r)
{
    for (int no = 1; table_routine(g, p, no) >= 0; no++)
        if (table_routine(g, p, no) == r)
            return no;
    return 0;
}

static void write_sizes(FILE *f, const uint64_t bins[48])
{
    for (int b = 0; b < 48; b++)
        if (bins[b])
            fprintf(f, " %d:%llu", b, (unsigned long long)bins[b]);
}

static void write_messages(FILE *f, const struct gen *g, int p,
                           struct peer_row *peers)
{
    struct site_row s[3];
    int n = sites_of(g, p, s);
    char id[16], name[16];
    fprintf(f, "!\n! ===== Messages =====\n%-15d ! Call sites\n", n);
    fprintf(f, "!   Region Routine                Kind    Line     Messages"
            "          Sent(B)      Received(B) Sizes(bin:messages)\n");
    for (int k = 0; k < n; k++) {
        snprintf(id, sizeof id, "%d.3", row_of(g, p, s[k].r));
        routine_name(name, sizeof name, s[k].r);
        fprintf(f, "%10s %-22s %-5s %6d %12llu %16llu %16llu", id, name,
                "MPI", loc_line(s[k].r, 2), (unsigned long long)s[k].messages,
                (unsigned long long)s[k].sent,
                (unsigned long long)s[k].received);
        write_sizes(f, s[k].bins);
        fputc('\n', f);
    }
    int np = peers_of(g, p, peers);
    fprintf(f, "!\n! ===== Peers =====\n%-15d ! Peers\n", np);
    fprintf(f, "!     Peer     Sent(msgs)          Sent(B) Received(msgs)"
            "      Received(B) Alltoall(msgs)      Alltoall(B)\n");
    for (int k = 0; k < np; k++) {
        fprintf(f, "%10d", peers[k].peer);
        for (int c = 0; c < NPC; c++)
            fprintf(f, " %*llu", c % 2 ? 16 : 14,
                    (unsigned long long)peers[k].v[c]);
        fputc('\n', f);
    }
}

static void write_rank_messages(FILE *f, const struct gen *g, int p)
{
    struct peer_row *peers = xcalloc((size_t)g->n, sizeof *peers);
    write_messages(f, g, p, peers);
    free(peers);
}

static void write_rank(FILE *f, const struct gen *g, int p)
{
    struct rank_sums s = sums(g, p);
    fprintf(f, "! ===== Rank %d =====\n", p);
    if (p == g->lost) {
        fprintf(f, "! Warning: this rank's results were lost (out of memory)\n");
        return;
    }
    write_figures(f, g, p, &s);
    write_table(f, g, p, &s);
    int no = 0;
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
    if (g->no_prediction)
        fprintf(f, "! Warning: MPI calls were not measured in 2 routines "
                "(first: SUB0002); no prediction\n");
    if (g->threads > 1)
        write_threads(f, g, p);
    if (g->messages)
        write_rank_messages(f, g, p);
}

static void write_run(FILE *f, const struct gen *g, double pred[3],
                      bool *pred_est)
{
    write_header(f, g);
    write_prediction(f, g, pred, pred_est);
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

#define NFIGS 13
static const char *const fig_keys[NFIGS] = {
    "total_time", "counts_of_routines", "counts_of_time_get_function",
    "time_get_function_cost_1_call", "libkm_overhead",
    "output_counts_by_km_writ", "mpi_time", "mpi_startup_time", "io_time",
    "time_outside_routines", "time_in_uninstrumented_routines",
    "estimated_time", "routines",
};
static const bool fig_integer[NFIGS] = { [1] = true, [2] = true, [5] = true,
                                         [12] = true };
enum { F_TOTAL = 0, F_OVERHEAD = 4, F_MPI = 6, F_STARTUP = 7, F_IO = 8,
       F_OUTSIDE = 9, F_UNINST = 10, F_EST = 11 };

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
static void expect_figures(FILE *e, const struct gen *g, const struct live *lv,
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

static void expect_run(FILE *e, const struct gen *g, const double *mf,
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

static void expect_routines(FILE *e, const struct gen *g, const struct live *lv,
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

static void expect_cells(FILE *e, const struct gen *g)
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

static void expect_prediction(FILE *e, const struct gen *g)
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
static double net_fraction(const struct gen *g, const struct live *lv)
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

static void expect_threads(FILE *e, const struct gen *g)
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

static void expect_messages(FILE *e, const struct gen *g)
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

static int profile(int argc, char **argv)
{
    struct gen g = { .n = 4, .nr = 10, .nl = 0, .lost = -1, .out_rank = -1,
                     .version = 2 };
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
        else if (!strcmp(a, "--v1")) g.version = 1;
        else if (!strcmp(a, "--threads")) g.threads = atoi(v), g.version = 3,
                                          i++;
        else if (!strcmp(a, "--messages")) g.messages = true;
        else if (!strcmp(a, "--alltoall")) g.messages = g.alltoall = true;
        else if (!strcmp(a, "--no-prediction")) g.no_prediction = true;
        else if (!strcmp(a, "--old-prediction")) g.old_prediction = true;
        else if (!strcmp(a, "--outlier") &&
                 sscanf(v, "%d:%d:%lf", &g.out_rank, &g.out_routine,
                        &g.out_factor) == 3) i++;
        else
            return fprintf(stderr, "kmgen: bad option %s\n", a), 2;
    }
    if (g.n < 1 || g.nr < 1 || g.nl < 0 || g.nl > 6)
        return fputs("kmgen: bad sizes (locations at most 6)\n", stderr), 2;
    if (g.messages && (g.version < 2 || g.nl < 3 || g.nr < (g.alltoall ? 5 : 3)))
        return fputs("kmgen: --messages needs version 2, 3 locations and 3 "
                     "routines (--alltoall 5)\n", stderr), 2;
    if (g.messages)
        g.version = 4;
    if ((g.no_prediction || g.old_prediction) && g.version < 2)
        return fputs("kmgen: --no-prediction and --old-prediction need "
                     "version 2\n", stderr), 2;
    make_run(&g);
    /* EXPECT "-": no expectations (a run made only to be big) */
    FILE *f = fopen(argv[2], "w");
    FILE *e = strcmp(argv[3], "-") ? fopen(argv[3], "w") : fopen("/dev/null", "w");
    if (!f || !e)
        return perror("kmgen"), 2;
    double pred[3], mf[NFIGS], net_sum;
    bool fe[NFIGS], pred_est, net_est;
    write_run(f, &g, pred, &pred_est);
    struct live lv = live_ranks(&g);
    expect_figures(e, &g, &lv, mf, fe);
    expect_routines(e, &g, &lv, mf[F_TOTAL], &net_sum, &net_est);
    expect_run(e, &g, mf, fe, net_sum, net_est, net_fraction(&g, &lv), pred,
               pred_est);
    expect_locations(e, &g, &lv);
    expect_cells(e, &g);
    expect_prediction(e, &g);
    expect_threads(e, &g);
    expect_messages(e, &g);
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
    /* rank_* files are keyed by rank and id (rank_threads.csv by rank
     * and thread), the others by their first
     * column (escaping ':' in keys) */
    bool two = !strncmp(name, "rank_routines", 13) ||
               !strncmp(name, "rank_messages", 13) ||
               !strncmp(name, "rank_peers", 10) ||
               !strncmp(name, "rank_locations", 14) ||
               !strncmp(name, "rank_thread", 11);
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
