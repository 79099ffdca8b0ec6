/*
 * km_hot.c — the hot path: KM_IN and KM_OUT.
 *
 * Owns opening a frame (estimated, on the fast path: the node found in
 * its parent's cache, counted, its estimate added to t->acc; measured: the
 * clock read last) and closing it (estimated: the node popped; measured:
 * the clock read first, its own time into its node), jumps out of several
 * frames at once, a stack that grows (recursion deeper than its first
 * KM_STACK_DEPTH places) or finds no room, OpenMP task bodies, and the
 * cold hooks some regions take (trace, redundant work, MPI start-up,
 * I/O), whose executions are all measured.
 *
 * Must never allocate, lock or make a system call other than the clock
 * read (a new call path's node, or the list of the nodes that sample
 * growing, aside: km_paths.c; a deeper stack aside: grow_stack; a long
 * measured frame's run delay aside: km_wait.c), read the clock for an
 * execution it estimates, or publish a frame (t->sp) before it is
 * complete: a signal's snapshot may read it at any instruction.
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

/* Where the entries that found no room go: no child is found under it,
 * and no exit matches it (km_out_slow counts them off). */
static struct km_node full_node = {
    .id = INT32_MIN + 2,
    .kid = { &km_no_node, &km_no_node, &km_no_node, &km_no_node,
             &km_no_node, &km_no_node, &km_no_node, &km_no_node },
    .alt = { &km_no_node, &km_no_node },
};

/* A frame's place and a measured frame, where `deep` (a constant
 * wherever these inline) says whether the place may lie past the first
 * KM_STACK_DEPTH: the fast path's, and the measured path's below that
 * depth, pay no test for deep frames (one on each measured entry and
 * exit cost a measured pair 1.1 ns). */
#define STK(t, i, deep) (*((deep) ? km_stk(t, i) : &(t)->stk[i]))
#define MF(t, m, deep) ((deep) ? km_mf(t, m) : &(t)->mf[m])

/* The node entries find their children under, with frame sp on top:
 * that frame's, or none inside a measured CALL statement (what it calls
 * is then measured too, out of turn: a routine estimated inside a
 * measured CALL would leave the difference between its estimate and that
 * one call's time in the CALL's own time, and from its samples in every
 * estimate of the CALL). */
static KM_ALWAYS_INLINE struct km_node *cur_at(struct km_thread *t,
                                               int32_t sp, int deep)
{
    struct km_node *n = STK(t, sp, deep);
    return KM_UNLIKELY(sp == t->mtop && n->wrapper && sp > 0) ? &t->force : n;
}

/* ------------------------------------------------------------------------ */
/* Opening frames                                                            */

/* Push estimated node c as frame sp: the fast path, and the slow path's
 * estimated entries. */
static KM_ALWAYS_INLINE void push_estimated(struct km_thread *t,
                                            struct km_node *c, int32_t sp,
                                            int deep)
{
    c->count++;
    t->acc += c->add;
    t->nest++;
    STK(t, sp, deep) = c;
    signal_fence();
    t->sp = sp;
    t->cur = c;
}

/* Open measured frame sp for node c: a sample (chosen at random, or any
 * execution before sampling starts) or not (measured out of turn).  The
 * clock is read first, and fenced last: the frame's stores overlap the
 * read (cost_inner takes them out). */
static KM_ALWAYS_INLINE void in_measured(struct km_thread *t,
                                         struct km_node *c, int32_t sp,
                                         int sample, int deep)
{
    int tsc = km_st.clock.kind == KM_CLOCK_TSC;
    km_tick now = tsc ? km_clock_tsc_unordered() : km_clock_start(&km_st.clock);
    c->count++;
    if (c->sampling && sample)
        km_sample_next(t, c);
    c->measured++;
    t->nmeas++;
    t->acc += km_st.cost_measured;
    int32_t m = t->msp + 1;
    struct km_mframe *f = MF(t, m, deep);
    f->n = c;
    f->start = now;
    f->acc0 = t->acc;
    f->cin = 0;
    f->ovh0 = t->ovh;
    f->nest0 = t->nest;
    f->nmeas0 = t->nmeas;
    f->sp = sp;
    f->sample = (uint8_t)(sample || !c->sampling);
    STK(t, sp, deep) = c;
    if (KM_UNLIKELY(c->hooks != 0))
        enter_hooks(t, c->r, now);
    signal_fence();
    t->msp = m;
    t->mtop = sp;
    signal_fence();
    t->sp = sp;
    t->cur = c->wrapper ? &t->force : c;
    /* a node whose frames are long (or new) reads the run delay at its
     * start (km_wait.c) */
    if (KM_UNLIKELY(km_st.wait_on) &&
        c->el >= (km_time)c->closed * km_st.wait_long)
        km_wait_enter(t, m, now);
    if (tsc)
        km_clock_fence();            /* the read is done before the region
                                        starts; the frame's work overlapped
                                        it (cost_inner takes it out) */
}

