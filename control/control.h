/*
 * control.h — KM_control.dat into one settings value.
 *
 * Nothing else reads the control file.  The settings are filled once and
 * then only read: the rewriter asks which levels apply in a routine and
 * whether a name is ignored or a print-out routine.
 */
#ifndef KM_CONTROL_H
#define KM_CONTROL_H

#include <stdbool.h>

#include "support/buf.h"
#include "support/diag.h"

struct km_levels {
    int routine;          /* ROUTINE_MEASURED_LEVEL 0-2 */
    int doloop;           /* DOLOOP_MEASURED_LEVEL >= 0 */
    int call;             /* CALL_MEASURED_LEVEL 0-2 */
    int mpi;              /* MPI_MEASURED_LEVEL 0-2 */
    int io;               /* IO_MEASURED_LEVEL 0-2 */
    int omp;              /* OMP_MEASURED_LEVEL 0-1 */
};

/* An IF_ROUTINE ... END_IF block: levels that override the global ones. */
struct km_if_routine {
    char **routines;      /* upper case */
    int nroutines;
    struct km_levels levels;
    unsigned set;         /* which levels the block sets (KM_LV_* bits) */
};

enum { KM_LV_ROUTINE = 1, KM_LV_DOLOOP = 2, KM_LV_CALL = 4, KM_LV_MPI = 8,
       KM_LV_IO = 16, KM_LV_OMP = 32 };

struct km_settings {
    struct km_levels levels;
    struct km_if_routine *blocks;
    int nblocks;
    char **ignored;       /* upper case; always holds MPI_WTIME, MPI_WTICK */
    int nignored;
    char **print_out;
    int nprint_out;
    char **redundant;     /* REDUNDANT_ROUTINES: every rank repeats them */
    int nredundant;
    long threshold;       /* TIME_PREDICTION_MODE_NUMBER */
    int trace;            /* TRACE_FILE_NUMBER */
    long trace_limit;     /* TRACE_SIZE_LIMIT: MiB per process */
    int output_unit;      /* OUTPUT_FILE_NUMBER */
    char prefix[16];      /* INNER_PREFIX */
    int kmpi_for_sta, tabnum, tabcode;
};

/* The largest control file read.  The installed one is 4 KiB; 16 MiB
 * holds lists of half a million routine names, more than any program
 * has, and bounds what a wrong file (/dev/zero) can cost. */
#define KM_CONTROL_MAX_SIZE ((size_t)16 << 20)
#define KM_CONTROL_MAX_SIZE_TEXT "16 MiB"

void km_settings_default(struct km_settings *s);
/* Read the control file `path` into b, as km_control_read does: false,
 * with an error naming it, for anything but a regular file of at most
 * KM_CONTROL_MAX_SIZE bytes, or with the line and column of its first
 * NUL byte. */
bool km_control_load(const char *path, struct km_buf *b, struct km_diag *d);
/* Read `path` over the defaults.  Returns false, with a diagnostic naming
 * the line, for an unknown key, a bad value, a missing '=', a duplicate
 * key or an unterminated IF_ROUTINE block. */
bool km_control_read(const char *path, struct km_settings *s,
                     struct km_diag *d);
/* The same, from text in memory (tests). */
bool km_control_parse(const char *path, const char *text,
                      struct km_settings *s, struct km_diag *d);
/* The levels in force in `routine` (upper case). */
struct km_levels km_levels_for(const struct km_settings *s,
                               const char *routine);
bool km_is_ignored(const struct km_settings *s, const char *name);
bool km_is_print_out(const struct km_settings *s, const char *name);
bool km_is_redundant(const struct km_settings *s, const char *name);
void km_settings_free(struct km_settings *s);

#endif
