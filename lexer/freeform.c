/*
 * freeform.c — free-form layout (Fortran 90 and later, as gfortran reads
 * it): which lines are comments, where statements begin and end, and which
 * lines continue them.
 *
 * The rules (Fortran 2008, 3.3.2): a `!` outside a character constant
 * begins a comment; `;` ends a statement (an empty one between `;;` is
 * nothing); a label is 1-5 digits at the start of a statement, before a
 * blank; an `&` that is the last nonblank character of a line, before any
 * comment, continues the statement on the next line that is not a comment
 * or blank line, where an `&` as the first nonblank character marks where
 * the text resumes (without one the text resumes at column 1, except that
 * a character constant resumes at the first nonblank character, as
 * gfortran reads the missing `&`).  The standard's limit of 255
 * continuation lines is not enforced: gfortran compiles more (a warning
 * with -std=f2003 or later, nothing by default), so kmrun reads any
 * number, as in fixed form.
 * Characters past the line length (132) may only be blanks or a comment:
 * gfortran refuses anything else ("line truncated"), and so does the
 * reader.  Tabs are blanks and count as one column.  A `#` in column 1
 * begins a preprocessor line.  `!$omp` and `!$acc` lines are comments
 * here: directives are not the reader's business.  A `!$` conditional
 * compilation line (the sentinel, preceded only by blanks, followed by a
 * blank, or by `&` on a continuation line) is code to a compiler with
 * OpenMP, so it is read as code with its sentinel taken for blanks, and
 * marked never to be edited.
 *
 * Every piece of statement text goes to reader.c (assemble.h) with its
 * physical line and column, as the fixed-form reader's does, so nothing
 * downstream knows the form.  Must never interpret text beyond layout.
 */
#include "lexer/assemble.h"
#include "support/buf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABEL_DIGITS 5
#define LONE_AMP "a line holding only '&' (the standard forbids it: there " \
                 "is nothing to continue)"

/* The reading of one file. */
struct free_state {
    struct asm_state st;
    const char *path;
    bool continued;           /* the last statement line ended with `&` */
    int amp_line, amp_col;    /* where that `&` is */
    bool saw_comment;         /* the current line holds a `!` comment */
    int line_flags;           /* flags of statements the line begins */
    int cpp_if;               /* ... and the #if they begin in */
    bool ok;
};

/* What ends a piece of statement text on a line. */
enum piece_end { END_LINE, END_SEMI, END_AMP };

static int skip_blanks(const char *p, int i, int len)
{
    while (i < len && km_is_blank(p[i]))
        i++;
    return i;
}

/* Nothing but blanks, then the end of the line or a comment, from i on? */
static bool nothing_but_comment(const char *p, int i, int len)
{
    i = skip_blanks(p, i, len);
    return i == len || p[i] == '!';
}

static void error_at(struct free_state *fs, int line, int col,
                     const char *msg)
{
    km_error(fs->st.src->diag, fs->path, line, col, "%s", msg);
    fs->ok = false;
}

static void close_current(struct free_state *fs)
{
    if (!km_close_statement(&fs->st))
        fs->ok = false;
}

/* --- statement text ------------------------------------------------------------ */

/* An H after digits may end a Hollerith count (nHxxx): append the text up
 * to it, so the count's context is in the statement's text, and see. */
static void hollerith_at(struct free_state *fs, int n, const char *p,
                         int *piece, int i)
{
    struct asm_state *st = &fs->st;
    struct km_source *src = st->src;
    km_add_text(st, n, *piece + 1, 1, p + *piece, i - *piece);
    *piece = i;
    int start = src->stmts[st->cur].raw;
    int have = (int)src->raw.len - start;
    int count = have > 0 ? km_hollerith_count(src->raw.data + start, have)
                         : 0;
    if (count > 0) {
        st->holl = count;
        st->open_line = n;
        st->open_col = i + 1;
    }
}

/* Append p[from..len) of line n to the open statement, up to what ends
 * the piece: the end of the line or a comment (END_LINE), a `;`
 * (END_SEMI) or a continuing `&` (END_AMP), at *at.  Character and
 * Hollerith constants are tracked across pieces and lines: inside them
 * `!` and `;` are characters, and a continuing `&` is the line's last
 * nonblank character. */
