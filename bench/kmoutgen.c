/*
 * kmoutgen.c — a large synthetic KM_output file (format 5), for
 * benchmarking kmview on tens of thousands of ranks.
 *
 *   kmoutgen [--ranks N] [--routines R] [--seed S] [--noise F]
 *            [--outliers K] [--exact] [-o FILE]
 *
 * The run it describes is an MPI stencil code: MAIN reads its input
 * (INIT, I/O on rank 0 and on every 64th rank), then iterates SOLVE and
 * the extra kernels KERNnn (computation), HALO (point-to-point MPI,
 * waiting for the slowest neighbour) and REDUCE (MPI_ALLREDUCE), and
 * writes results (OUTPUT, I/O on the I/O ranks).  Ranks fall into
 * behaviour classes: interior ranks, boundary ranks (a quarter less work
 * in SOLVE, the time spent waiting in HALO instead), I/O ranks (every
 * 64th: they write and read), and K outlier ranks (a slow node: 1.3 to
 * 1.8 times the computation in one kernel, the others wait for it in
 * REDUCE).  Every time gets per-rank noise (relative, normal, F; default
 * 0.002); --exact leaves the noise out, so that ranks of a class are
 * identical.  Every rank's figures add up as libkm's do (total = net +
 * MPI + start-up + uninstrumented + outside + overhead).  The same
 * arguments always give the same file (a seeded xorshift generator).
 * Each rank has a Timeline block: INIT (and its I/O) first, OUTPUT last,
 * the iterations between; an outlier rank's extra time in its slow
 * kernel, and the others' wait for it in REDUCE, fall in the second half
 * of the iterations only, the moment it falls behind.
 *
 * Must never: read anything, or depend on the time or the machine.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
    int ranks, routines, outliers;
    uint64_t seed;
    double noise;
    bool exact;
    const char *out;
};

static uint64_t state;

static double uniform(void)                      /* [0, 1) */
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

static double normal(void)                       /* Box-Muller */
{
    double u = uniform(), v = uniform();
    return sqrt(-2 * log(1 - u)) * cos(6.283185307179586 * v);
}

/* v with relative noise (never below zero). */
static double noisy(const struct opts *o, double v)
{
    if (o->exact || v == 0)
        return v;
    double x = v * (1 + o->noise * normal());
    return x > 0 ? x : 0;
}

/* Rounded as the file prints it, so that the sums below hold. */
static double printed(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.7e", v);
    return strtod(b, NULL);
}

enum { MAIN, INIT, SOLVE, HALO, REDUCE, OUTPUT, FIXED };

struct routine {
    double net, mpi, io, elapsed;
    uint64_t count;
};

static void routine_name(char *b, size_t size, int r)
{
    static const char *const fixed[FIXED] = { "MAIN", "INIT", "SOLVE", "HALO",
                                              "REDUCE", "OUTPUT" };
    if (r < FIXED)
        snprintf(b, size, "%s", fixed[r]);
    else
        snprintf(b, size, "KERN%02d", r - FIXED + 1);
}

/* Which outlier rank k is, and which kernel it is slow in. */
static int outlier_rank(const struct opts *o, int k)
{
    return (int)(((uint64_t)k * 2654435761u + 17) % (uint64_t)o->ranks);
}

static int slow_routine(const struct opts *o, int p)
{
    for (int k = 0; k < o->outliers; k++)
        if (outlier_rank(o, k) == p)
            return o->routines > FIXED ? FIXED + k % (o->routines - FIXED)
                                       : SOLVE;
    return -1;
}

static bool io_rank(int p) { return p % 64 == 0; }
static bool boundary_rank(const struct opts *o, int p)
{
    int side = (int)sqrt((double)o->ranks);
    return side > 1 && (p % side == 0 || p % side == side - 1);
}

enum { ITERS = 500 };

