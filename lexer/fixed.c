/*
 * fixed.c — fixed-form layout: which physical lines are comments, initial
 * lines and continuation lines, and where their statement field is.
 *
 * Owns every fixed-form rule: comment lines (C, c, *, ! in column 1, D
 * debug lines, blank lines), labels in columns 1-5, continuation in column
 * 6, the statement field ending at the line length (columns 73-80 are
 * sequence numbers and never reach a statement), tab formats, `!`
 * comments outside constants, `;` between statements, and the blanks a
 * short line is padded with when a constant continues on the next line.
 * The statements themselves are assembled by reader.c (assemble.h).
 */
#include "lexer/assemble.h"
#include "support/buf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Append one line's statement field to the open statement, tracking
 * constants.  Returns the offset within `p` where a `;` ends the statement,
 * or -1.  `width` is the field width (0: unlimited) used for padding. */
static int add_field(struct asm_state *st, int line, int col0, int fcol,
                     const char *p, int len, int width, bool *padded)
{
    struct km_source *src = st->src;
    int start_raw = src->stmts[st->cur].raw;
    int i = 0;
    int piece = 0;        /* start of the piece not yet appended */
    int end = len;
    int semi = -1;
    *padded = false;
    while (i < len) {
        char c = p[i];
        if (st->holl > 0) {
            st->holl--;
            i++;
            continue;
        }
        if (st->quote) {
            if (c == st->quote) {
                if (i + 1 < len && p[i + 1] == st->quote)
                    i++;            /* doubled delimiter */
                else
                    st->quote = 0;
            }
            i++;
            continue;
        }
        if (c == '\'' || c == '"') {
            st->quote = c;
            st->open_line = line;
            st->open_col = col0 + i;
        } else if (c == '!') {
            end = i;
            break;
        } else if (c == ';') {
            end = i;
            semi = i;
            break;
        } else if ((c == 'H' || c == 'h') &&
                   (i == 0 || isdigit((unsigned char)p[i - 1]))) {
            /* A digit right before: nH may begin a Hollerith constant.
             * The count is already in raw text: append what we have. */
            km_add_text(st, line, col0 + piece, fcol, p + piece, i - piece);
            piece = i;
            int have = (int)src->raw.len - start_raw;
            int n = have > 0 ? km_hollerith_count(src->raw.data + start_raw,
                                                  have) : 0;
            if (n > 0) {
                st->holl = n;
                st->open_line = line;
                st->open_col = col0 + i;
            }
        }
        i++;
    }
    /* Trailing blanks outside constants mean nothing; drop them. */
    if (!st->quote && st->holl == 0 && semi < 0)
        while (end > piece && km_is_blank(p[end - 1]))
            end--;
    km_add_text(st, line, col0 + piece, fcol, p + piece, end - piece);
    if ((st->quote || st->holl > 0) && semi < 0 && width > 0 && len < width) {
        /* The compiler pads a short line with blanks up to the line length,
         * and a constant that continues on the next line includes them. */
        char blanks[256];
        memset(blanks, ' ', sizeof blanks);
        int pad = width - len;
        int done = 0;
        while (done < pad) {
            int n = pad - done > 256 ? 256 : pad - done;
            if (st->holl > 0) {
                if (n > st->holl)
                    n = st->holl;
                st->holl -= n;
            }
            km_add_text(st, line, col0 + len + done, fcol, blanks, n);
            done += n;
            if (st->holl == 0 && !st->quote)
                break;
        }
        *padded = true;
    }
    return semi;
}


/* --- lines ----------------------------------------------------------------- */

enum line_kind { LK_COMMENT, LK_INITIAL, LK_CONTINUATION };

struct line_layout {
    enum line_kind kind;
    int label;            /* 0 if none */
    int label_col;
    int field;            /* index of the statement field's first character */
    bool tab;
    bool bad_label;       /* something other than digits in columns 1-5 */
    int len;              /* the line's length, less a `!` comment begun
                             in columns 2-5 */
};

/* Decide what a physical line is and where its statement field starts. */
static struct line_layout layout(const char *p, int len,
                                 const struct km_reader_opts *o)
{
    struct line_layout L = {LK_COMMENT, 0, 0, 6, false, false, len};
    if (len == 0)
        return L;
    char c0 = p[0];
    if (c0 == 'C' || c0 == 'c' || c0 == '*' || c0 == '!')
        return L;
    if ((c0 == 'D' || c0 == 'd') && !o->d_lines_are_code)
        return L;
    int tab = -1;
    for (int i = 0; i < len && i < 6; i++) {
        if (p[i] == '\t') {
            tab = i;
            break;
        }
        if (p[i] == '!' && i < 5) {
            len = L.len = i;  /* a comment from columns 2-5 on (gfortran) */
            break;
        }
    }
    int lab_end = tab >= 0 ? tab : (len < 5 ? len : 5);
    bool cont = false;
    if (tab >= 0) {
        L.tab = true;
        L.field = tab + 1;
        if (L.field < len && p[L.field] >= '1' && p[L.field] <= '9') {
            cont = true;
            L.field++;
        }
    } else if (len > 5 && p[5] != ' ' && p[5] != '0') {
        cont = true;
    }
    int start = (c0 == 'D' || c0 == 'd') ? 1 : 0;
    for (int i = start; i < lab_end; i++) {
        if (isdigit((unsigned char)p[i])) {
            if (!L.label_col)
                L.label_col = i + 1;
            if (L.label < 100000)
                L.label = L.label * 10 + (p[i] - '0');
        } else if (!km_is_blank(p[i])) {
            L.bad_label = true;
        }
    }
    if (L.label_col && L.label == 0)
        L.label_col = 0;      /* "0" is no label */
    /* Is there anything in the statement field (before a `!` comment)? */
    int width = o->line_length > 0 ? o->line_length - 6 : len;
    int fend = L.field + width < len ? L.field + width : len;
    int first = L.field;
    while (first < fend && km_is_blank(p[first]))
        first++;
    bool empty = first >= fend || (!cont && p[first] == '!');
    if (!cont && empty && !L.label && !L.bad_label)
        return L;             /* a blank line, or only a `!` comment */
    L.kind = cont ? LK_CONTINUATION : LK_INITIAL;
    return L;
}

