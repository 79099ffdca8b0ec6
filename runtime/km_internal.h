/*
 * km_internal.h — what the files of libkm share with each other (and with
 * the runtime's unit tests and benchmarks); nothing here is seen by the
 * instrumented code.
 *
 *   km_clock.c   the clock: its choice, calibration, the cost of one read
 *   km_region.c  a region from its registration text; region identity
 *   km_core.h    what the core's files below share (nothing else
 *                includes it)
 *   km_hot.c     the core: KM_IN / KM_OUT, opening and closing frames
 *   km_sample.c  the core: which executions are measured, estimates
 *   km_settle.c  the core: estimates settled against measured time
 *   km_thread.c  the core: start-up, KM_REG, threads, libkm's costs
 *   km_snapshot.c the core: snapshots of the figures (struct km_report)
 *   km_write.c   the core: the moments results are written; MPI's side
 *   km_signal.c  results on SIGTERM, SIGINT, SIGHUP, SIGXCPU, SIGUSR1/2
 *   km_trace.c   the per-rank trace file (TRACE_FILE_NUMBER > 0)
 *   km_mem.c     the memory a write uses (safe inside a signal handler)
 *   km_format.c  the text of a KM_output file
 *   km_file.c    a KM_output's place and name; writing it whole or not at all
 *   km_gather.c  collecting every rank's section into one file
 *   km_timeline.c the program thread's time slots (the Timeline block)
 *   km_mpi.c     every MPI call libkm makes (only linked into MPI programs)
 *
 * The core never references an MPI symbol: km_mpi.c, linked only with the
 * MPI glue, hands it a table of function pointers (struct km_mpi_ops) when
 * the program starts.  So this header must never mention an MPI type or
 * need mpi.h, and holds no state of its own.
 */
#ifndef KM_INTERNAL_H
#define KM_INTERNAL_H

#include "config.h"

#include <fenv.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "runtime/km_abi.h"

#if defined(__GNUC__) || defined(__clang__)
#define KM_LIKELY(x) __builtin_expect(!!(x), 1)
#define KM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KM_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define KM_NOINLINE __attribute__((noinline))
#define KM_ALWAYS_INLINE inline __attribute__((always_inline))
#define KM_HOT_ALIGN __attribute__((aligned(64)))   /* a function's start */
#else
#define KM_HOT_ALIGN
#define KM_NOINLINE
#define KM_ALWAYS_INLINE inline
#define KM_LIKELY(x) (x)
#define KM_UNLIKELY(x) (x)
#define KM_PRINTF_LIKE(f, a)
#endif

/* ---- clock (km_clock.c) ------------------------------------------------- */

typedef int64_t km_tick;          /* clock units; differences only */

enum km_clock_kind {
    KM_CLOCK_TSC,                 /* the CPU's counter, read inline: the x86
                                     time-stamp counter, or aarch64's
                                     generic timer */
    KM_CLOCK_CALL                 /* through `read` (clock_gettime, tests) */
};

struct km_clock {
    enum km_clock_kind kind;
    km_tick (*read)(void);        /* KM_CLOCK_CALL: the reader */
    double seconds_per_tick;      /* refined by km_clock_calibrate */
    double read_ticks;            /* one read, in ticks, measured at start */
    double read_cost;             /* the same in seconds */
    char name[160];               /* for the "! Clock" header line */
    /* TSC calibration: a (tsc, CLOCK_MONOTONIC ns) pair taken at start */
    km_tick cal_tick0;
    int64_t cal_ns0;
};

/* Choose the clock (KM_CLOCK=tsc|monotonic|cpu in the environment asks for
 * one), calibrate it and measure one read.  Never fails. */
void km_clock_init(struct km_clock *c);

/* Refine seconds_per_tick from the whole run so far (the TSC only). */
void km_clock_calibrate(struct km_clock *c);

/* The calling thread's CPU clock, which another thread can read (each
 * thread's CPU time counts from its own start: another thread's figures
 * must be read on its clock, not the reader's); 0, or -1 where there is
 * none. */
int km_clock_cpu_id(clockid_t *id);
/* Thread `id`'s CPU time in the CPU clock's ticks into *tick: 0, or -1
 * (the thread has ended). */
int km_clock_cpu_read_id(clockid_t id, km_tick *tick);
/* Clock c is the CPU clock: its times are CPU time, not elapsed time. */
int km_clock_is_cpu(const struct km_clock *c);

/* How long the calling thread has waited, ready to run, for a processor
 * since it started (Linux's run-queue delay), in nanoseconds; -1 where
 * the system does not say.  Safe in a signal handler. */
int64_t km_clock_waited_ns(void);
/* The same through a descriptor the calling thread keeps (*fd1: the
 * descriptor + 1, or 0 to open it). */
int64_t km_clock_waited_fd(int *fd1);