/* An entry of node c whose count reaches its next: a sample, or every
 * entry (before sampling, or hooks); frame sp below KM_STACK_DEPTH. */
static KM_NOINLINE void km_in_node(struct km_thread *t, struct km_node *c,
                                   int32_t sp)
{
    if (t == &km_main_thread)        /* its state at a fixed address */
        in_measured(&km_main_thread, c, sp, 1, 0);
    else
        in_measured(t, c, sp, 1, 0);
}

/* An entry directly inside a measured CALL statement (frame sp below
 * KM_STACK_DEPTH). */
static KM_NOINLINE void km_in_forced(struct km_thread *t, struct km_node *c,
                                     int32_t sp)
{
    in_measured(t, c, sp, 0, 0);
}

/* A measured entry at any depth (a sample, or not). */
static KM_NOINLINE void km_in_deep(struct km_thread *t, struct km_node *c,
                                   int32_t sp, int sample)
{
    in_measured(t, c, sp, sample, 1);
}

static void enter(struct km_thread *t, const int32_t *h);
static void leave_top(struct km_thread *t, const int32_t *h);

static int routine_open(const struct km_thread *t, int32_t routine)
{
    for (int32_t i = 1; i <= t->sp; i++)
        if ((*km_stk(t, i))->id == routine)
            return 1;
    return 0;
}

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
    const struct km_region *in = (*km_stk(t, t->sp))->r;
    int open = routine_open(t, routine) || (in && in->routine == routine);
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

/* An entry that does not fit: with no memory for its node (or for a
 * bigger stack), which gets a sentinel frame no KM_OUT matches; entries
 * above it are counted, and their exits pop nothing. */
static void enter_lost(struct km_thread *t)
{
    t->lost++;
    if (t->overflow_depth++ == 0) {
        int32_t i = t->sp + 1;
        *km_stk(t, i) = &full_node;
        signal_fence();
        t->sp = i;
        t->cur = &full_node;
    }
}

/* Room for frame sp past the stack's first places (a recursion deeper
 * than those), and one more for full_node: the deep part copied into
 * arrays of twice as many places, published before their size; the old
 * ones are left, as a snapshot may be reading them (the copies together
 * take twice the last).  Its time is libkm's own.  -1 without memory,
 * or past KM_STACK_MAX. */
static KM_NOINLINE int grow_stack(struct km_thread *t, int32_t sp)
{
    int32_t cap = t->deep.cap;
    if (sp < KM_STACK_DEPTH + cap - 1)
        return 0;
    if (KM_STACK_DEPTH + cap >= KM_STACK_MAX)
        return -1;
    km_tick t1 = cold_now();
    size_t n = cap ? (size_t)cap * 2 : KM_STACK_DEPTH;
    int main = t == &km_main_thread;
    struct km_node **stk = km_mem_alloc(n * sizeof *stk);
    struct km_mframe *mf = km_mem_alloc(n * sizeof *mf);
    struct km_mwait *mw = km_mem_alloc(n * sizeof *mw);
    km_time *done = main ? km_mem_alloc(n * sizeof *done) : NULL;
    int ok = stk && mf && mw && (done || !main);
    if (ok) {
        if (cap) {
            memcpy(stk, t->deep.stk, (size_t)cap * sizeof *stk);
            memcpy(mf, t->deep.mf, (size_t)cap * sizeof *mf);
            memcpy(mw, t->deep.mw, (size_t)cap * sizeof *mw);
            if (main)
                memcpy(done, t->deep.tl_done, (size_t)cap * sizeof *done);
        }
        t->deep.stk = stk;
        t->deep.mf = mf;
        t->deep.mw = mw;
        t->deep.tl_done = done;
        __atomic_store_n(&t->deep.cap, (int32_t)n, __ATOMIC_RELEASE);
    } else {
        km_mem_free(stk);
        km_mem_free(mf);
        km_mem_free(mw);
        km_mem_free(done);
    }
    km_time took = KM_SUB(cold_now() - t1);
    t->ovh += took;
    t->acc += took;
    return ok ? 0 : -1;
}

