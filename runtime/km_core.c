/*
 * km_core.c — the measuring heart of libkm.
 *
 * Owns the region table (KM_REG), the frame stack and the hot path
 * (KM_IN / KM_OUT), time extrapolation, redundant-work accounting,
 * snapshots of the figures (struct km_report), and the moments results are
 * written: KM_END, KM_STOP, KM_EXIT, KM_WRIT, the atexit handler, a
 * terminating signal (km_signal.c), and the core side of KM_MPII / KM_MPIF.
 *
 * Must never: reference an MPI symbol (a serial program links without MPI;
 * MPI arrives as a table of function pointers), allocate, lock or make a
 * system call on the hot path other than the clock read, read the clock
 * for a region past its extrapolation threshold, crash or exit the user's
 * program, or print to standard output.
 *
 * Accounting.  Frame 0 of the stack is the root ("outside every routine").
 * A callee frame (routine, CALL, MPI) adds its elapsed time to the `child`
 * of the nearest callee frame below it (frame.own of the frame below), so
 * transparent frames (DO, IO, USER) pass their callees' time through to
 * their routine.  A callee's exclusive time is its elapsed minus its child
 * time: a routine's net, or for CALL / MPI the time no instrumented routine
 * accounts for.  Each instant is in exactly one innermost callee frame (or
 * none), so total = sum of routine net + sum of CALL/MPI exclusive + outside
 * holds exactly in ticks while nothing is extrapolated.
 *
 * Signals.  A terminating signal may arrive at any instruction, and its
 * handler takes a snapshot of this state.  So the hot path publishes a new
 * frame (st.sp) only once the frame is complete, and retires a frame (sp)
 * before folding it into its region; the region table grows by copying,
 * publishing the new table, then freeing the old one.  The compiler is kept
 * from reordering those stores with signal fences (no instruction at run
 * time).
 *
 * Clock reads are not counted on the hot path: every measured frame reads
 * the clock once at entry and once at exit, so the count follows from the
 * regions' measured exits and the open frames (see clock_reads()).
 */
#include "runtime/km_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KM_STACK_DEPTH 4096
#define KM_UNREAD INT64_MIN          /* frame.start of an unmeasured frame */
#define KM_ID_ROOT (INT32_MIN + 1)   /* frame.id no handle can match */
#define KM_ID_FULL INT32_MIN         /* the sentinel on top of a full stack */

#define signal_fence() atomic_signal_fence(memory_order_seq_cst)

struct km_frame {
    struct km_region *r;     /* NULL for the root and the sentinel */
    km_tick start;           /* clock at entry, or KM_UNREAD */
    km_tick child;           /* callee time directly inside (callee frames) */
    int32_t id;              /* r->id, KM_ID_ROOT or KM_ID_FULL */
    int32_t own;             /* nearest callee frame at or below this one */
};

enum mpi_state { MPI_NONE, MPI_ACTIVE, MPI_DONE };

static struct {
    /* hot */
    struct km_region **tab;  /* tab[id - 1] */
    int32_t nreg;
    int32_t sp;              /* top frame; 0 = only the root */
    struct km_clock clock;
    /* redundant work (KM_HOOK_REDUNDANT, KM_HOOK_MPI) */
    int32_t red_depth;       /* open redundant frames */
    km_tick red_time;        /* closed outermost redundant frames */
    km_tick red_mpi;         /* MPI calls closed inside redundant frames */
    /* registration */
    int32_t cap;
    int32_t *hash;           /* open addressing over ids, 0 = empty */
    size_t hcap;
    int32_t nentered;        /* routines entered at least once */
    struct km_region_options opt;
    /* counts */
    uint64_t cold_reads;     /* clock reads off the measured frames */
    uint64_t saved_reads;    /* exits that shared one read (km_out_slow) */
    uint64_t overflow_depth; /* entries above a full stack still open */
    uint64_t lost, bad_out, bad_in, bad_reg;
    /* run */
    int initialized;
    pid_t pid;               /* a child forked without exec writes nothing */
    int clock_injected;
    km_tick t0;
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
    km_tick t_mpii;          /* when MPI_INIT returned */
    km_tick mpi_before;      /* MPI time before that */
    km_tick red_before;      /* declared redundant time before that */
    struct km_frame stack[KM_STACK_DEPTH];
} st;

static int atexit_registered;