/* The CPU's counter (KM_CLOCK_TSC only; 0 where there is none).
 * A bare rdtsc is not ordered with the instructions around it: a short
 * routine of dependent floating-point steps can still be executing when
 * its exit's rdtsc reads the counter, and its first steps can run before
 * its entry's (NPB's RANDLC, about 20 ns, came out 83% short).  So an
 * entry reads, then fences (nothing after it starts before the read is
 * done), and an exit fences, then reads (nothing before it is still under
 * way).  lfence orders this way on Intel, and on AMD under Linux (which
 * makes it dispatch-serializing there).  Measured on a 2.6 GHz EPYC VM:
 * an exit's rdtscp costs what lfence; rdtsc does (and would need a CPUID
 * check); fencing both sides of both reads costs a fifth more and is no
 * more accurate; a measured pair costs 39 ns instead of 20 unordered, as
 * the two reads' latency (19 ns each there) can no longer overlap. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
static inline km_tick km_clock_tsc_unordered(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return (km_tick)(((uint64_t)hi << 32) | lo);
}
static inline void km_clock_fence(void) { __asm__ __volatile__("lfence"); }
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
/* The generic timer's virtual count, which the kernel keeps time with:
 * its reads are as free to run early or late as rdtsc's, and isb is what
 * orders them (as Linux's own arch_timer reads do).  Not measured on
 * hardware yet: tested under qemu-user only. */
static inline km_tick km_clock_tsc_unordered(void)
{
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return (km_tick)v;
}
static inline void km_clock_fence(void) { __asm__ __volatile__("isb"); }
#else
static inline km_tick km_clock_tsc_unordered(void) { return 0; }
static inline void km_clock_fence(void) { }
#endif

/* The counter where a measured interval starts (read, then fence; an
 * entry that does its own work while the read completes calls the two
 * halves itself) and where it ends (fence, then read). */
static inline km_tick km_clock_tsc_start(void)
{
    km_tick v = km_clock_tsc_unordered();
    km_clock_fence();
    return v;
}
static inline km_tick km_clock_tsc_stop(void)
{
    km_clock_fence();
    return km_clock_tsc_unordered();
}

/* The clock at the start of a measured interval (nothing after the read
 * runs before it). */
static inline km_tick km_clock_start(const struct km_clock *c)
{
    if (KM_LIKELY(c->kind == KM_CLOCK_TSC))
        return km_clock_tsc_start();
    km_tick t = c->read();
    km_clock_fence();
    return t;
}

/* The clock now, after everything before (the end of an interval, or any
 * other read: clock_gettime orders its own read this way). */
static inline km_tick km_clock_read(const struct km_clock *c)
{
    if (KM_LIKELY(c->kind == KM_CLOCK_TSC))
        return km_clock_tsc_stop();
    return c->read();
}

/* ---- regions (the core: km_hot.c, km_sample.c, km_settle.c) ------------ */

/* Every time inside libkm is kept in subticks, clock ticks << KM_SUB_BITS,
 * so that the estimate of a region's cost, and the sum of many estimates,
 * keep the fractions of a tick that a 2-tick routine needs.  (2^63
 * subticks are 160 days of a 2.6 GHz TSC.) */
typedef int64_t km_time;
#define KM_SUB_BITS 8
#define KM_SUB(ticks) ((km_time)(ticks) * ((km_time)1 << KM_SUB_BITS))

/* Why a region's entries and exits take the slow path (struct km_region's
 * `hooks`); 0 for almost every region. */
enum km_hook {
    KM_HOOK_TRACE = 1,       /* written to the trace file */
    KM_HOOK_REDUNDANT = 2,   /* its time is redundant work (KM_F_REDUNDANT) */
    KM_HOOK_MPI = 4,         /* an MPI call: may lie inside redundant work */
    KM_HOOK_STARTUP = 8,     /* MPI_INIT or MPI_INIT_THREAD */
    KM_HOOK_IO = 16          /* an I/O statement or MPI-IO call: its time
                                goes to a file */
};


/*
 * One measured region: a routine or a location.  A thread's copy holds
 * its identity (set at registration) and what the thread's slow path
 * keeps per region; its figures are filled in snapshots only, as the sums
 * over the region's call paths (struct km_node, km_core.h).
 * "Callee" regions (routines, CALL, MPI) give their elapsed time to the
 * nearest callee below them; "transparent" ones (DO, IO, USER) only
 * record their own elapsed time.  A region's *own* time in one execution
 * is its elapsed time less the callee time inside it: a callee's net time,
 * a transparent region's share of its routine's net time.
 *
 * Every execution is measured until the region's executions measured on
 * the thread reach `thresh` (and each call path's first two); then one in
 * about k per call path, the others estimated (km_sample.c).
 */
struct km_region {
    uint64_t count;          /* executions (entries), always exact */
    int32_t id;              /* 1-based; the handle's value */
    uint8_t callee;          /* 1: routine, CALL, MPI; 0: transparent */
    uint8_t hooks;           /* enum km_hook bits */
    uint8_t entered;         /* live: entered on this thread already */
    uint8_t pad;
    uint64_t measured;       /* executions whose time was read (live: the
                                thread's count so far, which the threshold
                                is counted against) */
    km_time elapsed;         /* inclusive, outermost activations only */
    km_time excl;            /* own time, all activations (subticks) */
    km_time est_el;          /* the estimated part of elapsed */
    km_time est_excl;        /* the estimated part of excl */
    km_time absorbed;        /* estimated callee time that was inside its
                                measured executions */
    uint64_t thresh;         /* sample once this many were measured */
    /* identity (cold) */
    int32_t order;           /* routines: 1-based order of first entry */
    int32_t routine;         /* id of the routine it belongs to (itself) */
    int32_t parent;          /* locations: the region around its first
                                entry (a location or its routine) */
    int kind;                /* enum km_kind */
    int line;
    int flags;               /* enum km_flag bits from the registration */
    int traced;              /* its REGION record is in this thread's
                                trace */
    char *name;              /* routines: upper-case name; else NULL */
    char *file;              /* routines: source file; else NULL */
    char *text;              /* locations: statement text; else NULL */
    /* filled in snapshots only (struct km_report), for routines */
    km_time mpi;             /* own time of its MPI locations (start-up
                                left out) */
    km_time io;              /* elapsed of its IO locations */
    uint8_t mpi_est, io_est; /* ... which contain estimates */
};

