/*
 * model.h — one run's KM_output, in memory, as kmview reads it.
 *
 * Owns the shape of the data every kmview command works on: the file's
 * header lines, the Prediction section, and one section per rank holding
 * that rank's header figures, routine rows and location rows.  Routines and
 * locations are interned run-wide (a routine by its name, a location by its
 * routine, kind, source line and occurrence), so that ranks whose tables
 * list them in different orders line up, and so that a thousand ranks of a
 * thousand routines do not keep a million copies of the names.
 *
 * The shape is format version 3's: every time carries whether it contains
 * an estimate (a leading ~) and routine and location rows their Est(%);
 * a rank that ran several threads has each thread's row and the regions
 * threads other than 0 ran.
 * A version 1 file is read into the same shape (v1.c says how).
 *
 * Must never: print, read files, or compute derived figures (stats.c does).
 */
#ifndef KV_MODEL_H
#define KV_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Location kinds, as KM_output spells them. */
enum kv_kind { KV_DO, KV_CALL, KV_MPI, KV_IO, KV_USER, KV_OMP, KV_OTHER,
               KV_NKINDS };

const char *kv_kind_name(int kind);
/* The kind a KM_output kind word names, or -1. */
int kv_kind_parse(const char *word);

/* The header figures of a rank section, in the order KM_output version 2
 * prints them ("Processors and Rank" is kept apart: it holds two
 * integers).  KV_F_MPI is MPI after start-up; KV_F_UNINSTRUMENTED holds
 * no MPI time. */
enum kv_figure {
    KV_F_TOTAL, KV_F_ROUTINE_COUNTS, KV_F_CLOCK_READS, KV_F_READ_COST,
    KV_F_OVERHEAD, KV_F_WRITES, KV_F_MPI, KV_F_STARTUP, KV_F_IO, KV_F_OUTSIDE,
    KV_F_UNINSTRUMENTED, KV_F_ESTIMATED, KV_F_ROUTINES, KV_NFIGS
};

struct kv_figure_info {
    const char *label;       /* as KM_output 2 writes it after the '!' */
    const char *label_v1;    /* the version 1 figure it is read from, or NULL */
    const char *key;         /* the CSV/JSON name */
    bool integer;            /* a count, not seconds */
};
extern const struct kv_figure_info kv_figures[KV_NFIGS];

/* Does a run of this format version have figure f (version 1 has no
 * Estimated time)? */
bool kv_figure_known(int format_version, int f);

/* The figures of a routine or location row, and the bit each has in a
 * cell's `est` mask. */
enum kv_metric { KV_M_ELAPSED, KV_M_NET, KV_M_COUNTS, KV_M_MPI, KV_M_IO,
                 KV_NMETRICS };
#define KV_EST(m) (1u << (m))

/* Is this statement text MPI start-up (CALL MPI_INIT(...) or CALL
 * MPI_INIT_THREAD(...), any case and blanks)? */
bool kv_is_mpi_startup(const char *text);
/* The run's times are CPU time (its Clock line names libkm's CPU clock,
 * KM_CLOCK=cpu), not elapsed time: a prediction from them is of CPU time,
 * no speedup in wall time. */
struct kv_run;
bool kv_cpu_time(const struct kv_run *run);

struct kv_routine {
    char *name;              /* upper case, as in the file */
    char *file;              /* from a location heading; NULL if none */
    int line;                /* 0 when unknown */
};

struct kv_location {
    int routine;             /* index into run->routines */
    int kind;                /* enum kv_kind */
    int line;
    int occurrence;          /* how many earlier locations share routine, kind, line */
    char *text;              /* the statement as the first rank that has it wrote it */
};

/* One routine row of one rank. */
struct kv_rcell {
    int routine;
    double elapsed, net, mpi, io;
    double est_pct;          /* Est(%): NaN when the file has none (version 1) */
    uint64_t count;
    bool extrap;             /* the count had a leading + */
    unsigned est;            /* KV_EST(metric): that time had a leading ~ */
};

/* One location row of one rank. */
struct kv_lcell {
    int location;
    double elapsed;
    double est_pct;          /* as in kv_rcell */
    uint64_t count;
    bool extrap;
    bool est;                /* the elapsed time had a leading ~ */
};

/* One thread of a rank: a row of the Threads block (version 3). */
enum kv_thread_fig { KV_T_TOTAL, KV_T_NET, KV_T_MPI, KV_T_OUTSIDE,
                     KV_T_OVERHEAD, KV_NTFIGS };
