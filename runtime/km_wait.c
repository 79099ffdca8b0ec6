/*
 * km_wait.c — what long measured frames waited for a processor.
 *
 * Owns the readings of a thread's run delay (Linux's time it was ready to
 * run but waited, /proc/thread-self/schedstat, through a descriptor it
 * keeps open) and what they decide:
 *
 *   - a sample that waited teaches its node what it ran, not what it
 *     waited (one preemption caught would otherwise inflate thousands of
 *     estimates, and none caught leaves them right: erratic results); its
 *     own time keeps the wait (that execution truly took that long);
 *   - a measured frame's waiting outside its measured callees is spread
 *     over the time it ran there, in proportion: the share that fell
 *     during the estimated executions inside it (their estimates, less
 *     libkm's costs) leaves its own time for t->wait_est, which a snapshot
 *     gives the thread's estimated executions (km_snapshot.c), as an
 *     estimated execution that waited would have held its wait had it
 *     been measured.
 *
 * A reading costs about a microsecond, 20 measured frames: it is taken
 * only around frames of KM_WAIT_LONG or more (so it costs at most 2% of
 * them): at the entry of a node whose frames are that long on average (a
 * new node's too, at most one per KM_WAIT_LONG), and at the close of any
 * frame that turned out that long.  A recursive region's frames nest,
 * each as long as those inside it: they take a reading at most one per
 * KM_WAIT_LONG, and otherwise the last one (a recursion 10^5 deep read
 * 10^5 times, 0.1 s of a 1 ms program).  A frame read at its start knows its
 * waiting exactly; another takes the reading before its start (every
 * reading gives it to the open frames that have none, so it is the last
 * one before them), which may hold earlier waiting too: that bound is cut
 * to what the frame took beyond its node's mean elapsed time.  Shorter
 * frames are not read: their waiting stays where it fell.  Each reading's
 * cost is libkm's overhead (t->ovh), out of the frame it fell in.  A
 * snapshot of the calling thread reads it once more, for its open frames
 * (closed as if then: km_wait_open).
 *
 * Must never run on the fast path, read anything with the CPU clock (its
 * times hold no waiting), or change a frame's figures other than through
 * what close_measured asks (struct km_waited).
 */
#include "runtime/km_core.h"

/* Frames this long (seconds) or longer have their waiting read. */
#define KM_WAIT_LONG 50e-6

/* The calling thread's run delay now (ns), -1 unknown. */
static int64_t read_delay(struct km_thread *t)
{
    if (km_st.waited_fn)
        return km_st.waited_fn();
    return km_clock_waited_fd(&t->rd_fd);
}

static km_time ns_to_sub(int64_t ns)
{
    return (km_time)(((unsigned __int128)(uint64_t)ns * km_st.sub_per_ns) >>
                     32);
}

/* What one reading costs, in subticks: the best of a few. */
static km_time reading_cost(struct km_thread *t)
{
    km_tick best = INT64_MAX;
    for (int i = 0; i < 5; i++) {
        km_tick a = km_clock_read(&km_st.clock);
        (void)read_delay(t);
        km_tick b = km_clock_read(&km_st.clock);
        if (b - a < best)
            best = b - a;
    }
    return best > 0 && best < INT64_MAX ? KM_SUB(best) : 0;
}

/* At start-up, on the first thread: whether to read run delays at all
 * (not with the CPU clock, nor where the system does not say), and what a
 * reading costs. */
void km_wait_start(struct km_thread *t)
{
    double spt = km_st.clock.seconds_per_tick;
    km_st.wait_on = 0;
    km_st.wait_long = INT64_MAX;
    km_st.cost_waited = 0;
    if (cpu_clock() || spt <= 0 ||
        (km_st.clock_injected && !km_st.waited_fn) || read_delay(t) < 0)
        return;
    km_st.wait_long = (km_time)(KM_WAIT_LONG / spt * (1 << KM_SUB_BITS));
    if (km_st.wait_long < 1)
        km_st.wait_long = 1;
    km_st.sub_per_ns = (uint64_t)(1e-9 / spt * (1 << KM_SUB_BITS) * 4294967296.0);
    if (!km_st.clock_injected)
        km_st.cost_waited = reading_cost(t);
    km_st.wait_on = 1;
}

