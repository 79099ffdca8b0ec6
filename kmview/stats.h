/*
 * stats.h — the figures kmview derives from a run: every rank's values laid
 * out densely (routine x rank, location x rank), and per figure, routine
 * and location the minimum, mean and maximum over ranks.
 *
 * A rank whose section lacks a routine or location counts 0 for it (it
 * never ran it); a rank whose results were lost is left out of every
 * figure.  Shares are of the mean total time over ranks.
 */
#ifndef KV_STATS_H
#define KV_STATS_H

#include "kmview/model.h"

enum kv_metric { KV_M_ELAPSED, KV_M_NET, KV_M_COUNTS, KV_M_MPI, KV_M_IO,
                 KV_NMETRICS };
/* Locations have elapsed time and counts only. */
#define KV_LOC_METRIC_OK(m) ((m) == KV_M_ELAPSED || (m) == KV_M_COUNTS)

extern const char *const kv_metric_key[KV_NMETRICS];   /* "elapsed", ... */

struct kv_stat {
    double min, mean, max, sum;
    int min_rank, max_rank;  /* rank numbers (the lowest on ties); -1 if none */
};

/* max / mean, NaN when the mean is 0. */
double kv_max_over_mean(const struct kv_stat *s);

struct kv_stats {
    const struct kv_run *run;
    size_t n;                /* live ranks: the columns */
    int *rank;               /* rank number of column p */
    const struct kv_rank **sec; /* section of column p */
    size_t nr, nl;           /* routines, locations */
    double *rv[KV_NMETRICS]; /* [routine * n + p] */
    double *lv[KV_NMETRICS]; /* [location * n + p]; NULL unless KV_LOC_METRIC_OK */
    bool *r_extrap, *l_extrap; /* some rank's count was extrapolated */
    struct kv_stat fig[KV_NFIGS];
    struct kv_stat *rs[KV_NMETRICS]; /* [routine] */
    struct kv_stat *ls[KV_NMETRICS]; /* [location]; NULL unless KV_LOC_METRIC_OK */
    double total;            /* mean total time over ranks */
    double net_sum;          /* mean over ranks of the sum of routine net times */
};

void kv_stats_build(struct kv_stats *st, const struct kv_run *run);
void kv_stats_free(struct kv_stats *st);

/* value / st->total, 0 when the total is 0. */
double kv_share(const struct kv_stats *st, double value);

/* Routine indices ordered by the mean of `metric`, largest first (ties in
 * table order).  Caller frees. */
int *kv_routines_by(const struct kv_stats *st, enum kv_metric metric);

/* The statistic of n values v[0..n-1], column p being rank rank[p]. */
void kv_stat_of(struct kv_stat *s, const double *v, size_t n, const int *rank);

#endif
