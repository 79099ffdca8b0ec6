/*
 * km_core.h — what the files of libkm's core share: the frame stack, a
 * thread's state, the process's state, and the few small functions that
 * the hot path and the cold parts both inline.
 *
 *   km_hot.c       KM_IN and KM_OUT: opening and closing frames
 *   km_paths.c     the call paths: a thread's nodes, finding a child
 *   km_sample.c    which executions are measured; what samples teach
 *   km_settle.c    a snapshot's tree settled (no negative net time), and
 *                  what the open frames and estimates give time slots
 *   km_thread.c    start-up, registration, threads, libkm's own costs,
 *                  the state itself, and the unit tests' hooks
 *   km_snapshot.c  snapshots of the figures (struct km_report)
 *   km_wait.c      what long measured frames waited for a processor
 *   km_write.c     the moments results are written; the core side of MPI
 *
 * Must never be included outside those files (the rest of libkm sees the
 * core through km_internal.h), mention an MPI type, or define state (the
 * state is defined once, in km_thread.c).
 *
 * Call paths.  Each thread keeps a calling-context tree: a node per
 * distinct path of regions from the root ("outside every routine") down,
 * created at the path's first entry (struct km_node).  Every figure is
 * kept per node; a region's figures are the sums over its nodes, made in
 * snapshots.  The frame stack holds the open nodes (t->stk), the
 * measured ones also their clock (t->mf).
 *
 * Accounting.  A measured frame reads the clock at its entry and exit; its
 * own time is what it measured (less the part of its own entry and exit
 * between the reads, cost_inner) less the callee time measured inside it
 * (`cin`: the frames that closed directly inside it, each their whole
 * time) and less what t->acc grew by while it was open: t->acc takes what
 * the frame does not own and no clock inside it measured, an estimated
 * callee's own estimate and every entry's and exit's cost.  A measured
 * callee that closes rewinds t->acc to its own entry (what it held is in
 * its time, which the frame below takes whole); a transparent one (DO,
 * IO, USER) passes its callee time through to the frame below, as its own
 * time is its routine's too.  So each instant is in exactly one node's
 * own time, in libkm's overhead, or outside, and
 * total = sum of the callee nodes' own time + overhead + outside holds
 * exactly, in subticks, whatever is estimated.  An execution's own time
 * may come out below zero (the estimates inside it were high); a node's
 * sum is settled in snapshots (km_settle.c), so that no net time is
 * negative and no callee outlasts its caller there.
 *
 * Estimates.  Past the threshold a node is measured one execution in
 * about k; the others are estimated, on the fast path: they count, add
 * the node's estimate to t->acc and push the node, and read no clock.
 * Their own time is settled in bulk: the node's estimate changes only at
 * its own samples, so the estimated executions since the last change
 * times the estimate is their total (km_node_estimated).
 *
 * Overhead.  What entries and exits cost is measured at start-up; the
 * overhead is their count times that (nest estimated, nmeas measured)
 * plus t->ovh, libkm's other time (registrations, ...), which t->acc also
 * takes.
 *
 * Signals.  A terminating signal may arrive at any instruction, and its
 * handler takes a snapshot of this state.  So the hot path publishes a new
 * frame (t->sp) only once the frame is complete, and retires a frame (sp)
 * before folding it into its node; a new node is published (t->nnodes)
 * once complete; the region table grows by copying, publishing the new
 * table, then freeing the old one; the frame stack grows (a recursion
 * deeper than KM_STACK_DEPTH frames) by copying into bigger arrays,
 * publishing them, then their size, and the old ones are never freed
 * while the thread runs.  The compiler is kept from reordering those
 * stores with signal fences (no instruction at run time).
 *
 * Timeline.  The program's thread also cuts its run into time slots
 * (km_timeline.c).  A measured routine or MPI call that closes gives its
 * own time to the current slot (two adds, when it began in that slot); the
 * first measured exit past the slot's end gives the slot the estimates
 * made since the last one (per node) and the open frames' own time so far
 * (km_cross_slot), which later exits then leave out (km_main_tl_done).
 * Other threads have no timeline.
 *
 * Clock reads are not counted on the hot path: every measured frame reads
 * the clock once at entry and once at exit, so the count follows from the
 * nodes' measured executions (see clock_reads() in km_snapshot.c).
 */
#ifndef KM_CORE_H
#define KM_CORE_H