/* An OpenMP conditional compilation line: !$, c$ or *$ in columns 1-2,
 * then blanks or a label in 3-5.  A compiler with OpenMP reads it as code,
 * so the reader does too (the rewriter never edits it): declarations and
 * the first executable statement must be known where they really are. */
static bool conditional_line(const char *p, int len)
{
    if (len < 3 || p[1] != '$' ||
        (p[0] != '!' && p[0] != 'c' && p[0] != 'C' && p[0] != '*'))
        return false;
    for (int i = 2; i < 5 && i < len; i++)
        if (p[i] != ' ' && !isdigit((unsigned char)p[i]))
            return false;
    return true;
}

/* The layout of a conditional line: its sentinel counts as blanks. */
static struct line_layout conditional_layout(const char *p, int len,
                                             const struct km_reader_opts *o)
{
    char *copy = km_xstrndup(p, (size_t)len);
    copy[0] = copy[1] = ' ';
    struct line_layout L = layout(copy, len, o);
    free(copy);
    return L;
}

bool km_read_fixed(struct km_source *src, int file, int depth)
{
    struct asm_state st = {src, file, depth, -1, 0, 0, 0, 0};
    const struct km_reader_opts *o = &src->opts;
    bool ok = true;
    struct km_cpp_file cpp;
    km_cpp_begin(&cpp, src, file);
    const char *path = src->files[file].path;

    int nlines = src->files[file].nlines;
    for (int n = 1; n <= nlines; n++) {
        int len;
        const char *p = km_line_text(&src->files[file], n, &len);
        if (km_line_too_long(src, file, n, len)) {
            ok = false;
            continue;
        }
        char *include = NULL;
        enum km_cpp_what what = km_cpp_line(&cpp, n, p, len, &include);
        if (what == KM_CPP_INCLUDE) {
            if (!km_close_statement(&st))
                ok = false;
            if (!km_cpp_include(&st, n, include))
                ok = false;
            continue;
        }
        if (what == KM_CPP_SKIP)
            continue;
        bool conditional = conditional_line(p, len);
        struct line_layout L = conditional ? conditional_layout(p, len, o)
                                           : layout(p, len, o);
        if (L.kind == LK_COMMENT)
            continue;
        len = L.len;
        if (L.bad_label) {
            int col = 1;
            while (col <= 5 && (isdigit((unsigned char)p[col - 1]) ||
                                km_is_blank(p[col - 1])))
                col++;
            km_error(src->diag, path, n, col,
                     "invalid character '%c' in the label field "
                     "(columns 1-5)", p[col - 1]);
            ok = false;
            continue;
        }
        if (L.kind == LK_CONTINUATION) {
            if (st.cur < 0) {
                km_error(src->diag, path, n, L.tab ? L.field : 6,
                         "continuation line with no statement to continue");
                ok = false;
                continue;
            }
            if (L.label)
                km_warning(src->diag, path, n, L.label_col,
                           "label on a continuation line is ignored");
        } else {
            if (!km_close_statement(&st))
                ok = false;
            km_open_statement(&st, n, L.label, L.label_col,
                              (L.tab ? KM_SF_TAB_FORM : 0) |
                              (conditional ? KM_SF_CONDITIONAL : 0));
            src->stmts[st.cur].cpp_if = km_cpp_innermost(&cpp);
        }
        int width = o->line_length > 0 ? o->line_length - 6 : 0;
        int flen = len - L.field;
        if (flen < 0)
            flen = 0;
        if (width > 0 && flen > width)
            flen = width;
        const char *fp = p + L.field;
        int col0 = L.field + 1;
        /* (blanks padding constants continued over many short lines) */
        if (km_text_overflows(&st, n)) {
            km_cpp_end(&cpp);
            return false;
        }
        for (;;) {
            bool padded;
            int semi = add_field(&st, n, col0, L.field + 1, fp, flen, width,
                                 &padded);
            if (semi < 0)
                break;
            /* `;` ends this statement; the rest of the line begins another */
            src->stmts[st.cur].flags |= KM_SF_SHARES_LINE;
            if (!km_close_statement(&st))
                ok = false;
            fp += semi + 1;
            flen -= semi + 1;
            col0 += semi + 1;
            width = 0;        /* no padding for a statement begun mid-line */
            km_open_statement(&st, n, 0, 0, KM_SF_SHARES_LINE);
            src->stmts[st.cur].cpp_if = km_cpp_innermost(&cpp);
        }
    }
    if (!km_close_statement(&st))
        ok = false;
    if (!km_cpp_end(&cpp))
        ok = false;
    return ok;
}
