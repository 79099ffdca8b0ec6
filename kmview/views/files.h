/*
 * files.h — what the measured I/O statements did to each file (the Files
 * blocks of format 5): over the ranks for the terminal summary, per rank
 * for the CSV and JSON exports.
 */
#ifndef KV_FILES_H
#define KV_FILES_H

#include <stdio.h>

#include "kmview/read/model.h"
#include "kmview/figures/stats.h"

/* One file (and interface) over the ranks of a run. */
struct kv_file_sum {
    const char *name;
    int ranks;
    struct kv_file sum;      /* name unused; bytes' kind unused */
    unsigned kinds[2];       /* bit k: some rank's bytes read ([0]) or
                                written were of enum kv_bytes_kind k */
};

/* Every file of the run over its ranks, in kv_file_sum_order (Fortran
 * rows first, then MPI-IO, each by name); *n of them.  Free it. */
struct kv_file_sum *kv_files_over_ranks(const struct kv_run *run, size_t *n);
int kv_file_sum_order(const void *a, const void *b);
/* Bytes summed over figures of the kinds in `kinds` (bits of enum
 * kv_bytes_kind): exact only when all were; ">=" when some were a lower
 * bound or not known (the known ones summed), "~" when some were
 * estimates; "-" when none was known (as the HTML report's Files view). */
const char *kv_file_bytes_text(char buf[40], uint64_t bytes, unsigned kinds);

/* The files with the most I/O time over all ranks, `top` of them (0:
 * all): metadata and data operations apart, bytes, and how many ranks
 * used each; nothing when no rank has a Files block. */
void kv_summary_files(FILE *f, const struct kv_stats *st, int top);

/* rank_files.csv: one row per rank and file. */
void kv_csv_rank_files(FILE *f, const void *ctx);

/* A rank's ",\"files\":[...]" JSON member. */
void kv_json_rank_files(FILE *f, const struct kv_rank *r);

#endif
