/*
 * km_core.c — the measuring heart of libkm.
 *
 * Owns the region table (KM_REG), the frame stack and the hot path
 * (KM_IN / KM_OUT), sampling and estimates past the threshold, libkm's
 * own overhead, redundant-work accounting, snapshots of the figures
 * (struct km_report), and the moments results are written: KM_END,
 * KM_STOP, KM_EXIT, KM_WRIT, the atexit handler, a terminating signal
 * (km_signal.c), KM_ABRT (before MPI_ABORT), and the core side of
 * KM_MPII / KM_MPIF and of MPI started or finalized where no instrumented
 * code sees it.
 *
 * Must never: reference an MPI symbol (a serial program links without MPI;
 * MPI arrives as a table of function pointers), allocate, lock or make a
 * system call on the hot path other than the clock read, read the clock
 * for an execution it estimates, crash or exit the user's program, or
 * print to standard output.
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
 * ran in (tl_cross), which later exits then leave out (tl_done).
 * Estimates settled go to the current slot.  Other threads have no
 * timeline.
 *
 * Clock reads are not counted on the hot path: every measured frame reads
 * the clock once at entry and once at exit, so the count follows from the
 * regions' measured exits and the open frames (see clock_reads()).
 */
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
 * region table's identities (st.tmpl: registration, under st.lock), the
 * clock and costs, and the run.  Thread 0 is the program's (the process's
 * initial thread); the others are numbered in the order they first call
 * libkm.  A write takes a snapshot of every thread.
 */
struct km_thread {
    /* hot */
    struct km_region **tab;  /* this thread's figures, tab[id - 1] */
    int32_t nreg;            /* the ids tab covers (<= st.ntmpl) */
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
    struct km_thread *next;  /* every thread, newest first (st.threads) */
    _Alignas(64) struct km_frame stack[KM_STACK_DEPTH];   /* a frame
                                starts a cache line */
};

static __thread struct km_thread *self
    __attribute__((tls_model("initial-exec")));
static __thread int on_main              /* self == &main_thread */
    __attribute__((tls_model("initial-exec")));

static struct km_thread main_thread;    /* the program's: never allocated */

