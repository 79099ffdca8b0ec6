/*
 * modules.h — the type a name is declared with, where the declaration may
 * be in a module: this file's, another file's of the same kmrun, or one an
 * earlier compile read (its index file, kmrun/interfaces.h).
 *
 * The rewriter needs it for one question: is the unit of a formatted READ
 * or WRITE an integer (an external unit, which INT() may take) or a
 * character variable (an internal file, which INT() would not compile)?
 * A module's specification is kept as lines of token text (lexer/reader.h:
 * keywords lower case, names upper case): its type declarations outside
 * derived types and interface bodies, its USE, IMPLICIT and PROCEDURE
 * statements, a line "procedure::F" per module procedure or generic name
 * F, and a line "dimension::A,B" of its arrays.  The same lines
 * go into index files, so a module read by an earlier compile answers the
 * same way.
 *
 * Whatever cannot be known (a module nobody read, a USE'd name a module
 * takes from one nobody read, a module with IMPLICIT rules of its own)
 * answers KM_NT_UNKNOWN: the caller must then not guess.  Modules of the
 * standard and of MPI and OpenMP are known by the names they may hold.
 */
#ifndef KM_MODULES_H
#define KM_MODULES_H

#include "parser/program.h"

enum km_name_type { KM_NT_UNKNOWN, KM_NT_INTEGER, KM_NT_CHARACTER };

/* A module's specification, as above. */
struct km_module {
    char *name;           /* upper case */
    char **lines;
    int nlines;
};

/* Record the specification of every module p declares (p->modules). */
void km_collect_modules(struct km_program *p);

/* Add a module p does not hold yet; takes `name` and the `lines`. */
void km_add_module(struct km_program *p, char *name, char **lines,
                   int nlines);

/* Add a copy of every module of `from` that p does not hold yet. */
void km_adopt_modules(struct km_program *p, const struct km_program *from);

/* The modules p's units USE, directly or through a module p holds, that
 * p holds none of and that are not the standard's, MPI's or OpenMP's:
 * their names (upper case, owned by the caller) into *names; how many. */
int km_missing_modules(const struct km_program *p, char ***names);

/* The type name has in unit x (declared there, in a host, or in a module
 * they USE; else by the default implicit rules); *array: declared with
 * dimensions (else NAME(...) may be a function's call). */
enum km_name_type km_declared_type(const struct km_program *p, int x,
                                   const char *name, bool *array);

void km_modules_free(struct km_program *p);

#endif
