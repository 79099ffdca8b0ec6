/*
 * diff.c — relative profiling of two runs, after PARP (Fujisawa's thesis,
 * shared/reference/parp-relative-profiling-thesis.txt, section 5.4.4).
 *
 * Regions are matched by routine name, kind and source line (and, for two
 * locations of one kind on one line, their order).  A routine's time is
 * its net time; a location's its elapsed time; both are means over the
 * ranks of each run, so that runs of different rank counts compare as
 * wall-clock time.  The default order is PARP's: a region matters if it
 * takes a large share of the run and its time changed by a large factor,
 *   score = (t_hi / T) * ln(t_hi / t_lo)
 * with t_hi and t_lo the longer and shorter of the region's two times and
 * T the total time of the slower run (infinite when t_lo is 0).  Regions
 * found in one run only are listed apart.  The total difference splits
 * exactly into computation, MPI, MPI start-up and I/O (header figures,
 * means over ranks): start-up apart, since it grows with the rank count
 * and is no communication the program does.  A time that contains an
 * estimate (on some rank) is marked '~' in every output.
 * With different rank counts, each region's efficiency is the parallel
 * efficiency of the larger run relative to the smaller one:
 *   E = (N_small * t_small) / (N_large * t_large).
 * Call paths (KM_output 6) are rows of the same kind, matched and written
 * by diffpaths.c, scored and ordered here as the regions are.
 *
 * Must never read files (main.c does) or change the runs.
 */
#include "kmview/views/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/write/out.h"
#include "kmview/views/files.h"
#include "kmview/write/html.h"
#include "kmview/views/messages.h"
#include "kmview/views/summary.h"
#include "support/buf.h"

/* ------------------------------------------------------------------------ */
/* Matching                                                                  */

static double mean_of(const double *v, size_t n)
{
    double s = 0;
    for (size_t p = 0; p < n; p++)
        s += v[p];
    return n ? s / (double)n : 0;
}

static void set_side(struct kv_diff_row *r, int side, const struct kv_stats *st,
                     int id, bool routine)
{
    size_t n = st->n;
    if (routine) {
        r->t[side] = st->rs[KV_M_NET][id].mean;
        r->t_est[side] = (st->r_est[id] & KV_EST(KV_M_NET)) != 0;
        r->calls[side] = st->rs[KV_M_COUNTS][id].mean;
    } else {
        r->t[side] = mean_of(st->lv[KV_M_ELAPSED] + (size_t)id * n, n);
        r->t_est[side] = st->l_est[id];
        r->calls[side] = mean_of(st->lv[KV_M_COUNTS] + (size_t)id * n, n);
    }
    r->per_call[side] = r->calls[side] > 0 ? r->t[side] / r->calls[side] : NAN;
}

static struct kv_diff_row *add_row(struct kv_diff *d, size_t *cap)
{
    KM_GROW(d->rows, *cap, d->nrows + 1);
    struct kv_diff_row *r = &d->rows[d->nrows++];
    memset(r, 0, sizeof *r);
    r->per_call[0] = r->per_call[1] = NAN;
    r->sent[0] = r->sent[1] = r->received[0] = r->received[1] = NAN;
    return r;
}

/* Every routine of run `side`; those also in the other run only once. */
static void match_routines(struct kv_diff *d, int side, size_t *cap)
{
    const struct kv_stats *st = d->run[side], *other = d->run[1 - side];
    for (size_t i = 0; i < st->nr; i++) {
        const struct kv_routine *rt = &st->run->routines[i];
        int j = kv_routine_find(other->run, rt->name);
        if (side == 1 && j >= 0)
            continue;                            /* done from side 0 */
        struct kv_diff_row *r = add_row(d, cap);
        r->routine = rt->name;
        r->kind = -1;
        r->line = rt->line;
        r->status = j >= 0 ? KV_BOTH : side == 0 ? KV_ONLY_A : KV_ONLY_B;
        set_side(r, side, st, (int)i, true);
        if (j >= 0) {
            set_side(r, 1 - side, other, j, true);
            if (!r->line)
                r->line = other->run->routines[j].line;
        }
    }
}

static int find_location(const struct kv_run *run, const struct kv_run *from,
                         const struct kv_location *l)
{
    int routine = kv_routine_find(run, from->routines[l->routine].name);
    if (routine < 0)
        return -1;
    return kv_location_find(run, routine, l->kind, l->line, l->occurrence);
}

/* Every location's bytes in run `side`, means over its ranks: from the
 * Messages blocks of a run of format 4; unknown (NaN) before. */