/* A region's first entry on this thread: its place in the routine table,
 * and the region around it. */
static void first_entry(struct km_thread *t, struct km_region *r)
{
    r->entered = 1;
    if (KM_KIND_IS_ROUTINE(r->kind)) {
        r->order = ++t->nentered;
        return;
    }
    /* (a location a thread runs outside its routine, as a parallel
     * region's worker threads do, has nothing around it) */
    const struct km_region *below = (*km_stk(t, t->sp))->r;
    if (below && (below->id == r->routine || below->routine == r->routine))
        r->parent = below->id;
    else if (r->routine > 0 && r->routine <= t->nreg &&
             routine_open(t, r->routine))
        r->parent = r->routine;
    else
        r->parent = 0;
}

/* The entries the fast path leaves out: a child not in its parent's cache
 * (a new path, a task's body, a region registered since, a bad handle),
 * inside a measured CALL, or deeper than the stack's first places (which
 * may have to grow). */
static KM_NOINLINE void km_in_slow(struct km_thread *t, const int32_t *h)
{
    int32_t id = *h;
    int32_t sp = t->sp + 1;
    struct km_node *c;
    /* (t->force and the full stack's node never have children there) */
    if (KM_LIKELY(sp < KM_STACK_DEPTH - 1) &&
        (c = km_alt_child(t->cur, id)) != NULL) {
        if (c->count + 1 >= c->next)
            km_in_node(t, c, sp);
        else
            push_estimated(t, c, sp, 0);
        return;
    }
    if (id < 0 && id != INT32_MIN) {  /* a task's body */
        if (-id > t->nreg)
            km_sync_regions(t);
        if (-id <= t->nreg && KM_KIND_IS_ROUTINE(t->tab[-id - 1]->kind))
            task_in(t, -id);
        else
            t->bad_in++;
        return;
    }
    if (id > t->nreg)                /* registered since: catch up */
        km_sync_regions(t);
    if (id <= 0 || id > t->nreg) {
        t->bad_in++;
        return;
    }
    if (t->overflow_depth || grow_stack(t, sp)) {
        enter_lost(t);
        return;
    }
    if (KM_UNLIKELY(!t->chunk)) {    /* no memory for its call paths */
        enter_lost(t);
        return;
    }
    struct km_region *r = t->tab[id - 1];
    int forced = t->cur == &t->force;
    if (!r->entered)
        first_entry(t, r);
    c = km_child(t, *km_stk(t, t->sp), r);
    if (!c) {
        enter_lost(t);
        return;
    }
    int measure = forced || c->count + 1 >= c->next;
    if (KM_UNLIKELY(sp >= KM_STACK_DEPTH)) {
        if (measure)
            km_in_deep(t, c, sp, !forced);
        else
            push_estimated(t, c, sp, 1);
    } else if (forced) {
        km_in_forced(t, c, sp);
    } else if (measure) {
        km_in_node(t, c, sp);
    } else {
        push_estimated(t, c, sp, 0);
    }
}

/* Every case but the estimated entry of a node its parent's cache holds
 * ends in a tail call, so that this one saves no register. */
static KM_ALWAYS_INLINE void enter(struct km_thread *t, const int32_t *h)
{
    int32_t id = *h;
    struct km_node *c = t->cur->kid[(uint32_t)id % KM_NKID];
    int32_t sp = t->sp + 1;
    if (KM_UNLIKELY((c->id != id) | (sp >= KM_STACK_DEPTH - 1))) {
        km_in_slow(t, h);
        return;
    }
    if (KM_UNLIKELY(c->count + 1 >= c->next)) {
        km_in_node(t, c, sp);
        return;
    }
    push_estimated(t, c, sp, 0);
}

static KM_NOINLINE KM_HOT_ALIGN void km_in_any(const int32_t *h)
{
    THREAD_OR(return);
    enter(t, h);
}