/* syscall(SYS_gettid), sched_yield */
#define _DEFAULT_SOURCE 1

#include "runtime/km_internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>


#define KM_STACK_DEPTH 4096          /* a thread's frames, at first */
#define KM_STACK_MAX (1 << 24)       /* ... and at most (grown by doubling) */
#define KM_UNREAD INT64_MIN          /* a clock not read */
#define KM_K_MAX (1u << 20)          /* longest sampling interval */
#define KM_NKID 8                    /* children a node finds on its line */
#define KM_NALT 2                    /* ... and beside it, on the slow path */
#define KM_NODE_CHUNK 1024           /* nodes allocated at once */
#define KM_NODES_DEFAULT 200000      /* a thread's nodes (KM_PATHS_MAX) */
#define KM_RECURSION_DEFAULT 16      /* a region's nodes on one path
                                        (KM_PATHS_RECURSION) */

#define signal_fence() atomic_signal_fence(memory_order_seq_cst)

/*
 * A call path: the node of region `id` under node `parent`.  The first
 * line is what an entry touches, the second the children the entries
 * inside find (a cache of the thread's table, by region id), the rest the
 * figures and the sampling state (cold: the slow path's).
 */
struct km_node {
    /* line 0 */
    int32_t id;              /* its region (the root: 0) */
    int32_t index;           /* in its thread's node list (the root: 0) */
    uint64_t count;          /* executions, exact */
    uint64_t next;           /* the entry that brings count to it takes the
                                slow path (a sample; 0: every entry) */
    km_time add;             /* what an estimated execution adds to t->acc:
                                its own estimate (callees), its cost */
    struct km_node *parent;
    struct km_region *r;     /* the thread's region (NULL at the root) */
    uint8_t callee;          /* r->callee */
    uint8_t sampling;        /* past the threshold */
    uint8_t wrapper;         /* a CALL statement: what it calls directly is
                                measured whenever it is */
    uint8_t folded;          /* holds paths beyond a limit: KM_FOLD_*
                                bits */
    uint8_t nested;          /* a node of the same region is above it */
    uint8_t hooks;           /* r->hooks: every execution measured */
    uint8_t pad[2];
    uint64_t tl_count;       /* count when tl_given was last set: the
                                estimates change only with the count */
    /* line 1 */
    struct km_node *kid[KM_NKID];    /* children by id % KM_NKID, or
                                        km_no_node */
    /* lines 2-3 */
    uint64_t measured;       /* executions measured (counted at entry) */
    uint64_t closed;         /* ... of which closed */
    km_time own;             /* own time of the closed ones (may be < 0) */
    km_time el;              /* their elapsed time (less overhead) */
    km_time absorbed;        /* estimated callee time inside them */
    uint64_t est_n;          /* estimated executions in est_own */
    km_time est_own;         /* their estimates */
    km_time mean;            /* the estimate of one execution's own time */
    km_time first_own;       /* the first one's, left out of the mean */
    km_time mean_frame;      /* one execution's elapsed time, which sets
                                k: the mean over the last epoch */
    km_time epoch_el;        /* the samples of this epoch: elapsed ... */
    uint32_t epoch_n;        /* ... and how many */
    uint32_t k;              /* one execution in about k is measured */
    km_time tl_given;        /* estimates given to time slots (thread 0) */
    km_time ewma;            /* the running mean of the samples' own time
                                (mean is it, or 0 when it is below) */
    struct km_node *alt[KM_NALT];    /* children kid[] lost to another of
                                        the same slot, the latest first:
                                        two that alternate in one slot
                                        swap there instead of being
                                        looked up in the thread's table */
};

_Static_assert(sizeof(struct km_node) == 256, "a node is four lines");

/* Where no child is: a node no region id matches. */
extern struct km_node km_no_node;

/* An open measured frame. */
struct km_mframe {
    struct km_node *n;       /* NULL: the root */
    km_tick start;           /* clock at entry */
    km_time acc0;            /* t->acc after its entry */
    km_time cin;             /* measured callee time closed inside it */
    km_time ovh0;            /* t->ovh after its entry */
    uint64_t nest0, nmeas0;  /* t->nest, t->nmeas after its entry */
    int32_t sp;              /* its place on the stack */
    uint8_t sample;          /* chosen at random (not measured out of
                                turn): what it measured teaches its node */
    uint8_t pad[3];
};

