/*
 * summary.h — the terminal summary of one run.
 */
#ifndef KV_SUMMARY_H
#define KV_SUMMARY_H

#include <stdio.h>

#include "kmview/figures/stats.h"

/* Print the summary; `top` routines by net time (0: all of them). */
void kv_summary(FILE *f, const struct kv_stats *st, int top);

/* "4 ranks", "3 of 4 ranks (1 lost)", ... for headings. */
void kv_describe_ranks(char *buf, size_t size, const struct kv_stats *st);

#endif
