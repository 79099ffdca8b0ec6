/*
 * km_sample.c — which executions are measured past the threshold, and
 * what a measured one teaches its node.
 *
 * Owns the interval k (changed only between epochs of samples, so that no
 * sample sets the gap after it), the random gaps, and the estimates, one
 * per call path: a routine costs what the path to it makes it cost.
 *
 * Must never read the clock, let the value of one sample decide which
 * executions are sampled next (the estimates would be biased), or change
 * a node's estimate without first settling the executions estimated at
 * the old one (km_node_settle_estimates).
 */
#include "runtime/km_core.h"

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
 * 0.5% of the node's time or km_st.budget, whichever is more. */
static uint32_t interval(const struct km_node *n)
{
    if (km_st.fixed_k)
        return km_st.fixed_k;
    km_time extra = km_st.cost_measured - km_st.cost_estimated;
    if (n->wrapper)                  /* what it calls is measured with it */
        extra *= 2;
    km_time allow = n->mean_frame / 200;
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

/* Samples per epoch: the interval k changes only between epochs, from
 * the mean of a whole epoch, so that no one sample sets the gap after it
 * (a costly sample that shortened its own gap would have its high
 * estimate applied to fewer executions: a routine whose every 7th call
 * costs 50 times the others came out 34% low). */
#define KM_EPOCH 64

/* The executions estimated so far taken in bulk at the estimate they
 * were made at. */
void km_node_settle_estimates(struct km_node *n)
{
    uint64_t all;
    km_time own = km_node_estimated(n, &all);
    n->est_own = own;
    n->est_n = all;
}

static void set_estimate(struct km_node *n, km_time ewma)
{
    km_node_settle_estimates(n);
    n->ewma = ewma;
    n->mean = ewma > 0 ? ewma : 0;
    n->add = (n->callee ? n->mean : 0) + km_st.cost_estimated;
}

/* The node's next entry that is a sample, counted from this one. */
void km_sample_next(struct km_thread *t, struct km_node *n)
{
    n->next = n->count + gap(t, n->k);
}

/* Node n has been measured enough: its estimate starts as the mean own
 * time of every measured execution but the first (none was estimated
 * yet), and k as what their mean elapsed time allows. */
static void start_sampling(struct km_thread *t, struct km_node *n)
{
    set_estimate(n, (n->own - n->first_own) / (km_time)(n->closed - 1));
    n->mean_frame = n->el / (km_time)n->closed;
    n->epoch_el = 0;
    n->epoch_n = 0;
    n->sampling = 1;
    km_paths_sampling(t, n);
    n->k = interval(n);
    km_sample_next(t, n);
}

/* What a sample of node n teaches it (once sampling): own time `own`,
 * elapsed `e`. */
KM_NOINLINE void km_learn(struct km_thread *t, struct km_node *n, km_time own,
                          km_time e)
{
    (void)t;
    set_estimate(n, n->ewma + (own - n->ewma) / 8);
    n->epoch_el += e;
    if (++n->epoch_n == KM_EPOCH) {
        n->mean_frame = n->epoch_el / KM_EPOCH;
        n->epoch_el = 0;
        n->epoch_n = 0;
        n->k = interval(n);
    }
}

/* Node n, measured enough, starts sampling (km_warm_up decides when). */
KM_NOINLINE void km_sample_start(struct km_thread *t, struct km_node *n)
{
    start_sampling(t, n);
}
