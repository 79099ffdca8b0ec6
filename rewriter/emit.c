/*
 * emit.c — fixed-form lines (see emit.h).
 */
#include "rewriter/emit.h"

#include <stdbool.h>
#include <string.h>

#define PIECE 40          /* characters of text per quoted piece */

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

void km_emit_stmt(struct km_emitter *e, int label, int indent,
                  const char *text)
{
    if (indent < 7)
        indent = 7;
    if (e->width > 0 && indent > e->width - 20)
        indent = 7;
    const char *t = text;
    int n = (int)strlen(text);
    char quote = 0;
    bool first = true;
    while (first || n > 0) {
        if (first) {
            if (label > 0)
                km_buf_printf(e->out, "%5d ", label);
            else
                km_buf_adds(e->out, "      ");
        } else {
            km_buf_adds(e->out, "     &");
        }
        int col = 7;
        /* Indent, except where a constant continues: its blanks count. */
        if (!quote) {
            int pad = first ? indent - 7 : indent - 7 + 2;
            for (int i = 0; i < pad; i++)
                km_buf_addc(e->out, ' ');
            col += pad;
        }
        int room = e->width > 0 ? e->width - col + 1 : n;
        int k = line_end(t, n, room, &quote);
        if (!first && k == 0)
            k = n < room ? n : room;
        km_buf_add(e->out, t, (size_t)k);
        track_quotes(t, k, &quote);
        km_buf_adds(e->out, e->eol);
        t += k;
        n -= k;
        first = false;
        /* A line break outside a constant loses nothing; skip the blanks
         * it would otherwise carry to the next line's start. */
        while (!quote && n > 0 && *t == ' ') {
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