/* Does r's elapsed / own time rest on an estimate: some execution was
 * estimated (even if settling scaled it to nothing), or its own time was
 * computed less estimates made inside it? */
#define KM_EST_EL(r) ((r)->est_el > 0 || (r)->count > (r)->measured)
#define KM_EST_EXCL(r) (KM_EST_EL(r) || (r)->est_excl > 0 || (r)->absorbed > 0)

/* ---- registration texts (km_region.c) ----------------------------------- */

/* What the environment says about every region (-1: nothing). */
struct km_region_options {
    long long thresh_override;    /* KM_TIME_PREDICTION_MODE_NUMBER */
    int trace_override;           /* KM_TRACE_FILE_NUMBER: 0 off, 1 on */
};

/* A zeroed region, on a cache-line boundary (free with km_region_free);
 * NULL when memory runs out. */
struct km_region *km_region_alloc(void);
/* A new region (malloc'd) from a registration text; `routine` is the id of
 * the routine a location belongs to (ignored for a routine).  NULL with
 * *why set when the text cannot be read or memory runs out. */
struct km_region *km_region_new(const char *text, int32_t routine,
                                const struct km_region_options *opt,
                                const char **why);
void km_region_free(struct km_region *r);
/* Identity: (kind, line, name, file) for a routine, (kind, line, routine)
 * for a location. */
uint64_t km_region_hash(const struct km_region *r);
int km_region_same(const struct km_region *a, const struct km_region *b);

/* ---- the timeline (km_timeline.c; the core feeds it) --------------------- */

/*
 * The program's thread's run cut into time slots: KM_TL_SLOTS slots of one
 * width from the origin (the first call into libkm, or MPI_INIT's return),
 * the width doubling (adjacent slots merged in pairs) whenever the run
 * outgrows them, so its memory never grows with the run.  Row 0 holds the
 * time before the origin; slot s is row s + 1.  Each row holds *raw* time
 * per category (subticks): the own time of every routine and MPI call
 * that closed in it (and the computation per routine), the elapsed time
 * of its I/O statements (taken from their routine's computation), the
 * estimates settled in it; a region still open when a slot ends gives the
 * slot what it ran so far (km_settle.c).  A write scales each category to
 * the rank's figures (km_tl_figures), so that the slots add up to them
 * exactly; Other is what the others leave of a slot's time.
 */
#define KM_TL_SLOTS 128
#define KM_TL_ROWS (KM_TL_SLOTS + 1)
#define KM_TL_TOP 8              /* routines with columns of their own */
#define KM_TL_WIDTH0 1e-3        /* the first width, seconds */
enum km_tl_cat { KM_TL_COMP, KM_TL_MPI, KM_TL_IO, KM_TL_OTHER, KM_TL_NCAT };
/* A region's code: its routine's row in rt (0: none, a row nobody reads)
 * times 8, plus where its time goes: a routine's own time to
 * KM_TL_COMP, an MPI call's to KM_TL_MPI, an I/O statement's elapsed time
 * to KM_TL_IO (out of its routine's computation), KM_TL_OTHER: nowhere
 * (a CALL, MPI start-up, a loop: Other is what is left). */
#define KM_TL_CODE(rix, cat) ((int32_t)(rix) * 8 + (cat))
#define KM_TL_CAT(code) ((code) & 7)
#define KM_TL_RIX(code) ((code) >> 3)

struct km_timeline {
    /* what the hot path touches */
    km_tick slot_start;      /* where the current row begins ... */
    km_tick slot_end;        /* ... and ends; 0: off */
    int32_t row;             /* the current row */
    int32_t nreg;            /* region ids `code` covers */
    const int32_t *code;     /* [id] KM_TL_CODE; [0] unused */
    km_time *rt;             /* [rix * KM_TL_ROWS + row] computation */
    km_time (*cat)[KM_TL_NCAT];      /* [row][category] */
    /* the rest */
    km_tick origin, width;   /* slot s begins at origin + s * width */
    km_tick width0;
    km_tick origin_base;     /* the start (thread 0's first call) */
    km_tick at;              /* copies: the moment of the snapshot */
    int origin_mpi;          /* the origin is MPI_INIT's return */
    int32_t nrt;             /* rows of rt (row 0: nobody's) */
    int32_t *rid;            /* [rix] the routine's region id */
    int32_t cap, caprt;      /* of code, and of rt/rid */
    km_time cat_rows[KM_TL_ROWS][KM_TL_NCAT];
};

/* Start (or restart) empty at clock `now`, slots of `width0` ticks. */
void km_tl_start(struct km_timeline *tl, km_tick now, km_tick width0);
/* Codes for regions 1..nreg, routines a row of rt each.  Allocates
 * (never on the hot path); 0 or -1. */
int km_tl_grow(struct km_timeline *tl, struct km_region *const *tab,
               int32_t nreg);
