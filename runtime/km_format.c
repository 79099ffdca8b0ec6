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

static double secs(const struct km_report *rep, km_time t)
{
    return (double)t * rep->clock.seconds_per_tick /
           (double)(1 << KM_SUB_BITS);
}

/* A time as printed: "~" first when it contains an estimate. */
static const char *fig(char *buf, size_t size, double v, int estimated)
{
    snprintf(buf, size, "%s%.7e", estimated ? "~" : "", v);
    return buf;
}

/* The estimated percentage of x (one decimal). */
static double percent(km_time part, km_time x)
{
    return x > 0 ? 100.0 * (double)part / (double)x : 0.0;
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
    km_text_printf(t, "! kmtool KM_output 7\n");
    km_text_printf(t, "! Program    : %s\n", prog);
    km_text_printf(t, "! Started    : %s\n", rep->started);
    km_text_printf(t, "! Written at : %s\n", rep->event);
    km_text_printf(t, "! Clock      : %s, %.2e s per read%s\n",
                   rep->clock.name, rep->clock.read_cost,
                   km_clock_is_cpu(&rep->clock)
                       ? "; every time in this file is CPU time, not "
                         "elapsed time" : "");
    km_text_printf(t, "! Overhead   : %.2e s per measured entry and exit, "
                   "%.2e s per estimated one, %.2e s inside a measured "
                   "region; taken out of every time\n", rep->cost_measured,
                   rep->cost_estimated, rep->cost_inner);
    const char *why = rep->alone ? rep->alone : "MPI not finalized";
    if (rank_only >= 0)
        km_text_printf(t, "! Ranks      : %d, this file holds rank %d only "
                       "(%s)\n", rep->nranks, rank_only, why);
    else if (rank_only == KM_RANK_UNKNOWN)
        km_text_printf(t, "! Ranks      : %d, this file holds one MPI "
                       "process only, its rank unknown (%s)\n",
                       rep->nranks, why);
    else
        km_text_printf(t, "! Ranks      : %d\n", rep->nranks);
    km_text_printf(t, "!\n");
}

void km_format_prediction_heading(struct km_text *t)
{
    km_text_printf(t, "! ===== Prediction =====\n");
}

/* The column heading comes after the note, which rank 0 writes last. */
static const char prediction_columns[] =
    "!   Rank        Total(s)     Start-up(s)          MPI(s)    "
    "Redundant(s)     Overhead(s)     Parallel(s)       Waited(s)\n";

/* snprintf's length, or 0 when it failed or did not fit. */
static size_t fitted(int n, size_t size)
{
    return n < 0 || (size_t)n >= size ? 0 : (size_t)n;
}

#define NOTE_WIDTH 100

double km_waited_share(double waited, double total, int cpu)
{
    double of = cpu ? total + waited : total;
    return of > 0 && waited > 0 ? waited / of : 0;
}

size_t km_format_prediction_note(char *buf, size_t size, int none,
                                 double waited, int cpu)
{
    char line[NOTE_WIDTH + 1];
    if (none & KM_NOPRED_LOST)
        snprintf(line, sizeof line, "! No prediction: a rank's results "
                 "were lost");
    else if (none & KM_NOPRED_MPI_UNMEASURED)
        snprintf(line, sizeof line, "! No prediction: MPI calls were not "
                 "measured in some routines (see the ranks' warnings)");
    else if (waited >= KM_WAITED_NOTE && cpu)
        snprintf(line, sizeof line, "! Ranks waited for a processor up to "
                 "%.0f%% of their time: runs took longer than these CPU "
                 "times", 100 * (waited < 1 ? waited : 1));
    else if (waited >= KM_WAITED_NOTE)
        snprintf(line, sizeof line, "! Ranks waited for a processor up to "
                 "%.0f%% of their time: T_1pe counts that as work",
                 100 * (waited < 1 ? waited : 1));
    else if (cpu)
        snprintf(line, sizeof line, "! CPU times, without MPI start-up "
                 "(MPI_INIT) and libkm: a prediction of CPU time, not of "
                 "wall time");
    else
        snprintf(line, sizeof line, "! Times without MPI start-up (MPI_INIT) "
                 "and libkm; ~ marks figures that contain estimates");
    return fitted(snprintf(buf, size, "%-*s\n%s", NOTE_WIDTH, line,
                           prediction_columns), size);
}

