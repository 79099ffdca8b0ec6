/*
 * emit.c — the two layouts, and inserted statements written in them (see
 * emit.h).
 */
#include "rewriter/emit.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define PIECE 40          /* characters of text per quoted piece */

static const struct km_layout fixed_layout = {
    .field_col = 7, .width = 72, .label_end = 5, .comment = 'C',
    .cont_begin = "     &", .cont_end = "", .cont_indented = false,
    .blanks_significant = false,
    .indented_comments = false,
};

/* Continuation lines of inserted code begin with blanks, then `&` just
 * before the text: `&` on both sides of a break lets it fall anywhere,
 * even inside a name or a constant. */
static const struct km_layout free_layout = {
    .field_col = 1, .width = 132, .label_end = 0, .comment = '!',
    .cont_begin = "     &", .cont_end = "&", .cont_indented = true,
    .blanks_significant = true,
    .indented_comments = true,
};

const struct km_layout *km_layout_of(enum km_form form)
{
    return form == KM_FORM_FREE ? &free_layout : &fixed_layout;
}

/* Where to end a line that may hold at most `room` more characters of
 * `t` (which has `n` left): the longest prefix not ending inside a
 * character constant (*quote is the delimiter of a constant open at the
 * start of the line, or 0).  Breaking after a comma, a blank or // reads
 * best. */
static int line_end(const char *t, int n, int room, char *quote)
{
    if (n <= room)
        return n;
    char q = *quote;
    int last_ok = -1;     /* last break outside a constant */
    int nice = -1;        /* ... right after a comma or blank */
    for (int i = 0; i < room; i++) {
        char c = t[i];
        if (q) {
            if (c == q && i + 1 < n && t[i + 1] == q) {
                i++;        /* a doubled delimiter: never break between */
                continue;
            }
            if (c == q)
                q = 0;
        } else if (c == '\'' || c == '"') {
            q = c;
        }
        if (!q && !(c == '/' && i + 1 < n && t[i + 1] == '/')) {
            last_ok = i + 1;
            if (c == ',' || c == ' ' || (c == '/' && i > 0 && t[i - 1] == '/'))
                nice = i + 1;
        }
    }
    if (nice > room / 2)
        return nice;
    if (last_ok > 0)
        return last_ok;
    return room;          /* a constant longer than a line: cut at the edge */
}

static void track_quotes(const char *t, int n, char *quote)
{
    for (int i = 0; i < n; i++) {
        if (*quote) {
            if (t[i] == *quote)
                *quote = 0;
        } else if (t[i] == '\'' || t[i] == '"') {
            *quote = t[i];
        }
    }
}

static void blanks(struct km_buf *out, int n)
{
    for (int i = 0; i < n; i++)
        km_buf_addc(out, ' ');
}

/* A statement's first line up to its text: the label, right-aligned to
 * the layout's label column (or to just before the text), and the
 * indentation.  Returns the column the text begins at. */
static int begin_first_line(struct km_emitter *e, int label, int indent)
{
    int col = 1;
    if (label > 0) {
        char digits[16];
        int d = snprintf(digits, sizeof digits, "%d", label);
        int end = e->lay->label_end > 0 ? e->lay->label_end : indent - 2;
        if (end < d)
            end = d;
        blanks(e->out, end - d);
        km_buf_adds(e->out, digits);
        col = end + 1;
        if (indent < col + 1)
            indent = col + 1;       /* a blank after the label */
    }
    blanks(e->out, indent - col);
    return indent;
}

/* A continuation line up to its text, which goes 2 columns right of the
 * statement's; in fixed form a continued constant goes on at column 7
 * (its blanks would count).  Returns the column the text begins at. */
static int begin_continuation(struct km_emitter *e, int indent, bool quote)
{
    const struct km_layout *L = e->lay;
    int text = indent + 2;
    if (L->cont_indented) {
        blanks(e->out, text - 2);
        km_buf_addc(e->out, '&');
        return text;
    }
    km_buf_adds(e->out, L->cont_begin);
    int col = (int)strlen(L->cont_begin) + 1;
    if (quote)
        return col;
    blanks(e->out, text - col);
    return text;
}

void km_emit_stmt(struct km_emitter *e, int label, int indent,
                  const char *text)
{
    const struct km_layout *L = e->lay;
    if (indent < L->field_col)
        indent = L->field_col;
    if (e->width > 0 && indent > e->width - 20)
        indent = L->field_col;
    const char *t = text;
    int n = (int)strlen(text);
    int reserve = (int)strlen(L->cont_end);
    char quote = 0;
    bool first = true;
    while (first || n > 0) {
        int col = first ? begin_first_line(e, label, indent)
                        : begin_continuation(e, indent, quote != 0);
        int room = e->width > 0 ? e->width - col + 1 : n;
        int k = n <= room ? n : line_end(t, n, room - reserve, &quote);
        if (!first && k == 0)
            k = n < room - reserve ? n : room - reserve;
        km_buf_add(e->out, t, (size_t)k);
        track_quotes(t, k, &quote);
        t += k;
        n -= k;
        if (n > 0)
            km_buf_adds(e->out, L->cont_end);
        km_buf_adds(e->out, e->eol);
        first = false;
        /* A line break outside a constant loses nothing where blanks mean
         * nothing; skip the blanks it would carry to the next line. */
        while (!L->blanks_significant && !quote && n > 0 && *t == ' ') {
            t++;
            n--;
        }
    }
}

void km_fortran_cstring(struct km_buf *b, const char *text)
{
    int n = (int)strlen(text);
    int i = 0;
    while (i < n) {
        int k = n - i < PIECE ? n - i : PIECE;
        km_buf_addc(b, '\'');
        for (int j = 0; j < k; j++) {
            char c = text[i + j];
            km_buf_addc(b, c);
            if (c == '\'')
                km_buf_addc(b, '\'');
        }
        km_buf_adds(b, "'//");
        i += k;
    }
    km_buf_adds(b, "CHAR(0)");
}
