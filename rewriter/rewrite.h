/*
 * rewrite.h — a parsed source file plus settings into KM_<file>.f.
 *
 * The rewriter plans edits (insert before or after a statement, replace a
 * logical IF's statement, replace a statement) and then makes one copy
 * pass over the original lines, so every line it does not touch comes out
 * byte for byte as it went in.  It owns label hygiene (new labels never
 * collide with the unit's), keeping every jump correct, and the names it
 * inserts (all begin with INNER_PREFIX).  It never re-lexes source text:
 * positions come from the reader, structure from the parser.
 */
#ifndef KM_REWRITE_H
#define KM_REWRITE_H

#include <stdbool.h>

#include "control/control.h"
#include "parser/program.h"
#include "support/buf.h"
#include "support/diag.h"

struct km_rewrite_opts {
    const char *file_name;    /* the name regions are registered under */
    int line_length;          /* of the source, for re-emitted user text */
    char **defined;           /* upper-case names of the routines and ENTRY
                                 points of every file kmrun was given: a
                                 CALL MPI_xxx to one of them is no MPI call */
    int ndefined;
    bool *mpi_hooks;          /* if not NULL, set when MPI_INIT or
                                 MPI_FINALIZE got their calls */
    const char *line_markers; /* if not NULL, the source's path as the
                                 compiler is given it: write line markers
                                 (# N "path") so that the compiler, the
                                 debugger and runtime errors name the
                                 user's lines, inserted code the line of
                                 the statement it belongs to */
};

/* Write the instrumented source to `out`.  Returns false, with
 * diagnostics, if the file cannot be instrumented correctly. */
bool km_rewrite(const struct km_program *prog, const struct km_settings *set,
                const struct km_rewrite_opts *opts, struct km_buf *out,
                struct km_diag *diag);

/* With an INNER_PREFIX other than KM_, the instrumented files call
 * <prefix>IN and so on: write the Fortran routines that forward those
 * calls to libkm (those of MPI_INIT and MPI_FINALIZE only `with_mpi`: they
 * would bring MPI into a serial program). */
void km_rewrite_prefix_shim(const char *prefix, bool with_mpi,
                            struct km_buf *out);

/* The Fortran file of libkm's MPI calls (KM_libkm_mpi.f): compiled by the
 * user's MPI compiler, it keeps every MPI ABI out of libkm. */
void km_rewrite_mpi_glue(struct km_buf *out);

#endif
