/*
 * htmlpaths.h — the Paths view's data in the HTML report (htmlpaths.c).
 */
#ifndef KV_HTMLPATHS_H
#define KV_HTMLPATHS_H

#include <stdbool.h>
#include <stdio.h>

#include "kmview/figures/stats.h"

/* The member ",\"paths\"": null when no rank has a Paths block, else
 * every thread number's tree merged over the ranks (means) and, when
 * `per_rank` and they fit the page's budget, each rank's own trees. */
void kv_html_paths(FILE *f, const struct kv_stats *st, bool per_rank);

#endif
