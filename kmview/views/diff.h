/*
 * diff.h — `kmview diff A B`: relative profiling of two runs.
 */
#ifndef KV_DIFF_H
#define KV_DIFF_H

#include <stdio.h>

#include "kmview/write/out.h"
#include "kmview/figures/stats.h"

enum kv_diff_status { KV_BOTH, KV_ONLY_A, KV_ONLY_B };
enum kv_diff_order { KV_BY_SCORE, KV_BY_DIFF, KV_BY_RATIO, KV_BY_A, KV_BY_B,
                     KV_BY_NAME };

/* One region (a routine, or a location of a routine) of either run. */
struct kv_diff_row {
    enum kv_diff_status status;
    const char *routine;
    int kind;                /* -1 for the routine itself, else enum kv_kind */
    int line;                /* 0 when unknown */
    int occurrence;
    const char *text;        /* the statement; NULL for a routine */
    double t[2];             /* mean time per rank: net for a routine */
    bool t_est[2];           /* it contains an estimate */
    double calls[2];         /* mean count per rank */
    double sent[2], received[2];  /* a location's bytes, means per rank
                                     (NaN: a run before format 4, or a
                                     routine) */
    double per_call[2];      /* t / calls */
    double diff, ratio;      /* tB - tA, tB / tA */
    double score;            /* PARP order: (t_hi / T_slow) ln(t_hi / t_lo) */
    double efficiency;       /* NaN unless the rank counts differ */
    double sort_key, sort_tie; /* set by kv_diff_sort */
};

/* A file (and interface) of either run: its I/O time and bytes, means
 * per rank (over all the run's ranks). */
struct kv_diff_file {
    const char *name;
    bool mpiio;
    bool in[2];              /* some rank of run A ([0]) or B had it */
    double t[2];
    bool t_est[2];
    double read[2], written[2];
    unsigned read_kinds[2], written_kinds[2];   /* as kv_file_sum's */
};

struct kv_diff {
    const struct kv_stats *run[2];
    const char *name[2];
    struct kv_diff_row *rows;
    size_t nrows;
    /* the breakdown, means over ranks: MPI after start-up, MPI start-up
     * apart, computation = total - MPI - start-up - I/O */
    double total[2], mpi[2], startup[2], io[2], comp[2];
    bool total_est[2], mpi_est[2], startup_est[2], io_est[2], comp_est[2];
    double slow_total;       /* T of the slower run */
    double *bytes[2];        /* per location of each run: sent, received
                                (means per rank), NaN before format 4 */
    bool scaling;            /* the rank counts differ */
    struct kv_diff_file *files;   /* by the size of the time's change */
    size_t nfiles;
    /* call paths of thread 0 (KM_output 6), matched by the regions from
     * the root: rows whose `routine` is the path ("MAIN > SOLVE > DO
     * 12"), kind -1, t the mean inclusive time over the ranks with a
     * tree, as `kmview paths` has it (diffpaths.c) */
    bool have_paths[2];      /* run A ([0]) or B has trees of thread 0 */
    size_t paths_deeper[2];  /* its paths deeper than KV_PATHS_DEPTH levels,
                                not compared */
    struct kv_diff_row *paths;
    size_t npaths;
    char **path_names;       /* the rows' paths, owned */
};

void kv_diff_build(struct kv_diff *d, const struct kv_stats *a,
                   const struct kv_stats *b, const char *name_a,
                   const char *name_b);
void kv_diff_sort(struct kv_diff *d, enum kv_diff_order order);
void kv_diff_free(struct kv_diff *d);

/* "score", "diff", ... -> order; -1 if unknown. */
int kv_diff_order_parse(const char *s);

/* Text: `top` rows of the regions in both runs (0: all). */
void kv_diff_print(FILE *f, const struct kv_diff *d, int top);
/* regions.csv, breakdown.csv and files.csv in `dir`. */
int kv_diff_csv(struct kv_out *o, const char *dir, const struct kv_diff *d);
/* The same figures as one JSON document at `path` ("-": standard output). */
int kv_diff_json(struct kv_out *o, const char *path, const struct kv_diff *d);
/* The HTML view. */
void kv_diff_html(FILE *f, const struct kv_diff *d);

/* diffpaths.c: the paths of both runs, matched (d->paths; times, counts
 * and status set, the derived figures not); */
void kv_diff_paths_match(struct kv_diff *d);
void kv_diff_paths_free(struct kv_diff *d);
/* the text section (`top` rows per list, 0: all), */
void kv_diff_paths_print(FILE *f, const struct kv_diff *d, int top);
/* paths.csv's rows, */
void kv_diff_paths_csv(FILE *f, const void *d);
/* the JSON array (null when the runs are not both of format 6), */
void kv_diff_paths_json(FILE *f, const struct kv_diff *d);
/* and the HTML view's data (the top rows of each list, compact). */
void kv_diff_paths_html(FILE *f, const struct kv_diff *d);

#endif
