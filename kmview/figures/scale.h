/*
 * scale.h — complete linkage of many points: exactly the nearest-neighbour
 * chain's result (cluster.h) whenever the distinct points are few enough
 * for its distance matrix, and beyond that a clustering of cells whose
 * groups are proven equal to the exact method's when a certificate holds.
 * See scale.c for what is computed and why it is the same.
 */
#ifndef KV_SCALE_H
#define KV_SCALE_H

#include <stdbool.h>
#include <stddef.h>

#include "kmview/figures/cluster.h"

/* n points of dim coordinates, row-major; the distance between two is
 * (float)(sum over f of |a[f] - b[f]|, in order of f, / scale), 0 when
 * scale <= 0: what kmview ranks and ranks --threads use. */
struct kv_points {
    size_t n, dim;
    const double *x;
    double scale;
};

/* Distinct points clustered exactly at most by default (the matrix takes
 * 4 bytes per pair: 16384 points, 512 MiB). */
#define KV_EXACT_MAX 16384

/* How to cluster: always exactly (the whole matrix), or exactly up to
 * max_exact distinct points and by cells beyond. */
struct kv_cluster_opts {
    bool exact;
    size_t max_exact;
};

enum kv_linkage_method {
    KV_LINK_EXACT,           /* the distance matrix of every point */
    KV_LINK_DISTINCT,        /* the matrix of the distinct points: the same */
    KV_LINK_CELLS,           /* cells of nearby points, then their linkage */
};

struct kv_cell;

struct kv_linkage {
    enum kv_linkage_method method;
    const struct kv_points *pt;
    size_t distinct;         /* distinct points (0: not counted) */
    struct kv_merge *merges; /* n - 1, as kv_complete_linkage numbers them */
    /* KV_LINK_CELLS */
    size_t ncells;
    double radius;           /* the cells' radius, as a distance */
    int *cell;               /* cell of each point */
    struct kv_cell *cells;
    size_t *members;         /* points by cell, increasing within a cell */
    float *upper, *lower;    /* bounds between cells, condensed, as float */
    double *box;             /* the cells' boxes, 2 * dim values each */
    bool certified;          /* the last cut's groups are the exact ones */
};

/* Cluster `pt` (kept by pointer until kv_linkage_free).  exact: always
 * the matrix of every point; else the distinct points when at most
 * max_exact, else cells of radius cut / 4 (cut: the height the groups
 * will be cut at, a hint). */
void kv_linkage_build(struct kv_linkage *lk, const struct kv_points *pt,
                      bool exact, size_t max_exact, double cut);
void kv_linkage_free(struct kv_linkage *lk);

/* Groups: kv_cut_height at h when k == 0, else kv_cut_count into k.
 * Sets lk->certified (always true but with cells). */
size_t kv_linkage_cut(struct kv_linkage *lk, double h, size_t k, int *label);

/* The largest distance (sum / scale in double, unrounded to float) between
 * a point labelled a and a point labelled b: exact, pruned by the cells. */
double kv_linkage_farthest(const struct kv_linkage *lk, const int *label,
                           int a, int b);

/* The diameter of group g (the largest distance, as float, between two of
 * its points: the height that formed it), exact unless *bound is set: a
 * group of cells too large to compare pair by pair gets an upper bound. */
double kv_linkage_diameter(const struct kv_linkage *lk, const int *label,
                           int g, size_t size, bool *bound);

/* One line saying what was clustered and how, or "" for the exact ways. */
void kv_linkage_describe(char *buf, size_t size, const struct kv_linkage *lk,
                         const char *what);

#endif
