/*
 * km_trace.c — the trace file (TRACE_FILE_NUMBER > 0, or the environment's
 * KM_TRACE_FILE_NUMBER): where a program is, even if it hangs or is killed.
 *
 * One file per process in the working directory: KM_trace for a serial
 * program, KM_trace.<rank> for an MPI rank (the rank is taken from the
 * launcher's environment at the first event, or from KM_MPII, which
 * renames the file).  It replaces the trace of an earlier run, as the
 * original's fort.NN did.  Every line is TRACE_W bytes:
 *
 *   header     what ran, its status ("running", "results written at END",
 *              "signal 15"), the current depth
 *   stack      the open traced regions, outermost first (the first
 *              TRACE_STACK of them), rewritten at every entry and exit
 *   events     a ring of the last KM_TRACE_LINES entries and exits, each
 *              numbered; `grep -v '^!' KM_trace | sort -n` lists them in
 *              order
 *
 * The file is mapped into memory (MAP_SHARED), so every event is in the
 * kernel's page cache the moment it happens: a reader sees it at once and
 * it survives the process being killed, even by SIGKILL, with no system
 * call per event.  Where the file cannot be mapped, each line is written
 * with pwrite instead.  The size is fixed at creation: the trace is
 * bounded however long the program runs.
 *
 * Must never: grow, call malloc or stdio (events can come from a signal
 * handler's write), or disturb the program when the file cannot be made
 * (one line on stderr, then no more tracing).
 */
#include "runtime/km_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TRACE_W 128              /* bytes per line, newline included */
#define TRACE_STACK 48           /* open regions shown */
#define TRACE_LINES_DEFAULT 8192 /* events kept: a file of about 1 MB */
#define TRACE_LINES_MAX (1 << 22)

enum { L_MAGIC, L_PROGRAM, L_RANK, L_PROCESS, L_CLOCK, L_STATUS, L_DEPTH,
       L_HOWTO, L_STACK_HEAD, L_STACK };
#define L_EVENTS_HEAD (L_STACK + TRACE_STACK)
#define L_EVENTS (L_EVENTS_HEAD + 1)

static struct {
    int state;               /* 0 not started, 1 writing, -1 given up */
    int fd;
    char *map;               /* the whole file, or NULL: pwrite */
    size_t size;
    uint64_t seq;            /* events so far */
    long nlines;             /* events the ring holds */
    int rank;                /* -1: not known */
    char path[32];
} tr = { .fd = -1, .rank = -1 };

/* Line `index` of the file: the n bytes of `text` (control characters
 * blanked), padded with blanks to the fixed width. */
static void put_raw(int index, const char *text, int n)
{
    char line[TRACE_W];
    if (n > TRACE_W - 1)
        n = TRACE_W - 1;
    for (int i = 0; i < n; i++)
        line[i] = (unsigned char)text[i] < ' ' ? ' ' : text[i];
    memset(line + n, ' ', (size_t)(TRACE_W - 1 - n));
    line[TRACE_W - 1] = '\n';
    size_t at = (size_t)index * TRACE_W;
    if (at + TRACE_W > tr.size)
        return;
    if (tr.map) {
        memcpy(tr.map + at, line, TRACE_W);
    } else if (pwrite(tr.fd, line, TRACE_W, (off_t)at) != TRACE_W) {
        km_complain("trace %s: %s; tracing stops", tr.path,
                    errno ? strerror(errno) : "short write");
        tr.state = -1;
    }
}

