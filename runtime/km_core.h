/*
 * km_core.h — what the files of libkm's core share: the frame stack, a
 * thread's state, the process's state, and the few small functions that
 * the hot path and the cold parts both inline.
 *
 *   km_hot.c       KM_IN and KM_OUT: opening and closing frames
 *   km_sample.c    which executions are measured; what samples teach
 *   km_settle.c    estimates settled against measured time; checkpoints
 *   km_thread.c    start-up, registration, threads, libkm's own costs,
 *                  the state itself, and the unit tests' hooks
 *   km_snapshot.c  snapshots of the figures (struct km_report)
 *   km_write.c     the moments results are written; the core side of MPI
 *
 * Must never be included outside those files (the rest of libkm sees the
 * core through km_internal.h), mention an MPI type, or define state (the
 * state is defined once, in km_thread.c).
 *
 * Accounting.  Frame 0 of the stack is the root ("outside every routine").
 * A callee frame (routine, CALL, MPI) adds its elapsed time to the `child`
 * of the nearest callee frame below it (frame.own of the frame below), so
 * transparent frames (DO, IO, USER) pass their callees' time through to
 * their routine; a transparent frame sees the callee time inside it as
 * the growth of its owner's `child` while it was open.  A region's own
 * time in a frame is its elapsed time less that callee time.  Each instant
 * is in exactly one innermost callee frame, in libkm itself, or in none,
 * so total = sum of the callees' own time + libkm's overhead + outside
 * holds exactly, in subticks, whatever is estimated.
 *
 * Overhead.  Every entry adds what its entry and exit cost (measured at
 * start-up) to `t->ovh`, and registrations add the time they took; a
 * measured frame takes out of its elapsed time the part of its own entry
 * and exit between its clock reads and the growth of t->ovh while it was
 * open.  A frame that took out more than there was (the costs are
 * estimates too) gives the difference back to t->ovh.
 *
 * Estimates.  Past its threshold a region is measured one execution in
 * about k; the others are estimated: they read no clock and add the
 * region's estimate of its own time, plus what the frames inside
 * reported.  Every estimated frame has an *anchor*, the nearest measured
 * frame below it (or the root), and the estimates wait in a small table
 * of that anchor (struct km_wait, one entry per region).  When the anchor
 * closes it settles them against the time it measured: if the estimates
 * made inside it exceed that time (less what was measured inside it),
 * every one of them is scaled down to fit.  So no net time is ever
 * negative and no callee outlasts its caller.  A full table is settled at
 * once, against the time measured so far (a *checkpoint*: one clock
 * read), which is as valid, since the executions it holds all lie within
 * that time.
 *
 * Signals.  A terminating signal may arrive at any instruction, and its
 * handler takes a snapshot of this state.  So the hot path publishes a new
 * frame (t->sp) only once the frame is complete, and retires a frame (sp)
 * before folding it into its region; the region table grows by copying,
 * publishing the new table, then freeing the old one.  The compiler is kept
 * from reordering those stores with signal fences (no instruction at run
 * time).
 *
 * Timeline.  The program's thread also cuts its run into time slots
 * (km_timeline.c).  A measured routine or MPI call that closes gives its
 * own time to the current slot (two adds, when it began in that slot; an
 * entry does nothing); the first exit past the slot's end settles the
 * estimates waiting in the open frames (a checkpoint each, as a full
 * table does) and gives the open frames' own time so far to the slots it
 * ran in (km_cross_slot), which later exits then leave out (km_main_tl_done).
 * Estimates settled go to the current slot.  Other threads have no
 * timeline.
 *
 * Clock reads are not counted on the hot path: every measured frame reads
 * the clock once at entry and once at exit, so the count follows from the
 * regions' measured exits and the open frames (see clock_reads() in
 * km_snapshot.c).
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


#define KM_STACK_DEPTH 4096
#define KM_UNREAD INT64_MIN          /* frame.start of an estimated frame */
#define KM_ID_ROOT (INT32_MIN + 1)   /* frame.id no handle can match */
#define KM_ID_FULL INT32_MIN         /* the sentinel on top of a full stack */
#define KM_K_MAX (1u << 20)          /* longest sampling interval */

#define signal_fence() atomic_signal_fence(memory_order_seq_cst)

#define KM_NWAIT 8                   /* regions one frame's table holds */

/* The estimates of one region made inside one measured frame (and not
 * inside a measured frame within it), waiting to be settled. */
struct km_wait {
    int32_t id;              /* the region */
    int32_t pad;
    km_time own;             /* own time estimated */
    km_time el;              /* what the estimates add to its elapsed */
};

