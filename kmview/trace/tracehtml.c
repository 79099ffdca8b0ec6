/*
 * tracehtml.c — the report's Trace view data: the member ,"trace":{...}
 * that trace.js draws as ranks x time, regions as bars stacked by depth,
 * messages as lines.
 *
 * A million events cannot all be drawn at every zoom, nor all embedded,
 * so the page gets two things.  Summaries: for each row (a rank's
 * thread), each depth up to KV_TH_DEPTHS and each of KV_TH_LEVELS zoom
 * levels (up to 4 rows: 512, 4,096 and 32,768 buckets over the run;
 * with more rows fewer, at least 32, 256 and 2,048, so that the finest
 * level stays within about KV_TH_BUCKETS buckets over all rows), runs
 * of buckets each naming the region that covers most of a bucket (by its longest
 * single stay there) and how much of the bucket regions cover; a region
 * longer than a bucket is one run however many buckets it spans, so the
 * size follows what can be seen, not the events.  And exact events: all
 * of them when there are at most KV_TH_EXACT, else the KV_TH_EXACT
 * longest (the page draws the finest summary under them when zoomed in
 * past it, so that nothing disappears).  Message lines: every matched
 * message up to KV_TH_MSGS, else every k-th by id, between rows shown.
 * More than KV_TH_ROWS rows do not fit a canvas nor an eye: then every
 * k-th file (rank) is shown, with all its threads, and besides them the
 * files that were elsewhere at the end than most (kv_trace_groups: a hung
 * run's odd rank), and the page says so.
 *
 * Arrays travel as base64 of little-endian words (write/html.c's helpers).
 * Must never hold more than one row's summaries and the exact set.
 */
#include "kmview/trace/trace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/write/html.h"
#include "kmview/write/out.h"
#include "support/buf.h"

#define KV_TH_LEVELS 3
#define KV_TH_DEPTHS 8
#define KV_TH_EXACT 200000
#define KV_TH_MSGS 5000
#define KV_TH_BUCKETS (1 << 17)  /* finest buckets over all rows, about */
#define KV_TH_ROWS 512           /* rows shown at most, about */

/* A run of buckets: start, length, region (global index), depth << 8 |
 * coverage (1..255). */
struct run { uint32_t start, len, region, dc; };

/* One (depth, level) summary being built. */
struct agg {
    struct run *runs;
    size_t n, cap;
    int64_t cur;             /* the bucket being filled, -1 none */
    uint32_t best;           /* its region with the longest stay */
    int64_t best_ns, cover_ns;
};

struct exact { double start, dur; uint32_t row, region, depth; };

struct hctx {
    FILE *f;
    struct kv_trace_set *s;
    int64_t level_buckets[KV_TH_LEVELS];
    double span;             /* ns of the run, at least 1 */
    uint32_t row;
    size_t file_stride;      /* every k-th file shown */
    bool *shown;             /* [file]: the k-th, or an odd one */
    size_t odd_shown;        /* rows of odd files shown besides */
    struct agg agg[KV_TH_DEPTHS][KV_TH_LEVELS];
    struct exact *heap;      /* min-heap by dur while choosing */
    size_t nexact;
    uint64_t regions;
    /* message lines */
    uint64_t stride;
    size_t nmsg;
    double *msg_t;           /* [2 k]: sent, received */
    uint32_t *msg_row;       /* [2 k] */
};

/* ------------------------------------------------------------------------ */
/* Summaries                                                                 */

static void push_run(struct agg *a, uint32_t start, uint32_t len,
                     uint32_t region, uint32_t dc)
{
    if (a->n) {
        struct run *p = &a->runs[a->n - 1];
        if (p->start + p->len == start && p->region == region && p->dc == dc) {
            p->len += len;
            return;
        }
    }
    KM_GROW(a->runs, a->cap, a->n + 1);
    a->runs[a->n++] = (struct run){ start, len, region, dc };
}

static void flush_bucket(struct agg *a, int depth, double w)
{
    if (a->cur < 0)
        return;
    uint32_t cov = (uint32_t)(255.0 * (double)a->cover_ns / w + 0.5);
    cov = cov < 1 ? 1 : cov > 255 ? 255 : cov;
    push_run(a, (uint32_t)a->cur, 1, a->best, (uint32_t)depth << 8 | cov);
    a->cur = -1;
}

