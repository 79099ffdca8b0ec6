/*
 * km_format.c — the text of a KM_output file (doc/KM_output.md).
 *
 * Owns the header lines, the Prediction section (heading, fixed-width rows
 * and figures), one rank's section, the End line, and the growable text
 * they are built in.
 *
 * Must never: read or change the live measurement state (it only sees
 * struct km_report snapshots), call malloc (the text may be built inside a
 * signal handler: km_mem), call anything that takes a lock (stdio streams,
 * qsort, localtime), or print.
 */
#include "runtime/km_internal.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
        size_t ncap = t->cap ? t->cap * 2 : 65536;
        while (ncap - t->len <= (size_t)n)
            ncap *= 2;
        char *p = km_mem_realloc(t->p, ncap);
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
    km_mem_free(t->p);
    *t = (struct km_text){ 0 };
}

/* ------------------------------------------------------------------------ */
/* Header and Prediction                                                     */

static double secs(const struct km_report *rep, km_tick t)
{
    return (double)t * rep->clock.seconds_per_tick;
}

void km_program_name(char *buf, size_t size)
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
    char prog[1024];
    km_program_name(prog, sizeof prog);
    km_text_printf(t, "! kmtool KM_output 1\n");
    km_text_printf(t, "! Program    : %s\n", prog);
    km_text_printf(t, "! Started    : %s\n", rep->started);
    km_text_printf(t, "! Written at : %s\n", rep->event);
    km_text_printf(t, "! Clock      : %s, %.2e s per read\n", rep->clock.name,
                   rep->clock.read_cost);
    if (rank_only >= 0)
        km_text_printf(t, "! Ranks      : %d, this file holds rank %d only "
                       "(MPI not finalized)\n", rep->nranks, rank_only);
    else
        km_text_printf(t, "! Ranks      : %d\n", rep->nranks);
    km_text_printf(t, "!\n");
}

void km_format_prediction_heading(struct km_text *t)
{
    km_text_printf(t, "! ===== Prediction =====\n");
    km_text_printf(t, "!%7s %15s %15s %15s %15s\n", "Rank", "Total(s)",
                   "MPI(s)", "Redundant(s)", "Parallel(s)");
}

/* snprintf's length, or 0 when it failed or did not fit. */
static size_t fitted(int n, size_t size)
{
    return n < 0 || (size_t)n >= size ? 0 : (size_t)n;
}

size_t km_format_prediction_row(char *buf, size_t size, int rank,
                                const double tcrp[4])
{
    return fitted(snprintf(buf, size, "%8d %15.7e %15.7e %15.7e %15.7e\n",
                           rank, tcrp[0], tcrp[1], tcrp[2], tcrp[3]), size);
}

size_t km_format_prediction_figures(char *buf, size_t size, double t1pe,
                                    double speedup, double efficiency)
{
    return fitted(snprintf(buf, size,
                           "%-15.7e ! Predicted one-PE time T_1pe\n"
                           "%-15.7e ! Predicted speedup\n"
                           "%-15.7e ! Predicted parallel efficiency\n",
                           t1pe, speedup, efficiency), size);
}

/* ------------------------------------------------------------------------ */
/* One rank's section                                                        */

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

/* The routines of rep in table order (km_mem; *n of them): in order of
 * first entry (`order` numbers them 1, 2, ... as they were first entered),
 * then the never-entered ones in registration order.  Linear, and no
 * qsort (which may call malloc). */
static const struct km_region **routine_order(const struct km_report *rep,
                                              int32_t *n)
{
    int32_t nroutines = 0, entered = 0;
    for (int32_t i = 0; i < rep->nreg; i++)
        if (KM_KIND_IS_ROUTINE(rep->reg[i].kind)) {
            nroutines++;
            entered += rep->reg[i].order > 0;
        }
    const struct km_region **ix =
        km_mem_alloc(((size_t)nroutines + 1) * sizeof *ix);
    *n = 0;
    if (!ix)
        return NULL;
    memset(ix, 0, ((size_t)nroutines + 1) * sizeof *ix);
    int32_t rest = entered;
    for (int32_t i = 0; i < rep->nreg; i++) {
        const struct km_region *r = &rep->reg[i];
        if (!KM_KIND_IS_ROUTINE(r->kind))
            continue;
        if (r->order > 0 && r->order <= entered && !ix[r->order - 1])
            ix[r->order - 1] = r;
        else
            ix[rest++] = r;
    }
    for (int32_t k = 0; k < nroutines; k++)   /* no holes, whatever order */
        if (ix[k])
            ix[(*n)++] = ix[k];
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
    int32_t *mem = km_mem_alloc(3 * n * sizeof *mem);
    if (!mem)
        return -1;
    memset(mem, 0, 3 * n * sizeof *mem);
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
    const struct {
        uint64_t n;
        const char *what;
    } w[] = {
        { rep->bad_out, "KM_OUT calls for regions that were not open were "
                        "ignored" },
        { rep->bad_in, "KM_IN/KM_OUT calls with an unregistered handle were "
                       "ignored" },
        { rep->lost, "region entries beyond the depth of the frame stack "
                     "were not measured" },
        { rep->bad_reg, "region registrations could not be read" },
    };
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        if (w[i].n)
            km_text_printf(t, "! Warning: %llu %s\n",
                           (unsigned long long)w[i].n, w[i].what);
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
        km_mem_free((void *)ix);
        t->failed = 1;
        return;
    }
    figure_u(t, (unsigned long long)n, "Routines");
    format_routine_table(t, rep, ix, n);
    for (int32_t k = 0; k < n; k++)
        format_locations(t, rep, &l, k + 1, ix[k]);
    km_mem_free((void *)ix);
    km_mem_free(l.first);
    format_warnings(t, rep);
}

void km_format_lost_section(struct km_text *t, int rank)
{
    km_text_printf(t, "! ===== Rank %d =====\n! Warning: this rank's results "
                   "were lost (out of memory)\n", rank);
}

void km_format_end(struct km_text *t)
{
    km_text_printf(t, "! ===== End =====\n");
}
