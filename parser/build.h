/*
 * build.h — what the grammar's actions call to build a km_program.
 *
 * The grammar is flat: it parses one statement at a time and knows nothing
 * of units, loops or labels.  The builder keeps that state: the open unit,
 * the stack of open DO loops and IF blocks, the names declared as arrays
 * (a statement function looks like an assignment to an array element until
 * one knows which names are arrays), and the arguments of the statement
 * being parsed, so that I/O specifiers and alternate returns can be read
 * once the statement is complete.
 */
#ifndef KM_BUILD_H
#define KM_BUILD_H

#include <stdbool.h>

#include "lexer/scanner.h"
#include "parser/names.h"
#include "parser/program.h"
#include "support/diag.h"

/* A token as the grammar sees it. */
struct km_tokv {
    int code;
    int stmt;
    int off;              /* in km_source.tok */
    int len;
};

/* Where a grammar symbol lies: offsets in km_source.tok. */
struct km_loc {
    int stmt;
    int first, last;
};

/* An expression: only whether it is a single token, and which. */
struct km_ev {
    int lone;             /* token code if the expression is one token, else 0 */
    struct km_tokv tok;   /* its first token */
};

enum km_arg_kind {
    KM_ARG_EXPR = 1,      /* an expression */
    KM_ARG_KEYWORD,       /* NAME = expr (I/O specifier, implied-DO, PARAMETER) */
    KM_ARG_KEYSTAR,       /* NAME = * */
    KM_ARG_STAR,          /* * (unit, format, assumed size) */
    KM_ARG_ALTRET,        /* *10 or &10 */
    KM_ARG_RANGE          /* a:b and its partial forms */
};

struct km_arg {
    int kind;
    struct km_tokv key;   /* KEYWORD/KEYSTAR: the name; ALTRET: the label */
    struct km_ev val;
    int next;             /* next argument of the same list, or -1 */
};

/* A list of arguments: a chain through km_builder.args. */
struct km_argl {
    int head, tail;
    int count;
    bool all_names;       /* every argument is a lone name */
    bool has_range;
};

/* The variable an assignment defines: its name, the first parenthesised
 * list after it, and how many parts (subscripts, components) follow. */
struct km_lhs {
    struct km_tokv name;
    struct km_argl subs;
    int parts;
    bool subscripted;     /* the first part is a parenthesised list */
};

/* An open construct of any kind, for EXIT and CYCLE with a name. */
struct km_open_construct {
    int stmt;
    char *name;           /* NULL if unnamed */
};

/* A name declared by a type or attribute statement, pending until the
 * statement is complete: only then is it known whether it is an array. */
struct km_entity {
    struct km_tokv name;
    bool dims;
};

struct km_open_do {
    int stmt;
    int label;            /* 0 for DO ... END DO */
};

struct km_builder {
    struct km_program *prog;
    struct km_source *src;
    struct km_diag *diag;
    struct km_scanner *scanner;
    int unit;             /* the open unit, or -1 */
    struct km_open_do *dos;
    int ndos, docap;
    int *open_labels;     /* per label, how many open DO loops end there */
    int *ifs;             /* open block IFs */
    int nifs, ifcap;
    struct km_arg *args;  /* arguments of the statement being parsed */
    int nargs, argcap;
    struct km_entity *ents;   /* names declared by the statement */
    int nents, entcap;
    int attr_split;       /* entities before it were F90 attributes */
    int interface;        /* depth of INTERFACE blocks: their SUBROUTINE and
                             END statements open and close nothing */
    int typedef_depth;    /* inside TYPE ... END TYPE: its CONTAINS and
                             PROCEDURE statements belong to the type */
    struct km_open_construct *cons;   /* DO, IF, SELECT ... open, innermost
                                         last */
    int ncons, conscap;
    int concurrent;       /* open DO CONCURRENT, FORALL and WHERE */
    int critical;         /* open CRITICAL constructs */
    struct km_names scalars;  /* names declared without dimensions */
    bool closing_unit;    /* the statement being parsed ends the unit */
    struct km_names arrays;   /* each unit's arrays (km_unit.arrays) */
    struct km_names calls;    /* each unit's CALL targets (km_unit.calls) */
    int last_stmt;        /* the last statement parsed, for "END missing" */
};

/* Arguments. */
int km_b_arg(struct km_builder *B, int kind, struct km_tokv key,
             struct km_ev val);
struct km_argl km_b_list1(struct km_builder *B, int arg);
struct km_argl km_b_list_add(struct km_builder *B, struct km_argl l, int arg);
struct km_argl km_b_list0(void);

/* Statements: each records its kind and what the rewriter needs. */
void km_b_kind(struct km_builder *B, int stmt, int kind);
struct km_lhs km_b_lhs(struct km_tokv name);
struct km_lhs km_b_lhs_part(struct km_lhs l, struct km_argl list,
                            bool paren);
int km_b_assignment(struct km_builder *B, int stmt, struct km_lhs lhs);
void km_b_logical_if(struct km_builder *B, int stmt, int action,
                     int action_tok, int cond_end_tok);
void km_b_label_ref(struct km_builder *B, struct km_tokv label, int kind);
void km_b_goto(struct km_builder *B, int stmt, int form);
int km_b_label_value(const struct km_builder *B, struct km_tokv label);
void km_b_call(struct km_builder *B, int stmt, struct km_tokv name,
               struct km_argl args);
void km_b_io(struct km_builder *B, int stmt, int kind, struct km_argl ctl,
             struct km_ev fmt);
void km_b_do(struct km_builder *B, int stmt, int kind, int label);
/* DO with a label: the terminal's label is checked and referred to. */
void km_b_do_labeled(struct km_builder *B, int stmt, int kind,
                     struct km_tokv label);
void km_b_enddo(struct km_builder *B, int stmt);
void km_b_if_block(struct km_builder *B, int stmt, int kind);
void km_b_unit(struct km_builder *B, int stmt, int ukind, struct km_tokv name,
               bool named, int prefixes);
void km_b_submodule(struct km_builder *B, int stmt, struct km_tokv text);
void km_b_module_procedure(struct km_builder *B, int stmt,
                           struct km_tokv text);
void km_b_typedef(struct km_builder *B, int stmt, bool begin);
void km_b_use(struct km_builder *B, int stmt);
void km_b_name_construct(struct km_builder *B, int stmt, struct km_tokv name);
void km_b_exit(struct km_builder *B, int stmt, int kind, struct km_tokv name);
void km_b_end(struct km_builder *B, int stmt);
void km_b_contains(struct km_builder *B, int stmt);
void km_b_entry(struct km_builder *B, int stmt, struct km_tokv name);
void km_b_array(struct km_builder *B, struct km_tokv name);
void km_b_entity(struct km_builder *B, struct km_tokv name, bool dims);
void km_b_attributes_end(struct km_builder *B);
void km_b_declaration(struct km_builder *B, int stmt, bool f90);
void km_b_interface(struct km_builder *B, int stmt, bool begin);
void km_b_blanket_save(struct km_builder *B, int stmt);
void km_b_end_statement(struct km_builder *B, int stmt);
void km_b_bad_statement(struct km_builder *B, int stmt);

/* Diagnostics at a token offset of a statement. */
void km_b_error(struct km_builder *B, int stmt, int tok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
