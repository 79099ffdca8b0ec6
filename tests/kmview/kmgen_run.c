/*
 * kmgen_run.c — kmgen's run of known content: small helpers, the run's
 * figures drawn from a seeded generator (make_run), its sums per rank,
 * and what the Prediction, Threads, Messages and Peers blocks hold,
 * computed once here for both the writer and the expectations.
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
/* Small helpers                                                             */

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fputs("kmgen: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

uint64_t rng_state;

static double uniform(void)                      /* [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* v as KM_output prints it (%.7e), read back. */
double printed(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.7e", v);
    return strtod(b, NULL);
}

/* The shortest text that reads back as v ("" for NaN). */
const char *num(char b[40], double v)
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

const char *const kinds[] = { "DO", "CALL", "MPI", "IO", "USER" };
/* v as an Est(%) column prints it (one decimal), read back. */
double printed1(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.1f", v);
    return strtod(b, NULL);
}

/* a - b, never below 0 (as kmview takes version 1's start-up out) */
double less(double a, double b)
{
    return a > b ? a - b : 0;
}

static bool absent(const struct gen *g, int p, int r)
{
    return g->n > 1 && r % 5 == 3 && p % 3 == 0;
}

/* SUB0001's third location is CALL MPI_INIT: MPI start-up. */
bool is_init(const struct gen *g, int r, int k)
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

void make_run(struct gen *g)
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

void free_run(struct gen *g)
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

void routine_name(char *b, size_t size, int r)
{
    snprintf(b, size, "SUB%04d", r + 1);
}

/* Location k of routine r: kind, line, statement (with characters CSV and
 * the reader must handle: commas, quotes, '!', a second location of the
 * same kind on the same line). */
int loc_kind(int k) { return k % 5; }
int loc_line(int r, int k) { return 10 * (r + 1) + (k == 5 ? 0 : k); }
void loc_text(char *b, size_t size, int r, int k)
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

struct rank_sums sums(const struct gen *g, int p)
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
bool mpi_est(const struct rank_sums *s) { return s->est & E_MPI; }
bool io_est(const struct rank_sums *s) { return s->est & E_IO; }
bool uninst_est(const struct gen *g, const struct rank_sums *s, int p)
{
    return g->version >= 2 && s->plus && p % 2 == 0;
}


/* ------------------------------------------------------------------------ */
/* The Prediction rows                                                       */

/* Does this run's Prediction row have column k (version 1: T, C, R, P)? */
bool pred_has(const struct gen *g, int k)
{
    if (k == PR_S)
        return g->version >= 2;
    if (k == PR_O || k == PR_W)
        return g->version >= 2 && !g->old_prediction;
    return true;
}

/* The prediction row of rank p (NaN where the run has no such column)
 * and its marks. */
void prediction_row(const struct gen *g, int p, double v[NPR],
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

/* ---- threads (--threads T) ------------------------------------------------ */

const char *const tf_key[NTF] = { "total", "net", "mpi", "outside",
                                  "overhead" };

/* Thread k of rank p. */
struct trow thread_row(const struct gen *g, int p, int k)
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

/* Table row `no` (its routine, loc 0, or its first location, loc 1) over
 * the threads of rank p. */
struct treg thread_region(const struct gen *g, int p, int no, int loc)
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
int table_routine(const struct gen *g, int p, int no)
{
    int seen = 0;
    for (int k = 0; k < g->nr; k++) {
        int r = (k + p) % g->nr;
        if (g->present[(size_t)p * g->nr + r] && ++seen == no)
            return r;
    }
    return -1;
}

int thread_rows_of(const struct gen *g, int p)
{
    int n = 0;
    while (n < 3 && table_routine(g, p, n + 1) >= 0)
        n++;
    return n;
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

static void site_add(struct site_row *s, uint64_t bytes, uint64_t n)
{
    s->messages += n;
    s->bins[size_bin(bytes)] += n;
}

/* The sites of rank p, in the order written; how many. */
int sites_of(const struct gen *g, int p, struct site_row out[3])
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
int peers_of(const struct gen *g, int p, struct peer_row *out)
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
