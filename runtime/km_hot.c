/*
 * km_hot.c — the hot path: KM_IN and KM_OUT.
 *
 * Owns opening a frame (measured: the clock read last; estimated: the
 * region's estimate, waiting in its anchor's table) and closing it
 * (measured: the clock read first, the estimates inside settled, the
 * figures folded into its region), jumps out of several frames at once,
 * a full stack, OpenMP task bodies, and the cold hooks some regions take
 * (trace, redundant work, MPI start-up, I/O).
 *
 * Must never allocate, lock or make a system call other than the clock
 * read, read the clock for an execution it estimates, or publish a frame
 * (t->sp) before it is complete: a signal's snapshot may read it at any
 * instruction.
 */
#include "runtime/km_core.h"

/* ------------------------------------------------------------------------ */
/* Hooks: trace, redundant work, MPI start-up (cold; regions with `hooks`)   */

static struct km_trace_run trace_run(void)
{
    return (struct km_trace_run){ km_st.clock.name,
                                  km_st.clock.seconds_per_tick,
                                  km_st.t0 };
}

/* The clock for an event of thread t's trace. */
km_tick km_core_trace_now(struct km_thread *t)
{
    __atomic_store_n(&t->trace_reads, t->trace_reads + 1, __ATOMIC_RELAXED);
    return km_clock_read(&km_st.clock);
}

void km_core_trace_event(struct km_thread *t, struct km_region *r, int in,
                         km_tick now)
{
    struct km_trace_run run = trace_run();
    if (now == KM_UNREAD)
        now = km_core_trace_now(t);
    km_trace_event(&t->trace, &run, r, t->tab[r->routine - 1], in, now);
}

/* km_msg.c's: a message of MPI call site id, into the trace if its region
 * is traced. */
void km_core_trace_message(int32_t id, int sent, int64_t bytes, int32_t peer,
                           int32_t tag, int comm)
{
    struct km_thread *t = km_self;
    if (!km_trace_active() || !t || id <= 0 || id > t->nreg ||
        !(t->tab[id - 1]->hooks & KM_HOOK_TRACE))
        return;
    struct km_trace_run run = trace_run();
    km_trace_message(&t->trace, &run, id, sent, bytes, peer, tag, comm,
                     km_core_trace_now(t));
}

void km_core_trace_comm(int id, int32_t size, int32_t inter,
                        const int32_t *world)
{
    struct km_thread *t = km_self;
    if (!km_trace_active() || !t)
        return;
    struct km_trace_run run = trace_run();
    km_trace_comm(&t->trace, &run, id, size, inter, world,
                  km_core_trace_now(t));
}

static void enter_hooks(struct km_thread *t, struct km_region *r,
                        km_tick now)
{
    if ((r->hooks & KM_HOOK_STARTUP) && km_st.t_startup == 0)
        km_st.t_startup = now != KM_UNREAD ? now : cold_now();
    if (r->hooks & KM_HOOK_REDUNDANT)
        t->red_depth++;
    if (r->hooks & KM_HOOK_TRACE)
        km_core_trace_event(t, r, 1, now);
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
        km_core_trace_event(t, r, 0, now);
    if (r->hooks & KM_HOOK_IO)
        km_io_leave(e, now == KM_UNREAD);
}

/* The estimate of r's own time for an execution inside region `caller`. */
static KM_ALWAYS_INLINE km_time estimate(const struct km_region *r,
                                         int32_t caller)
{
    const struct km_ctx *c = &r->ctx[(uint32_t)caller % KM_NCTX];
    return c->caller == caller ? c->mean_own : r->mean_own;
}

/* Is frame i a measured CALL statement?  What it calls is then measured
 * too, out of turn (not a sample: km_learn() leaves it out): a routine
 * estimated inside a measured CALL would be settled against that one
 * call's time, cut when the call happened to be cheap and left short
 * when it was costly, the difference landing in the CALL's own time and
 * from its samples in every estimate of the CALL. */
static KM_ALWAYS_INLINE int measured_wrapper(const struct km_thread *t,
                                             int32_t i)
{
    const struct km_frame *f = &t->stack[i];
    return KM_UNLIKELY(f->anchor == i) && f->r && f->r->wrapper;
}

/* Is this execution of r, about to open above frame `below`, estimated?
 * Its entry in its anchor's table, or -1: measured. */
static KM_ALWAYS_INLINE int estimate_now(struct km_thread *t,
                                         struct km_region *r, int32_t below)
{
    if (r->skip == 0 || measured_wrapper(t, below))
        return -1;
    r->skip--;
    int32_t a = t->stack[below].anchor;
    const struct km_frame *f = &t->stack[a];
    int s = r->id & (KM_NWAIT - 1);
    if (KM_LIKELY((f->used >> s & 1) && f->wait[s].id == r->id))
        return s;
    return km_find_wait(t, r, a);
}

/* ------------------------------------------------------------------------ */
/* The hot path                                                              */

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
 * goes to the current slot, less what km_cross_slot gave earlier slots. */
static KM_NOINLINE void tl_leave_long(int32_t code, int32_t i,
                                      km_time amount)
{
    km_tl_put(&km_main_tl, code, amount - km_main_tl_done[i]);
    km_main_tl_done[i] = 0;
}

