/*
 * export.h — every figure of a run as CSV files and as one JSON document,
 * in the schema doc/kmview-export.md fixes.
 */
#ifndef KV_EXPORT_H
#define KV_EXPORT_H

#include "kmview/write/out.h"
#include "kmview/figures/stats.h"

/* Open and write the CSV files in directory `dir` (created if needed)
 * through `o`; the caller commits.  -1 on error. */
int kv_export_csv(struct kv_out *o, const char *dir, const struct kv_stats *st);
/* Write the JSON document to `path` ("-": standard output) through `o`. */
int kv_export_json(struct kv_out *o, const char *path, const struct kv_stats *st);

#endif
