/*
 * km_settle.c — a snapshot's call paths settled, the open frames closed
 * as if now, and what estimates and open frames give the time slots.
 *
 * Owns the inclusive times of the paths (a node's own time and what its
 * callees below it took, through transparent ones), settling a node whose
 * own time came out below zero (the estimates made inside its measured
 * executions were high: they are cut to fit, then libkm's overhead, whose
 * costs are estimates too), closing the open measured frames at an
 * instant without touching them, and the time slots' share of both.
 *
 * Must never let a figure contradict another: no net time below zero, no
 * callee longer than its caller, total = own times + overhead + outside.
 */
#include "runtime/km_core.h"

/* ------------------------------------------------------------------------ */
/* The open frames, closed as if now                                         */

/* Close the open measured frames mf[1..msp] and the root (mf[0], begun
 * at t0) at `now`, innermost first, as close_measured would, with the
 * thread's counters `s`: fn gets each frame's own time and elapsed time
 * (less libkm's), and the instant its own time ends: `now` for the top
 * frame and those under transparent ones (a loop's time is its
 * routine's too), else where the callee frame above it began.  Nothing
 * is changed.  With low > 0, the walk stops at
 * the first callee frame below mf[low]: the frames below a callee frame
 * that has been open all along have the same own time as then. */
