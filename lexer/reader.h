/*
 * reader.h — fixed-form and free-form source files into statements.
 *
 * The reader owns every rule of source layout.  Fixed form (fixed.c):
 * comment lines (C, c, *, ! in column 1, D debug lines, blank lines),
 * labels in columns 1-5, continuation in column 6, the statement field
 * ending at the line length (columns 73-80 are sequence numbers), tab
 * formats.  Free form (freeform.c): labels at the start of a statement,
 * `&` continuations, the line length (132).  Both: `!` comments outside
 * character constants, `;` separated statements, character and Hollerith
 * constants spanning continuation lines, INCLUDE lines (resolved, so the
 * parser sees the declarations they hold; read in the form of the file
 * that includes them) and preprocessor lines (cpp.h: only the lines of
 * the #if branches the preprocessor keeps are read, #include files are
 * read like INCLUDE files); in a preprocessor's output its line markers
 * (# N "file") say which file and line each line is.  Its product
 * is the list of statements: label, text, and where every piece of that
 * text came from, so that diagnostics and insertions point at the user's
 * real lines — the same list whatever the form, so that nothing
 * downstream needs to know it.  It never interprets the text beyond what
 * layout requires.
 */
#ifndef KM_READER_H
#define KM_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "lexer/cpp.h"
#include "support/buf.h"
#include "support/diag.h"

/* The source form of a file and of everything it includes. */
enum km_form { KM_FORM_FIXED, KM_FORM_FREE };

struct km_reader_opts {
    enum km_form form;
    int line_length;          /* last column of the statement field; 0: none */
    bool d_lines_are_code;    /* treat D in column 1 as a blank (-fd-lines-as-code) */
    const char **include_dirs;
    int ninclude_dirs;
    /* Searched after include_dirs (the compiler's own directories, which
     * cost a question to the compiler): asked for when an INCLUDE file is
     * in none of them, NULL for none. */
    const char *const *(*late_include_dirs)(void *ctx, int *n);
    void *late_ctx;
    bool preprocessed;        /* the text is the preprocessor's output: its
                                 line markers (# N "file") say where each
                                 line came from (km_read_source sets it
                                 for a file that holds a marker) */
};

/* One source file: the file being instrumented (index 0) or an include. */
struct km_file {
    char *path;               /* as opened */
    char *text;               /* whole contents, NUL-terminated */
    size_t size;
    int nlines;
    int *line_start;          /* offset of physical line n at line_start[n-1] */
    int include_stmt;         /* the INCLUDE statement that read it; -1 for 0 */
    unsigned long long dev, ino;  /* its identity, to catch INCLUDE cycles */
    /* A preprocessed file: where physical line n came from (NULL: from
     * itself, line n). */
    int *orig_line;           /* [n - 1]: the line there */
    int *orig_name;           /* [n - 1]: index in orig_names */
    char **orig_names;
    int norig_names;
};

/* A piece of statement text and where it came from. */
struct km_seg {
    int line;                 /* physical line, 1-based, in the statement's file */
    int col;                  /* column of the piece's first character */
    int field_col;            /* column where that line's statement field
                                 starts: 7, or after a tab in columns 1-6;
                                 1 in free form */
    int raw;                  /* offset in km_source.raw */
    int len;
};

enum km_stmt_flag {
    KM_SF_SHARES_LINE = 1,    /* another statement shares a line (';') */
    KM_SF_INCLUDE = 2,        /* an INCLUDE line */
    KM_SF_TAB_FORM = 4,       /* first line in tab format */
    KM_SF_CONDITIONAL = 8,    /* an OpenMP conditional line (!$ in columns
                                 1-2): code only to a compiler with OpenMP,
                                 so never edited */
    KM_SF_CPP_INCLUDE = 16    /* an #include line (with KM_SF_INCLUDE) */
};