static KM_ALWAYS_INLINE void tl_leave(const struct km_region *r, int32_t i,
                                      km_tick start, km_time own, km_time e)
{
    int32_t code = km_tl_code(&km_main_tl, r->id);
    if (KM_LIKELY(r->callee)) {
        if (KM_UNLIKELY(start < km_main_tl.slot_start)) {
            tl_leave_long(code, i, own);
            return;
        }
        km_main_tl.cat[km_main_tl.row][KM_TL_CAT(code)] += own;
        km_main_tl.rt[(size_t)KM_TL_RIX(code) * KM_TL_ROWS +
                      (size_t)km_main_tl.row] += own;
    } else if (KM_UNLIKELY(KM_TL_CAT(code) == KM_TL_IO)) {
        if (start < km_main_tl.slot_start)
            tl_leave_long(code, i, e);
        else
            km_tl_put(&km_main_tl, code, e);
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
    km_time e = KM_SUB(now - f->start) - km_st.cost_inner - (*c->ovh - f->ovh0);
    km_time cc, ci;
    inside(stk, f, &cc, &ci);
    km_time ci0 = ci;
    if (KM_UNLIKELY(f->used != 0))
        km_settle(c, f, e, &cc, &ci);
    if (KM_UNLIKELY(e < cc)) {       /* more overhead taken out than spent */
        *c->ovh -= cc - e;
        e = cc;
    }
    km_time own = e - cc;
    if (live && c->t == &km_main_thread)
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
        km_learn(c->t, r, stk[i - 1].id, own, e);
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
        t->ovh += km_st.cost_estimated;
    } else {
        f->anchor = i;
        f->used = 0;
        t->ovh += km_st.cost_measured;
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
            km_sync_regions(t);
        if (-id <= t->nreg && KM_KIND_IS_ROUTINE(t->tab[-id - 1]->kind))
            task_in(t, -id);
        else
            t->bad_in++;
        return;
    }
    if (id > t->nreg) {              /* registered since: catch up */
        km_sync_regions(t);
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
    r->slow = r->hooks || km_st.clock.kind != KM_CLOCK_TSC;
    r->wrapper = r->kind == KM_K_CALL;
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
    km_tick now = slot >= 0 ? KM_UNREAD : km_clock_start(&km_st.clock);
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
    km_tick now = km_clock_tsc_unordered();
    struct km_frame *f = push(t, r, i, -1);
    f->start = now;
    signal_fence();
    t->sp = i;
    km_clock_fence();                /* the read is done before the region
                                        starts; the frame's work overlapped
                                        it (cost_inner takes it out) */
}

static KM_NOINLINE void km_in_measured(struct km_thread *t,
                                       struct km_region *r, int32_t i)
{
    if (t == &km_main_thread)
        in_measured(&km_main_thread, r, i);
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
    if (r->skip == 0 || measured_wrapper(t, i - 1)) {
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

/* The program's thread works on km_main_thread at a fixed address, as the
 * single-threaded libkm did: its test of the thread-local flag runs beside
 * the loads of its state instead of before them (a pointer loaded from
 * thread-local storage would hold up every load behind it). */
void km_in_f(const int32_t *h)
{
    if (KM_LIKELY(km_on_main))
        enter(&km_main_thread, h);
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
    if (id <= 0 || id > __atomic_load_n(&km_st.ntmpl, __ATOMIC_ACQUIRE)) {
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
    km_tick now = measured ? km_clock_read(&km_st.clock) : KM_UNREAD;
    if (measured)
        t->saved_reads += measured - 1;
    int32_t top = t->sp;
    if (measured && t == &km_main_thread && now >= km_main_tl.slot_end)
        km_cross_slot(t, top, now);
    t->sp = j - 1;
    signal_fence();
    for (int32_t i = top; i >= j; i--)
        leave(LIVE(t), t->stack, i, now, 1);
}

/* The exit of the top frame, measured: the clock read first. */
static KM_ALWAYS_INLINE void out_measured(struct km_thread *t, int32_t i)
{
    km_tick now = KM_LIKELY(km_st.clock.kind == KM_CLOCK_TSC)
                      ? km_clock_tsc_stop() : km_clock_read(&km_st.clock);
    if (t == &km_main_thread && KM_UNLIKELY(now >= km_main_tl.slot_end))
        km_cross_slot(t, i, now);
    t->sp = i - 1;
    signal_fence();
    leave_measured(LIVE(t), t->stack, i, now, 1);
}

static KM_NOINLINE void km_out_measured(struct km_thread *t, int32_t i)
{
    if (t == &km_main_thread)
        out_measured(&km_main_thread, i);
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
    if (KM_LIKELY(km_on_main))
        leave_top(&km_main_thread, h);
    else
        km_out_any(h);
}

/* A snapshot closes frame i of its copy of the stack at `now`, as the hot
 * path would (without hooks, sampling or the timeline). */
void km_leave_copy(const struct settle *c, struct km_frame *stk, int32_t i,
                   km_tick now)
{
    leave(c, stk, i, now, 0);
}
