/*
 * program.h — what the parser learns about a source file.
 *
 * The rewriter needs the structure of each program unit, not an expression
 * tree: where the unit begins and ends, where its specification part ends
 * and its executable part begins, its entry points, every DO loop with its
 * terminal and depth, every CALL with its target, every RETURN, STOP and
 * END, every label and every reference to one.  Everything is indexed by
 * statement number (km_source.stmts); names are upper case.  Internal
 * procedures (after a CONTAINS) are units of their own, listed after their
 * host, whose statements lie between the host's `end` and `last`.
 */
#ifndef KM_PROGRAM_H
#define KM_PROGRAM_H

#include <stdbool.h>

#include "lexer/reader.h"

enum km_unit_kind {
    KM_U_PROGRAM = 1,
    KM_U_SUBROUTINE,
    KM_U_FUNCTION,
    KM_U_BLOCKDATA,
    KM_U_MODULE,          /* MODULE: declarations, then module procedures */
    KM_U_SUBMODULE
};

/* Prefixes of a SUBROUTINE or FUNCTION statement. */
enum km_unit_prefix {
    KM_P_RECURSIVE = 1,
    KM_P_PURE = 2,        /* PURE or ELEMENTAL: cannot call a timer */
    KM_P_IMPURE = 4,
    KM_P_MODULE = 8       /* a separate module procedure */
};

/* How a label is referred to. */
enum km_ref_kind {
    KM_REF_JUMP = 1,      /* GOTO, arithmetic IF, END=/ERR=, *10 */
    KM_REF_FORMAT,        /* a FORMAT label in an I/O statement */
    KM_REF_DO,            /* the terminal of a labeled DO */
    KM_REF_ASSIGN         /* ASSIGN 10 TO I: may be a jump or a format */
};

struct km_label_ref {
    int stmt;
    int label;
    int kind;             /* enum km_ref_kind */
    int tok;              /* offset of the label's token in km_source.tok */
};

/* The three forms of GO TO. */
enum km_goto_form {
    KM_GOTO_PLAIN = 1,    /* GO TO 10 */
    KM_GOTO_COMPUTED,     /* GO TO (10, 20), K */
    KM_GOTO_ASSIGNED      /* GO TO K or GO TO K (10, 20) */
};

/* Per statement. */
struct km_sinfo {
    int kind;             /* enum km_skind, with statement functions told */
    int action;           /* logical IF: the kind of its statement */
    int unit;             /* the unit it belongs to, or -1 */
    bool executable;      /* of the statement itself (a logical IF is) */
    char *name;           /* CALL target, ENTRY or unit name; else NULL */
    int name_tok;         /* its offset in km_source.tok */
    int action_tok;       /* logical IF: offset of its statement in tok */
    int cond_end_tok;     /* logical IF: offset just past the ')' */
    int do_label;         /* labeled DO: the terminal's label */
    int do_end;           /* DO: its last statement (terminal or END DO) */
    int do_depth;         /* DO: 1 for an outermost loop */
    int do_parent;        /* innermost DO containing this statement, or -1 */
    int ends_dos;         /* how many DO loops end at this statement */
    int goto_form;        /* GO TO, or a logical IF's: enum km_goto_form */
    bool concurrent;      /* DO CONCURRENT: nothing inside may call libkm */
    bool in_concurrent;   /* inside a DO CONCURRENT, FORALL or WHERE */
    bool in_critical;     /* inside a CRITICAL construct: no jump out */
    int exit_target;      /* EXIT or CYCLE with a construct name: the
                             construct's first statement; else -1 */
};

struct km_unit {
    int kind;             /* enum km_unit_kind */
    char *name;           /* "MAIN" for a main program without PROGRAM */
    char *qualified;      /* as measured: NAME, MODULE::NAME for a module
                             procedure, HOST/NAME for an internal one */
    bool named;           /* a PROGRAM/SUBROUTINE/... statement gave it */
    int header;           /* its header statement, or -1 */
    int first;            /* first statement */
    int end;              /* where its execution ends: its END statement,
                             or its CONTAINS if it has internal procedures */
    int last;             /* its END statement (after the internal
                             procedures, if any) */
    int host;             /* a module or internal procedure's host unit
                             (module, submodule or procedure), or -1 */
    int contains;         /* its CONTAINS statement, or -1 */
    int spec_end;         /* first statement function or executable
                             statement (or END): declarations go before */
    int first_exec;       /* first executable statement, or END */
    bool blanket_save;    /* a SAVE with no list */
    bool recursive;
    bool pure;            /* PURE or ELEMENTAL, or inside one */
    bool inherits;        /* MODULE PROCEDURE NAME: its kind and purity are
                             its interface's, which this file may not hold */
    bool uses;            /* has a USE statement (or its host has) */
    int *entries;         /* ENTRY statements */
    int nentries;
    int max_label;        /* largest label defined or referred to */
    char **arrays;        /* names declared with dimensions */
    int narrays, arraycap;
    char **scalars;       /* names declared without dimensions */
    int nscalars, scalarcap;
    char **calls;         /* names this unit CALLs */
    int ncalls, callcap;
};

/* A separate module procedure's interface (MODULE FUNCTION ... in an
 * interface block): what a MODULE PROCEDURE body elsewhere inherits. */
struct km_separate {
    char *qualified;      /* MODULE::NAME, as its body is measured */
    int kind;             /* KM_U_SUBROUTINE or KM_U_FUNCTION */
    bool pure;
    int unit;             /* the (sub)module that declares it */
};

struct km_module;

struct km_program {
    struct km_source *src;
    struct km_sinfo *info;        /* one per statement */
    struct km_unit *units;
    int nunits, unitcap;
    struct km_label_ref *refs;
    int nrefs, refcap;
    struct km_separate *separates;
    int nseparates, separatecap;
    struct km_module *modules;    /* module specifications (modules.h) */
    int nmodules, modulecap;
};

/* Give every MODULE PROCEDURE body of p whose interface lies in `from`
 * (another file, or p itself) that interface's kind and purity. */
void km_inherit_interfaces(struct km_program *p,
                           const struct km_program *from);

void km_program_free(struct km_program *p);

/* Write a readable account of what was found (kmrun --dump). */
struct km_buf;
void km_dump_program(const struct km_program *p, struct km_buf *out);

#endif