static void bucket_add(struct agg *a, int depth, double w, int64_t b,
                       uint32_t region, int64_t ns)
{
    if (b != a->cur) {
        flush_bucket(a, depth, w);
        a->cur = b, a->best = region, a->best_ns = 0, a->cover_ns = 0;
    }
    a->cover_ns += ns;
    if (ns > a->best_ns)
        a->best_ns = ns, a->best = region;
}

/* A region [s, e) at `depth` into one level's summary. */
static void summarise(struct hctx *h, int depth, int level, int64_t s,
                      int64_t e, uint32_t region)
{
    struct agg *a = &h->agg[depth][level];
    double w = h->span / (double)h->level_buckets[level];
    int64_t last = h->level_buckets[level] - 1;
    int64_t bs = (int64_t)((double)s / w);
    int64_t be = (int64_t)((double)(e > s ? e - 1 : s) / w);
    bs = bs > last ? last : bs;
    be = be > last ? last : be;
    if (bs == be) {
        bucket_add(a, depth, w, bs, region, e - s);
        return;
    }
    bucket_add(a, depth, w, bs, region, (int64_t)((double)(bs + 1) * w) - s);
    flush_bucket(a, depth, w);
    if (be > bs + 1)
        push_run(a, (uint32_t)(bs + 1), (uint32_t)(be - bs - 1), region,
                 (uint32_t)depth << 8 | 255);
    bucket_add(a, depth, w, be, region, e - (int64_t)((double)be * w));
}

/* ------------------------------------------------------------------------ */
/* Exact events: the longest KV_TH_EXACT                                     */

static void heap_down(struct exact *v, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && v[l].dur < v[m].dur) m = l;
        if (l + 1 < n && v[l + 1].dur < v[m].dur) m = l + 1;
        if (m == i)
            return;
        struct exact t = v[i]; v[i] = v[m]; v[m] = t;
        i = m;
    }
}