/* The routines of rank p. */
static void make_rank(const struct opts *o, int p, struct routine *rt,
                      double *outside, double *uninst, double *startup,
                      double *overhead)
{
    memset(rt, 0, (size_t)o->routines * sizeof *rt);
    int slow = slow_routine(o, p);
    double factor = slow >= 0 ? 1.3 + 0.5 * ((double)(p % 7) / 6) : 1;
    double solve = boundary_rank(o, p) ? 30 : 40;
    rt[INIT].net = noisy(o, 0.8);
    rt[INIT].io = io_rank(p) ? noisy(o, 2.5) : noisy(o, 0.05);
    rt[SOLVE].net = noisy(o, solve * (slow == SOLVE ? factor : 1));
    double work = rt[SOLVE].net;
    for (int r = FIXED; r < o->routines; r++) {
        double base = 12.0 / (r - FIXED + 1);
        rt[r].net = noisy(o, base * (slow == r ? factor : 1));
        work += rt[r].net;
    }
    /* HALO waits for the neighbours: the interior ranks' work; REDUCE
     * waits for the slowest rank of the run, an outlier if any */
    double interior = 40 + 12 * (o->routines > FIXED ? 2.2 : 0);
    double halo_wait = interior > work ? interior - work : 0;
    rt[HALO].net = noisy(o, 0.3);
    rt[HALO].mpi = noisy(o, 1.5 + halo_wait);
    double slowest = o->outliers > 0 ? 0.8 * 12 : 0;
    rt[REDUCE].net = noisy(o, 0.1);
    rt[REDUCE].mpi = noisy(o, 0.4 + slowest * (slow >= 0 ? 0.1 : 1));
    rt[OUTPUT].net = noisy(o, 0.2);
    rt[OUTPUT].io = io_rank(p) ? noisy(o, 4.0) : 0;
    for (int r = 0; r < o->routines; r++) {
        rt[r].net = printed(rt[r].net + rt[r].io);  /* net holds own I/O */
        rt[r].mpi = printed(rt[r].mpi);
        rt[r].io = printed(rt[r].io);
        rt[r].elapsed = printed(rt[r].net + rt[r].mpi);
        rt[r].count = r == MAIN || r == INIT || r == OUTPUT ? 1 : ITERS;
    }
    rt[MAIN].net = printed(noisy(o, 0.05));
    double all = rt[MAIN].net;
    for (int r = 1; r < o->routines; r++)
        all += rt[r].elapsed;
    rt[MAIN].elapsed = printed(all);
    *outside = printed(noisy(o, 0.01));
    *uninst = printed(noisy(o, 0.3));
    *startup = printed(noisy(o, p == 0 ? 0.9 : 0.2));
    *overhead = printed(noisy(o, 0.02));
}

static void write_header(FILE *f, const struct opts *o)
{
    fprintf(f, "! kmtool KM_output 5\n! Program    : ./stencil\n"
            "! Started    : 2026-11-22 13:40:00\n! Written at : MPI_FINALIZE\n"
            "! Clock      : CLOCK_MONOTONIC\n"
            "! Overhead   : 2.05e-08 s per measured entry and exit, 4.10e-09 s "
            "per estimated one, 1.02e-08 s inside a measured region; taken "
            "out of every time\n! Ranks      : %d\n!\n", o->ranks);
}

/* Every rank's figures, for the Prediction section and the sections. */
struct figs {
    double total, net, mpi, io, outside, uninst, startup, overhead;
    uint64_t counts;
};

static struct figs rank_figs(const struct opts *o, const struct routine *rt,
                             double outside, double uninst, double startup,
                             double overhead)
{
    struct figs s = { .outside = outside, .uninst = uninst,
                      .startup = startup, .overhead = overhead };
    for (int r = 0; r < o->routines; r++) {
        s.net += rt[r].net;
        s.mpi += rt[r].mpi;
        s.io += rt[r].io;
        s.counts += rt[r].count;
    }
    s.total = s.net + s.mpi + startup + uninst + outside + overhead;
    return s;
}

static void write_locations(FILE *f, const struct routine *rt, int no, int r)
{
    char name[16];
    routine_name(name, sizeof name, r);
    int line = 100 * (r + 1);
    int nloc = 1 + (rt->mpi > 0) + (rt->io > 0);
    fprintf(f, "!\n! Routine %d %s, file %s.f90, line %d, %d locations\n"
            "!     No Kind    Line      Elapsed(s)     Counts  Est(%%) "
            "Statement\n", no, name, name, line, nloc);
    int k = 0;
    fprintf(f, "%8d %-5s %6d %15.7e %10llu %7.1f DO I = 1, N\n", ++k, "DO",
            line + 10, printed(0.9 * (rt->net - rt->io)),
            (unsigned long long)rt->count, 0.0);
    if (rt->mpi > 0)
        fprintf(f, "%8d %-5s %6d %15.7e %10llu %7.1f CALL MPI_%s(BUF, N, "
                "MPI_DOUBLE_PRECISION, IERR)\n", ++k, "MPI", line + 20,
                rt->mpi, (unsigned long long)rt->count, 0.0,
                r == HALO ? "SENDRECV" : "ALLREDUCE");
    if (rt->io > 0)
        fprintf(f, "%8d %-5s %6d %15.7e %10llu %7.1f %s(10, *) A\n", ++k, "IO",
                line + 30, rt->io, (unsigned long long)rt->count, 0.0,
                r == INIT ? "READ" : "WRITE");
}