_Static_assert(sizeof(struct km_mframe) == 64, "a frame is a line");

/* What open measured frame mf[m] waited for a processor (km_wait.c): its
 * t->mw[m] holds for it while tag is its nmeas0 (unique to the frame);
 * otherwise no reading was taken since it began. */
struct km_mwait {
    uint64_t tag;            /* mf[m].nmeas0 of the frame it is for */
    int64_t rd0;             /* run delay (ns) at its start (exact) or at
                                the last reading before it; -1 unknown */
    km_time win;             /* waiting inside measured callees closed
                                directly inside it (what their time holds) */
    int32_t exact;           /* rd0 was read at its start */
    int32_t pad;
};

/* What close_measured learns from km_wait_close. */
struct km_waited {
    km_time all;             /* the frame waited this long ... */
    km_time in;              /* ... this much of it outside measured callees */
    km_time moved;           /* ... of which this much during estimated
                                executions: out of its own time */
};

enum mpi_state { MPI_NONE, MPI_ACTIVE, MPI_DONE };

/*
 * Threads.  Every thread that calls libkm measures itself: it has its own
 * frame stack and its own copy of every region's figures (struct
 * km_thread, reached through one thread-local pointer), so the hot path
 * takes no lock and touches no shared line.  What threads share is the
 * region table's identities (km_st.tmpl: registration, under km_st.lock), the
 * clock and costs, and the run.  Thread 0 is the program's (the process's
 * initial thread); the others are numbered in the order they first call
 * libkm.  A write takes a snapshot of every thread.
 */
struct km_thread {
    /* hot */
    struct km_node *cur;     /* the top frame's node (or force) */
    int32_t sp;              /* top frame; 0 = only the root */
    int32_t mtop;            /* the top measured frame's place (0: root) */
    km_time acc;             /* see "Accounting" */
    uint64_t nest;           /* estimated executions so far */
    struct km_region **tab;  /* this thread's regions, tab[id - 1] */
    int32_t nreg;            /* the ids tab covers (<= km_st.ntmpl) */
    int32_t msp;             /* top of mf; 0 = the root */
    uint64_t nmeas;          /* measured executions so far */
    km_time ovh;             /* libkm's other time on this thread so far */
    /* sampling */
    uint64_t rng;            /* xorshift64 state for the gaps */
    /* call paths */
    struct km_node **chunk;  /* nodes, KM_NODE_CHUNK at a time */
    int32_t nnodes;          /* published (release) once complete */
    int32_t maxnodes;
    int32_t *kids;           /* open addressing: (parent, id) -> index + 1 */
    uint32_t kidcap;
    int32_t *sampled;        /* the callee nodes that sample, the only ones
                                whose estimates time slots take (published
                                (release) once complete) ... */
    int32_t nsampled, sampledcap;
    int sampled_lost;        /* ... unless one had no room: then any node */
    struct km_node force;    /* t->cur inside a measured CALL: no child
                                found, so every entry takes the slow path */
    /* redundant work (KM_HOOK_REDUNDANT, KM_HOOK_MPI) */
    int32_t red_depth;       /* open redundant frames */
    km_time red_time;        /* closed outermost redundant frames */
    km_time red_mpi;         /* MPI calls closed inside redundant frames */
    int32_t cap;             /* of tab */
    int32_t nentered;        /* routines entered at least once */
    /* counts */
    uint64_t saved_reads;    /* exits that shared one read (km_out_slow) */
    uint64_t overflow_depth; /* entries above a full stack still open */
    uint64_t task_entered;   /* open task bodies (bit d: the one at depth
                                d), 1 where it entered its routine */
    int task_depth;
    uint64_t lost, bad_out, bad_in;
    /* identity */
    int32_t index;           /* 0: the program's thread */
    int32_t omp;             /* its OpenMP thread number at first call, or
                                -1 (no OpenMP) */
    km_tick t0;              /* its first call (thread 0: the run's start) */
    int started;             /* t0 and the root are set */
    struct km_trace_cursor trace;  /* where its trace events go */
    uint64_t trace_reads;    /* clock reads for the trace alone (its own
                                count: no atomic add on a shared line) */
    int trace_closed;        /* its open regions' LEAVEs were traced at
                                the program's end */
    /* the CPU clock (KM_CLOCK=cpu) counts each thread's own time: another
     * thread's snapshot reads this one's clock, or its time at its end */
    clockid_t cpu_id;
    int cpu_id_ok;
    int ended;               /* the thread ended (atomic), at cpu_end */
    km_tick cpu_end;
    struct km_thread *free_next;   /* ended, waiting for a new thread */
    struct km_thread *next;  /* every thread, newest first (km_st.threads) */
    /* waiting for a processor (km_wait.c) */
    int rd_fd;               /* its /proc schedstat, + 1 (0: not open) */
    int64_t rd_last;         /* the last reading of its run delay, or -1 */
    km_tick rd_at;           /* the clock then */
    km_time wait_est;        /* waiting taken out of measured frames for
                                the estimated executions inside them */
    /* the frame stack past its first KM_STACK_DEPTH places (a recursion
     * deeper than that): place i at deep.stk[i - KM_STACK_DEPTH], and so
     * on; grown by doubling on the slow path (grow_stack), the arrays
     * published before their places, the old ones kept (a snapshot may
     * be reading them) */
    struct {
        struct km_node **stk;
        struct km_mframe *mf;
        struct km_mwait *mw;
        km_time *tl_done;    /* the program's thread: km_main_tl_done's */
        int32_t cap;
    } deep;
    struct km_mwait mw[KM_STACK_DEPTH];    /* beside mf */
    _Alignas(64) struct km_node *stk[KM_STACK_DEPTH];  /* the open nodes;
                                stk[0] the root */
    struct km_mframe mf[KM_STACK_DEPTH];   /* measured frames; mf[0] the
                                root */
};