/* The code of region id (KM_TL_OTHER for one it does not cover). */
static inline int32_t km_tl_code(const struct km_timeline *tl, int32_t id)
{
    return (uint32_t)id <= (uint32_t)tl->nreg && id > 0 ? tl->code[id]
                                                         : KM_TL_OTHER;
}
/* Add `amount` of a region of code `code` to the current row. */
void km_tl_put(struct km_timeline *tl, int32_t code, km_time amount);
/* Double the width until the slots reach past `now`. */
void km_tl_fit(struct km_timeline *tl, km_tick now);
/* Spread `amount` of code `code`, which ran from `from` to `now`, over the
 * rows from the current one (or from's, if later) to now's, in
 * proportion to the time of each (after km_tl_fit). */
void km_tl_spread(struct km_timeline *tl, km_tick from, km_tick now,
                  int32_t code, km_time amount);
/* The current row becomes now's. */
void km_tl_place(struct km_timeline *tl, km_tick now);
/* MPI_INIT returned at `now`: everything so far becomes the time before
 * the origin, and slot 0 starts now. */
void km_tl_rebase(struct km_timeline *tl, km_tick now);
/* A write took `d` ticks, which every figure leaves out: the grid moves
 * on by d. */
void km_tl_hide(struct km_timeline *tl, km_tick d);
/* A copy for a report (km_mem memory), at clock `at`; NULL when memory
 * runs out. */
struct km_timeline *km_tl_copy(const struct km_timeline *tl, km_tick at);
void km_tl_free(struct km_timeline *copy);

/* What a write prints: rows 0 .. rows - 1, in nanoseconds, each category
 * adding up to the rank's figure for it, and the top routines'
 * computation (never more than the row's). */
struct km_tl_figures {
    int32_t rows;            /* row 0 (before the origin) and the slots
                                up to the last with time */
    double width, origin;    /* seconds: the slots' width; the origin, from
                                the start */
    int origin_mpi;
    int64_t total[KM_TL_NCAT];
    int64_t cat[KM_TL_ROWS][KM_TL_NCAT];
    int32_t ntop;
    int32_t top[KM_TL_TOP];  /* region ids, most computation first */
    int64_t rt[KM_TL_TOP][KM_TL_ROWS];
    uint8_t est[KM_TL_NCAT];     /* the category's figure has a ~ */
    uint8_t top_est[KM_TL_TOP];  /* the routine's net time has a ~ */
};
struct km_report;
/* The figures of rep (its timeline and totals); -1 when it has none. */
int km_tl_figures(const struct km_report *rep, struct km_tl_figures *out);

/* ---- the Prediction: one rank's row ------------------------------------ */

/* Seconds; P = T - S - C - R - O; W, the time the rank waited for a
 * processor, is said apart.  `estimated` bits: KM_PRED_* of the figures
 * that contain estimates; `none`: KM_NOPRED_* reasons this rank gives. */
struct km_prediction_row {
    double t, s, c, r, o, p, w;
    int estimated;
    int none;
};
enum { KM_PRED_C = 1, KM_PRED_R = 2, KM_PRED_P = 4, KM_PRED_O = 8 };
/* A rank that waited for a processor this share of its time or more is
 * said to have: its elapsed times hold that waiting (its CPU times leave
 * it out, and its run took that much longer). */
#define KM_WAITED_NOTE 0.05
/* The share of its time a rank waited for a processor: `waited` seconds
 * of `total` elapsed, or beside `total` seconds of CPU time (`cpu`). */
double km_waited_share(double waited, double total, int cpu);
enum { KM_NOPRED_MPI_UNMEASURED = 1, KM_NOPRED_LOST = 2 };

/* ---- one rank's figures at one moment (km_snapshot.c builds, km_format.c
 *      prints) ------------------------------------------------------------ */

/* What a folded path holds (the `folded` bits of a node and a pnode). */
#define KM_FOLD_RECURSION 1          /* deeper recursion of its region, entered
                                        from its parent's region */
#define KM_FOLD_MAX 2                /* paths past KM_PATHS_MAX: all of its
                                        entries (a node of its own, never a
                                        path that really ran) */

/* One call path of a snapshot (km_settle.c settles them, km_snapshot.c
 * sums them into the regions): subticks. */
struct km_pnode {
    int32_t id;              /* its region */
    int32_t parent;          /* index of its parent; -1 at the root */
    uint8_t callee, nested;
    uint8_t folded;          /* KM_FOLD_* bits */
    uint8_t marked;          /* its own time was computed less estimates,
                                or settled */
    uint8_t pad[4];
    uint64_t count, measured;
    km_time own;             /* measured own time */
    km_time est;             /* estimated own time */
    km_time incl, incl_est;  /* inclusive, and its estimated part */
    km_time absorbed;        /* estimated callee time inside its measured
                                executions (before settling) */
    int32_t first_kid, next_sib;     /* -1: none */
};

