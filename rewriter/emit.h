/*
 * emit.h — the layout of the lines the rewriter writes, in either source
 * form, and the writing of inserted statements, wrapped at the line
 * length.
 *
 * Every line the rewriter writes follows a `struct km_layout`: this is the
 * one place that knows columns and continuation marks.  Fixed form: label
 * in columns 1-5, continuation mark in column 6, text from column 7 to 72.
 * Free form: label before the text, text from column 1 to 132, a continued
 * line ending with `&` and its continuation beginning with `&`.  The copy
 * pass and the emitter ask the layout; neither tests the form itself.  A
 * statement is broken outside character constants wherever possible; a
 * constant too long for any line is broken inside, the way the compiler
 * joins it back (fixed form: exactly at the last column; free form: `&`
 * at the end of the line and `&` where it resumes).
 */
#ifndef KM_EMIT_H
#define KM_EMIT_H

#include <stdbool.h>

#include "lexer/reader.h"
#include "support/buf.h"

/* How one source form lays out a line. */
struct km_layout {
    int field_col;            /* where statement text may begin: 7 or 1 */
    int width;                /* the last column of the lines kmrun writes
                                 (72, 132), unless the source's is less */
    int label_end;            /* labels are right-aligned to end at this
                                 column (5); 0: just before the text */
    char comment;             /* begins a comment line: 'C' or '!' */
    const char *cont_begin;   /* begins a continuation line ("     &") */
    const char *cont_end;     /* ends a continued line ("" or "&") */
    bool cont_indented;       /* inserted code's continuation lines: the
                                 mark just before the indented text, not
                                 cont_begin */
    bool blanks_significant;  /* a blank at a line break must be kept */
    bool indented_comments;   /* a comment line's `!` need not be in
                                 column 1 (a !KM_ line may be indented) */
};

/* The layout of a source form. */
const struct km_layout *km_layout_of(enum km_form form);

struct km_emitter {
    struct km_buf *out;
    const char *eol;      /* "\n", or "\r\n" to match the source */
    int width;            /* last column of a line; 0: no limit */
    const struct km_layout *lay;
};

/* Write one statement: `label` (0: none), the text from column `indent`
 * (at least the layout's field_col), continued as needed. */
void km_emit_stmt(struct km_emitter *e, int label, int indent,
                  const char *text);

/* Append to `b` a Fortran character expression for `text`: quoted pieces
 * short enough to fit any line, joined with //, ending with //CHAR(0). */
void km_fortran_cstring(struct km_buf *b, const char *text);

#endif
