/*
 * read.h — KM_output files into a struct kv_run.
 */
#ifndef KV_READ_H
#define KV_READ_H

#include "kmview/model.h"

/* Read `path` into `run` (which may already hold other files of the same
 * run: files of one rank each are merged).  On a malformed or truncated
 * file, prints one `path:line:column: error: text` line to standard error
 * and returns -1; `run` must then be freed, not used. */
int kv_read_file(struct kv_run *run, const char *path);

/* Read every file, then put the ranks in order.  -1 on the first error. */
int kv_read_files(struct kv_run *run, const char *const *paths, int n);

#endif