void km_close_open(struct km_frames mf, int32_t msp, int32_t low,
                   const struct km_counters *s, km_tick now, km_tick t0,
                   void (*fn)(void *arg, int32_t m, km_time own, km_time e,
                              km_tick end),
                   void *arg)
{
    km_time acc = s->acc, extra = 0;
    km_tick end = now;
    for (int32_t m = msp; m >= 0; m--) {
        const struct km_mframe *f = km_frame(mf, m);
        km_time raw = m ? KM_SUB(now - f->start) - km_st.cost_inner
                        : KM_SUB(now - t0);
        km_time cin = f->cin + extra;
        km_time own = raw - cin - (acc - f->acc0);
        km_time ovh = (km_time)(s->nest - f->nest0) * km_st.cost_estimated +
                      (km_time)(s->nmeas - f->nmeas0) * km_st.cost_measured +
                      (s->ovh - f->ovh0);
        fn(arg, m, own, raw - ovh, end);
        if (m == 0 || f->n->callee) {
            if (m < low)
                return;
            extra = raw;
            acc = f->acc0;
            end = f->start;
        } else {
            extra = cin;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Settling the tree                                                         */

static km_time own_total(const struct km_pnode *n)
{
    return n->own + n->est;
}

/* What node x gives its parent: a callee its inclusive time, a
 * transparent node what its callees gave it (its own time is its
 * routine's). */
static void contribution(const struct km_pnode *k, km_time *all, km_time *est)
{
    if (k->callee) {
        *all = k->incl;
        *est = k->incl_est;
    } else {
        *all = k->incl - own_total(k);
        *est = k->incl_est - k->est;
    }
}

/* The estimated part of what node x's children give it. */
static km_time kids_estimated(const struct km_pnode *p, int32_t x)
{
    km_time sum = 0;
    for (int32_t k = p[x].first_kid; k >= 0; k = p[k].next_sib) {
        km_time all, est;
        contribution(&p[k], &all, &est);
        sum += est;
    }
    return sum > 0 ? sum : 0;
}

/* Estimated own time node x's callees (through transparent ones) could
 * give back, none below zero. */
static km_time can_give(const struct km_pnode *p, int32_t x)
{
    km_time sum = 0;
    for (int32_t k = p[x].first_kid; k >= 0; k = p[k].next_sib) {
        const struct km_pnode *c = &p[k];
        if (c->callee) {
            km_time t = own_total(c);
            sum += c->est < t ? c->est : t;
        } else {
            sum += can_give(p, k);
        }
    }
    return sum > 0 ? sum : 0;
}

/* Take the share `keep` < 1 off what can_give counted; returns what was
 * taken. */
static km_time give_back(struct km_pnode *p, int32_t x, double keep)
{
    km_time taken = 0;
    for (int32_t k = p[x].first_kid; k >= 0; k = p[k].next_sib) {
        struct km_pnode *c = &p[k];
        km_time t;
        if (c->callee) {
            km_time all = own_total(c);
            km_time can = c->est < all ? c->est : all;
            if (can <= 0)
                continue;
            t = (km_time)((1 - keep) * (double)can);
            if (t > can)
                t = can;
            c->est -= t;
        } else {
            t = give_back(p, k, keep);
        }
        c->incl -= t;
        c->incl_est = c->incl_est > t ? c->incl_est - t : 0;
        c->marked |= t > 0;
        taken += t;
    }
    return taken;
}

/* Node x's own time is below zero by `short_by`: the estimates inside it
 * give back up to that.  A callee's own time then takes the rest from the
 * overhead (whose costs are estimates too), then from a longer total; a
 * transparent node's own time is a share of its routine's, which gains
 * what was given back too, and what is still short is its routine's
 * concern. */
static void settle_node(struct km_pnode *p, int32_t x, km_time *ovh,
                        km_time *total)
{
    struct km_pnode *n = &p[x];
    km_time short_by = -own_total(n);
    km_time can = can_give(p, x);
    km_time given = 0;
    if (can > 0) {
        double keep = can > short_by ? 1 - (double)short_by / (double)can : 0;
        given = give_back(p, x, keep);
        n->own += given;
        n->marked = 1;
        short_by -= given;
    }
    if (!n->callee) {
        int32_t o = n->parent;
        while (o > 0 && !p[o].callee)
            o = p[o].parent;
        if (o >= 0)
            p[o].own += given;
        if (short_by > 0)
            n->own += short_by;
        return;
    }
    if (short_by > 0) {
        km_time t = short_by < *ovh ? short_by : *ovh;
        *ovh -= t;
        n->own += t;
        short_by -= t;
    }
    if (short_by > 0) {              /* a clock that is not one */
        *total += short_by;
        n->own += short_by;
    }
}

/* A transparent node's own time is a share of its parent's (a loop's of
 * its routine's): where the shares, estimated apart, add up to more than
 * the parent's own time, they are cut to fit, their estimates first. */
static void fit_shares(struct km_pnode *p, int32_t x)
{
    km_time sum = 0;
    for (int32_t k = p[x].first_kid; k >= 0; k = p[k].next_sib)
        if (!p[k].callee)
            sum += own_total(&p[k]);
    km_time room = own_total(&p[x]) > 0 ? own_total(&p[x]) : 0;
    if (sum <= room)
        return;
    double keep = sum > 0 ? (double)room / (double)sum : 0;
    for (int32_t k = p[x].first_kid; k >= 0; k = p[k].next_sib) {
        struct km_pnode *c = &p[k];
        if (c->callee)
            continue;
        km_time cut = own_total(c) - (km_time)(keep * (double)own_total(c));
        km_time from_est = cut < c->est ? cut : c->est;
        c->est -= from_est;
        c->own -= cut - from_est;
        c->incl -= cut;
        c->incl_est = c->incl_est > from_est ? c->incl_est - from_est : 0;
        if (c->incl_est > c->incl)
            c->incl_est = c->incl;
        c->marked = 1;
    }
}

/* The inclusive times of the n nodes of p (children after their parents,
 * p[0] the root, its own time what was outside every region), every
 * node's own time made >= 0 (*ovh and *total may change). */
void km_settle_tree(struct km_pnode *p, int32_t n, km_time *ovh,
                    km_time *total)
{
    for (int32_t i = 0; i < n; i++)
        p[i].first_kid = p[i].next_sib = -1;
    for (int32_t i = n - 1; i > 0; i--) {
        struct km_pnode *q = &p[p[i].parent];
        p[i].next_sib = q->first_kid;
        q->first_kid = i;
    }
    for (int32_t i = n - 1; i >= 0; i--) {
        struct km_pnode *x = &p[i];
        /* of the estimates below, the measured executions hold their
         * share (counted as executions), which their measured time
         * holds: not an estimate of this node's */
        double est_share = x->count > 0 ? (double)(x->count - x->measured) /
                                              (double)x->count : 0;
        x->absorbed = (km_time)((1 - est_share) * (double)kids_estimated(p, i));
        if (own_total(x) < 0)
            settle_node(p, i, ovh, total);
        if (x->own < 0) {            /* measured executions below zero: */
            x->est += x->own;        /* the estimates hold all there is */
            x->own = 0;
        }
        x->incl = own_total(x);
        for (int32_t k = x->first_kid; k >= 0; k = p[k].next_sib) {
            km_time all, est;
            contribution(&p[k], &all, &est);
            x->incl += all;
        }
        x->incl_est = x->est +
                      (km_time)(est_share * (double)kids_estimated(p, i));
        if (x->incl_est > x->incl)
            x->incl_est = x->incl > 0 ? x->incl : 0;
    }
    for (int32_t i = 0; i < n; i++)  /* parents first: nested loops */
        fit_shares(p, i);
}

/* ------------------------------------------------------------------------ */
/* Time slots                                                                */

struct give {
    const struct km_thread *t;
    struct km_timeline *into;
    km_tick now;
    int live;
};

static void give_open(void *arg, int32_t m, km_time own, km_time e,
                      km_tick end)
{
    struct give *g = arg;
    if (m == 0)
        return;
    const struct km_mframe *f = km_mf(g->t, m);
    int32_t code = km_tl_code(g->into, f->n->id);
    km_time amount;
    if (f->n->callee)                /* (its own time ended by `end`) */
        amount = own;
    else if (KM_TL_CAT(code) == KM_TL_IO)
        amount = e, end = g->now;
    else
        return;
    km_tl_spread(g->into, f->start, end, code, amount - *km_tl_done(m));
    if (g->live)
        *km_tl_done(m) = amount;
}

/* Give `into` (the live timeline when `live`, or a copy) thread t's
 * estimates made since the last time (the current slot), and its open
 * measured routines, MPI calls and I/O statements (frames 1..msp) their
 * time so far less what they gave before, spread over the slots from
 * their start to the end of that time (a routine's own time ends where
 * the callee open inside it began: a recursion's frames each over a
 * slot or two, not over every slot since the outermost began). */
void km_give_open_slots(const struct km_thread *t, int32_t msp, km_tick now,
                        struct km_timeline *into, int live)
{
    /* only the nodes that sample have estimated executions, and only
     * those counted since have new ones: a walk at every slot's end
     * through a tree that may not fit in the cache reads one line of
     * most (fetched a few nodes ahead) */
    int all = t->sampled_lost;
    int32_t nn = all ? __atomic_load_n(&t->nnodes, __ATOMIC_ACQUIRE)
                     : __atomic_load_n(&t->nsampled, __ATOMIC_ACQUIRE);
    const int32_t *list = t->sampled;
    for (int32_t i = all; i < nn; i++) {
        if (!all && i + 8 < nn)
            __builtin_prefetch(km_node_at(t, list[i + 8]));
        struct km_node *n = km_node_at(t, all ? i : list[i]);
        uint64_t count = n->count;
        if (!n->callee || count == n->tl_count)
            continue;
        km_time est = km_node_estimated(n, NULL);
        if (live)
            n->tl_count = count;
        if (est == n->tl_given)
            continue;
        km_tl_put(into, km_tl_code(into, n->id), est - n->tl_given);
        if (live)
            n->tl_given = est;
    }
    struct km_counters s = { t->acc, t->ovh, t->nest, t->nmeas };
    struct give g = { t, into, now, live };
    /* (the live timeline's frames below the lowest one that closed since
     * the last time have given their own time so far then: a recursion
     * 10^5 frames deep would walk them at every slot's end; an I/O
     * statement's among them gives its time at its close instead) */
    int32_t low = !live ? 0 : km_main_tl_low < msp ? km_main_tl_low : msp;
    struct km_frames mf = { t->mf, t->deep.mf };
    km_close_open(mf, msp, low, &s, now, t->t0, give_open, &g);
    if (live)
        km_main_tl_low = msp;
}

/* The program's thread's first measured exit past the current slot's end
 * gives the slot ending the estimates made since the last and the open
 * frames' time so far, and the slot of `now` becomes the current one. */
KM_NOINLINE void km_cross_slot(struct km_thread *t, km_tick now)
{
    if (km_main_tl.slot_end == 0)
        return;
    km_tl_fit(&km_main_tl, now);
    km_give_open_slots(t, t->msp, now, &km_main_tl, 1);
    km_tl_place(&km_main_tl, now);
}
