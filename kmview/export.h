/*
 * export.h — every figure of a run as CSV files and as one JSON document,
 * in the schema doc/kmview-export.md fixes.
 */
#ifndef KV_EXPORT_H
#define KV_EXPORT_H

#include "kmview/out.h"
#include "kmview/stats.h"

/* Open and write the CSV files in directory `dir` (created if needed)
 * through `o`; the caller commits.  -1 on error. */
int kv_export_csv(struct kv_out *o, const char *dir, const struct kv_stats *st);
/* Write the JSON document to `path` ("-": standard output) through `o`. */
int kv_export_json(struct kv_out *o, const char *path, const struct kv_stats *st);

/* Open dir/name through `o`. */
FILE *kv_out_open_in(struct kv_out *o, const char *dir, const char *name);

/* A set of CSV files in one directory, each written by its function from
 * the same context. */
struct kv_csv_file {
    const char *name;
    void (*write)(FILE *f, const void *ctx);
};
/* Create `dir` if needed and write each file through `o`.  -1 on error. */
int kv_csv_files(struct kv_out *o, const char *dir,
                 const struct kv_csv_file *files, size_t n, const void *ctx);

#endif
