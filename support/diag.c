/*
 * diag.c — format, echo and keep diagnostics.
 */
#include "support/diag.h"

#include <stdarg.h>
#include <stdio.h>

static void report(struct km_diag *d, const char *file, int line, int col,
                   const char *what, const char *fmt, va_list ap)
{
    size_t start = d->log.len;
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
    if (!d->quiet)
        fputs(d->log.data + start, stderr);
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
    size_t start = d->log.len;
    km_buf_adds(&d->log, "kmrun: ");
    km_buf_vprintf(&d->log, fmt, ap);
    km_buf_addc(&d->log, '\n');
    if (!d->quiet)
        fputs(d->log.data + start, stderr);
    va_end(ap);
}

void km_diag_free(struct km_diag *d)
{
    km_buf_free(&d->log);
}