size_t km_format_prediction_row(char *buf, size_t size, int rank,
                                const struct km_prediction_row *row)
{
    char t[32], s[32], c[32], r[32], o[32], p[32], w[32];
    int e = row->estimated;
    return fitted(snprintf(buf, size, "%8d %16s%16s%16s%16s%16s%16s%16s\n",
                           rank, fig(t, sizeof t, row->t, 0),
                           fig(s, sizeof s, row->s, 0),
                           fig(c, sizeof c, row->c, e & KM_PRED_C),
                           fig(r, sizeof r, row->r, e & KM_PRED_R),
                           fig(o, sizeof o, row->o, e & KM_PRED_O),
                           fig(p, sizeof p, row->p, e & KM_PRED_P),
                           fig(w, sizeof w, row->w, 0)),
                  size);
}

static const char *pred_fig(char *buf, size_t size, double v, int estimated,
                            int none)
{
    if (none)
        snprintf(buf, size, "n/a");
    else
        fig(buf, size, v, estimated);
    return buf;
}

/* With the CPU clock (`cpu`) the figures are of CPU time: a ratio of
 * CPU times, which is no speedup in wall time where ranks shared a
 * processor. */
size_t km_format_prediction_figures(char *buf, size_t size, double t1pe,
                                    double speedup, double efficiency,
                                    int estimated, int none, int cpu)
{
    char a[32], b[32], c[32];
    const char *of = cpu ? " of CPU time (not of wall time)" : "";
    return fitted(snprintf(buf, size,
                           "%-16s! Predicted one-PE %stime T_1pe\n"
                           "%-16s! Predicted speedup%s\n"
                           "%-16s! Predicted parallel efficiency%s\n",
                           pred_fig(a, sizeof a, t1pe, estimated, none),
                           cpu ? "CPU " : "",
                           pred_fig(b, sizeof b, speedup, estimated, none), of,
                           pred_fig(c, sizeof c, efficiency, estimated, none),
                           of),
                  size);
}

/* ------------------------------------------------------------------------ */
/* One rank's section                                                        */

static void figure_e(struct km_text *t, const struct km_report *rep,
                     km_time v, int estimated, const char *name)
{
    char b[32];
    km_text_printf(t, "%-15s ! %s\n", fig(b, sizeof b, secs(rep, v), estimated),
                   name);
}

static void figure_u(struct km_text *t, unsigned long long v, const char *name)
{
    km_text_printf(t, "%-15llu ! %s\n", v, name);
}