static enum piece_end add_piece(struct free_state *fs, int n, const char *p,
                                int from, int len, int *at)
{
    struct asm_state *st = &fs->st;
    enum piece_end why = END_LINE;
    int piece = from;
    int end = len;
    for (int i = from; i < len; i++) {
        char c = p[i];
        if (st->holl > 0) {
            st->holl--;
        } else if (st->quote) {
            if (c == '&' && skip_blanks(p, i + 1, len) == len) {
                why = END_AMP;
                end = i;
                break;
            }
            if (c == st->quote && i + 1 < len && p[i + 1] == st->quote)
                i++;            /* a doubled delimiter */
            else if (c == st->quote)
                st->quote = 0;
        } else if (c == '\'' || c == '"') {
            st->quote = c;
            st->open_line = n;
            st->open_col = i + 1;
        } else if (c == '!') {
            fs->saw_comment = true;
            end = i;
            break;
        } else if (c == ';' || (c == '&' && nothing_but_comment(p, i + 1,
                                                                len))) {
            why = c == ';' ? END_SEMI : END_AMP;
            end = i;
            break;
        } else if ((c == 'H' || c == 'h') &&
                   (i == from || isdigit((unsigned char)p[i - 1]))) {
            hollerith_at(fs, n, p, &piece, i);
        }
    }
    *at = end;
    /* Blanks after the text outside constants mean nothing; drop them.
     * Before a continuing `&` inside a constant they are part of it. */
    if (!st->quote && st->holl == 0)
        while (end > piece && km_is_blank(p[end - 1]))
            end--;
    km_add_text(st, n, piece + 1, 1, p + piece, end - piece);
    return why;
}

/* --- statements and lines ---------------------------------------------------------- */

/* A statement label at p[b..]: up to 5 digits, then a blank (or nothing:
 * a label on an empty statement).  Returns the index after it (b if
 * there is none). */
static int read_label(struct free_state *fs, int n, const char *p, int b,
                      int len, int *label)
{
    int e = b;
    *label = 0;
    while (e < len && isdigit((unsigned char)p[e]))
        e++;
    if (e == b)
        return b;
    if (e - b > MAX_LABEL_DIGITS) {
        error_at(fs, n, b + 1, "a statement label has at most 5 digits");
        return e;
    }
    for (int k = b; k < e; k++)
        *label = *label * 10 + (p[k] - '0');
    if (*label == 0)
        error_at(fs, n, b + 1, "zero is not a valid statement label");
    if (e < len && !km_is_blank(p[e]) && p[e] != ';' && p[e] != '!')
        error_at(fs, n, e + 1, "a statement label must be followed by a "
                 "blank");
    return e;
}

/* Open a statement whose text (label first, maybe) begins at p[from..].
 * Returns where the text after the label begins. */
static int start_statement(struct free_state *fs, int n, const char *p,
                           int from, int len, int flags)
{
    int b = skip_blanks(p, from, len);
    int label;
    int text = read_label(fs, n, p, b, len, &label);
    int i = km_open_statement(&fs->st, n, label, label ? b + 1 : 0,
                              flags | fs->line_flags);
    fs->st.src->stmts[i].cpp_if = fs->cpp_if;
    return skip_blanks(p, text, len);
}

/* The pieces of line n from p[from..]: statements end at `;` and at the
 * end of the line, unless an `&` continues the last one. */
static void read_pieces(struct free_state *fs, int n, const char *p,
                        int from, int len)
{
    for (;;) {
        int at;
        enum piece_end e = add_piece(fs, n, p, from, len, &at);
        if (e == END_AMP) {
            fs->continued = true;
            fs->amp_line = n;
            fs->amp_col = at + 1;
            return;
        }
        if (e == END_LINE) {
            close_current(fs);
            return;
        }
        /* `;` ends this statement; the rest of the line begins another */
        fs->st.src->stmts[fs->st.cur].flags |= KM_SF_SHARES_LINE;
        close_current(fs);
        from = start_statement(fs, n, p, at + 1, len, KM_SF_SHARES_LINE);
    }
}

/* Where the text of continuation line n (first nonblank at b) resumes,
 * or -1 if the line holds nothing to resume. */
static int resume_at(struct free_state *fs, int n, const char *p, int b,
                     int len)
{
    if (p[b] == '&') {
        if (nothing_but_comment(p, b + 1, len)) {
            error_at(fs, n, b + 1, LONE_AMP);
            return -1;
        }
        return b + 1;
    }
    if (fs->st.quote) {
        /* gfortran resumes the constant at the first nonblank character */
        km_warning(fs->st.src->diag, fs->path, n, b + 1, "missing '&' "
                   "where a continued character constant resumes");
        return b;
    }
    return 0;
}

/* One physical line, `len` columns of it (the rest past the line length
 * is not read). */
