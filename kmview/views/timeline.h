/*
 * timeline.h — the ranks' Timeline blocks (KM_output 5) side by side:
 * one grid of ranks x time slots, the phases of the run (slot ranges that
 * behave alike over the ranks), the ranks whose timeline stands apart
 * (complete linkage over rank x slot vectors, as iScopes does), and the
 * moment each of them departs from the others.
 */
#ifndef KV_TIMELINE_H
#define KV_TIMELINE_H

#include <stdbool.h>
#include <stdio.h>

#include "kmview/views/ranks.h"
#include "kmview/figures/stats.h"

/* Slots the analyses and the terminal work on: more are merged in pairs. */
#define KV_TL_GRID_SLOTS 64

/* Every live rank's timeline on one grid: the widest slot width of the
 * ranks (a narrower rank's slots merged in pairs until it agrees; widths
 * are powers of two times one width), as many slots as the longest rank
 * ran, merged further in pairs while more than max_slots. */
struct kv_tl_grid {
    size_t n;                /* columns, as the stats' (live ranks) */
    int slots;
    double width;            /* seconds per slot */
    bool origin_mpi;         /* slot 0 starts where MPI_INIT returned */
    float *v;                /* [(p * slots + s) * KV_TL_NCAT + c] seconds */
    bool *has;               /* [p]: the rank has a Timeline block */
    size_t nhave;            /* ranks with one */
    unsigned est;            /* categories with a ~ on some rank */
};

/* 0, or -1 when no rank has a timeline (g empty). */
int kv_tl_grid_build(struct kv_tl_grid *g, const struct kv_stats *st,
                     int max_slots);
void kv_tl_grid_free(struct kv_tl_grid *g);

/* Phases and odd ranks. */
struct kv_tl_analysis {
    struct kv_tl_grid grid;
    int nphases;
    int *phase_first, *phase_last;   /* slot ranges, in order */
    int *phase_kind;         /* slots alike share a kind (0, 1, ...) */
    int *slot_kind;          /* [slot] */
    double phase_cut;
    /* the ranks clustered over their slots (x: [p][s * 3 + c], the
     * computation, MPI and I/O of slot s) */
    struct kv_rank_groups groups;
    int *departs;            /* [p] outlier ranks: the first slot where it
                                differs most from the main group; else -1 */
    int *worst;              /* [p] ... and the slot it differs most in */
};

/* Analyse the run: phases cut at `phase_cut` (L1 distance between the
 * slots' shares of computation, MPI, I/O and other time, 0..2; 0: the
 * default 0.5), ranks cut at `cut` (a fraction of the mean total time,
 * as kmview ranks).  -1 when no rank has a timeline. */
int kv_tl_analyse(struct kv_tl_analysis *a, const struct kv_stats *st,
                  double cut, double phase_cut,
                  const struct kv_cluster_opts *how);
void kv_tl_analysis_free(struct kv_tl_analysis *a);

/* The terminal summary's part: a heat strip per rank (up to 64 ranks),
 * else one per distinct strip with the ranks that share it. */
void kv_summary_timeline(FILE *f, const struct kv_stats *st);
/* kmview ranks' part: the phases, the groups over time slots, the outlier
 * ranks and when they depart. */
void kv_ranks_timeline(FILE *f, const struct kv_tl_analysis *a,
                       const struct kv_stats *st);

/* timeline_phases.csv and timeline_ranks.csv in `dir` (kmview ranks
 * --csv). */
struct kv_out;
int kv_ranks_timeline_csv(struct kv_out *o, const char *dir,
                          const struct kv_tl_analysis *a,
                          const struct kv_stats *st);

/* rank_timeline.csv and rank_timeline_routines.csv rows (with headers). */
void kv_csv_rank_timeline(FILE *f, const void *stats);
void kv_csv_rank_timeline_routines(FILE *f, const void *stats);
/* The JSON member ,"timeline":{...} of a rank (null without a block). */
void kv_json_rank_timeline(FILE *f, const struct kv_run *run,
                           const struct kv_rank *r);

#endif