static const char *count_text(char *buf, size_t size, const struct km_region *r)
{
    int plus = r->count > r->measured;
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
    case KM_K_OMP:  return "OMP";
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
    char cnt[32], el[32], net[32], mpi[32], io[32];
    km_text_printf(t, "!%7s %-22s %16s %16s %10s %16s %16s %7s\n", "No",
                   "Routine", "Elapsed(s)", "Net(s)", "Counts", "MPI(s)",
                   "IO(s)", "Est(%)");
    for (int32_t k = 0; k < n; k++) {
        const struct km_region *r = ix[k];
        km_text_printf(t, "%8d %-22s %16s %16s %10s %16s %16s %7.1f\n",
                       (int)k + 1, r->name,
                       fig(el, sizeof el, secs(rep, r->elapsed), KM_EST_EL(r)),
                       fig(net, sizeof net, secs(rep, r->excl), KM_EST_EXCL(r)),
                       count_text(cnt, sizeof cnt, r),
                       fig(mpi, sizeof mpi, secs(rep, r->mpi), r->mpi_est),
                       fig(io, sizeof io, secs(rep, r->io), r->io_est),
                       percent(r->est_el, r->elapsed));
    }
    snprintf(cnt, sizeof cnt, "%s%llu", rep->extrapolated ? "+" : "",
             (unsigned long long)rep->routine_counts);
    km_text_printf(t, "!%7s %-22s %16s %16s %10s %16s %16s %7.1f\n", "",
                   "Total", "",
                   fig(net, sizeof net, secs(rep, rep->net), rep->net_marked),
                   cnt, fig(mpi, sizeof mpi, secs(rep, rep->mpi), rep->mpi_est),
                   fig(io, sizeof io, secs(rep, rep->io), rep->io_est),
                   percent(rep->net_est, rep->net));
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
    char cnt[32], el[32];
    if (l->count[routine->id] == 0)
        return;
    km_text_printf(t, "!\n! Routine %d %s, file %s, line %d, %d locations\n",
                   (int)no, routine->name, routine->file, routine->line,
                   (int)l->count[routine->id]);
    km_text_printf(t, "!%7s %-5s %6s %16s %10s %7s %s\n", "No", "Kind", "Line",
                   "Elapsed(s)", "Counts", "Est(%)", "Statement");
    int k = 0;
    for (int32_t i = l->first[routine->id]; i; i = l->next[i - 1]) {
        const struct km_region *r = &rep->reg[i - 1];
        km_text_printf(t, "%8d %-5s %6d %16s %10s %7.1f ", ++k,
                       kind_label(r->kind), r->line,
                       fig(el, sizeof el, secs(rep, r->elapsed), KM_EST_EL(r)),
                       count_text(cnt, sizeof cnt, r),
                       percent(r->est_el, r->elapsed));
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
        { rep->lost, "region entries were not measured (no memory for "
                     "their call paths or frames)" },
        { rep->bad_reg, "region registrations could not be read" },
        { rep->lost_threads, "threads were not measured (no memory for "
                              "their frame stack): their time is in the "
                              "region that started them" },
    };
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        if (w[i].n)
            km_text_printf(t, "! Warning: %llu %s\n",
                           (unsigned long long)w[i].n, w[i].what);
    uint64_t folded = rep->folded;
    for (int32_t k = 0; k < rep->nothers; k++)
        folded += rep->others[k].folded;
    if (folded)
        km_text_printf(t, "! Warning: %llu entries went on call paths folded "
                       "at a limit (KM_PATHS_MAX paths per thread, or a "
                       "region open KM_PATHS_RECURSION times on one path): "
                       "the Paths block marks the paths that hold them\n",
                       (unsigned long long)folded);
    if (rep->mpi_unmeasured)
        km_text_printf(t, "! Warning: MPI calls were not measured in %d "
                       "routines (first: %s); no prediction\n",
                       (int)rep->mpi_unmeasured, rep->mpi_unmeasured_first);
    double total = secs(rep, rep->total);
    int cpu = km_clock_is_cpu(&rep->clock);
    double share = km_waited_share(rep->waited, total, cpu);
    if (share >= KM_WAITED_NOTE && cpu)
        km_text_printf(t, "! Warning: this rank waited for a processor %.0f%% "
                       "of its time (more ranks than processors?): its CPU "
                       "times leave that waiting out, its run took that "
                       "much longer\n", 100 * share);
    else if (share >= KM_WAITED_NOTE)
        km_text_printf(t, "! Warning: this rank waited for a processor %.0f%% "
                       "of its time (more ranks than processors?): its "
                       "times hold that waiting, estimated executions a "
                       "share of their callers' (KM_CLOCK=cpu leaves it "
                       "out)\n", 100 * share);
}

/* ---- threads ------------------------------------------------------------ */

/* One row per thread: its own totals (each thread's figures add up as the
 * rank's do). */
static void format_thread_rows(struct km_text *t, const struct km_report *rep)
{
    char tot[32], net[32], mpi[32], out[32], ovh[32];
    km_text_printf(t, "!%7s %6s %16s %16s %12s %16s %16s %16s %7s\n",
                   "Thread", "OMP", "Total(s)", "Net(s)", "Counts", "MPI(s)",
                   "Outside(s)", "Overhead(s)", "Est(%)");
    for (int32_t k = -1; k < rep->nothers; k++) {
        const struct km_report *r = k < 0 ? rep : &rep->others[k];
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%s%llu", r->extrapolated ? "+" : "",
                 (unsigned long long)r->routine_counts);
        km_text_printf(t, "%8d %6d %16s %16s %12s %16s %16s %16s %7.1f\n",
                       (int)r->thread, (int)r->omp,
                       fig(tot, sizeof tot, secs(rep, r->total), 0),
                       fig(net, sizeof net, secs(rep, r->net), r->net_marked),
                       cnt, fig(mpi, sizeof mpi, secs(rep, r->mpi), r->mpi_est),
                       fig(out, sizeof out, secs(rep, r->outside),
                           r->outside_est),
                       fig(ovh, sizeof ovh, secs(rep, r->overhead), 1),
                       percent(r->net_est, r->net));
    }
}

