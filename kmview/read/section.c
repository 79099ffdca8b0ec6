/*
 * section.c — a rank section's own lines (every format version): its
 * marker, its header figures, the routine table, each routine's block of
 * locations with its heading, the Total row and the warnings.  Checks
 * each row against itself and its rank's total (fields.c warns).  The
 * blocks later versions added to a section are blocks.c's; when a
 * section ends, read.c checks it is complete.
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
/* Rank sections                                                             */


/* "===== Rank N =====": `name` points at "Rank" in rd->line. */
int begin_rank(struct reader *rd, const char *name, size_t namelen)
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

const char *missing_figure(const struct reader *rd)
{
    if (!rd->procs_seen)
        return "Processors and Rank";
    for (int f = 0; f < KV_NFIGS; f++)
        if (!rd->fig_seen[f] && figure_label(rd, f))
            return figure_label(rd, f);
    return NULL;
}

int end_block(struct reader *rd)
{
    if (rd->in_block && rd->block_rows != rd->block_expected)
        return fail_at(rd, NULL, "the locations of routine %s (line %ld) end "
                       "after %ld of their %ld rows",
                       rd->run->routines[rd->block_routine].name, rd->block_line,
                       rd->block_rows, rd->block_expected);
    rd->in_block = false;
    return 0;
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
int rank_figure(struct reader *rd, const char *bang)
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

int routine_row(struct reader *rd)
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

int location_row(struct reader *rd)
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

int rank_comment(struct reader *rd)
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
