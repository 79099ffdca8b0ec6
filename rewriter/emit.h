/*
 * emit.h — write fixed-form statements, wrapped at the line length.
 *
 * Every line the rewriter writes goes through here, so this is the one
 * place that knows columns: label in 1-5, continuation mark in 6, text from
 * 7 to the line length.  A statement is broken outside character constants
 * wherever possible; a constant too long for any line is broken exactly at
 * the last column, which is how the compiler joins it back.
 */
#ifndef KM_EMIT_H
#define KM_EMIT_H

#include "support/buf.h"

struct km_emitter {
    struct km_buf *out;
    const char *eol;      /* "\n", or "\r\n" to match the source */
    int width;            /* last column of a line (72); 0: no limit */
};

/* Write one statement: `label` (0: none) in columns 1-5, the text from
 * column `indent` (at least 7), continued as needed. */
void km_emit_stmt(struct km_emitter *e, int label, int indent,
                  const char *text);

/* Append to `b` a Fortran character expression for `text`: quoted pieces
 * short enough to fit any line, joined with //, ending with //CHAR(0). */
void km_fortran_cstring(struct km_buf *b, const char *text);

#endif
