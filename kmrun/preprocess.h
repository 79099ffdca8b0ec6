/*
 * preprocess.h — running the compiler's preprocessor on a source file
 * (kmrun --cpp, -D, -U): kmrun then instruments what the compiler would
 * compile, macros expanded and only the branches the macros choose.
 */
#ifndef KM_PREPROCESS_H
#define KM_PREPROCESS_H

#include <stdbool.h>

#include "support/buf.h"
#include "support/diag.h"

struct km_cpp_opts {
    const char *command;      /* the preprocessor, words split at blanks */
    const char **args;        /* -D, -U and -I options, in the given order */
    int nargs;
};

/* The preprocessor command: --cpp-command, else $KM_CPP, else
 * gfortran's ("gfortran -E -cpp"). */
const char *km_cpp_command(const char *given);

/* Preprocess `path` into `out` (with line markers).  Returns false, with
 * a diagnostic, if the preprocessor cannot be run or fails; what it says
 * on standard error reaches the user as it is. */
bool km_preprocess(const struct km_cpp_opts *o, const char *path,
                   struct km_buf *out, struct km_diag *d);

/* Run argv[0] (searched in PATH) with argv, its standard output read into
 * `out` (at most `max` bytes: *whole false if it said more); `quiet`:
 * standard input and error on /dev/null.  Returns its wait status, or -1
 * (errno set) if it could not be run. */
int km_run_output(char *const argv[], bool quiet, size_t max,
                  struct km_buf *out, bool *whole);

#endif