struct km_report {
    struct km_region *reg;   /* copies of every region, index id - 1, with
                                the open frames closed at the snapshot
                                (km_mem memory) */
    int32_t nreg;
    /* the figures of the rank section (subticks); they add up:
     * total = net + mpi + startup + uninstr + outside + overhead */
    km_time total;           /* first entry .. snapshot */
    km_time net;             /* sum of the routines' own time */
    km_time mpi;             /* own time of MPI calls but start-up */
    km_time startup;         /* own time of MPI_INIT / MPI_INIT_THREAD */
    km_time uninstr;         /* own time of CALL statements */
    km_time outside;         /* in no callee frame */
    km_time overhead;        /* libkm's own (taken out of the rest) */
    km_time io;              /* sum of elapsed of IO regions */
    km_time estimated;       /* estimated own time of every callee */
    km_time net_est;         /* ... of the routines */
    uint8_t mpi_est, io_est, uninstr_est, outside_est, net_marked;
    uint64_t routine_counts;
    uint64_t clock_reads;
    int extrapolated;        /* some routine's count gets a '+' */
    struct km_clock clock;
    double cost_measured;    /* seconds per measured entry and exit, */
    double cost_estimated;   /* per estimated one, */
    double cost_inner;       /* and between a measured one's reads */
    int nwrites;             /* this write included */
    int nranks, rank;
    const char *alone;       /* a file of one MPI process: why (NULL:
                                "MPI not finalized") */
    const char *event;       /* "END", "STOP", ... */
    const char *started;     /* "YYYY-MM-DD HH:MM:SS", local time */
    /* problems, printed as comment lines */
    uint64_t bad_out;        /* KM_OUT of a region not on the stack */
    uint64_t bad_in;         /* KM_IN / KM_OUT of an unregistered handle */
    uint64_t lost;           /* entries not measured: no memory for their
                                call paths or their frames */
    uint64_t bad_reg;        /* registrations with unreadable text */
    uint64_t lost_threads;   /* threads not measured (no memory for
                                their state) */
    double waited;           /* seconds the thread waited for a processor */
    int32_t mpi_unmeasured;  /* routines run with MPI calls not measured */
    const char *mpi_unmeasured_first;
    /* prediction figures, seconds (0 until KM_MPII or KM_MPIF) */
    struct km_prediction_row pred;
    double declared;         /* the part of R the user declared redundant */
    km_time redundant;       /* declared redundant time so far, net of the
                                MPI calls inside it */
    /* threads: this report is one thread's (0, the program's, for the
     * rank); the rank's report holds the other threads' in `others` */
    int32_t thread;
    int32_t omp;             /* its OpenMP thread number, or -1 */
    struct km_report *others;
    int32_t nothers;
    /* the rank's messages per region (index id - 1), over its threads: in
     * the rank's report only; NULL when there are none to tell */
    struct km_msg *msg;
    struct km_peer *peers;   /* the rank's peers (rank's report only) */
    int32_t npeers;
    struct km_iofile *files; /* the files its I/O statements worked on
                                (rank's report only) */
    int32_t nfiles;
    struct km_timeline *tl;  /* the rank's time slots (thread 0's report
                                only; NULL when none) */
    struct km_pnode *paths;  /* the thread's call paths (km_mem), [0] the
                                root; children after their parents */
    int32_t npaths;
    int64_t folded;          /* entries on the paths that hold folded
                                ones (a limit was reached) */
};

void km_report_free(struct km_report *rep);

/* ---- messages (km_msg.c) -------------------------------------------------- */

/* Histogram bins of message sizes: bin 0 holds empty messages, bin k
 * those of 2^(k-1) <= bytes < 2^k (the last also any larger one). */
#define KM_MSG_BINS 48
enum { KM_MSG_SENT = 1, KM_MSG_RECEIVED = 2 };

/* What one MPI call site moved, over the rank's threads. */
struct km_msg {
    uint64_t messages;       /* messages recorded (a send or a receive) */
    uint64_t sent, received; /* bytes */
    uint64_t bins[KM_MSG_BINS];
};

/* What a rank sent to ([0]) and received from ([1]) one peer in
 * point-to-point messages, and sent to it in all-to-all collectives
 * ([2]: MPI_ALLTOALL, MPI_ALLTOALLV, whose destinations are explicit). */
struct km_peer {
    int32_t peer;            /* its rank in MPI_COMM_WORLD */
    uint64_t messages[3], bytes[3];
};
enum { KM_PEER_COLL = 2 };

/* Record a message of `bytes` at region `id` (KM_MSG_SENT, _RECEIVED),
 * to or from world rank `peer` (-1: none). */
void km_msg_record(int32_t id, int what, int64_t bytes, int32_t peer);
/* The peers the rank exchanged messages with, in rank order (km_mem
 * memory, *n of them); NULL when memory runs out. */
struct km_peer *km_peer_copy(int32_t *n);
/* The figures of regions 1..nreg (index id - 1), km_mem memory; NULL
 * when memory runs out. */
struct km_msg *km_msg_copy(int32_t nreg);

/* ---- files (km_io.c) ---------------------------------------------------- */

/* What a rank's measured I/O statements, or its measured MPI-IO calls,
 * did to one file, over its threads (a file both touched has a row of
 * each).  Names starting with '<' are no file: <stdin>, <stdout>,
 * <stderr>, <internal>, <scratch>, <unit N>, <unit not known>, <other
 * files>. */
struct km_iofile {
    const char *name;
    uint64_t n[KM_IO_NOPS];  /* operations, by enum km_io_op */
    km_time t[KM_IO_NOPS];   /* their elapsed time */
    km_time te[KM_IO_NOPS];  /* the estimated part of t */
    uint64_t bytes[2];       /* unformatted: [0] read, [1] written (file
                                storage units of INQUIRE(IOLENGTH=)) */
    uint64_t formatted[2];   /* formatted reads and writes */
    uint64_t grown;          /* what connections with formatted writes
                                grew the file by (an estimate of what they
                                wrote) */
    int64_t size;            /* its size when last seen, -1: never */
    int mpiio;               /* what MPI-IO calls did to it (bytes exact:
                                count x the datatype's size) */
};