static void heap_up(struct exact *v, size_t i)
{
    while (i && v[(i - 1) / 2].dur > v[i].dur) {
        struct exact t = v[i]; v[i] = v[(i - 1) / 2]; v[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void keep_exact(struct hctx *h, const struct exact *x)
{
    if (h->nexact < KV_TH_EXACT) {
        h->heap[h->nexact] = *x;
        heap_up(h->heap, h->nexact++);
    } else if (x->dur > h->heap[0].dur) {
        h->heap[0] = *x;
        heap_down(h->heap, h->nexact, 0);
    }
}

static int by_row_start(const void *a, const void *b)
{
    const struct exact *x = a, *y = b;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

/* ------------------------------------------------------------------------ */
/* The pass over the events                                                  */

static void message_end(struct hctx *h, const struct kv_tr_event *e)
{
    if (e->flow < 0 || (uint64_t)e->flow % h->stride)
        return;
    size_t k = (size_t)((uint64_t)e->flow / h->stride);
    if (k >= h->nmsg)
        return;                  /* (files not shown leave their ends -1) */
    int side = e->type == KV_TR_SENT ? 0 : 1;
    h->msg_t[2 * k + side] = (double)kv_trace_message_ns(e);
    h->msg_row[2 * k + side] = h->row;
}

static int on_event(void *ctx, const struct kv_trace *t,
                    const struct kv_tr_thread *th, const struct kv_tr_event *e)
{
    struct hctx *h = ctx;
    (void)th;
    if (e->type == KV_TR_SENT || e->type == KV_TR_RECEIVED) {
        message_end(h, e);
        return 0;
    }
    if (e->type != KV_TR_LEAVE)
        return 0;
    uint32_t region = (size_t)e->id <= t->nregions ? t->global[e->id] : 0;
    h->regions++;
    if (e->depth < KV_TH_DEPTHS)
        for (int l = 0; l < KV_TH_LEVELS; l++)
            summarise(h, e->depth, l, e->enter_ns, e->ns, region);
    struct exact x = { (double)e->enter_ns, (double)(e->ns - e->enter_ns),
                       h->row, region, (uint32_t)e->depth };
    keep_exact(h, &x);
    return 0;
}

static void write_u32(FILE *f, const uint32_t *v, size_t n)
{
    /* as float64, which holds every uint32 exactly */
    double *d = km_xcalloc(n + 1, sizeof *d);
    for (size_t k = 0; k < n; k++)
        d[k] = v[k];
    kv_html_array(f, d, n, 0);
    free(d);
}

/* The row's summaries: "lv":[[runs of level 0], ...], each level's runs
 * ordered by depth, then start. */
static void write_row_levels(struct hctx *h)
{
    fputs(",\"lv\":[", h->f);
    for (int l = 0; l < KV_TH_LEVELS; l++) {
        size_t n = 0;
        for (int d = 0; d < KV_TH_DEPTHS; d++) {
            flush_bucket(&h->agg[d][l], d,
                         h->span / (double)h->level_buckets[l]);
            n += h->agg[d][l].n;
        }
        uint32_t *w = km_xcalloc(4 * n + 1, sizeof *w);
        size_t o = 0;
        for (int d = 0; d < KV_TH_DEPTHS; d++) {
            struct agg *a = &h->agg[d][l];
            for (size_t k = 0; k < a->n; k++) {
                w[o++] = a->runs[k].start;
                w[o++] = a->runs[k].len;
                w[o++] = a->runs[k].region;
                w[o++] = a->runs[k].dc;
            }
            a->n = 0;
        }
        fputs(l ? "," : "", h->f);
        write_u32(h->f, w, 4 * n);
        free(w);
    }
    fputc(']', h->f);
}

/* The set's regions: [label, kind, file, line]. */
static void write_regions(struct hctx *h)
{
    char b[512];
    fputs(",\"regions\":[", h->f);
    for (size_t k = 0; k < h->s->nregions; k++) {
        const struct kv_tr_gregion *r = &h->s->regions[k];
        const struct kv_tr_region *g = kv_trace_region(r->t, r->id);
        fputs(k ? ",[" : "[", h->f);
        kv_json_str(h->f, kv_trace_region_label(r->t, r->id, b, sizeof b));
        fputc(',', h->f);
        kv_json_str(h->f, g ? kv_trace_kind_name(g->kind) : "undefined");
        fputc(',', h->f);
        kv_json_str(h->f, g ? g->file : "");
        fprintf(h->f, ",%d]", g ? g->line : 0);
    }
    fputc(']', h->f);
}

static int write_rows(struct hctx *h)
{
    int rc = 0;
    kv_trace_rewind(h->s);
    fputs(",\"rows\":[", h->f);
    for (size_t k = 0; rc == 0 && k < h->s->n; k++) {
        struct kv_trace *t = &h->s->t[k];
        if (!h->shown[k])
            continue;
        for (size_t n = 0; rc == 0 && n < t->nthreads; n++) {
            struct kv_tr_thread *th = &t->threads[n];
            fprintf(h->f, "%s{\"rank\":%d,\"thread\":%d,\"state\":",
                    h->row ? "," : "", t->proc, th->thread);
            kv_json_str(h->f, kv_trace_state_name(t->state));
            fprintf(h->f, ",\"open\":%zu", th->nopen);
            rc = kv_trace_each(h->s, t, th, on_event, h);
            write_row_levels(h);
            fputc('}', h->f);
            h->row++;
        }
    }
    fputc(']', h->f);
    write_regions(h);
    return rc;
}

static void write_exact(struct hctx *h)
{
    qsort(h->heap, h->nexact, sizeof *h->heap, by_row_start);
    double *v = km_xcalloc(h->nexact + 1, sizeof *v);
    uint32_t *u = km_xcalloc(h->nexact + 1, sizeof *u);
    const char *names[] = { "start", "dur", "row", "region", "depth" };
    for (int c = 0; c < 5; c++) {
        fprintf(h->f, ",\"%s\":", names[c]);
        for (size_t k = 0; k < h->nexact; k++) {
            const struct exact *x = &h->heap[k];
            if (c < 2)
                v[k] = c == 0 ? x->start : x->dur;
            else
                u[k] = c == 2 ? x->row : c == 3 ? x->region : x->depth;
        }
        if (c < 2)
            kv_html_array(h->f, v, h->nexact, 0);
        else
            write_u32(h->f, u, h->nexact);
    }
    free(v);
    free(u);
}

static void write_messages(struct hctx *h)
{
    size_t n = 0;
    for (size_t k = 0; k < h->nmsg; k++)  /* both ends seen */
        if (h->msg_t[2 * k] >= 0 && h->msg_t[2 * k + 1] >= 0) {
            h->msg_t[2 * n] = h->msg_t[2 * k];
            h->msg_t[2 * n + 1] = h->msg_t[2 * k + 1];
            h->msg_row[2 * n] = h->msg_row[2 * k];
            h->msg_row[2 * n + 1] = h->msg_row[2 * k + 1];
            n++;
        }
    fprintf(h->f, ",\"msgStride\":%llu,\"msgT\":",
            (unsigned long long)h->stride);
    kv_html_array(h->f, h->msg_t, 2 * n, 0);
    fputs(",\"msgRow\":", h->f);
    write_u32(h->f, h->msg_row, 2 * n);
}

/* Buckets per level: the finest at most 65,536, as many as KV_TH_BUCKETS
 * allows over the rows (a power of two, at least 2,048); each coarser
 * level 8 times fewer. */
static void choose_levels(struct hctx *h)
{
    size_t rows = 0, shown = 0;
    for (size_t k = 0; k < h->s->n; k++)
        rows += h->s->t[k].nthreads;
    h->file_stride = rows > KV_TH_ROWS ? (rows + KV_TH_ROWS - 1) / KV_TH_ROWS : 1;
    h->shown = km_xcalloc(h->s->n + 1, sizeof *h->shown);
    if (h->file_stride > 1) {        /* the odd ones, if they are few */
        struct kv_tr_groups g;
        kv_trace_groups(&g, h->s);
        kv_trace_odd_files(&g, h->s, h->shown);
        kv_trace_groups_free(&g);
        size_t odd = 0;
        for (size_t k = 0; k < h->s->n; k++)
            odd += h->shown[k] && k % h->file_stride ? h->s->t[k].nthreads : 0;
        if (odd > KV_TH_ROWS / 2)
            memset(h->shown, 0, h->s->n * sizeof *h->shown);
        else
            h->odd_shown = odd;
    }
    for (size_t k = 0; k < h->s->n; k++) {
        h->shown[k] = h->shown[k] || k % h->file_stride == 0;
        shown += h->shown[k] ? h->s->t[k].nthreads : 0;
    }
    rows = shown;
    int64_t finest = 65536;
    while (finest > 2048 && (size_t)finest * (rows ? rows : 1) > KV_TH_BUCKETS)
        finest /= 2;
    for (int l = KV_TH_LEVELS - 1; l >= 0; l--, finest /= 8)
        h->level_buckets[l] = finest;
}

int kv_trace_html(FILE *f, struct kv_trace_set *s)
{
    struct hctx h = { 0 };
    h.f = f;
    h.s = s;
    choose_levels(&h);
    h.span = s->end_ns > 0 ? (double)s->end_ns : 1;
    for (int d = 0; d < KV_TH_DEPTHS; d++)
        for (int l = 0; l < KV_TH_LEVELS; l++)
            h.agg[d][l].cur = -1;
    h.heap = km_xcalloc(KV_TH_EXACT, sizeof *h.heap);
    h.stride = s->matched / KV_TH_MSGS + 1;
    h.nmsg = (size_t)(s->matched / h.stride) + 1;
    h.msg_t = km_xcalloc(2 * h.nmsg, sizeof *h.msg_t);
    h.msg_row = km_xcalloc(2 * h.nmsg, sizeof *h.msg_row);
    for (size_t k = 0; k < 2 * h.nmsg; k++)
        h.msg_t[k] = -1;
    fputs(",\"trace\":{\"span\":", f);
    kv_json_num(f, h.span);
    fputs(",\"files\":[", f);
    for (size_t k = 0; k < s->n; k++) {
        fputs(k ? "," : "", f);
        kv_json_str(f, s->t[k].path);
    }
    fprintf(f, "],\"fileStride\":%zu,\"oddShown\":%zu", h.file_stride,
            h.odd_shown);
    fprintf(f, ",\"levels\":[%lld,%lld,%lld]", (long long)h.level_buckets[0],
            (long long)h.level_buckets[1], (long long)h.level_buckets[2]);
    int rc = write_rows(&h);
    fprintf(f, ",\"nregions\":%llu,\"complete\":%s,\"matched\":%llu",
            (unsigned long long)h.regions,
            h.regions <= KV_TH_EXACT ? "true" : "false",
            (unsigned long long)s->matched);
    write_exact(&h);
    write_messages(&h);
    fputc('}', f);
    for (int d = 0; d < KV_TH_DEPTHS; d++)
        for (int l = 0; l < KV_TH_LEVELS; l++)
            free(h.agg[d][l].runs);
    free(h.heap);
    free(h.shown);
    free(h.msg_t);
    free(h.msg_row);
    return rc ? -1 : 0;
}