/* Region i (0-based) over the threads: how many ran it, the executions,
 * and the least, mean and largest elapsed time of those that did. */
struct over_threads {
    int32_t threads;
    uint64_t count;
    int plus, estimated;
    km_time min, max, sum;
};

static struct over_threads over_threads(const struct km_report *rep,
                                        int32_t i)
{
    struct over_threads o = { 0 };
    for (int32_t k = -1; k < rep->nothers; k++) {
        const struct km_report *r = k < 0 ? rep : &rep->others[k];
        if (i >= r->nreg || r->reg[i].count == 0)
            continue;
        const struct km_region *q = &r->reg[i];
        if (o.threads == 0 || q->elapsed < o.min)
            o.min = q->elapsed;
        if (o.threads == 0 || q->elapsed > o.max)
            o.max = q->elapsed;
        o.threads++;
        o.count += q->count;
        o.sum += q->elapsed;
        o.plus |= q->count > q->measured;
        o.estimated |= KM_EST_EL(q);
    }
    return o;
}

static int run_elsewhere(const struct km_report *rep, int32_t i)
{
    for (int32_t k = 0; k < rep->nothers; k++)
        if (i < rep->others[k].nreg && rep->others[k].reg[i].count > 0)
            return 1;
    return 0;
}

/* Region i's row over the threads, named `no`. */
static void thread_region_row(struct km_text *t, const struct km_report *rep,
                              int32_t i, const char *no, const char *routine)
{
    const struct km_region *q = &rep->reg[i];
    struct over_threads o = over_threads(rep, i);
    int loc = !KM_KIND_IS_ROUTINE(q->kind);
    char cnt[32], mn[32], mean[32], mx[32];
    km_time avg = o.threads ? o.sum / o.threads : 0;
    snprintf(cnt, sizeof cnt, "%s%llu", o.plus ? "+" : "",
             (unsigned long long)o.count);
    km_text_printf(t, "%10s %-22s %-5s %6d %7d %12s %16s %16s %16s %8.1f",
                   no, routine, loc ? kind_label(q->kind) : "ROUT", q->line,
                   (int)o.threads, cnt,
                   fig(mn, sizeof mn, secs(rep, o.min), o.estimated),
                   fig(mean, sizeof mean, secs(rep, avg), o.estimated),
                   fig(mx, sizeof mx, secs(rep, o.max), o.estimated),
                   percent(o.max - avg, o.max));
    if (loc) {
        km_text_printf(t, " ");
        add_statement(t, q->text);
    } else {
        km_text_printf(t, "\n");
    }
}

/* Every region some thread other than 0 ran: one row over the threads
 * (its size grows with the regions, not with threads x regions).  A
 * routine is named by its number in the table above, a location by that
 * number, a dot and its own number in the routine's block. */
static void format_thread_regions(struct km_text *t, const struct km_report *rep,
                                  const struct km_region **ix, int32_t n,
                                  const struct loc_lists *l)
{
    km_text_printf(t, "!\n! Regions run by threads other than 0, over the "
                   "threads that ran them\n");
    km_text_printf(t, "!%9s %-22s %-5s %6s %7s %12s %16s %16s %16s %8s %s\n",
                   "Region", "Routine", "Kind", "Line", "Threads", "Counts",
                   "Min(s)", "Mean(s)", "Max(s)", "Imbal(%)", "Statement");
    char no[32];
    for (int32_t k = 0; k < n; k++) {
        int32_t id = ix[k]->id;
        if (run_elsewhere(rep, id - 1)) {
            snprintf(no, sizeof no, "%d", (int)k + 1);
            thread_region_row(t, rep, id - 1, no, ix[k]->name);
        }
        int loc = 0;
        for (int32_t i = l->first[id]; i; i = l->next[i - 1]) {
            loc++;
            if (!run_elsewhere(rep, i - 1))
                continue;
            snprintf(no, sizeof no, "%d.%d", (int)k + 1, loc);
            thread_region_row(t, rep, i - 1, no, ix[k]->name);
        }
    }
}

