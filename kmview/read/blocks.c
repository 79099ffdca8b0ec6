/*
 * blocks.c — the blocks format versions 3 to 6 added to a rank section:
 * Threads (3: its thread rows and the regions threads other than 0 ran),
 * Messages and Peers (4), Files, MPI-IO and Timeline (5), Paths (6, the
 * calling-context trees; 7 adds each path's Fold).  Each block's announcing figure, its rows, and
 * whether it ends before what it announced.  Must never read a line of
 * the rank's own tables (section.c does).
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

/* A Files or MPI-IO block that ends before its rows do (fail_at). */
int files_block_short(struct reader *rd)
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
int messages_figure(struct reader *rd)
{
    if (block_count(rd, "Messages", "Call sites", "call sites", "call site",
                    &rd->messages_expected))
        return -1;
    rd->messages_part = 2;
    return 0;
}

/* region, routine, kind, line, messages, sent, received, bin:messages... */
int message_row(struct reader *rd)
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
int peers_figure(struct reader *rd)
{
    if (block_count(rd, "Peers", "Peers", "peers", "peer",
                    &rd->peers_expected))
        return -1;
    rd->peers_part = 2;
    return 0;
}

/* peer, then messages and bytes sent, received and sent in all-to-alls */
int peer_row(struct reader *rd)
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
int files_figure(struct reader *rd)
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
int file_row(struct reader *rd)
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

int timeline_line(struct reader *rd)
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

int threads_line(struct reader *rd)
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
int paths_block_short(struct reader *rd)
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
    /* one tree per thread, in the order of the thread numbers (a second
     * tree of a thread was added to the first) */
    if (r->ntrees > 0 && thread <= r->trees[r->ntrees - 1].thread)
        return fail_at(rd, p + 7, thread == r->trees[r->ntrees - 1].thread
                       ? "a second tree of thread %d in rank %d"
                       : "thread %d's tree after thread %d's (in rank %d)",
                       thread, thread == r->trees[r->ntrees - 1].thread
                       ? r->rank : r->trees[r->ntrees - 1].thread, r->rank);
    struct kv_tree *t = kv_rank_add_tree(r);
    t->thread = thread;
    t->expected = n;
    t->folded = folded;
    struct kv_run *run = rd->run;
    size_t k = 0;
    while (k < run->npath_counts && run->path_counts[k].thread != thread)
        k++;
    if (k == run->npath_counts) {
        KM_GROW(run->path_counts, run->cappath_counts, k + 1);
        run->path_counts[run->npath_counts++] =
            (struct kv_thread_counts){ thread, 0 };
    }
    rd->thread_counts = &run->path_counts[k].counts;
    rd->root_elapsed = 0;
    return 0;
}

/* a exceeds b beyond the rounding of their printed digits (KM_output
 * writes 8 significant digits: equal figures may differ in the last) */
static bool exceeds(double a, double b)
{
    return a > b * (1 + 1e-6) && a - b > 1e-9;
}

/* The longest time a path may take: 31 years (more is a damaged file,
 * and a time in whole microseconds or nanoseconds must fit 64 bits). */
#define PATH_MAX_SECONDS 1e9

/* What a path row says against itself, its parent, its siblings so far
 * and the rank's total (the routine table's rows are checked so too, but
 * paths are summed over ranks and down the tree, shown as shares of the
 * run, folded into microseconds: a contradiction here is an error). */
static int check_path(struct reader *rd, const struct fields *fs,
                      const struct kv_tree *t, const struct kv_path *p)
{
    const struct kv_rank *r = &rd->run->ranks[rd->rix];
    static const char *const what[] = { "elapsed", "net" };
    const double v[] = { p->elapsed, p->net };
    for (int k = 0; k < 2; k++) {
        if (v[k] < 0)
            return fail_at(rd, fs->s[4 + k], "%s time %g s, below 0",
                           what[k], v[k]);
        if (v[k] > PATH_MAX_SECONDS)
            return fail_at(rd, fs->s[4 + k], "%s time %g s: more than 31 "
                           "years", what[k], v[k]);
    }
    if (exceeds(p->net, p->elapsed))
        return fail_at(rd, fs->s[5], "net time %g s above the path's elapsed "
                       "time %g s", p->net, p->elapsed);
    if (p->parent >= 0) {
        const struct kv_path *q = &t->paths[p->parent];
        if (exceeds(p->elapsed, q->elapsed))
            return fail_at(rd, fs->s[4], "elapsed time %g s above its parent's "
                           "(path %d) %g s", p->elapsed, p->parent + 1,
                           q->elapsed);
        if (exceeds(rd->kids_elapsed[p->parent], q->elapsed))
            return fail_at(rd, fs->s[4], "the paths under path %d take %g s "
                           "so far, more than its %g s", p->parent + 1,
                           rd->kids_elapsed[p->parent], q->elapsed);
    } else if (t->thread == 0 && isfinite(r->fig[KV_F_TOTAL]) &&
               exceeds(rd->root_elapsed, r->fig[KV_F_TOTAL]))
        return fail_at(rd, fs->s[4], "the paths of thread 0 outside every "
                       "region take %g s so far, more than the rank's total "
                       "time %g s", rd->root_elapsed,
                       r->fig[KV_F_TOTAL]);
    if (p->count > UINT64_MAX - *rd->thread_counts)
        return fail_at(rd, fs->s[3], "the counts of thread %d's paths, over "
                       "the ranks read so far, add up past 2^64 - 1 (kmview "
                       "sums them by path)", t->thread);
    return 0;
}

/* path, parent, region, counts, elapsed, net, Est(%), and from format 7
 * Fold */
static int path_row(struct reader *rd)
{
    struct kv_rank *r = cur(rd);
    struct fields fs;
    split(rd->line, NULL, &fs);
    if (r->ntrees == 0)
        return fail_at(rd, skip_blanks(rd->line), "a path row before its "
                       "tree's heading");
    struct kv_tree *t = &r->trees[r->ntrees - 1];
    int want = rd->version >= 7 ? 8 : 7;
    if (fs.n != want)
        return fail_at(rd, fs.n > want ? fs.s[want] : skip_blanks(rd->line),
                       "a path row holds path, parent, region, counts, "
                       "elapsed, net%s Est(%%)%s", want == 8 ? "," : " and",
                       want == 8 ? " and Fold" : "");
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
    if (want == 8) {
        const char *f = fs.s[7];
        if (fs.len[7] != 1 || !strchr("-rm", f[0]))
            return fail_at(rd, f, "Fold: '%.*s' is not -, r or m",
                           (int)fs.len[7], f);
        p.fold = f[0] == 'r' ? KV_FOLD_RECURSION
               : f[0] == 'm' ? KV_FOLD_MAX : KV_FOLD_NONE;
    }
    KM_GROW(rd->kids_elapsed, rd->capkids, t->npaths + 1);
    rd->kids_elapsed[t->npaths] = 0;
    *(p.parent >= 0 ? &rd->kids_elapsed[p.parent] : &rd->root_elapsed) +=
        p.elapsed;
    if (check_path(rd, &fs, t, &p))
        return -1;
    *rd->thread_counts += p.count;
    *kv_tree_add_path(t) = p;
    return 0;
}

int paths_line(struct reader *rd)
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
