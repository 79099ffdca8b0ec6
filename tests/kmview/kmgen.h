/*
 * kmgen.h — what the parts of kmgen share: the run of known content
 * (struct gen) and the figures derived from it, which both the writer of
 * KM_output (kmgen_write.c) and the expectations (kmgen_expect.c) read
 * from kmgen_run.c; and the entry points kmgen.c calls.  See kmgen.c for
 * the command and why it must never include kmview's code.
 */
#ifndef KMGEN_H
#define KMGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A routine cell's estimate marks, as bits of kmview's est mask (1 << its
 * metric: elapsed 0, net 1, MPI 3, I/O 4). */
enum { E_EL = 1, E_NET = 2, E_MPI = 8, E_IO = 16 };

/* A run of known content: every figure of every rank, routine and
 * location, as written (see kmgen_run.c). */
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

/* A rank's sums over its routine table. */
struct rank_sums {
    double net, mpi, mpi_file, io, total, overhead, est_time, net_pct;
    uint64_t counts;
    bool plus;
    unsigned est;            /* every cell's marks */
    int routines;
};

/* The columns of a Prediction row, as version 2 writes them. */
enum { PR_T, PR_S, PR_C, PR_R, PR_O, PR_P, PR_W, NPR };

/* A Threads block (--threads T): a thread's row, and a region's row over
 * the threads that ran it. */
enum { NTF = 5 };                    /* total, net, MPI, outside, overhead */

struct trow {
    int omp;
    double v[NTF];
    bool est[NTF];
    uint64_t count;
    bool plus;
    double pct;
};

struct treg {
    int threads;
    uint64_t count;
    double min, mean, max, imbal;
    bool est;
};

/* Messages and Peers blocks (--messages, --alltoall). */
enum { NPC = 6 };            /* a peer row: sent, received, all-to-all */
struct peer_row {
    int peer;
    uint64_t v[NPC];         /* messages, bytes of each part */
};

/* What one call site of a rank moved. */
struct site_row {
    int r;                   /* its routine; its location is the third */
    uint64_t messages, sent, received;
    uint64_t bins[48];
};

/* The header figures of a rank, as kmview exports them (kmgen_expect.c). */
#define NFIGS 13
enum { F_TOTAL = 0, F_OVERHEAD = 4, F_MPI = 6, F_STARTUP = 7, F_IO = 8,
       F_OUTSIDE = 9, F_UNINST = 10, F_EST = 11 };

/* The ranks whose results were not lost. */
struct live {
    int n;
    int *rank;
};

/* kmgen_run.c: small helpers */
extern uint64_t rng_state;          /* the run's random numbers (--seed) */
void *xcalloc(size_t n, size_t size);
double printed(double v);
const char *num(char b[40], double v);
double printed1(double v);
double less(double a, double b);

/* kmgen_run.c: the run, and the figures derived from it */
extern const char *const kinds[];   /* a location's kind, by loc_kind */
extern const char *const tf_key[NTF];
bool is_init(const struct gen *g, int r, int k);
void routine_name(char *b, size_t size, int r);
int loc_kind(int k);
int loc_line(int r, int k);
void loc_text(char *b, size_t size, int r, int k);
void make_run(struct gen *g);
void free_run(struct gen *g);
struct rank_sums sums(const struct gen *g, int p);
bool mpi_est(const struct rank_sums *s);
bool io_est(const struct rank_sums *s);
bool uninst_est(const struct gen *g, const struct rank_sums *s, int p);
bool pred_has(const struct gen *g, int k);
void prediction_row(const struct gen *g, int p, double v[NPR], bool e[NPR]);
struct trow thread_row(const struct gen *g, int p, int k);
struct treg thread_region(const struct gen *g, int p, int no, int loc);
int table_routine(const struct gen *g, int p, int no);
int thread_rows_of(const struct gen *g, int p);
int sites_of(const struct gen *g, int p, struct site_row out[3]);
int peers_of(const struct gen *g, int p, struct peer_row *out);

/* kmgen_write.c: KM_output; pred: the predicted T_1pe, speedup and
 * efficiency as written, pred_est: marked estimated */
extern const char overhead_line[];
extern const char no_prediction_note[];
void write_run(FILE *f, const struct gen *g, double pred[3], bool *pred_est);

/* kmgen_expect.c: "key<TAB>value" lines for every figure of the exports */
struct live live_ranks(const struct gen *g);
void expect_figures(FILE *e, const struct gen *g, const struct live *lv,
                    double *mean_fig, bool *fig_est);
void expect_routines(FILE *e, const struct gen *g, const struct live *lv,
                     double total, double *net_sum, bool *net_est);
void expect_run(FILE *e, const struct gen *g, const double *mf, const bool *fe,
                double net_sum, bool net_est, double net_frac,
                const double pred[3], bool pred_est);
void expect_locations(FILE *e, const struct gen *g, const struct live *lv);
void expect_cells(FILE *e, const struct gen *g);
void expect_prediction(FILE *e, const struct gen *g);
void expect_threads(FILE *e, const struct gen *g);
void expect_messages(FILE *e, const struct gen *g);
double net_fraction(const struct gen *g, const struct live *lv);

/* kmgen_flatten.c: kmview's exports as "key<TAB>value" lines, and their
 * comparison with the expectations */
int flatten_json(const char *path);
int flatten_csv(const char *dir, const char *name);
int compare(const char *expect, const char *got);

#endif
