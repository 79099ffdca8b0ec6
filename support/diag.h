/*
 * diag.h — diagnostics in the `file:line:column: error: text` form.
 *
 * Every module reports through one km_diag value.  Messages are kept (kmrun
 * also writes them to KM_message.txt) and go to standard error when the
 * caller flushes them, in source order: the front end finds problems in
 * several passes, but a user reads a file from the top.  A message
 * repeated word for word (an include file read by several INCLUDE lines
 * repeats its problems) is shown once.  Nothing here decides what is
 * fatal; callers count errors.
 */
#ifndef KM_DIAG_H
#define KM_DIAG_H

#include "support/buf.h"

struct km_diag {
    struct km_buf log;   /* every message, one per line */
    /* If set, every position goes through it first (a preprocessed file's
     * lines back to the user's files and lines). */
    void (*map)(void *ctx, const char **file, int *line);
    void *map_ctx;
    size_t flushed;      /* how much of log went to stderr already */
    int errors;
    int warnings;
    int quiet;           /* never echo to stderr */
};

void km_error(struct km_diag *d, const char *file, int line, int col,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void km_warning(struct km_diag *d, const char *file, int line, int col,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void km_note(struct km_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sort the messages not yet flushed by file, line and column, and print
 * them to standard error. */
void km_diag_flush(struct km_diag *d);
void km_diag_free(struct km_diag *d);

#endif