extern const char *const kv_thread_key[KV_NTFIGS];   /* "total", ... */

struct kv_thread {
    int thread;              /* 0: the program's (the rank's figures) */
    int omp;                 /* its OpenMP thread number, -1 if none */
    double v[KV_NTFIGS];
    unsigned est;            /* bit 1 << figure: had a leading ~ */
    uint64_t count;          /* routine entries */
    bool extrap;
    double est_pct;
};

/* A region some thread other than 0 ran, over the threads that ran it. */
struct kv_tregion {
    int routine;             /* index into run->routines */
    int location;            /* index into run->locations; -1: the routine */
    int threads;
    uint64_t count;
    bool extrap;
    double min, mean, max, imbal;
    bool est;                /* the times had a leading ~ */
};

/* The Total row of a rank's routine table (version 2 only). */
/* What one MPI call site of a rank moved (the Messages block, version 4)
 * and its message-size histogram: bin 0 holds empty messages, bin k those
 * of 2^(k-1) <= bytes < 2^k.  A site fills one bin or two of the 48, so
 * only the non-empty bins are kept, in increasing order, in the rank's
 * msg_bins (48 counters a site made the Messages blocks of 100,000 ranks
 * a tenth of kmview's memory). */
#define KV_MSG_BINS 48
struct kv_msg_bin {
    int bin;
    uint64_t messages;
};
struct kv_msg {
    int location;            /* index into run->locations */
    uint32_t first_bin, nbins;   /* its bins: rank->msg_bins[first_bin..] */
    uint64_t messages, sent, received;
};

/* What a rank sent to and received from one peer (the Peers block,
 * version 4): [0] sent, [1] received point to point, [2] sent in
 * all-to-all collectives. */
struct kv_peer {
    int peer;                /* its rank in MPI_COMM_WORLD */
    uint64_t messages[3], bytes[3];
};

/* Bytes of a file's reads or writes (the Files block, version 5): exact
 * (unformatted transfers), an estimate ('~', from the file's growth),
 * at least (">=": formatted transfers not counted) or not known ('-'). */
enum kv_bytes_kind { KV_BYTES_EXACT, KV_BYTES_ESTIMATE, KV_BYTES_AT_LEAST,
                     KV_BYTES_UNKNOWN };
struct kv_io_bytes {
    uint64_t bytes;
    enum kv_bytes_kind kind;
};

/* What a rank's measured I/O statements (the Files block), or its
 * measured MPI-IO calls (the MPI-IO block, mpiio set), did to one file. */
enum { KV_META_OPENS, KV_META_CLOSES, KV_META_INQUIRES, KV_META_SEEKS,
       KV_META_FLUSHES, KV_META_KINDS };
struct kv_file {
    char *name;              /* '<'...'>' when no file: <stdout> ... */
    uint64_t meta[KV_META_KINDS];
    double meta_s, read_s, write_s;
    bool meta_est, read_est, write_est;
    uint64_t reads, writes;
    struct kv_io_bytes read_b, write_b;
    int64_t size;            /* -1: not known */
    bool mpiio;              /* a row of the MPI-IO block */
};

/* The Timeline block (version 5): the rank's run in time slots, each
 * holding its computation, MPI, I/O and other time and the computation
 * of the rank's top routines (seconds). */
enum kv_tl_cat { KV_TL_COMP, KV_TL_MPI, KV_TL_IO, KV_TL_OTHER, KV_TL_NCAT };
#define KV_TL_TOP 8
#define KV_TL_MAX_SLOTS 128
struct kv_timeline {
    int slots;               /* slot rows, `before` apart; 0: no block */
    double width;            /* seconds per slot */
    double origin;           /* seconds from the start to slot 0 */
    bool origin_mpi;         /* slot 0 begins where MPI_INIT returned */
    int ntop;
    int top[KV_TL_TOP];      /* the routine (run->routines) of column k */
    unsigned est;            /* bit c: category c had a ~; bit 4 + k:
                                routine column k */
    int ncols;               /* KV_TL_NCAT + ntop */
    int64_t *v;              /* [(row) * ncols + col] nanoseconds, as the
                                file has them (exact, and written back
                                exactly); row 0 `before`, row s + 1 slot s */
};

/* One call path of a thread's calling-context tree (the Paths block,
 * version 6): the path of its parent and one more region. */
