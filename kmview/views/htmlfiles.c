/*
 * htmlfiles.c — the Files view's data in kmview's HTML report: per file
 * and interface (the Fortran I/O statements of a rank's Files block, the
 * MPI-IO calls of its MPI-IO block) over the ranks, its metadata and data
 * operations and their times, the bytes read and written with how many
 * of its ranks' figures were of each kind (exact, estimate, at least,
 * unknown: the page must not call a sum exact that is not), its size, and
 * the ranks that spent the most I/O time on it.
 *
 * The page stays small whatever the run: files are summed over the ranks
 * here, not in the page.  Up to 2 x HTML_FILES files every one travels;
 * beyond (a file per rank, say) the HTML_FILES with the most I/O time and
 * the HTML_FILES with the most bytes, the others summed into one row per
 * interface.  A file carries its HTML_TOP ranks with the most I/O time on
 * it and the least and most over its ranks, not every rank, so that a
 * file shared by 100,000 ranks costs what a file of one rank does.  The
 * totals are summed over every rank's rows, in rank order.
 *
 * Must never write anything but the "files" member of the data, nor
 * read anything but the run.
 */
#include "kmview/views/htmlfiles.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/write/out.h"
#include "support/buf.h"

/* Files by each measure when there are more than twice as many. */
#define HTML_FILES 250
/* Ranks listed per file, the most I/O time first. */
#define HTML_TOP 10

enum { IFACE_FORTRAN, IFACE_MPIIO, NIFACES };

/* One file row of one rank: section sec's files[k]. */
struct ref {
    const struct kv_file *x;
    size_t sec;
    size_t k;
};

/* Figures summed over file rows.  est: bit 0 metadata time, 1 read time,
 * 2 write time held an estimate; kinds: rows whose bytes were of each
 * enum kv_bytes_kind; t*: the least and most I/O time of a row, its rank
 * and its est bits. */
struct acc {
    int ranks, rows;
    uint64_t meta[KV_META_KINDS], reads, writes, read_b, write_b;
    double meta_s, read_s, write_s;
    unsigned est;
    int read_kinds[4], write_kinds[4];
    int64_t size_min, size_max;          /* -1: no size known */
    double tmin, tmax;
    int tmin_rank, tmax_rank;
    unsigned tmin_est, tmax_est;
};

/* One file of one interface over the ranks: refs[first .. first + n). */
struct group {
    size_t first, n;
    struct acc a;
    bool held;
};

static double row_time(const struct kv_file *x)
{
    return x->meta_s + x->read_s + x->write_s;
}

static unsigned row_est(const struct kv_file *x)
{
    return (unsigned)x->meta_est | (unsigned)x->read_est << 1 |
           (unsigned)x->write_est << 2;
}

static void acc_init(struct acc *a)
{
    memset(a, 0, sizeof *a);
    a->size_min = a->size_max = -1;
    a->tmin_rank = a->tmax_rank = -1;
}

/* Add one rank's row (the caller counts the ranks). */
static void acc_add(struct acc *a, const struct kv_file *x, int rank)
{
    double t = row_time(x);
    for (int m = 0; m < KV_META_KINDS; m++)
        a->meta[m] += x->meta[m];
    a->meta_s += x->meta_s;
    a->reads += x->reads;
    a->read_s += x->read_s;
    a->read_b += x->read_b.bytes;
    a->read_kinds[x->read_b.kind]++;
    a->writes += x->writes;
    a->write_s += x->write_s;
    a->write_b += x->write_b.bytes;
    a->write_kinds[x->write_b.kind]++;
    a->est |= row_est(x);
    if (x->size >= 0 && (a->size_min < 0 || x->size < a->size_min))
        a->size_min = x->size;
    if (x->size > a->size_max)
        a->size_max = x->size;
    if (a->rows == 0 || t < a->tmin) {
        a->tmin = t;
        a->tmin_rank = rank;
        a->tmin_est = row_est(x);
    }
    if (a->rows == 0 || t > a->tmax) {
        a->tmax = t;
        a->tmax_rank = rank;
        a->tmax_est = row_est(x);
    }
    a->rows++;
}

