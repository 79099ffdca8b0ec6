/*
 * read.c — the KM_output reader (format: doc/KM_output.md).
 *
 * Owns what "well formed" means for kmview: a line-by-line state machine
 * over the file (header lines, the Prediction section, one section per
 * rank, the End line) that relies only on what the format page fixes.
 * Lines starting with '!' are headings and comments: the ones that carry
 * structure (section markers, "! Routine ..." block headings, warnings,
 * "! Key : value" header lines) are read, every other one is skipped, so
 * that a newer libkm may add comments, header lines, figures or whole
 * sections without breaking kmview.  Data lines must be exactly what the
 * format says; the first one that is not stops the reading with
 * `file:line:column: error: text`, the column pointing at the field at
 * fault.  A file without its End line is truncated.
 *
 * Reads format versions 1 to 6 (3 adds a rank's Threads block, 4 its
 * Messages and Peers blocks, 5 its Files and Timeline blocks, 6 its Paths
 * block, all read as part of its section).  Version 2 marks a time that contains an
 * estimate with a leading '~' (kept as a flag beside every figure), adds
 * an Est(%) column to routine and location rows and to the Total row,
 * renames and adds header figures, and gives the Prediction section a
 * comment line, start-up, overhead and waited columns and "n/a" figures
 * (rows of earlier development versions, without overhead and waited,
 * are read too).
 *
 * Streams the file line by line: a file of thousands of ranks is never held
 * whole in memory.  Reads through bounds (read.h): a line of at most
 * KV_MAX_LINE bytes, a file of at most max_size bytes, and a header line
 * that must start the file, checked byte by byte as the first line comes
 * in, so that /dev/zero or a binary file stops at once.  Also warns, once
 * per kind and run, of figures that contradict each other (a negative
 * time, net above elapsed or above the rank's total, a count no run
 * reaches): checks one row can make on itself, a few comparisons each.
 * Must never print anything but the one error line and those warnings,
 * nor leave `run` looking valid after an error.
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

#include "kmview/write/out.h"
#include "kmview/read/v1.h"
#include "support/buf.h"

enum state { S_START, S_HEADER, S_PREDICTION, S_RANK, S_SKIP, S_END };

struct reader {
    struct kv_run *run;
    const char *path;
    FILE *f;
    char *block;             /* what fread brought, block[pos..len) unread */
    size_t pos, len;
    uint64_t consumed, max_size;
    char *line;
    size_t cap;
    long lineno;
    int version;             /* this file's format version */
    enum state st;
    bool rank_only;          /* the Ranks line says "holds rank R only" */
    int only_rank;
    int sections;            /* rank sections in this file */

    /* the rank section being read */
    size_t rix;              /* index into run->ranks */
    long section_line;
    bool fig_seen[KV_NFIGS];
    bool procs_seen;
    bool table_started;
    size_t table_rows;
    int *row_routine;        /* routine id of table row k + 1 */
    size_t caprows;
    /* the location block being read */
    bool in_block;
    int block_routine;
    long block_expected, block_rows;
    long block_line;
    size_t block_first_cell; /* index of the block's first lcell */
    /* the Threads block being read (version 3): 0 none; 1 its Threads
     * figure; 2 the thread rows; 3 the region rows */
    int threads_part;
    long threads_expected;
    /* the Messages block being read (version 4): 0 none; 1 its Call
     * sites figure; 2 its rows */
    int messages_part;
    long messages_expected;
    /* the Peers block being read (version 4): 0 none; 1 its Peers
     * figure; 2 its rows */
    int peers_part;
    long peers_expected;
    /* the Files block being read (version 5): 0 none; 1 its Files
     * figure; 2 its rows */
    int files_part;
    long files_expected;
    bool files_mpiio;        /* it is the MPI-IO block */
    size_t files_first;      /* the rank's first file row of the block */
    /* the Timeline block being read (version 5): 0 none; 1 Slots, 2 Slot
     * width, 3 Origin, 4 Routines; 5 its rows (tl_rows read) */
    int tl_part;
    int tl_rows;
    /* the Paths block being read (version 6): 0 none; 1 its Trees figure;
     * 2 its trees */
    int paths_part;
    long paths_expected;
};

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

static int fail_at(struct reader *rd, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Print the one error line, `file:line:column: error: text`; `where`
 * points into rd->line (the column), or is NULL for what is wrong with
 * the line as a whole (column 1). */
static int fail_at(struct reader *rd, const char *where, const char *fmt, ...)
{
    va_list ap;
    long column = where && rd->line && where >= rd->line
                ? (long)(where - rd->line) + 1 : 1;
    fprintf(stderr, "%s:%ld:%ld: error: ", rd->path, rd->lineno, column);
    char text[1024];         /* quotes the file: escaped (kv_put_escaped) */
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n > 0)
        kv_put_escaped(stderr, text, strlen(text));
    fputc('\n', stderr);
    return -1;
}

/* Figures that cannot all be true: the file contradicts itself (a damaged
 * or hand-edited file, or a libkm bug), and the shares computed from them
 * would be absurd (a routine at 14479.5% of the run).  Reading goes on,
 * but each kind is named once per run, with the rank, region, line and
 * column of its first row.  Only checks a row can make by itself on what
 * it holds and its rank's header figures: a few comparisons per row. */
enum contradiction {
    C_NEGATIVE,              /* a time below 0 */
    C_NET_ABOVE_ELAPSED,     /* a routine's net time above its elapsed time */
    C_ABOVE_TOTAL,           /* a routine's net time above its rank's total
                                time: a share over 100% */
    C_HUGE_COUNT,            /* a count of 2^60 or more: 36 years at 1 ns */
};

#define HUGE_COUNT (1ull << 60)

