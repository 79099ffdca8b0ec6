/*
 * interfaces.h — what a MODULE PROCEDURE body inherits from an interface
 * in a file of an earlier compile.
 *
 * A separate module procedure's body (MODULE PROCEDURE NAME) is PURE, and
 * a function, exactly when its interface in the module says so; a PURE
 * body cannot call a timer.  When files are instrumented one compile at a
 * time (kmfc), the module's file was read by an earlier kmrun: that kmrun
 * wrote the interfaces down in an index file beside the compiler's module
 * files (MODULE.kmi, or MODULE@SUBMODULE.kmi for a submodule's own), and
 * this one looks them up where the compiler looks for modules.
 *
 * The same files tell a later compile what a module declares, for the
 * type of a unit in a READ or WRITE (parser/modules.h): a module's index
 * file is written even if it declares no interface.
 *
 * An index file: the line "kmtool-interfaces 2", then a module's "spec
 * LINE" lines (version 2 on), then one line per interface: "MODULE::NAME
 * subroutine|function [pure]".
 */
#ifndef KM_INTERFACES_H
#define KM_INTERFACES_H

#include "parser/program.h"
#include "support/buf.h"

/* The index file of (sub)module `unit` of p: its name (not a path) in
 * *name and its text in *text.  Returns false if the unit needs none (a
 * submodule that declares no interface, or not a module). */
bool km_interface_index(const struct km_program *p, int unit, char **name,
                        struct km_buf *text);

/* Give every MODULE PROCEDURE body of p still without its interface what
 * an index file in one of the directories says. */
void km_find_interfaces(struct km_program *p, const char *const *dirs,
                        int ndirs);

/* Is there a file at `path` that is not one of kmtool's index files (a
 * user's own file that happens to bear the name)?  kmrun never writes
 * over one. */
bool km_is_foreign_index(const char *path);

/* Add to p the specification of every module its units USE that p holds
 * none of, from the index file in one of the directories that has one;
 * then of those they USE, and so on. */
void km_find_modules(struct km_program *p, const char *const *dirs,
                     int ndirs);

#endif