struct kv_path {
    int parent;              /* index into the tree's paths; -1: its parent
                                is outside every region */
    int routine;             /* index into run->routines; -1: unknown */
    int location;            /* index into run->locations; -1: the routine */
    uint64_t count;
    bool extrap;             /* the count had a leading + */
    double elapsed, net;     /* inclusive, and its own time */
    double est_pct;          /* Est(%) of its elapsed time */
    unsigned est;            /* KV_EST(KV_M_ELAPSED), KV_EST(KV_M_NET) */
    int fold;                /* enum kv_fold (format 7; before: none) */
};

/* What a limit of libkm folded into a path (the Fold column, format 7):
 * nothing; deeper recursion of its region, which went on in it (its
 * counts hold the calls made deeper, the edge from its parent is exact);
 * or every entry, at KM_PATHS_MAX: it stands for deeper paths that were
 * not kept, and its parent did not call it directly. */
enum kv_fold { KV_FOLD_NONE, KV_FOLD_RECURSION, KV_FOLD_MAX };

struct kv_tree {
    int thread;              /* 0: the program's */
    long long folded;        /* entries on the paths that hold folded
                                ones (a limit was reached) */
    long expected;           /* the paths its heading announced */
    struct kv_path *paths;   /* parents before their children */
    size_t npaths, cappaths;
};

struct kv_total_row {
    bool present;
    double net, est_pct;     /* est_pct: of the total net time */
    bool net_est;
};

struct kv_rank {
    int rank;
    int processors;
    bool lost;               /* "this rank's results were lost": no figures */
    double fig[KV_NFIGS];    /* NaN when the format has no such figure */
    bool fig_est[KV_NFIGS];  /* the figure had a leading ~ */
    struct kv_total_row total_row;
    struct kv_rcell *rc;
    size_t nrc, caprc;
    struct kv_lcell *lc;
    size_t nlc, caplc;
    char **warnings;
    size_t nwarn, capwarn;
    /* the Threads block (empty when the rank ran one thread) */
    struct kv_thread *threads;
    size_t nthreads, capthreads;
    struct kv_tregion *tregions;
    size_t ntregions, captregions;
    /* the Messages block (empty when no call site moved bytes) */
    struct kv_msg *msgs;
    size_t nmsgs, capmsgs;
    struct kv_msg_bin *msg_bins;     /* every site's non-empty bins */
    size_t nmsg_bins, capmsg_bins;
    /* the Peers block (empty when it sent and received no message) */
    struct kv_peer *peers;
    size_t npeers, cappeers;
    /* the Files block (empty when no measured I/O statement ran) */
    struct kv_file *files;
    size_t nfiles, capfiles;
    struct kv_timeline tl;   /* the Timeline block (version 5) */
    struct kv_tree *trees;   /* the Paths block (version 6): a tree per
                                thread that has one, thread 0's first */
    size_t ntrees, captrees;
    char *source;            /* the file this section came from */
    int source_line;         /* the line of its "===== Rank" heading */
};

/* The columns of a Prediction row, in the file's order: T(p), S(p), C(p),
 * R(p), O(p) (libkm's overhead), P(p), W(p) (how long the rank waited for
 * a processor, said apart). */
enum kv_pred_col { KV_PR_TOTAL, KV_PR_STARTUP, KV_PR_MPI, KV_PR_REDUNDANT,
                   KV_PR_OVERHEAD, KV_PR_PARALLEL, KV_PR_WAITED, KV_NPRCOLS };
extern const char *const kv_pred_key[KV_NPRCOLS];   /* "total", ... */

struct kv_prediction_row {
    int rank;
    double v[KV_NPRCOLS];    /* NaN where the file has no such column:
                                start-up in version 1, overhead and waited
                                in version 1 and in rows of 6 fields */
    unsigned est;            /* bit 1 << column: had a leading ~ */
};

/* The predicted figures. */
enum kv_pred_fig { KV_PF_T1PE, KV_PF_SPEEDUP, KV_PF_EFFICIENCY, KV_NPRFIGS };
extern const char *const kv_pred_fig_key[KV_NPRFIGS]; /* "t_1pe", ... */

struct kv_prediction {
    bool present;
    struct kv_prediction_row *rows;
    size_t nrows, caprows;
    double fig[KV_NPRFIGS];  /* NaN when the file says n/a */
    bool have[KV_NPRFIGS];
    unsigned est;            /* bit 1 << figure: had a leading ~ */
    bool available;          /* no figure read n/a */
    /* the rows have O(p) and W(p) (version 2 but for earlier development
     * versions' rows of 6 fields): P(p) and so T_1pe leave libkm's
     * overhead out, and the speedup divides by max (T - S - O) */
    bool without_overhead;
    char *note;              /* the section's first comment line (version 2) */
    char *reason;            /* why there is no prediction (the note after
                                "No prediction:"), or NULL */
};