/* What every thread did, when the rank ran more than one. */
static void format_threads(struct km_text *t, const struct km_report *rep,
                           const struct km_region **ix, int32_t n,
                           const struct loc_lists *l)
{
    if (rep->nothers == 0)
        return;
    km_text_printf(t, "!\n! ===== Threads =====\n");
    figure_u(t, (unsigned long long)rep->nothers + 1, "Threads");
    format_thread_rows(t, rep);
    format_thread_regions(t, rep, ix, n, l);
}

/* One call site's row: messages, bytes, and the histogram's non-empty
 * bins as bin:messages. */
static void message_row(struct km_text *t, const struct km_region *q,
                        const struct km_msg *m, const char *no,
                        const char *routine)
{
    km_text_printf(t, "%10s %-22s %-5s %6d %12llu %16llu %16llu", no,
                   routine, kind_label(q->kind), q->line,
                   (unsigned long long)m->messages,
                   (unsigned long long)m->sent,
                   (unsigned long long)m->received);
    for (int b = 0; b < KM_MSG_BINS; b++)
        if (m->bins[b])
            km_text_printf(t, " %d:%llu", b, (unsigned long long)m->bins[b]);
    km_text_printf(t, "\n");
}

/* The bytes every MPI call site moved (over the rank's threads), when
 * some did: a location numbered as in the Threads block. */
static void format_messages(struct km_text *t, const struct km_report *rep,
                            const struct km_region **ix, int32_t n,
                            const struct loc_lists *l)
{
    if (!rep->msg)
        return;
    unsigned long long sites = 0;
    for (int32_t i = 0; i < rep->nreg; i++)
        sites += rep->msg[i].messages > 0;
    if (!sites)
        return;
    km_text_printf(t, "!\n! ===== Messages =====\n");
    figure_u(t, sites, "Call sites");
    km_text_printf(t, "!%9s %-22s %-5s %6s %12s %16s %16s %s\n", "Region",
                   "Routine", "Kind", "Line", "Messages", "Sent(B)",
                   "Received(B)", "Sizes(bin:messages)");
    char no[32];
    for (int32_t k = 0; k < n; k++) {
        int loc = 0;
        for (int32_t i = l->first[ix[k]->id]; i; i = l->next[i - 1]) {
            loc++;
            if (i <= rep->nreg && rep->msg[i - 1].messages) {
                snprintf(no, sizeof no, "%d.%d", (int)k + 1, loc);
                message_row(t, &rep->reg[i - 1], &rep->msg[i - 1], no,
                            ix[k]->name);
            }
        }
    }
}

/* Whom the rank exchanged point-to-point messages with: its row and
 * column of the communication matrix. */
static void format_peers(struct km_text *t, const struct km_report *rep)
{
    if (!rep->peers || rep->npeers == 0)
        return;
    km_text_printf(t, "!\n! ===== Peers =====\n");
    figure_u(t, (unsigned long long)rep->npeers, "Peers");
    km_text_printf(t, "!%9s %14s %16s %14s %16s %14s %16s\n", "Peer",
                   "Sent(msgs)", "Sent(B)", "Received(msgs)", "Received(B)",
                   "Alltoall(msgs)", "Alltoall(B)");
    for (int32_t k = 0; k < rep->npeers; k++) {
        const struct km_peer *p = &rep->peers[k];
        km_text_printf(t, "%10d", (int)p->peer);
        for (int c = 0; c < 3; c++)
            km_text_printf(t, " %14llu %16llu",
                           (unsigned long long)p->messages[c],
                           (unsigned long long)p->bytes[c]);
        km_text_printf(t, "\n");
    }
}

/* Metadata operations, in the block's columns: opens, closes, inquiries,
 * positioning (REWIND, BACKSPACE, ENDFILE), FLUSH and WAIT. */
static const int meta_group[KM_IO_NOPS] = {
    [KM_IO_OPEN] = 0, [KM_IO_CLOSE] = 1, [KM_IO_INQUIRE] = 2,
    [KM_IO_REWIND] = 3, [KM_IO_BACKSPACE] = 3, [KM_IO_ENDFILE] = 3,
    [KM_IO_FLUSH] = 4, [KM_IO_WAIT] = 4,
};

/* A file's bytes read (w = 0) or written: exact when every transfer was
 * unformatted; with formatted ones, written bytes are estimated from the
 * file's growth ("~"), and otherwise only a lower bound (">=") or nothing
 * ("-") is known. */