/* ------------------------------------------------------------------------ */
/* The Timeline block (format 5)                                             */

enum { TL_COMP, TL_MPI, TL_IO, TL_OTHER, TL_NCAT, TL_TOP = 8, TL_SLOTS = 128 };

/* Where each part of rank p's time lies, as fractions of the time after
 * MPI_INIT returned: INIT first, OUTPUT last, the iterations between;
 * an outlier rank's slow kernel takes its extra time, and the others wait
 * for it in REDUCE, in the second half of the iterations only (the moment
 * it falls behind). */
struct span { double from, to; };

static void add_span(double *col, int slots, double w, double len,
                     struct span sp, double amount)
{
    double a = sp.from * len, b = sp.to * len;
    if (b <= a || amount == 0)
        return;
    for (int s = (int)(a / w); s < slots && s * w < b; s++) {
        double lo = s * w > a ? s * w : a, hi = (s + 1) * w < b ? (s + 1) * w : b;
        if (hi > lo)
            col[s + 1] += amount * (hi - lo) / (b - a);
    }
}

/* Whole nanoseconds adding up to `total` ns, each row its share. */
static void integerize(const double *col, int rows, long long total,
                       long long *out)
{
    double sum = 0, run = 0;
    for (int r = 0; r < rows; r++)
        sum += col[r];
    long long given = 0;
    for (int r = 0; r < rows; r++) {
        run += col[r];
        long long upto = r == rows - 1 ? total
                         : sum > 0 ? (long long)((double)total * run / sum + 0.5)
                         : 0;
        out[r] = upto - given;
        given = upto;
    }
}

