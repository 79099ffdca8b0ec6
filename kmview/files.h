/*
 * files.h — what the measured I/O statements did to each file (the Files
 * blocks of format 5): over the ranks for the terminal summary, per rank
 * for the CSV and JSON exports.
 */
#ifndef KV_FILES_H
#define KV_FILES_H

#include <stdio.h>

#include "kmview/model.h"
#include "kmview/stats.h"

/* The files with the most I/O time over all ranks, `top` of them (0:
 * all): metadata and data operations apart, bytes, and how many ranks
 * used each; nothing when no rank has a Files block. */
void kv_summary_files(FILE *f, const struct kv_stats *st, int top);

/* rank_files.csv: one row per rank and file. */
void kv_csv_rank_files(FILE *f, const void *ctx);

/* A rank's ",\"files\":[...]" JSON member. */
void kv_json_rank_files(FILE *f, const struct kv_rank *r);

#endif