static const char *io_bytes(char *buf, size_t size, const struct km_iofile *f,
                            int w)
{
    unsigned long long exact = f->bytes[w];
    if (!f->formatted[w])
        snprintf(buf, size, "%llu", exact);
    else if (w && f->size >= 0)
        snprintf(buf, size, "~%llu", exact + (unsigned long long)f->grown);
    else if (exact)
        snprintf(buf, size, ">=%llu", exact);
    else
        snprintf(buf, size, "-");
    return buf;
}

/* Operation op's time in file f, its estimated part (all of it: `all`)
 * scaled by `scale`. */
static km_time op_time(const struct km_iofile *f, int op, double scale,
                       int all)
{
    if (all)
        return (km_time)((double)f->t[op] * scale);
    return f->t[op] - f->te[op] + (km_time)((double)f->te[op] * scale);
}

static void file_row(struct km_text *t, const struct km_report *rep,
                     const struct km_iofile *f, double scale, int all)
{
    unsigned long long meta[5] = { 0 };
    km_time mt = 0;
    int mest = 0;
    for (int op = KM_IO_OPEN; op < KM_IO_READ; op++) {
        meta[meta_group[op]] += f->n[op];
        mt += op_time(f, op, scale, all);
        mest |= f->te[op] > 0;
    }
    char a[32], b[32], c[32], d[32], e[32];
    for (int g = 0; g < 5; g++)
        km_text_printf(t, "%s%7llu", g ? " " : "", meta[g]);
    km_text_printf(t, " %15s %9llu %15s %14s %9llu %15s %14s",
                   fig(a, sizeof a, secs(rep, mt), mest),
                   (unsigned long long)f->n[KM_IO_READ],
                   fig(b, sizeof b,
                       secs(rep, op_time(f, KM_IO_READ, scale, all)),
                       f->te[KM_IO_READ] > 0),
                   io_bytes(c, sizeof c, f, 0),
                   (unsigned long long)f->n[KM_IO_WRITE],
                   fig(d, sizeof d,
                       secs(rep, op_time(f, KM_IO_WRITE, scale, all)),
                       f->te[KM_IO_WRITE] > 0),
                   io_bytes(e, sizeof e, f, 1));
    if (f->size >= 0)
        km_text_printf(t, " %14lld", (long long)f->size);
    else
        km_text_printf(t, " %14s", "-");
    km_text_printf(t, " %s\n", f->name);
}

/* The files' times are the statements' elapsed times as each execution
 * ended; the regions' figures are later adjusted: estimates settled
 * against the measured frame around them, a location's time fitted into
 * its parent's.  A rank of one thread, whose I/O time is its files' time,
 * gets the regions' total: the estimated parts scaled where they can make
 * up the difference, else every part alike (*all set).  Ranks of several
 * threads keep the times as measured (their I/O time is the program's
 * thread's, the files' the whole rank's). */
static double file_scale(const struct km_report *rep, int *all)
{
    km_time measured = 0, estimated = 0;
    for (int32_t k = 0; k < rep->nfiles; k++)
        for (int op = 0; op < KM_IO_NOPS && !rep->files[k].mpiio; op++) {
            measured += rep->files[k].t[op] - rep->files[k].te[op];
            estimated += rep->files[k].te[op];
        }
    *all = 0;
    if (rep->nothers > 0 || measured + estimated <= 0)
        return 1.0;
    if (estimated > 0 && rep->io >= measured)
        return (double)(rep->io - measured) / (double)estimated;
    *all = 1;
    return (double)rep->io / (double)(measured + estimated);
}

/* What the rank's measured I/O statements (the Files block), or its
 * measured MPI-IO calls (the MPI-IO block: times as measured, MPI time),
 * did, file by file. */
static void format_files(struct km_text *t, const struct km_report *rep,
                         int mpiio)
{
    int32_t rows = 0;
    for (int32_t k = 0; rep->files && k < rep->nfiles; k++)
        rows += rep->files[k].mpiio == mpiio;
    if (rows == 0)
        return;
    km_text_printf(t, "!\n! ===== %s =====\n", mpiio ? "MPI-IO" : "Files");
    figure_u(t, (unsigned long long)rows, "Files");
    km_text_printf(t, "!%6s %7s %7s %7s %7s %15s %9s %15s %14s %9s %15s "
                   "%14s %14s %s\n", "Opens", "Closes", "Inquire", "Seeks",
                   "Flushes", "Meta(s)", "Reads", "Read(s)", "Read(B)",
                   "Writes", "Write(s)", "Write(B)", "Size(B)", "File");
    int all = 0;
    double scale = mpiio ? 1.0 : file_scale(rep, &all);
    for (int32_t k = 0; k < rep->nfiles; k++)
        if (rep->files[k].mpiio == mpiio)
            file_row(t, rep, &rep->files[k], scale, all);
}