static void write_timeline(FILE *f, const struct opts *o, int p,
                           const struct routine *rt, const struct figs *s)
{
    double len = s->total - s->startup;
    double w = 1e-3;
    while (TL_SLOTS * w < len)
        w *= 2;
    int slots = (int)ceil(len / w - 1e-9);
    if (slots < 1)
        slots = 1;
    int rows = slots + 1;
    /* the top routines by net time */
    int top[TL_TOP], ntop = 0;
    for (int k = 0; k < TL_TOP && k < o->routines; k++) {
        int best = -1;
        for (int r = 0; r < o->routines; r++) {
            bool taken = false;
            for (int j = 0; j < ntop; j++)
                taken |= top[j] == r;
            if (!taken && rt[r].net > 0 && (best < 0 || rt[r].net > rt[best].net))
                best = r;
        }
        if (best < 0)
            break;
        top[ntop++] = best;
    }
    double *col = calloc((size_t)(TL_NCAT + ntop) * (size_t)rows, sizeof *col);
    long long *ns = calloc((size_t)(TL_NCAT + ntop) * (size_t)rows, sizeof *ns);
    if (!col || !ns) {
        fputs("kmoutgen: out of memory\n", stderr);
        exit(1);
    }
    double a = (rt[INIT].net) / len, b = (rt[OUTPUT].net) / len;
    struct span init = { 0, a }, out = { 1 - b, 1 }, mid = { a, 1 - b };
    struct span late = { a + (1 - a - b) / 2, 1 - b };
    int slow = slow_routine(o, p);
    double factor = slow >= 0 ? 1.3 + 0.5 * ((double)(p % 7) / 6) : 1;
    for (int r = 0; r < o->routines; r++) {
        double comp = rt[r].net - rt[r].io;
        struct span where = r == INIT ? init : r == OUTPUT ? out : mid;
        double extra = r == slow ? comp * (factor - 1) / factor : 0;
        double parts[2] = { comp - extra, extra };
        for (int k = 0; k < 2; k++) {
            struct span sp = k ? late : where;
            add_span(col + TL_COMP * rows, slots, w, len, sp, parts[k]);
            for (int j = 0; j < ntop; j++)
                if (top[j] == r)
                    add_span(col + (TL_NCAT + j) * rows, slots, w, len, sp,
                             parts[k]);
        }
        add_span(col + TL_IO * rows, slots, w, len, where, rt[r].io);
        double wait = r == REDUCE && o->outliers > 0 && slow < 0
                      ? rt[r].mpi * 0.6 : 0;
        add_span(col + TL_MPI * rows, slots, w, len, where, rt[r].mpi - wait);
        add_span(col + TL_MPI * rows, slots, w, len, late, wait);
    }
    double other = s->outside + s->uninst + s->overhead;
    add_span(col + TL_OTHER * rows, slots, w, len, (struct span){ 0, 1 }, other);
    col[TL_OTHER * rows] = s->startup;
    long long total[TL_NCAT] = {
        llround((s->net - s->io) * 1e9), llround(s->mpi * 1e9),
        llround(s->io * 1e9), 0 };
    total[TL_OTHER] = llround(s->total * 1e9) - total[0] - total[1] - total[2];
    for (int c = 0; c < TL_NCAT + ntop; c++) {
        double sum = 0;
        for (int r = 0; r < rows; r++)
            sum += col[c * rows + r];
        integerize(col + c * rows, rows,
                   c < TL_NCAT ? total[c] : (long long)(sum * 1e9),
                   ns + c * rows);
    }
    fprintf(f, "!\n! ===== Timeline =====\n%-15d ! Slots\n"
            "%-15.7e ! Slot width (s)\n%-15.7e ! Origin (s after the start, "
            "MPI_INIT returned)\n%-15d ! Routines:", slots, w, s->startup,
            ntop);
    for (int j = 0; j < ntop; j++)
        fprintf(f, " %d", top[j] + 1);
    fputs("\n!   Slot Computation(ns) MPI(ns) IO(ns) Other(ns)", f);
    for (int j = 0; j < ntop; j++)
        fprintf(f, " R%d(ns)", top[j] + 1);
    fputc('\n', f);
    for (int r = 0; r < rows; r++) {
        if (r == 0)
            fprintf(f, "%8s", "before");
        else
            fprintf(f, "%8d", r - 1);
        for (int c = 0; c < TL_NCAT + ntop; c++)
            fprintf(f, " %lld", ns[c * rows + r]);
        fputc('\n', f);
    }
    free(col);
    free(ns);
}

static void write_rank(FILE *f, const struct opts *o, int p,
                       const struct routine *rt, const struct figs *s)
{
    char name[16];
    fprintf(f, "! ===== Rank %d =====\n", p);
    fprintf(f, "%04d %-10d ! Processors and Rank\n", o->ranks, p);
    fprintf(f, "%-15.7e ! Total time\n", s->total);
    fprintf(f, "%-15llu ! Counts of routines\n", (unsigned long long)s->counts);
    fprintf(f, "%-15llu ! Counts of time get function\n",
            (unsigned long long)(4 * s->counts));
    fprintf(f, "%-15.7e ! Time get function cost(1 call)\n", 2.1e-8);
    fprintf(f, "%-15.7e ! libkm overhead\n", s->overhead);
    fprintf(f, "%-15d ! Output counts by KM_writ\n", 1);
    fprintf(f, "%-15.7e ! MPI time\n", s->mpi);
    fprintf(f, "%-15.7e ! MPI start-up time\n", s->startup);
    fprintf(f, "%-15.7e ! I/O time\n", s->io);
    fprintf(f, "%-15.7e ! Time outside routines\n", s->outside);
    fprintf(f, "%-15.7e ! Time in uninstrumented routines\n", s->uninst);
    fprintf(f, "%-15.7e ! Estimated time\n", 0.0);
    fprintf(f, "%-15d ! Routines\n", o->routines);
    fprintf(f, "!     No Routine                   Elapsed(s)          Net(s)"
            "     Counts          MPI(s)           IO(s)  Est(%%)\n");
    for (int r = 0; r < o->routines; r++) {
        routine_name(name, sizeof name, r);
        fprintf(f, "%8d %-22s %15.7e %15.7e %10llu %15.7e %15.7e %7.1f\n",
                r + 1, name, rt[r].elapsed, rt[r].net,
                (unsigned long long)rt[r].count, rt[r].mpi, rt[r].io, 0.0);
    }
    fprintf(f, "!%7s %-22s %15s %15.7e %10llu %15.7e %15.7e %7.1f\n", "",
            "Total", "", s->net, (unsigned long long)s->counts, s->mpi, s->io,
            0.0);
    for (int r = 0; r < o->routines; r++)
        write_locations(f, &rt[r], r + 1, r);
    write_timeline(f, o, p, rt, s);
}

