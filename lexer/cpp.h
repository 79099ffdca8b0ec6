/*
 * cpp.h — preprocessor lines in a source file read without the
 * preprocessor (no -D, -U or --cpp given to kmrun).
 *
 * A file with `#if` lines compiles with the branches its compiler's
 * preprocessor keeps: with no macro given on the command line, those
 * whose conditions hold with the macros the files themselves #define.
 * The reader reads exactly those lines as code, so that the statements
 * it finds are the ones compiled; the other branches pass through to the
 * instrumented file untouched (and unedited: compiled with other macros,
 * they hold no timer calls, but nothing in them changes).  `#include`
 * lines are read like INCLUDE lines, for the declarations the file holds.
 * Directives never reach the statements.
 */
#ifndef KM_CPP_H
#define KM_CPP_H

#include <stdbool.h>

#include "support/buf.h"

struct km_source;

/* A macro #defined by a file read so far (shared by all of a source's
 * files, as the preprocessor's are). */
struct km_macro {
    char *name;
    char *value;
    bool function;            /* NAME(...): never expanded in #if here */
};

struct km_macros {
    struct km_macro *m;
    int n, cap;
};

void km_macros_free(struct km_macros *ms);

#define KM_CPP_MAX_NESTING 64

/* An #if being read. */
struct km_cpp_cond {
    bool enclosing_active;    /* every enclosing branch is kept */
    bool taken;               /* a branch of this #if was kept */
    bool active;              /* the current branch is kept */
    bool seen_else;
    int line;                 /* the #if's line */
};

/* One file's conditionals while it is read. */
struct km_cpp_file {
    struct km_source *src;
    int file;
    struct km_cpp_cond cond[KM_CPP_MAX_NESTING];
    int depth;
    struct km_buf dir;            /* a directive continued by '\' */
    int dir_line;
    bool in_comment;              /* inside a C comment begun on a line
                                     of its own */
    bool ok;
};

enum km_cpp_what {
    KM_CPP_CODE,              /* a line the compiler reads: read it */
    KM_CPP_SKIP,              /* a directive, or a line of a branch not kept */
    KM_CPP_INCLUDE            /* a kept #include: *name is the file's name */
};

void km_cpp_begin(struct km_cpp_file *c, struct km_source *src, int file);
/* What physical line n (p[0..len)) of the file is.  For KM_CPP_INCLUDE,
 * *name is set (the caller frees it). */
enum km_cpp_what km_cpp_line(struct km_cpp_file *c, int n, const char *p,
                             int len, char **name);
/* The line of the innermost #if open, or 0. */
int km_cpp_innermost(const struct km_cpp_file *c);

/* The end of the file: an #if left open is an error.  Returns false after
 * any error in the file's directives. */
bool km_cpp_end(struct km_cpp_file *c);

#endif
