/*
 * kmoutgen.c — a large synthetic KM_output file (format 5), for
 * benchmarking kmview on tens of thousands of ranks.
 *
 *   kmoutgen [--ranks N] [--routines R] [--seed S] [--noise F]
 *            [--outliers K] [--exact] [--blocks LIST] [--monitors M]
 *            [--group G] [-o FILE]
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
 * --blocks LIST (comma-separated: threads, messages, peers, files, mpi-io;
 * `all`, the default, or `none`) adds the other blocks of format 5, each as
 * doc/KM_output.md fixes it and consistent with the figures above; with
 * `none` the file is byte for byte what kmoutgen wrote before these
 * blocks existed (the blocks draw no random numbers, so the routine
 * tables and timelines are the same whatever LIST says).
 *  - messages, peers: the ranks are a 2-D grid of sqrt(N) columns (the
 *    boundary ranks above are its first and last columns).  HALO's
 *    MPI_SENDRECV exchanges a column (8 x 384 B) with the left and right
 *    neighbours and a row (8 x 512 B) with the ones above and below, every
 *    iteration; REDUCE's MPI_ALLREDUCE reduces 8 B every iteration, its
 *    MPI_ALLTOALL (every 10th) sends 2 KiB to each rank of its node (G
 *    consecutive ranks, --group, default 8, itself included), and every
 *    50th iteration each rank sends a residual of 32 B (MPI_SEND) to each
 *    of M monitor ranks (--monitors, default 3; ranks k N / M), which
 *    receive them (MPI_RECV): the monitors' Peers blocks name every rank.
 *    So a rank has a few peers, a monitor N; every Sent has its Received
 *    on the peer's side, and each call site's bytes are its peers'.
 *    REDUCE's three call sites beyond MPI_ALLREDUCE are in its location
 *    block only when messages or peers are on.
 *  - files: input.nml (every rank: formatted reads, bytes `-`), mesh.dat
 *    (every rank: a formatted header then unformatted arrays, `>=`), the
 *    rank's own log.NNNNNN (formatted writes, `~`), rank 0's <stdout>
 *    (`-`, no size), and the I/O ranks' shared restart.bin (unformatted,
 *    exact); the files' times add up to the rank's I/O time.
 *  - mpi-io: the MPI-IO calls' files, bytes exact: every rank reads its
 *    part of the shared initial.dat (MPI_FILE_GET_SIZE, _SET_VIEW, three
 *    arrays by MPI_FILE_READ_AT_ALL; rank 0 its 512 B header first, by
 *    MPI_FILE_READ_AT), writes its part of the shared checkpoint.dat
 *    every 50th iteration (MPI_FILE_WRITE_AT_ALL of an array, then
 *    MPI_FILE_SYNC) and every 10th a probe of 96 B to its own
 *    probe.NNNNNN (opened on MPI_COMM_SELF, MPI_FILE_WRITE); rank 0 first
 *    deletes checkpoint.old (MPI_FILE_DELETE: a close, no size).  Their
 *    times are a twentieth of the rank's MPI time, so that they add up to
 *    less than it; the location tables do not name the calls (their time
 *    is in HALO's and REDUCE's MPI rows).
 *  - threads: every 16th rank (from rank 1) ran 4 OpenMP threads, the
 *    workers calling SOLVE as thread 0 does, a little unevenly.
 *
 * Must never: read anything, or depend on the time or the machine.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The blocks after the location blocks (--blocks). */
enum { B_THREADS = 1, B_MESSAGES = 2, B_PEERS = 4, B_FILES = 8, B_MPIIO = 16,
       B_ALL = 31 };

struct opts {
    int ranks, routines, outliers;
    uint64_t seed;
    double noise;
    bool exact;
    const char *out;
    unsigned blocks;
    int monitors, group;
};