/* Thread t's frame stack: its place i, measured frame m and what that
 * frame waited, wherever they are (the hot path reads the first
 * KM_STACK_DEPTH places itself). */
static inline struct km_node **km_stk(const struct km_thread *t, int32_t i)
{
    return KM_LIKELY(i < KM_STACK_DEPTH)
               ? (struct km_node **)&t->stk[i]
               : &t->deep.stk[i - KM_STACK_DEPTH];
}

static inline struct km_mframe *km_mf(const struct km_thread *t, int32_t m)
{
    return KM_LIKELY(m < KM_STACK_DEPTH) ? (struct km_mframe *)&t->mf[m]
                                         : &t->deep.mf[m - KM_STACK_DEPTH];
}

static inline struct km_mwait *km_mw(const struct km_thread *t, int32_t m)
{
    return KM_LIKELY(m < KM_STACK_DEPTH) ? (struct km_mwait *)&t->mw[m]
                                         : &t->deep.mw[m - KM_STACK_DEPTH];
}

/* The places of thread t's stack (read with acquire: its arrays are
 * there once it is). */
static inline int32_t km_stack_places(const struct km_thread *t)
{
    return KM_STACK_DEPTH + __atomic_load_n(&t->deep.cap, __ATOMIC_ACQUIRE);
}

/* Measured frames as km_close_open and km_wait_open read them: the first
 * KM_STACK_DEPTH at low, the others at deep (for a copy in one piece,
 * low + KM_STACK_DEPTH). */
struct km_frames {
    const struct km_mframe *low, *deep;
};

static inline const struct km_mframe *km_frame(struct km_frames f, int32_t m)
{
    return KM_LIKELY(m < KM_STACK_DEPTH) ? &f.low[m]
                                         : &f.deep[m - KM_STACK_DEPTH];
}

/* Node i of thread t. */
static inline struct km_node *km_node_at(const struct km_thread *t,
                                         int32_t i)
{
    return &t->chunk[i / KM_NODE_CHUNK][i % KM_NODE_CHUNK];
}

/* Node n's estimated executions and their own time so far: those its
 * estimate took in bulk, and those since, at its estimate now. */
static inline km_time km_node_estimated(const struct km_node *n,
                                        uint64_t *count)
{
    uint64_t all = n->count - n->measured;
    uint64_t since = all > n->est_n ? all - n->est_n : 0;
    if (count)
        *count = all;
    return n->est_own + (km_time)since * n->mean;
}

/* The calling thread's state (NULL until it first calls libkm), and
 * whether it is the program's thread (km_self == &km_main_thread). */
extern __thread struct km_thread *km_self
    __attribute__((tls_model("initial-exec")));
extern __thread int km_on_main
    __attribute__((tls_model("initial-exec")));

extern struct km_thread km_main_thread;  /* the program's: never allocated */