/* The number of routine `id` in the routine table, or 0. */
static int32_t routine_number(const struct km_region **ix, int32_t n,
                              int32_t id)
{
    for (int32_t k = 0; k < n; k++)
        if (ix[k]->id == id)
            return k + 1;
    return 0;
}

/* A slot figure: whole nanoseconds, "~" first when estimated (0 never). */
static void tl_figure(struct km_text *t, int64_t v, int est)
{
    km_text_printf(t, " %s%lld", v != 0 && est ? "~" : "", (long long)v);
}

/* The program's thread's run in time slots (doc/KM_output.md,
 * "Timeline block"). */
static void format_timeline(struct km_text *t, const struct km_report *rep,
                            const struct km_region **ix, int32_t n)
{
    struct km_tl_figures *f = km_mem_alloc(sizeof *f);
    if (!f)
        return;
    if (km_tl_figures(rep, f) != 0) {
        km_mem_free(f);
        return;
    }
    km_text_printf(t, "!\n! ===== Timeline =====\n");
    figure_u(t, (unsigned long long)(f->rows - 1), "Slots");
    km_text_printf(t, "%-15.7e ! Slot width (s)\n", f->width);
    km_text_printf(t, "%-15.7e ! Origin (s after the start, %s)\n",
                   f->origin, f->origin_mpi ? "MPI_INIT returned"
                                            : "the start");
    km_text_printf(t, "%-15d ! Routines:", (int)f->ntop);
    for (int32_t k = 0; k < f->ntop; k++)
        km_text_printf(t, " %d", (int)routine_number(ix, n, f->top[k]));
    km_text_printf(t, "\n!   Slot Computation(ns) MPI(ns) IO(ns) Other(ns)");
    for (int32_t k = 0; k < f->ntop; k++)
        km_text_printf(t, " R%d(ns)", (int)routine_number(ix, n, f->top[k]));
    km_text_printf(t, "\n");
    for (int32_t r = 0; r < f->rows; r++) {
        if (r == 0)
            km_text_printf(t, "%8s", "before");
        else
            km_text_printf(t, "%8d", (int)(r - 1));
        for (int c = 0; c < KM_TL_NCAT; c++)
            tl_figure(t, f->cat[r][c], f->est[c]);
        for (int32_t k = 0; k < f->ntop; k++)
            tl_figure(t, f->rt[k][r], f->top_est[k]);
        km_text_printf(t, "\n");
    }
    km_mem_free(f);
}

/* ------------------------------------------------------------------------ */
/* Paths                                                                     */

/* Every region's name in the tables above: "k" for the routine numbered
 * k, "k.j" for its j-th location ("0" for a location of no routine). */
static char (*region_labels(const struct km_report *rep,
                            const struct km_region **ix, int32_t n,
                            const struct loc_lists *l))[16]
{
    char (*label)[16] = km_mem_alloc(((size_t)rep->nreg + 1) * 16);
    if (!label)
        return NULL;
    for (int32_t i = 0; i < rep->nreg; i++)
        snprintf(label[i], 16, "0");
    for (int32_t k = 0; k < n; k++) {
        int32_t id = ix[k]->id;
        snprintf(label[id - 1], 16, "%d", (int)k + 1);
        int loc = 0;
        for (int32_t i = l->first[id]; i; i = l->next[i - 1])
            snprintf(label[i - 1], 16, "%d.%d", (int)(k + 1) % 10000000,
                 ++loc % 10000000);
    }
    return label;
}

/* The Fold column: what a path holds beyond the limits. */
static const char *fold_mark(uint8_t folded)
{
    if (folded & KM_FOLD_MAX)
        return "m";
    return folded & KM_FOLD_RECURSION ? "r" : "-";
}