struct km_frame {
    struct km_region *r;     /* NULL for the root and the sentinel */
    km_tick start;           /* clock at entry, or KM_UNREAD (estimated) */
    km_time child;           /* callee frames: callee time directly inside,
                                and an estimated one's own estimate;
                                transparent: the owner's child at entry */
    km_time ovh0;            /* measured frames: t->ovh after the entry;
                                estimated ones: their own estimate (this
                                field between child and inv, which
                                compilers would otherwise move as one
                                16-byte value, stalling on the 8-byte
                                stores) */
    km_time inv;             /* the part of child that is estimated and
                                not settled yet (same rule) */
    int32_t id;              /* r->id, KM_ID_ROOT or KM_ID_FULL */
    int32_t own;             /* nearest callee frame at or below this one */
    int32_t anchor;          /* nearest measured frame at or below (0: the
                                root) */
    int32_t slot;            /* estimated frames: its entry in the
                                anchor's table */
    uint32_t used;           /* measured frames and the root: the entries
                                of the table in use, a bit each */
    int32_t pad;
    struct km_wait wait[KM_NWAIT];   /* measured frames and the root; a
                                region's entry is at its id modulo
                                KM_NWAIT, or the next free one */
};

_Static_assert(sizeof(struct km_frame) == 256,
               "a frame is 256 bytes: its index is a shift");

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
    struct km_region **tab;  /* this thread's figures, tab[id - 1] */
    int32_t nreg;            /* the ids tab covers (<= km_st.ntmpl) */
    int32_t sp;              /* top frame; 0 = only the root */
    km_time ovh;             /* libkm's own time on this thread so far */
    /* sampling */
    uint64_t rng;            /* xorshift64 state for the gaps */
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
    _Alignas(64) struct km_frame stack[KM_STACK_DEPTH];   /* a frame
                                starts a cache line */
};

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
    /* sampling */
    km_time budget;          /* sampling may add this much per execution */
    uint32_t fixed_k;        /* tests: every k-th execution, or 0 */
    uint64_t seed;           /* of every thread's rng */
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

/* Own time of the open frame at each depth already given to the slots
 * by km_cross_slot (0 for a frame that began in the current slot). */
extern km_time km_main_tl_done[KM_STACK_DEPTH];

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

/* Where estimates are settled: the live table (copy NULL), or a
 * snapshot's copies (whose frames point into `copy`); and the overhead to
 * give back to. */
struct settle {
    struct km_region *copy;
    struct km_region **tab;  /* the live figures */
    km_time *ovh;
    struct km_thread *t;     /* live: the thread whose frames close */
};

static inline struct km_region *region_of(const struct settle *c, int32_t id)
{
    return c->copy ? &c->copy[id - 1] : c->tab[id - 1];
}


/* Settling on the thread's live figures. */
#define LIVE(t) (&(const struct settle){ NULL, (t)->tab, &(t)->ovh, (t) })

/* The calling thread's state, or `fail` when it cannot have one. */
#define THREAD_OR(fail) \
    struct km_thread *t = km_self; \
    if (KM_UNLIKELY(!t) && !(t = km_attach())) \
        fail

/* The callee time inside frame f, and its unsettled estimated part. */
static KM_ALWAYS_INLINE void inside(const struct km_frame *stk,
                                   const struct km_frame *f, km_time *cc,
                                   km_time *ci)
{
    if (f->r->callee) {
        *cc = f->child;
        *ci = f->inv;
    } else {
        const struct km_frame *o = &stk[f->own];
        *cc = o->child - f->child;
        *ci = o->inv - f->inv;
    }
}

static inline void claim_wait(struct km_frame *f, int s, int32_t id)
{
    f->wait[s] = (struct km_wait){ .id = id };
    signal_fence();
    f->used |= 1u << s;
}

/* ---- between the core's files ------------------------------------------ */

/* km_hot.c */
void km_leave_copy(const struct settle *c, struct km_frame *stk, int32_t i,
                   km_tick now);
km_tick km_core_trace_now(struct km_thread *t);
void km_core_trace_event(struct km_thread *t, struct km_region *r, int in,
                         km_tick now);

/* km_sample.c */
void km_learn(struct km_thread *t, struct km_region *r, int32_t caller,
              km_time own, km_time e);
int km_wait_entry(const struct km_frame *f, int32_t id, int *free);
int km_find_wait(struct km_thread *t, struct km_region *r, int32_t a);

/* km_settle.c */
void km_settle(const struct settle *c, struct km_frame *f, km_time e,
               km_time *cc, km_time *ci);
void km_checkpoint(struct km_thread *t, int32_t a);
void km_give_open_slots(const struct km_thread *t, int32_t top, km_tick now,
                        struct km_timeline *into, km_time *done);
void km_cross_slot(struct km_thread *t, int32_t top, km_tick now);

/* km_thread.c */
struct km_thread *km_attach(void);
void km_sync_regions(struct km_thread *t);
extern uint64_t km_lost_threads;

/* km_snapshot.c */
int km_make_thread_report(const struct km_thread *t, struct km_report *rep,
                          const char *event, km_tick now, km_tick *at);
int km_make_report(struct km_report *rep, const char *event, km_tick now);

/* km_write.c */
void km_at_exit(void);
void km_notice_mpi(struct km_thread *t, int at_write);

#endif
