/*
 * ranks.h — `kmview ranks`: which ranks behave alike, which are odd, and
 * why (hierarchical clustering of the ranks' per-routine profiles, or
 * with --paths their per-call-path profiles).
 */
#ifndef KV_RANKS_H
#define KV_RANKS_H

#include <stdbool.h>
#include <stdio.h>

#include "kmview/figures/cluster.h"
#include "kmview/figures/scale.h"
#include "kmview/figures/stats.h"

/* What a rank's profile is made of: per routine its computation (net
 * minus own I/O), its own MPI calls and its own I/O statements, and the
 * time outside routines, in uninstrumented routines and in MPI start-up. */
enum kv_feature_part { KV_P_COMPUTATION, KV_P_MPI, KV_P_IO, KV_P_OUTSIDE,
                       KV_P_CALLEES, KV_P_STARTUP, KV_P_PATH };

struct kv_feature {
    int routine;             /* -1 for the two whole-rank parts */
    enum kv_feature_part part;
    const char *path;        /* KV_P_PATH (ranks --paths): the call path,
                                "MAIN > SOLVE > DO 12", whose own time the
                                part is (owned by the groups) */
};

struct kv_rank_groups {
    size_t n;                /* ranks: the columns of the stats */
    double scale;            /* the mean total time the distances divide by */
    double cut;              /* groups are the clusters below this height */
    size_t nfeatures;
    struct kv_feature *features;
    double *x;               /* [column * nfeatures + feature], seconds */
    bool *xest;              /* the same cells: contains an estimate */
    struct kv_merge *merges; /* n - 1 */
    int *order;              /* dendrogram leaf order of the columns */
    int *group;              /* group of each column; 0 is the main group */
    size_t ngroups;
    size_t *group_size;
    double *diameter;        /* largest distance inside each group */
    double *to_main;         /* complete-linkage distance to the main group */
    bool *outlier_group;
    /* how the clustering was done (scale.h): with cells, the merges are
     * approximate, the groups exact when certified, and a large group's
     * diameter an upper bound */
    enum kv_linkage_method method;
    bool certified;
    bool *diameter_bound;
    char method_note[256];   /* "" for the exact ways */
    bool paths;              /* the features are call paths (--paths) */
};


/* Cluster the ranks of `st`; cut at height `cut`, or into `groups` groups
 * when groups > 0. */
void kv_rank_groups_build(struct kv_rank_groups *g, const struct kv_stats *st,
                          double cut, size_t groups,
                          const struct kv_cluster_opts *how);
/* The same over the ranks' call paths (thread 0's trees, KM_output 6):
 * each rank's own time on every path of any rank.  -1, with an error
 * printed, when the run has no Paths block. */
int kv_rank_groups_build_paths(struct kv_rank_groups *g,
                               const struct kv_stats *st, double cut,
                               size_t groups,
                               const struct kv_cluster_opts *how);
/* The clustering alone, of g->n points of g->nfeatures coordinates in
 * g->x (taken over), distances divided by g->scale: what
 * kv_rank_groups_build does once it has the profiles (the timeline
 * clusters ranks over their slots with it). */
void kv_rank_groups_cluster(struct kv_rank_groups *g, double cut,
                            size_t groups, const struct kv_cluster_opts *how);
void kv_rank_groups_free(struct kv_rank_groups *g);

/* The text report; `reasons` features are named per outlier group. */
void kv_ranks_print(FILE *f, const struct kv_rank_groups *g,
                    const struct kv_stats *st, int reasons);
/* ranks.csv, groups.csv, merges.csv and differences.csv in `dir`. */
struct kv_out;
int kv_ranks_csv(struct kv_out *o, const char *dir,
                 const struct kv_rank_groups *g, const struct kv_stats *st);

/* "ROUTINE computation", "time outside routines", ... */
void kv_feature_name(char *buf, size_t size, const struct kv_feature *ft,
                     const struct kv_stats *st);
/* Ranks of the columns in `group`, as "0-3,7"; cut after the last whole
 * member that fits `size`, then ",...". */
void kv_group_ranks(char *buf, size_t size, const struct kv_rank_groups *g,
                    const struct kv_stats *st, size_t group);

#endif