/* Thread t starts (or takes over an ended thread's state) at `now`: its
 * first reading, on a descriptor of its own. */
void km_wait_thread(struct km_thread *t, km_tick now)
{
    if (t->rd_fd > 0)
        close(t->rd_fd - 1);
    t->rd_fd = 0;
    t->rd_last = km_st.wait_on ? read_delay(t) : -1;
    t->rd_at = now;
}

/* Open frames 1..below without a reading since they began take the last
 * one (before them) as theirs. */
static void give_last_reading(struct km_thread *t, int32_t below)
{
    for (int32_t j = below; j >= 1; j--) {
        struct km_mwait *w = km_mw(t, j);
        uint64_t tag = km_mf(t, j)->nmeas0;
        if (w->tag == tag)
            break;
        *w = (struct km_mwait){ .tag = tag,
                                .rd0 = t->rd_last };
    }
}

/* A frame of node n at `now` may do without a reading of its own: n is
 * nested in a frame of its region (recursion), whose frames nest, so
 * that a reading at each would cost 2% of the run once per level, and
 * the last reading is recent.  Such readings come at most one per
 * KM_WAIT_LONG. */
static int reading_shared(const struct km_thread *t, const struct km_node *n,
                          km_tick now)
{
    return n->nested && KM_SUB(now - t->rd_at) < km_st.wait_long;
}

/* A reading `rd` at `now`, inside open frames 1..below: those without a
 * reading since they began take the last one (before them) as theirs;
 * frames below one that has a reading have one too. */
static void take_reading(struct km_thread *t, int32_t below, int64_t rd,
                         km_tick now)
{
    give_last_reading(t, below);
    t->rd_last = rd;
    t->rd_at = now;
    t->ovh += km_st.cost_waited;
}

/* What frame f of node c (raw long, cin of it in measured callees, est
 * of it estimated callee time) waited: `all` from its readings (exact:
 * the first at its start), win of it in its measured callees; into *w. */
static void share(const struct km_node *c, km_time raw, km_time cin,
                  km_time est, km_time all, int exact, km_time win,
                  struct km_waited *w)
{
    if (!exact) {                    /* an upper bound: what it took
                                        beyond its node's usual */
        km_time usual = c->closed ? c->el / (km_time)c->closed : 0;
        km_time beyond = raw - usual > 0 ? raw - usual : 0;
        if (all > beyond)
            all = beyond;
    }
    if (all > raw)
        all = raw;
    km_time in = all - win;
    if (in > raw - cin)
        in = raw - cin;
    if (in < 0)
        in = 0;
    /* est: its measured callees' costs are counted in too, an
     * underestimate, so the move errs short */
    km_time ran = raw - cin - in;
    km_time moved = 0;
    if (est > 0 && ran > 0)
        moved = est >= ran ? in : (km_time)((__int128)in * est / ran);
    w->all = all;
    w->in = in;
    w->moved = moved;
}

/* Measured frame mf[m] (open) begins at `now`: its node's frames are
 * long, or it is new (then at most one reading per KM_WAIT_LONG). */
KM_NOINLINE void km_wait_enter(struct km_thread *t, int32_t m, km_tick now)
{
    struct km_mframe *f = km_mf(t, m);
    if ((f->n->closed == 0 && KM_SUB(now - t->rd_at) < km_st.wait_long) ||
        reading_shared(t, f->n, now))
        return;
    int64_t rd = read_delay(t);
    if (rd < 0)
        return;
    take_reading(t, m - 1, rd, now);
    *km_mw(t, m) = (struct km_mwait){ .tag = f->nmeas0, .rd0 = rd,
                                      .exact = 1 };
    f->cin += km_st.cost_waited;     /* libkm's, not the frame's */
}