/* The statement whose region just closed took `e` (estimated or not). */
void km_io_leave(km_time e, int estimated);
/* The rank's files (km_mem memory, *n of them); NULL when memory runs
 * out. */
struct km_iofile *km_io_copy(int32_t *n);

/* ---- MPI (km_mpi.c provides, km_write.c and km_gather.c use) ----------- */

/*
 * Only valid between begin() and end() on every rank at once (the
 * collective part of KM_MPIF), except state() and finalized(), which work
 * at any time, and rank_size() and at_finalize(), which work while MPI
 * runs.  Every function returns 0 on success.
 */
struct km_mpi_ops {
    int (*finalized)(void);                  /* 1: MPI no longer usable */
    int (*rank_size)(int *rank, int *size);
    int (*begin)(void);                      /* private communicator */
    int (*send)(const void *buf, size_t n, int dest);
    int (*recv)(void *buf, size_t n, int src);
    int (*bcast_int)(int *v);                /* from rank 0 */
    int (*barrier)(void);
    void (*end)(void);
    int (*state)(void);      /* 0 before MPI_INIT, 1 running, 2 finalized */
    int (*at_finalize)(void);  /* MPI_FINALIZE, wherever it is called,
                                  first calls km_core_mpi_at_finalize */
    /* inside MPI_FINALIZE's call only (km_gather_agree): v (0 or 1) to
     * dest, never waiting; what src sent with tag, or -1 if nothing yet */
    void (*hail)(int dest, int tag, int v);
    int (*heard)(int src, int tag);
};

void km_core_mpi_linked(const struct km_mpi_ops *ops);  /* at start-up */
void km_core_mpi_init(const struct km_mpi_ops *ops);       /* KM_MPII */
void km_core_mpi_finalize(const struct km_mpi_ops *ops);   /* KM_MPIF */
/* MPI_FINALIZE's call (an attribute of MPI_COMM_SELF), wherever the
 * program calls it */
void km_core_mpi_at_finalize(const struct km_mpi_ops *ops);

/* ---- signals (km_signal.c) ---------------------------------------------- */

/* Install the handlers where the program left the default action or the
 * compiler's runtime installed its own; the handler calls
 * km_core_on_signal, then lets the signal do what it would have done. */
void km_signal_install(void);
/* Called by the handler: write the results unless a write is under way
 * (then 1: the writer re-raises the signal when it is done). */
int km_core_on_signal(int sig);
/* Put back the action `sig` had before libkm's (the default, or the
 * compiler runtime's handler) and deliver it now. */
void km_signal_reraise(int sig);
/* SIGXFSZ ignored while libkm writes a file (1 if done; then `old` is
 * what km_signal_release_xfsz puts back). */
int km_signal_hold_xfsz(struct sigaction *old);
void km_signal_release_xfsz(const struct sigaction *old);

/* ---- trace (km_trace.c) ------------------------------------------------- */

/* What the trace file needs to know of the run; set once it starts. */
struct km_trace_run {
    const char *clock_name;
    double seconds_per_tick;
    km_tick t0;
};

/* Where a thread writes its events: the block of the file it owns
 * (km_trace.c); zero before its first event. */
struct km_trace_cursor {
    char *block;             /* mapped, or NULL */
    char *at;                /* the next record */
    uint32_t left;           /* records still free in the block */
    int32_t thread;          /* libkm's thread number */
    uint64_t seq;            /* blocks this thread claimed so far */
};

/* One entry (in = 1) or exit of traced region r at clock `now`, by the
 * thread that owns cursor c.  Opens the file on first use; never fails
 * loudly (a trace that cannot be written is given up with one line on
 * stderr). */
void km_trace_event(struct km_trace_cursor *c, const struct km_trace_run *run,
                    struct km_region *r, const struct km_region *routine,
                    int in, km_tick now);
/* A message MPI call site `id` sent (sent = 1) or received: `bytes`, the
 * world rank `peer` (-1: a collective, or not known), its `tag` (-1: not
 * known).  Nothing unless the trace is being written. */
void km_trace_message(struct km_trace_cursor *c,
                      const struct km_trace_run *run, int32_t id, int sent,
                      int64_t bytes, int32_t peer, int32_t tag, int comm,
                      km_tick now);
/* The rank is known (KM_MPII): the file takes this rank's name. */
void km_trace_rank(int rank, int nranks);
/* The final results were written (sig 0) or signal `sig` came: the
 * header's state, and an END record on c's thread if it traced anything
 * (c NULL: none, as in a signal handler, which may have interrupted a
 * record of that thread). */
void km_trace_end(struct km_trace_cursor *c, int sig, km_tick now);
/* The control file's TRACE_SIZE_LIMIT (MiB), unless KM_TRACE_LIMIT in
 * the environment says otherwise; before the trace starts. */
void km_trace_set_limit(long long mib);
/* Is a trace being written? */
int km_trace_active(void);
/* km_hot.c: a message into the calling thread's trace (see
 * km_trace_message). */
void km_core_trace_message(int32_t id, int sent, int64_t bytes, int32_t peer,
                           int32_t tag, int comm);
