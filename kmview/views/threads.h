/*
 * threads.h — what the threads of a run did (KM_output's Threads blocks),
 * for the summary and the exports.
 */
#ifndef KV_THREADS_H
#define KV_THREADS_H

#include <stdbool.h>
#include <stdio.h>

#include "kmview/write/out.h"
#include "kmview/figures/scale.h"
#include "kmview/figures/stats.h"

/* Does any rank of the run have a Threads block? */
bool kv_any_threads(const struct kv_run *run);

/* One region some thread other than 0 ran, over every rank that has it:
 * counts added, the least min, the mean of the ranks' means, the largest
 * max (and the rank it is on), the largest imbalance. */
struct kv_tregion_sum {
    int routine, location;   /* location -1: the routine */
    int ranks;               /* ranks that report it */
    int threads;             /* the most threads that ran it on a rank */
    uint64_t count;
    bool extrap, est;
    double min, mean, max, imbal;
    int max_rank;
};

/* Every such region, the one with the largest mean time first (*n of
 * them; free the array). */
struct kv_tregion_sum *kv_tregions_over_ranks(const struct kv_run *run,
                                              size_t *n);

/* The summary's Threads part: nothing when no rank ran several threads;
 * `top` regions at most (0: all). */
void kv_summary_threads(FILE *f, const struct kv_stats *st, int top);

/* kmview ranks --threads: the threads of every rank (its Threads block;
 * a rank without one is its single thread 0) clustered by complete
 * linkage over their net, MPI, outside and overhead times (L1 distance in
 * shares of the mean rank total), cut at `cut` or into `groups` groups
 * (as `how` says: exactly, or by cells beyond how->max_exact, scale.h);
 * prints the groups and the threads of small groups, and writes
 * thread_groups.csv into csv_dir unless it is NULL.  0, or -1 (error
 * printed). */
int kv_thread_groups(FILE *f, const struct kv_stats *st, double cut,
                     size_t groups, const struct kv_cluster_opts *how,
                     struct kv_out *o, const char *csv_dir);

#endif