static double acc_time(const struct acc *a)
{
    return a->meta_s + a->read_s + a->write_s;
}

/* The bytes whose figures are known (read and written), -1 when none. */
static double acc_bytes(const struct acc *a)
{
    int known = a->rows * 2 - a->read_kinds[KV_BYTES_UNKNOWN] -
                a->write_kinds[KV_BYTES_UNKNOWN];
    return known ? (double)a->read_b + (double)a->write_b : -1;
}

/* ---- grouping ----------------------------------------------------------- */

static int by_file(const void *pa, const void *pb)
{
    const struct ref *a = pa, *b = pb;
    if (a->x->mpiio != b->x->mpiio)
        return a->x->mpiio ? 1 : -1;
    int c = strcmp(a->x->name, b->x->name);
    if (c)
        return c;
    if (a->sec != b->sec)
        return a->sec < b->sec ? -1 : 1;
    return (a->k > b->k) - (a->k < b->k);
}

/* Every rank's file rows, by interface, name and rank; *n of them. */
static struct ref *all_refs(const struct kv_run *run, size_t *n)
{
    size_t cap = 0;
    for (size_t i = 0; i < run->nsections; i++)
        cap += run->ranks[i].nfiles;
    struct ref *v = km_xcalloc(cap + 1, sizeof *v);
    *n = 0;
    for (size_t i = 0; i < run->nsections; i++)
        for (size_t k = 0; k < run->ranks[i].nfiles; k++)
            v[(*n)++] = (struct ref){ &run->ranks[i].files[k], i, k };
    qsort(v, *n, sizeof *v, by_file);
    return v;
}

/* The files over the ranks, in the order of the refs; *ng of them. */
static struct group *group_refs(const struct kv_run *run,
                                const struct ref *v, size_t n, size_t *ng)
{
    struct group *g = km_xcalloc(n + 1, sizeof *g);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || v[i].x->mpiio != v[i - 1].x->mpiio ||
            strcmp(v[i].x->name, v[i - 1].x->name) != 0) {
            g[m].first = i;
            acc_init(&g[m++].a);
        }
        struct group *c = &g[m - 1];
        c->a.ranks += c->n == 0 || v[i].sec != v[i - 1].sec;
        acc_add(&c->a, v[i].x, run->ranks[v[i].sec].rank);
        c->n++;
    }
    *ng = m;
    return g;
}

/* ---- the files the page holds -------------------------------------------- */

/* A group's place in an order: its measure, then its interface and name. */
struct keyed {
    double key;
    const struct kv_file *x;         /* the group's first row */
    size_t group;
};

static int by_key(const void *pa, const void *pb)
{
    const struct keyed *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    if (a->x->mpiio != b->x->mpiio)
        return a->x->mpiio ? 1 : -1;
    return strcmp(a->x->name, b->x->name);
}

/* Indices of the groups, the most bytes (else I/O time) first. */
static size_t *ranked(const struct group *g, size_t ng, const struct ref *v,
                      bool bytes)
{
    struct keyed *k = km_xcalloc(ng + 1, sizeof *k);
    for (size_t i = 0; i < ng; i++)
        k[i] = (struct keyed){ bytes ? acc_bytes(&g[i].a)
                                     : acc_time(&g[i].a),
                               v[g[i].first].x, i };
    qsort(k, ng, sizeof *k, by_key);
    size_t *o = km_xcalloc(ng + 1, sizeof *o);
    for (size_t i = 0; i < ng; i++)
        o[i] = k[i].group;
    free(k);
    return o;
}

/* Mark the groups the page holds: all, or the HTML_FILES with the most
 * time and the HTML_FILES with the most bytes.  Returns the time order. */
