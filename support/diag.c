/*
 * diag.c — format, echo and keep diagnostics.
 */
#include "support/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report(struct km_diag *d, const char *file, int line, int col,
                   const char *what, const char *fmt, va_list ap)
{
    if (d->map && file && line > 0)
        d->map(d->map_ctx, &file, &line);
    if (file && line > 0 && col > 0)
        km_buf_printf(&d->log, "%s:%d:%d: %s: ", file, line, col, what);
    else if (file && line > 0)
        km_buf_printf(&d->log, "%s:%d: %s: ", file, line, what);
    else if (file)
        km_buf_printf(&d->log, "%s: %s: ", file, what);
    else
        km_buf_printf(&d->log, "kmrun: %s: ", what);
    km_buf_vprintf(&d->log, fmt, ap);
    km_buf_addc(&d->log, '\n');
}

void km_error(struct km_diag *d, const char *file, int line, int col,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, file, line, col, "error", fmt, ap);
    va_end(ap);
    d->errors++;
}

void km_warning(struct km_diag *d, const char *file, int line, int col,
                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, file, line, col, "warning", fmt, ap);
    va_end(ap);
    d->warnings++;
}

void km_note(struct km_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    km_buf_adds(&d->log, "kmrun: ");
    km_buf_vprintf(&d->log, fmt, ap);
    km_buf_addc(&d->log, '\n');
    va_end(ap);
}

struct line {
    const char *text;
    size_t len;
    size_t order;
};

/* "path:line:col: ..." -> path length, line, col (0 if absent). */
static void locate(const char *s, size_t *plen, long *line, long *col)
{
    const char *c = strchr(s, ':');
    *plen = c ? (size_t)(c - s) : strlen(s);
    *line = *col = 0;
    if (c) {
        char *end;
        *line = strtol(c + 1, &end, 10);
        if (*end == ':')
            *col = strtol(end + 1, NULL, 10);
    }
}

static int by_position(const void *a, const void *b)
{
    const struct line *x = a, *y = b;
    size_t px, py;
    long lx, cx, ly, cy;
    locate(x->text, &px, &lx, &cx);
    locate(y->text, &py, &ly, &cy);
    int p = strncmp(x->text, y->text, px < py ? px : py);
    if (p == 0 && px != py)
        p = px < py ? -1 : 1;
    if (p)
        return p;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    if (cx != cy)
        return cx < cy ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

void km_diag_flush(struct km_diag *d)
{
    if (d->flushed >= d->log.len)
        return;
    size_t n = 0;
    for (size_t i = d->flushed; i < d->log.len; i++)
        n += d->log.data[i] == '\n';
    struct line *lines = malloc(n * sizeof *lines);
    char *sorted = malloc(d->log.len - d->flushed);
    if (!lines || !sorted) {
        free(lines);
        free(sorted);
        return;
    }
    size_t k = 0;
    for (size_t i = d->flushed; i < d->log.len && k < n;) {
        const char *nl = memchr(d->log.data + i, '\n', d->log.len - i);
        lines[k].text = d->log.data + i;
        lines[k].len = (size_t)(nl - (d->log.data + i)) + 1;
        lines[k].order = k;
        i += lines[k].len;
        k++;
    }
    qsort(lines, n, sizeof *lines, by_position);
    /* The same message twice (an include file read by several INCLUDE
     * lines repeats its problems) is shown once. */
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && lines[i].len == lines[i - 1].len &&
            memcmp(lines[i].text, lines[i - 1].text, lines[i].len) == 0)
            continue;
        memcpy(sorted + at, lines[i].text, lines[i].len);
        at += lines[i].len;
    }
    memcpy(d->log.data + d->flushed, sorted, at);
    d->log.len = d->flushed + at;
    d->log.data[d->log.len] = '\0';
    if (!d->quiet)
        fwrite(d->log.data + d->flushed, 1, at, stderr);
    d->flushed = d->log.len;
    free(lines);
    free(sorted);
}

void km_diag_free(struct km_diag *d)
{
    km_buf_free(&d->log);
}