/* The program's thread works on km_main_thread at a fixed address, as the
 * single-threaded libkm did: its test of the thread-local flag runs beside
 * the loads of its state instead of before them (a pointer loaded from
 * thread-local storage would hold up every load behind it).  Both entry
 * points, and the other threads' way in (km_in_any, km_out_any), start on
 * a line of their own: where the linker happens to put them moved an
 * estimated pair by a tenth of its cost. */
KM_HOT_ALIGN void km_in_f(const int32_t *h)
{
    if (KM_LIKELY(km_on_main))
        enter(&km_main_thread, h);
    else
        km_in_any(h);
}

/* ------------------------------------------------------------------------ */
/* Closing frames                                                            */

/* The program's thread closes measured frame f (mf[m]) of node c: its
 * own time (a callee) or elapsed time (an I/O statement) goes to the
 * current slot, less what km_cross_slot gave earlier slots. */
static KM_NOINLINE void tl_leave_long(int32_t code, int32_t m,
                                      km_time amount)
{
    km_tl_put(&km_main_tl, code, amount - *km_tl_done(m));
    *km_tl_done(m) = 0;
}

static void tl_leave(const struct km_node *c, const struct km_mframe *f,
                     int32_t m, km_time own, km_time e)
{
    int32_t code = km_tl_code(&km_main_tl, c->id);
    if (m - 1 < km_main_tl_low)      /* (frame m - 1 is on top again) */
        km_main_tl_low = m - 1;
    if (KM_LIKELY(c->callee)) {
        if (KM_UNLIKELY(f->start < km_main_tl.slot_start)) {
            tl_leave_long(code, m, own);
            return;
        }
        km_main_tl.cat[km_main_tl.row][KM_TL_CAT(code)] += own;
        km_main_tl.rt[(size_t)KM_TL_RIX(code) * KM_TL_ROWS +
                      (size_t)km_main_tl.row] += own;
    } else if (KM_UNLIKELY(KM_TL_CAT(code) == KM_TL_IO)) {
        if (f->start < km_main_tl.slot_start)
            tl_leave_long(code, m, e);
        else
            km_tl_put(&km_main_tl, code, e);
    }
}

/* Retire the top frame (sp), measured or not: the node below becomes the
 * current one. */
static KM_ALWAYS_INLINE void pop(struct km_thread *t, int32_t sp)
{
    t->sp = sp - 1;
    signal_fence();
    t->cur = cur_at(t, sp - 1, 1);
}

/* Close the top frame, measured (mf[msp]), at clock `now` (`deep`: it
 * may lie past the first KM_STACK_DEPTH places). */
static KM_ALWAYS_INLINE void close_measured(struct km_thread *t, km_tick now,
                                            int deep)
{
    int32_t m = t->msp;
    struct km_mframe *f = MF(t, m, deep);
    struct km_node *c = f->n;
    km_time raw = KM_SUB(now - f->start) - km_st.cost_inner;
    km_time dacc = t->acc - f->acc0;
    km_time own = raw - f->cin - dacc;
    km_time e = raw - km_overhead_inside(t, f);
    uint64_t est_inside = t->nest - f->nest0;
    km_time waited = 0, waited_in = 0, moved = 0;
    if (KM_UNLIKELY(raw >= km_st.wait_long)) {  /* long: did it wait? */
        struct km_waited w = { 0, 0, 0 };
        km_wait_close(t, f, m, now, raw, dacc, &w);
        waited = w.all;
        waited_in = w.in;
        moved = w.moved;
    }
    t->sp = f->sp - 1;
    signal_fence();
    t->msp = m - 1;
    struct km_mframe *b = MF(t, m - 1, deep);
    t->mtop = b->sp;
    t->cur = cur_at(t, f->sp - 1, deep);
    if (c->callee) {
        b->cin += raw;
        t->acc = f->acc0;
    } else {
        b->cin += f->cin;
    }
    c->own += own - moved;
    c->el += e;
    c->absorbed += (km_time)est_inside;
    signal_fence();
    c->closed++;
    if (t == &km_main_thread)
        tl_leave(c, f, m, own, e);
    if (KM_LIKELY(!c->sampling))     /* (the estimate is of running time) */
        km_warm_up(t, c, own - waited_in);
    else if (f->sample)
        km_learn(t, c, own - waited_in, e - waited);
    if (KM_UNLIKELY(c->hooks != 0))
        leave_hooks(t, c->r, e, now);
}

