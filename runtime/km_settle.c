/*
 * km_settle.c — estimates settled against measured time.
 *
 * Owns settling the estimates that wait in a measured frame (or the root)
 * when it closes, checkpoints (a full table, a time slot's end: settled
 * against the time measured so far), and what the open frames give the
 * time slots when a slot ends.
 *
 * Must never let a figure contradict another: no net time below zero, no
 * callee longer than its caller, total = own times + overhead + outside.
 */
#include "runtime/km_core.h"

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
KM_NOINLINE void km_settle(const struct settle *c, struct km_frame *f,
                           km_time e, km_time *cc, km_time *ci)
{
    double keep = share_that_fits(e, *cc, *ci);
    km_time taken = 0;
    uint32_t used = f->used;
    f->used = 0;
    signal_fence();
    int timeline = !c->copy && c->t == &km_main_thread;
    for (int s = 0; used; s++, used >>= 1) {
        if (!(used & 1))
            continue;
        struct km_region *q = region_of(c, f->wait[s].id);
        km_time excl = q->excl, el = q->elapsed;
        taken += commit(q, f->wait[s].own, f->wait[s].el, keep);
        if (timeline)                /* what stays, in the current slot */
            km_tl_put(&km_main_tl, km_tl_code(&km_main_tl, q->id),
                      q->callee ? q->excl - excl : q->elapsed - el);
    }
    *cc -= taken;
    *ci -= taken;
}

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
        int s = km_wait_entry(af, f->r->id, &free);
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
KM_NOINLINE void km_checkpoint(struct km_thread *t, int32_t a)
{
    struct km_frame *f = &t->stack[a];
    km_tick now = cold_now();
    km_time e, cc, ci;
    if (a == 0) {
        e = KM_SUB(now - t->t0) - t->ovh;
        cc = f->child;
        ci = f->inv;
    } else {
        e = KM_SUB(now - f->start) - km_st.cost_inner - (t->ovh - f->ovh0);
        inside(t->stack, f, &cc, &ci);
    }
    e -= open_measured_above(t, a, now);
    km_time ci0 = ci;
    km_settle(LIVE(t), f, e, &cc, &ci);
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
    return KM_SUB(now - f->start) - km_st.cost_inner - (t->ovh - f->ovh0);
}

/* Give the open measured routines and MPI calls of frames 1..top their
 * own time so far (less what they gave before, `done`, as km_main_tl_done),
 * spread over the slots since the current one began, into `into` (the
 * live timeline, or a copy).  A callee frame's own time is its elapsed
 * time less its callees': those closed (its child) and the one open
 * directly inside it. */
void km_give_open_slots(const struct km_thread *t, int32_t top, km_tick now,
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
            km_tl_spread(into, f->start, now, code, e - km_main_tl_done[j]);
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
                     own - km_main_tl_done[j]);
        if (done)
            done[j] = own;
        inner = e;
    }
}

/* The program's thread's first exit past the current slot's end (frames
 * 1..top open): estimates waiting in open frames are settled into the
 * slot ending (checkpoints), the open frames give it their own time so
 * far, and the slot of `now` becomes the current one. */
KM_NOINLINE void km_cross_slot(struct km_thread *t, int32_t top, km_tick now)
{
    if (km_main_tl.slot_end == 0)
        return;
    for (int32_t a = 0; a <= top; a++) {
        const struct km_frame *f = &t->stack[a];
        if ((a == 0 || (f->r && f->start != KM_UNREAD)) && f->used)
            km_checkpoint(t, a);
    }
    km_tl_fit(&km_main_tl, now);
    km_give_open_slots(t, top, now, &km_main_tl, km_main_tl_done);
    km_tl_place(&km_main_tl, now);
}
