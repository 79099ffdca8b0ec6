/*
 * cluster.h — agglomerative hierarchical clustering, complete linkage.
 *
 * Points are 0..n-1; merge k of the n-1 merges creates cluster n+k (the
 * numbering scipy and R use), merges are in order of height.
 */
#ifndef KV_CLUSTER_H
#define KV_CLUSTER_H

#include <stddef.h>

struct kv_merge {
    int a, b;                /* the two clusters joined, a < b */
    double height;           /* the complete-linkage distance between them */
    int size;                /* points in the new cluster */
};

/* A merge as the chain finds it: a point of each cluster (the lowest:
 * the cluster's slot), its height, and the order it was found in. */
struct kv_raw_merge {
    size_t a, b;
    double height;
    size_t order;
};

/* Index of d(i, j), i < j, in a condensed distance matrix of n points. */
size_t kv_condensed_index(size_t n, size_t i, size_t j);

/* Cluster n points whose pairwise distances `dist` holds (condensed,
 * n(n-1)/2 values; overwritten).  Writes n-1 merges to `out`.  O(n^2)
 * time (nearest-neighbour chain), no memory beyond O(n). */
void kv_complete_linkage(float *dist, size_t n, struct kv_merge *out);

/* The nearest-neighbour chain alone: the n-1 merges in the order found
 * (`raw`), and, when first_seen is not NULL, the order in which each
 * point first entered the chain (first_seen[i] = 0, 1, ...). */
void kv_chain_linkage(float *dist, size_t n, struct kv_raw_merge *raw,
                      size_t *first_seen);
/* Number n-1 raw merges (reordered) as clusters n, n+1, ... in order of
 * height, then of `order`. */
void kv_label_merges(struct kv_raw_merge *raw, size_t n, struct kv_merge *out);

/* Leaf order of the dendrogram (the earlier-merged, lower-numbered
 * subtree first), so that similar points sit side by side. */
void kv_dendrogram_order(const struct kv_merge *m, size_t n, int *order);

/* Flat clusters: label[i] for each point, after applying every merge of
 * height <= h (kv_cut_height) or the first n-k merges (kv_cut_count).
 * Labels are 0..groups-1 in order of each group's lowest point.  Returns
 * the number of groups. */
size_t kv_cut_height(const struct kv_merge *m, size_t n, double h, int *label);
size_t kv_cut_count(const struct kv_merge *m, size_t n, size_t k, int *label);

#endif