/* Are REDUCE's extra MPI call sites in the source (messages or peers)? */
static bool comm_sites(const struct opts *o)
{
    return (o->blocks & (B_MESSAGES | B_PEERS)) != 0;
}

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

static void location_row(FILE *f, int k, const char *kind, int line,
                         double elapsed, uint64_t count, const char *text)
{
    fprintf(f, "%8d %-5s %6d %15.7e %10llu %7.1f %s\n", k, kind, line,
            elapsed, (unsigned long long)count, 0.0, text);
}

static void reduce_sites(FILE *f, const struct opts *o, int p,
                         const struct routine *rt, int line, int *k);

static void write_locations(FILE *f, const struct opts *o, int p,
                            const struct routine *rt, int no, int r)
{
    char name[16];
    routine_name(name, sizeof name, r);
    int line = 100 * (r + 1);
    bool sites = r == REDUCE && comm_sites(o);
    int nloc = 1 + (rt->mpi > 0) * (sites ? 4 : 1) + (rt->io > 0);
    fprintf(f, "!\n! Routine %d %s, file %s.f90, line %d, %d locations\n"
            "!     No Kind    Line      Elapsed(s)     Counts  Est(%%) "
            "Statement\n", no, name, name, line, nloc);
    int k = 0;
    location_row(f, ++k, "DO", line + 10, printed(0.9 * (rt->net - rt->io)),
                 rt->count, "DO I = 1, N");
    if (sites && rt->mpi > 0)
        reduce_sites(f, o, p, rt, line, &k);
    else if (rt->mpi > 0)
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
/* Messages and Peers: who talks to whom (see the top of this file)          */

enum {
    HALO_X_BYTES = 8 * 384,  /* a column, to the left and right */
    HALO_Y_BYTES = 8 * 512,  /* a row, up and down */
    REDUCE_BYTES = 8,
    A2A_EVERY = 10, A2A_BYTES = 2048,
    RES_EVERY = 50, RES_BYTES = 32,
    MSG_BINS = 48,
};

static int grid_side(const struct opts *o)
{
    int side = (int)sqrt((double)o->ranks);
    return side > 1 ? side : 1;
}

/* Rank p's neighbours in the grid, in rank order, and the bytes of one
 * halo message to each; how many. */
static int neighbours(const struct opts *o, int p, int rank[4],
                      uint64_t bytes[4])
{
    int side = grid_side(o), col = p % side, n = 0;
    int cand[4] = { p - side, col > 0 ? p - 1 : -1,
                    col < side - 1 ? p + 1 : -1, p + side };
    uint64_t size[4] = { HALO_Y_BYTES, HALO_X_BYTES, HALO_X_BYTES,
                         HALO_Y_BYTES };
    if (side == 1)                        /* a column: only up and down */
        cand[1] = cand[2] = -1;
    for (int k = 0; k < 4; k++)
        if (cand[k] >= 0 && cand[k] < o->ranks) {
            rank[n] = cand[k];
            bytes[n++] = size[k];
        }
    return n;
}

static int monitor_rank(const struct opts *o, int k)
{
    return (int)((int64_t)k * o->ranks / o->monitors);
}

static bool is_monitor(const struct opts *o, int p)
{
    for (int k = 0; k < o->monitors; k++)
        if (monitor_rank(o, k) == p)
            return true;
    return false;
}

/* The ranks of p's node: its all-to-all's communicator. */
static int node_first(const struct opts *o, int p) { return p / o->group * o->group; }
static int node_end(const struct opts *o, int p)
{
    int end = node_first(o, p) + o->group;
    return end < o->ranks ? end : o->ranks;
}

/* The residuals rank p sends (to the monitors but itself) and receives
 * (from every other rank, on a monitor), over the run. */
static uint64_t residuals_sent(const struct opts *o, int p)
{
    return (uint64_t)(ITERS / RES_EVERY) * (uint64_t)(o->monitors - is_monitor(o, p));
}

static uint64_t residuals_received(const struct opts *o, int p)
{
    return is_monitor(o, p) ? (uint64_t)(ITERS / RES_EVERY) * (uint64_t)(o->ranks - 1)
                            : 0;
}

/* REDUCE's MPI call sites in its location block: the MPI time shared
 * among them (on a monitor, receiving takes a share of its own). */
static void reduce_sites(FILE *f, const struct opts *o, int p,
                         const struct routine *rt, int line, int *k)
{
    bool mon = is_monitor(o, p);
    double share[4] = { 0.6, mon ? 0.25 : 0.3, mon ? 0.05 : 0.1,
                        mon ? 0.1 : 0 };
    location_row(f, ++*k, "MPI", line + 20, printed(share[0] * rt->mpi),
                 rt->count, "CALL MPI_ALLREDUCE(BUF, N, MPI_DOUBLE_PRECISION, IERR)");
    location_row(f, ++*k, "MPI", line + 30, printed(share[1] * rt->mpi),
                 rt->count / A2A_EVERY, "CALL MPI_ALLTOALL(SBUF, 256, "
                 "MPI_DOUBLE_PRECISION, RBUF, 256, MPI_DOUBLE_PRECISION, "
                 "NODE_COMM, IERR)");
    location_row(f, ++*k, "MPI", line + 40, printed(share[2] * rt->mpi),
                 residuals_sent(o, p), "CALL MPI_SEND(RES, 4, "
                 "MPI_DOUBLE_PRECISION, MONITOR(K), 7, MPI_COMM_WORLD, IERR)");
    location_row(f, ++*k, "MPI", line + 50, printed(share[3] * rt->mpi),
                 residuals_received(o, p), "CALL MPI_RECV(RES, 4, "
                 "MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, "
                 "STAT, IERR)");
}

/* What one call site moved on a rank. */
struct site {
    const char *region;      /* "4.2": routine number, location number */
    int routine, line;
    uint64_t messages, sent, received;
    uint64_t bins[MSG_BINS];
};

static int bin_of(uint64_t bytes)
{
    int b = 0;
    while (bytes > 0 && b < MSG_BINS - 1) {
        bytes >>= 1;
        b++;
    }
    return b;
}

static void site_add(struct site *s, uint64_t n, uint64_t bytes, bool sent)
{
    s->messages += n;
    *(sent ? &s->sent : &s->received) += n * bytes;
    s->bins[bin_of(bytes)] += n;
}

static void site_row(FILE *f, const struct site *s)
{
    char name[16];
    routine_name(name, sizeof name, s->routine);
    fprintf(f, "%10s %-22s %-5s %6d %12llu %16llu %16llu", s->region, name,
            "MPI", s->line, (unsigned long long)s->messages,
            (unsigned long long)s->sent, (unsigned long long)s->received);
    for (int b = 0; b < MSG_BINS; b++)
        if (s->bins[b])
            fprintf(f, " %d:%llu", b, (unsigned long long)s->bins[b]);
    fputc('\n', f);
}

/* The Messages block: HALO's MPI_SENDRECV (location 2 of routine 4),
 * then REDUCE's sites (locations 2 to 5 of routine 5) that moved bytes. */
static void write_messages(FILE *f, const struct opts *o, int p,
                           const struct routine *rt)
{
    struct site s[5] = {
        { "4.2", HALO, 100 * (HALO + 1) + 20, 0, 0, 0, { 0 } },
        { "5.2", REDUCE, 100 * (REDUCE + 1) + 20, 0, 0, 0, { 0 } },
        { "5.3", REDUCE, 100 * (REDUCE + 1) + 30, 0, 0, 0, { 0 } },
        { "5.4", REDUCE, 100 * (REDUCE + 1) + 40, 0, 0, 0, { 0 } },
        { "5.5", REDUCE, 100 * (REDUCE + 1) + 50, 0, 0, 0, { 0 } },
    };
    int rank[4];
    uint64_t bytes[4];
    int nn = neighbours(o, p, rank, bytes);
    for (int k = 0; k < nn; k++) {
        site_add(&s[0], ITERS, bytes[k], true);
        site_add(&s[0], ITERS, bytes[k], false);
    }
    site_add(&s[1], ITERS, REDUCE_BYTES, true);
    site_add(&s[2], ITERS / A2A_EVERY, A2A_BYTES, true);
    site_add(&s[3], residuals_sent(o, p), RES_BYTES, true);
    site_add(&s[4], residuals_received(o, p), RES_BYTES, false);
    /* a routine without MPI time (--noise past reason) has no call site */
    for (int k = 0; k < 5; k++)
        if (rt[s[k].routine].mpi <= 0)
            s[k].messages = 0;
    int sites = 0;
    for (int k = 0; k < 5; k++)
        sites += s[k].messages > 0;
    if (!sites)
        return;
    fprintf(f, "!\n! ===== Messages =====\n%-15d ! Call sites\n"
            "!%9s %-22s %-5s %6s %12s %16s %16s %s\n", sites, "Region",
            "Routine", "Kind", "Line", "Messages", "Sent(B)", "Received(B)",
            "Sizes(bin:messages)");
    for (int k = 0; k < 5; k++)
        if (s[k].messages)
            site_row(f, &s[k]);
}

/* A row of the Peers block: [0] sent, [1] received point to point, [2]
 * sent in all-to-alls. */
struct peer {
    int peer;
    uint64_t messages[3], bytes[3];
};

static int by_peer(const void *a, const void *b)
{
    int x = ((const struct peer *)a)->peer, y = ((const struct peer *)b)->peer;
    return (x > y) - (x < y);
}

static void peer_add(struct peer *v, size_t *n, int peer, int col,
                     uint64_t messages, uint64_t bytes)
{
    if (!messages)
        return;
    struct peer x = { .peer = peer };
    x.messages[col] = messages;
    x.bytes[col] = messages * bytes;
    v[(*n)++] = x;
}

/* Rank p's peers, in rank order, into v (room for ranks + group +
 * monitors + 4); how many.  A monitor's row names every rank, so the
 * work is proportional to the peers. */
static size_t rank_peers(const struct opts *o, int p, struct peer *v)
{
    size_t n = 0;
    int rank[4];
    uint64_t bytes[4];
    int nn = neighbours(o, p, rank, bytes);
    for (int k = 0; k < nn; k++) {
        peer_add(v, &n, rank[k], 0, ITERS, bytes[k]);
        peer_add(v, &n, rank[k], 1, ITERS, bytes[k]);
    }
    for (int q = node_first(o, p); q < node_end(o, p); q++)
        peer_add(v, &n, q, 2, ITERS / A2A_EVERY, A2A_BYTES);
    for (int k = 0; k < o->monitors; k++)
        if (monitor_rank(o, k) != p)
            peer_add(v, &n, monitor_rank(o, k), 0, ITERS / RES_EVERY,
                     RES_BYTES);
    if (is_monitor(o, p))
        for (int q = 0; q < o->ranks; q++)
            if (q != p)
                peer_add(v, &n, q, 1, ITERS / RES_EVERY, RES_BYTES);
    qsort(v, n, sizeof *v, by_peer);
    size_t m = 0;                         /* one row per peer */
    for (size_t k = 0; k < n; k++) {
        if (m > 0 && v[m - 1].peer == v[k].peer) {
            for (int c = 0; c < 3; c++) {
                v[m - 1].messages[c] += v[k].messages[c];
                v[m - 1].bytes[c] += v[k].bytes[c];
            }
        } else {
            v[m++] = v[k];
        }
    }
    return m;
}

static void write_peers(FILE *f, const struct opts *o, int p, struct peer *buf)
{
    size_t n = rank_peers(o, p, buf);
    if (!n)
        return;
    fprintf(f, "!\n! ===== Peers =====\n%-15zu ! Peers\n"
            "!%9s %14s %16s %14s %16s %14s %16s\n", n, "Peer", "Sent(msgs)",
            "Sent(B)", "Received(msgs)", "Received(B)", "Alltoall(msgs)",
            "Alltoall(B)");
    for (size_t k = 0; k < n; k++) {
        fprintf(f, "%10d", buf[k].peer);
        for (int c = 0; c < 3; c++)
            fprintf(f, " %14llu %16llu", (unsigned long long)buf[k].messages[c],
                    (unsigned long long)buf[k].bytes[c]);
        fputc('\n', f);
    }
}

/* ------------------------------------------------------------------------ */
/* Files: what the measured I/O statements did (see the top of this file)   */

enum { ARRAY_BYTES = 8 * 512 * 384, LOG_LINE = 72, FILE_ROWS = 5 };

/* One row of the Files block; its times are shares of the rank's I/O
 * time, in proportion to the weights. */
struct file_row {
    unsigned meta[5];        /* opens, closes, inquiries, seeks, flushes */
    unsigned reads, writes;
    double w[3];             /* weights of the metadata, read, write time */
    double t[3];             /* the times */
    char read_b[32], write_b[32], size[32], name[32];
};

static int rank_files(const struct opts *o, int p, struct file_row *v)
{
    int n = 0;
    v[n++] = (struct file_row){ { 1, 1, 1, 0, 0 }, 24, 0, { 1, 2, 0 },
                                { 0 }, "-", "0", "1843", "input.nml" };
    struct file_row mesh = { { 2, 2, 0, 1, 0 }, 4, 0, { 1, 10, 0 }, { 0 },
                             "", "0", "", "mesh.dat" };
    snprintf(mesh.read_b, sizeof mesh.read_b, ">=%d", 3 * ARRAY_BYTES);
    snprintf(mesh.size, sizeof mesh.size, "%lld",
             (long long)o->ranks * 3 * ARRAY_BYTES + 80);
    v[n++] = mesh;
    int lines = ITERS / 10 + 2;
    struct file_row log = { { 1, 1, 0, 0, ITERS / 50 }, 0, (unsigned)lines,
                            { 1, 0, 2 }, { 0 }, "0", "", "", "" };
    snprintf(log.write_b, sizeof log.write_b, "~%d", lines * LOG_LINE);
    snprintf(log.size, sizeof log.size, "%d", lines * LOG_LINE);
    snprintf(log.name, sizeof log.name, "log.%06d", p);
    v[n++] = log;
    if (p == 0)
        v[n++] = (struct file_row){ { 0 }, 0, 12, { 0, 0, 0.5 }, { 0 }, "0",
                                    "-", "-", "<stdout>" };
    if (io_rank(p)) {
        long long part = 3LL * ARRAY_BYTES * 64;
        struct file_row rst = { { 1, 1, 0, 0, 1 }, 0, 3, { 2, 0, 40 }, { 0 },
                                "0", "", "", "restart.bin" };
        snprintf(rst.write_b, sizeof rst.write_b, "%lld", part);
        snprintf(rst.size, sizeof rst.size, "%lld",
                 part * ((o->ranks + 63) / 64));
        v[n++] = rst;
    }
    return n;
}

/* Share `io` seconds among the rows' times by their weights, each as
 * printed, the last one taking what rounding left, so that they add up
 * to `io`: the rank's I/O time (Files), a share of its MPI time (MPI-IO). */
static void share_time(struct file_row *v, int n, double io)
{
    double sum = 0, given = 0;
    double *last = NULL;
    for (int k = 0; k < n; k++)
        for (int c = 0; c < 3; c++)
            sum += v[k].w[c];
    for (int k = 0; k < n; k++)
        for (int c = 0; c < 3; c++)
            if (v[k].w[c] > 0) {
                v[k].t[c] = printed(io * v[k].w[c] / sum);
                given += v[k].t[c];
                last = &v[k].t[c];
            }
    if (last) {
        double rest = *last + io - given;
        *last = printed(rest > 0 ? rest : 0);
    }
}

/* The Files or the MPI-IO block (`block`) of the rows. */
static void write_file_block(FILE *f, const char *block,
                             const struct file_row *v, int n)
{
    fprintf(f, "!\n! ===== %s =====\n%-15d ! Files\n"
            "!%6s %7s %7s %7s %7s %15s %9s %15s %14s %9s %15s %14s %14s %s\n",
            block, n, "Opens", "Closes", "Inquire", "Seeks", "Flushes",
            "Meta(s)", "Reads", "Read(s)", "Read(B)", "Writes", "Write(s)",
            "Write(B)", "Size(B)", "File");
    for (int k = 0; k < n; k++) {
        const struct file_row *x = &v[k];
        fprintf(f, "%7u %7u %7u %7u %7u %15.7e %9u %15.7e %14s %9u %15.7e "
                "%14s %14s %s\n", x->meta[0], x->meta[1], x->meta[2],
                x->meta[3], x->meta[4], x->t[0], x->reads, x->t[1],
                x->read_b, x->writes, x->t[2], x->write_b, x->size, x->name);
    }
}

static void write_files(FILE *f, const struct opts *o, int p, double io)
{
    struct file_row v[FILE_ROWS];
    int n = rank_files(o, p, v);
    share_time(v, n, io);
    write_file_block(f, "Files", v, n);
}

/* ------------------------------------------------------------------------ */
/* MPI-IO: what the measured MPI_FILE_ calls did (see the top of this file) */

enum { MPIIO_ROWS = 4, HEADER_BYTES = 512, PROBE_EVERY = 10, PROBE_BYTES = 96,
       CHECKPOINT_EVERY = 50 };

static const double MPIIO_SHARE = 0.05;  /* of the rank's MPI time */

static int rank_mpiio(const struct opts *o, int p, struct file_row *v)
{
    int n = 0;
    if (p == 0)
        v[n++] = (struct file_row){ { 0, 1, 0, 0, 0 }, 0, 0, { 0.5, 0, 0 },
                                    { 0 }, "0", "0", "-", "checkpoint.old" };
    struct file_row init = { { 1, 1, 1, 1, 0 }, 3 + (p == 0), 0, { 1, 6, 0 },
                             { 0 }, "", "0", "", "initial.dat" };
    snprintf(init.read_b, sizeof init.read_b, "%lld",
             3LL * ARRAY_BYTES + (p == 0) * HEADER_BYTES);
    snprintf(init.size, sizeof init.size, "%lld",
             (long long)o->ranks * 3 * ARRAY_BYTES + HEADER_BYTES);
    v[n++] = init;
    int checkpoints = ITERS / CHECKPOINT_EVERY;
    struct file_row ckpt = { { 1, 1, 0, 1, (unsigned)checkpoints }, 0,
                             (unsigned)checkpoints, { 3, 0, 12 }, { 0 }, "0",
                             "", "", "checkpoint.dat" };
    snprintf(ckpt.write_b, sizeof ckpt.write_b, "%lld",
             (long long)checkpoints * ARRAY_BYTES);
    snprintf(ckpt.size, sizeof ckpt.size, "%lld",
             (long long)o->ranks * ARRAY_BYTES);
    v[n++] = ckpt;
    int probes = ITERS / PROBE_EVERY;
    struct file_row probe = { { 1, 1, 0, 0, 0 }, 0, (unsigned)probes,
                              { 0.2, 0, 0.8 }, { 0 }, "0", "", "", "" };
    snprintf(probe.write_b, sizeof probe.write_b, "%d", probes * PROBE_BYTES);
    snprintf(probe.size, sizeof probe.size, "%d", probes * PROBE_BYTES);
    snprintf(probe.name, sizeof probe.name, "probe.%06d", p);
    v[n++] = probe;
    return n;
}

static void write_mpiio(FILE *f, const struct opts *o, int p, double mpi)
{
    struct file_row v[MPIIO_ROWS];
    int n = rank_mpiio(o, p, v);
    share_time(v, n, MPIIO_SHARE * mpi);
    write_file_block(f, "MPI-IO", v, n);
}

/* ------------------------------------------------------------------------ */
/* Threads: every 16th rank, from rank 1, ran 4 OpenMP threads              */

enum { THREADS = 4 };

static bool threaded_rank(int p) { return p % 16 == 1; }

/* Thread k's (k >= 1) SOLVE: its calls took a little more or less than
 * thread 0's. */
static double worker_solve(const struct routine *rt, int k)
{
    return printed(rt[SOLVE].elapsed * (0.96 + 0.02 * k));
}

static void thread_row(FILE *f, int k, double total, double net,
                       uint64_t counts, double mpi, double outside,
                       double overhead)
{
    fprintf(f, "%8d %6d %16.7e %16.7e %12llu %16.7e %16.7e %16.7e %7.1f\n",
            k, k, total, net, (unsigned long long)counts, mpi, outside,
            overhead, 0.0);
}

static void write_threads(FILE *f, const struct routine *rt,
                          const struct figs *s)
{
    fprintf(f, "!\n! ===== Threads =====\n%-15d ! Threads\n"
            "!%7s %6s %16s %16s %12s %16s %16s %16s %7s\n", THREADS, "Thread",
            "OMP", "Total(s)", "Net(s)", "Counts", "MPI(s)", "Outside(s)",
            "Overhead(s)", "Est(%)");
    thread_row(f, 0, s->total, s->net, s->counts, s->mpi, s->outside,
               s->overhead);
    /* the workers start in MAIN's parallel region, after MPI_INIT; what
     * they do not spend in SOLVE they wait for work (outside routines) */
    double total = printed(s->total - s->startup);
    double overhead = printed(2 * ITERS * 2.05e-8);
    double min = INFINITY, max = 0, sum = 0;
    for (int k = 1; k < THREADS; k++) {
        double net = worker_solve(rt, k);
        thread_row(f, k, total, net, ITERS, 0,
                   printed(total - net - overhead), overhead);
        min = net < min ? net : min;
        max = net > max ? net : max;
        sum += net;
    }
    double mean = sum / (THREADS - 1);
    fprintf(f, "!\n! Regions run by threads other than 0, over the threads "
            "that ran them\n!%9s %-22s %-5s %6s %7s %12s %16s %16s %16s %8s "
            "%s\n", "Region", "Routine", "Kind", "Line", "Threads", "Counts",
            "Min(s)", "Mean(s)", "Max(s)", "Imbal(%)", "Statement");
    fprintf(f, "%10d %-22s %-5s %6d %7d %12d %16.7e %16.7e %16.7e %8.1f\n",
            SOLVE + 1, "SOLVE", "ROUT", 100 * (SOLVE + 1), THREADS - 1,
            (THREADS - 1) * ITERS, min, mean, max, 100 * (max - mean) / max);
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

/* The routine columns and the computation are each rounded to whole
 * nanoseconds on their own, so a row's routines could hold a nanosecond
 * more than its computation, which the format forbids: the largest
 * routine columns give it back. */
static void fit_routine_columns(long long *ns, int rows, int ntop, int r)
{
    long long excess = -ns[TL_COMP * rows + r];
    for (int j = 0; j < ntop; j++)
        excess += ns[(TL_NCAT + j) * rows + r];
    while (excess > 0) {
        long long *big = NULL;
        for (int j = 0; j < ntop; j++) {
            long long *x = &ns[(TL_NCAT + j) * rows + r];
            if (!big || *x > *big)
                big = x;
        }
        long long take = excess < *big ? excess : *big;
        *big -= take;
        excess -= take;
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
    for (int r = 0; r < rows; r++)
        fit_routine_columns(ns, rows, ntop, r);
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
                       const struct routine *rt, const struct figs *s,
                       struct peer *peers)
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
        write_locations(f, o, p, &rt[r], r + 1, r);
    if ((o->blocks & B_THREADS) && threaded_rank(p))
        write_threads(f, rt, s);
    if (o->blocks & B_MESSAGES)
        write_messages(f, o, p, rt);
    if (o->blocks & B_PEERS)
        write_peers(f, o, p, peers);
    if (o->blocks & B_FILES)
        write_files(f, o, p, s->io);
    if (o->blocks & B_MPIIO)
        write_mpiio(f, o, p, s->mpi);
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
          "[--noise F] [--outliers K] [--exact]\n"
          "                [--blocks all|none|threads,messages,peers,files,mpi-io]\n"
          "                [--monitors M] [--group G] [-o FILE]\n", stderr);
    exit(2);
}

/* "all", "none", or names of blocks separated by commas. */
static unsigned parse_blocks(const char *v)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        { "all", B_ALL }, { "none", 0 }, { "threads", B_THREADS },
        { "messages", B_MESSAGES }, { "peers", B_PEERS }, { "files", B_FILES },
        { "mpi-io", B_MPIIO },
    };
    unsigned bits = 0;
    while (*v) {
        size_t len = strcspn(v, ",");
        size_t k = 0;
        while (k < sizeof names / sizeof *names &&
               (strlen(names[k].name) != len ||
                strncmp(names[k].name, v, len) != 0))
            k++;
        if (k == sizeof names / sizeof *names)
            usage();
        bits |= names[k].bit;
        v += len + (v[len] == ',');
    }
    return bits;
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
        else if (!strcmp(a, "--blocks"))
            o->blocks = parse_blocks(v);
        else if (!strcmp(a, "--monitors"))
            o->monitors = atoi(v);
        else if (!strcmp(a, "--group"))
            o->group = atoi(v);
        else
            usage();
    }
    if (o->ranks < 1 || o->routines < FIXED || o->routines > 99 ||
        o->outliers < -1 || !(o->noise >= 0) || o->monitors < 0 ||
        o->group < 1)
        usage();
}