static void contradiction(struct reader *rd, enum contradiction kind,
                          const char *where, const char *region,
                          const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void contradiction(struct reader *rd, enum contradiction kind,
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
    fprintf(stderr, "%s:%ld:%ld: warning: ", rd->path, rd->lineno,
            where && rd->line && where >= rd->line
            ? (long)(where - rd->line) + 1 : 1);
    kv_put_escaped(stderr, text, strlen(text));
    fputs(": the file contradicts itself, and shares computed from it are "
          "wrong (only the first such row is named)\n", stderr);
}

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */

static const char *skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The next blank-separated field at or after *p: its start, and its length
 * through *len; *p moves past it.  NULL at the end of the line. */
static const char *next_field(const char **p, size_t *len)
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

static int parse_seconds(struct reader *rd, const char *s, size_t len,
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
static int parse_time(struct reader *rd, const char *s, size_t len,
                      double *out, bool *est, const char *what)
{
    *est = len > 0 && s[0] == '~';
    return parse_seconds(rd, s + *est, len - *est, out, what);
}

/* A percentage with its one decimal (an Est(%) column). */
static int parse_percent(struct reader *rd, const char *s, size_t len,
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
static int parse_count(struct reader *rd, const char *s, size_t len,
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

static int parse_int(struct reader *rd, const char *s, size_t len, int *out,
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

/* Fields of a data line, all of them (at most `max`). */
struct fields {
    const char *s[16];
    size_t len[16];
    int n;
};

static void split(const char *p, const char *stop, struct fields *fs)
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
static char *collapse(char *s)
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

static bool is_comment(const char *line)
{
    return *skip_blanks(line) == '!';
}

static bool is_blank(const char *line)
{
    return *skip_blanks(line) == '\0';
}

/* "! ===== Name =====": where the name starts in `line` and its length
 * (trimmed), or NULL. */
static const char *section_marker(const char *line, size_t *len)
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
static bool contains_word(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (; *s; s++)
        if (strncasecmp(s, word, n) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------------------------ */
/* Header                                                                    */

static const char magic[] = "! kmtool KM_output";
/* The newest format this kmview reads (the only place that says so). */
enum { KV_FORMAT_NEWEST = 6 };

static int not_km_output(struct reader *rd, const char *at)
{
    return fail_at(rd, at, "not a KM_output file (the first line is not "
                   "'%s %d')", magic, KV_FORMAT_NEWEST);
}

static int read_magic(struct reader *rd)
{
    const char *p = skip_blanks(rd->line);
    if (strncmp(p, magic, sizeof magic - 1) != 0)
        return not_km_output(rd, p);
    p += sizeof magic - 1;
    size_t len;
    const char *v = next_field(&p, &len);
    int version;
    if (!v)
        return fail_at(rd, p, "the first line names no format version");
    if (parse_int(rd, v, len, &version, "format version"))
        return -1;
    if (version < 1 || version > KV_FORMAT_NEWEST)
        return fail_at(rd, v, "format version %d; this kmview reads versions "
                       "1 to %d", version, KV_FORMAT_NEWEST);
    if (rd->run->format_version && rd->run->format_version != version)
        return fail_at(rd, v, "format version differs from the other files");
    rd->run->format_version = version;
    rd->version = version;
    rd->st = S_HEADER;
    return 0;
}

static void set_string(char **field, const char *value)
{
    if (!*field)
        *field = km_xstrdup(value);
}

static int header_ranks(struct reader *rd, const char *value)
{
    const char *p = value;
    size_t len;
    const char *v = next_field(&p, &len);
    int n;
    if (!v)
        return fail_at(rd, value, "the Ranks line holds no number");
    if (len > 0 && v[len - 1] == ',')
        len--;
    if (parse_int(rd, v, len, &n, "number of ranks"))
        return -1;
    if (n < 1)
        return fail_at(rd, v, "number of ranks must be at least 1");
    if (rd->run->nranks >= 0 && rd->run->nranks != n)
        return fail_at(rd, v, "%d ranks, but the files read before hold a run "
                       "of %d", n, rd->run->nranks);
    rd->run->nranks = n;
    const char *only = strstr(value, "holds rank ");
    if (only) {
        p = only + strlen("holds rank ");
        v = next_field(&p, &len);
        if (!v || parse_int(rd, v, len, &rd->only_rank, "rank"))
            return v ? -1 : fail_at(rd, only, "which rank?");
        rd->rank_only = true;
    }
    return 0;
}

/* "! Key : value" — the keys the format fixes, and any others kept. */
static int header_line(struct reader *rd)
{
    char *p = (char *)skip_blanks(skip_blanks(rd->line) + 1);
    char *colon = strchr(p, ':');
    if (!colon)
        return 0;                                /* a comment */
    char *value_start = colon + 1;
    size_t keylen = (size_t)(colon - p);
    char *key = km_xstrndup(p, keylen);
    collapse(key);
    int value_col = (int)(value_start - rd->line);
    char *value = collapse(km_xstrdup(value_start));
    int rc = 0;
    struct kv_run *run = rd->run;
    if (strcasecmp(key, "Program") == 0)
        set_string(&run->program, value);
    else if (strcasecmp(key, "Started") == 0)
        set_string(&run->started, value);
    else if (strcasecmp(key, "Written at") == 0)
        set_string(&run->written_at, value);
    else if (strcasecmp(key, "Clock") == 0)
        set_string(&run->clock, value);
    else if (strcasecmp(key, "Overhead") == 0) {
        set_string(&run->overhead, value);
        run->overhead_source = run->nsources - 1;
        run->overhead_line = rd->lineno;
        run->overhead_col = (int)(skip_blanks(value_start) - rd->line) + 1;
    }
    else if (strcasecmp(key, "Ranks") == 0)
        rc = header_ranks(rd, rd->line + value_col);
    else if (*key) {
        KM_GROW(run->extra, run->capextra, run->nextra + 1);
        run->extra[run->nextra++] = (struct kv_extra){ key, value };
        return 0;
    }
    free(key);
    free(value);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Prediction                                                                */

static int prediction_figure(struct reader *rd, const char *bang)
{
    struct kv_prediction *pr = &rd->run->pred;
    const char *label = skip_blanks(bang + 1);
    struct fields fs;
    split(rd->line, bang, &fs);
    if (fs.n != 1)
        return fail_at(rd, fs.n ? fs.s[1] : rd->line,
                       "a figure line holds one number before its '!'");
    int k = -1;
    if (contains_word(label, "T_1pe"))
        k = KV_PF_T1PE;
    else if (contains_word(label, "speedup"))
        k = KV_PF_SPEEDUP;
    else if (contains_word(label, "efficiency"))
        k = KV_PF_EFFICIENCY;
    if (k < 0)
        return 0;                                /* a figure added later */
    if (pr->have[k])
        return fail_at(rd, label, "this prediction figure appears twice");
    pr->have[k] = true;
    /* version 2: "n/a" when no prediction could be made (the note says
     * why) */
    if (rd->version >= 2 && fs.len[0] == 3 && strncmp(fs.s[0], "n/a", 3) == 0) {
        pr->fig[k] = NAN;
        pr->available = false;
        return 0;
    }
    bool est;
    if (parse_time(rd, fs.s[0], fs.len[0], &pr->fig[k], &est,
                   "prediction figure"))
        return -1;
    pr->est |= (unsigned)est << k;
    return 0;
}

/* A comment line of the Prediction section: the first one of version 2
 * says what the figures are, or why there are none. */
static void prediction_comment(struct reader *rd)
{
    struct kv_prediction *pr = &rd->run->pred;
    const char *p = skip_blanks(skip_blanks(rd->line) + 1);
    if (pr->note || rd->version < 2 || !*p || strncmp(p, "Rank ", 5) == 0)
        return;
    pr->note = collapse(km_xstrdup(p));
    static const char no[] = "No prediction:";
    if (strncasecmp(pr->note, no, sizeof no - 1) == 0)
        pr->reason = km_xstrdup(skip_blanks(pr->note + sizeof no - 1));
}

/* The fields of a Prediction row: version 1's rank, T, C, R, P (5);
 * version 2's rank, T, S, C, R, O, P, W (8), or rank, T, S, C, R, P (6)
 * as its earlier development versions wrote them.  The columns a row has
 * are in the order of enum kv_pred_col. */
static bool row_has(int fields, int col)
{
    if (col == KV_PR_OVERHEAD || col == KV_PR_WAITED)
        return fields == 8;
    return col != KV_PR_STARTUP || fields >= 6;
}

static const char *row_fields(int fields)
{
    return fields == 5 ? "rank, total, MPI, redundant, parallel"
         : fields == 6 ? "rank, total, start-up, MPI, redundant, parallel"
         : "rank, total, start-up, MPI, redundant, overhead, parallel, waited";
}

/* How many fields this row must hold: every row as many as the first. */
static int row_width(const struct reader *rd, int got)
{
    const struct kv_prediction *pr = &rd->run->pred;
    if (rd->version < 2)
        return 5;
    if (pr->nrows > 0)
        return pr->without_overhead ? 8 : 6;
    return got == 6 ? 6 : 8;
}

static int prediction_line(struct reader *rd)
{
    const char *bang = strchr(rd->line, '!');
    if (bang)
        return prediction_figure(rd, bang);
    struct fields fs;
    split(rd->line, NULL, &fs);
    int want = row_width(rd, fs.n);
    if (fs.n != want)
        return fail_at(rd, fs.n > want ? fs.s[want] : skip_blanks(rd->line),
                       "a prediction row holds %d fields (%s), not %d", want,
                       row_fields(want), fs.n);
    struct kv_prediction *pr = &rd->run->pred;
    if (pr->have[KV_PF_T1PE] || pr->have[KV_PF_SPEEDUP] ||
        pr->have[KV_PF_EFFICIENCY])
        return fail_at(rd, fs.s[0], "a prediction row after the predicted "
                       "figures");
    struct kv_prediction_row row = { 0 };
    static const char *const what[] = {
        [KV_PR_TOTAL] = "total time", [KV_PR_STARTUP] = "start-up time",
        [KV_PR_MPI] = "MPI time", [KV_PR_REDUNDANT] = "redundant time",
        [KV_PR_OVERHEAD] = "overhead", [KV_PR_PARALLEL] = "parallel time",
        [KV_PR_WAITED] = "time waited",
    };
    if (parse_int(rd, fs.s[0], fs.len[0], &row.rank, "rank"))
        return -1;
    if ((size_t)row.rank != pr->nrows)
        return fail_at(rd, fs.s[0], "prediction row for rank %d where rank "
                       "%zu was expected", row.rank, pr->nrows);
    int field = 1;
    for (int k = 0; k < KV_NPRCOLS; k++) {
        bool est;
        row.v[k] = NAN;
        if (!row_has(want, k))
            continue;                            /* the file has none */
        if (parse_time(rd, fs.s[field], fs.len[field], &row.v[k], &est,
                       what[k]))
            return -1;
        row.est |= (unsigned)est << k;
        field++;
    }
    pr->without_overhead = want == 8;
    KM_GROW(pr->rows, pr->caprows, pr->nrows + 1);
    pr->rows[pr->nrows++] = row;
    return 0;
}

/* Called when the Prediction section ends. */
static int prediction_done(struct reader *rd)
{
    struct kv_prediction *pr = &rd->run->pred;
    if (!pr->have[KV_PF_T1PE] || !pr->have[KV_PF_SPEEDUP] ||
        !pr->have[KV_PF_EFFICIENCY])
        return fail_at(rd, NULL, "the Prediction section ends without its "
                       "T_1pe, speedup and efficiency lines");
    if (rd->run->nranks >= 0 && pr->nrows != (size_t)rd->run->nranks)
        return fail_at(rd, NULL, "the Prediction section has %zu rows for %d "
                       "ranks", pr->nrows, rd->run->nranks);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Rank sections                                                             */

static struct kv_rank *cur(struct reader *rd)
{
    return &rd->run->ranks[rd->rix];
}

/* "===== Rank N =====": `name` points at "Rank" in rd->line. */
static int begin_rank(struct reader *rd, const char *name, size_t namelen)
{
    struct kv_run *run = rd->run;
    char *num = km_xstrndup(name, namelen);
    const char *p = num + strlen("Rank");
    size_t len;
    const char *v = next_field(&p, &len);
    int rank;
    if (!v) {
        free(num);
        return fail_at(rd, name, "a Rank section without a rank number");
    }
    v = name + (v - num);                        /* back into rd->line */
    free(num);
    if (parse_int(rd, v, len, &rank, "rank"))
        return -1;
    if (run->nranks < 0)
        return fail_at(rd, v, "a Rank section before the Ranks header line");
    if (rank >= run->nranks)
        return fail_at(rd, v, "rank %d in a run of %d ranks", rank, run->nranks);
    if (rd->rank_only && rank != rd->only_rank)
        return fail_at(rd, v, "rank %d in a file that holds rank %d only", rank,
                       rd->only_rank);
    const struct kv_rank *twice = kv_rank_seen(run, rank);
    if (twice)
        return fail_at(rd, v, "rank %d appears twice (first in %s, line %d)",
                       rank, twice->source, twice->source_line);
    struct kv_rank *r = kv_rank_add(run, rank);
    r->source = run->sources[run->nsources - 1];
    r->source_line = (int)rd->lineno;
    rd->rix = run->nsections - 1;
    rd->section_line = rd->lineno;
    memset(rd->fig_seen, 0, sizeof rd->fig_seen);
    for (int f = 0; f < KV_NFIGS; f++)
        r->fig[f] = NAN;                         /* until read */
    rd->procs_seen = false;
    rd->table_started = false;
    rd->table_rows = 0;
    rd->in_block = false;
    rd->threads_part = 0;
    rd->messages_part = 0;
    rd->peers_part = 0;
    rd->files_part = 0;
    rd->files_mpiio = false;
    rd->tl_part = 0;
    rd->paths_part = 0;
    rd->sections++;
    rd->st = S_RANK;
    return 0;
}

/* The label figure f has in this file's version, or NULL if none. */
static const char *figure_label(const struct reader *rd, int f)
{
    return rd->version >= 2 ? kv_figures[f].label : kv_figures[f].label_v1;
}

static const char *missing_figure(const struct reader *rd)
{
    if (!rd->procs_seen)
        return "Processors and Rank";
    for (int f = 0; f < KV_NFIGS; f++)
        if (!rd->fig_seen[f] && figure_label(rd, f))
            return figure_label(rd, f);
    return NULL;
}

static int end_block(struct reader *rd)
{
    if (rd->in_block && rd->block_rows != rd->block_expected)
        return fail_at(rd, NULL, "the locations of routine %s (line %ld) end "
                       "after %ld of their %ld rows",
                       rd->run->routines[rd->block_routine].name, rd->block_line,
                       rd->block_rows, rd->block_expected);
    rd->in_block = false;
    return 0;
}

/* A Files or MPI-IO block that ends before its rows do (fail_at). */
static int files_block_short(struct reader *rd)
{
    const struct kv_rank *r = cur(rd);
    size_t rows = r->nfiles - rd->files_first;
    if (!rd->files_part || (rd->files_part == 2 &&
                            (long)rows == rd->files_expected))
        return 0;
    if (rd->files_part == 1)
        return fail_at(rd, NULL, "the %s block of rank %d ends before its "
                       "'Files' figure", rd->files_mpiio ? "MPI-IO" : "Files",
                       r->rank);
    return fail_at(rd, NULL, "the %s block of rank %d has %zu rows for %ld "
                   "files", rd->files_mpiio ? "MPI-IO" : "Files", r->rank,
                   rows, rd->files_expected);
}

/* Called when a rank section ends (next section, End, end of file). */
static int check_rank(struct reader *rd);

static int paths_block_short(struct reader *rd);

static int end_rank(struct reader *rd)
{
    int rc = check_rank(rd);
    kv_rank_trim(cur(rd));
    return rc;
}

/* Does the section hold every row its figures announced? */
static int check_rank(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    if (r->lost)
        return 0;
    const char *missing = missing_figure(rd);
    if (missing)
        return fail_at(rd, NULL, "the section of rank %d (line %ld) ends "
                       "without its '%s' figure", r->rank, rd->section_line,
                       missing);
    if (rd->table_rows != (size_t)r->fig[KV_F_ROUTINES])
        return fail_at(rd, NULL, "the section of rank %d (line %ld) ends after "
                       "%zu of its %.0f routine rows", r->rank, rd->section_line,
                       rd->table_rows, r->fig[KV_F_ROUTINES]);
    if (rd->threads_part > 0 && rd->threads_part < 3)
        return fail_at(rd, NULL, "the Threads block of rank %d ends before "
                       "its region rows", r->rank);
    if (files_block_short(rd))
        return -1;
    if (rd->peers_part && (long)r->npeers != rd->peers_expected)
        return fail_at(rd, NULL, "the Peers block of rank %d has %zu rows "
                       "for %ld peers", r->rank, r->npeers,
                       rd->peers_expected);
    if (rd->tl_part && (rd->tl_part < 5 || rd->tl_rows != r->tl.slots + 1))
        return fail_at(rd, NULL, "the Timeline block of rank %d ends after "
                       "%d of its %d rows", r->rank, rd->tl_rows,
                       r->tl.slots + 1);
    if (paths_block_short(rd))
        return -1;
    if (rd->messages_part && (long)r->nmsgs != rd->messages_expected)
        return fail_at(rd, NULL, "the Messages block of rank %d has %zu rows "
                       "for %ld call sites", r->rank, r->nmsgs,
                       rd->messages_expected);
    return end_block(rd);
}

static int figure_index(const struct reader *rd, const char *label)
{
    for (int f = 0; f < KV_NFIGS; f++)
        if (figure_label(rd, f) && strcasecmp(label, figure_label(rd, f)) == 0)
            return f;
    return -1;
}

static int processors_and_rank(struct reader *rd, const struct fields *fs)
{
    struct kv_rank *r = cur(rd);
    int procs, rank;
    if (fs->n != 2)
        return fail_at(rd, fs->n ? fs->s[0] : rd->line,
                       "'Processors and Rank' holds two numbers");
    if (parse_int(rd, fs->s[0], fs->len[0], &procs, "processors") ||
        parse_int(rd, fs->s[1], fs->len[1], &rank, "rank"))
        return -1;
    if (procs != rd->run->nranks)
        return fail_at(rd, fs->s[0], "%d processors in a run of %d ranks",
                       procs, rd->run->nranks);
    if (rank != r->rank)
        return fail_at(rd, fs->s[1], "rank %d in the section of rank %d", rank,
                       r->rank);
    r->processors = procs;
    rd->procs_seen = true;
    return 0;
}

/* "value ! label" in a rank's header. */
static int rank_figure(struct reader *rd, const char *bang)
{
    struct kv_rank *r = cur(rd);
    char *label = collapse(km_xstrdup(bang + 1));
    struct fields fs;
    split(rd->line, bang, &fs);
    int rc = 0;
    if (rd->table_started)
        rc = fail_at(rd, skip_blanks(rd->line), "a figure line after the "
                     "routine table");
    else if (r->lost)
        rc = fail_at(rd, skip_blanks(rd->line), "a figure line in the section "
                     "of a rank whose results were lost");
    else if (strcasecmp(label, "Processors and Rank") == 0) {
        rc = rd->procs_seen ? fail_at(rd, bang + 1, "this figure appears twice")
                            : processors_and_rank(rd, &fs);
    } else {
        int f = figure_index(rd, label);
        if (f < 0) {
            free(label);
            return 0;                            /* a figure added later */
        }
        if (rd->fig_seen[f])
            rc = fail_at(rd, bang + 1, "this figure appears twice");
        else if (fs.n != 1)
            rc = fail_at(rd, fs.n ? fs.s[fs.n - 1] : rd->line,
                         "a figure line holds one number before its '!'");
        else if (kv_figures[f].integer) {
            uint64_t v;
            rc = parse_count(rd, fs.s[0], fs.len[0], &v, NULL, label);
            r->fig[f] = (double)v;
        } else {
            rc = parse_time(rd, fs.s[0], fs.len[0], &r->fig[f], &r->fig_est[f],
                            label);
            /* (a figure libkm got by difference may be a rounding below
             * 0: a microsecond is not) */
            if (!rc && r->fig[f] < -1e-6)
                contradiction(rd, C_NEGATIVE, fs.s[0], label,
                              "%g s, below 0", r->fig[f]);
        }
        rd->fig_seen[f] = true;
    }
    free(label);
    return rc;
}

/* What a routine row says against itself or its rank's total. */
static void check_routine_row(struct reader *rd, const struct fields *fs,
                              const struct kv_rcell *c)
{
    const char *name = rd->run->routines[c->routine].name;
    const double v[] = { c->elapsed, c->net, c->mpi, c->io };
    const int col[] = { 2, 3, 5, 6 };
    static const char *const what[] = { "elapsed", "net", "MPI", "I/O" };
    /* (version 1's figures were rounded and summed apart: from 2 on) */
    double total = rd->version >= 2 ? cur(rd)->fig[KV_F_TOTAL] : NAN;
    for (int k = 0; k < 4; k++)
        if (v[k] < 0)
            contradiction(rd, C_NEGATIVE, fs->s[col[k]], name,
                          "%s time %g s, below 0", what[k], v[k]);
    /* (both written with 8 digits: equal ones may differ in the last) */
    if (c->net > c->elapsed * (1 + 1e-6) && c->net - c->elapsed > 1e-9)
        contradiction(rd, C_NET_ABOVE_ELAPSED, fs->s[3], name,
                      "net time %g s above its elapsed time %g s", c->net,
                      c->elapsed);
    if (isfinite(total) && c->net > total * (1 + 1e-6) &&
        c->net - total > 1e-9)
        contradiction(rd, C_ABOVE_TOTAL, fs->s[3], name,
                      "net time %g s above the rank's total time %g s (a "
                      "share of %.1f%%)", c->net, total, 100 * c->net / total);
    if (c->count >= HUGE_COUNT)
        contradiction(rd, C_HUGE_COUNT, fs->s[4], name,
                      "%llu executions (2^60 or more: 36 years at a "
                      "nanosecond each)", (unsigned long long)c->count);
}

static int routine_row(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    struct fields fs;
    const char *first = skip_blanks(rd->line);
    if (r->lost)
        return fail_at(rd, first, "a routine row in the section of a rank "
                       "whose results were lost");
    if (!rd->table_started) {
        const char *missing = missing_figure(rd);
        if (missing)
            return fail_at(rd, first, "the routine table starts, but the "
                           "header figure '%s' is missing", missing);
        rd->table_started = true;
    }
    if (rd->in_block || rd->table_rows == (size_t)r->fig[KV_F_ROUTINES])
        return fail_at(rd, first, rd->in_block
                       ? "more location rows than the heading announced"
                       : "more routine rows than the 'Routines' figure says");
    split(rd->line, NULL, &fs);
    int want = rd->version >= 2 ? 8 : 7;
    if (fs.n != want)
        return fail_at(rd, fs.n > want ? fs.s[want] : first,
                       "a routine row holds %d fields (number, name, elapsed, "
                       "net, counts, MPI, I/O%s), not %d", want,
                       want == 8 ? ", Est(%)" : "", fs.n);
    int no;
    if (parse_int(rd, fs.s[0], fs.len[0], &no, "routine number"))
        return -1;
    if ((size_t)no != rd->table_rows + 1)
        return fail_at(rd, fs.s[0], "routine number %d where %zu was expected",
                       no, rd->table_rows + 1);
    char *name = km_xstrndup(fs.s[1], fs.len[1]);
    int id = kv_routine_intern(rd->run, name);
    free(name);
    for (size_t k = 0; k < rd->table_rows; k++)
        if (rd->row_routine[k] == id)
            return fail_at(rd, fs.s[1], "routine %s appears twice in the "
                           "table of rank %d", rd->run->routines[id].name,
                           r->rank);
    struct kv_rcell c = { .routine = id, .est_pct = NAN };
    bool est[KV_NMETRICS] = { false };
    if (parse_time(rd, fs.s[2], fs.len[2], &c.elapsed, &est[KV_M_ELAPSED],
                   "elapsed time") ||
        parse_time(rd, fs.s[3], fs.len[3], &c.net, &est[KV_M_NET],
                   "net time") ||
        parse_count(rd, fs.s[4], fs.len[4], &c.count, &c.extrap, "counts") ||
        parse_time(rd, fs.s[5], fs.len[5], &c.mpi, &est[KV_M_MPI],
                   "MPI time") ||
        parse_time(rd, fs.s[6], fs.len[6], &c.io, &est[KV_M_IO], "I/O time") ||
        (want == 8 && parse_percent(rd, fs.s[7], fs.len[7], &c.est_pct,
                                    "Est(%)")))
        return -1;
    for (int m = 0; m < KV_NMETRICS; m++)
        c.est |= est[m] ? KV_EST(m) : 0;
    check_routine_row(rd, &fs, &c);
    *kv_rank_add_routine(r) = c;
    KM_GROW(rd->row_routine, rd->caprows, rd->table_rows + 1);
    rd->row_routine[rd->table_rows++] = id;
    return 0;
}

/* The routine's file and line, as the first block heading gives them. */
static void note_routine_place(struct kv_routine *rt, const char *file,
                               size_t flen, int line)
{
    if (rt->file)
        return;
    rt->file = km_xstrndup(file, flen);
    rt->line = line;
}

/* "! Routine <no> <name>, file <file>, line <line>, <n> locations". */
static int block_heading(struct reader *rd, const char *p)
{
    struct kv_rank *r = cur(rd);
    if (end_block(rd))
        return -1;
    if (r->lost || missing_figure(rd) ||
        rd->table_rows != (size_t)r->fig[KV_F_ROUTINES])
        return fail_at(rd, p, "a location block before the routine table is "
                       "complete");
    size_t len;
    const char *v = next_field(&p, &len);
    int no;
    if (!v || parse_int(rd, v, len, &no, "routine number"))
        return v ? -1 : fail_at(rd, p, "a location heading without a routine "
                                "number");
    if (no < 1 || (size_t)no > rd->table_rows)
        return fail_at(rd, v, "routine number %d is not in the table", no);
    int id = rd->row_routine[no - 1];
    const char *name = skip_blanks(p);
    const char *comma = strchr(name, ',');
    const char *rname = rd->run->routines[id].name;
    if (!comma || (size_t)(comma - name) != strlen(rname) ||
        strncmp(name, rname, strlen(rname)) != 0)
        return fail_at(rd, name, "routine %d of the table is %s", no, rname);
    /* the file name may hold anything: take line and count from the end */
    const char *tail = strstr(comma, " locations");
    const char *lc = NULL, *ll = NULL;
    for (const char *q = comma; tail && q < tail; q++) {
        if (strncmp(q, ", line ", 7) == 0)
            ll = q;
        if (*q == ',')
            lc = q;
    }
    if (!tail || !lc || !ll || ll >= lc || strncmp(comma, ", file ", 7) != 0)
        return fail_at(rd, comma, "expected ', file <file>, line <line>, <n> "
                       "locations'");
    int line, n;
    const char *lp = ll + 7, *np = lc + 1;
    v = next_field(&lp, &len);
    if (v && len > 0 && v[len - 1] == ',')
        len--;
    if (!v || parse_int(rd, v, len, &line, "line"))
        return -1;
    v = next_field(&np, &len);
    if (!v || parse_int(rd, v, len, &n, "number of locations"))
        return -1;
    note_routine_place(&rd->run->routines[id], comma + 7,
                       (size_t)(ll - (comma + 7)), line);
    rd->in_block = true;
    rd->block_routine = id;
    rd->block_expected = n;
    rd->block_rows = 0;
    rd->block_line = rd->lineno;
    rd->block_first_cell = r->nlc;
    return 0;
}

/* How many earlier rows of this block share kind and line. */
static int occurrence(struct reader *rd, int kind, int line)
{
    struct kv_rank *r = cur(rd);
    int n = 0;
    for (size_t i = rd->block_first_cell; i < r->nlc; i++) {
        const struct kv_location *l = &rd->run->locations[r->lc[i].location];
        n += l->kind == kind && l->line == line;
    }
    return n;
}

/* What a location row says against itself. */
static void check_location_row(struct reader *rd, const char *const *s,
                               const struct kv_lcell *c, int kind, int line)
{
    if (c->elapsed >= 0 && c->count < HUGE_COUNT)
        return;                                  /* the usual case */
    char region[512];
    snprintf(region, sizeof region, "%s %s at line %d",
             rd->run->routines[rd->block_routine].name, kv_kind_name(kind),
             line);
    if (c->elapsed < 0)
        contradiction(rd, C_NEGATIVE, s[3], region, "elapsed time %g s, "
                      "below 0", c->elapsed);
    if (c->count >= HUGE_COUNT)
        contradiction(rd, C_HUGE_COUNT, s[4], region, "%llu executions (2^60 "
                      "or more: 36 years at a nanosecond each)",
                      (unsigned long long)c->count);
}

static int location_row(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    const char *p = rd->line;
    const char *s[6];
    size_t len[6];
    int want = rd->version >= 2 ? 6 : 5;
    for (int i = 0; i < want; i++)
        if (!(s[i] = next_field(&p, &len[i])))
            return fail_at(rd, p, "a location row holds number, kind, line, "
                           "elapsed, counts, %sand the statement",
                           want == 6 ? "Est(%), " : "");
    int no, kind, line;
    struct kv_lcell c = { .est_pct = NAN };
    if (parse_int(rd, s[0], len[0], &no, "location number"))
        return -1;
    if (no != rd->block_rows + 1)
        return fail_at(rd, s[0], "location number %d where %ld was expected",
                       no, rd->block_rows + 1);
    char word[16];
    snprintf(word, sizeof word, "%.*s", (int)(len[1] < 15 ? len[1] : 15), s[1]);
    kind = kv_kind_parse(word);
    if (kind < 0 || len[1] >= 15)
        return fail_at(rd, s[1], "unknown location kind '%.*s'", (int)len[1],
                       s[1]);
    if (parse_int(rd, s[2], len[2], &line, "line") ||
        parse_time(rd, s[3], len[3], &c.elapsed, &c.est, "elapsed time") ||
        parse_count(rd, s[4], len[4], &c.count, &c.extrap, "counts") ||
        (want == 6 && parse_percent(rd, s[5], len[5], &c.est_pct, "Est(%)")))
        return -1;
    char *text = collapse(km_xstrdup(p));
    c.location = kv_location_intern(rd->run, rd->block_routine, kind, line,
                                    occurrence(rd, kind, line), text);
    free(text);
    check_location_row(rd, s, &c, kind, line);
    *kv_rank_add_location(r) = c;
    rd->block_rows++;
    return 0;
}

/* "!        Total   net counts MPI I/O Est(%)" (version 2; version 1's
 * Total row is a comment kmview skips). */
static int total_row(struct reader *rd, const char *p)
{
    struct kv_rank *r = cur(rd);
    struct fields fs;
    split(p, NULL, &fs);
    if (fs.n != 5)
        return fail_at(rd, fs.n > 5 ? fs.s[5] : p, "the Total row holds 5 "
                       "fields (net, counts, MPI, I/O, Est(%%)), not %d", fs.n);
    if (r->total_row.present)
        return fail_at(rd, p, "a second Total row");
    struct kv_total_row t = { .present = true };
    double mpi, io;
    bool est;
    uint64_t counts;
    if (parse_time(rd, fs.s[0], fs.len[0], &t.net, &t.net_est, "net time") ||
        parse_count(rd, fs.s[1], fs.len[1], &counts, &est, "counts") ||
        parse_time(rd, fs.s[2], fs.len[2], &mpi, &est, "MPI time") ||
        parse_time(rd, fs.s[3], fs.len[3], &io, &est, "I/O time") ||
        parse_percent(rd, fs.s[4], fs.len[4], &t.est_pct, "Est(%)"))
        return -1;
    r->total_row = t;
    return 0;
}

static int rank_comment(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    const char *p = skip_blanks(skip_blanks(rd->line) + 1);
    if (strncmp(p, "Warning:", 8) == 0) {
        char *text = collapse(km_xstrdup(p + 8));
        if (strstr(text, "results were lost")) {
            if (rd->procs_seen || rd->table_started) {
                free(text);
                return fail_at(rd, p, "a rank whose results were lost has "
                               "figures");
            }
            r->lost = true;
        }
        kv_rank_add_warning(r, text);
        free(text);
        return 0;
    }
    if (strncmp(p, "Routine ", 8) == 0 && isdigit((unsigned char)p[8]))
        return block_heading(rd, p + 8);
    if (rd->version >= 2 && strncmp(p, "Total ", 6) == 0 &&
        rd->table_started && !rd->in_block)
        return total_row(rd, p + 6);
    return 0;                                     /* headings */
}

/* "-1" or a number: an OpenMP thread number. */
static int parse_omp(struct reader *rd, const char *s, size_t len, int *out)
{
    if (len == 2 && s[0] == '-' && s[1] == '1') {
        *out = -1;
        return 0;
    }
    return parse_int(rd, s, len, out, "OMP thread number");
}

/* "N ! Threads" */
static int threads_figure(struct reader *rd)
{
    const char *bang = strchr(rd->line, '!');
    struct fields fs;
    split(rd->line, bang, &fs);
    int n;
    if (!bang || strncmp(skip_blanks(bang + 1), "Threads", 7) != 0 ||
        fs.n != 1)
        return fail_at(rd, skip_blanks(rd->line), "the Threads block starts "
                       "with its 'Threads' figure");
    if (parse_int(rd, fs.s[0], fs.len[0], &n, "threads"))
        return -1;
    if (n < 2)
        return fail_at(rd, fs.s[0], "a Threads block of %d thread%s", n,
                       n == 1 ? "" : "s");
    rd->threads_expected = n;
    rd->threads_part = 2;
    return 0;
}

/* thread, OMP, total, net, counts, MPI, outside, overhead, Est(%) */
static int thread_row(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    struct fields fs;
    split(rd->line, NULL, &fs);
    if (fs.n != 9)
        return fail_at(rd, skip_blanks(rd->line), "a thread row holds 9 "
                       "fields (thread, OMP, total, net, counts, MPI, "
                       "outside, overhead, Est(%%)), not %d", fs.n);
    struct kv_thread t = { 0 };
    static const int at[KV_NTFIGS] = { 2, 3, 5, 6, 7 };
    if (parse_int(rd, fs.s[0], fs.len[0], &t.thread, "thread") ||
        parse_omp(rd, fs.s[1], fs.len[1], &t.omp) ||
        parse_count(rd, fs.s[4], fs.len[4], &t.count, &t.extrap, "counts") ||
        parse_percent(rd, fs.s[8], fs.len[8], &t.est_pct, "Est(%)"))
        return -1;
    for (int f = 0; f < KV_NTFIGS; f++) {
        bool est;
        if (parse_time(rd, fs.s[at[f]], fs.len[at[f]], &t.v[f], &est,
                       kv_thread_key[f]))
            return -1;
        t.est |= est ? 1u << f : 0;
    }
    if ((size_t)t.thread != r->nthreads)
        return fail_at(rd, fs.s[0], "thread %d where %zu was expected",
                       t.thread, r->nthreads);
    if ((long)r->nthreads >= rd->threads_expected)
        return fail_at(rd, fs.s[0], "more thread rows than the %ld threads",
                       rd->threads_expected);
    *kv_rank_add_thread(r) = t;
    return 0;
}

/* The location numbered `no` in routine `routine`'s block of this rank,
 * or -1. */
static int block_location(const struct reader *rd, int routine, long no)
{
    const struct kv_rank *r = &rd->run->ranks[rd->rix];
    long k = 0;
    for (size_t i = 0; i < r->nlc; i++)
        if (rd->run->locations[r->lc[i].location].routine == routine &&
            ++k == no)
            return r->lc[i].location;
    return -1;
}

/* region, routine, kind, line, threads, counts, min, mean, max, Imbal(%),
 * statement... */
static int thread_region_row(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    struct fields fs;
    split(rd->line, NULL, &fs);
    if (fs.n < 10)
        return fail_at(rd, skip_blanks(rd->line), "a thread region row holds "
                       "region, routine, kind, line, threads, counts, min, "
                       "mean, max and Imbal(%%)");
    struct kv_tregion t = { .location = -1 };
    char id[32];
    snprintf(id, sizeof id, "%.*s", (int)(fs.len[0] < 31 ? fs.len[0] : 31),
             fs.s[0]);
    char *dot = strchr(id, '.');
    long no = strtol(id, NULL, 10), loc = dot ? strtol(dot + 1, NULL, 10) : 0;
    if (no < 1 || (size_t)no > rd->table_rows || (dot && loc < 1))
        return fail_at(rd, fs.s[0], "region '%s' names no routine row", id);
    t.routine = rd->row_routine[no - 1];
    if (dot && (t.location = block_location(rd, t.routine, loc)) < 0)
        return fail_at(rd, fs.s[0], "region '%s' names no location", id);
    bool est[3];
    if (parse_int(rd, fs.s[4], fs.len[4], &t.threads, "threads") ||
        parse_count(rd, fs.s[5], fs.len[5], &t.count, &t.extrap, "counts") ||
        parse_time(rd, fs.s[6], fs.len[6], &t.min, &est[0], "min") ||
        parse_time(rd, fs.s[7], fs.len[7], &t.mean, &est[1], "mean") ||
        parse_time(rd, fs.s[8], fs.len[8], &t.max, &est[2], "max") ||
        parse_percent(rd, fs.s[9], fs.len[9], &t.imbal, "Imbal(%)"))
        return -1;
    t.est = est[0] || est[1] || est[2];
    if (t.location < 0 && rd->run->routines[t.routine].line == 0)
        parse_int(rd, fs.s[3], fs.len[3], &rd->run->routines[t.routine].line,
                  "line");
    if (t.threads < 1 || t.threads > rd->threads_expected)
        return fail_at(rd, fs.s[4], "%d threads of %ld", t.threads,
                       rd->threads_expected);
    *kv_rank_add_tregion(r) = t;
    return 0;
}

/* "N ! LABEL", the line a block of rows starts with: N >= 1 rows (of
 * `what`, one `one`) into *expected. */
static int block_count(struct reader *rd, const char *block,
                       const char *label, const char *what, const char *one,
                       long *expected)
{
    struct fields fs;
    const char *bang = strchr(rd->line, '!');
    split(rd->line, bang, &fs);
    uint64_t n;
    if (!bang || strncmp(skip_blanks(bang + 1), label, strlen(label)) != 0 ||
        fs.n != 1)
        return fail_at(rd, skip_blanks(rd->line), "the %s block starts "
                       "with its '%s' figure", block, label);
    if (parse_count(rd, fs.s[0], fs.len[0], &n, NULL, what))
        return -1;
    if (n < 1)
        return fail_at(rd, fs.s[0], "a %s block of no %s", block, one);
    *expected = (long)n;
    return 0;
}

/* "N ! Call sites" */
static int messages_figure(struct reader *rd)
{
    if (block_count(rd, "Messages", "Call sites", "call sites", "call site",
                    &rd->messages_expected))
        return -1;
    rd->messages_part = 2;
    return 0;
}

/* region, routine, kind, line, messages, sent, received, bin:messages... */
static int message_row(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    struct fields fs;
    split(rd->line, NULL, &fs);
    if (fs.n < 8)
        return fail_at(rd, skip_blanks(rd->line), "a message row holds "
                       "region, routine, kind, line, messages, sent, received "
                       "and its size bins");
    char id[32];
    snprintf(id, sizeof id, "%.*s", (int)(fs.len[0] < 31 ? fs.len[0] : 31),
             fs.s[0]);
    char *dot = strchr(id, '.');
    long no = strtol(id, NULL, 10), loc = dot ? strtol(dot + 1, NULL, 10) : 0;
    if (no < 1 || (size_t)no > rd->table_rows || !dot || loc < 1)
        return fail_at(rd, fs.s[0], "region '%s' names no location", id);
    int location = block_location(rd, rd->row_routine[no - 1], loc);
    if (location < 0)
        return fail_at(rd, fs.s[0], "region '%s' names no location", id);
    if ((long)r->nmsgs >= rd->messages_expected)
        return fail_at(rd, fs.s[0], "more message rows than the %ld call "
                       "sites", rd->messages_expected);
    struct kv_msg m = { .location = location };
    uint64_t bins[KV_MSG_BINS] = { 0 };
    if (parse_count(rd, fs.s[4], fs.len[4], &m.messages, NULL, "messages") ||
        parse_count(rd, fs.s[5], fs.len[5], &m.sent, NULL, "sent") ||
        parse_count(rd, fs.s[6], fs.len[6], &m.received, NULL, "received"))
        return -1;
    uint64_t in_bins = 0;
    for (int k = 7; k < fs.n; k++) {
        const char *colon = memchr(fs.s[k], ':', fs.len[k]);
        int bin;
        uint64_t n;
        if (!colon)
            return fail_at(rd, fs.s[k], "a size bin is bin:messages");
        if (parse_int(rd, fs.s[k], (size_t)(colon - fs.s[k]), &bin, "bin") ||
            parse_count(rd, colon + 1, fs.len[k] - (size_t)(colon - fs.s[k]) - 1,
                        &n, NULL, "messages in the bin"))
            return -1;
        if (bin >= KV_MSG_BINS)
            return fail_at(rd, fs.s[k], "size bin %d of %d", bin, KV_MSG_BINS);
        bins[bin] += n;
        in_bins += n;
    }
    if (in_bins != m.messages)
        return fail_at(rd, fs.s[4], "%llu messages, %llu in the size bins",
                       (unsigned long long)m.messages,
                       (unsigned long long)in_bins);
    struct kv_msg *at = kv_rank_add_msg(r);
    *at = m;
    kv_rank_set_msg_bins(r, at, bins);
    return 0;
}

/* "N ! Peers" */
static int peers_figure(struct reader *rd)
{
    if (block_count(rd, "Peers", "Peers", "peers", "peer",
                    &rd->peers_expected))
        return -1;
    rd->peers_part = 2;
    return 0;
}

/* peer, then messages and bytes sent, received and sent in all-to-alls */
static int peer_row(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    struct fields fs;
    split(rd->line, NULL, &fs);
    if (fs.n != 7)
        return fail_at(rd, skip_blanks(rd->line), "a peer row holds peer, "
                       "then messages and bytes sent, received and sent in "
                       "all-to-alls");
    if ((long)r->npeers >= rd->peers_expected)
        return fail_at(rd, fs.s[0], "more peer rows than the %ld peers",
                       rd->peers_expected);
    struct kv_peer p;
    if (parse_int(rd, fs.s[0], fs.len[0], &p.peer, "peer"))
        return -1;
    for (int c = 0; c < 3; c++)
        if (parse_count(rd, fs.s[1 + 2 * c], fs.len[1 + 2 * c],
                        &p.messages[c], NULL, "messages") ||
            parse_count(rd, fs.s[2 + 2 * c], fs.len[2 + 2 * c], &p.bytes[c],
                        NULL, "bytes"))
            return -1;
    if (rd->run->nranks >= 0 && p.peer >= rd->run->nranks)
        return fail_at(rd, fs.s[0], "peer %d of %d ranks", p.peer,
                       rd->run->nranks);
    if (r->npeers > 0 && p.peer <= r->peers[r->npeers - 1].peer)
        return fail_at(rd, fs.s[0], "peer %d after peer %d", p.peer,
                       r->peers[r->npeers - 1].peer);
    *kv_rank_add_peer(r) = p;
    return 0;
}

/* "N ! Files" */
static int files_figure(struct reader *rd)
{
    if (block_count(rd, rd->files_mpiio ? "MPI-IO" : "Files", "Files",
                    "files", "file", &rd->files_expected))
        return -1;
    rd->files_part = 2;
    return 0;
}

/* A file's bytes: digits, ~digits, >=digits or '-'. */
static int parse_io_bytes(struct reader *rd, const char *s, size_t len,
                          struct kv_io_bytes *b, const char *what)
{
    b->bytes = 0;
    if (len == 1 && s[0] == '-') {
        b->kind = KV_BYTES_UNKNOWN;
        return 0;
    }
    size_t skip = 0;
    b->kind = KV_BYTES_EXACT;
    if (len > 0 && s[0] == '~') {
        b->kind = KV_BYTES_ESTIMATE;
        skip = 1;
    } else if (len > 1 && s[0] == '>' && s[1] == '=') {
        b->kind = KV_BYTES_AT_LEAST;
        skip = 2;
    }
    return parse_count(rd, s + skip, len - skip, &b->bytes, NULL, what);
}

/* Opens, closes, inquiries, seeks, flushes, metadata time, reads, their
 * time and bytes, writes, their time and bytes, size, then the name. */
static int file_row(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    struct fields fs;
    split(rd->line, NULL, &fs);
    if (fs.n < 14)
        return fail_at(rd, skip_blanks(rd->line), "a file row holds five "
                       "metadata counts and their time, reads, their time "
                       "and bytes, writes, their time and bytes, the size "
                       "and the name");
    if ((long)(r->nfiles - rd->files_first) >= rd->files_expected)
        return fail_at(rd, fs.s[0], "more file rows than the %ld files",
                       rd->files_expected);
    struct kv_file x = { .mpiio = rd->files_mpiio };
    for (int k = 0; k < KV_META_KINDS; k++)
        if (parse_count(rd, fs.s[k], fs.len[k], &x.meta[k], NULL,
                        "operations"))
            return -1;
    uint64_t size = 0;
    if (parse_time(rd, fs.s[5], fs.len[5], &x.meta_s, &x.meta_est,
                   "metadata time") ||
        parse_count(rd, fs.s[6], fs.len[6], &x.reads, NULL, "reads") ||
        parse_time(rd, fs.s[7], fs.len[7], &x.read_s, &x.read_est,
                   "read time") ||
        parse_io_bytes(rd, fs.s[8], fs.len[8], &x.read_b, "bytes read") ||
        parse_count(rd, fs.s[9], fs.len[9], &x.writes, NULL, "writes") ||
        parse_time(rd, fs.s[10], fs.len[10], &x.write_s, &x.write_est,
                   "write time") ||
        parse_io_bytes(rd, fs.s[11], fs.len[11], &x.write_b,
                       "bytes written") ||
        (!(fs.len[12] == 1 && fs.s[12][0] == '-') &&
         parse_count(rd, fs.s[12], fs.len[12], &size, NULL, "size")))
        return -1;
    x.size = fs.len[12] == 1 && fs.s[12][0] == '-' ? -1 : (int64_t)size;
    size_t n = strlen(fs.s[13]);
    while (n > 0 && (fs.s[13][n - 1] == '\n' || fs.s[13][n - 1] == '\r' ||
                     fs.s[13][n - 1] == ' '))
        n--;
    x.name = km_xstrndup(fs.s[13], n);
    *kv_rank_add_file(r) = x;
    return 0;
}

/* "N ! Label...": the figure of a Timeline header line (a count when
 * `count`), after checking its label. */
static int tl_figure(struct reader *rd, const char *label, bool count,
                     double *value, const char **rest)
{
    struct fields fs;
    const char *bang = strchr(rd->line, '!');
    split(rd->line, bang, &fs);
    size_t n = strlen(label);
    if (!bang || strncmp(skip_blanks(bang + 1), label, n) != 0 || fs.n != 1)
        return fail_at(rd, skip_blanks(rd->line), "the Timeline block's "
                       "'%s' line", label);
    *rest = skip_blanks(bang + 1) + n;
    if (count) {
        int v;
        if (parse_int(rd, fs.s[0], fs.len[0], &v, label))
            return -1;
        *value = v;
        return 0;
    }
    return parse_seconds(rd, fs.s[0], fs.len[0], value, label);
}

/* "3 ! Routines: 2 1 3": the routine table's rows of the columns. */
static int tl_routines(struct reader *rd, struct kv_timeline *tl,
                       const char *list)
{
    struct fields fs;
    split(list, NULL, &fs);
    if (fs.n != tl->ntop)
        return fail_at(rd, list, "%d routines named for %d columns", fs.n,
                       tl->ntop);
    for (int k = 0; k < fs.n; k++) {
        int no;
        if (parse_int(rd, fs.s[k], fs.len[k], &no, "routine number"))
            return -1;
        if (no < 1 || (size_t)no > rd->table_rows)
            return fail_at(rd, fs.s[k], "routine %d of a table of %zu", no,
                           rd->table_rows);
        tl->top[k] = rd->row_routine[no - 1];
    }
    tl->ncols = KV_TL_NCAT + tl->ntop;
    tl->v = km_xcalloc((size_t)(tl->slots + 1) * (size_t)tl->ncols,
                       sizeof *tl->v);
    return 0;
}

/* A row: "before" or the slot's number, then whole nanoseconds. */
static int tl_row(struct reader *rd, struct kv_timeline *tl)
{
    struct fields fs;
    split(rd->line, NULL, &fs);
    if (fs.n != 1 + tl->ncols)
        return fail_at(rd, skip_blanks(rd->line), "a timeline row holds the "
                       "slot, then %d figures", tl->ncols);
    if (rd->tl_rows > tl->slots)
        return fail_at(rd, fs.s[0], "more timeline rows than the %d slots",
                       tl->slots);
    int slot = -1;
    if (rd->tl_rows == 0 ? fs.len[0] != 6 || strncmp(fs.s[0], "before", 6)
                         : parse_int(rd, fs.s[0], fs.len[0], &slot, "slot") ||
                           slot != rd->tl_rows - 1)
        return fail_at(rd, fs.s[0], "expected the timeline row of %s",
                       rd->tl_rows ? "the next slot" : "'before'");
    int64_t *row = &tl->v[(size_t)rd->tl_rows * (size_t)tl->ncols];
    for (int k = 0; k < tl->ncols; k++) {
        const char *f = fs.s[1 + k];
        size_t len = fs.len[1 + k];
        bool est = len > 0 && f[0] == '~';
        uint64_t ns;
        if (parse_count(rd, f + est, len - est, &ns, NULL, "nanoseconds"))
            return -1;
        if (ns > INT64_MAX)
            return fail_at(rd, f, "nanoseconds: count too large");
        row[k] = (int64_t)ns;
        if (est)
            tl->est |= 1u << k;
    }
    rd->tl_rows++;
    return 0;
}

static int timeline_line(struct reader *rd)
{
    struct kv_timeline *tl = &cur(rd)->tl;
    if (rd->tl_part == 5) {
        if (is_comment(rd->line))
            return 0;                             /* the column heading */
        return tl_row(rd, tl);
    }
    double v;
    const char *rest;
    switch (rd->tl_part) {
    case 1:
        if (tl_figure(rd, "Slots", true, &v, &rest))
            return -1;
        if (v < 1 || v > KV_TL_MAX_SLOTS)
            return fail_at(rd, skip_blanks(rd->line), "%.0f slots", v);
        tl->slots = (int)v;
        break;
    case 2:
        if (tl_figure(rd, "Slot width", false, &tl->width, &rest))
            return -1;
        if (!(tl->width > 0))
            return fail_at(rd, skip_blanks(rd->line), "a slot width of 0");
        break;
    case 3:
        if (tl_figure(rd, "Origin", false, &tl->origin, &rest))
            return -1;
        tl->origin_mpi = strstr(rest, "MPI_INIT") != NULL;
        break;
    default:
        if (tl_figure(rd, "Routines:", true, &v, &rest))
            return -1;
        if (v > KV_TL_TOP)
            return fail_at(rd, skip_blanks(rd->line), "%.0f routine columns",
                           v);
        tl->ntop = (int)v;
        if (tl_routines(rd, tl, rest))
            return -1;
    }
    rd->tl_part++;
    return 0;
}

static int threads_line(struct reader *rd)
{
    if (is_comment(rd->line)) {
        const char *p = skip_blanks(skip_blanks(rd->line) + 1);
        if (strncmp(p, "Warning:", 8) == 0)
            return rank_comment(rd);
        if (strncmp(p, "Regions run by threads", 22) == 0) {
            if ((long)cur(rd)->nthreads != rd->threads_expected)
                return fail_at(rd, p, "%zu thread rows for %ld threads",
                               cur(rd)->nthreads, rd->threads_expected);
            rd->threads_part = 3;
        }
        return 0;                                 /* headings */
    }
    if (rd->threads_part == 1)
        return threads_figure(rd);
    if (rd->threads_part == 2)
        return thread_row(rd);
    return thread_region_row(rd);
}

/* ---- the Paths block (version 6) --------------------------------------- */

/* Does the Paths block end before what it announced? */
static int paths_block_short(struct reader *rd)
{
    const struct kv_rank *r = cur(rd);
    if (!rd->paths_part)
        return 0;
    if (rd->paths_part == 1)
        return fail_at(rd, NULL, "the Paths block of rank %d ends before its "
                       "'Trees' figure", r->rank);
    if ((long)r->ntrees != rd->paths_expected)
        return fail_at(rd, NULL, "the Paths block of rank %d has %zu trees "
                       "for %ld", r->rank, r->ntrees, rd->paths_expected);
    const struct kv_tree *t = &r->trees[r->ntrees - 1];
    if ((long)t->npaths != t->expected)
        return fail_at(rd, NULL, "the tree of thread %d of rank %d ends "
                       "after %zu of its %ld paths", t->thread, r->rank,
                       t->npaths, t->expected);
    return 0;
}

/* "! Thread T: N paths, F entries on folded paths": a tree begins. */
static int tree_heading(struct reader *rd, const char *p)
{
    struct kv_rank *r = cur(rd);
    if (rd->paths_part != 2)
        return fail_at(rd, p, "a tree before the Paths block's 'Trees' "
                       "figure");
    if (r->ntrees > 0 &&
        (long)r->trees[r->ntrees - 1].npaths != r->trees[r->ntrees - 1].expected)
        return fail_at(rd, p, "a tree after %zu of the previous tree's %ld "
                       "paths", r->trees[r->ntrees - 1].npaths,
                       r->trees[r->ntrees - 1].expected);
    if ((long)r->ntrees == rd->paths_expected)
        return fail_at(rd, p, "more trees than the %ld the block announced",
                       rd->paths_expected);
    int thread;
    long long folded;
    long n;
    char tail;
    if (sscanf(p, "Thread %d: %ld paths, %lld entries on folded paths%c",
               &thread, &n, &folded, &tail) != 3 || thread < 0 || n < 0 ||
        folded < 0)
        return fail_at(rd, p, "a tree's heading is 'Thread T: N paths, F "
                       "entries on folded paths'");
    struct kv_tree *t = kv_rank_add_tree(r);
    t->thread = thread;
    t->expected = n;
    t->folded = folded;
    return 0;
}

/* path, parent, region, counts, elapsed, net, Est(%) */
static int path_row(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    struct fields fs;
    split(rd->line, NULL, &fs);
    if (r->ntrees == 0)
        return fail_at(rd, skip_blanks(rd->line), "a path row before its "
                       "tree's heading");
    struct kv_tree *t = &r->trees[r->ntrees - 1];
    if (fs.n != 7)
        return fail_at(rd, skip_blanks(rd->line), "a path row holds path, "
                       "parent, region, counts, elapsed, net and Est(%%)");
    if ((long)t->npaths == t->expected)
        return fail_at(rd, fs.s[0], "more paths than the %ld of thread %d's "
                       "tree", t->expected, t->thread);
    int no, parent;
    if (parse_int(rd, fs.s[0], fs.len[0], &no, "path") ||
        parse_int(rd, fs.s[1], fs.len[1], &parent, "parent"))
        return -1;
    if (no != (int)t->npaths + 1)
        return fail_at(rd, fs.s[0], "path %d where %zu comes", no,
                       t->npaths + 1);
    if (parent < 0 || parent >= no)
        return fail_at(rd, fs.s[1], "parent %d of path %d is not a path "
                       "before it", parent, no);
    struct kv_path p = { .parent = parent - 1, .routine = -1,
                         .location = -1 };
    char id[32];
    snprintf(id, sizeof id, "%.*s", (int)(fs.len[2] < 31 ? fs.len[2] : 31),
             fs.s[2]);
    if (strcmp(id, "0") != 0) {
        char *dot = strchr(id, '.');
        long rno = strtol(id, NULL, 10), loc = dot ? strtol(dot + 1, NULL, 10)
                                                    : 0;
        if (rno < 1 || (size_t)rno > rd->table_rows || (dot && loc < 1))
            return fail_at(rd, fs.s[2], "region '%s' names no routine row",
                           id);
        p.routine = rd->row_routine[rno - 1];
        if (dot && (p.location = block_location(rd, p.routine, loc)) < 0)
            return fail_at(rd, fs.s[2], "region '%s' names no location", id);
    }
    bool est_el, est_net;
    if (parse_count(rd, fs.s[3], fs.len[3], &p.count, &p.extrap, "counts") ||
        parse_time(rd, fs.s[4], fs.len[4], &p.elapsed, &est_el, "elapsed") ||
        parse_time(rd, fs.s[5], fs.len[5], &p.net, &est_net, "net") ||
        parse_percent(rd, fs.s[6], fs.len[6], &p.est_pct, "Est(%)"))
        return -1;
    p.est = (est_el ? KV_EST(KV_M_ELAPSED) : 0) |
            (est_net ? KV_EST(KV_M_NET) : 0);
    *kv_tree_add_path(t) = p;
    return 0;
}

static int paths_line(struct reader *rd)
{
    if (is_comment(rd->line)) {
        const char *p = skip_blanks(skip_blanks(rd->line) + 1);
        if (strncmp(p, "Thread ", 7) == 0)
            return tree_heading(rd, p);
        if (strncmp(p, "Warning:", 8) == 0)
            return rank_comment(rd);
        return 0;                                 /* headings */
    }
    if (rd->paths_part == 1) {
        if (block_count(rd, "Paths", "Trees", "trees", "tree",
                        &rd->paths_expected))
            return -1;
        rd->paths_part = 2;
        return 0;
    }
    return path_row(rd);
}

static int rank_line(struct reader *rd)
{
    if (rd->paths_part)
        return paths_line(rd);
    if (rd->tl_part)
        return timeline_line(rd);
    if (rd->files_part) {
        if (is_comment(rd->line))
            return 0;                             /* headings */
        return rd->files_part == 1 ? files_figure(rd) : file_row(rd);
    }
    if (rd->peers_part) {
        if (is_comment(rd->line))
            return 0;                             /* headings */
        return rd->peers_part == 1 ? peers_figure(rd) : peer_row(rd);
    }
    if (rd->messages_part) {
        if (is_comment(rd->line))
            return 0;                             /* headings */
        return rd->messages_part == 1 ? messages_figure(rd) : message_row(rd);
    }
    if (rd->threads_part)
        return threads_line(rd);
    if (is_comment(rd->line))
        return rank_comment(rd);
    if (rd->in_block && rd->block_rows < rd->block_expected)
        return location_row(rd);
    const char *bang = strchr(rd->line, '!');
    if (bang && !rd->in_block)
        return rank_figure(rd, bang);
    return routine_row(rd);
}

/* ------------------------------------------------------------------------ */
/* Sections                                                                  */

/* The section that was being read ends here. */
static int end_section(struct reader *rd)
{
    if (rd->st == S_PREDICTION)
        return prediction_done(rd);
    if (rd->st == S_RANK)
        return end_rank(rd);
    return 0;
}

static int end_file(struct reader *rd)
{
    if (rd->rank_only && rd->sections != 1)
        return fail_at(rd, NULL, "a file that holds rank %d only has %d rank "
                       "sections", rd->only_rank, rd->sections);
    if (!rd->rank_only && rd->sections != rd->run->nranks)
        return fail_at(rd, NULL, "%d rank sections for %d ranks", rd->sections,
                       rd->run->nranks);
    if (!rd->rank_only && rd->run->nsources > 1)
        return fail_at(rd, NULL, "only files that hold one rank each can be "
                       "read together");
    rd->st = S_END;
    return 0;
}

static int marker(struct reader *rd, const char *at, size_t len)
{
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), at);
    if (rd->st == S_HEADER && rd->run->nranks < 0)
        return fail_at(rd, NULL, "the header has no Ranks line");
    if (rd->st == S_RANK && rd->version >= 3 &&
        strcasecmp(name, "Threads") == 0 && !rd->threads_part) {
        if (cur(rd)->lost)
            return fail_at(rd, NULL, "a rank whose results were lost has "
                           "threads");
        rd->threads_part = 1;                     /* still the rank's */
        return end_block(rd);
    }
    if (rd->st == S_RANK && rd->version >= 4 &&
        strcasecmp(name, "Messages") == 0 && !rd->messages_part) {
        if (cur(rd)->lost)
            return fail_at(rd, NULL, "a rank whose results were lost has "
                           "messages");
        if (rd->threads_part > 0 && rd->threads_part < 3)
            return fail_at(rd, NULL, "the Threads block of rank %d ends "
                           "before its region rows", cur(rd)->rank);
        int rc = rd->threads_part ? 0 : end_block(rd);
        rd->threads_part = 0;
        rd->messages_part = 1;                    /* still the rank's */
        return rc;
    }
    if (rd->st == S_RANK && rd->version >= 4 &&
        strcasecmp(name, "Peers") == 0 && !rd->peers_part) {
        if (cur(rd)->lost)
            return fail_at(rd, NULL, "a rank whose results were lost has "
                           "peers");
        if (rd->threads_part > 0 && rd->threads_part < 3)
            return fail_at(rd, NULL, "the Threads block of rank %d ends "
                           "before its region rows", cur(rd)->rank);
        int rc = rd->threads_part || rd->messages_part ? 0 : end_block(rd);
        rd->threads_part = 0;
        rd->peers_part = 1;                       /* still the rank's */
        return rc;
    }
    bool mpiio = strcasecmp(name, "MPI-IO") == 0;
    if (rd->st == S_RANK && rd->version >= 5 && !rd->tl_part &&
        (mpiio ? !rd->files_mpiio
               : strcasecmp(name, "Files") == 0 && !rd->files_part)) {
        if (cur(rd)->lost)
            return fail_at(rd, NULL, "a rank whose results were lost has "
                           "files");
        if (rd->threads_part > 0 && rd->threads_part < 3)
            return fail_at(rd, NULL, "the Threads block of rank %d ends "
                           "before its region rows", cur(rd)->rank);
        if (files_block_short(rd))
            return -1;
        int rc = rd->threads_part || rd->messages_part || rd->peers_part ||
                 rd->files_part ? 0 : end_block(rd);
        rd->threads_part = 0;
        rd->files_part = 1;                       /* still the rank's */
        rd->files_mpiio = mpiio;
        rd->files_first = cur(rd)->nfiles;
        return rc;
    }
    if (rd->st == S_RANK && rd->version >= 5 &&
        strcasecmp(name, "Timeline") == 0 && !rd->tl_part) {
        if (cur(rd)->lost)
            return fail_at(rd, NULL, "a rank whose results were lost has a "
                           "timeline");
        if (rd->threads_part > 0 && rd->threads_part < 3)
            return fail_at(rd, NULL, "the Threads block of rank %d ends "
                           "before its region rows", cur(rd)->rank);
        int rc = rd->threads_part || rd->messages_part || rd->peers_part ||
                 rd->files_part ? 0 : end_block(rd);
        rd->threads_part = 0;
        rd->tl_part = 1;                          /* still the rank's */
        rd->tl_rows = 0;
        return rc;
    }
    if (rd->st == S_RANK && rd->version >= 6 &&
        strcasecmp(name, "Paths") == 0 && !rd->paths_part) {
        if (cur(rd)->lost)
            return fail_at(rd, NULL, "a rank whose results were lost has "
                           "paths");
        if (rd->threads_part > 0 && rd->threads_part < 3)
            return fail_at(rd, NULL, "the Threads block of rank %d ends "
                           "before its region rows", cur(rd)->rank);
        int rc = rd->threads_part || rd->messages_part || rd->peers_part ||
                 rd->files_part || rd->tl_part ? 0 : end_block(rd);
        rd->threads_part = 0;
        rd->paths_part = 1;                       /* still the rank's */
        return rc;
    }
    if (end_section(rd))
        return -1;
    if (strcasecmp(name, "End") == 0)
        return end_file(rd);
    if (strcasecmp(name, "Prediction") == 0) {
        if (rd->run->pred.present || rd->sections > 0)
            return fail_at(rd, NULL, rd->sections ? "a Prediction section "
                           "after the rank sections" : "a second Prediction "
                           "section");
        rd->run->pred.present = true;
        rd->run->pred.available = true;
        rd->st = S_PREDICTION;
        return 0;
    }
    if (strncasecmp(name, "Rank", 4) == 0 && (name[4] == ' ' || !name[4]))
        return begin_rank(rd, at, len);
    rd->st = S_SKIP;                              /* a section added later */
    return 0;
}

static int one_line(struct reader *rd)
{
    const char *at;
    size_t len;
    if (rd->st == S_START)
        return is_blank(rd->line) ? 0 : read_magic(rd);
    if (is_blank(rd->line))
        return 0;
    if (rd->st == S_END)
        return fail_at(rd, skip_blanks(rd->line), "text after the End line");
    if (is_comment(rd->line) && (at = section_marker(rd->line, &len)))
        return marker(rd, at, len);
    switch (rd->st) {
    case S_HEADER:
        if (is_comment(rd->line))
            return header_line(rd);
        return fail_at(rd, skip_blanks(rd->line), "a data line in the header");
    case S_PREDICTION:
        if (!is_comment(rd->line))
            return prediction_line(rd);
        prediction_comment(rd);
        return 0;
    case S_RANK:
        return rank_line(rd);
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------------ */
/* Bounded input                                                             */

const char *kv_size_text(char buf[32], uint64_t bytes)
{
    static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
    int u = -1;
    uint64_t v = bytes;
    while (u < 3 && v >= 1024 && v % 1024 == 0)
        v /= 1024, u++;
    if (u < 0)
        snprintf(buf, 32, "%llu bytes", (unsigned long long)bytes);
    else
        snprintf(buf, 32, "%llu %s", (unsigned long long)v, unit[u]);
    return buf;
}

static int too_large(struct reader *rd, size_t column)
{
    char b[32];
    rd->lineno++;
    fprintf(stderr, "%s:%ld:%zu: error: the file is larger than %s, the most "
            "kmview reads (--max-size)\n", rd->path, rd->lineno, column,
            kv_size_text(b, rd->max_size));
    return -1;
}

/* Where the line so far stops looking like the header line (leading
 * blanks and blank lines allowed), or NULL while it still may be one. */
static const char *not_magic(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' ||
                       s[i] == '\n'))
        i++;
    for (size_t k = 0; i < len && k < sizeof magic - 1; i++, k++)
        if (s[i] != magic[k])
            return s + i;
    return NULL;
}

/* Refill the block; false at the end of the file or on an error. */
static bool fill(struct reader *rd)
{
    rd->pos = 0;
    rd->len = fread(rd->block, 1, 65536, rd->f);
    return rd->len > 0;
}

/* The next line into rd->line with its newline, its length in *n: 1, or
 * 0 at the end of the file, -1 on an error (printed).  Stops as soon as a
 * bound is passed or, before the header line, as soon as the bytes cannot
 * be one. */
static int next_line(struct reader *rd, size_t *n)
{
    size_t len = 0;
    *n = 0;
    for (;;) {
        if (rd->pos == rd->len && !fill(rd))
            break;
        const char *s = rd->block + rd->pos;
        const char *nl = memchr(s, '\n', rd->len - rd->pos);
        size_t take = nl ? (size_t)(nl - s) + 1 : rd->len - rd->pos;
        if (rd->consumed + take > rd->max_size)
            return too_large(rd, len + (size_t)(rd->max_size - rd->consumed) + 1);
        if (len + take > KV_MAX_LINE + 1) {
            rd->lineno++;
            return fail_at(rd, NULL, "a line longer than %s: not a KM_output "
                           "file", "1 MiB");
        }
        KM_GROW(rd->line, rd->cap, len + take + 1);
        memcpy(rd->line + len, s, take);
        len += take;
        rd->pos += take;
        rd->consumed += take;
        rd->line[len] = '\0';
        if (rd->st == S_START) {
            const char *bad = not_magic(rd->line, len);
            if (bad || rd->consumed > KV_MAX_FIRST) {
                rd->lineno++;
                /* the column of the first byte that cannot be the header */
                return not_km_output(rd, bad ? bad : rd->line + len - 1);
            }
        }
        if (nl)
            break;
    }
    *n = len;
    return len > 0;
}

/* Read lines, dropping the newline (and a carriage return before it). */
static int read_lines(struct reader *rd)
{
    size_t n, last_len = 0;  /* the last line's, without its newline */
    int got;
    while ((got = next_line(rd, &n)) > 0) {
        rd->lineno++;
        /* libkm ends every line: a last line without its newline is where
         * the writing stopped, whatever it looks like (but the End line
         * of a file someone edited) */
        bool partial = n > 0 && rd->line[n - 1] != '\n';
        while (n > 0 && (rd->line[n - 1] == '\n' || rd->line[n - 1] == '\r'))
            rd->line[--n] = '\0';
        last_len = n;
        size_t len = 0;
        const char *end = is_comment(rd->line) ? section_marker(rd->line, &len)
                                               : NULL;
        if (partial && !(end && len == 3 && strncasecmp(end, "End", 3) == 0))
            return fail_at(rd, rd->line + n, "the file ends in the middle "
                           "of this line: truncated");
        if (memchr(rd->line, '\0', n))
            return fail_at(rd, NULL, "a NUL byte: not a text file");
        if (one_line(rd))
            return -1;
    }
    if (got < 0)
        return -1;
    if (ferror(rd->f))
        return fail_at(rd, NULL, "read error: %s", strerror(errno));
    if (rd->st == S_START) {
        rd->lineno = rd->lineno ? rd->lineno : 1;
        return fail_at(rd, NULL, "empty file: not a KM_output file");
    }
    if (rd->st != S_END) {
        /* at the end of the last line */
        return fail_at(rd, rd->line ? rd->line + last_len : NULL,
                       "the file ends without its '! ===== End =====' line: "
                       "truncated");
    }
    return 0;
}

/* A regular file longer than the bound is refused before reading it. */
static int check_size(struct reader *rd)
{
    struct stat sb;
    if (fstat(fileno(rd->f), &sb) == 0 && S_ISREG(sb.st_mode) &&
        (uint64_t)sb.st_size > rd->max_size)
        return too_large(rd, 1);
    return 0;
}

int kv_read_file(struct kv_run *run, const char *path, uint64_t max_size)
{
    struct reader rd = { .run = run, .path = path, .st = S_START,
                         .max_size = max_size };
    rd.f = fopen(path, "r");
    if (!rd.f) {
        fprintf(stderr, "%s: error: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    run->sources = km_xrealloc(run->sources,
                               (run->nsources + 1) * sizeof *run->sources);
    run->sources[run->nsources++] = km_xstrdup(path);
    rd.block = km_xmalloc(65536);
    int rc = check_size(&rd);
    if (!rc)
        rc = read_lines(&rd);
    fclose(rd.f);
    free(rd.block);
    free(rd.line);
    free(rd.row_routine);
    return rc;
}

int kv_read_files(struct kv_run *run, const char *const *paths, int n,
                  uint64_t max_size)
{
    for (int i = 0; i < n; i++)
        if (kv_read_file(run, paths[i], max_size))
            return -1;
    kv_run_sort_ranks(run);
    if (run->format_version == 1)
        kv_v1_upgrade(run);
    return 0;
}