struct km_stmt {
    int file;                 /* index into km_source.files */
    int anchor;               /* the statement of file 0 that stands for this
                                 one (itself, or the INCLUDE that read it) */
    int label;                /* 0: none */
    int label_col;            /* column of the label's first digit */
    int first_line, last_line;/* physical lines spanned in `file` */
    int raw, raw_len;         /* text, in km_source.raw */
    int seg, nseg;            /* pieces, in km_source.segs */
    int flags;                /* km_stmt_flag bits */
    /* Filled by the classifier (classify.h). */
    int kind;                 /* enum km_skind */
    int tok, tok_len;         /* token text, in km_source.tok */
    int sub_kind;             /* logical IF: kind of the embedded statement */
    int sub_tok;              /* logical IF: its offset in km_source.tok */
    int cname_len;            /* a construct name before a ':' at the
                                 start of the token text, or 0 */
    int cpp_if;               /* the line of the innermost #if it begins
                                 in (read without the preprocessor: another
                                 branch may be the one compiled), or 0 */
};

struct km_source {
    struct km_reader_opts opts;
    struct km_diag *diag;
    struct km_file *files;
    int nfiles, filecap;
    size_t text_read;         /* bytes of every file read, includes too */
    struct km_buf raw;        /* every statement's text, one after another */
    struct km_seg *segs;
    int nsegs, segcap;
    struct km_stmt *stmts;
    int nstmts, stmtcap;
    struct km_buf tok;        /* classifier output, statements joined by \n */
    int *seps;                /* offsets in tok of the blanks the classifier
                                 put between adjacent keywords, ascending */
    int nseps, sepcap;
    struct km_macros macros;  /* what #define lines made (cpp.h) */
};

/* Read `path` and everything it includes into `src`.  Returns false, with
 * diagnostics, if the file cannot be read or its layout is malformed. */
bool km_read_source(struct km_source *src, const char *path,
                    const struct km_reader_opts *opts, struct km_diag *diag);
/* The same for a file's text already in memory (`size` bytes, which need
 * not end with a NUL; copied), named `path`: what a fuzzer feeds. */
bool km_read_source_text(struct km_source *src, const char *path,
                         const char *text, size_t size,
                         const struct km_reader_opts *opts,
                         struct km_diag *diag);
void km_source_free(struct km_source *src);

/* Where raw text offset `raw` of statement `s` came from. */
void km_raw_position(const struct km_source *src, const struct km_stmt *s,
                     int raw, int *line, int *col);

/* If the H or h at offset h of a statement's text `raw` ends the count of
 * a Hollerith constant (nH...), return n; otherwise 0.  The reader and the
 * classifier must agree on this, so it is decided here only. */
int km_hollerith_count(const char *raw, int h);

/* The form gfortran reads a file named `path` in, from its extension
 * (.f .for .ftn .fpp and upper case: fixed; .f90 .f95 .f03 .f08 and upper
 * case: free).  Returns false for any other name. */
bool km_form_from_name(const char *path, enum km_form *form);

/* Does gfortran preprocess a file of this name (.F .F90 .fpp ...)? */
bool km_preprocessed_name(const char *path);

/* The line length a form has unless told otherwise: 72 or 132. */
int km_default_line_length(enum km_form form);

/* The line a user knows physical line n of file f by (and its file's
 * name in *name, if name is not NULL): the line itself, or in a
 * preprocessed file the line the preprocessor took it from. */
int km_user_line(const struct km_source *src, int f, int n,
                 const char **name);

/* The name of the file the user wrote: in a preprocessed source, the
 * one its line markers name first (the file the preprocessor read; not
 * <built-in> and the like), else file 0's path. */
const char *km_source_name(const struct km_source *src);

/* The same for a file's text: the name in the line markers it begins
 * with (gfortran -E: # 1 "x.F90"; flang -E: #line "x.F90" 1), malloc'd,
 * or NULL if it begins with none. */
char *km_marked_origin(const char *text, size_t size);

/* Is physical line n of a preprocessed file f a line marker? */
bool km_is_line_marker(const struct km_file *f, int n);

/* Send the diagnostics of a preprocessed source's file 0 back to the
 * user's files and lines. */
void km_map_diagnostics(struct km_source *src, struct km_diag *diag);

/* The statement's file name, for diagnostics. */
const char *km_stmt_path(const struct km_source *src, const struct km_stmt *s);

#endif
