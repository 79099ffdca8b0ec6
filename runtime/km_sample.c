/*
 * km_sample.c — which executions are measured past the threshold, and
 * what a measured one teaches its region.
 *
 * Owns the interval k (changed only between epochs of samples, so that no
 * sample sets the gap after it), the random gaps, the estimates (per
 * region and per caller), and finding a region's entry in its anchor's
 * table when it is not where the region's id puts it.
 *
 * Must never read the clock, or let the value of one sample decide which
 * executions are sampled next (the estimates would be biased).
 */
#include "runtime/km_core.h"

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
 * 0.5% of the region's time or km_st.budget, whichever is more. */
static uint32_t interval(const struct km_region *r)
{
    if (km_st.fixed_k)
        return km_st.fixed_k;
    km_time extra = km_st.cost_measured - km_st.cost_estimated;
    if (r->wrapper)                  /* what it calls is measured with it */
        extra *= 2;
    km_time allow = r->mean_frame / 200;
    if (allow < km_st.budget)
        allow = km_st.budget;
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

/* Samples per epoch: the interval k changes only between epochs, from
 * the mean of a whole epoch, so that no one sample sets the gap after it
 * (a costly sample that shortened its own gap would have its high
 * estimate applied to fewer executions: a routine whose every 7th call
 * costs 50 times the others came out 34% low). */
#define KM_EPOCH 64

/* The region has been measured `thresh` times, and at least twice: its
 * estimate starts as the mean own time of every measured execution but
 * the first (all of them are in excl: none was estimated yet), and k as
 * what their mean elapsed time allows. */
static void start_sampling(struct km_thread *t, struct km_region *r)
{
    r->mean_own = (r->excl - r->first_own) / (km_time)(r->measured - 1);
    if (r->mean_own < 0)
        r->mean_own = 0;
    r->mean_frame = r->elapsed / (km_time)r->measured;
    r->epoch_el = 0;
    r->epoch_n = 0;
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
KM_NOINLINE void km_learn(struct km_thread *t, struct km_region *r,
                          int32_t caller,
                          km_time own, km_time e)
{
    if (!r->sampling) {
        if (r->measured == 1)
            r->first_own = own;
        r->learn_at = r->thresh > 2 ? r->thresh : 2;
        if (r->measured >= r->learn_at)
            start_sampling(t, r);
        return;
    }
    if (r->skip != 0)
        return;
    r->mean_own = ewma(r->mean_own, own);
    if (caller > 0)
        learn_caller(r, caller, own);
    r->epoch_el += e;
    if (++r->epoch_n == KM_EPOCH) {
        r->mean_frame = r->epoch_el / KM_EPOCH;
        r->epoch_el = 0;
        r->epoch_n = 0;
        r->k = interval(r);
    }
    r->skip = gap(t, r->k) - 1;
}


/* The entry for region `id` in the table of frame f, or -1; *free: the
 * first free one met looking for it (-1 if none). */
int km_wait_entry(const struct km_frame *f, int32_t id, int *free)
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

/* The entry of anchor a's table for region r, not where r's id puts it
 * first: found, added, or added after a checkpoint emptied the table; -1
 * only when the frames open above the anchor fill the table on their own
 * (then this execution is measured). */
KM_NOINLINE int km_find_wait(struct km_thread *t, struct km_region *r,
                             int32_t a)
{
    struct km_frame *f = &t->stack[a];
    int free;
    int s = km_wait_entry(f, r->id, &free);
    if (s >= 0)
        return s;
    if (free < 0) {
        km_checkpoint(t, a);
        s = km_wait_entry(f, r->id, &free);
        if (s >= 0)
            return s;
        if (free < 0)
            return -1;
    }
    claim_wait(f, free, r->id);
    return free;
}

