/*
 * summary.h — the terminal summary of one run.
 */
#ifndef KV_SUMMARY_H
#define KV_SUMMARY_H

#include <stdio.h>

#include "kmview/figures/stats.h"

/* Print the summary; `top` routines by net time (0: all of them);
 * `plain` > 0: the plain build's time of the same run (--plain), set
 * beside what measuring cost. */
void kv_summary(FILE *f, const struct kv_stats *st, int top, double plain);

/* "4 ranks", "3 of 4 ranks (1 lost)", ... for headings. */
void kv_describe_ranks(char *buf, size_t size, const struct kv_stats *st);

#endif
