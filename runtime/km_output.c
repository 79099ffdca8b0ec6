/*
 * km_output.c — the KM_output file (doc/KM_output.md).
 *
 * Owns the text of the file (header, Prediction section, one rank's
 * section, end line), the choice of KM_output.NNN and the atomic write:
 * the whole file goes to a temporary file in the same directory, which is
 * then linked to the lowest free name (EEXIST: try the next), so a file is
 * either whole or absent and another run's file is never overwritten.  For
 * MPI programs it also owns the protocol by which rank 0 collects the other
 * ranks' sections, one rank at a time, through struct km_mpi_ops.
 *
 * Must never: call MPI directly, read or change the live measurement state
 * (it only sees struct km_report snapshots), print to standard output,
 * leave a partial KM_output.NNN, or print more than one line on error.
 */
#include "runtime/km_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KM_MAX_FILES 1000
#define KM_CHUNK (1u << 20)       /* bytes per message of a rank's section */

/* ------------------------------------------------------------------------ */
/* Text                                                                      */

void km_text_printf(struct km_text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        size_t room = t->cap - t->len;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if ((size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t ncap = t->cap ? t->cap * 2 : 8192;
        while (ncap - t->len <= (size_t)n)
            ncap *= 2;
        char *p = realloc(t->p, ncap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->p = p;
        t->cap = ncap;
    }
}

void km_text_free(struct km_text *t)
{
    free(t->p);
    *t = (struct km_text){ 0 };
}

/* ------------------------------------------------------------------------ */
/* Formatting                                                                */

static double secs(const struct km_report *rep, km_tick t)
{
    return (double)t * rep->clock.seconds_per_tick;
}

/* The first argument of the command line, or "unknown". */
static void program_name(char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0 || buf[0] == '\0') {
        snprintf(buf, size, "unknown");
        return;
    }
    buf[n] = '\0';               /* the first argument ends at its NUL */
}

void km_format_header(struct km_text *t, const struct km_report *rep,
                      int rank_only)
{
    char prog[1024], when[32] = "unknown";
    struct tm tm;
    program_name(prog, sizeof prog);
    if (localtime_r(&rep->started, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    km_text_printf(t, "! kmtool KM_output 1\n");
    km_text_printf(t, "! Program    : %s\n", prog);
    km_text_printf(t, "! Started    : %s\n", when);
    km_text_printf(t, "! Written at : %s\n", rep->event);
    km_text_printf(t, "! Clock      : %s\n", rep->clock.name);
    if (rank_only >= 0)
        km_text_printf(t, "! Ranks      : %d, this file holds rank %d only "
                       "(MPI not finalized)\n", rep->nranks, rank_only);
    else
        km_text_printf(t, "! Ranks      : %d\n", rep->nranks);
    km_text_printf(t, "!\n");
}

void km_format_prediction(struct km_text *t, const double *tcrp, int nranks)
{
    double min_r = 0, sum_p = 0, max_t = 0;
    km_text_printf(t, "! ===== Prediction =====\n");
    km_text_printf(t, "!%7s %15s %15s %15s %15s\n", "Rank", "Total(s)",
                   "MPI(s)", "Redundant(s)", "Parallel(s)");
    for (int p = 0; p < nranks; p++) {
        const double *v = tcrp + 4 * p;
        km_text_printf(t, "%8d %15.7e %15.7e %15.7e %15.7e\n", p, v[0], v[1],
                       v[2], v[3]);
        if (p == 0 || v[2] < min_r)
            min_r = v[2];
        if (p == 0 || v[0] > max_t)
            max_t = v[0];
        sum_p += v[3];
    }
    double t1 = min_r + sum_p;
    double speedup = max_t > 0 ? t1 / max_t : 0;
    km_text_printf(t, "%-15.7e ! Predicted one-PE time T_1pe\n", t1);
    km_text_printf(t, "%-15.7e ! Predicted speedup\n", speedup);
    km_text_printf(t, "%-15.7e ! Predicted parallel efficiency\n",
                   nranks > 0 ? speedup / nranks : 0);
}

static void figure_e(struct km_text *t, double v, const char *name)
{
    km_text_printf(t, "%-15.7e ! %s\n", v, name);
}

static void figure_u(struct km_text *t, unsigned long long v, const char *name)
{
    km_text_printf(t, "%-15llu ! %s\n", v, name);
}

static const char *count_text(char *buf, size_t size, const struct km_region *r)
{
    int plus = r->extrap && r->count > r->measured;
    snprintf(buf, size, "%s%llu", plus ? "+" : "",
             (unsigned long long)r->count);
    return buf;
}

static const char *kind_label(int kind)
{
    switch (kind) {
    case KM_K_DO:   return "DO";
    case KM_K_CALL: return "CALL";
    case KM_K_MPI:  return "MPI";
    case KM_K_IO:   return "IO";
    case KM_K_USER: return "USER";
    default:        return "OTHER";
    }
}

/* Statement text on one line: control characters become blanks. */
static void add_statement(struct km_text *t, const char *s)
{
    size_t start = t->len;
    km_text_printf(t, "%s\n", s);
    if (t->failed)
        return;
    for (size_t i = start; i + 1 < t->len; i++)
        if ((unsigned char)t->p[i] < ' ')
            t->p[i] = ' ';
}

/* Routines in table order: first-entry order, then never-entered ones in
 * registration order. */
static int by_first_entry(const void *pa, const void *pb)
{
    const struct km_region *a = *(const struct km_region *const *)pa;
    const struct km_region *b = *(const struct km_region *const *)pb;
    int32_t oa = a->order > 0 ? a->order : INT32_MAX;
    int32_t ob = b->order > 0 ? b->order : INT32_MAX;
    if (oa != ob)
        return oa < ob ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* The routines of rep in table order (malloc'd; *n of them). */
static const struct km_region **routine_order(const struct km_report *rep,
                                              int32_t *n)
{
    const struct km_region **ix = malloc(((size_t)rep->nreg + 1) * sizeof *ix);
    *n = 0;
    if (!ix)
        return NULL;
    for (int32_t i = 0; i < rep->nreg; i++)
        if (KM_KIND_IS_ROUTINE(rep->reg[i].kind))
            ix[(*n)++] = &rep->reg[i];
    qsort(ix, (size_t)*n, sizeof *ix, by_first_entry);
    return ix;
}

static void format_routine_table(struct km_text *t, const struct km_report *rep,
                                 const struct km_region **ix, int32_t n)
{
    char cnt[32];
    km_text_printf(t, "!%7s %-22s %15s %15s %10s %15s %15s\n", "No", "Routine",
                   "Elapsed(s)", "Net(s)", "Counts", "MPI(s)", "IO(s)");
    for (int32_t k = 0; k < n; k++) {
        const struct km_region *r = ix[k];
        km_text_printf(t, "%8d %-22s %15.7e %15.7e %10s %15.7e %15.7e\n",
                       (int)k + 1, r->name, secs(rep, r->elapsed),
                       secs(rep, r->excl), count_text(cnt, sizeof cnt, r),
                       secs(rep, r->mpi), secs(rep, r->io));
    }
    snprintf(cnt, sizeof cnt, "%s%llu", rep->extrapolated ? "+" : "",
             (unsigned long long)rep->routine_counts);
    km_text_printf(t, "!%7s %-22s %15s %15.7e %10s %15.7e %15.7e\n", "",
                   "Total", "", secs(rep, rep->net), cnt, secs(rep, rep->mpi),
                   secs(rep, rep->io));
}

/* Each routine's locations in registration order, as linked lists over
 * region indices: first[id] and next[i] hold index + 1, 0 ends a list. */
struct loc_lists {
    int32_t *first, *next, *count;
};

static int make_loc_lists(struct loc_lists *l, const struct km_report *rep)
{
    size_t n = (size_t)rep->nreg + 1;
    int32_t *mem = calloc(3 * n, sizeof *mem);
    if (!mem)
        return -1;
    l->first = mem;
    l->next = mem + n;
    l->count = mem + 2 * n;
    for (int32_t i = rep->nreg - 1; i >= 0; i--) {
        const struct km_region *r = &rep->reg[i];
        if (KM_KIND_IS_ROUTINE(r->kind))
            continue;
        l->next[i] = l->first[r->routine];
        l->first[r->routine] = i + 1;
        l->count[r->routine]++;
    }
    return 0;
}

static void format_locations(struct km_text *t, const struct km_report *rep,
                             const struct loc_lists *l, int32_t no,
                             const struct km_region *routine)
{
    char cnt[32];
    if (l->count[routine->id] == 0)
        return;
    km_text_printf(t, "!\n! Routine %d %s, file %s, line %d, %d locations\n",
                   (int)no, routine->name, routine->file, routine->line,
                   (int)l->count[routine->id]);
    km_text_printf(t, "!%7s %-5s %6s %15s %10s %s\n", "No", "Kind", "Line",
                   "Elapsed(s)", "Counts", "Statement");
    int k = 0;
    for (int32_t i = l->first[routine->id]; i; i = l->next[i - 1]) {
        const struct km_region *r = &rep->reg[i - 1];
        km_text_printf(t, "%8d %-5s %6d %15.7e %10s ", ++k, kind_label(r->kind),
                       r->line, secs(rep, r->elapsed),
                       count_text(cnt, sizeof cnt, r));
        add_statement(t, r->text);
    }
}

static void format_warnings(struct km_text *t, const struct km_report *rep)
{
    if (rep->bad_out)
        km_text_printf(t, "! Warning: %llu KM_OUT calls for regions that were "
                       "not open were ignored\n",
                       (unsigned long long)rep->bad_out);
    if (rep->bad_in)
        km_text_printf(t, "! Warning: %llu KM_IN/KM_OUT calls with an "
                       "unregistered handle were ignored\n",
                       (unsigned long long)rep->bad_in);
    if (rep->lost)
        km_text_printf(t, "! Warning: %llu region entries beyond the depth of "
                       "the frame stack were not measured\n",
                       (unsigned long long)rep->lost);
    if (rep->bad_reg)
        km_text_printf(t, "! Warning: %llu region registrations could not be "
                       "read\n", (unsigned long long)rep->bad_reg);
}

void km_format_section(struct km_text *t, const struct km_report *rep)
{
    double cost = rep->clock.read_cost;
    km_text_printf(t, "! ===== Rank %d =====\n", rep->rank);
    km_text_printf(t, "%04d %-10d ! Processors and Rank\n", rep->nranks,
                   rep->rank);
    figure_e(t, secs(rep, rep->total), "Total time");
    figure_u(t, rep->routine_counts, "Counts of routines");
    figure_u(t, rep->clock_reads, "Counts of time get function");
    figure_e(t, cost, "Time get function cost(1 call)");
    figure_e(t, cost * (double)rep->clock_reads,
             "Time get function cost (Total)");
    figure_u(t, (unsigned long long)rep->nwrites, "Output counts by KM_writ");
    figure_e(t, secs(rep, rep->mpi), "MPI time");
    figure_e(t, secs(rep, rep->io), "I/O time");
    figure_e(t, secs(rep, rep->outside), "Time outside routines");
    figure_e(t, secs(rep, rep->unmeasured), "Time in unmeasured callees");

    int32_t n;
    struct loc_lists l;
    const struct km_region **ix = routine_order(rep, &n);
    if (!ix || make_loc_lists(&l, rep)) {
        free((void *)ix);
        t->failed = 1;
        return;
    }
    figure_u(t, (unsigned long long)n, "Routines");
    format_routine_table(t, rep, ix, n);
    for (int32_t k = 0; k < n; k++)
        format_locations(t, rep, &l, k + 1, ix[k]);
    free((void *)ix);
    free(l.first);
    format_warnings(t, rep);
}

static const char end_line[] = "! ===== End =====\n";

void km_format_end(struct km_text *t)
{
    km_text_printf(t, "%s", end_line);
}

/* ------------------------------------------------------------------------ */
/* Files                                                                     */

struct out_file {
    int fd;
    int failed;              /* a write failed; `why` says which */
    char tmp[64];
    char why[160];
};

static void fail(struct out_file *f, const char *what, const char *name)
{
    if (!f->failed)
        snprintf(f->why, sizeof f->why, "%s %s: %s", what, name,
                 strerror(errno));
    f->failed = 1;
}

static int open_temp(struct out_file *f)
{
    static unsigned seq;
    *f = (struct out_file){ .fd = -1 };
    for (int tries = 0; tries < 100; tries++) {
        snprintf(f->tmp, sizeof f->tmp, ".KM_output.tmp.%ld.%u",
                 (long)getpid(), seq++);
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (f->fd >= 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    fail(f, "create", f->tmp);
    return -1;
}

static void write_out(struct out_file *f, const char *p, size_t n)
{
    while (n > 0 && !f->failed) {
        ssize_t w = write(f->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            fail(f, "write", f->tmp);
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static void close_temp(struct out_file *f)
{
    if (f->fd >= 0 && close(f->fd) != 0)
        fail(f, "close", f->tmp);
    f->fd = -1;
}

static void file_name(char *buf, size_t size, int nnn)
{
    snprintf(buf, size, "KM_output.%03d", nnn);
}

/* Is KM_output.<name->nnn> still the file this process wrote? */
static int still_ours(const struct km_outname *name)
{
    char path[32];
    struct stat sb;
    if (name->nnn < 0)
        return 0;
    file_name(path, sizeof path, name->nnn);
    return stat(path, &sb) == 0 && sb.st_dev == name->dev &&
           sb.st_ino == name->ino && sb.st_size == name->size &&
           sb.st_mtim.tv_sec == name->mtime.tv_sec &&
           sb.st_mtim.tv_nsec == name->mtime.tv_nsec;
}

/* Take the lowest free KM_output.NNN for the temporary file: link() fails
 * with EEXIST on a taken name, so a file is never overwritten, even when
 * several processes race.  0 with name->nnn set, else -1 (f->why set). */
static int link_lowest(struct out_file *f, struct km_outname *name)
{
    char path[32];
    for (int n = 0; n < KM_MAX_FILES; n++) {
        file_name(path, sizeof path, n);
        if (link(f->tmp, path) == 0) {
            name->nnn = n;
            return 0;
        }
        if (errno == EEXIST)
            continue;
        if (errno == EPERM || errno == ENOSYS || errno == EOPNOTSUPP) {
            /* no hard links here: claim the name, then replace it */
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd < 0 && errno == EEXIST)
                continue;
            if (fd >= 0) {
                close(fd);
                if (rename(f->tmp, path) == 0) {
                    name->nnn = n;
                    return 0;
                }
                unlink(path);
            }
        }
        fail(f, "link to", path);
        return -1;
    }
    errno = EEXIST;
    fail(f, "choose a name: KM_output.000 to", "KM_output.999");
    return -1;
}

/* Give the closed temporary file its final name (see km_write_file);
 * remove it in every case.  Prints the one error line.  0 on success. */
static int place(struct out_file *f, struct km_outname *name)
{
    char path[32];
    struct stat sb;
    if (!f->failed && still_ours(name)) {    /* this run's file: replace */
        file_name(path, sizeof path, name->nnn);
        if (rename(f->tmp, path) != 0)
            fail(f, "rename to", path);
    } else if (!f->failed) {
        link_lowest(f, name);
    }
    unlink(f->tmp);                  /* after link(), or a failed rename */
    if (f->failed) {
        fprintf(stderr, "kmtool: KM_output not written: %s\n", f->why);
        return -1;
    }
    file_name(path, sizeof path, name->nnn);
    if (stat(path, &sb) == 0) {
        name->dev = sb.st_dev;
        name->ino = sb.st_ino;
        name->size = sb.st_size;
        name->mtime = sb.st_mtim;
    }
    return 0;
}

int km_write_file(const char *text, size_t len, struct km_outname *name)
{
    struct out_file f;
    if (open_temp(&f)) {
        fprintf(stderr, "kmtool: KM_output not written: %s\n", f.why);
        return -1;
    }
    write_out(&f, text, len);
    close_temp(&f);
    return place(&f, name);
}

/* ------------------------------------------------------------------------ */
/* Gathering the ranks (MPI_FINALIZE)                                        */

static void lost_section(struct km_text *t, int rank)
{
    km_text_printf(t, "! ===== Rank %d =====\n! Warning: this rank's results "
                   "were lost (out of memory)\n", rank);
}

/* Rank != 0: wait to be asked, then send the length and the text. */
static int send_section(const struct km_mpi_ops *ops, const struct km_text *s,
                        int rank)
{
    struct km_text lost = { 0 };
    const struct km_text *x = s;
    if (s->failed) {
        lost_section(&lost, rank);
        x = &lost;
    }
    int token;
    uint64_t len = x->failed ? 0 : x->len;
    int rc = ops->recv(&token, sizeof token, 0) ||
             ops->send(&len, sizeof len, 0);
    for (uint64_t off = 0; !rc && off < len; off += KM_CHUNK) {
        size_t n = len - off < KM_CHUNK ? (size_t)(len - off) : KM_CHUNK;
        rc = ops->send(x->p + off, n, 0);
    }
    km_text_free(&lost);
    return rc;
}

/* Rank 0: ask rank `src` for its section and copy it to the file in
 * chunks, so that no other rank's whole section is ever in memory. */
static int copy_section(const struct km_mpi_ops *ops, struct out_file *f,
                        char *buf, int src)
{
    int token = 1;
    uint64_t len;
    if (ops->send(&token, sizeof token, src) || ops->recv(&len, sizeof len, src))
        return -1;
    for (uint64_t off = 0; off < len; off += KM_CHUNK) {
        size_t n = len - off < KM_CHUNK ? (size_t)(len - off) : KM_CHUNK;
        if (ops->recv(buf, n, src))
            return -1;
        write_out(f, buf, n);
    }
    return 0;
}

int km_write_gathered(const struct km_mpi_ops *ops, const struct km_report *rep,
                      const struct km_text *section, struct km_outname *name)
{
    int rank = rep->rank, size = rep->nranks;
    if (ops->begin()) {
        fprintf(stderr, "kmtool: KM_output not written: cannot set up MPI "
                "communication\n");
        return -1;
    }
    /* Rank 0 says whether it can write at all, so that every rank takes
     * the same path through the collectives below. */
    struct out_file f = { .fd = -1 };
    int have_temp = 0;
    double *tcrp = NULL;
    char *buf = NULL;
    int ok = 1;
    if (rank == 0) {
        tcrp = malloc(4 * (size_t)size * sizeof *tcrp);
        buf = malloc(KM_CHUNK);
        ok = tcrp && buf && open_temp(&f) == 0;
        have_temp = f.fd >= 0;
        if (!ok)
            fprintf(stderr, "kmtool: KM_output not written: %s\n",
                    f.failed ? f.why : "out of memory");
    }
    int rc = ops->bcast_int(&ok);
    if (rc == 0 && ok) {
        double mine[4] = { rep->t, rep->c, rep->r, rep->p };
        rc = ops->gather4(mine, tcrp);
    }
    if (rc == 0 && ok && rank != 0)
        rc = send_section(ops, section, rank);
    if (rc == 0 && ok && rank == 0) {
        struct km_text t = { 0 };
        km_format_header(&t, rep, -1);
        km_format_prediction(&t, tcrp, size);
        if (section->failed)
            lost_section(&t, 0);
        if (t.failed)
            f.failed = 1, snprintf(f.why, sizeof f.why, "out of memory");
        write_out(&f, t.p, t.len);
        write_out(&f, section->p, section->failed ? 0 : section->len);
        km_text_free(&t);
        for (int src = 1; src < size && rc == 0; src++)
            rc = copy_section(ops, &f, buf, src);
        write_out(&f, end_line, strlen(end_line));
        if (rc && !f.failed) {
            f.failed = 1;
            snprintf(f.why, sizeof f.why, "MPI communication failed");
        }
        close_temp(&f);
        ok = !f.failed;              /* the whole text is in the file */
    }
    /* The gathered file supersedes the rank-only files KM_WRIT wrote while
     * MPI was running: they go first, so that it takes the lowest free
     * name. */
    if (rc == 0)
        rc = ops->bcast_int(&ok);
    if (rc == 0 && ok) {
        if (still_ours(name)) {
            char path[32];
            file_name(path, sizeof path, name->nnn);
            unlink(path);
        }
        name->nnn = -1;
        rc = ops->barrier();
    }
    if (have_temp) {
        close_temp(&f);
        if (!ok && !f.failed) {
            f.failed = 1;
            snprintf(f.why, sizeof f.why, "MPI communication failed");
        }
        ok = place(&f, name) == 0;
    }
    if (rc == 0)
        rc = ops->bcast_int(&ok);    /* so every rank knows the outcome */
    ops->end();
    free(tcrp);
    free(buf);
    return rc == 0 && ok ? 0 : -1;
}