static void write_prediction(FILE *f, const struct opts *o, struct figs *all)
{
    fprintf(f, "! ===== Prediction =====\n! Times without MPI start-up "
            "(MPI_INIT) and libkm; ~ marks figures that contain estimates\n"
            "!   Rank        Total(s)     Start-up(s)          MPI(s)    "
            "Redundant(s)     Overhead(s)     Parallel(s)       Waited(s)\n");
    double min_r = INFINITY, sum_p = 0, max_t = 0;
    for (int p = 0; p < o->ranks; p++) {
        const struct figs *s = &all[p];
        double red = printed(s->outside + 0.8);
        double par = printed(s->total - s->startup - s->mpi - red - s->overhead);
        fprintf(f, "%8d %15.7e %15.7e %15.7e %15.7e %15.7e %15.7e %15.7e\n", p,
                s->total, s->startup, s->mpi, red, s->overhead, par, 0.0);
        min_r = red < min_r ? red : min_r;
        sum_p += par;
        double t = s->total - s->startup - s->overhead;
        max_t = t > max_t ? t : max_t;
    }
    double t1 = min_r + sum_p, speedup = max_t > 0 ? t1 / max_t : 0;
    fprintf(f, "%-15.7e ! Predicted one-PE time T_1pe\n", t1);
    fprintf(f, "%-15.7e ! Predicted speedup\n", speedup);
    fprintf(f, "%-15.7e ! Predicted parallel efficiency\n",
            speedup / o->ranks);
}

static void usage(void)
{
    fputs("usage: kmoutgen [--ranks N] [--routines R] [--seed S] "
          "[--noise F] [--outliers K] [--exact] [-o FILE]\n", stderr);
    exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--exact")) {
            o->exact = true;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--ranks"))
            o->ranks = atoi(v);
        else if (!strcmp(a, "--routines"))
            o->routines = atoi(v);
        else if (!strcmp(a, "--seed"))
            o->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--noise"))
            o->noise = atof(v);
        else if (!strcmp(a, "--outliers"))
            o->outliers = atoi(v);
        else if (!strcmp(a, "-o"))
            o->out = v;
        else
            usage();
    }
    if (o->ranks < 1 || o->routines < FIXED || o->routines > 99 ||
        o->outliers < -1 || !(o->noise >= 0))
        usage();
}

int main(int argc, char **argv)
{
    struct opts o = { .ranks = 1000, .routines = 12, .seed = 1,
                      .noise = 0.002, .outliers = -1 };
    parse(argc, argv, &o);
    if (o.outliers < 0)
        o.outliers = 2 + o.ranks / 5000;
    if (o.outliers > o.ranks)
        o.outliers = o.ranks;
    state = o.seed * 0x9E3779B97F4A7C15ull + 1;
    FILE *f = o.out ? fopen(o.out, "w") : stdout;
    if (!f) {
        perror(o.out);
        return 1;
    }
    struct routine *rt = calloc((size_t)o.ranks * (size_t)o.routines,
                                sizeof *rt);
    struct figs *all = calloc((size_t)o.ranks, sizeof *all);
    if (!rt || !all) {
        fputs("kmoutgen: out of memory\n", stderr);
        return 1;
    }
    for (int p = 0; p < o.ranks; p++) {
        double outside, uninst, startup, overhead;
        struct routine *r = rt + (size_t)p * o.routines;
        make_rank(&o, p, r, &outside, &uninst, &startup, &overhead);
        all[p] = rank_figs(&o, r, outside, uninst, startup, overhead);
    }
    write_header(f, &o);
    write_prediction(f, &o, all);
    for (int p = 0; p < o.ranks; p++)
        write_rank(f, &o, p, rt + (size_t)p * o.routines, &all[p]);
    fputs("! ===== End =====\n", f);
    free(rt);
    free(all);
    if (ferror(f) || (f != stdout && fclose(f))) {
        perror(o.out ? o.out : "stdout");
        return 1;
    }
    return 0;
}
