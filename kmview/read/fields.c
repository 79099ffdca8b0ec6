/*
 * fields.c — the words of the KM_output reader: a data line split into
 * its fields, each kind of field parsed (seconds, times with their ~ for
 * an estimate, counts with their + when extrapolated, percentages,
 * integers), the kinds of line told apart (comments, blank lines,
 * section markers), the one error line `file:line:column: error: text`,
 * and the warnings of figures that contradict each other (once per kind
 * and run).  Must never know what a section or a block holds.
 */
#include "kmview/read/read.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "kmview/read/reader.h"
#include "kmview/write/out.h"
#include "support/buf.h"

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */


/* Print the one error line, `file:line:column: error: text`; `where`
 * points into rd->line (the column), or is NULL for what is wrong with
 * the line as a whole (column 1). */
int fail_at(struct reader *rd, const char *where, const char *fmt, ...)
{
    va_list ap;
    long column = where && rd->line && where >= rd->line
                ? (long)(where - rd->line) + 1 : 1;
    char text[1024];         /* quotes the file: escaped (kv_eprintf) */
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    kv_eprintf("%s:%ld:%ld: error: %s\n", rd->path, rd->lineno, column,
               n > 0 ? text : "");
    return -1;
}



void contradiction(struct reader *rd, enum contradiction kind,
                   const char *where, const char *region,
                   const char *fmt, ...)
{
    if (rd->run->contradictions >> kind & 1)
        return;
    rd->run->contradictions |= 1u << kind;
    char text[1024];
    int n = snprintf(text, sizeof text, "rank %d, %s: ",
                     rd->run->ranks[rd->rix].rank, region);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof text)
        vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    va_end(ap);
    kv_eprintf("%s:%ld:%ld: warning: %s: the file contradicts itself, and "
               "shares computed from it are wrong (only the first such row "
               "is named)\n", rd->path, rd->lineno,
               where && rd->line && where >= rd->line
               ? (long)(where - rd->line) + 1 : 1, text);
}

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */

const char *skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The next blank-separated field at or after *p: its start, and its length
 * through *len; *p moves past it.  NULL at the end of the line. */
const char *next_field(const char **p, size_t *len)
{
    const char *s = skip_blanks(*p);
    if (!*s)
        return NULL;
    const char *e = s;
    while (*e && *e != ' ' && *e != '\t')
        e++;
    *len = (size_t)(e - s);
    *p = e;
    return s;
}

int parse_seconds(struct reader *rd, const char *s, size_t len,
                  double *out, const char *what)
{
    char buf[64];
    if (len > 0 && s[0] == '~')
        return fail_at(rd, s, "%s: unexpected '~'", what);
    char *end;
    if (len == 0 || len >= sizeof buf)
        return fail_at(rd, s, "%s: expected a number of seconds", what);
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    double v = strtod(buf, &end);
    if (*end || end == buf || !isfinite(v))
        return fail_at(rd, s, "%s: '%s' is not a number of seconds", what, buf);
    *out = v;
    return 0;
}

/* A time: seconds, with a leading ~ when it contains an estimate. */
int parse_time(struct reader *rd, const char *s, size_t len,
               double *out, bool *est, const char *what)
{
    *est = len > 0 && s[0] == '~';
    return parse_seconds(rd, s + *est, len - *est, out, what);
}

/* A percentage with its one decimal (an Est(%) column). */
int parse_percent(struct reader *rd, const char *s, size_t len,
                  double *out, const char *what)
{
    if (parse_seconds(rd, s, len, out, what))
        return -1;
    if (*out < 0 || *out > 100)
        return fail_at(rd, s, "%s: '%.*s' is not a percentage", what,
                       (int)len, s);
    return 0;
}

/* A count: digits, with a leading + when extrapolated. */
int parse_count(struct reader *rd, const char *s, size_t len,
                uint64_t *out, bool *plus, const char *what)
{
    size_t i = 0;
    uint64_t v = 0;
    bool p = len > 0 && s[0] == '+';
    *out = 0;
    if (p)
        i = 1;
    if (i == len)
        return fail_at(rd, s, "%s: expected a count", what);
    for (; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return fail_at(rd, s, "%s: '%.*s' is not a count", what, (int)len, s);
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return fail_at(rd, s, "%s: count too large", what);
        v = v * 10 + d;
    }
    *out = v;
    if (plus)
        *plus = p;
    else if (p)
        return fail_at(rd, s, "%s: unexpected '+'", what);
    return 0;
}

int parse_int(struct reader *rd, const char *s, size_t len, int *out,
              const char *what)
{
    uint64_t v;
    *out = 0;
    if (parse_count(rd, s, len, &v, NULL, what))
        return -1;
    if (v > INT_MAX)
        return fail_at(rd, s, "%s: number too large", what);
    *out = (int)v;
    return 0;
}


void split(const char *p, const char *stop, struct fields *fs)
{
    fs->n = 0;
    size_t len;
    const char *s;
    while (fs->n < 16 && (s = next_field(&p, &len)) && (!stop || s < stop)) {
        if (stop && s + len > stop)
            len = (size_t)(stop - s);
        fs->s[fs->n] = s;
        fs->len[fs->n++] = len;
    }
}

/* Text with runs of blanks collapsed and both ends trimmed, in place. */
char *collapse(char *s)
{
    char *w = s;
    bool blank = true;
    for (char *r = s; *r; r++) {
        if (*r == ' ' || *r == '\t') {
            if (!blank)
                *w++ = ' ';
            blank = true;
        } else {
            *w++ = *r;
            blank = false;
        }
    }
    if (w > s && w[-1] == ' ')
        w--;
    *w = '\0';
    return s;
}

/* ------------------------------------------------------------------------ */
/* Line kinds                                                                */

bool is_comment(const char *line)
{
    return *skip_blanks(line) == '!';
}

bool is_blank(const char *line)
{
    return *skip_blanks(line) == '\0';
}

/* "! ===== Name =====": where the name starts in `line` and its length
 * (trimmed), or NULL. */
const char *section_marker(const char *line, size_t *len)
{
    const char *p = skip_blanks(skip_blanks(line) + 1);
    if (strncmp(p, "=====", 5) != 0)
        return NULL;
    p += 5;
    while (*p == '=')
        p++;
    p = skip_blanks(p);
    const char *e = strstr(p, "=====");
    if (!e)
        return NULL;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *len = (size_t)(e - p);
    return p;
}

/* Does `s` contain `word`, ignoring case? */
bool contains_word(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (; *s; s++)
        if (strncasecmp(s, word, n) == 0)
            return true;
    return false;
}