/* A jump out of several frames (or an exit that does not match the top):
 * every frame from the top down to the one of region `id` closes at the
 * same instant, with one clock read. */
static KM_NOINLINE void leave_to(struct km_thread *t, int32_t id)
{
    int32_t j = t->sp;
    while (j > 0 && (*km_stk(t, j))->id != id)
        j--;
    if (j == 0) {                    /* not open: ignore, but say so */
        t->bad_out++;
        return;
    }
    uint64_t measured = 0;
    for (int32_t m = t->msp; m > 0 && km_mf(t, m)->sp >= j; m--)
        measured++;
    km_tick now = measured ? km_clock_read(&km_st.clock) : 0;
    if (measured > 1)
        t->saved_reads += measured - 1;
    if (measured && t == &km_main_thread && now >= km_main_tl.slot_end)
        km_cross_slot(t, now);
    while (t->sp >= j) {
        if (t->sp == t->mtop)
            close_measured(t, now, 1);
        else
            pop(t, t->sp);
    }
}

/* A clock read through a call (KM_CLOCK=monotonic: the vDSO's) runs
 * some 10 ns of its own before it reads, which would overlap a short
 * routine's last steps, though not the empty region the costs are
 * calibrated on (NEXTX, truth.test, came out 25% short of the plain loop,
 * 5% with the TSC): fenced first, it runs after them, as the TSC's read
 * does.  Whatever an exit runs before its fence is counted in the
 * calibration and hidden in the routine: an exit is kept short there. */
static km_tick read_fenced(void)
{
    km_clock_fence();
    return km_clock_read(&km_st.clock);
}

/* The exit of the top frame, measured: the clock read first. */
static KM_ALWAYS_INLINE void out_measured(struct km_thread *t, int main,
                                          int deep)
{
    km_tick now = KM_LIKELY(km_st.clock.kind == KM_CLOCK_TSC)
                      ? km_clock_tsc_stop() : read_fenced();
    if (main && KM_UNLIKELY(now >= km_main_tl.slot_end))
        km_cross_slot(t, now);
    close_measured(t, now, deep);
}

/* ... of a frame past the first KM_STACK_DEPTH places. */
static KM_NOINLINE void out_deep(struct km_thread *t)
{
    out_measured(t, t == &km_main_thread, 1);
}

static KM_NOINLINE void km_out_slow(struct km_thread *t, const int32_t *h)
{
    int32_t id = *h;
    if (id < 0 && id != INT32_MIN && -id <= t->nreg) {
        task_out(t, -id);
        return;
    }
    struct km_node *top = STK(t, t->sp, t->sp >= KM_STACK_DEPTH);
    if (top == &full_node) {         /* an entry that did not fit */
        if (--t->overflow_depth == 0)
            pop(t, t->sp);
        return;
    }
    if (top->id != id || t->sp != t->mtop) {
        if (id <= 0 || id > __atomic_load_n(&km_st.ntmpl, __ATOMIC_ACQUIRE))
            t->bad_in++;
        else
            leave_to(t, id);
        return;
    }
    if (KM_UNLIKELY(t->sp >= KM_STACK_DEPTH))
        out_deep(t);
    else if (t == &km_main_thread)   /* its state at a fixed address */
        out_measured(&km_main_thread, 1, 0);
    else
        out_measured(t, 0, 0);
}

static KM_ALWAYS_INLINE void leave_top(struct km_thread *t, const int32_t *h)
{
    int32_t sp = t->sp;
    if (KM_UNLIKELY(sp >= KM_STACK_DEPTH)) {    /* (a deep frame) */
        km_out_slow(t, h);
        return;
    }
    struct km_node *c = t->stk[sp];
    if (KM_UNLIKELY((sp == t->mtop) | (c->id != *h))) {
        km_out_slow(t, h);
        return;
    }
    struct km_node *below = t->stk[sp - 1];
    t->sp = sp - 1;
    signal_fence();
    t->cur = below;
}

static KM_NOINLINE KM_HOT_ALIGN void km_out_any(const int32_t *h)
{
    THREAD_OR(return);
    leave_top(t, h);
}

KM_HOT_ALIGN void km_out_f(const int32_t *h)
{
    if (KM_LIKELY(km_on_main))
        leave_top(&km_main_thread, h);
    else
        km_out_any(h);
}