/* km_hot.c: communicator `id` of the trace (its members' world ranks)
 * into the calling thread's trace. */
void km_core_trace_comm(int id, int32_t size, int32_t inter,
                        const int32_t *world);
/* km_trace.c: the COMM records of communicator `id`: `size` members,
 * their world ranks, `inter` 1 for an intercommunicator. */
void km_trace_comm(struct km_trace_cursor *c, const struct km_trace_run *run,
                   int id, int32_t size, int32_t inter, const int32_t *world,
                   km_tick now);

/* ---- memory for writes (km_mem.c) --------------------------------------- */

/* Straight from the kernel, never through malloc, so that a write inside
 * a signal handler cannot deadlock on a lock the program held.  NULL or
 * -1 on failure; km_mem_free(NULL) does nothing. */
void *km_mem_alloc(size_t n);
void *km_mem_realloc(void *p, size_t n);
void km_mem_free(void *p);

/* ---- output text (km_format.c) ------------------------------------------ */

/* Growable text (km_mem memory); allocation failure sets `failed`. */
struct km_text {
    char *p;
    size_t len, cap;
    int failed;
};

void km_text_printf(struct km_text *t, const char *fmt, ...) KM_PRINTF_LIKE(2, 3);
void km_text_free(struct km_text *t);

/* The program's name as it was started (its first argument), or "unknown";
 * without stdio or malloc. */
void km_program_name(char *buf, size_t size);
/* The lines before the first section.  rank_only >= 0: the file holds
 * only that rank's section (the ranks were not gathered: rep->alone says
 * why); KM_RANK_UNKNOWN: one process of an MPI run whose rank nothing
 * told. */
#define KM_RANK_UNKNOWN (-2)
void km_format_header(struct km_text *t, const struct km_report *rep,
                      int rank_only);
/* The Prediction section: its heading; one row per rank; the three
 * predicted figures.  Rows and figures have a fixed width whatever the
 * values (ranks below 10^8), so that rank 0 can write each row where it
 * belongs as it arrives: the two functions return the length written into
 * buf (at most size - 1; size 256 is enough), 0 if it does not fit. */
void km_format_prediction_heading(struct km_text *t);
size_t km_format_prediction_row(char *buf, size_t size, int rank,
                                const struct km_prediction_row *row);
/* The comment line after the heading and the three predicted figures,
 * `none` (KM_NOPRED_* bits over every rank) saying why there are none;
 * `estimated`: they rest on estimates. */
size_t km_format_prediction_figures(char *buf, size_t size, double t1pe,
                                    double speedup, double efficiency,
                                    int estimated, int none, int cpu);
/* The comment line under the heading, fixed width whatever it says: why
 * there is no prediction (`none`), or how to read it; `waited`: the
 * largest share of its time a rank waited for a processor. */
size_t km_format_prediction_note(char *buf, size_t size, int none,
                                 double waited, int cpu);
void km_format_section(struct km_text *t, const struct km_report *rep);
void km_format_lost_section(struct km_text *t, int rank);
void km_format_end(struct km_text *t);      /* "! ===== End =====" */

/* ---- floating-point flags (km_fp.c) -------------------------------------- */

/* The program's floating-point exception flags, saved before libkm's own
 * arithmetic and put back after it. */
struct km_fpflags {
    fexcept_t flags;
    int saved;
};

void km_fp_save(struct km_fpflags *s);
void km_fp_restore(const struct km_fpflags *s);

/* ---- files (km_file.c) -------------------------------------------------- */

/* The places a KM_output file may go, tried in order: the working
 * directory; $KM_OUTPUT_DIR if set and not empty; $TMPDIR if set, else /tmp
 * (a place that is the same directory as an earlier one is left out).  A
 * failure in one place moves the file to the next, whole. */
#define KM_PLACES 3
#define KM_PATH_MAX 4096         /* a longer path fails (ENAMETOOLONG) */

/* The KM_output file this process wrote last, so that a later write of the
 * same run replaces it, and only it (nnn -1: none yet).  Inode numbers are
 * reused at once, so size and modification time identify it too. */
