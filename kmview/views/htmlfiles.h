/*
 * htmlfiles.h — the Files view's data in the HTML report (htmlfiles.c).
 */
#ifndef KV_HTMLFILES_H
#define KV_HTMLFILES_H

#include <stdio.h>

#include "kmview/figures/stats.h"

/* The member "files": null when no rank has a Files (or MPI-IO) block,
 * else one row per file and interface over the ranks, each with the
 * ranks that spent the most I/O time on it. */
void kv_html_files(FILE *f, const struct kv_stats *st);

#endif