/* The waiting of frame f (mf[m], closing at `now` after `raw`, t->acc
 * grown by dacc in it), read now: into *w what close_measured takes out
 * of its own time and of what it teaches its node; the frame below
 * learns what its callee waited. */
KM_NOINLINE void km_wait_close(struct km_thread *t, struct km_mframe *f,
                               int32_t m, km_tick now, km_time raw,
                               km_time dacc, struct km_waited *w)
{
    if (!km_st.wait_on)
        return;
    int shared = reading_shared(t, f->n, now);
    int64_t rd = shared ? t->rd_last : read_delay(t);
    if (rd < 0)
        return;
    const struct km_mwait *mine = km_mw(t, m)->tag == f->nmeas0 ? km_mw(t, m)
                                                                : NULL;
    int64_t rd0 = mine ? mine->rd0 : t->rd_last;
    km_time win = mine ? mine->win : 0;
    int exact = mine && mine->exact;
    km_time est = dacc - km_overhead_inside(t, f);
    if (shared) {                    /* (the last reading, as of now) */
        give_last_reading(t, m - 1);
    } else {
        take_reading(t, m - 1, rd, now);
        km_mf(t, m - 1)->cin += km_st.cost_waited;   /* the reading is after
                                                        it */
    }
    if (rd0 < 0 || rd <= rd0)
        return;
    share(f->n, raw, f->cin, est, ns_to_sub(rd - rd0), exact, win, w);
    if (f->n->callee)                /* (a transparent frame's own time is
                                        a share of its routine's, which
                                        gives it: once) */
        t->wait_est += w->moved;
    if (m > 1)                       /* (its tag set by take_reading) */
        km_mw(t, m - 1)->win += f->n->callee ? w->all : win;
}

/* What thread t's open frames mf[1..msp] (a snapshot's copy, closed as if
 * at `now` with counters s, as km_close_open closes them) waited during
 * the estimated executions inside them, as km_wait_close would find at
 * their close: moved[m] leaves frame m's own time; returns the part that
 * goes to estimated executions.  Only on the calling thread (whose run
 * delay it reads); nothing live changes. */
km_time km_wait_open(struct km_thread *t, const struct km_mframe *mf,
                     int32_t msp, const struct km_counters *s, km_tick now,
                     km_time *moved)
{
    for (int32_t m = 0; m <= msp; m++)
        moved[m] = 0;
    int64_t rd;
    if (!km_st.wait_on || t != km_self || msp < 1 || (rd = read_delay(t)) < 0)
        return 0;
    km_time acc = s->acc, extra = 0, given = 0, inner = 0;
    for (int32_t m = msp; m >= 1; m--) {
        const struct km_mframe *f = &mf[m];
        const struct km_mwait *mw = km_mw(t, m)->tag == f->nmeas0 ? km_mw(t, m)
                                                                 : NULL;
        km_time raw = KM_SUB(now - f->start) - km_st.cost_inner;
        km_time cin = f->cin + extra;
        km_time ovh = (km_time)(s->nest - f->nest0) * km_st.cost_estimated +
                      (km_time)(s->nmeas - f->nmeas0) * km_st.cost_measured +
                      (s->ovh - f->ovh0);
        int64_t rd0 = mw ? mw->rd0 : t->rd_last;
        km_time win = (mw ? mw->win : 0) + inner;
        struct km_waited w = { 0, 0, 0 };
        if (raw >= km_st.wait_long && rd0 >= 0 && rd > rd0)
            share(f->n, raw, cin, acc - f->acc0 - ovh, ns_to_sub(rd - rd0),
                  mw && mw->exact, win, &w);
        moved[m] = w.moved;
        inner = f->n->callee ? w.all : win;
        if (f->n->callee) {
            given += w.moved;
            extra = raw;
            acc = f->acc0;
        } else {
            extra = cin;
        }
    }
    return given;
}