/* A header line this kmview does not know ("! Key : value"). */
struct kv_extra {
    char *key, *value;
};

struct kv_hash {             /* open addressing: slot holds index + 1 */
    int *slot;
    size_t cap, used;
};

struct kv_run {
    char **sources;          /* the files read */
    size_t nsources;
    int format_version;
    char *program, *started, *written_at, *clock, *overhead;
    /* where the Overhead value was read: sources[overhead_source], its
     * line and column (for errors about it) */
    size_t overhead_source;
    long overhead_line;
    int overhead_col;
    /* figures that contradict each other (fields.c warns once per kind,
     * enum contradiction in reader.h): bit k set once kind k was warned of */
    unsigned contradictions;
    /* MPI start-up was taken from the CALL MPI_INIT statements (a version 1
     * file, whose MPI time holds it) rather than from a header figure */
    bool startup_from_statements;
    int nranks;              /* ranks in the run (the Ranks line) */
    struct kv_extra *extra;
    size_t nextra, capextra;
    struct kv_prediction pred;

    struct kv_routine *routines;
    size_t nroutines, caproutines;
    struct kv_location *locations;
    size_t nlocations, caplocations;
    struct kv_rank *ranks;   /* sorted by rank number once reading is done */
    size_t nsections, capsections;
    /* while reading: section index + 1 of each rank number seen, 0 none */
    size_t *section_of_rank;
    size_t nsection_of_rank;

    struct kv_hash routine_index, location_index;

    /* while reading: the counts of the Paths blocks' trees of each thread
     * number summed over the ranks so far (kmview adds them up by path,
     * over ranks and over a tree's paths: no sum may wrap) */
    struct kv_thread_counts {
        int thread;
        uint64_t counts;
    } *path_counts;
    size_t npath_counts, cappath_counts;
};

void kv_run_init(struct kv_run *run);
/* The section that holds rank number `rank`, or NULL (while reading). */
const struct kv_rank *kv_rank_seen(const struct kv_run *run, int rank);
void kv_run_free(struct kv_run *run);

/* The routine called `name`, added if new. */
int kv_routine_intern(struct kv_run *run, const char *name);
/* The routine called `name`, or -1. */
int kv_routine_find(const struct kv_run *run, const char *name);
/* The location (routine, kind, line, occurrence), added with `text` if new. */
int kv_location_intern(struct kv_run *run, int routine, int kind, int line,
                       int occurrence, const char *text);
int kv_location_find(const struct kv_run *run, int routine, int kind, int line,
                     int occurrence);

struct kv_rank *kv_rank_add(struct kv_run *run, int rank);
struct kv_rcell *kv_rank_add_routine(struct kv_rank *r);
struct kv_lcell *kv_rank_add_location(struct kv_rank *r);
void kv_rank_add_warning(struct kv_rank *r, const char *text);
struct kv_thread *kv_rank_add_thread(struct kv_rank *r);
struct kv_tregion *kv_rank_add_tregion(struct kv_rank *r);
struct kv_tree *kv_rank_add_tree(struct kv_rank *r);
struct kv_path *kv_tree_add_path(struct kv_tree *t);
struct kv_msg *kv_rank_add_msg(struct kv_rank *r);
/* Keep the non-empty bins of a full histogram as m's (m: r's last site). */
void kv_rank_set_msg_bins(struct kv_rank *r, struct kv_msg *m,
                          const uint64_t bins[KV_MSG_BINS]);
/* m's non-empty bins, m->nbins of them. */
const struct kv_msg_bin *kv_msg_bins(const struct kv_rank *r,
                                     const struct kv_msg *m);
/* Give back what the rank's arrays hold beyond their rows (called when
 * its section has been read: arrays grow by doubling from 16 rows, and a
 * rank has a handful of messages and files). */
void kv_rank_trim(struct kv_rank *r);
struct kv_peer *kv_rank_add_peer(struct kv_rank *r);
struct kv_file *kv_rank_add_file(struct kv_rank *r);
/* Put the sections in rank order and number routines and locations in
 * order of first appearance in that order (after reading every file), so
 * that the order files are given in changes nothing. */
void kv_run_sort_ranks(struct kv_run *run);

/* Ranks whose figures are known (not lost). */
size_t kv_run_live_ranks(const struct kv_run *run);

#endif