static void read_line(struct free_state *fs, int n, const char *p, int len)
{
    int b = skip_blanks(p, 0, len);
    if (b == len || p[b] == '!') {
        /* a blank or comment line: one may sit between continued lines */
        fs->saw_comment = b < len;
        return;
    }
    if (fs->continued) {
        int from = resume_at(fs, n, p, b, len);
        if (from < 0)
            return;
        fs->continued = false;
        read_pieces(fs, n, p, from, len);
        return;
    }
    if (p[b] == '&') {
        error_at(fs, n, b + 1, nothing_but_comment(p, b + 1, len) ? LONE_AMP
                 : "continuation line with no statement to continue");
        return;
    }
    read_pieces(fs, n, p, start_statement(fs, n, p, b, len, 0), len);
}

/* Past the line length only blanks or a comment may follow: anything else
 * would be lost, and gfortran refuses it. */
static void check_truncation(struct free_state *fs, int n, const char *p,
                             int width, int len)
{
    if (fs->saw_comment || nothing_but_comment(p, width, len))
        return;
    char msg[160];
    snprintf(msg, sizeof msg, "text past column %d, the line length "
             "(gfortran refuses it; --line-length=N or none reads it)",
             width);
    error_at(fs, n, skip_blanks(p, width, len) + 1, msg);
}

/* The end of the file: a statement continued past it is an error. */
static void end_of_file(struct free_state *fs)
{
    if (fs->continued) {
        error_at(fs, fs->amp_line, fs->amp_col, "'&' continues the "
                 "statement past the end of the file");
        fs->st.quote = 0;   /* said once: not "unterminated" too */
    }
    close_current(fs);
}

/* An #include line: read like an INCLUDE line, unless it comes between
 * the lines of a continued statement. */
static void cpp_include(struct free_state *fs, int n, char *name)
{
    if (fs->continued) {
        km_warning(fs->st.src->diag, fs->path, n, 1, "an #include inside a "
                   "continued statement: what it declares is not read");
        free(name);
        return;
    }
    close_current(fs);
    if (!km_cpp_include(&fs->st, n, name))
        fs->ok = false;
}

/* An OpenMP conditional compilation line: `!$` after blanks only, then a
 * blank or the end of the line, or, on a line that continues a statement,
 * an `&` (`!$& b`: OpenMP allows the ampersand right after the sentinel
 * there).  Returns the sentinel's index, or -1. */
static int conditional_sentinel(const char *p, int len, bool continued)
{
    int b = skip_blanks(p, 0, len);
    if (b + 1 < len && p[b] == '!' && p[b + 1] == '$' &&
        (b + 2 == len || km_is_blank(p[b + 2]) ||
         (continued && p[b + 2] == '&')))
        return b;
    return -1;
}

bool km_read_free(struct km_source *src, int file, int depth)
{
    struct free_state fs = {{src, file, depth, -1, 0, 0, 0, 0},
                            src->files[file].path, false, 0, 0, false,
                            0, 0, true};
    char *copy = NULL;        /* a conditional line, its sentinel blanked */
    size_t copy_size = 0;
    int width = src->opts.line_length;
    struct km_cpp_file cpp;
    km_cpp_begin(&cpp, src, file);
    for (int n = 1; n <= src->files[file].nlines; n++) {
        int len;
        const char *p = km_line_text(&src->files[file], n, &len);
        if (km_line_too_long(src, file, n, len)) {
            fs.ok = false;
            continue;
        }
        char *include = NULL;
        enum km_cpp_what what = km_cpp_line(&cpp, n, p, len, &include);
        if (what == KM_CPP_INCLUDE) {
            cpp_include(&fs, n, include);
            continue;
        }
        if (what == KM_CPP_SKIP)
            continue;
        fs.saw_comment = false;
        fs.line_flags = 0;
        fs.cpp_if = km_cpp_innermost(&cpp);
        int sentinel = conditional_sentinel(p, len, fs.continued);
        if (sentinel >= 0) {
            if (copy_size < (size_t)len + 1) {
                copy_size = (size_t)len + 1;
                copy = km_xrealloc(copy, copy_size);
            }
            memcpy(copy, p, (size_t)len);
            copy[sentinel] = copy[sentinel + 1] = ' ';
            p = copy;
            fs.line_flags |= KM_SF_CONDITIONAL;
        }
        bool cut = width > 0 && len > width;
        read_line(&fs, n, p, cut ? width : len);
        if (cut)
            check_truncation(&fs, n, p, width, len);
        if (km_text_overflows(&fs.st, n)) {
            km_cpp_end(&cpp);
            free(copy);
            return false;
        }
    }
    free(copy);
    end_of_file(&fs);
    if (!km_cpp_end(&cpp))
        fs.ok = false;
    return fs.ok;
}
