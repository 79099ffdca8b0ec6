/*
 * report.h — the HTML report of one run (report.c); its frame is
 * write/html.h's.
 */
#ifndef KV_REPORT_H
#define KV_REPORT_H

#include <stdio.h>

#include "kmview/views/ranks.h"
#include "kmview/figures/stats.h"

struct kv_trace_set;
/* Write the report of one run; `groups` (may be NULL) orders the heat
 * map's ranks by their clustering; `traces` (may be NULL) adds the
 * Trace view; `plain` > 0, the plain build's time of the run (--plain),
 * sets what measuring cost beside libkm's figure.  0, or -1 when a trace
 * could not be read (printed). */
int kv_html_report(FILE *f, const struct kv_stats *st,
                   const struct kv_rank_groups *groups,
                   struct kv_trace_set *traces, double plain);

#endif