static size_t *hold(struct group *g, size_t ng, const struct ref *v)
{
    size_t *by_time = ranked(g, ng, v, false);
    if (ng <= 2 * HTML_FILES) {
        for (size_t i = 0; i < ng; i++)
            g[i].held = true;
        return by_time;
    }
    size_t *by_bytes = ranked(g, ng, v, true);
    for (size_t i = 0; i < HTML_FILES; i++)
        g[by_time[i]].held = g[by_bytes[i]].held = true;
    free(by_bytes);
    return by_time;
}

/* ---- writing ------------------------------------------------------------- */

static void write_num(FILE *f, double v)
{
    fputc(',', f);
    kv_json_num(f, v);
}

static void write_kinds(FILE *f, const int k[4])
{
    fprintf(f, ",[%d,%d,%d,%d]", k[0], k[1], k[2], k[3]);
}

/* [name, mpiio, ranks, opens, closes, inquires, seeks, flushes, meta_s,
 * reads, read_s, read_b, read kinds, writes, write_s, write_b, write
 * kinds, est, size_max, size_min, tmin, tmin_rank, tmin_est, tmax,
 * tmax_rank, tmax_est, — the caller closes it (after the top ranks). */
static void write_acc(FILE *f, const char *name, int mpiio,
                      const struct acc *a)
{
    fputc('[', f);
    kv_json_str(f, name);
    fprintf(f, ",%d,%d", mpiio, a->ranks);
    for (int m = 0; m < KV_META_KINDS; m++)
        fprintf(f, ",%llu", (unsigned long long)a->meta[m]);
    write_num(f, a->meta_s);
    fprintf(f, ",%llu", (unsigned long long)a->reads);
    write_num(f, a->read_s);
    fprintf(f, ",%llu", (unsigned long long)a->read_b);
    write_kinds(f, a->read_kinds);
    fprintf(f, ",%llu", (unsigned long long)a->writes);
    write_num(f, a->write_s);
    fprintf(f, ",%llu", (unsigned long long)a->write_b);
    write_kinds(f, a->write_kinds);
    fprintf(f, ",%u,%lld,%lld", a->est, (long long)a->size_max,
            (long long)a->size_min);
    write_num(f, a->tmin);
    fprintf(f, ",%d,%u", a->tmin_rank, a->tmin_est);
    write_num(f, a->tmax);
    fprintf(f, ",%d,%u", a->tmax_rank, a->tmax_est);
}

/* One rank's row: [rank, opens ... flushes, meta_s, reads, read_s,
 * read_b, read kind, writes, write_s, write_b, write kind, size, est]. */
static void write_rank_row(FILE *f, const struct kv_file *x, int rank)
{
    fprintf(f, "[%d", rank);
    for (int m = 0; m < KV_META_KINDS; m++)
        fprintf(f, ",%llu", (unsigned long long)x->meta[m]);
    write_num(f, x->meta_s);
    fprintf(f, ",%llu", (unsigned long long)x->reads);
    write_num(f, x->read_s);
    fprintf(f, ",%llu,%d,%llu", (unsigned long long)x->read_b.bytes,
            (int)x->read_b.kind, (unsigned long long)x->writes);
    write_num(f, x->write_s);
    fprintf(f, ",%llu,%d,%lld,%u]", (unsigned long long)x->write_b.bytes,
            (int)x->write_b.kind, (long long)x->size, row_est(x));
}

/* r's row before s's: more I/O time, then the lower rank. */
static bool heavier(const struct ref *r, const struct ref *s)
{
    double x = row_time(r->x), y = row_time(s->x);
    if (x != y)
        return x > y;
    return r->sec < s->sec || (r->sec == s->sec && r->k < s->k);
}

/* The group's HTML_TOP rows with the most I/O time, heaviest first. */
static void write_top(FILE *f, const struct kv_run *run, const struct ref *v,
                      const struct group *g)
{
    const struct ref *top[HTML_TOP];
    size_t n = 0;
    for (size_t i = g->first; i < g->first + g->n; i++) {
        size_t at = n < HTML_TOP ? n++ : HTML_TOP;
        if (at == HTML_TOP && !heavier(&v[i], top[HTML_TOP - 1]))
            continue;
        if (at == HTML_TOP)
            at = HTML_TOP - 1;
        while (at > 0 && heavier(&v[i], top[at - 1])) {
            top[at] = top[at - 1];
            at--;
        }
        top[at] = &v[i];
    }
    fputs(",[", f);
    for (size_t k = 0; k < n; k++) {
        if (k)
            fputc(',', f);
        write_rank_row(f, top[k]->x, run->ranks[top[k]->sec].rank);
    }
    fputs("]]", f);
}