static struct {
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
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int atexit_registered;

/* The program's thread's time slots (only that thread touches it, and
 * snapshots read it). */
static struct km_timeline tl;

/* Own time of the open frame at each depth already given to the slots
 * by tl_cross (0 for a frame that began in the current slot). */
static km_time tl_done[KM_STACK_DEPTH];

static km_tick tl_width0(void)
{
    double spt = st.clock.seconds_per_tick;
    return spt > 0 ? (km_tick)(KM_TL_WIDTH0 / spt) : 1000000;
}

/* A clock read off the measured frames (start, snapshots, writes). */
static km_tick cold_now(void)
{
    __atomic_fetch_add(&st.cold_reads, 1, __ATOMIC_RELAXED);
    return km_clock_read(&st.clock);
}

/* The clock is the CPU time of each thread (KM_CLOCK=cpu). */
static int cpu_clock(void)
{
    return km_clock_is_cpu(&st.clock);
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

static struct km_region *region_of(const struct settle *c, int32_t id)
{
    return c->copy ? &c->copy[id - 1] : c->tab[id - 1];
}

/* ------------------------------------------------------------------------ */
/* Start-up                                                                  */

static void at_exit(void);

/* A number >= 0 from the environment, or -1 (absent or bad: said once). */
static long long env_count(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    while (*end == ' ')
        end++;
    if (errno || *end || v < 0) {
        km_complain("ignoring %s=%.40s (not a number >= 0)", name, s);
        return -1;
    }
    return v;
}

static void read_environment(void)
{
    st.opt.thresh_override = env_count("KM_TIME_PREDICTION_MODE_NUMBER");
    long long trace = env_count("KM_TRACE_FILE_NUMBER");
    st.opt.trace_override = trace < 0 ? -1 : trace > 0;
}

static void note_start_time(void)
{
    time_t now = time(NULL);
    struct tm tm;
    snprintf(st.started, sizeof st.started, "unknown");
    if (localtime_r(&now, &tm))
        strftime(st.started, sizeof st.started, "%Y-%m-%d %H:%M:%S", &tm);
}

static void calibrate_costs(struct km_thread *t);

/* Thread states that ended (see thread_ended).  The key's two functions
 * are weak references: in a static link (gfortran -static) a strong one
 * would pull in glibc's pthread_key_create.o, whose __pthread_key_create
 * is the symbol libgfortran's __gthread_active_p looks for; it would then
 * take the program for threaded and call pthread functions that nothing
 * linked in (a call to address 0 at the first WRITE).  Left out of a
 * static link, the key is not made and a serial program loses nothing; a
 * threaded one links them anyway.  In a dynamic link they resolve to
 * libc's as before. */
extern __typeof__(pthread_key_create) pthread_key_create
    __attribute__((weak));
extern __typeof__(pthread_setspecific) pthread_setspecific
    __attribute__((weak));
static pthread_key_t end_key;
static int end_key_made;
static struct km_thread *free_states;    /* under st.lock */
static void thread_ended(void *arg);

static void reset_root(struct km_thread *t)
{
    t->sp = 0;
    t->stack[0] = (struct km_frame){ .r = NULL, .id = KM_ID_ROOT, .own = 0,
                                     .anchor = 0 };
    t->task_depth = 0;
    t->task_entered = 0;
}

/* 0.25 ns in subticks: the least sampling may add to an execution. */
static void set_budget(void)
{
    double spt = st.clock.seconds_per_tick;
    st.budget = spt > 0 ? (km_time)(0.25e-9 / spt * (1 << KM_SUB_BITS)) : 0;
    if (st.budget < 1)
        st.budget = 1;
}

/* What the whole process needs once, done by the first thread to call
 * libkm (on itself: it calibrates the costs on its own stack) while any
 * other waits. */
static void init_once(struct km_thread *t)
{
    if (!st.clock_injected)
        km_clock_init(&st.clock);
    read_environment();
    note_start_time();
    st.out.nnn = -1;
    st.out.rank = -1;
    st.rank = 0;
    st.nranks = 1;
    if (!st.seed)
        st.seed = 0x9e3779b97f4a7c15u ^ (uint64_t)getpid();
    set_budget();
    t->rng = st.seed;
    reset_root(t);
    /* calibration runs the timeline's fast path too (slots that never
     * end: no clock read here, and a restart below) */
    km_tl_start(&tl, 0, tl_width0());
    tl.slot_start = INT64_MIN;
    tl.slot_end = INT64_MAX;
    if (!st.clock_injected)
        calibrate_costs(t);
    st.pid = getpid();
    if (!atexit_registered && atexit(at_exit) == 0)
        atexit_registered = 1;
    if (!st.clock_injected)
        km_signal_install();
    if (!end_key_made && pthread_key_create && pthread_setspecific &&
        pthread_key_create(&end_key, thread_ended) == 0)
        end_key_made = 1;
    st.waited0 = st.clock_injected ? -1 : km_clock_waited_ns();
    st.t0 = cold_now();              /* the root's start */
    t->t0 = st.t0;
    km_tl_start(&tl, st.t0, tl_width0());
    t->started = 1;
}

static void init(struct km_thread *t)
{
    int32_t state = __atomic_load_n(&st.init_state, __ATOMIC_ACQUIRE);
    if (KM_LIKELY(state == 2))
        return;
    int32_t none = 0;
    if (__atomic_compare_exchange_n(&st.init_state, &none, 1, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        init_once(t);
        st.initialized = 1;
        __atomic_store_n(&st.init_state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&st.init_state, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
}

/* ------------------------------------------------------------------------ */
/* Registration                                                              */

static int32_t *hash_slot(const struct km_region *key)
{
    size_t mask = st.hcap - 1;
    size_t i = (size_t)km_region_hash(key) & mask;
    while (st.hash[i] && !km_region_same(st.tmpl[st.hash[i] - 1], key))
        i = (i + 1) & mask;
    return &st.hash[i];
}

/* Room for one more region.  The table a signal handler may be reading is
 * freed only after the new one is published. */
static int grow_tables(void)
{
    if (st.ntmpl == st.tcap) {
        int32_t ncap = st.tcap ? st.tcap * 2 : 256;
        struct km_region **t = malloc((size_t)ncap * sizeof *t);
        if (!t)
            return -1;
        if (st.ntmpl)
            memcpy(t, st.tmpl, (size_t)st.ntmpl * sizeof *t);
        struct km_region **old = st.tmpl;
        signal_fence();
        st.tmpl = t;
        signal_fence();
        free(old);
        st.tcap = ncap;
    }
    if ((size_t)(st.ntmpl + 1) * 2 > st.hcap) {
        size_t ncap = st.hcap ? st.hcap * 2 : 512;
        int32_t *h = calloc(ncap, sizeof *h);
        if (!h)
            return -1;
        free(st.hash);
        st.hash = h;
        st.hcap = ncap;
        for (int32_t i = 0; i < st.ntmpl; i++)
            *hash_slot(st.tmpl[i]) = st.tmpl[i]->id;
    }
    return 0;
}

static void report_bad_registration(const char *text, const char *why)
{
    if (st.bad_reg++ < 5)
        km_complain("region not registered (%s): %.200s", why, text);
}

static void reg(int32_t *h, const int32_t *hr, const char *text)
{
    /* h and hr alias for a routine: read hr before anything writes h */
    int32_t routine = *hr;
    if (routine <= 0 || routine > st.ntmpl ||
        !KM_KIND_IS_ROUTINE(st.tmpl[routine - 1]->kind))
        routine = 0;
    const char *why;
    struct km_region *r = km_region_new(text, routine, &st.opt, &why);
    if (!r) {
        report_bad_registration(text, why);
        return;
    }
    if (grow_tables()) {
        km_region_free(r);
        report_bad_registration(text, "out of memory");
        return;
    }
    int32_t *slot = hash_slot(r);
    if (*slot) {                     /* registered before, maybe elsewhere */
        km_region_free(r);
        /* (another thread may have set the handle already: a handle that
         * holds its id is never written again) */
        if (__atomic_load_n(h, __ATOMIC_ACQUIRE) != *slot)
            __atomic_store_n(h, *slot, __ATOMIC_RELEASE);
        return;
    }
    r->id = st.ntmpl + 1;
    if (KM_KIND_IS_ROUTINE(r->kind))
        r->routine = r->id;
    r->k = 1;
    r->learn_at = 1;                 /* the first execution */
    st.tmpl[st.ntmpl] = r;
    __atomic_store_n(&st.ntmpl, st.ntmpl + 1, __ATOMIC_RELEASE);
    *slot = r->id;
    __atomic_store_n(h, r->id, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                   */

/* Is the calling thread the process's initial one (Linux: its thread id
 * is the process id)?  Elsewhere the first thread to call libkm is taken
 * for it. */
static int initial_thread(void)
{
#ifdef SYS_gettid
    return syscall(SYS_gettid) == getpid();
#else
    return __atomic_load_n(&st.nthreads, __ATOMIC_RELAXED) == 0;
#endif
}

/* The OpenMP thread number, where the program runs OpenMP (a weak
 * reference: libkm does not need libgomp or libomp). */
extern int omp_get_thread_num(void) __attribute__((weak));

/* The calling thread's first call into libkm: its state, set up and
 * published in st.threads; NULL when there is no memory for it (its
 * calls are then ignored and counted). */
static uint64_t lost_threads;

static int main_taken;

/* A thread that ends with every frame closed leaves its state to the next
 * thread that starts (its row, its figures go on with that thread), so a
 * program that starts and ends threads without end keeps no more states
 * than it ever ran at once (OpenMP keeps its threads anyway). */
static void thread_ended(void *arg)
{
    struct km_thread *t = arg;
    if (!t || t == &main_thread)
        return;
    if (cpu_clock()) {               /* its clock ends with it */
        t->cpu_end = cold_now();
        __atomic_store_n(&t->ended, 1, __ATOMIC_RELEASE);
    }
    if (t->sp != 0)
        return;
    pthread_mutex_lock(&st.lock);
    t->free_next = free_states;
    free_states = t;
    pthread_mutex_unlock(&st.lock);
}

static struct km_thread *recycled_state(void)
{
    pthread_mutex_lock(&st.lock);
    struct km_thread *t = free_states;
    if (t)
        free_states = t->free_next;
    pthread_mutex_unlock(&st.lock);
    return t;
}

/* With the CPU clock, thread t's clock is the calling thread's from now
 * on; a state an ended thread left goes on from that thread's CPU time
 * (the new thread's clock starts elsewhere: t0 moves by the difference,
 * as hide_time moves it; every frame is closed). */
static void take_cpu_clock(struct km_thread *t)
{
    if (!cpu_clock())
        return;
    t->cpu_id_ok = km_clock_cpu_id(&t->cpu_id) == 0;
    if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE)) {
        t->t0 += cold_now() - t->cpu_end;
        __atomic_store_n(&t->ended, 0, __ATOMIC_RELEASE);
    }
}

static KM_NOINLINE struct km_thread *attach(void)
{
    struct km_thread *t;
    if (initial_thread() &&
        !__atomic_exchange_n(&main_taken, 1, __ATOMIC_ACQ_REL)) {
        t = &main_thread;
    } else if ((t = recycled_state()) != NULL) {
        self = t;
        on_main = 0;
        take_cpu_clock(t);
        if (end_key_made)
            pthread_setspecific(end_key, t);
        return t;
    } else {
        t = km_mem_alloc(sizeof *t);
        if (!t) {
            __atomic_fetch_add(&lost_threads, 1, __ATOMIC_RELAXED);
            return NULL;
        }
        memset(t, 0, offsetof(struct km_thread, stack));
    }
    t->omp = omp_get_thread_num ? omp_get_thread_num() : -1;
    self = t;
    on_main = t == &main_thread;
    init(t);                         /* the first thread: calibrates on t */
    if (t != &main_thread && end_key_made)
        pthread_setspecific(end_key, t);
    pthread_mutex_lock(&st.lock);
    t->index = t == &main_thread ? 0 : ++st.nthreads;
    pthread_mutex_unlock(&st.lock);
    t->trace.thread = t->index;  /* (a recycled state keeps both) */
    if (!t->started) {               /* not the thread init_once set up */
        reset_root(t);
        t->rng = st.seed ^ (0x9e3779b97f4a7c15u * (uint64_t)(t->index + 1));
        t->t0 = cold_now();
        t->started = 1;
    }
    take_cpu_clock(t);
    pthread_mutex_lock(&st.lock);
    t->next = st.threads;
    __atomic_store_n(&st.threads, t, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&st.lock);
    return t;
}

#define THREAD_OR(fail) \
    struct km_thread *t = self; \
    if (KM_UNLIKELY(!t) && !(t = attach())) \
        fail

/* The thread's table catches up with the registrations (under the lock):
 * a copy of each new region's identity, with figures of its own. */
static KM_NOINLINE void sync_regions(struct km_thread *t)
{
    pthread_mutex_lock(&st.lock);
    int32_t n = st.ntmpl;
    if (n > t->cap) {
        int32_t ncap = t->cap ? t->cap : 256;
        while (ncap < n)
            ncap *= 2;
        struct km_region **tab = km_mem_alloc((size_t)ncap * sizeof *tab);
        if (!tab) {
            pthread_mutex_unlock(&st.lock);
            return;
        }
        if (t->nreg)
            memcpy(tab, t->tab, (size_t)t->nreg * sizeof *tab);
        /* the old table is kept: a write on another thread may be
         * reading it */
        signal_fence();
        t->tab = tab;
        t->cap = ncap;
    }
    while (t->nreg < n) {
        struct km_region *r = km_region_alloc();
        if (!r)
            break;
        *r = *st.tmpl[t->nreg];
        t->tab[t->nreg] = r;
        signal_fence();
        t->nreg++;
    }
    if (t == &main_thread)
        km_tl_grow(&tl, t->tab, t->nreg);
    pthread_mutex_unlock(&st.lock);
}

static void notice_mpi(struct km_thread *t, int at_write);

/* A registration is libkm's own work: its time goes to the overhead, and
 * so out of the frame that is open around it.  Until MPI is seen running,
 * the program's thread also asks whether it runs (notice_mpi). */
void km_reg_f(int32_t *h, const int32_t *hr, const char *text)
{
    THREAD_OR(return);
    km_tick t1 = cold_now();
    pthread_mutex_lock(&st.lock);
    reg(h, hr, text);
    pthread_mutex_unlock(&st.lock);
    if (KM_UNLIKELY(st.mpi_state == MPI_NONE) && t == &main_thread)
        notice_mpi(t, 0);
    t->ovh += KM_SUB(cold_now() - t1);
}

/* ------------------------------------------------------------------------ */
/* Hooks: trace, redundant work, MPI start-up (cold; regions with `hooks`)   */

static struct km_trace_run trace_run(void)
{
    return (struct km_trace_run){ st.clock.name, st.clock.seconds_per_tick,
                                  st.t0 };
}

/* The clock for an event of thread t's trace. */
static km_tick trace_now(struct km_thread *t)
{
    __atomic_store_n(&t->trace_reads, t->trace_reads + 1, __ATOMIC_RELAXED);
    return km_clock_read(&st.clock);
}

static void trace(struct km_thread *t, struct km_region *r, int in,
                  km_tick now)
{
    struct km_trace_run run = trace_run();
    if (now == KM_UNREAD)
        now = trace_now(t);
    km_trace_event(&t->trace, &run, r, t->tab[r->routine - 1], in, now);
}

/* km_msg.c's: a message of MPI call site id, into the trace if its region
 * is traced. */
void km_core_trace_message(int32_t id, int sent, int64_t bytes, int32_t peer,
                           int32_t tag, int comm)
{
    struct km_thread *t = self;
    if (!km_trace_active() || !t || id <= 0 || id > t->nreg ||
        !(t->tab[id - 1]->hooks & KM_HOOK_TRACE))
        return;
    struct km_trace_run run = trace_run();
    km_trace_message(&t->trace, &run, id, sent, bytes, peer, tag, comm,
                     trace_now(t));
}

void km_core_trace_comm(int id, int32_t size, int32_t inter,
                        const int32_t *world)
{
    struct km_thread *t = self;
    if (!km_trace_active() || !t)
        return;
    struct km_trace_run run = trace_run();
    km_trace_comm(&t->trace, &run, id, size, inter, world, trace_now(t));
}

static void enter_hooks(struct km_thread *t, struct km_region *r,
                        km_tick now)
{
    if ((r->hooks & KM_HOOK_STARTUP) && st.t_startup == 0)
        st.t_startup = now != KM_UNREAD ? now : cold_now();
    if (r->hooks & KM_HOOK_REDUNDANT)
        t->red_depth++;
    if (r->hooks & KM_HOOK_TRACE)
        trace(t, r, 1, now);
}

/* e: the frame's elapsed time (measured, or estimated). */
static KM_NOINLINE void leave_hooks(struct km_thread *t,
                                    struct km_region *r, km_time e,
                                    km_tick now)
{
    if ((r->hooks & KM_HOOK_MPI) && t->red_depth > 0)
        t->red_mpi += e;
    if ((r->hooks & KM_HOOK_REDUNDANT) && --t->red_depth == 0)
        t->red_time += e;
    if (r->hooks & KM_HOOK_TRACE)
        trace(t, r, 0, now);
    if (r->hooks & KM_HOOK_IO)
        km_io_leave(e, now == KM_UNREAD);
}

/* ------------------------------------------------------------------------ */
/* Sampling                                                                  */

static uint64_t next_random(struct km_thread *t)
{
    uint64_t x = t->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t->rng = x;
    return x;
}

/* One in about k executions is measured: as many as keep what sampling
 * adds (a measured execution's cost beyond an estimated one's) within
 * 0.5% of the region's time or st.budget, whichever is more. */
static uint32_t interval(const struct km_region *r)
{
    if (st.fixed_k)
        return st.fixed_k;
    km_time extra = st.cost_measured - st.cost_estimated;
    km_time allow = r->mean_frame / 200;
    if (allow < st.budget)
        allow = st.budget;
    if (extra <= 0)
        return 1;
    km_time k = (extra + allow - 1) / allow;
    return k > (km_time)KM_K_MAX ? KM_K_MAX : (uint32_t)k;
}

/* The executions until the next sample: random between k/2 and 3k/2 (k
 * on average), so that no period in the program can line up with the
 * samples. */
static uint32_t gap(struct km_thread *t, uint32_t k)
{
    if (k <= 1)
        return 1;
    return k / 2 + (uint32_t)(next_random(t) % (k + 1));
}

static km_time ewma(km_time mean, km_time x)
{
    return mean + (x - mean) / 8;
}

/* The region has been measured `thresh` times, and at least twice: its
 * estimate starts as the mean own time of every measured execution but
 * the first (all of them are in excl: none was estimated yet). */
static void start_sampling(struct km_thread *t, struct km_region *r,
                           km_time e)
{
    r->mean_own = (r->excl - r->first_own) / (km_time)(r->measured - 1);
    if (r->mean_own < 0)
        r->mean_own = 0;
    r->mean_frame = e;
    r->sampling = 1;
    r->learn_at = 0;                 /* every sample */
    r->k = interval(r);
    r->skip = gap(t, r->k) - 1;
}

/* A sample taken inside region `caller` updates that caller's estimate,
 * or gives it the slot (the first sample is its estimate). */
static void learn_caller(struct km_region *r, int32_t caller, km_time own)
{
    struct km_ctx *c = &r->ctx[(uint32_t)caller % KM_NCTX];
    if (c->caller == caller) {
        c->mean_own = ewma(c->mean_own, own);
    } else {
        c->caller = caller;
        c->mean_own = own;
    }
}

/* What a measured exit inside region `caller` teaches a region: the
 * first execution's time (left out of the estimates), when to start
 * sampling, and, for a sample, new estimates and the next gap.  An
 * execution measured out of turn (its region was waiting at another
 * anchor) is not a sample: it was not chosen at random. */
static KM_NOINLINE void learn(struct km_thread *t, struct km_region *r,
                              int32_t caller,
                              km_time own, km_time e)
{
    if (!r->sampling) {
        if (r->measured == 1)
            r->first_own = own;
        r->learn_at = r->thresh > 2 ? r->thresh : 2;
        if (r->measured >= r->learn_at)
            start_sampling(t, r, e);
        return;
    }
    if (r->skip != 0)
        return;
    r->mean_own = ewma(r->mean_own, own);
    r->mean_frame = ewma(r->mean_frame, e);
    if (caller > 0)
        learn_caller(r, caller, own);
    r->k = interval(r);
    r->skip = gap(t, r->k) - 1;
}

/* The estimate of r's own time for an execution inside region `caller`. */
static KM_ALWAYS_INLINE km_time estimate(const struct km_region *r,
                                         int32_t caller)
{
    const struct km_ctx *c = &r->ctx[(uint32_t)caller % KM_NCTX];
    return c->caller == caller ? c->mean_own : r->mean_own;
}

static void checkpoint(struct km_thread *t, int32_t a);

/* The entry for region `id` in the table of frame f, or -1; *free: the
 * first free one met looking for it (-1 if none). */
static int wait_entry(const struct km_frame *f, int32_t id, int *free)
{
    *free = -1;
    for (int k = 0; k < KM_NWAIT; k++) {
        int s = (id + k) & (KM_NWAIT - 1);
        if (!(f->used >> s & 1)) {
            if (*free < 0)
                *free = s;
        } else if (f->wait[s].id == id) {
            return s;
        }
    }
    return -1;
}

static void claim_wait(struct km_frame *f, int s, int32_t id)
{
    f->wait[s] = (struct km_wait){ .id = id };
    signal_fence();
    f->used |= 1u << s;
}

/* The entry of anchor a's table for region r, not where r's id puts it
 * first: found, added, or added after a checkpoint emptied the table; -1
 * only when the frames open above the anchor fill the table on their own
 * (then this execution is measured). */
static KM_NOINLINE int find_wait(struct km_thread *t, struct km_region *r,
                                 int32_t a)
{
    struct km_frame *f = &t->stack[a];
    int free;
    int s = wait_entry(f, r->id, &free);
    if (s >= 0)
        return s;
    if (free < 0) {
        checkpoint(t, a);
        s = wait_entry(f, r->id, &free);
        if (s >= 0)
            return s;
        if (free < 0)
            return -1;
    }
    claim_wait(f, free, r->id);
    return free;
}

/* Is this execution of r, about to open above frame `below`, estimated?
 * Its entry in its anchor's table, or -1: measured. */
static KM_ALWAYS_INLINE int estimate_now(struct km_thread *t,
                                         struct km_region *r, int32_t below)
{
    if (r->skip == 0)
        return -1;
    r->skip--;
    int32_t a = t->stack[below].anchor;
    const struct km_frame *f = &t->stack[a];
    int s = r->id & (KM_NWAIT - 1);
    if (KM_LIKELY((f->used >> s & 1) && f->wait[s].id == r->id))
        return s;
    return find_wait(t, r, a);
}

/* ------------------------------------------------------------------------ */
/* Settling estimates                                                        */

/* Commit the estimates of region q, own time `own` making `el` of its
 * elapsed time, keeping the share `keep` of each; returns the own time
 * taken back when q is a callee (which its anchor's callee time held). */
static km_time commit(struct km_region *q, km_time own, km_time el,
                      double keep)
{
    km_time back_own = 0, back_el = 0;
    if (keep < 1) {
        /* own time taken back rounded up, so that what stays fits (no
         * libm: the program links libkm, not necessarily -lm); the rest
         * of elapsed (what came from the regions inside) loses the same
         * share, rounded down, so that elapsed still holds own time */
        double x = (1 - keep) * (double)own;
        back_own = (km_time)x;
        if ((double)back_own < x)
            back_own++;
        if (back_own > own)
            back_own = own;
        km_time rest = el > own ? el - own : 0;
        back_el = back_own + (km_time)((1 - keep) * (double)rest);
        if (back_el > el)
            back_el = el;
    }
    q->excl += own - back_own;
    q->est_excl += own - back_own;
    q->elapsed += el - back_el;
    q->est_el += el - back_el;
    return q->callee ? back_own : 0;
}

/* The share of the estimates inside a frame that fits in its measured time
 * e: the frame holds callee time cc, of which ci is estimated. */
static double share_that_fits(km_time e, km_time cc, km_time ci)
{
    if (cc <= e || ci <= 0)
        return 1;
    km_time measured = cc - ci;
    return measured >= e ? 0 : (double)(e - measured) / (double)ci;
}

/* Measured frame f (or the root) has measured e so far: settle the
 * estimates that wait in it.  *cc and *ci (the callee time inside, and
 * its estimated part) lose what was taken back. */
static KM_NOINLINE void settle(const struct settle *c, struct km_frame *f,
                               km_time e, km_time *cc, km_time *ci)
{
    double keep = share_that_fits(e, *cc, *ci);
    km_time taken = 0;
    uint32_t used = f->used;
    f->used = 0;
    signal_fence();
    int timeline = !c->copy && c->t == &main_thread;
    for (int s = 0; used; s++, used >>= 1) {
        if (!(used & 1))
            continue;
        struct km_region *q = region_of(c, f->wait[s].id);
        km_time excl = q->excl, el = q->elapsed;
        taken += commit(q, f->wait[s].own, f->wait[s].el, keep);
        if (timeline)                /* what stays, in the current slot */
            km_tl_put(&tl, km_tl_code(&tl, q->id),
                      q->callee ? q->excl - excl : q->elapsed - el);
    }
    *cc -= taken;
    *ci -= taken;
}

/* ------------------------------------------------------------------------ */
/* The hot path                                                              */

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

/* Close estimated frame i of stk (already off the stack): its own time is
 * the region's estimate (taken at its entry, f->ovh0), which waits at its
 * anchor; its elapsed time adds what the frames inside reported.  A
 * callee frame's child and inv started at the estimate. */
static KM_ALWAYS_INLINE void leave_estimated(const struct settle *c,
                                             struct km_frame *stk, int32_t i,
                                             int live)
{
    struct km_frame *f = &stk[i];
    struct km_region *r = f->r;
    km_time m = f->ovh0;
    km_time e, ei;                   /* elapsed, and its estimated part */
    if (r->callee) {
        e = f->child;
        ei = f->inv;
    } else {
        const struct km_frame *o = &stk[f->own];
        e = m + o->child - f->child;
        ei = m + o->inv - f->inv;
    }
    int outermost = r->top == i;
    if (KM_LIKELY(f->slot >= 0)) {
        struct km_wait *w = &stk[f->anchor].wait[f->slot];
        w->own += m;
        if (outermost)
            w->el += ei;
    }
    if (outermost) {
        r->top = 0;
        if (e != ei)                 /* measured regions inside */
            r->elapsed += e - ei;
    }
    if (r->callee) {
        struct km_frame *o = &stk[stk[i - 1].own];
        o->child += e;
        o->inv += ei;
    }
    if (KM_UNLIKELY(live & (r->hooks != 0)))
        leave_hooks(c->t, r, e, KM_UNREAD);
}

/* The program's thread closes measured frame i of region r, begun at
 * `start`: its own time (a callee) or elapsed time (an I/O statement)
 * goes to the current slot, less what tl_cross gave earlier slots. */
static KM_NOINLINE void tl_leave_long(int32_t code, int32_t i,
                                      km_time amount)
{
    km_tl_put(&tl, code, amount - tl_done[i]);
    tl_done[i] = 0;
}

static KM_ALWAYS_INLINE void tl_leave(const struct km_region *r, int32_t i,
                                      km_tick start, km_time own, km_time e)
{
    int32_t code = km_tl_code(&tl, r->id);
    if (KM_LIKELY(r->callee)) {
        if (KM_UNLIKELY(start < tl.slot_start)) {
            tl_leave_long(code, i, own);
            return;
        }
        tl.cat[tl.row][KM_TL_CAT(code)] += own;
        tl.rt[(size_t)KM_TL_RIX(code) * KM_TL_ROWS + (size_t)tl.row] += own;
    } else if (KM_UNLIKELY(KM_TL_CAT(code) == KM_TL_IO)) {
        if (start < tl.slot_start)
            tl_leave_long(code, i, e);
        else
            km_tl_put(&tl, code, e);
    }
}

/* Close measured frame i of stk at clock `now`: settle the estimates
 * inside it, then fold it into its region. */
static KM_ALWAYS_INLINE void leave_measured(const struct settle *c,
                                            struct km_frame *stk, int32_t i,
                                            km_tick now, int live)
{
    struct km_frame *f = &stk[i];
    struct km_region *r = f->r;
    km_time e = KM_SUB(now - f->start) - st.cost_inner - (*c->ovh - f->ovh0);
    km_time cc, ci;
    inside(stk, f, &cc, &ci);
    km_time ci0 = ci;
    if (KM_UNLIKELY(f->used != 0))
        settle(c, f, e, &cc, &ci);
    if (KM_UNLIKELY(e < cc)) {       /* more overhead taken out than spent */
        *c->ovh -= cc - e;
        e = cc;
    }
    km_time own = e - cc;
    if (live && c->t == &main_thread)
        tl_leave(r, i, f->start, own, e);
    r->measured++;
    r->excl += own;
    if (r->top == i) {
        r->top = 0;
        r->elapsed += e;
    }
    if (r->callee) {
        if (ci0)
            r->absorbed += ci0;
        stk[stk[i - 1].own].child += e;
    } else if (ci0 != 0) {
        /* the owner's callee time lost what was taken back; what stays is
         * settled against this frame, and is the owner's net's concern */
        struct km_frame *o = &stk[f->own];
        o->child -= ci0 - ci;
        o->inv -= ci0;
        if (o->r)
            o->r->absorbed += ci0;
    }
    if (KM_UNLIKELY(live & (r->measured >= r->learn_at)))
        learn(c->t, r, stk[i - 1].id, own, e);
    if (KM_UNLIKELY(live & (r->hooks != 0)))
        leave_hooks(c->t, r, e, now);
}

static KM_ALWAYS_INLINE void leave(const struct settle *c, struct km_frame *stk,
                                   int32_t i, km_tick now, int live)
{
    if (stk[i].start == KM_UNREAD)
        leave_estimated(c, stk, i, live);
    else
        leave_measured(c, stk, i, now, live);
}

/* Settling on the thread's live figures. */
#define LIVE(t) (&(const struct settle){ NULL, (t)->tab, &(t)->ovh, (t) })

/* The estimated frames still open above anchor a had entries in its
 * table, which a checkpoint emptied: they get entries again (or, in the
 * unlikely case that more regions than the table holds are open there at
 * once, their estimate is dropped: slot -1). */
static void rehome_open_frames(struct km_thread *t, int32_t a)
{
    struct km_frame *af = &t->stack[a];
    for (int32_t j = a + 1; j <= t->sp; j++) {
        struct km_frame *f = &t->stack[j];
        if (!f->r || f->start != KM_UNREAD || f->anchor != a)
            continue;
        int free;
        int s = wait_entry(af, f->r->id, &free);
        if (s < 0 && free >= 0)
            claim_wait(af, s = free, f->r->id);
        f->slot = s;
        if (s < 0) {                 /* its estimate goes nowhere */
            if (f->r->callee) {
                f->child -= f->ovh0;
                f->inv -= f->ovh0;
            }
            f->ovh0 = 0;
        }
    }
}

/* A checkpoint of anchor a settled ci0 of estimated callee time held in
 * frame h (and took `taken` of it back).  The frames open above a that
 * share h's callee time took their snapshot of it when they began, after
 * some of that time: each keeps what was inside it, less its share of
 * what was taken back, and has nothing unsettled inside it any more (its
 * estimated part would otherwise come out negative). */
static void resnap_open_frames(struct km_thread *t, int32_t a, int32_t h,
                               km_time ci0,
                               km_time taken)
{
    const struct km_frame *holder = &t->stack[h];
    for (int32_t j = a + 1; j <= t->sp; j++) {
        struct km_frame *f = &t->stack[j];
        if (!f->r || f->r->callee || f->own != h)
            continue;
        /* inside f before the checkpoint: callee time and its estimated
         * part, as they were (holder's figures are already reduced) */
        km_time ins_child = holder->child + taken - f->child;
        km_time ins_inv = holder->inv + ci0 - f->inv;
        km_time back = ci0 > 0 ? (km_time)((double)taken * (double)ins_inv /
                                           (double)ci0) : 0;
        f->child = holder->child - (ins_child - back);
        f->inv = holder->inv;
    }
}

static km_time elapsed_so_far(const struct km_thread *t,
                              const struct km_frame *f, km_tick now);

/* Measured time spent so far in the frames open above anchor a, which
 * reaches a's callee time only as they close: the open measured callee
 * nearest a (everything above it is inside it), and what the estimated
 * callees below it have taken in from measured frames already closed.
 * A checkpoint must not let estimates take that time: when the frame
 * closes, its measured time would not fit (a long sample still open at
 * a slot's end made a caller shorter than its callee). */
static km_time open_measured_above(const struct km_thread *t, int32_t a,
                                   km_tick now)
{
    km_time sum = 0;
    for (int32_t j = a + 1; j <= t->sp; j++) {
        const struct km_frame *f = &t->stack[j];
        if (!f->r || !f->r->callee)
            continue;
        if (f->start != KM_UNREAD) {
            km_time e = elapsed_so_far(t, f, now);
            return sum + (e > 0 ? e : 0);
        }
        if (f->child > f->inv)
            sum += f->child - f->inv;
    }
    return sum;
}

/* Anchor a's table is full: settle it now against the time the anchor
 * has measured so far, as if it closed (the executions it holds all lie
 * within that time, less what frames still open above it have measured),
 * and carry on with an empty table. */
static KM_NOINLINE void checkpoint(struct km_thread *t, int32_t a)
{
    struct km_frame *f = &t->stack[a];
    km_tick now = cold_now();
    km_time e, cc, ci;
    if (a == 0) {
        e = KM_SUB(now - t->t0) - t->ovh;
        cc = f->child;
        ci = f->inv;
    } else {
        e = KM_SUB(now - f->start) - st.cost_inner - (t->ovh - f->ovh0);
        inside(t->stack, f, &cc, &ci);
    }
    e -= open_measured_above(t, a, now);
    km_time ci0 = ci;
    settle(LIVE(t), f, e, &cc, &ci);
    /* what stays is settled: the callee time that holds it loses what was
     * taken back, and its estimated part is settled */
    int32_t h = a == 0 || f->r->callee ? a : f->own;
    struct km_frame *holder = &t->stack[h];
    km_time taken = ci0 - ci;
    holder->child -= taken;
    holder->inv -= ci0;
    if (holder->r)
        holder->r->absorbed += ci0;
    resnap_open_frames(t, a, h, ci0, taken);
    rehome_open_frames(t, a);
}

/* Elapsed time so far of open measured frame f at `now`. */
static km_time elapsed_so_far(const struct km_thread *t,
                              const struct km_frame *f, km_tick now)
{
    return KM_SUB(now - f->start) - st.cost_inner - (t->ovh - f->ovh0);
}

/* Give the open measured routines and MPI calls of frames 1..top their
 * own time so far (less what they gave before, `done`, as tl_done),
 * spread over the slots since the current one began, into `into` (the
 * live timeline, or a copy).  A callee frame's own time is its elapsed
 * time less its callees': those closed (its child) and the one open
 * directly inside it. */
static void tl_give_open(const struct km_thread *t, int32_t top, km_tick now,
                         struct km_timeline *into, km_time *done)
{
    km_time inner = 0;               /* elapsed of the open callee above */
    for (int32_t j = top; j >= 1; j--) {
        const struct km_frame *f = &t->stack[j];
        if (!f->r)
            continue;
        if (!f->r->callee) {         /* an I/O statement's time so far */
            int32_t code = km_tl_code(into, f->r->id);
            if (KM_TL_CAT(code) != KM_TL_IO || f->start == KM_UNREAD)
                continue;
            km_time e = elapsed_so_far(t, f, now);
            km_tl_spread(into, f->start, now, code, e - tl_done[j]);
            if (done)
                done[j] = e;
            continue;
        }
        if (f->start == KM_UNREAD) { /* estimated: its estimate so far */
            inner += f->child;
            continue;
        }
        km_time e = elapsed_so_far(t, f, now);
        km_time own = e - f->child - inner;
        km_tl_spread(into, f->start, now, km_tl_code(into, f->r->id),
                     own - tl_done[j]);
        if (done)
            done[j] = own;
        inner = e;
    }
}

/* The program's thread's first exit past the current slot's end (frames
 * 1..top open): estimates waiting in open frames are settled into the
 * slot ending (checkpoints), the open frames give it their own time so
 * far, and the slot of `now` becomes the current one. */
static KM_NOINLINE void tl_cross(struct km_thread *t, int32_t top, km_tick now)
{
    if (tl.slot_end == 0)
        return;
    for (int32_t a = 0; a <= top; a++) {
        const struct km_frame *f = &t->stack[a];
        if ((a == 0 || (f->r && f->start != KM_UNREAD)) && f->used)
            checkpoint(t, a);
    }
    km_tl_fit(&tl, now);
    tl_give_open(t, top, now, &tl, tl_done);
    km_tl_place(&tl, now);
}

/* Open frame i for region r (not yet published: t->sp is still i - 1);
 * estimated into entry `slot` of its anchor's table, or measured (slot
 * -1); its clock, if any, is read last. */
static KM_ALWAYS_INLINE struct km_frame *push(struct km_thread *t,
                                              struct km_region *r, int32_t i,
                                              int slot)
{
    struct km_frame *f = &t->stack[i];
    const struct km_frame *below = &t->stack[i - 1];
    r->count++;
    if (r->top == 0)                 /* not open yet: outermost frame */
        r->top = i;
    f->r = r;
    f->id = r->id;
    km_time m = slot >= 0 ? estimate(r, below->id) : 0;
    if (r->callee) {
        f->own = i;
        f->child = m;                /* its own estimate counts in */
        f->inv = m;
    } else {
        f->own = below->own;
        f->child = t->stack[f->own].child;
        f->inv = t->stack[f->own].inv;
    }
    if (slot >= 0) {
        f->anchor = below->anchor;
        f->slot = slot;
        f->ovh0 = m;
        t->ovh += st.cost_estimated;
    } else {
        f->anchor = i;
        f->used = 0;
        t->ovh += st.cost_measured;
        f->ovh0 = t->ovh;
    }
    return f;
}

/* An entry the fast path does not take: a bad handle, or a full stack,
 * which gets a sentinel frame no KM_OUT matches; entries above it are
 * counted, and their exits pop nothing. */
void km_in_f(const int32_t *h);

static void enter(struct km_thread *t, const int32_t *h);
static void leave_top(struct km_thread *t, const int32_t *h);

/* A task's body begins (KM_IN of minus its routine's handle): where its
 * routine is neither open on this thread nor the one of the region it
 * runs in (a task another routine's code waits for, here), it enters the
 * routine, as the body is compiled into a function of its own, so that
 * the routine's figures hold those of its locations run here; elsewhere
 * (in the routine, or in a parallel region of the routine on another
 * thread) it does nothing.  Tied tasks nest on a thread. */
static void task_in(struct km_thread *t, int32_t routine)
{
    int d = t->task_depth++;
    const struct km_region *in = t->stack[t->sp].r;
    int open = t->tab[routine - 1]->top != 0 ||
               (in && in->routine == routine);
    if (d >= 64)
        return;                   /* (deeper ones enter nothing) */
    t->task_entered &= ~(1ull << d);
    if (open)
        return;
    t->task_entered |= 1ull << d;
    enter(t, &routine);
}

static void task_out(struct km_thread *t, int32_t routine)
{
    if (t->task_depth == 0) {
        t->bad_out++;
        return;
    }
    int d = --t->task_depth;
    if (d < 64 && (t->task_entered >> d & 1))
        leave_top(t, &routine);
}

static KM_NOINLINE void km_in_slow(struct km_thread *t, const int32_t *h)
{
    int32_t id = *h;
    if (id < 0 && id != INT32_MIN) {  /* a task's body */
        if (-id > t->nreg)
            sync_regions(t);
        if (-id <= t->nreg && KM_KIND_IS_ROUTINE(t->tab[-id - 1]->kind))
            task_in(t, -id);
        else
            t->bad_in++;
        return;
    }
    if (id > t->nreg) {              /* registered since: catch up */
        sync_regions(t);
        if (id <= t->nreg) {
            km_in_f(h);
            return;
        }
    }
    if (id <= 0 || id > t->nreg) {
        t->bad_in++;
        return;
    }
    t->lost++;
    if (t->overflow_depth++ == 0) {
        int32_t i = t->sp + 1;
        t->stack[i] = (struct km_frame){ .r = NULL, .id = KM_ID_FULL,
                                         .own = t->stack[i - 1].own,
                                         .anchor = t->stack[i - 1].anchor };
        signal_fence();
        t->sp = i;
    }
}

/* A region's first entry: its place in the routine table, the region
 * around it, and whether its entries take the general path. */
static void first_entry(struct km_thread *t, struct km_region *r, int32_t i)
{
    if (KM_KIND_IS_ROUTINE(r->kind)) {
        r->order = ++t->nentered;
    } else {
        /* (a location a thread runs outside its routine, as a parallel
         * region's worker threads do, has nothing around it) */
        const struct km_region *below = t->stack[i - 1].r;
        if (below && (below->id == r->routine || below->routine == r->routine))
            r->parent = below->id;
        else if (r->routine > 0 && r->routine <= t->nreg &&
                 t->tab[r->routine - 1]->top != 0)
            r->parent = r->routine;
        else
            r->parent = 0;
    }
    r->slow = r->hooks || st.clock.kind != KM_CLOCK_TSC;
}

/* The entries the fast path leaves out (r->slow): a first entry, a region
 * with hooks, a clock read through a function. */
static KM_NOINLINE void km_in_general(struct km_thread *t,
                                      struct km_region *r, int32_t i)
{
    if (r->count == 0)
        first_entry(t, r, i);
    int slot = estimate_now(t, r, i - 1);
    struct km_frame *f = push(t, r, i, slot);
    km_tick now = slot >= 0 ? KM_UNREAD : km_clock_read(&st.clock);
    f->start = now;                  /* last, so our work is not in it */
    if (r->hooks)
        enter_hooks(t, r, now);
    signal_fence();
    t->sp = i;
}

/* A measured entry (the clock costs more than the call); a copy for the
 * program's thread, whose state is at a fixed address. */
static KM_ALWAYS_INLINE void in_measured(struct km_thread *t,
                                         struct km_region *r, int32_t i)
{
    struct km_frame *f = push(t, r, i, -1);
    f->start = km_clock_tsc();       /* last */
    signal_fence();
    t->sp = i;
}

static KM_NOINLINE void km_in_measured(struct km_thread *t,
                                       struct km_region *r, int32_t i)
{
    if (t == &main_thread)
        in_measured(&main_thread, r, i);
    else
        in_measured(t, r, i);
}

/* An estimated entry whose anchor's table has another region's entry
 * where the region's id puts its own. */
static KM_NOINLINE void km_in_find(struct km_thread *t, struct km_region *r,
                                   int32_t i)
{
    int slot = estimate_now(t, r, i - 1);
    if (slot < 0) {
        km_in_measured(t, r, i);
        return;
    }
    struct km_frame *f = push(t, r, i, slot);
    f->start = KM_UNREAD;
    signal_fence();
    t->sp = i;
}

/* Every case but the estimated entry whose table entry is where its
 * region's id puts it ends in a tail call, so that this one saves no
 * register. */
static KM_ALWAYS_INLINE void enter(struct km_thread *t, const int32_t *h)
{
    uint32_t k = (uint32_t)*h - 1;
    int32_t i = t->sp + 1;
    if (KM_UNLIKELY(k >= (uint32_t)t->nreg || i >= KM_STACK_DEPTH - 1)) {
        km_in_slow(t, h);
        return;
    }
    struct km_region *r = t->tab[k];
    if (KM_UNLIKELY(r->slow)) {
        km_in_general(t, r, i);
        return;
    }
    if (r->skip == 0) {
        km_in_measured(t, r, i);
        return;
    }
    struct km_frame *a = &t->stack[t->stack[i - 1].anchor];
    int slot = r->id & (KM_NWAIT - 1);
    if (!(a->used >> slot & 1))      /* first here: the entry is free */
        claim_wait(a, slot, r->id);
    else if (KM_UNLIKELY(a->wait[slot].id != r->id)) {
        km_in_find(t, r, i);
        return;
    }
    r->skip--;
    struct km_frame *f = push(t, r, i, slot);
    f->start = KM_UNREAD;
    signal_fence();
    t->sp = i;
}

static KM_NOINLINE void km_in_any(const int32_t *h)
{
    THREAD_OR(return);
    enter(t, h);
}

/* The program's thread works on main_thread at a fixed address, as the
 * single-threaded libkm did: its test of the thread-local flag runs beside
 * the loads of its state instead of before them (a pointer loaded from
 * thread-local storage would hold up every load behind it). */
void km_in_f(const int32_t *h)
{
    if (KM_LIKELY(on_main))
        enter(&main_thread, h);
    else
        km_in_any(h);
}

static KM_NOINLINE void km_out_slow(struct km_thread *t, int32_t id)
{
    if (id < 0 && id != INT32_MIN && -id <= t->nreg) {
        task_out(t, -id);
        return;
    }
    if (t->stack[t->sp].id == KM_ID_FULL) {  /* an entry that did not fit */
        if (--t->overflow_depth == 0)
            t->sp--;
        return;
    }
    if (id <= 0 || id > __atomic_load_n(&st.ntmpl, __ATOMIC_ACQUIRE)) {
        t->bad_in++;
        return;
    }
    int32_t j = t->sp;
    while (j > 0 && t->stack[j].id != id)
        j--;
    if (j == 0) {                    /* not open: ignore, but say so */
        t->bad_out++;
        return;
    }
    /* A jump out of measured loops: every frame from the top down to j
     * closes at the same instant, with one clock read. */
    uint64_t measured = 0;
    for (int32_t i = j; i <= t->sp; i++)
        measured += t->stack[i].start != KM_UNREAD;
    km_tick now = measured ? km_clock_read(&st.clock) : KM_UNREAD;
    if (measured)
        t->saved_reads += measured - 1;
    int32_t top = t->sp;
    if (measured && t == &main_thread && now >= tl.slot_end)
        tl_cross(t, top, now);
    t->sp = j - 1;
    signal_fence();
    for (int32_t i = top; i >= j; i--)
        leave(LIVE(t), t->stack, i, now, 1);
}

/* The exit of the top frame, measured: the clock read first. */
static KM_ALWAYS_INLINE void out_measured(struct km_thread *t, int32_t i)
{
    km_tick now = KM_LIKELY(st.clock.kind == KM_CLOCK_TSC)
                      ? km_clock_tsc() : km_clock_read(&st.clock);
    if (t == &main_thread && KM_UNLIKELY(now >= tl.slot_end))
        tl_cross(t, i, now);
    t->sp = i - 1;
    signal_fence();
    leave_measured(LIVE(t), t->stack, i, now, 1);
}

static KM_NOINLINE void km_out_measured(struct km_thread *t, int32_t i)
{
    if (t == &main_thread)
        out_measured(&main_thread, i);
    else
        out_measured(t, i);
}

static KM_ALWAYS_INLINE void leave_top(struct km_thread *t, const int32_t *h)
{
    int32_t i = t->sp;
    struct km_frame *f = &t->stack[i];
    if (KM_UNLIKELY(f->id != *h)) {
        km_out_slow(t, *h);
        return;
    }
    if (f->start != KM_UNREAD) {
        km_out_measured(t, i);
        return;
    }
    t->sp = i - 1;
    signal_fence();
    leave_estimated(LIVE(t), t->stack, i, 1);
}

static KM_NOINLINE void km_out_any(const int32_t *h)
{
    THREAD_OR(return);
    leave_top(t, h);
}

void km_out_f(const int32_t *h)
{
    if (KM_LIKELY(on_main))
        leave_top(&main_thread, h);
    else
        km_out_any(h);
}

/* ------------------------------------------------------------------------ */
/* libkm's own costs                                                         */

/* What an entry and exit cost, measured on a region of libkm's own before
 * the program's first region is registered: the best of a few batches,
 * so that an interruption cannot inflate them (a cost taken out that is
 * too small leaves a little of libkm in the figures; one too large would
 * take the program's time out). */
static void calibrate_costs(struct km_thread *t)
{
    enum { PAIRS = 256, BATCHES = 8 };
    /* the thread's table, as sync_regions would make it, for one region
     * that is not registered */
    struct km_region *r = km_region_alloc();
    if (!r || !(t->tab = km_mem_alloc(256 * sizeof *t->tab))) {
        free(r);
        return;
    }
    t->cap = 256;
    *r = (struct km_region){ .id = 1, .callee = 1, .kind = KM_K_SUBROUTINE,
                             .routine = 1, .thresh = UINT64_MAX, .k = 1 };
    r->slow = st.clock.kind != KM_CLOCK_TSC;
    t->tab[0] = r;
    t->nreg = 1;
    int32_t h = 1;
    km_tick best_measured = INT64_MAX, best_estimated = INT64_MAX;
    km_time best_inner = INT64_MAX;
    for (int b = 0; b < BATCHES; b++) {
        km_time before = r->excl;
        km_tick t0 = km_clock_read(&st.clock);
        for (int p = 0; p < PAIRS; p++) {
            km_in_f(&h);
            km_out_f(&h);
        }
        km_tick t1 = km_clock_read(&st.clock);
        if (t1 - t0 < best_measured)
            best_measured = t1 - t0;
        if (r->excl - before < best_inner)
            best_inner = r->excl - before;
        r->skip = UINT32_MAX;        /* estimated, waiting at the root */
        t0 = km_clock_read(&st.clock);
        for (int p = 0; p < PAIRS; p++) {
            km_in_f(&h);
            km_out_f(&h);
        }
        t1 = km_clock_read(&st.clock);
        if (t1 - t0 < best_estimated)
            best_estimated = t1 - t0;
        r->skip = 0;
    }
    st.cost_measured = KM_SUB(best_measured) / PAIRS;
    st.cost_estimated = KM_SUB(best_estimated) / PAIRS;
    st.cost_inner = best_inner / PAIRS;
    if (st.cost_inner > st.cost_measured)
        st.cost_inner = st.cost_measured;
    t->nreg = 0;
    t->tab[0] = NULL;
    km_region_free(r);
    t->ovh = 0;
    t->nentered = 0;
    reset_root(t);
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                 */

void km_report_free(struct km_report *rep)
{
    for (int32_t i = 0; i < rep->nothers; i++)
        km_report_free(&rep->others[i]);
    km_mem_free(rep->others);
    rep->others = NULL;
    rep->nothers = 0;
    km_mem_free(rep->reg);
    rep->reg = NULL;
    km_mem_free(rep->msg);
    rep->msg = NULL;
    km_mem_free(rep->peers);
    rep->peers = NULL;
    rep->npeers = 0;
    km_mem_free(rep->files);
    rep->files = NULL;
    rep->nfiles = 0;
    km_tl_free(rep->tl);
    rep->tl = NULL;
}

/* Clock reads so far: two per measured frame that closed, one per open
 * measured frame, less the reads closing frames shared, plus the others. */
static uint64_t clock_reads(const struct km_thread *t)
{
    uint64_t n = t->saved_reads;   /* subtracted below */
    n = __atomic_load_n(&st.cold_reads, __ATOMIC_RELAXED) - n;
    n += __atomic_load_n(&t->trace_reads, __ATOMIC_RELAXED);
    for (int32_t i = 0; i < t->nreg; i++)
        n += 2 * t->tab[i]->measured;
    for (int32_t i = 1; i <= t->sp; i++)
        n += t->stack[i].r && t->stack[i].start != KM_UNREAD;
    return n;
}

static km_time frame_elapsed(const struct km_frame *stk,
                             const struct km_frame *f, km_tick now)
{
    if (f->start != KM_UNREAD)
        return KM_SUB(now - f->start);
    if (f->r->callee)
        return f->child;
    km_time cc, ci;
    inside(stk, f, &cc, &ci);
    return f->ovh0 + cc;
}

/* Declared redundant time so far, net of the MPI calls inside it, as if
 * the open frames stk[1..sp] closed at `now`. */
static km_time redundant_so_far(const struct km_thread *t,
                                const struct km_frame *stk, int32_t sp,
                                km_tick now)
{
    km_time red = t->red_time - t->red_mpi;
    int32_t i = 1;
    while (i <= sp && !(stk[i].r->hooks & KM_HOOK_REDUNDANT))
        i++;
    if (i > sp)
        return red;
    red += frame_elapsed(stk, &stk[i], now);  /* the outermost one open */
    for (i++; i <= sp; i++)
        if (stk[i].r->hooks & KM_HOOK_MPI)
            red -= frame_elapsed(stk, &stk[i], now);
    return red;
}

/* Every frame is closed: the root settles what still waits in it against
 * the total time less libkm's overhead; what is left is the time
 * outside.  Measured callees that do not fit beside the overhead take
 * their time out of it (the costs behind it are estimates), never below
 * zero: what they hold beyond the total (a clock that is not one, a
 * snapshot's instant read before a frame's) makes the total longer, so
 * that no figure exceeds it. */
static void settle_root(const struct settle *c, struct km_report *rep,
                        struct km_frame *root)
{
    km_time *ovh = c->ovh;
    if (*ovh < 0)
        *ovh = 0;
    if (*ovh > rep->total)
        *ovh = rep->total;
    km_time e = rep->total - *ovh;
    km_time cc = root->child, ci = root->inv;
    rep->outside_est = ci > 0;
    settle(c, root, e, &cc, &ci);
    if (cc > e) {
        km_time give = cc - e < *ovh ? cc - e : *ovh;
        *ovh -= give;
        rep->total += cc - e - give;
        e = cc;
    }
    rep->outside = e - cc;
}

/* A loop, I/O statement or user region never outlasts the region around
 * it: an estimate that does is cut to it (callees need nothing of the
 * kind, their frames already hold what is inside them). */
static void fit_in_parent(struct km_region *reg, int32_t id, uint8_t *done)
{
    struct km_region *q = &reg[id - 1];
    if (done[id - 1])
        return;
    done[id - 1] = 1;
    if (KM_KIND_IS_ROUTINE(q->kind) || q->parent <= 0 || q->parent == id)
        return;
    fit_in_parent(reg, q->parent, done);
    km_time limit = reg[q->parent - 1].elapsed;
    if (q->callee || q->elapsed <= limit)
        return;
    km_time cut = q->elapsed - limit;
    q->est_el = q->est_el > cut ? q->est_el - cut : 0;
    q->elapsed = limit;
    if (q->excl > limit) {           /* its own time, too */
        cut = q->excl - limit;
        q->est_excl = q->est_excl > cut ? q->est_excl - cut : 0;
        q->excl = limit;
    }
}

static void fit_locations(struct km_report *rep)
{
    uint8_t *done = km_mem_alloc((size_t)rep->nreg + 1);
    if (!done)
        return;
    memset(done, 0, (size_t)rep->nreg + 1);
    for (int32_t i = 0; i < rep->nreg; i++)
        fit_in_parent(rep->reg, i + 1, done);
    km_mem_free(done);
}

static void add_routine(struct km_report *rep, const struct km_region *r)
{
    rep->routine_counts += r->count;
    rep->net += r->excl;
    rep->net_est += r->est_excl;
    rep->estimated += r->est_excl;
    rep->extrapolated |= r->count > r->measured;
    rep->net_marked |= KM_EST_EXCL(r);
    if ((r->flags & KM_F_MPI_UNMEASURED) && r->count > 0 &&
        rep->mpi_unmeasured++ == 0)
        rep->mpi_unmeasured_first = r->name;
}

static void add_mpi(struct km_report *rep, const struct km_region *r,
                    struct km_region *owner)
{
    rep->estimated += r->est_excl;
    if (r->hooks & KM_HOOK_STARTUP) {
        rep->startup += r->excl;
        return;
    }
    rep->mpi += r->excl;
    owner->mpi += r->excl;
    rep->mpi_est |= KM_EST_EXCL(r);
    owner->mpi_est |= KM_EST_EXCL(r);
}

/* Totals over the regions of a snapshot. */
static void sum_regions(struct km_report *rep)
{
    for (int32_t i = 0; i < rep->nreg; i++) {
        struct km_region *r = &rep->reg[i];
        struct km_region *owner = &rep->reg[r->routine - 1];
        if (KM_KIND_IS_ROUTINE(r->kind)) {
            add_routine(rep, r);
        } else if (r->kind == KM_K_CALL) {
            rep->uninstr += r->excl;
            rep->uninstr_est |= KM_EST_EXCL(r);
            rep->estimated += r->est_excl;
        } else if (r->kind == KM_K_MPI) {
            add_mpi(rep, r, owner);
        } else if (r->kind == KM_K_IO) {
            rep->io += r->elapsed;
            owner->io += r->elapsed;
            rep->io_est |= KM_EST_EL(r);
            owner->io_est |= KM_EST_EL(r);
        }
    }
}

static int redundant_estimated(const struct km_report *rep)
{
    for (int32_t i = 0; i < rep->nreg; i++)
        if ((rep->reg[i].flags & KM_F_REDUNDANT) && KM_EST_EL(&rep->reg[i]))
            return 1;
    return 0;
}

/* Seconds this rank waited for a processor since the run began (0 where
 * unknown); with the CPU clock too, whose times leave it out but whose
 * run took that much longer. */
static double seconds_waited(void)
{
    if (st.waited0 < 0)
        return 0;
    int64_t now = km_clock_waited_ns();
    return now > st.waited0 ? (double)(now - st.waited0) * 1e-9 : 0;
}

/* T, S, C, R, O, P, W of this rank (doc/KM_output.md, "Prediction"). */
static void predict(const struct km_thread *t, struct km_report *rep)
{
    double spt = st.clock.seconds_per_tick;
    double sub = spt / (double)(1 << KM_SUB_BITS);
    struct km_prediction_row *p = &rep->pred;
    km_tick init_called = st.t_startup ? st.t_startup : st.t_mpii;
    p->t = (double)rep->total * sub;
    p->s = (double)rep->startup * sub;
    p->c = (double)rep->mpi * sub;
    rep->declared = (double)(rep->redundant - st.red_before) * sub;
    p->r = (double)(init_called - t->t0) * spt + rep->declared;
    p->o = (double)rep->overhead * sub;
    p->p = p->t - p->s - p->c - p->r - p->o;
    p->w = rep->waited;
    p->estimated = KM_PRED_O | KM_PRED_P |
                   (rep->mpi_est ? KM_PRED_C : 0) |
                   (redundant_estimated(rep) ? KM_PRED_R : 0);
    p->none = rep->mpi_unmeasured ? KM_NOPRED_MPI_UNMEASURED : 0;
}

static void fill_scalars(const struct km_thread *t, struct km_report *rep,
                         const char *event, km_tick now)
{
    double waited = t->index == 0 ? seconds_waited() : 0;
    memset(rep, 0, sizeof *rep);
    rep->thread = t->index;
    rep->omp = t->omp;
    rep->total = KM_SUB(now - t->t0);
    if (rep->total < 0)
        rep->total = 0;
    rep->clock_reads = clock_reads(t);
    rep->clock = st.clock;
    double sub = st.clock.seconds_per_tick / (double)(1 << KM_SUB_BITS);
    rep->cost_measured = (double)st.cost_measured * sub;
    rep->cost_estimated = (double)st.cost_estimated * sub;
    rep->cost_inner = (double)st.cost_inner * sub;
    rep->nwrites = st.nwrites;
    rep->nranks = st.nranks;
    rep->rank = st.rank;
    rep->alone = st.alone;
    rep->event = event;
    rep->started = st.started;
    rep->bad_out = t->bad_out;
    rep->bad_in = t->bad_in;
    rep->lost = t->lost;
    rep->bad_reg = st.bad_reg;
    rep->lost_threads = __atomic_load_n(&lost_threads, __ATOMIC_RELAXED);
    rep->waited = waited;
}

/* The open frames of thread t as they are now, copied into stk: up to
 * the last frame that reads consistently (another thread's stack may
 * change while it is copied; a frame it is pushing is left out).  Returns
 * the top frame copied. */
static int32_t copy_stack(const struct km_thread *t, struct km_frame *stk,
                          int32_t sp, int32_t nreg)
{
    memcpy(stk, t->stack, ((size_t)sp + 1) * sizeof *stk);
    for (int32_t i = 0; i <= sp; i++) {
        struct km_frame *f = &stk[i];
        if (i > 0 && (f->id < 1 || f->id > nreg || f->own < 0 ||
                      f->own > i || f->anchor < 0 || f->anchor > i))
            return i - 1;
        if (f->start == KM_UNREAD && i > 0)
            continue;
        for (int w = 0; w < KM_NWAIT; w++)
            if ((f->used >> w & 1) &&
                (f->wait[w].id < 1 || f->wait[w].id > nreg))
                f->used &= ~(1u << w);
    }
    return sp;
}

/* The instant of a snapshot of another thread t, read after its stack
 * was copied: the clock now, or later than `now`; with the CPU clock, t's
 * own CPU time (the reader's would hold nothing of t's), or its time when
 * it ended (its clock is gone), or failing both its start. */
static km_tick foreign_now(const struct km_thread *t, km_tick now)
{
    if (!cpu_clock()) {
        km_tick later = cold_now();
        return later > now ? later : now;
    }
    km_tick v;
    if (!__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) && t->cpu_id_ok &&
        km_clock_cpu_read_id(t->cpu_id, &v) == 0) {
        __atomic_fetch_add(&st.cold_reads, 1, __ATOMIC_RELAXED);
        return v;
    }
    if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE))
        return t->cpu_end;
    return t->t0;
}

/* Thread t's figures as if every open frame were left at `now` (another
 * thread's: at the instant foreign_now gives, into *at), without touching
 * the live regions or stack.  Regions registered since t last caught up
 * appear with no executions.  On failure (no memory) the report still has
 * its scalar fields, but no regions. */
static int make_thread_report(const struct km_thread *t, struct km_report *rep,
                              const char *event, km_tick now, km_tick *at)
{
    /* Another thread may run on while it is copied: its overhead is read
     * first and the clock last, so that no frame it opens meanwhile
     * begins after the snapshot's instant (its time would come out
     * negative, and be taken out of the overhead). */
    int foreign = t != self;
    km_time ovh = __atomic_load_n(&t->ovh, __ATOMIC_ACQUIRE);
    fill_scalars(t, rep, event, now);
    int32_t nreg = __atomic_load_n(&t->nreg, __ATOMIC_ACQUIRE);
    int32_t ntmpl = __atomic_load_n(&st.ntmpl, __ATOMIC_ACQUIRE);
    int32_t sp = __atomic_load_n(&t->sp, __ATOMIC_ACQUIRE);
    if (sp < 0 || sp >= KM_STACK_DEPTH)
        sp = 0;
    while (sp > 0 && t->stack[sp].id == KM_ID_FULL)  /* overflow sentinel */
        sp--;

    rep->reg = km_mem_alloc(((size_t)ntmpl + 1) * sizeof *rep->reg);
    struct km_frame *stk = km_mem_alloc(((size_t)sp + 1) * sizeof *stk);
    if (!rep->reg || !stk) {
        km_mem_free(stk);
        km_report_free(rep);
        if (st.mpi_state != MPI_NONE && t->index == 0)
            predict(t, rep);
        return -1;
    }
    rep->nreg = ntmpl;
    for (int32_t i = 0; i < nreg; i++)
        rep->reg[i] = *t->tab[i];
    for (int32_t i = nreg; i < ntmpl; i++)   /* stable once published */
        rep->reg[i] = *st.tmpl[i];
    sp = copy_stack(t, stk, sp, nreg);
    if (foreign) {
        now = foreign_now(t, now);
        rep->total = KM_SUB(now - t->t0);
        if (rep->total < 0)
            rep->total = 0;
    }
    rep->redundant = redundant_so_far(t, stk, sp, now);
    for (int32_t i = 1; i <= sp; i++)
        stk[i].r = &rep->reg[stk[i].id - 1];
    struct settle c = { rep->reg, NULL, &ovh, NULL };
    for (int32_t i = sp; i >= 1; i--)
        leave(&c, stk, i, now, 0);
    settle_root(&c, rep, &stk[0]);
    rep->overhead = ovh;
    if (at)
        *at = now;
    km_mem_free(stk);
    fit_locations(rep);
    sum_regions(rep);
    if (st.mpi_state != MPI_NONE && t->index == 0)
        predict(t, rep);
    return 0;
}

/* The program's thread's time slots up to `now` (a copy, to which the
 * open frames give their own time so far). */
static void copy_timeline(struct km_report *rep, km_tick now)
{
    if (!main_thread.started || (rep->tl = km_tl_copy(&tl, now)) == NULL)
        return;
    int32_t sp = main_thread.sp;
    if (sp < 0 || sp >= KM_STACK_DEPTH)
        sp = 0;
    while (sp > 0 && main_thread.stack[sp].id == KM_ID_FULL)
        sp--;
    km_tl_fit(rep->tl, now);
    tl_give_open(&main_thread, sp, now, rep->tl, NULL);
    km_tl_place(rep->tl, now);
}

/* Every thread that has called libkm, in order of number, into a
 * km_mem array of *n (NULL when none or no memory). */
static struct km_thread **thread_list(int32_t *n)
{
    int32_t count = 0;
    for (struct km_thread *t = __atomic_load_n(&st.threads, __ATOMIC_ACQUIRE);
         t; t = t->next)
        count++;
    *n = 0;
    struct km_thread **v = count ? km_mem_alloc((size_t)count * sizeof *v)
                                 : NULL;
    if (!v)
        return NULL;
    for (struct km_thread *t = __atomic_load_n(&st.threads, __ATOMIC_ACQUIRE);
         t && *n < count; t = t->next)
        v[(*n)++] = t;
    for (int32_t i = 1; i < *n; i++)         /* insertion sort by index */
        for (int32_t j = i; j > 0 && v[j - 1]->index > v[j]->index; j--) {
            struct km_thread *x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return v;
}

/* What the rank's threads share: its messages, peers and files. */
static void copy_rank_tables(struct km_report *rep)
{
    rep->msg = km_msg_copy(rep->nreg);
    rep->peers = km_peer_copy(&rep->npeers);
    rep->files = km_io_copy(&rep->nfiles);
}

/* The rank's figures: the program's thread's (the first in number), and
 * every other thread's report in rep->others.  When the writing thread
 * has not called libkm yet (self NULL) there is still the program's. */
static int make_report(struct km_report *rep, const char *event, km_tick now)
{
    int32_t n;
    struct km_thread **v = thread_list(&n);
    if (!v) {                        /* no thread yet, or no memory */
        if (!__atomic_load_n(&st.threads, __ATOMIC_ACQUIRE)) {
            fill_scalars(&main_thread, rep, event, now);
            return -1;
        }
        int rc = make_thread_report(&main_thread, rep, event, now, &now);
        if (rc == 0) {
            copy_rank_tables(rep);
            copy_timeline(rep, now);
        }
        return rc;
    }
    km_tick now0 = now;              /* the program's thread's instant */
    int rc = make_thread_report(v[0], rep, event, now, &now0);
    if (rc == 0) {
        copy_rank_tables(rep);
        if (v[0] == &main_thread)
            copy_timeline(rep, now0);
    }
    if (n > 1) {
        rep->others = km_mem_alloc((size_t)(n - 1) * sizeof *rep->others);
        if (rep->others) {
            for (int32_t i = 1; i < n; i++)
                if (make_thread_report(v[i], &rep->others[rep->nothers],
                                       event, now, NULL) == 0)
                    rep->nothers++;
                else
                    km_report_free(&rep->others[rep->nothers]);
        }
    }
    km_mem_free(v);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

/* Take `d` ticks just spent inside libkm (writing a snapshot) out of every
 * figure: the open frames, the start of the run and the MPI_INIT marks
 * move forward by it. */
static void hide_time(struct km_thread *t, km_tick d)
{
    if (!t)
        return;
    for (int32_t i = 1; i <= t->sp; i++)
        if (t->stack[i].start != KM_UNREAD)
            t->stack[i].start += d;
    t->t0 += d;
    if (t == &main_thread)
        km_tl_hide(&tl, d);
    if (st.t_startup)
        st.t_startup += d;
    if (st.mpi_state != MPI_NONE)
        st.t_mpii += d;
}

/* Write this process's results alone (serial program, or an MPI rank whose
 * results cannot be gathered), as they are at `now`; 0 once written. */
static int write_alone(const char *event, km_tick now)
{
    st.nwrites++;
    km_clock_calibrate(&st.clock);
    struct km_report rep;
    int only = st.mpi_state == MPI_ACTIVE ? st.rank
             : st.mpi_missed ? (st.rank_unknown ? KM_RANK_UNKNOWN : st.rank)
             : -1;
    if (make_report(&rep, event, now)) {
        km_complain("KM_output not written: out of memory");
        return -1;
    }
    struct km_text t = { 0 };
    km_format_header(&t, &rep, only);
    km_format_section(&t, &rep);
    km_format_end(&t);
    int failed = t.failed;
    if (failed)
        km_complain("KM_output not written: out of memory");
    else
        failed = km_file_write_whole(t.p, t.len, &st.out,
                                     only >= 0 ? only : -1) != 0;
    km_text_free(&t);
    km_report_free(&rep);
    return failed ? -1 : 0;
}

static void take_pending_signal(void);

/* `final`: END, STOP, EXIT or exit; nothing is written after these. */
/* One write at a time: another thread's final write (STOP inside a
 * parallel region, exit) waits for the one under way, then finds the
 * results written. */
static int begin_write(int wait)
{
    for (;;) {
        sig_atomic_t none = 0;
        if (__atomic_compare_exchange_n(&st.writing, &none, 1, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 1;
        if (!wait)
            return 0;
        sched_yield();
    }
}

/* The program ends (END, STOP, EXIT, exit) with regions of thread t
 * open: their LEAVEs at this moment, innermost first, so that the trace
 * closes what it opened; once (the exit handler may come after END). */
static void trace_leave_open(struct km_thread *t)
{
    if (!t || t->trace_closed || !km_trace_active())
        return;
    t->trace_closed = 1;
    km_tick now = trace_now(t);
    for (int32_t i = t->sp; i >= 1; i--) {
        struct km_region *r = t->stack[i].r;
        if (r && (r->hooks & KM_HOOK_TRACE))
            trace(t, r, 0, now);
    }
}

static void write_results(const char *event, int final)
{
    if (final && st.initialized && getpid() == st.pid)
        trace_leave_open(self);
    if (!st.initialized || st.mpi_state == MPI_DONE || st.final_done ||
        getpid() != st.pid)
        return;
    notice_mpi(self, 1);
    if (!begin_write(final))
        return;
    if (st.final_done || st.mpi_state == MPI_DONE) {
        __atomic_store_n(&st.writing, 0, __ATOMIC_RELEASE);
        return;
    }
    if (final)
        st.final_done = 1;
    km_tick now = cold_now();
    if (write_alone(event, now) == 0 && final)
        km_trace_end(self ? &self->trace : NULL, 0, now);
    if (!final)
        hide_time(self, cold_now() - now);
    __atomic_store_n(&st.writing, 0, __ATOMIC_RELEASE);
    take_pending_signal();
}

void km_end_f(void)  { write_results("END", 1); }
void km_stop_f(void) { write_results("STOP", 1); }
void km_exit_f(void) { write_results("EXIT", 1); }
void km_writ_f(void) { write_results("PRINT_OUT", 0); }

/* Before CALL MPI_ABORT: the rank's own file, as the other ranks write
 * theirs when mpirun kills them; the abort itself runs no exit handler. */
void km_abrt_f(void) { write_results("MPI_ABORT", 1); }

void km_opt_f(const char *text)
{
    const char *p = strstr(text, "TRACE_SIZE_LIMIT=");
    if (p)
        km_trace_set_limit(strtoll(p + 17, NULL, 10));
}

static void at_exit(void)
{
    write_results("exit", 1);
}

/* ------------------------------------------------------------------------ */
/* Signals                                                                   */

/* An MPI rank that has written its results on a signal waits a moment
 * before it dies: mpirun kills every other rank the moment one dies, and
 * they got the signal at the same time and may still be writing theirs.
 * At least 0.2 s, ten times this rank's own write, at most 3 s; the batch
 * system's SIGKILL, if it comes sooner, ends the wait. */
static void linger(double write_seconds)
{
    double wait = 10 * write_seconds;
    if (wait < 0.2)
        wait = 0.2;
    if (wait > 3)
        wait = 3;
    struct timespec ts = { (time_t)wait,
                           (long)((wait - (double)(time_t)wait) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The write a terminating signal asks for; 0 when the caller should let
 * the signal go on, 1 when a write under way will raise it again. */
int km_core_on_signal(int sig)
{
    if (!st.initialized || getpid() != st.pid)
        return 0;
    if (st.writing) {
        st.pending_signal = sig;
        return 1;
    }
    snprintf(st.signal_event, sizeof st.signal_event, "signal %d", sig);
    if (st.gathering) {
        /* the gathered file will not be finished: this rank's own file */
        struct km_out_file *f = km_gather_temp();
        if (f)
            km_file_abandon(f);
        st.mpi_state = MPI_ACTIVE;
        st.final_done = 0;
    }
    if (st.mpi_state != MPI_DONE && !st.final_done) {
        st.writing = 1;
        st.final_done = 1;
        km_tick t = cold_now();
        write_alone(st.signal_event, t);
        st.writing = 0;
        if (st.mpi_state == MPI_ACTIVE)
            linger((double)(cold_now() - t) * st.clock.seconds_per_tick);
    }
    km_trace_end(NULL, sig, cold_now());
    return 0;
}

static void take_pending_signal(void)
{
    int sig = st.pending_signal;
    if (!sig)
        return;
    st.pending_signal = 0;
    km_core_on_signal(sig);
    km_signal_reraise(sig);
}

/* ------------------------------------------------------------------------ */
/* MPI (through the table km_mpi.c hands over)                              */

/* The glue's table, when the program links it (km_mpi.c hands it over
 * before main): libkm may then ask MPI at any time whether it runs. */
static const struct km_mpi_ops *linked_mpi;

void km_core_mpi_linked(const struct km_mpi_ops *ops)
{
    linked_mpi = ops;
}

/* MPI runs from now on (MPI_INIT has just returned, or libkm has just seen
 * that it ran), or ran before libkm started (`before`): thread t's figures
 * so far are the time before it. */
static void rank_starts(const struct km_mpi_ops *ops, struct km_thread *t,
                        int before)
{
    km_tick now = before ? t->t0 : cold_now();
    st.red_before = 0;
    if (!before) {
        struct km_report rep;
        make_thread_report(t, &rep, "", now, NULL);   /* scalars survive a
                                                   failure */
        st.red_before = rep.redundant;
        km_report_free(&rep);
    }
    st.t_mpii = now;
    if (t == &main_thread) {         /* slots start at MPI_INIT's return */
        tl_cross(t, t->sp, now);
        km_tl_rebase(&tl, now);
    }
    if (ops->rank_size(&st.rank, &st.nranks))
        st.rank = 0, st.nranks = 1;
    st.mpi_state = MPI_ACTIVE;
    /* so that an MPI_FINALIZE no instrumented code calls (a C main, a
     * library built plain) still gathers the ranks into one file */
    if (!st.mpi_hooked)
        st.mpi_hooked = ops->at_finalize() == 0;
    km_trace_rank(st.rank, st.nranks);
}

/* What the environment says of this process's place in an MPI run
 * (Open MPI, MPICH's Hydra, PMIx): rank and size, or -1 and 0. */
static void rank_from_environment(int *rank, int *size)
{
    static const char *const ranks[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                         "PMIX_RANK" };
    static const char *const sizes[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                         NULL };
    *rank = -1;
    *size = 0;
    for (size_t k = 0; k < sizeof ranks / sizeof *ranks; k++) {
        const char *r = getenv(ranks[k]);
        const char *n = sizes[k] ? getenv(sizes[k]) : NULL;
        if (r && *r) {
            *rank = atoi(r);
            *size = n && *n ? atoi(n) : 0;
            return;
        }
    }
}

/* MPI started where no KM_MPII saw it (a C main, a library built plain):
 * asked of MPI when the program's thread registers a region, until it
 * runs, and before a write (`at_write`).  Running: this process is a rank
 * from now on.  Finalized at a write, never seen running, or seen running
 * but finalized without calling libkm: the ranks cannot be gathered any
 * more, and each file says so. */
static void notice_mpi(struct km_thread *t, int at_write)
{
    static int asked;                /* MPI did not run when last asked */
    const struct km_mpi_ops *ops = linked_mpi;
    if (!ops || !t || st.mpi_missed)
        return;
    if (st.mpi_state == MPI_ACTIVE && at_write && ops->state() == 2) {
        st.mpi_state = MPI_NONE;     /* the rank's file, all the same */
        st.mpi_missed = 1;
        st.alone = "MPI finalized where libkm could not gather the ranks";
        km_complain("MPI was finalized without calling libkm back: rank %d "
                    "writes its own KM_output.NNN.%d", st.rank, st.rank);
        return;
    }
    if (st.mpi_state != MPI_NONE)
        return;
    int state = ops->state();
    int before = !asked && t == &main_thread;
    asked = 1;
    if (state == 1) {
        rank_starts(ops, t, before);
    } else if (state == 2 && at_write) {
        int rank, size;
        rank_from_environment(&rank, &size);
        st.mpi_missed = 1;
        st.rank_unknown = rank < 0;
        st.rank = rank < 0 ? 0 : rank;
        st.nranks = size > rank ? size : rank + 1;
        st.alone = "MPI ran and was finalized where libkm did not see it: "
                   "not gathered";
        if (rank >= 0)
            km_complain("MPI ran and was finalized where no instrumented "
                        "code saw it: rank %d writes its own "
                        "KM_output.NNN.%d", rank, rank);
        else
            km_complain("MPI ran and was finalized where no instrumented "
                        "code saw it: this process writes its own "
                        "KM_output.NNN, rank unknown");
    }
}

void km_core_mpi_init(const struct km_mpi_ops *ops)
{
    THREAD_OR(return);
    if (st.mpi_state != MPI_NONE || ops->finalized())
        return;
    rank_starts(ops, t, 0);
}

void km_core_mpi_finalize(const struct km_mpi_ops *ops)
{
    /* Every rank takes the same branch here, so the collective below is
     * entered by all ranks or none. */
    THREAD_OR(return);
    if (st.mpi_state == MPI_DONE || ops->finalized())
        return;
    begin_write(1);
    if (st.mpi_state == MPI_NONE) {  /* MPI_INIT was not instrumented */
        st.t_mpii = main_thread.started ? main_thread.t0 : st.t0;
        st.t_startup = 0;
        st.red_before = 0;
    }
    if (ops->rank_size(&st.rank, &st.nranks))
        st.rank = 0, st.nranks = 1;
    st.mpi_state = MPI_DONE;
    st.final_done = 1;
    st.nwrites++;
    km_clock_calibrate(&st.clock);

    struct km_report rep;
    struct km_text section = { 0 };
    if (make_report(&rep, "MPI_FINALIZE", cold_now()) == 0)
        km_format_section(&section, &rep);
    else
        section.failed = 1;          /* rank 0 notes the loss */
    st.gathering = 1;
    if (km_gather_write(ops, &rep, &section, &st.out) == 0)
        km_trace_end(self ? &self->trace : NULL, 0, cold_now());
    st.gathering = 0;
    km_text_free(&section);
    km_report_free(&rep);
    __atomic_store_n(&st.writing, 0, __ATOMIC_RELEASE);
    (void)t;
}

/* How long a rank waits at MPI_FINALIZE for the others' libkm before it
 * writes its own file (KM_MPI_WAIT seconds, default 30). */
static double finalize_wait(void)
{
    const char *e = getenv("KM_MPI_WAIT");
    double w = e && *e ? strtod(e, NULL) : 30;
    return w >= 0 ? w : 30;
}

/* MPI_FINALIZE called where no KM_MPIF came first (C, a library built
 * plain): the ranks gather as at KM_MPIF when every rank's libkm is there,
 * else each writes its own file. */
void km_core_mpi_at_finalize(const struct km_mpi_ops *ops)
{
    THREAD_OR(return);
    if (st.mpi_state != MPI_ACTIVE || ops->finalized())
        return;
    /* the wait for the other ranks is libkm's, not the program's: out of
     * the times, and out of the time the thread waited for a processor */
    km_tick t1 = cold_now();
    int64_t w1 = t == &main_thread && st.waited0 >= 0 ? km_clock_waited_ns()
                                                     : -1;
    int all = km_gather_agree(ops, st.rank, st.nranks, finalize_wait());
    hide_time(t, cold_now() - t1);
    int64_t w2 = w1 >= 0 ? km_clock_waited_ns() : -1;
    if (w2 >= w1 && w1 >= 0)
        st.waited0 += w2 - w1;
    if (all) {
        km_core_mpi_finalize(ops);
        return;
    }
    st.alone = "not every rank's libkm was at MPI_FINALIZE: not gathered";
    km_complain("not every rank's libkm answered at MPI_FINALIZE: rank %d "
                "writes its own KM_output.NNN.%d", st.rank, st.rank);
    write_results("MPI_FINALIZE", 1);
}

/* ------------------------------------------------------------------------ */
/* Test hooks                                                                */

void km_test_set_clock(km_tick (*read)(void), double seconds_per_tick)
{
    memset(&st.clock, 0, sizeof st.clock);
    st.clock.kind = KM_CLOCK_CALL;
    st.clock.read = read;
    st.clock.seconds_per_tick = seconds_per_tick;
    snprintf(st.clock.name, sizeof st.clock.name, "test clock");
    st.clock_injected = 1;
}

void km_test_set_costs(double measured, double estimated, double inner)
{
    st.cost_measured = (km_time)(measured * (1 << KM_SUB_BITS));
    st.cost_estimated = (km_time)(estimated * (1 << KM_SUB_BITS));
    st.cost_inner = (km_time)(inner * (1 << KM_SUB_BITS));
}

void km_test_seed(uint64_t seed)
{
    st.seed = seed ? seed : 1;
    if (self)
        self->rng = st.seed;
}

void km_test_set_interval(uint32_t k)
{
    st.fixed_k = k;
}

/* Every thread that called libkm must have finished (or be the caller). */
void km_test_reset(void)
{
    for (struct km_thread *t = st.threads, *next; t; t = next) {
        next = t->next;
        for (int32_t i = 0; i < t->nreg; i++)
            free(t->tab[i]);         /* a copy: the identity is the template's */
        if (t != &main_thread)
            km_mem_free(t);
    }
    for (int32_t i = 0; i < st.ntmpl; i++)
        km_region_free(st.tmpl[i]);
    free(st.tmpl);
    free(st.hash);
    memset(&main_thread, 0, offsetof(struct km_thread, stack));
    memset(&tl, 0, sizeof tl);       /* (its tables are leaked: tests) */
    memset(tl_done, 0, sizeof tl_done);
    main_taken = 0;
    self = NULL;
    on_main = 0;
    free_states = NULL;
    struct km_clock c = st.clock;
    int injected = st.clock_injected;
    memset(&st, 0, sizeof st);
    st.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    st.clock = c;
    st.clock_injected = injected;
    st.seed = 1;
}

int km_test_report(struct km_report *rep, const char *event)
{
    THREAD_OR(return -1);
    (void)t;
    return make_report(rep, event, cold_now());
}

int km_test_depth(void)
{
    THREAD_OR(return 0);
    int32_t sp = t->sp;
    return sp > 0 && t->stack[sp].id == KM_ID_FULL ? sp - 1 : sp;
}

const struct km_clock *km_test_clock(void)
{
    THREAD_OR(return &st.clock);
    (void)t;
    return &st.clock;
}
