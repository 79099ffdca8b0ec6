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
 * An index file: the line "kmtool-interfaces 1", then one line per
 * interface: "MODULE::NAME subroutine|function [pure]".
 */
#ifndef KM_INTERFACES_H
#define KM_INTERFACES_H

#include "parser/program.h"
#include "support/buf.h"

/* The index file of the interfaces (sub)module `unit` of p declares: its
 * name (not a path) in *name and its text in *text.  Returns false if the
 * unit declares none. */
bool km_interface_index(const struct km_program *p, int unit, char **name,
                        struct km_buf *text);

/* Give every MODULE PROCEDURE body of p still without its interface what
 * an index file in one of the directories says. */
void km_find_interfaces(struct km_program *p, const char *const *dirs,
                        int ndirs);

#endif