/* "other":[fortran, mpiio]: the files the page does not hold, summed per
 * interface ({"files": n, "row": [...]}), or null. */
static void write_other(FILE *f, const struct kv_run *run,
                        const struct group *g, size_t ng, const struct ref *v)
{
    fputs(",\n\"other\":[", f);
    for (int i = 0; i < NIFACES; i++) {
        struct acc a;
        acc_init(&a);
        size_t files = 0;
        unsigned char *seen = km_xcalloc(run->nsections + 1, 1);
        for (size_t k = 0; k < ng; k++) {
            if (g[k].held || v[g[k].first].x->mpiio != (i == IFACE_MPIIO))
                continue;
            files++;
            for (size_t r = g[k].first; r < g[k].first + g[k].n; r++) {
                a.ranks += !seen[v[r].sec];
                seen[v[r].sec] = 1;
                acc_add(&a, v[r].x, run->ranks[v[r].sec].rank);
            }
        }
        free(seen);
        fputs(i ? "," : "", f);
        if (!files) {
            fputs("null", f);
            continue;
        }
        fprintf(f, "{\"files\":%zu,\"row\":", files);
        write_acc(f, NULL, i, &a);
        fputs(",[]]}", f);
    }
    fputc(']', f);
}

/* "total":[all, fortran, mpiio]: every rank's rows summed in rank order
 * (null for an interface no rank used). */
static void write_totals(FILE *f, const struct kv_run *run)
{
    struct acc a[1 + NIFACES];
    for (int i = 0; i <= NIFACES; i++)
        acc_init(&a[i]);
    for (size_t s = 0; s < run->nsections; s++) {
        const struct kv_rank *r = &run->ranks[s];
        bool used[1 + NIFACES] = { false };
        for (size_t k = 0; k < r->nfiles; k++) {
            int i = 1 + (r->files[k].mpiio ? IFACE_MPIIO : IFACE_FORTRAN);
            acc_add(&a[0], &r->files[k], r->rank);
            acc_add(&a[i], &r->files[k], r->rank);
            used[0] = used[i] = true;
        }
        for (int i = 0; i <= NIFACES; i++)
            a[i].ranks += used[i];
    }
    fputs(",\n\"total\":[", f);
    for (int i = 0; i <= NIFACES; i++) {
        fputs(i ? "," : "", f);
        if (!a[i].rows) {
            fputs("null", f);
            continue;
        }
        write_acc(f, NULL, i ? i - 1 : -1, &a[i]);
        fputs(",[]]", f);
    }
    fputc(']', f);
}

void kv_html_files(FILE *f, const struct kv_stats *st)
{
    const struct kv_run *run = st->run;
    size_t n, ng;
    fputs("\"files\":", f);
    struct ref *v = all_refs(run, &n);
    if (!n) {
        fputs("null,\n", f);
        free(v);
        return;
    }
    struct group *g = group_refs(run, v, n, &ng);
    size_t *order = hold(g, ng, v), held = 0;
    fputs("{\"rows\":[", f);
    for (size_t i = 0; i < ng; i++) {
        const struct group *c = &g[order[i]];
        if (!c->held)
            continue;
        fputs(held++ ? ",\n" : "\n", f);
        write_acc(f, v[c->first].x->name, v[c->first].x->mpiio, &c->a);
        write_top(f, run, v, c);
    }
    fprintf(f, "],\n\"nfiles\":%zu,\"top\":%d", ng, HTML_TOP);
    write_other(f, run, g, ng, v);
    write_totals(f, run);
    fputs("},\n", f);
    free(order);
    free(g);
    free(v);
}