/* What the threads of the process share. */
struct km_state {
    struct km_clock clock;
    km_time cost_measured;   /* a measured entry and exit */
    km_time cost_estimated;  /* an estimated one */
    km_time cost_inner;      /* the part of a measured one between its
                                clock reads */
    /* waiting for a processor (km_wait.c) */
    int wait_on;             /* run delay is read around long frames */
    km_time wait_long;       /* a frame this long is (INT64_MAX: none) */
    km_time cost_waited;     /* one reading */
    uint64_t sub_per_ns;     /* subticks per ns, << 32: readings are
                                converted in integers (no floating point
                                while the program runs: km_fp.c) */
    int64_t (*waited_fn)(void);      /* tests: the run delay */
    /* sampling */
    km_time budget;          /* sampling may add this much per execution */
    uint32_t fixed_k;        /* tests: every k-th execution, or 0 */
    uint64_t seed;           /* of every thread's rng */
    /* call paths */
    int32_t max_nodes;       /* per thread (KM_PATHS_MAX) */
    int32_t max_recursion;   /* a region's nodes on a path */
    /* registration (under lock) */
    pthread_mutex_t lock;
    struct km_region **tmpl; /* identities, tmpl[id - 1]; figures zero */
    int32_t ntmpl;           /* read without the lock: atomic */
    int32_t tcap;
    int32_t *hash;           /* open addressing over ids, 0 = empty */
    size_t hcap;
    struct km_region_options opt;
    uint64_t bad_reg;
    /* threads */
    struct km_thread *threads;       /* published with release order */
    int32_t nthreads;
    int32_t init_state;      /* 0, 1 under way, 2 done */
    /* counts */
    uint64_t cold_reads;     /* clock reads off the measured frames
                                (atomic) */
    /* run */
    int initialized;
    pid_t pid;               /* a child forked without exec writes nothing */
    int clock_injected;
    km_tick t0;              /* thread 0's start */
    int64_t waited0;         /* km_clock_waited_ns() at t0, or -1 */
    char started[32];
    int nwrites;
    int final_done;          /* END / STOP / EXIT / exit / MPI_FINALIZE wrote */
    volatile sig_atomic_t writing;   /* a write is under way */
    volatile sig_atomic_t pending_signal;
    int gathering;           /* inside the collective part of KM_MPIF */
    char signal_event[32];
    struct km_outname out;   /* this process's KM_output file */
    /* MPI */
    enum mpi_state mpi_state;
    int rank, nranks;
    int mpi_hooked;          /* MPI_FINALIZE calls km_core_mpi_finalize */
    int mpi_missed;          /* MPI was finalized before libkm saw it run */
    int rank_unknown;        /* ... and nothing tells this process's rank
                                (its section is rank 0 of 1) */
    const char *alone;       /* why a rank writes its file alone, if not
                                "MPI not finalized" */
    km_tick t_startup;       /* when MPI_INIT was entered, or 0 */
    km_tick t_mpii;          /* when MPI_INIT returned */
    km_time red_before;      /* declared redundant time before that */
};
extern struct km_state km_st;

/* The program's thread's time slots (only that thread touches it, and
 * snapshots read it). */
extern struct km_timeline km_main_tl;

/* What the program's thread's open measured frame mf[m] gave the slots
 * before the current one (its own time, an I/O statement's elapsed
 * time): set by km_cross_slot for every open frame, and back to 0 when
 * that frame closes (it began before the current slot, then). */
extern km_time km_main_tl_done[KM_STACK_DEPTH];

/* km_main_tl_done's place m (past KM_STACK_DEPTH: the thread's deep). */
static inline km_time *km_tl_done(int32_t m)
{
    return KM_LIKELY(m < KM_STACK_DEPTH)
               ? &km_main_tl_done[m]
               : &km_main_thread.deep.tl_done[m - KM_STACK_DEPTH];
}
/* The lowest of its measured frames the program's thread has closed down
 * to since it last gave the open ones their time (km_cross_slot): the
 * frames below have given all of theirs so far. */
extern int32_t km_main_tl_low;

static inline km_tick tl_width0(void)
{
    double spt = km_st.clock.seconds_per_tick;
    return spt > 0 ? (km_tick)(KM_TL_WIDTH0 / spt) : 1000000;
}

/* A clock read off the measured frames (start, snapshots, writes). */
static inline km_tick cold_now(void)
{
    __atomic_fetch_add(&km_st.cold_reads, 1, __ATOMIC_RELAXED);
    return km_clock_read(&km_st.clock);
}