int main(int argc, char **argv)
{
    struct opts o = { .ranks = 1000, .routines = 12, .seed = 1,
                      .noise = 0.002, .outliers = -1, .blocks = B_ALL,
                      .monitors = 3, .group = 8 };
    parse(argc, argv, &o);
    if (o.outliers < 0)
        o.outliers = 2 + o.ranks / 5000;
    if (o.outliers > o.ranks)
        o.outliers = o.ranks;
    if (o.monitors > o.ranks)
        o.monitors = o.ranks;
    state = o.seed * 0x9E3779B97F4A7C15ull + 1;
    FILE *f = o.out ? fopen(o.out, "w") : stdout;
    if (!f) {
        perror(o.out);
        return 1;
    }
    struct routine *rt = calloc((size_t)o.ranks * (size_t)o.routines,
                                sizeof *rt);
    struct figs *all = calloc((size_t)o.ranks, sizeof *all);
    /* a rank's peers: its neighbours, node, the monitors; a monitor's all */
    struct peer *peers = calloc((size_t)o.ranks + (size_t)o.group +
                                (size_t)o.monitors + 8, sizeof *peers);
    if (!rt || !all || !peers) {
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
        write_rank(f, &o, p, rt + (size_t)p * o.routines, &all[p], peers);
    fputs("! ===== End =====\n", f);
    free(rt);
    free(all);
    free(peers);
    if (ferror(f) || (f != stdout && fclose(f))) {
        perror(o.out ? o.out : "stdout");
        return 1;
    }
    return 0;
}