/* One thread's calling-context tree: a row per path, after its parent
 * (0: outside every region), with the region's name as in the tables. */
static void format_tree(struct km_text *t, const struct km_report *rep,
                        const struct km_report *th, char (*label)[16])
{
    km_text_printf(t, "! Thread %d: %d paths, %lld entries on folded paths\n",
                   (int)th->thread, (int)(th->npaths > 0 ? th->npaths - 1 : 0),
                   (long long)th->folded);
    km_text_printf(t, "!%9s %8s %-10s %12s %16s %16s %7s %4s\n", "Path",
                   "Parent", "Region", "Counts", "Elapsed(s)", "Net(s)",
                   "Est(%)", "Fold");
    char cnt[32], el[32], net[32];
    for (int32_t i = 1; i < th->npaths; i++) {
        const struct km_pnode *p = &th->paths[i];
        int plus = p->count > p->measured;
        snprintf(cnt, sizeof cnt, "%s%llu", plus ? "+" : "",
                 (unsigned long long)p->count);
        int est_el = p->incl_est > 0 || plus;
        int est_net = est_el || p->est > 0 || p->absorbed > 0 || p->marked;
        km_text_printf(t, "%10d %8d %-10s %12s %16s %16s %7.1f %4s\n", (int)i,
                       (int)(p->parent > 0 ? p->parent : 0),
                       p->id >= 1 && p->id <= rep->nreg ? label[p->id - 1]
                                                        : "0",
                       cnt, fig(el, sizeof el, secs(th, p->incl), est_el),
                       fig(net, sizeof net, secs(th, p->own + p->est),
                           est_net),
                       percent(p->incl_est, p->incl), fold_mark(p->folded));
    }
}

/* The call paths of every thread of the rank that has them. */
static void format_paths(struct km_text *t, const struct km_report *rep,
                         const struct km_region **ix, int32_t n,
                         const struct loc_lists *l)
{
    int32_t trees = rep->npaths > 0;
    for (int32_t k = 0; k < rep->nothers; k++)
        trees += rep->others[k].npaths > 0;
    if (trees == 0)
        return;
    char (*label)[16] = region_labels(rep, ix, n, l);
    if (!label) {
        t->failed = 1;
        return;
    }
    km_text_printf(t, "!\n! ===== Paths =====\n");
    figure_u(t, (unsigned long long)trees, "Trees");
    if (rep->npaths > 0)
        format_tree(t, rep, rep, label);
    for (int32_t k = 0; k < rep->nothers; k++)
        if (rep->others[k].npaths > 0)
            format_tree(t, rep, &rep->others[k], label);
    km_mem_free(label);
}

void km_format_section(struct km_text *t, const struct km_report *rep)
{
    km_text_printf(t, "! ===== Rank %d =====\n", rep->rank);
    km_text_printf(t, "%04d %-10d ! Processors and Rank\n", rep->nranks,
                   rep->rank);
    figure_e(t, rep, rep->total, 0, "Total time");
    figure_u(t, rep->routine_counts, "Counts of routines");
    figure_u(t, rep->clock_reads, "Counts of time get function");
    km_text_printf(t, "%-15.7e ! %s\n", rep->clock.read_cost,
                   "Time get function cost(1 call)");
    figure_e(t, rep, rep->overhead, 1, "libkm overhead");
    figure_u(t, (unsigned long long)rep->nwrites, "Output counts by KM_writ");
    figure_e(t, rep, rep->mpi, rep->mpi_est, "MPI time");
    figure_e(t, rep, rep->startup, 0, "MPI start-up time");
    figure_e(t, rep, rep->io, rep->io_est, "I/O time");
    figure_e(t, rep, rep->outside, rep->outside_est, "Time outside routines");
    figure_e(t, rep, rep->uninstr, rep->uninstr_est,
             "Time in uninstrumented routines");
    figure_e(t, rep, rep->estimated, rep->estimated > 0, "Estimated time");

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
    format_warnings(t, rep);
    format_threads(t, rep, ix, n, &l);
    format_messages(t, rep, ix, n, &l);
    format_peers(t, rep);
    format_files(t, rep, 0);
    format_files(t, rep, 1);
    format_timeline(t, rep, ix, n);
    format_paths(t, rep, ix, n, &l);
    km_mem_free((void *)ix);
    km_mem_free(l.first);
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