static void put_line(int index, const char *fmt, ...) KM_PRINTF_LIKE(2, 3);
static void put_line(int index, const char *fmt, ...)
{
    char line[TRACE_W + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    put_raw(index, line, n < 0 ? 0 : n);
}

/* Events are frequent, so their lines are put together by hand: printf's
 * formatting (a double above all) cost most of an event.  A text being
 * built: `buf`, `n` bytes used, never more than TRACE_W. */
struct text {
    char buf[TRACE_W];
    int n;
};

static void add_char(struct text *t, char c)
{
    if (t->n < TRACE_W)
        t->buf[t->n++] = c;
}

static void add_str(struct text *t, const char *s)
{
    while (*s)
        add_char(t, *s++);
}

/* v in decimal, after a minus sign if `neg`, right-aligned in `width`
 * columns (wider if it needs more), `pad` filling the left. */
static void add_digits(struct text *t, unsigned long long v, int neg,
                       int width, char pad)
{
    char d[24];
    int k = 0;
    do {
        d[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (neg)
        d[k++] = '-';
    for (int i = k; i < width; i++)
        add_char(t, pad);
    while (k > 0)
        add_char(t, d[--k]);
}

static void add_int(struct text *t, long long v, int width)
{
    unsigned long long magnitude = v < 0 ? 0ULL - (unsigned long long)v
                                         : (unsigned long long)v;
    add_digits(t, magnitude, v < 0, width, ' ');
}

/* Seconds with six decimals, right-aligned in `width` columns. */
static void add_seconds(struct text *t, double s, int width)
{
    unsigned long long us = s > 0 ? (unsigned long long)(s * 1e6 + 0.5) : 0;
    add_digits(t, us / 1000000, 0, width - 7, ' ');
    add_char(t, '.');
    add_digits(t, us % 1000000, 0, 6, '0');
}

/* The rank the launcher gave this process, or -1. */
static int launcher_rank(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                        "PMI_RANK", "MV2_COMM_WORLD_RANK",
                                        "SLURM_PROCID" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *s = getenv(vars[i]);
        char *end;
        if (s && *s) {
            long v = strtol(s, &end, 10);
            if (*end == '\0' && v >= 0 && v < 100000000)
                return (int)v;
        }
    }
    return -1;
}

static long ring_lines(void)
{
    const char *s = getenv("KM_TRACE_LINES");
    if (!s || !*s)
        return TRACE_LINES_DEFAULT;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 16 || v > TRACE_LINES_MAX) {
        km_complain("ignoring KM_TRACE_LINES=%.40s (16 to %d)", s,
                    TRACE_LINES_MAX);
        return TRACE_LINES_DEFAULT;
    }
    return v;
}

static void trace_path(char *buf, size_t size, int rank)
{
    if (rank >= 0)
        snprintf(buf, size, "KM_trace.%d", rank);
    else
        snprintf(buf, size, "KM_trace");
}

static void put_rank_line(int nranks)
{
    if (tr.rank < 0)
        put_line(L_RANK, "! Rank       : not known (serial, or MPI_INIT not "
                 "yet instrumented)");
    else if (nranks > 0)
        put_line(L_RANK, "! Rank       : %d of %d", tr.rank, nranks);
    else
        put_line(L_RANK, "! Rank       : %d", tr.rank);
}

static void write_skeleton(const struct km_trace_run *run)
{
    char prog[TRACE_W];
    km_program_name(prog, sizeof prog);
    put_line(L_MAGIC, "! kmtool KM_trace 1");
    put_line(L_PROGRAM, "! Program    : %s", prog);
    put_rank_line(0);
    put_line(L_PROCESS, "! Process    : %ld", (long)getpid());
    put_line(L_CLOCK, "! Clock      : %s", run->clock_name);
    put_line(L_STATUS, "! Status     : running");
    put_line(L_DEPTH, "! Depth      : 0");
    put_line(L_HOWTO, "! Events     : the last %ld, in a ring; in order: "
             "grep -v '^!' <file> | sort -n", tr.nlines);
    put_line(L_STACK_HEAD, "! Open regions, outermost first (depth, region):");
    for (int i = 0; i < TRACE_STACK; i++)
        put_line(L_STACK + i, "!");
    put_line(L_EVENTS_HEAD, "! ===== Events =====  number, seconds since "
             "start, IN/OUT, depth, region");
    for (long i = 0; i < tr.nlines && tr.state >= 0; i++)
        put_line((int)(L_EVENTS + i), "%s", "");
}

static void give_up(const char *what)
{
    km_complain("trace %s: %s: %s; no trace is written", tr.path, what,
                strerror(errno));
    if (tr.fd >= 0)
        close(tr.fd);
    tr.fd = -1;
    tr.state = -1;
}

static void start(const struct km_trace_run *run)
{
    tr.state = 1;
    tr.rank = launcher_rank();
    tr.nlines = ring_lines();
    trace_path(tr.path, sizeof tr.path, tr.rank);
    tr.size = (size_t)(L_EVENTS + tr.nlines) * TRACE_W;
    tr.fd = open(tr.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (tr.fd < 0) {
        give_up("cannot create it");
        return;
    }
    if (ftruncate(tr.fd, (off_t)tr.size) != 0) {
        give_up("cannot size it");
        return;
    }
    void *m = mmap(NULL, tr.size, PROT_READ | PROT_WRITE, MAP_SHARED, tr.fd, 0);
    tr.map = m == MAP_FAILED ? NULL : m;
    write_skeleton(run);
}

/* "NAME (file:line)" or "KIND line L in NAME: statement". */
static void describe(struct text *t, const struct km_region *r,
                     const struct km_region *routine)
{
    static const char *const kinds[] = { "DO", "CALL", "MPI", "IO", "USER" };
    if (KM_KIND_IS_ROUTINE(r->kind)) {
        add_str(t, r->name ? r->name : "?");
        add_str(t, " (");
        add_str(t, r->file ? r->file : "?");
        add_str(t, ":");
        add_int(t, r->line, 0);
        add_str(t, ")");
        return;
    }
    add_str(t, r->kind >= KM_K_DO && r->kind <= KM_K_USER
               ? kinds[r->kind - KM_K_DO] : "OTHER");
    add_str(t, " line ");
    add_int(t, r->line, 0);
    add_str(t, " in ");
    add_str(t, routine && routine->name ? routine->name : "?");
    add_str(t, ": ");
    add_str(t, r->text ? r->text : "");
}

void km_trace_event(const struct km_trace_run *run, const struct km_region *r,
                    const struct km_region *routine, int in, int depth,
                    km_tick now)
{
    if (tr.state == 0)
        start(run);
    if (tr.state < 0)
        return;
    struct text what = { .n = 0 };
    describe(&what, r, routine);
    double secs = (double)(now - run->t0) * run->seconds_per_tick;
    struct text ev = { .n = 0 };          /* "%10llu %13.6f %-3s %5d %s" */
    add_digits(&ev, ++tr.seq, 0, 10, ' ');
    add_str(&ev, " ");
    add_seconds(&ev, secs, 13);
    add_str(&ev, in ? " IN  " : " OUT ");
    add_int(&ev, depth, 5);
    add_str(&ev, " ");
    for (int i = 0; i < what.n; i++)
        add_char(&ev, what.buf[i]);
    long slot = (long)((tr.seq - 1) % (uint64_t)tr.nlines);
    put_raw((int)(L_EVENTS + slot), ev.buf, ev.n);
    if (depth >= 1 && depth <= TRACE_STACK) {
        struct text st = { .n = 0 };      /* "! %5d %s", or "!" */
        add_str(&st, "!");
        if (in) {
            add_str(&st, " ");
            add_int(&st, depth, 5);
            add_str(&st, " ");
            for (int i = 0; i < what.n; i++)
                add_char(&st, what.buf[i]);
        }
        put_raw(L_STACK + depth - 1, st.buf, st.n);
    }
    struct text dl = { .n = 0 };
    add_str(&dl, "! Depth      : ");
    add_int(&dl, in ? depth : depth - 1, 0);
    put_raw(L_DEPTH, dl.buf, dl.n);
}

void km_trace_rank(int rank, int nranks)
{
    if (tr.state <= 0)
        return;
    if (rank != tr.rank) {
        char path[sizeof tr.path];
        trace_path(path, sizeof path, rank);
        if (rename(tr.path, path) == 0)
            memcpy(tr.path, path, sizeof path);
        tr.rank = rank;
    }
    put_rank_line(nranks);
}

void km_trace_status(const char *status)
{
    if (tr.state > 0)
        put_line(L_STATUS, "! Status     : %s", status);
}
