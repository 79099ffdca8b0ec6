/*
 * stats.h — the figures kmview derives from a run: every rank's values laid
 * out densely (routine x rank, location x rank), and per figure, routine
 * and location the minimum, mean and maximum over ranks.
 *
 * A rank whose section lacks a routine or location counts 0 for it (it
 * never ran it); a rank whose results were lost is left out of every
 * figure.  Shares are of the mean total time over ranks.
 *
 * Estimates: a statistic over ranks contains an estimate when any rank's
 * figure does; the estimated fraction of a routine's or location's
 * elapsed time over ranks is sum(elapsed x Est(%) / 100) / sum(elapsed),
 * NaN when the file has no Est(%) (version 1).
 */
#ifndef KV_STATS_H
#define KV_STATS_H

#include "kmview/read/model.h"

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
    unsigned char *rest;     /* [routine * n + p]: the cell's est mask */
    double *rpct;            /* [routine * n + p]: its Est(%); NaN unknown */
    unsigned *r_est;         /* [routine]: est mask over ranks */
    double *r_frac;          /* [routine]: estimated fraction of elapsed */
    bool *lest;              /* [location * n + p]: elapsed had a ~ */
    double *lpct;            /* [location * n + p]: Est(%); NaN unknown */
    bool *l_est;             /* [location]: over ranks */
    double *l_frac;          /* [location]: estimated fraction of elapsed */
    struct kv_stat fig[KV_NFIGS];
    bool fig_est[KV_NFIGS];  /* some rank's figure had a ~ */
    struct kv_stat *rs[KV_NMETRICS]; /* [routine] */
    struct kv_stat *ls[KV_NMETRICS]; /* [location]; NULL unless KV_LOC_METRIC_OK */
    double total;            /* mean total time over ranks */
    double net_sum;          /* mean over ranks of the sum of routine net times */
    bool net_sum_est;        /* some routine's net time had a ~ */
    double net_frac;         /* estimated fraction of the routines' net time
                                (the Total rows' Est(%)); NaN unknown */
    /* where the time goes (means over ranks): MPI after start-up, MPI
     * start-up, I/O, and computation = total - the three; *_est: contains
     * an estimate */
    double mpi, startup, io, comp;
    bool comp_est;
    bool any_est;            /* some figure of the run contains an estimate */
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
