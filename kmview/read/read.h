/*
 * read.h — KM_output files into a struct kv_run.
 */
#ifndef KV_READ_H
#define KV_READ_H

#include <stdint.h>

#include "kmview/read/model.h"

/* Bounds on what kmview reads, so that an endless or huge input (a device,
 * a pipe, a wrong file) ends in an error instead of reading forever.  A
 * real KM_output line is short (statement texts are one source line), so
 * 1 MiB is far beyond any; the header line must come first, within the
 * first few kilobytes. */
#define KV_MAX_LINE ((size_t)1 << 20)
#define KV_MAX_FIRST ((size_t)4096)
#define KV_DEFAULT_MAX_SIZE ((uint64_t)16 << 30)

/* Read `path` into `run` (which may already hold other files of the same
 * run: files of one rank each are merged), reading at most `max_size`
 * bytes.  On a malformed, truncated or too large file, prints one
 * `path:line:column: error: text` line to standard error and returns -1;
 * `run` must then be freed, not used. */
int kv_read_file(struct kv_run *run, const char *path, uint64_t max_size);

/* Read every file, put the ranks in order, and bring a version 1 run into
 * the version 2 shape (v1.h).  -1 on the first error. */
int kv_read_files(struct kv_run *run, const char *const *paths, int n,
                  uint64_t max_size);

/* "16 GiB", "1 MiB", "1000 bytes": a size for messages. */
const char *kv_size_text(char buf[32], uint64_t bytes);

#endif