static void location_bytes(struct kv_diff *d, int side)
{
    const struct kv_stats *st = d->run[side];
    const struct kv_run *run = st->run;
    size_t nl = run->nlocations;
    double *v = km_xcalloc(2 * nl + 1, sizeof *v);
    bool known = run->format_version >= 4 && st->n > 0;
    for (size_t i = 0; known && i < run->nsections; i++)
        for (size_t k = 0; k < run->ranks[i].nmsgs; k++) {
            const struct kv_msg *m = &run->ranks[i].msgs[k];
            v[2 * (size_t)m->location] += (double)m->sent;
            v[2 * (size_t)m->location + 1] += (double)m->received;
        }
    for (size_t l = 0; l < 2 * nl; l++)
        v[l] = known ? v[l] / (double)st->n : NAN;
    d->bytes[side] = v;
}

static void set_bytes(const struct kv_diff *d, struct kv_diff_row *r,
                      int side, int id)
{
    r->sent[side] = d->bytes[side][2 * id];
    r->received[side] = d->bytes[side][2 * id + 1];
}

static void match_locations(struct kv_diff *d, int side, size_t *cap)
{
    const struct kv_stats *st = d->run[side], *other = d->run[1 - side];
    for (size_t i = 0; i < st->nl; i++) {
        const struct kv_location *l = &st->run->locations[i];
        int j = find_location(other->run, st->run, l);
        if (side == 1 && j >= 0)
            continue;
        struct kv_diff_row *r = add_row(d, cap);
        r->routine = st->run->routines[l->routine].name;
        r->kind = l->kind;
        r->line = l->line;
        r->occurrence = l->occurrence;
        r->text = l->text;
        r->status = j >= 0 ? KV_BOTH : side == 0 ? KV_ONLY_A : KV_ONLY_B;
        set_side(r, side, st, (int)i, false);
        set_bytes(d, r, side, (int)i);
        if (j >= 0) {
            set_side(r, 1 - side, other, j, false);
            set_bytes(d, r, 1 - side, j);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Figures                                                                   */

static void derive(struct kv_diff *d, struct kv_diff_row *r)
{
    double a = r->t[0], b = r->t[1];
    double hi = a > b ? a : b, lo = a > b ? b : a;
    r->diff = b - a;
    r->ratio = a > 0 ? b / a : b > 0 ? INFINITY : NAN;
    if (r->status != KV_BOTH || hi <= 0)
        r->score = 0;
    else if (lo <= 0)
        r->score = INFINITY;
    else
        r->score = (d->slow_total > 0 ? hi / d->slow_total : 0) * log(hi / lo);
    r->efficiency = NAN;
    if (d->scaling && r->status == KV_BOTH) {
        int small = d->run[0]->n < d->run[1]->n ? 0 : 1;
        double ns = (double)d->run[small]->n, nl = (double)d->run[1 - small]->n;
        double tl = r->t[1 - small];
        if (tl > 0)
            r->efficiency = ns * r->t[small] / (nl * tl);
    }
}

static void breakdown(struct kv_diff *d)
{
    for (int s = 0; s < 2; s++) {
        const struct kv_stats *st = d->run[s];
        d->total[s] = st->total;
        d->mpi[s] = st->mpi;
        d->startup[s] = st->startup;
        d->io[s] = st->io;
        d->comp[s] = st->comp;
        d->total_est[s] = st->fig_est[KV_F_TOTAL];
        d->mpi_est[s] = st->fig_est[KV_F_MPI];
        d->startup_est[s] = st->fig_est[KV_F_STARTUP];
        d->io_est[s] = st->fig_est[KV_F_IO];
        d->comp_est[s] = st->comp_est;
    }
    d->slow_total = d->total[0] > d->total[1] ? d->total[0] : d->total[1];
}

/* Run `side`'s file x into row r, means per rank. */
static void set_file(struct kv_diff_file *r, int side,
                     const struct kv_file_sum *x, double nranks)
{
    const struct kv_file *f = &x->sum;
    r->name = x->name;
    r->mpiio = f->mpiio;
    r->in[side] = true;
    r->t[side] = (f->meta_s + f->read_s + f->write_s) / nranks;
    r->t_est[side] = f->meta_est || f->read_est || f->write_est;
    r->read[side] = (double)f->read_b.bytes / nranks;
    r->written[side] = (double)f->write_b.bytes / nranks;
    r->read_kinds[side] = x->kinds[0];
    r->written_kinds[side] = x->kinds[1];
}

static int by_time_change(const void *pa, const void *pb)
{
    const struct kv_diff_file *a = pa, *b = pb;
    double x = fabs(a->t[1] - a->t[0]), y = fabs(b->t[1] - b->t[0]);
    if (x != y)
        return x > y ? -1 : 1;
    if (a->mpiio != b->mpiio)
        return a->mpiio ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* The files of both runs, matched by name and interface (both lists in
 * kv_file_sum_order). */
static void match_files(struct kv_diff *d)
{
    size_t n[2];
    struct kv_file_sum *v[2];
    for (int s = 0; s < 2; s++)
        v[s] = kv_files_over_ranks(d->run[s]->run, &n[s]);
    d->files = km_xcalloc(n[0] + n[1] + 1, sizeof *d->files);
    size_t i = 0, j = 0;
    while (i < n[0] || j < n[1]) {
        int c = i == n[0] ? 1 : j == n[1] ? -1
                              : kv_file_sum_order(&v[0][i], &v[1][j]);
        struct kv_diff_file *r = &d->files[d->nfiles++];
        if (c <= 0)
            set_file(r, 0, &v[0][i++], (double)d->run[0]->n);
        if (c >= 0)
            set_file(r, 1, &v[1][j++], (double)d->run[1]->n);
    }
    qsort(d->files, d->nfiles, sizeof *d->files, by_time_change);
    free(v[0]);
    free(v[1]);
}

void kv_diff_build(struct kv_diff *d, const struct kv_stats *a,
                   const struct kv_stats *b, const char *name_a,
                   const char *name_b)
{
    memset(d, 0, sizeof *d);
    d->run[0] = a;
    d->run[1] = b;
    d->name[0] = name_a;
    d->name[1] = name_b;
    d->scaling = a->n != b->n;
    breakdown(d);
    location_bytes(d, 0);
    location_bytes(d, 1);
    size_t cap = 0;
    match_routines(d, 0, &cap);
    match_locations(d, 0, &cap);
    match_routines(d, 1, &cap);
    match_locations(d, 1, &cap);
    for (size_t i = 0; i < d->nrows; i++)
        derive(d, &d->rows[i]);
    kv_diff_paths_match(d);
    for (size_t i = 0; i < d->npaths; i++)
        derive(d, &d->paths[i]);
    kv_diff_sort(d, KV_BY_SCORE);
    match_files(d);
}

void kv_diff_free(struct kv_diff *d)
{
    free(d->rows);
    free(d->bytes[0]);
    free(d->bytes[1]);
    free(d->files);
    kv_diff_paths_free(d);
    memset(d, 0, sizeof *d);
}

/* ------------------------------------------------------------------------ */
/* Order                                                                     */

static const char *const order_names[] = {
    [KV_BY_SCORE] = "score", [KV_BY_DIFF] = "diff", [KV_BY_RATIO] = "ratio",
    [KV_BY_A] = "a", [KV_BY_B] = "b", [KV_BY_NAME] = "name",
};

int kv_diff_order_parse(const char *s)
{
    for (size_t i = 0; i < sizeof order_names / sizeof *order_names; i++)
        if (strcmp(s, order_names[i]) == 0)
            return (int)i;
    return -1;
}

/* Larger first; NaN last. */
static int desc(double x, double y)
{
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return x > y ? -1 : x < y ? 1 : 0;
}

static int by_key(const struct kv_diff_row *a, const struct kv_diff_row *b)
{
    int c = strcmp(a->routine, b->routine);
    if (c)
        return c;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    return (a->occurrence > b->occurrence) - (a->occurrence < b->occurrence);
}

/* What a row is sorted by under `order`: one-run regions by the time
 * they have, whatever the order; ties by the size of the difference,
 * except in name order. */
static void set_sort_key(struct kv_diff_row *r, enum kv_diff_order order)
{
    double v[] = {
        [KV_BY_SCORE] = r->score, [KV_BY_DIFF] = fabs(r->diff),
        [KV_BY_RATIO] = fabs(log(r->ratio)), [KV_BY_A] = r->t[0],
        [KV_BY_B] = r->t[1], [KV_BY_NAME] = 0,
    };
    r->sort_key = r->status != KV_BOTH ? r->t[0] + r->t[1] : v[order];
    r->sort_tie = order == KV_BY_NAME ? 0 : fabs(r->diff);
}

static int compare_rows(const void *pa, const void *pb)
{
    const struct kv_diff_row *a = pa, *b = pb;
    if (a->status != b->status)
        return a->status < b->status ? -1 : 1;
    int c = desc(a->sort_key, b->sort_key);
    if (!c)
        c = desc(a->sort_tie, b->sort_tie);
    return c ? c : by_key(a, b);
}

static void sort_rows(struct kv_diff_row *rows, size_t n,
                      enum kv_diff_order order)
{
    for (size_t i = 0; i < n; i++)
        set_sort_key(&rows[i], order);
    qsort(rows, n, sizeof *rows, compare_rows);
}

void kv_diff_sort(struct kv_diff *d, enum kv_diff_order order)
{
    sort_rows(d->rows, d->nrows, order);
    sort_rows(d->paths, d->npaths, order);
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */

static void region_label(char *buf, size_t size, const struct kv_diff_row *r)
{
    if (r->kind < 0)
        snprintf(buf, size, "%s", r->routine);
    else
        snprintf(buf, size, "%s %s %d%s", r->routine, kv_kind_name(r->kind),
                 r->line, r->occurrence ? "'" : "");
}

static const char *ratio_text(char b[32], double v)
{
    if (isinf(v))
        return "new";
    return kv_human(b, v);
}

/* The parts of the breakdown, in the order every output gives them. */
#define NPARTS 5
static void parts(const struct kv_diff *d, const double *v[NPARTS],
                  const bool *e[NPARTS])
{
    const double *pv[NPARTS] = { d->total, d->comp, d->mpi, d->startup, d->io };
    const bool *pe[NPARTS] = { d->total_est, d->comp_est, d->mpi_est,
                               d->startup_est, d->io_est };
    memcpy(v, pv, sizeof pv);
    memcpy(e, pe, sizeof pe);
}

static void print_breakdown(FILE *f, const struct kv_diff *d)
{
    static const char *const what[NPARTS] = { "Total time", "Computation",
                                              "MPI", "MPI start-up", "I/O" };
    const double *v[NPARTS];
    const bool *e[NPARTS];
    double delta_total = d->total[1] - d->total[0];
    char b[5][32];
    parts(d, v, e);
    fprintf(f, "\nWhere the difference comes from (means over ranks)\n"
            "  %-14s %12s %12s %12s %8s %12s\n", "", "A (s)", "B (s)",
            "B-A (s)", "B/A", "of B-A");
    for (int k = 0; k < NPARTS; k++) {
        double dd = v[k][1] - v[k][0];
        bool de = e[k][0] || e[k][1];
        fprintf(f, "  %-14s %12s %12s %12s %8s %12s\n", what[k],
                kv_human_mark(b[0], v[k][0], e[k][0]),
                kv_human_mark(b[1], v[k][1], e[k][1]),
                kv_human_mark(b[2], dd, de),
                ratio_text(b[3], v[k][0] > 0 ? v[k][1] / v[k][0] : NAN),
                k == 0 ? "" : kv_percent(b[4], delta_total != 0
                                                   ? dd / delta_total : NAN));
    }
}

static void print_row(FILE *f, const struct kv_diff *d, size_t k,
                      const struct kv_diff_row *r, int w)
{
    char label[256], b[10][32];
    region_label(label, sizeof label, r);
    bool de = r->t_est[0] || r->t_est[1];
    fprintf(f, "  %4zu %-*s %10s %10s %10s %7s %9s %9s %10s %10s %7s", k + 1,
            w, label, kv_human_mark(b[0], r->t[0], r->t_est[0]),
            kv_human_mark(b[1], r->t[1], r->t_est[1]),
            kv_human_mark(b[2], r->diff, de), ratio_text(b[3], r->ratio),
            kv_human(b[4], r->calls[0]), kv_human(b[5], r->calls[1]),
            kv_human_mark(b[6], r->per_call[0], r->t_est[0]),
            kv_human_mark(b[7], r->per_call[1], r->t_est[1]),
            isinf(r->score) ? "inf" : kv_human(b[8], r->score));
    if (d->scaling)
        fprintf(f, " %6s", kv_percent(b[9], r->efficiency));
    if (r->text)
        fprintf(f, "  %s", r->text);
    fputc('\n', f);
}

static int label_width(const struct kv_diff *d)
{
    int w = 6;
    char label[256];
    for (size_t i = 0; i < d->nrows; i++) {
        region_label(label, sizeof label, &d->rows[i]);
        if ((int)strlen(label) > w)
            w = (int)strlen(label);
    }
    return w;
}

static void print_one_sided(FILE *f, const struct kv_diff *d,
                            enum kv_diff_status which, int w)
{
    char label[256], b[3][32];
    bool any = false;
    int side = which == KV_ONLY_A ? 0 : 1;
    for (size_t i = 0; i < d->nrows; i++) {
        const struct kv_diff_row *r = &d->rows[i];
        if (r->status != which)
            continue;
        if (!any)
            fprintf(f, "\nOnly in %s (%s)\n  %-*s %10s %9s %10s\n",
                    side ? "B" : "A", d->name[side], w, "Region", "t (s)",
                    "calls", "t/call");
        any = true;
        region_label(label, sizeof label, r);
        fprintf(f, "  %-*s %10s %9s %10s%s%s\n", w, label,
                kv_human_mark(b[0], r->t[side], r->t_est[side]),
                kv_human(b[1], r->calls[side]),
                kv_human_mark(b[2], r->per_call[side], r->t_est[side]),
                r->text ? "  " : "",
                r->text ? r->text : "");
    }
}

static double moved(const struct kv_diff_row *r, int s)
{
    return (isnan(r->sent[s]) ? 0 : r->sent[s]) +
           (isnan(r->received[s]) ? 0 : r->received[s]);
}

static int by_bytes_change(const void *pa, const void *pb)
{
    const struct kv_diff_row *a = *(const struct kv_diff_row *const *)pa;
    const struct kv_diff_row *b = *(const struct kv_diff_row *const *)pb;
    double x = fabs(moved(a, 1) - moved(a, 0));
    double y = fabs(moved(b, 1) - moved(b, 0));
    return x > y ? -1 : x < y ? 1 : 0;
}

/* The MPI call sites of both runs that moved bytes in either, by the
 * size of the change: bytes per rank sent and received in A and B. */
static void print_bytes(FILE *f, const struct kv_diff *d, int top, int w)
{
    if (d->run[0]->run->format_version < 4 ||
        d->run[1]->run->format_version < 4)
        return;
    const struct kv_diff_row **v = km_xcalloc(d->nrows + 1, sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < d->nrows; i++)
        if (d->rows[i].status == KV_BOTH &&
            (moved(&d->rows[i], 0) > 0 || moved(&d->rows[i], 1) > 0))
            v[n++] = &d->rows[i];
    if (n) {
        qsort(v, n, sizeof *v, by_bytes_change);
        size_t shown = top > 0 && (size_t)top < n ? (size_t)top : n;
        fprintf(f, "\nBytes moved by MPI call sites (means per rank)\n"
                "  %-*s %12s %12s %12s %12s %8s\n", w, "Region",
                "sent A", "sent B", "received A", "received B", "B/A");
        char label[256], b[5][32];
        for (size_t k = 0; k < shown; k++) {
            const struct kv_diff_row *r = v[k];
            region_label(label, sizeof label, r);
            double a = moved(r, 0);
            fprintf(f, "  %-*s %12s %12s %12s %12s %8s\n", w, label,
                    kv_bytes_text(b[0], (uint64_t)r->sent[0]),
                    kv_bytes_text(b[1], (uint64_t)r->sent[1]),
                    kv_bytes_text(b[2], (uint64_t)r->received[0]),
                    kv_bytes_text(b[3], (uint64_t)r->received[1]),
                    ratio_text(b[4], a > 0 ? moved(r, 1) / a : NAN));
        }
        if (shown < n)
            fprintf(f, "  ... %zu more\n", n - shown);
    }
    free(v);
}

/* A file's bytes in run s as text ("" when the run had no such file). */
static const char *file_bytes(char buf[40], const struct kv_diff_file *r,
                              int s, bool written)
{
    if (!r->in[s])
        return "";
    return kv_file_bytes_text(buf, (uint64_t)llround(written ? r->written[s]
                                                             : r->read[s]),
                              written ? r->written_kinds[s]
                                      : r->read_kinds[s]);
}

/* The files of either run, by the size of the change of their time:
 * I/O time and bytes per rank in A and B. */
static void print_files(FILE *f, const struct kv_diff *d, int top)
{
    if (d->nfiles == 0)
        return;
    size_t shown = top > 0 && (size_t)top < d->nfiles ? (size_t)top
                                                       : d->nfiles;
    fprintf(f, "\nFiles (I/O statements' and MPI-IO calls' time and bytes, "
            "means per rank)\n  %10s %10s %11s %11s %11s %11s  %-7s %s\n",
            "tA(s)", "tB(s)", "read A", "read B", "written A", "written B",
            "Via", "File");
    char t[2][32], b[4][40];
    for (size_t k = 0; k < shown; k++) {
        const struct kv_diff_file *r = &d->files[k];
        for (int s = 0; s < 2; s++)
            if (r->in[s])
                kv_human_mark(t[s], r->t[s], r->t_est[s]);
            else
                strcpy(t[s], "-");
        fprintf(f, "  %10s %10s %11s %11s %11s %11s  %-7s %s\n", t[0], t[1],
                file_bytes(b[0], r, 0, false), file_bytes(b[1], r, 1, false),
                file_bytes(b[2], r, 0, true), file_bytes(b[3], r, 1, true),
                r->mpiio ? "MPI-IO" : "Fortran", r->name);
    }
    if (shown < d->nfiles)
        fprintf(f, "  ... %zu more\n", d->nfiles - shown);
}

void kv_diff_print(FILE *f, const struct kv_diff *d, int top)
{
    char ra[128], rb[128];
    kv_describe_ranks(ra, sizeof ra, d->run[0]);
    kv_describe_ranks(rb, sizeof rb, d->run[1]);
    const char *pa = d->run[0]->run->program, *pb = d->run[1]->run->program;
    fprintf(f, "A: %s (%s, %s)\nB: %s (%s, %s)\n", d->name[0], pa ? pa : "?",
            ra, d->name[1], pb ? pb : "?", rb);
    print_breakdown(f, d);
    size_t both = 0;
    while (both < d->nrows && d->rows[both].status == KV_BOTH)
        both++;
    size_t n = top > 0 && (size_t)top < both ? (size_t)top : both;
    int w = label_width(d);
    fprintf(f, "\nRegions in both runs (times: means over ranks; routines: "
            "net time; score:\n(longer / total of the slower run) x ln(longer "
            "/ shorter))\n");
    fprintf(f, "  %4s %-*s %10s %10s %10s %7s %9s %9s %10s %10s %7s", "#", w,
            "Region", "tA(s)", "tB(s)", "B-A(s)", "B/A", "callsA", "callsB",
            "t/callA", "t/callB", "score");
    if (d->scaling)
        fprintf(f, " %6s", "eff");
    fputc('\n', f);
    for (size_t k = 0; k < n; k++)
        print_row(f, d, k, &d->rows[k], w);
    if (n < both)
        fprintf(f, "  (%zu more; -n 0 lists them all)\n", both - n);
    print_one_sided(f, d, KV_ONLY_A, w);
    print_one_sided(f, d, KV_ONLY_B, w);
    kv_diff_paths_print(f, d, top);
    print_bytes(f, d, top, w);
    print_files(f, d, top);
    if (d->run[0]->any_est || d->run[1]->any_est)
        fprintf(f, "\n~ contains an estimate: libkm measured only a sample of "
                "the executions past\n  the region's threshold and estimated "
                "the others.\n");
}

/* ------------------------------------------------------------------------ */
/* CSV and JSON                                                              */

static const char *const status_names[] = { "both", "only_a", "only_b" };
static const char *const part_names[NPARTS] = { "total", "computation", "mpi",
                                                "mpi_startup", "io" };

static const char *kind_text(const struct kv_diff_row *r)
{
    return r->kind < 0 ? "ROUTINE" : kv_kind_name(r->kind);
}

static void csv_row(FILE *f, const struct kv_diff_row *r)
{
    fprintf(f, "%s,", status_names[r->status]);
    kv_csv_str(f, r->routine);
    fprintf(f, ",%s,%d,%d,", kind_text(r), r->line, r->occurrence);
    kv_csv_str(f, r->text);
    double v[] = { r->t[0], r->t[1], r->diff, r->ratio, r->calls[0],
                   r->calls[1], r->per_call[0], r->per_call[1] };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        fputc(',', f);
        kv_csv_num(f, v[i]);
    }
    fputc(',', f);
    if (isinf(r->score))
        fputs("inf", f);
    else
        kv_csv_num(f, r->score);
    fputc(',', f);
    kv_csv_num(f, r->efficiency);
    fprintf(f, ",%d,%d", r->t_est[0], r->t_est[1]);
    double bytes[] = { r->sent[0], r->sent[1], r->received[0],
                       r->received[1] };
    for (size_t i = 0; i < sizeof bytes / sizeof *bytes; i++) {
        fputc(',', f);
        kv_csv_num(f, bytes[i]);
    }
    fputc('\n', f);
}

static void csv_regions(FILE *f, const void *ctx)
{
    const struct kv_diff *d = ctx;
    fputs("order,status,routine,kind,line,occurrence,statement,t_a,t_b,diff,"
          "ratio,calls_a,calls_b,per_call_a,per_call_b,score,efficiency,t_a_estimated,"
          "t_b_estimated,sent_a,sent_b,received_a,received_b\n", f);
    for (size_t i = 0; i < d->nrows; i++) {
        fprintf(f, "%zu,", i + 1);
        csv_row(f, &d->rows[i]);
    }
}

static void csv_breakdown(FILE *f, const void *ctx)
{
    const struct kv_diff *d = ctx;
    const double *v[NPARTS];
    const bool *e[NPARTS];
    parts(d, v, e);
    fputs("part,a,b,diff,a_estimated,b_estimated\n", f);
    for (int k = 0; k < NPARTS; k++) {
        fprintf(f, "%s,", part_names[k]);
        kv_csv_num(f, v[k][0]);
        fputc(',', f);
        kv_csv_num(f, v[k][1]);
        fputc(',', f);
        kv_csv_num(f, v[k][1] - v[k][0]);
        fprintf(f, ",%d,%d\n", e[k][0], e[k][1]);
    }
}

/* The kinds of bytes summed (bits of enum kv_bytes_kind) as
 * "exact+estimate"...; "" when none. */
static const char *kinds_text(char buf[48], unsigned kinds)
{
    static const char *const name[] = { "exact", "estimate", "at_least",
                                        "unknown" };
    buf[0] = 0;
    for (int k = 0; k < 4; k++)
        if (kinds & 1u << k) {
            if (buf[0])
                strcat(buf, "+");
            strcat(buf, name[k]);
        }
    return buf;
}

/* A file's figures in the order of files.csv's columns (its status,
 * times, estimated flags, bytes and their kinds); NaN where a run had no
 * such file. */
static void file_figures(const struct kv_diff_file *r, double v[6],
                         const char *k[4], char kb[4][48])
{
    for (int s = 0; s < 2; s++) {
        v[s] = r->in[s] ? r->t[s] : NAN;
        v[2 + s] = r->in[s] ? r->read[s] : NAN;
        v[4 + s] = r->in[s] ? r->written[s] : NAN;
        k[s] = kinds_text(kb[s], r->in[s] ? r->read_kinds[s] : 0);
        k[2 + s] = kinds_text(kb[2 + s], r->in[s] ? r->written_kinds[s] : 0);
    }
}

static const char *file_status(const struct kv_diff_file *r)
{
    return status_names[r->in[0] && r->in[1] ? KV_BOTH
                        : r->in[0]           ? KV_ONLY_A
                                             : KV_ONLY_B];
}

static void csv_files(FILE *f, const void *ctx)
{
    const struct kv_diff *d = ctx;
    fputs("file,interface,status,t_a,t_b,read_a,read_b,written_a,written_b,"
          "t_a_estimated,t_b_estimated,read_a_kinds,read_b_kinds,"
          "written_a_kinds,written_b_kinds\n", f);
    for (size_t i = 0; i < d->nfiles; i++) {
        const struct kv_diff_file *r = &d->files[i];
        double v[6];
        const char *k[4];
        char kb[4][48];
        file_figures(r, v, k, kb);
        kv_csv_str(f, r->name);
        fprintf(f, ",%s,%s", r->mpiio ? "mpi-io" : "fortran", file_status(r));
        for (int j = 0; j < 6; j++) {
            fputc(',', f);
            kv_csv_num(f, v[j]);
        }
        fprintf(f, ",%d,%d,%s,%s,%s,%s\n", r->t_est[0], r->t_est[1], k[0],
                k[1], k[2], k[3]);
    }
}

int kv_diff_csv(struct kv_out *o, const char *dir, const struct kv_diff *d)
{
    static const struct kv_csv_file files[] = {
        { "regions.csv", csv_regions }, { "breakdown.csv", csv_breakdown },
        { "files.csv", csv_files }, { "paths.csv", kv_diff_paths_csv },
    };
    return kv_csv_files(o, dir, files, sizeof files / sizeof *files, d);
}

static void json_num(FILE *f, const char *key, double v)
{
    fprintf(f, "\"%s\":", key);
    kv_json_num(f, v);
    fputc(',', f);
}

static void json_side(FILE *f, const struct kv_diff *d, int s);

/* The regions.csv row as an object with the same names and values (the
 * score "inf" where the shorter time is 0, as there). */
static void json_row(FILE *f, size_t order, const struct kv_diff_row *r)
{
    fprintf(f, "{\"order\":%zu,\"status\":\"%s\",\"routine\":", order,
            status_names[r->status]);
    kv_json_str(f, r->routine);
    fprintf(f, ",\"kind\":\"%s\",\"line\":%d,\"occurrence\":%d,"
            "\"statement\":", kind_text(r), r->line, r->occurrence);
    kv_json_str(f, r->text ? r->text : "");
    fputc(',', f);
    json_num(f, "t_a", r->t[0]);
    json_num(f, "t_b", r->t[1]);
    json_num(f, "diff", r->diff);
    json_num(f, "ratio", r->ratio);
    json_num(f, "calls_a", r->calls[0]);
    json_num(f, "calls_b", r->calls[1]);
    json_num(f, "per_call_a", r->per_call[0]);
    json_num(f, "per_call_b", r->per_call[1]);
    if (isinf(r->score))
        fputs("\"score\":\"inf\",", f);
    else
        json_num(f, "score", r->score);
    json_num(f, "efficiency", r->efficiency);
    fprintf(f, "\"t_a_estimated\":%s,\"t_b_estimated\":%s,",
            r->t_est[0] ? "true" : "false", r->t_est[1] ? "true" : "false");
    json_num(f, "sent_a", r->sent[0]);
    json_num(f, "sent_b", r->sent[1]);
    json_num(f, "received_a", r->received[0]);
    fputs("\"received_b\":", f);
    kv_json_num(f, r->received[1]);
    fputc('}', f);
}

/* files.csv's row as an object with the same names (null for NaN). */
static void json_file(FILE *f, const struct kv_diff_file *r)
{
    static const char *const num[] = { "t_a", "t_b", "read_a", "read_b",
                                       "written_a", "written_b" };
    static const char *const kind[] = { "read_a_kinds", "read_b_kinds",
                                        "written_a_kinds",
                                        "written_b_kinds" };
    double v[6];
    const char *k[4];
    char kb[4][48];
    file_figures(r, v, k, kb);
    fputs("{\"file\":", f);
    kv_json_str(f, r->name);
    fprintf(f, ",\"interface\":\"%s\",\"status\":\"%s\",",
            r->mpiio ? "mpi-io" : "fortran", file_status(r));
    for (int j = 0; j < 6; j++)
        json_num(f, num[j], v[j]);
    fprintf(f, "\"t_a_estimated\":%s,\"t_b_estimated\":%s",
            r->t_est[0] ? "true" : "false", r->t_est[1] ? "true" : "false");
    for (int j = 0; j < 4; j++)
        fprintf(f, ",\"%s\":\"%s\"", kind[j], k[j]);
    fputc('}', f);
}

int kv_diff_json(struct kv_out *o, const char *path, const struct kv_diff *d)
{
    FILE *f = kv_out_open(o, path);
    if (!f)
        return -1;
    fputs("{\"a\":", f);
    json_side(f, d, 0);
    fputs(",\n\"b\":", f);
    json_side(f, d, 1);
    fprintf(f, ",\n\"scaling\":%s,\n\"breakdown\":[",
            d->scaling ? "true" : "false");
    const double *v[NPARTS];
    const bool *e[NPARTS];
    parts(d, v, e);
    for (int k = 0; k < NPARTS; k++) {
        fprintf(f, "%s{\"part\":\"%s\",", k ? "," : "", part_names[k]);
        json_num(f, "a", v[k][0]);
        json_num(f, "b", v[k][1]);
        json_num(f, "diff", v[k][1] - v[k][0]);
        fprintf(f, "\"a_estimated\":%s,\"b_estimated\":%s}",
                e[k][0] ? "true" : "false", e[k][1] ? "true" : "false");
    }
    fputs("],\n\"regions\":[", f);
    for (size_t i = 0; i < d->nrows; i++) {
        fputs(i ? ",\n" : "\n", f);
        json_row(f, i + 1, &d->rows[i]);
    }
    fputs("],\n\"files\":[", f);
    for (size_t i = 0; i < d->nfiles; i++) {
        fputs(i ? ",\n" : "\n", f);
        json_file(f, &d->files[i]);
    }
    fputs("],\n\"paths\":", f);
    kv_diff_paths_json(f, d);
    fputs("}\n", f);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* HTML                                                                      */

static void json_side(FILE *f, const struct kv_diff *d, int s)
{
    char ranks[128];
    kv_describe_ranks(ranks, sizeof ranks, d->run[s]);
    fputs("{\"file\":", f);
    kv_json_str(f, d->name[s]);
    fputs(",\"program\":", f);
    kv_json_str(f, d->run[s]->run->program);
    fputs(",\"ranks\":", f);
    kv_json_str(f, ranks);
    fprintf(f, ",\"n\":%zu,\"total\":", d->run[s]->n);
    kv_json_num(f, d->total[s]);
    fputs(",\"comp\":", f);
    kv_json_num(f, d->comp[s]);
    fputs(",\"mpi\":", f);
    kv_json_num(f, d->mpi[s]);
    fputs(",\"startup\":", f);
    kv_json_num(f, d->startup[s]);
    fputs(",\"io\":", f);
    kv_json_num(f, d->io[s]);
    fprintf(f, ",\"est\":{\"total\":%d,\"comp\":%d,\"mpi\":%d,\"startup\":%d,"
            "\"io\":%d}}", d->total_est[s], d->comp_est[s], d->mpi_est[s],
            d->startup_est[s], d->io_est[s]);
}

static void json_diff_row(FILE *f, const struct kv_diff_row *r)
{
    fprintf(f, "[\"%s\",", status_names[r->status]);
    kv_json_str(f, r->routine);
    fprintf(f, ",\"%s\",%d,", r->kind < 0 ? "ROUTINE" : kv_kind_name(r->kind),
            r->line);
    kv_json_str(f, r->text ? r->text : "");
    double v[] = { r->t[0], r->t[1], r->calls[0], r->calls[1], r->efficiency };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        fputc(',', f);
        kv_json_num(f, v[i]);
    }
    fputc(',', f);
    if (isinf(r->score))
        fputs("\"inf\"", f);
    else
        kv_json_num(f, r->score);
    fprintf(f, ",%d,%d]", r->t_est[0], r->t_est[1]);
}

void kv_diff_html(FILE *f, const struct kv_diff *d)
{
    kv_html_begin(f, "kmview diff");
    fputs("<script type=\"application/json\" id=\"kmdata\">{\"kind\":\"diff\","
          "\"a\":", f);
    json_side(f, d, 0);
    fputs(",\"b\":", f);
    json_side(f, d, 1);
    fprintf(f, ",\"scaling\":%s,\"slowTotal\":", d->scaling ? "true" : "false");
    kv_json_num(f, d->slow_total);
    fputs(",\"rows\":[", f);
    for (size_t i = 0; i < d->nrows; i++) {
        if (i)
            fputs(",\n", f);
        json_diff_row(f, &d->rows[i]);
    }
    fputs("],\n\"paths\":", f);
    kv_diff_paths_html(f, d);
    fputs("}</script>\n", f);
    kv_html_end(f, "diff");
}