/* A clock read off the measured frames (start, snapshots, writes). */
static km_tick cold_now(void)
{
    st.cold_reads++;
    return km_clock_read(&st.clock);
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

static void init(void)
{
    if (st.initialized)
        return;
    if (!st.clock_injected)
        km_clock_init(&st.clock);
    read_environment();
    note_start_time();
    st.out.nnn = -1;
    st.out.rank = -1;
    st.rank = 0;
    st.nranks = 1;
    st.sp = 0;
    st.stack[0] = (struct km_frame){ .r = NULL, .id = KM_ID_ROOT, .own = 0 };
    st.t0 = cold_now();              /* the root's start */
    st.pid = getpid();
    if (!atexit_registered && atexit(at_exit) == 0)
        atexit_registered = 1;
    if (!st.clock_injected)
        km_signal_install();
    st.initialized = 1;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                              */

static int32_t *hash_slot(const struct km_region *key)
{
    size_t mask = st.hcap - 1;
    size_t i = (size_t)km_region_hash(key) & mask;
    while (st.hash[i] && !km_region_same(st.tab[st.hash[i] - 1], key))
        i = (i + 1) & mask;
    return &st.hash[i];
}

/* Room for one more region.  The table a signal handler may be reading is
 * freed only after the new one is published. */
static int grow_tables(void)
{
    if (st.nreg == st.cap) {
        int32_t ncap = st.cap ? st.cap * 2 : 256;
        struct km_region **t = malloc((size_t)ncap * sizeof *t);
        if (!t)
            return -1;
        if (st.nreg)
            memcpy(t, st.tab, (size_t)st.nreg * sizeof *t);
        struct km_region **old = st.tab;
        signal_fence();
        st.tab = t;
        signal_fence();
        free(old);
        st.cap = ncap;
    }
    if ((size_t)(st.nreg + 1) * 2 > st.hcap) {
        size_t ncap = st.hcap ? st.hcap * 2 : 512;
        int32_t *h = calloc(ncap, sizeof *h);
        if (!h)
            return -1;
        free(st.hash);
        st.hash = h;
        st.hcap = ncap;
        for (int32_t i = 0; i < st.nreg; i++)
            *hash_slot(st.tab[i]) = st.tab[i]->id;
    }
    return 0;
}

static void report_bad_registration(const char *text, const char *why)
{
    if (st.bad_reg++ < 5)
        km_complain("region not registered (%s): %.200s", why, text);
}

void km_reg_f(int32_t *h, const int32_t *hr, const char *text)
{
    init();
    /* h and hr alias for a routine: read hr before anything writes h */
    int32_t routine = *hr;
    if (routine <= 0 || routine > st.nreg ||
        !KM_KIND_IS_ROUTINE(st.tab[routine - 1]->kind))
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
        *h = *slot;
        return;
    }
    r->id = st.nreg + 1;
    if (KM_KIND_IS_ROUTINE(r->kind))
        r->routine = r->id;
    st.tab[st.nreg] = r;
    signal_fence();
    st.nreg++;
    *slot = r->id;
    *h = r->id;
}

/* ------------------------------------------------------------------------ */
/* Hooks: trace, redundant work (cold; only regions with `hooks` set)        */

static void trace(const struct km_region *r, int in, int32_t depth,
                  km_tick now)
{
    struct km_trace_run run = { st.clock.name, st.clock.seconds_per_tick,
                                st.t0 };
    if (now == KM_UNREAD)
        now = cold_now();
    km_trace_event(&run, r, st.tab[r->routine - 1], in, depth, now);
}

static void enter_hooks(const struct km_region *r, int32_t depth, km_tick now)
{
    if (r->hooks & KM_HOOK_REDUNDANT)
        st.red_depth++;
    if (r->hooks & KM_HOOK_TRACE)
        trace(r, 1, depth, now);
}

/* e: the frame's elapsed time (measured, or the region's mean). */
static KM_NOINLINE void leave_hooks(const struct km_region *r, int32_t depth, km_tick e,
                        km_tick now)
{
    if ((r->hooks & KM_HOOK_MPI) && st.red_depth > 0)
        st.red_mpi += e;
    if ((r->hooks & KM_HOOK_REDUNDANT) && --st.red_depth == 0)
        st.red_time += e;
    if (r->hooks & KM_HOOK_TRACE)
        trace(r, 0, depth, now);
}

/* ------------------------------------------------------------------------ */
/* The hot path                                                              */

static km_tick div_round(km_tick a, uint64_t b)
{
    km_tick d = (km_tick)b;
    return a >= 0 ? (a + d / 2) / d : -((-a + d / 2) / d);
}

/* The first measured exit of a region: kept apart from the means, since
 * it often carries one-time costs (an MPI library setting up its
 * connections, page faults, cold caches) that later executions do not
 * repeat.  Its own time still counts in full. */
static KM_NOINLINE void keep_first(struct km_region *r, km_tick e,
                                   km_tick excl, int outermost)
{
    r->first_frame = e;
    r->first_excl = excl;
    r->first_outer = outermost ? e : 0;
}

static km_tick mean_without_first(km_tick sum, uint64_t n, km_tick first)
{
    return n > 1 ? div_round(sum - first, n - 1) : div_round(sum, n);
}

/* The region has been measured `thresh` times: fix its means (of every
 * measured exit but the first), after which its frames no longer read the
 * clock. */
static KM_NOINLINE void start_extrapolation(struct km_region *r)
{
    r->mean_frame = mean_without_first(r->frames, r->measured,
                                       r->first_frame);
    r->mean_excl = mean_without_first(r->excl, r->measured, r->first_excl);
    if (r->outer == 0)
        r->mean_elapsed = r->mean_frame;
    else if (r->first_outer != 0)
        r->mean_elapsed = mean_without_first(r->elapsed, r->outer,
                                             r->first_outer);
    else
        r->mean_elapsed = div_round(r->elapsed, r->outer);
    r->extrap = 1;
}

/* What few exits need besides the arithmetic: keeping the first measured
 * exit, fixing the means, hooks. */
static KM_NOINLINE void leave_rare(struct km_region *r, int32_t i, km_tick e,
                                   km_tick excl, km_tick now, int outermost,
                                   int live)
{
    if (r->measured == 1 && !r->extrap)
        keep_first(r, e, excl, outermost);
    if (r->measured == r->thresh && !r->extrap)
        start_extrapolation(r);
    if (live && r->hooks)
        leave_hooks(r, i, e, now);
}

/* The elapsed time of an extrapolated frame.  A routine, CALL or MPI frame
 * adds its mean own time to what its callees reported during this very
 * activation (measured or extrapolated by them), so that its elapsed time
 * always holds its callees' and its net time is never made negative by
 * callees that cost more later than while it was measured.  A loop, I/O
 * statement or user region adds its mean elapsed time. */
static KM_ALWAYS_INLINE km_tick extrapolated(const struct km_frame *f)
{
    return f->r->callee ? f->r->mean_excl + f->child : f->r->mean_frame;
}

/* Fold frame i of stk, closed at `now` (KM_UNREAD when no frame being
 * closed was measured), into its region; `live`: the real stack (hooks
 * run), not a snapshot's copy.  Frame i is already off the stack. */
static KM_ALWAYS_INLINE void leave(struct km_frame *stk, int32_t i,
                                   km_tick now, int live)
{
    struct km_frame *f = &stk[i];
    struct km_region *r = f->r;
    int outermost = r->top == i;
    if (outermost)
        r->top = 0;
    km_tick e;
    km_tick excl = 0;
    int rare = 0;
    if (KM_LIKELY(f->start != KM_UNREAD)) {
        e = now - f->start;
        r->frames += e;
        r->measured++;
        if (r->callee) {
            excl = e - f->child;
            r->excl += excl;
        }
        if (outermost) {
            r->elapsed += e;
            r->outer++;
        }
        rare = r->measured == r->thresh || r->measured == 1;
    } else {
        e = extrapolated(f);
        if (r->callee)
            r->excl += r->mean_excl;
        if (outermost)
            r->elapsed += r->callee ? e : r->mean_elapsed;
    }
    if (r->callee)
        stk[stk[i - 1].own].child += e;
    if (KM_UNLIKELY(rare | (live & (r->hooks != 0))))
        leave_rare(r, i, e, excl, now, outermost, live);
}

/* Open frame i for region r (not yet published: st.sp is still i - 1). */
static KM_ALWAYS_INLINE struct km_frame *push(struct km_region *r, int32_t i)
{
    struct km_frame *f = &st.stack[i];
    r->count++;
    if (r->top == 0)                 /* not open yet: outermost frame */
        r->top = i;
    f->r = r;
    f->id = r->id;
    f->own = r->callee ? i : st.stack[i - 1].own;
    f->child = 0;
    return f;
}

/* An entry the fast path does not take: a bad handle, or a full stack,
 * which gets a sentinel frame no KM_OUT matches; entries above it are
 * counted, and their exits pop nothing. */
static KM_NOINLINE void km_in_slow(int32_t id)
{
    if (id <= 0 || id > st.nreg) {
        st.bad_in++;
        return;
    }
    st.lost++;
    if (st.overflow_depth++ == 0) {
        int32_t i = st.sp + 1;
        st.stack[i] = (struct km_frame){ .r = NULL, .id = KM_ID_FULL,
                                         .own = st.stack[i - 1].own };
        signal_fence();
        st.sp = i;
    }
}

/* The entries the fast path leaves out (r->slow): a first entry, a region
 * with hooks, a clock read through a function. */
static KM_NOINLINE void km_in_general(struct km_region *r, int32_t i)
{
    if (r->count == 0) {
        if (KM_KIND_IS_ROUTINE(r->kind))
            r->order = ++st.nentered;
        r->slow = r->hooks || st.clock.kind != KM_CLOCK_TSC;
    }
    struct km_frame *f = push(r, i);
    km_tick now = r->extrap ? KM_UNREAD : km_clock_read(&st.clock);
    f->start = now;                  /* last, so our work is not in it */
    if (r->hooks)
        enter_hooks(r, i, now);
    signal_fence();
    st.sp = i;
}

void km_in_f(const int32_t *h)
{
    uint32_t k = (uint32_t)*h - 1;
    int32_t i = st.sp + 1;
    if (KM_UNLIKELY(k >= (uint32_t)st.nreg || i >= KM_STACK_DEPTH - 1)) {
        km_in_slow(*h);
        return;
    }
    struct km_region *r = st.tab[k];
    if (KM_UNLIKELY(r->slow)) {
        km_in_general(r, i);
        return;
    }
    struct km_frame *f = push(r, i);
    f->start = r->extrap ? KM_UNREAD : km_clock_tsc();   /* last */
    signal_fence();
    st.sp = i;
}

static KM_NOINLINE void km_out_slow(int32_t id)
{
    if (st.stack[st.sp].id == KM_ID_FULL) {  /* an entry that did not fit */
        if (--st.overflow_depth == 0)
            st.sp--;
        return;
    }
    if (id <= 0 || id > st.nreg) {
        st.bad_in++;
        return;
    }
    int32_t j = st.sp;
    while (j > 0 && st.stack[j].id != id)
        j--;
    if (j == 0) {                    /* not open: ignore, but say so */
        st.bad_out++;
        return;
    }
    /* A jump out of measured loops: every frame from the top down to j
     * closes at the same instant, with one clock read. */
    uint64_t measured = 0;
    for (int32_t i = j; i <= st.sp; i++)
        measured += st.stack[i].start != KM_UNREAD;
    km_tick now = measured ? km_clock_read(&st.clock) : KM_UNREAD;
    if (measured)
        st.saved_reads += measured - 1;
    int32_t top = st.sp;
    st.sp = j - 1;
    signal_fence();
    for (int32_t i = top; i >= j; i--)
        leave(st.stack, i, now, 1);
}

/* The exit of the top frame, with the clock read through a function. */
static KM_NOINLINE void km_out_general(int32_t i)
{
    struct km_frame *f = &st.stack[i];
    km_tick now = f->start != KM_UNREAD ? km_clock_read(&st.clock)
                                        : KM_UNREAD;          /* first */
    st.sp = i - 1;
    signal_fence();
    leave(st.stack, i, now, 1);
}

void km_out_f(const int32_t *h)
{
    int32_t i = st.sp;
    struct km_frame *f = &st.stack[i];
    if (KM_UNLIKELY(f->id != *h)) {
        km_out_slow(*h);
        return;
    }
    if (KM_UNLIKELY(st.clock.kind != KM_CLOCK_TSC && f->start != KM_UNREAD)) {
        km_out_general(i);
        return;
    }
    km_tick now = f->start != KM_UNREAD ? km_clock_tsc() : KM_UNREAD;
    st.sp = i - 1;
    signal_fence();
    leave(st.stack, i, now, 1);
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                 */

void km_report_free(struct km_report *rep)
{
    km_mem_free(rep->reg);
    rep->reg = NULL;
}

/* Clock reads so far: two per measured frame that closed, one per open
 * measured frame, less the reads closing frames shared, plus the others. */
static uint64_t clock_reads(void)
{
    uint64_t n = st.cold_reads - st.saved_reads;
    for (int32_t i = 0; i < st.nreg; i++)
        n += 2 * st.tab[i]->measured;
    for (int32_t i = 1; i <= st.sp; i++)
        n += st.stack[i].r && st.stack[i].start != KM_UNREAD;
    return n;
}

static km_tick frame_elapsed(const struct km_frame *f, km_tick now)
{
    return f->start != KM_UNREAD ? now - f->start : extrapolated(f);
}

/* Declared redundant time so far, net of the MPI calls inside it, as if
 * the open frames stk[1..sp] closed at `now`. */
static km_tick redundant_so_far(const struct km_frame *stk, int32_t sp,
                                km_tick now)
{
    km_tick red = st.red_time - st.red_mpi;
    int32_t i = 1;
    while (i <= sp && !(stk[i].r->hooks & KM_HOOK_REDUNDANT))
        i++;
    if (i > sp)
        return red;
    red += frame_elapsed(&stk[i], now);      /* the outermost one open */
    for (i++; i <= sp; i++)
        if (stk[i].r->hooks & KM_HOOK_MPI)
            red -= frame_elapsed(&stk[i], now);
    return red;
}

/* Totals over the regions of a snapshot. */
static void sum_regions(struct km_report *rep)
{
    for (int32_t i = 0; i < rep->nreg; i++) {
        struct km_region *r = &rep->reg[i];
        struct km_region *owner = &rep->reg[r->routine - 1];
        if (KM_KIND_IS_ROUTINE(r->kind)) {
            rep->routine_counts += r->count;
            rep->net += r->excl;
            rep->extrapolated |= r->extrap && r->count > r->measured;
        } else if (r->kind == KM_K_CALL) {
            rep->unmeasured += r->excl;
        } else if (r->kind == KM_K_MPI) {
            rep->unmeasured += r->excl;
            rep->mpi += r->elapsed;
            owner->mpi += r->elapsed;
        } else if (r->kind == KM_K_IO) {
            rep->io += r->elapsed;
            owner->io += r->elapsed;
        }
    }
}

static void predict(struct km_report *rep)
{
    double spt = st.clock.seconds_per_tick;
    rep->t = (double)rep->total * spt;
    rep->c = (double)(rep->mpi - st.mpi_before) * spt;
    rep->declared = (double)(rep->redundant - st.red_before) * spt;
    rep->r = (double)(st.t_mpii - st.t0) * spt + rep->declared;
    rep->p = rep->t - rep->c - rep->r;
}

/* The figures as if every open frame were left at `now`, without touching
 * the live regions or stack.  On failure (no memory) the report still has
 * its scalar fields, but no regions. */
static int make_report(struct km_report *rep, const char *event, km_tick now)
{
    memset(rep, 0, sizeof *rep);
    rep->total = now - st.t0;
    rep->clock_reads = clock_reads();
    rep->clock = st.clock;
    rep->nwrites = st.nwrites;
    rep->nranks = st.nranks;
    rep->rank = st.rank;
    rep->event = event;
    rep->started = st.started;
    rep->bad_out = st.bad_out;
    rep->bad_in = st.bad_in;
    rep->lost = st.lost;
    rep->bad_reg = st.bad_reg;
    int32_t sp = st.sp;
    while (sp > 0 && !st.stack[sp].r)    /* the overflow sentinel */
        sp--;
    rep->redundant = redundant_so_far(st.stack, sp, now);

    rep->reg = km_mem_alloc(((size_t)st.nreg + 1) * sizeof *rep->reg);
    struct km_frame *stk = km_mem_alloc(((size_t)sp + 1) * sizeof *stk);
    if (!rep->reg || !stk) {
        km_mem_free(stk);
        km_report_free(rep);
        if (st.mpi_state != MPI_NONE)
            predict(rep);
        return -1;
    }
    rep->nreg = st.nreg;
    for (int32_t i = 0; i < st.nreg; i++)
        rep->reg[i] = *st.tab[i];
    memcpy(stk, st.stack, ((size_t)sp + 1) * sizeof *stk);
    for (int32_t i = 1; i <= sp; i++)
        stk[i].r = &rep->reg[stk[i].id - 1];
    for (int32_t i = sp; i >= 1; i--)
        leave(stk, i, now, 0);
    rep->outside = rep->total - stk[0].child;
    km_mem_free(stk);
    sum_regions(rep);
    if (st.mpi_state != MPI_NONE)
        predict(rep);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

/* Take `d` ticks just spent inside libkm (writing a snapshot) out of every
 * figure: the open frames, the start of the run and the MPI_INIT mark
 * move forward by it. */
static void hide_time(km_tick d)
{
    for (int32_t i = 1; i <= st.sp; i++)
        if (st.stack[i].start != KM_UNREAD)
            st.stack[i].start += d;
    st.t0 += d;
    if (st.mpi_state != MPI_NONE)
        st.t_mpii += d;
}

/* Write this process's results alone (serial program, or an MPI rank whose
 * results cannot be gathered), as they are at `now`. */
static void write_alone(const char *event, km_tick now)
{
    st.nwrites++;
    km_clock_calibrate(&st.clock);
    struct km_report rep;
    int only = st.mpi_state == MPI_ACTIVE ? st.rank : -1;
    if (make_report(&rep, event, now)) {
        km_complain("KM_output not written: out of memory");
        return;
    }
    struct km_text t = { 0 };
    km_format_header(&t, &rep, only);
    km_format_section(&t, &rep);
    km_format_end(&t);
    if (t.failed)
        km_complain("KM_output not written: out of memory");
    else if (km_file_write_whole(t.p, t.len, &st.out, only) == 0) {
        char status[64];
        snprintf(status, sizeof status, "results written at %s", event);
        km_trace_status(status);
    }
    km_text_free(&t);
    km_report_free(&rep);
}

static void take_pending_signal(void);

/* `final`: END, STOP, EXIT or exit; nothing is written after these. */
static void write_results(const char *event, int final)
{
    if (!st.initialized || st.mpi_state == MPI_DONE || st.final_done ||
        getpid() != st.pid)
        return;
    st.writing = 1;
    if (final)
        st.final_done = 1;
    km_tick now = cold_now();
    write_alone(event, now);
    if (!final)
        hide_time(cold_now() - now);
    st.writing = 0;
    take_pending_signal();
}

void km_end_f(void)  { write_results("END", 1); }
void km_stop_f(void) { write_results("STOP", 1); }
void km_exit_f(void) { write_results("EXIT", 1); }
void km_writ_f(void) { write_results("PRINT_OUT", 0); }

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
    km_trace_status(st.signal_event);
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

void km_core_mpi_init(const struct km_mpi_ops *ops)
{
    init();
    if (st.mpi_state != MPI_NONE || ops->finalized())
        return;
    km_tick now = cold_now();
    struct km_report rep;
    make_report(&rep, "", now);      /* scalars survive a failure */
    st.mpi_before = rep.mpi;
    st.red_before = rep.redundant;
    km_report_free(&rep);
    st.t_mpii = now;
    if (ops->rank_size(&st.rank, &st.nranks))
        st.rank = 0, st.nranks = 1;
    st.mpi_state = MPI_ACTIVE;
    km_trace_rank(st.rank, st.nranks);
}

void km_core_mpi_finalize(const struct km_mpi_ops *ops)
{
    /* Every rank takes the same branch here, so the collective below is
     * entered by all ranks or none. */
    init();
    if (st.mpi_state == MPI_DONE || ops->finalized())
        return;
    if (st.mpi_state == MPI_NONE) {  /* MPI_INIT was not instrumented */
        st.t_mpii = st.t0;
        st.mpi_before = 0;
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
        km_trace_status("results written at MPI_FINALIZE");
    st.gathering = 0;
    km_text_free(&section);
    km_report_free(&rep);
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

void km_test_reset(void)
{
    for (int32_t i = 0; i < st.nreg; i++)
        km_region_free(st.tab[i]);
    free(st.tab);
    free(st.hash);
    struct km_clock c = st.clock;
    int injected = st.clock_injected;
    memset(&st, 0, sizeof st);
    st.clock = c;
    st.clock_injected = injected;
}

int km_test_report(struct km_report *rep, const char *event)
{
    init();
    return make_report(rep, event, cold_now());
}

int km_test_depth(void)
{
    int32_t sp = st.sp;
    return sp > 0 && st.stack[sp].id == KM_ID_FULL ? sp - 1 : sp;
}

const struct km_clock *km_test_clock(void)
{
    init();
    return &st.clock;
}