/* The clock is the CPU time of each thread (KM_CLOCK=cpu). */
static inline int cpu_clock(void)
{
    return km_clock_is_cpu(&km_st.clock);
}

/* The calling thread's state, or `fail` when it cannot have one. */
#define THREAD_OR(fail) \
    struct km_thread *t = km_self; \
    if (KM_UNLIKELY(!t) && !(t = km_attach())) \
        fail

/* ---- between the core's files ------------------------------------------ */

/* km_hot.c */
km_tick km_core_trace_now(struct km_thread *t);
void km_core_trace_event(struct km_thread *t, struct km_region *r, int in,
                         km_tick now);

/* km_sample.c */
void km_sample_next(struct km_thread *t, struct km_node *n);
void km_learn(struct km_thread *t, struct km_node *n, km_time own,
              km_time e);
void km_sample_start(struct km_thread *t, struct km_node *n);

/* A measured execution of node n before it samples (every one is): the
 * first one's own time is left out of the estimate; once the region has
 * been measured `thresh` times on the thread and the node twice, the node
 * starts sampling (never one with hooks: those are always measured). */
static KM_ALWAYS_INLINE void km_warm_up(struct km_thread *t,
                                        struct km_node *n, km_time own)
{
    struct km_region *r = n->r;
    r->measured++;
    if (n->closed == 1)
        n->first_own = own;
    if (KM_UNLIKELY(r->measured >= r->thresh) && n->closed >= 2 && !n->hooks)
        km_sample_start(t, n);
}
void km_node_settle_estimates(struct km_node *n);

/* km_settle.c */
struct km_counters {         /* a thread's, at one instant */
    km_time acc, ovh;
    uint64_t nest, nmeas;
};
void km_close_open(struct km_frames mf, int32_t msp, int32_t low,
                   const struct km_counters *s, km_tick now, km_tick t0,
                   void (*fn)(void *arg, int32_t m, km_time own, km_time e,
                              km_tick end),
                   void *arg);
void km_settle_tree(struct km_pnode *p, int32_t n, km_time *ovh,
                    km_time *total);
void km_give_open_slots(const struct km_thread *t, int32_t msp, km_tick now,
                        struct km_timeline *into, int live);
void km_cross_slot(struct km_thread *t, km_tick now);

/* km_paths.c */
void km_paths_limits(void);
int km_paths_init(struct km_thread *t);
struct km_node *km_child(struct km_thread *t, struct km_node *parent,
                         struct km_region *r);
/* The child of `parent` for region id among those its cache lost (now
 * back in the cache), or NULL. */
struct km_node *km_alt_child(struct km_node *parent, int32_t id);
void km_paths_reset(struct km_thread *t);
/* Node n starts sampling: its executions from now on may be estimated
 * (noted for the time slots, if it is a callee). */
void km_paths_sampling(struct km_thread *t, const struct km_node *n);

/* km_thread.c */
struct km_thread *km_attach(void);
void km_sync_regions(struct km_thread *t);
extern uint64_t km_lost_threads;

/* km_wait.c */
void km_wait_start(struct km_thread *t);
void km_wait_thread(struct km_thread *t, km_tick now);
void km_wait_enter(struct km_thread *t, int32_t m, km_tick now);
void km_wait_close(struct km_thread *t, struct km_mframe *f, int32_t m,
                   km_tick now, km_time raw, km_time dacc,
                   struct km_waited *w);
km_time km_wait_open(struct km_thread *t, const struct km_mframe *mf,
                     int32_t msp, const struct km_counters *s, km_tick now,
                     km_time *moved);

/* libkm's time inside measured frame f so far. */
static inline km_time km_overhead_inside(const struct km_thread *t,
                                         const struct km_mframe *f)
{
    return (km_time)(t->nest - f->nest0) * km_st.cost_estimated +
           (km_time)(t->nmeas - f->nmeas0) * km_st.cost_measured +
           (t->ovh - f->ovh0);
}

/* km_snapshot.c */
int km_make_thread_report(const struct km_thread *t, struct km_report *rep,
                          const char *event, km_tick now, km_tick *at);
int km_make_report(struct km_report *rep, const char *event, km_tick now);

/* km_write.c */
void km_at_exit(void);
void km_notice_mpi(struct km_thread *t, int at_write);

#endif
