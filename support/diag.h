/*
 * diag.h — diagnostics in the `file:line:column: error: text` form.
 *
 * Every module reports through one km_diag value: messages go to standard
 * error as they happen and are kept so kmrun can also write them to
 * KM_message.txt.  Nothing here decides what is fatal; callers count errors.
 */
#ifndef KM_DIAG_H
#define KM_DIAG_H

#include "support/buf.h"

struct km_diag {
    struct km_buf log;   /* every message, one per line */
    int errors;
    int warnings;
    int quiet;           /* do not echo to stderr (tests of the modules) */
};

void km_error(struct km_diag *d, const char *file, int line, int col,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void km_warning(struct km_diag *d, const char *file, int line, int col,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void km_note(struct km_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void km_diag_free(struct km_diag *d);

#endif
