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
 * Reads format versions 1 to 7 (3 adds a rank's Threads block, 4 its
 * Messages and Peers blocks, 5 its Files and Timeline blocks, 6 its Paths
 * block, all read as part of its section; 7 a Fold column to the Paths
 * block's rows).  Version 2 marks a time that contains an
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
 *
 * This file reads the file: its header lines, the Prediction section, the
 * order of sections and each rank section's completeness, through the
 * bounded input.  A rank section's own lines are section.c's, the blocks
 * versions 3 to 6 added blocks.c's, fields and errors fields.c's
 * (reader.h: what they share).
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
#include "kmview/read/v1.h"
#include "kmview/write/out.h"
#include "support/buf.h"

/* ------------------------------------------------------------------------ */
/* Header                                                                    */

static const char magic[] = "! kmtool KM_output";
/* The newest format this kmview reads (the only place that says so). */
enum { KV_FORMAT_NEWEST = 7 };

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

/* Called when a rank section ends (next section, End, end of file). */
static int check_rank(struct reader *rd);

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
    kv_eprintf("%s:%ld:%zu: error: the file is larger than %s, the most "
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
        kv_eprintf("%s: error: cannot open: %s\n", path, strerror(errno));
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
    free(rd.kids_elapsed);
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