struct km_outname {
    int nnn;
    int rank;                /* >= 0: KM_output.NNN.<rank>, a rank's own */
                             /* (set by km_file_place) */
    char dir[KM_PATH_MAX];   /* the place it is in: "" the working directory */
    uint64_t said;           /* hash of the line the last write printed
                                (0: none) */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

/* A temporary file in one of the places, to become a KM_output.  Writes
 * that fail in that place move it to the next (what it holds is copied),
 * so the caller never writes anything twice. */
struct km_out_file {
    int fd;                  /* open for reading and writing */
    int failed;              /* given up: `why` says why, or nowhere */
    int nowhere;             /* ... every place refused the file */
    off_t end;               /* where km_file_write appends */
    off_t size;              /* what it holds so far (holes included) */
    int xfsz_held;           /* SIGXFSZ ignored while it is written ... */
    struct sigaction xfsz;   /* ... instead of this */
    int place, nplaces;      /* the place it is in, of dirs[] */
    const char *dirs[KM_PLACES];     /* "" the working directory; the
                                        others point into the environment */
    char refused[KM_PLACES][96];     /* why each place failed */
    char tmp[KM_PATH_MAX];   /* its path */
    char moving[KM_PATH_MAX];/* the file it is being copied from, if any */
    char why[512];
};

/* Open a temporary file in the first place that lets one be created.  0,
 * else -1 with f->failed set (nothing written anywhere). */
int km_file_open_temp(struct km_out_file *f);
/* Append, or write at `at`; a failure moves the file to the next place
 * and writes again there, or gives up (f->failed). */
void km_file_write(struct km_out_file *f, const void *p, size_t n);
void km_file_pwrite(struct km_out_file *f, const void *p, size_t n, off_t at);
void km_file_close(struct km_out_file *f);
/* Give up for a reason no other place would change. */
void km_file_fail(struct km_out_file *f, const char *why);
/* Give the closed temporary file its name in its place: rank < 0
 * KM_output.NNN, else KM_output.NNN.<rank> (a rank's own results while
 * MPI runs).  This process's earlier file of the same kind is replaced
 * when it is still there, in the same place, and still the one it wrote;
 * otherwise the file takes the lowest free name there and the earlier
 * file, if still ours, is removed.  A place where that fails moves the file
 * on.  Removes every temporary file in every case; prints one line when the
 * file was moved or not written, unless the last write printed the same.
 * 0 on success. */
int km_file_place(struct km_out_file *f, struct km_outname *name, int rank);
/* The lowest number NNN from 000 to 999 for which `claim` takes the name
 * BASE.NNN (rank < 0; no BASE.NNN.<r> of any rank r exists either) or
 * BASE.NNN.<rank> (BASE.NNN does not exist either) in `dir` ("" the
 * working directory); claim returns 0 when it took the name, 1 when the
 * name is taken, -1 on failure (errno).  -1: a failure (errno), -2: every
 * number taken.  Safe in a signal handler on Linux. */
int km_file_lowest(const char *dir, const char *base, int rank,
                   int (*claim)(const char *path, void *arg), void *arg);
/* Write one whole file as above.  0 on success. */
int km_file_write_whole(const char *text, size_t len, struct km_outname *name,
                        int rank);
/* Remove this process's earlier file if it is still the one it wrote. */
void km_file_remove_own(struct km_outname *name);
/* Remove the temporary files a write left behind (from a signal handler). */
void km_file_abandon(struct km_out_file *f);
/* The one line "kmtool: KM_output not written: ..." for a failed f. */
void km_file_complain(const struct km_out_file *f);
/* One line "kmtool: <text>" on standard error, without stdio. */
void km_complain(const char *fmt, ...) KM_PRINTF_LIKE(1, 2);

/* Test hook (unit tests only): in the first place (the working directory),
 * every write of a file fails with `err` (ENOSPC, ...) beyond its first
 * `after` bytes, the part of a write below them going through first (a
 * short write); after < 0: naming the file fails instead (link, rename).
 * err 0: no more failures. */
void km_test_fail_writes(off_t after, int err);

/* ---- gathering the ranks (km_gather.c) ---------------------------------- */

/* The MPI_FINALIZE file: every rank calls this with its own report and
 * section; rank 0 writes the file, asking the other ranks for their
 * sections a few at a time.  Once the gathered text is safely in rank 0's
 * temporary file, every rank removes its own earlier file (*name, from a
 * KM_WRIT while MPI ran), then rank 0 links the gathered file to the lowest
 * free name.  Returns 0 when the file was written (the same answer on every
 * rank). */
/* Inside MPI_FINALIZE's call, before a gather no instrumented code asked
 * for: are all `nranks` ranks there, libkm in each (1), or not (0)?  Every
 * rank that answers 1 then gathers, each rank that answers 0 writes its
 * own file; no rank waits more than about `wait` seconds for one that
 * never comes. */
int km_gather_agree(const struct km_mpi_ops *ops, int rank, int nranks,
                    double wait);
int km_gather_write(const struct km_mpi_ops *ops, const struct km_report *rep,
                    const struct km_text *section, struct km_outname *name);
/* The temporary file of a gather under way on this rank, or NULL. */
struct km_out_file *km_gather_temp(void);

/* ---- test hooks (unit tests and benchmarks only; km_thread.c) ----------- */

/* Use `read` as the clock from the next registration on (no calibration);
 * libkm's own costs are then taken as 0 until km_test_set_costs. */
void km_test_set_clock(km_tick (*read)(void), double seconds_per_tick);
/* The costs libkm takes out of the times, in ticks: a measured entry and
 * exit, an estimated one, and the part of a measured one between its
 * clock reads. */
void km_test_set_costs(double measured, double estimated, double inner);
/* Seed of the random gaps between samples. */
void km_test_seed(uint64_t seed);
/* Sample every k-th execution on average whatever the costs (0: choose). */
void km_test_set_interval(uint32_t k);
/* Forget every region and figure, as if the program had just started. */
void km_test_reset(void);
/* The report a write would print now (free with km_report_free). */
int km_test_report(struct km_report *rep, const char *event);
/* Current stack depth (frames above the root). */
int km_test_depth(void);
/* The sampling state of the calling thread's first call path of region
 * id: 1 sampling, 0 not yet, -1 no such path; *mean its estimate. */
int km_test_path_estimate(int32_t id, km_time *mean);
/* Use `fn` as the calling thread's run delay in ns (the time it waited
 * for a processor): libkm then reads it around long measured frames as
 * it reads /proc.  Call after km_test_set_clock. */
void km_test_set_waited(int64_t (*fn)(void));
/* The clock libkm chose (initialising libkm if needed). */
const struct km_clock *km_test_clock(void);

#endif
