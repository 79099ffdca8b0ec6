/*
 * assemble.h — what the fixed-form reader (fixed.c) and the free-form
 * reader (freeform.c) share, inside lexer/ only.
 *
 * reader.c owns the files (reading them, their lines, INCLUDE) and the
 * statements being assembled: a form's reader decides what each physical
 * line holds and hands the pieces of statement text here, so that both
 * forms produce the same km_stmt list, with the same positions, and
 * nothing downstream knows which form the source was in.
 */
#ifndef KM_ASSEMBLE_H
#define KM_ASSEMBLE_H

#include "lexer/reader.h"

/* No compiler's source form needs more; a longer line is not source. */
#define KM_MAX_LINE 100000
/* Offsets are ints: not all text read for one source file with its
 * includes may come near 2 GiB. */
#define KM_MAX_TOTAL_TEXT ((size_t)1 << 30)

/* The statement being assembled in one file. */
struct asm_state {
    struct km_source *src;
    int file;
    int depth;            /* INCLUDE nesting of the file */
    int cur;              /* open statement, -1 if none */
    char quote;           /* open character constant's delimiter, or 0 */
    int holl;             /* Hollerith characters still to come */
    int open_line, open_col;  /* where the open constant began */
};

static inline bool km_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

/* The physical line n (1-based) of file f, without its line end (\n or
 * \r\n). */
const char *km_line_text(const struct km_file *f, int n, int *len);

/* Open statement number src->nstmts at physical line `line`. */
int km_open_statement(struct asm_state *st, int line, int label,
                      int label_col, int flags);
/* Append text p[0..len) of physical line `line`, which begins at column
 * `col`, to the open statement. */
void km_add_text(struct asm_state *st, int line, int col, int field_col,
                 const char *p, int len);
/* Close the open statement: diagnose constants left open, drop it if it
 * holds no text (warning of a label it had), and read the file it names
 * if it is an INCLUDE line.  Returns false after an error. */
bool km_close_statement(struct asm_state *st);

/* Read the file an #include line (physical line `line`) names, as an
 * INCLUDE line would be; no statement may be open.  Takes `name`. */
bool km_cpp_include(struct asm_state *st, int line, char *name);

/* Track character and Hollerith constants over p[i], a character of the
 * open statement's text at column `col` (the statement's text up to p[i]
 * already appended, for Hollerith counts).  Returns true if p[i] is
 * inside a constant (or opens or closes one); *skip is set to 1 when
 * p[i + 1] is the second of a doubled delimiter. */
bool km_track_constant(struct asm_state *st, const char *p, int i, int len,
                       int line, int col, int *skip);

/* Is statement text too much already?  Diagnoses it at `line`. */
bool km_text_overflows(struct asm_state *st, int line);

/* Diagnose a line longer than KM_MAX_LINE; returns true if it is. */
bool km_line_too_long(struct km_source *src, int file, int n, int len);

/* The readers of the two forms, called by reader.c for each file
 * (the file being instrumented, then every include, in the same form). */
bool km_read_fixed(struct km_source *src, int file, int depth);
bool km_read_free(struct km_source *src, int file, int depth);

#endif
