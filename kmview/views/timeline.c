/*
 * timeline.c — the ranks' time slots (the Timeline blocks of KM_output 5)
 * side by side: the common grid, the phases, the ranks that stand apart
 * over time, and their text, CSV and JSON forms.
 *
 * The grid.  Every rank's slots are 1 ms times a power of two wide, from
 * the same origin (MPI_INIT's return); a rank that ran a little longer
 * may have doubled its width once more than another.  So the common width
 * is the widest, the narrower ranks' slots are merged in pairs until they
 * have it, and then every rank's in pairs again while there are more than
 * the grid may hold (64 for the terminal and the analyses).  Ranks
 * without a Timeline block (older formats, a rank whose results were
 * lost) have none: all zero, and said so.
 *
 * Phases, as iScopes looks along the time axis: each slot is described by
 * what the ranks did in it together — the shares of computation, MPI, I/O
 * and other time, and of the run's four busiest routines — and the slots
 * are clustered by complete linkage over the L1 distance of these shares
 * (0 .. 2; cut at 0.5 by default: a quarter of the time moved from one
 * thing to another).  A phase is a run of consecutive slots of one
 * cluster; slots of one cluster far apart are phases of the same kind
 * (an iteration that comes back).
 *
 * Odd ranks, as iScopes looks along the node axis: each rank is the
 * vector of its computation, MPI and I/O time in every slot, and the
 * ranks are clustered by complete linkage (ranks.c and scale.c: exact, or
 * over distinct vectors and cells at 10^5 ranks) over the L1 distance
 * divided by the mean total time, the same measure and cut as kmview
 * ranks: the time two ranks spend differently, slot by slot, as a
 * fraction of the run.  An outlier rank then departs from the main group
 * at the first slot where it differs by half as much as in the slot it
 * differs most in: the moment it falls behind (or ahead).
 *
 * Must never: read files, or change the run.
 */
#include "kmview/views/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/figures/cluster.h"
#include "kmview/write/out.h"
#include "support/buf.h"

static const char *const cat_name[KV_TL_NCAT] = {
    "computation", "mpi", "io", "other"
};

/* ------------------------------------------------------------------------ */
/* The grid                                                                  */

/* How many of a rank's slots make one of width w (a power of two). */
static int merge_factor(double w, double rank_width)
{
    double r = w / rank_width;
    int f = 1;
    while (f < (1 << 30) && (double)f * 1.5 < r)
        f *= 2;
    return f;
}

int kv_tl_grid_build(struct kv_tl_grid *g, const struct kv_stats *st,
                     int max_slots)
{
    memset(g, 0, sizeof *g);
    g->n = st->n;
    double w = 0;
    for (size_t p = 0; p < st->n; p++)
        if (st->sec[p]->tl.v && st->sec[p]->tl.width > w)
            w = st->sec[p]->tl.width;
    if (w <= 0)
        return -1;
    int slots = 0;
    for (size_t p = 0; p < st->n; p++) {
        const struct kv_timeline *tl = &st->sec[p]->tl;
        if (tl->slots == 0 || !tl->v)
            continue;
        int f = merge_factor(w, tl->width);
        int s = (tl->slots + f - 1) / f;
        if (s > slots)
            slots = s;
    }
    int m = 1;
    while ((slots + m - 1) / m > max_slots)
        m *= 2;
    g->slots = (slots + m - 1) / m;
    g->width = w * m;
    g->v = km_xcalloc(st->n * (size_t)g->slots * KV_TL_NCAT + 1,
                      sizeof *g->v);
    g->has = km_xcalloc(st->n + 1, sizeof *g->has);
    for (size_t p = 0; p < st->n; p++) {
        const struct kv_timeline *tl = &st->sec[p]->tl;
        if (tl->slots == 0 || !tl->v)
            continue;
        g->has[p] = true;
        g->nhave++;
        g->est |= tl->est & ((1u << KV_TL_NCAT) - 1);
        g->origin_mpi |= tl->origin_mpi;
        int f = merge_factor(w, tl->width) * m;
        float *row = &g->v[p * (size_t)g->slots * KV_TL_NCAT];
        for (int r = 1; r <= tl->slots; r++) {
            int s = (r - 1) / f;
            for (int c = 0; c < KV_TL_NCAT; c++)
                row[s * KV_TL_NCAT + c] +=
                    (float)((double)tl->v[(size_t)r * tl->ncols + c] * 1e-9);
        }
    }
    return 0;
}

void kv_tl_grid_free(struct kv_tl_grid *g)
{
    free(g->v);
    free(g->has);
    memset(g, 0, sizeof *g);
}

static const float *cell(const struct kv_tl_grid *g, size_t p, int s)
{
    return &g->v[(p * (size_t)g->slots + (size_t)s) * KV_TL_NCAT];
}

/* ------------------------------------------------------------------------ */
/* Phases                                                                    */

#define PHASE_ROUTINES 4
#define PHASE_DIMS (KV_TL_NCAT + PHASE_ROUTINES)

/* The run's busiest routines over the ranks' columns (routine ids). */
static int busiest_routines(const struct kv_stats *st, int *top)
{
    size_t nr = st->run->nroutines;
    double *sum = km_xcalloc(nr + 1, sizeof *sum);
    for (size_t p = 0; p < st->n; p++) {
        const struct kv_timeline *tl = &st->sec[p]->tl;
        for (int k = 0; tl->v && k < tl->ntop; k++)
            for (int r = 0; r <= tl->slots; r++)
                sum[tl->top[k]] += (double)tl->v[(size_t)r * tl->ncols +
                                                 KV_TL_NCAT + k] * 1e-9;
    }
    int n = 0;
    for (int k = 0; k < PHASE_ROUTINES; k++) {
        int best = -1;
        for (size_t i = 0; i < nr; i++)
            if (sum[i] > 0 && (best < 0 || sum[i] > sum[best]))
                best = (int)i;
        if (best < 0)
            break;
        top[n++] = best;
        sum[best] = 0;
    }
    free(sum);
    return n;
}

/* Each slot's shares over the ranks: [s * PHASE_DIMS + d]. */
static double *slot_shares(const struct kv_tl_analysis *a,
                           const struct kv_stats *st)
{
    const struct kv_tl_grid *g = &a->grid;
    double *x = km_xcalloc((size_t)g->slots * PHASE_DIMS + 1, sizeof *x);
    int top[PHASE_ROUTINES];
    int ntop = busiest_routines(st, top);
    double w = g->width;
    for (size_t p = 0; p < g->n; p++) {
        for (int s = 0; s < g->slots; s++)
            for (int c = 0; c < KV_TL_NCAT; c++)
                x[s * PHASE_DIMS + c] += cell(g, p, s)[c];
        const struct kv_timeline *tl = &st->sec[p]->tl;
        for (int k = 0; k < tl->ntop; k++)
            for (int j = 0; j < ntop; j++)
                if (tl->top[k] == top[j])
                    for (int r = 1; r <= tl->slots; r++) {
                        double start = (r - 1) * tl->width;
                        int s = (int)(start / w + 1e-9);
                        if (s < g->slots)
                            x[s * PHASE_DIMS + KV_TL_NCAT + j] +=
                                (double)tl->v[(size_t)r * tl->ncols +
                                              KV_TL_NCAT + k] * 1e-9;
                    }
    }
    for (int s = 0; s < g->slots; s++) {
        double sum = 0;
        for (int c = 0; c < KV_TL_NCAT; c++)
            sum += x[s * PHASE_DIMS + c];
        for (int d = 0; d < PHASE_DIMS; d++)
            x[s * PHASE_DIMS + d] = sum > 0 ? x[s * PHASE_DIMS + d] / sum : 0;
    }
    return x;
}

static void find_phases(struct kv_tl_analysis *a, const struct kv_stats *st)
{
    int n = a->grid.slots;
    double *x = slot_shares(a, st);
    a->slot_kind = km_xcalloc((size_t)n + 1, sizeof *a->slot_kind);
    if (n > 1) {
        float *dist = km_xcalloc((size_t)n * (size_t)(n - 1) / 2 + 1,
                                 sizeof *dist);
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                double d = 0;
                for (int k = 0; k < PHASE_DIMS; k++)
                    d += fabs(x[i * PHASE_DIMS + k] - x[j * PHASE_DIMS + k]);
                dist[kv_condensed_index((size_t)n, (size_t)i, (size_t)j)] =
                    (float)d;
            }
        struct kv_merge *m = km_xcalloc((size_t)n, sizeof *m);
        kv_complete_linkage(dist, (size_t)n, m);
        kv_cut_height(m, (size_t)n, a->phase_cut, a->slot_kind);
        free(m);
        free(dist);
    }
    free(x);
    a->phase_first = km_xcalloc((size_t)n + 1, sizeof *a->phase_first);
    a->phase_last = km_xcalloc((size_t)n + 1, sizeof *a->phase_last);
    a->phase_kind = km_xcalloc((size_t)n + 1, sizeof *a->phase_kind);
    for (int s = 0; s < n; s++) {
        if (s > 0 && a->slot_kind[s] == a->slot_kind[s - 1]) {
            a->phase_last[a->nphases - 1] = s;
            continue;
        }
        a->phase_first[a->nphases] = s;
        a->phase_last[a->nphases] = s;
        a->phase_kind[a->nphases++] = a->slot_kind[s];
    }
}

/* ------------------------------------------------------------------------ */
/* Odd ranks                                                                 */

#define RANK_CATS 3              /* computation, MPI, I/O per slot */
#define KV_TL_EXACT_MAX 2048

static void cluster_ranks(struct kv_tl_analysis *a, const struct kv_stats *st,
                          double cut, const struct kv_cluster_opts *how)
{
    const struct kv_tl_grid *g = &a->grid;
    struct kv_rank_groups *rg = &a->groups;
    size_t dim = (size_t)g->slots * RANK_CATS;
    memset(rg, 0, sizeof *rg);
    rg->n = g->n;
    rg->scale = st->total;
    rg->nfeatures = dim;
    rg->x = km_xcalloc(g->n * dim + 1, sizeof *rg->x);
    /* the exact method's matrix over up to 64 x 3 coordinates costs 30
     * times the profiles' per pair: distinct timelines beyond
     * KV_TL_EXACT_MAX go to cells (whose groups scale.c proves exact, or
     * says not) unless --exact or a lower --exact-max asks otherwise */
    struct kv_cluster_opts mine = *how;
    if (mine.max_exact > KV_TL_EXACT_MAX)
        mine.max_exact = KV_TL_EXACT_MAX;
    how = &mine;
    for (size_t p = 0; p < g->n; p++)
        for (int s = 0; s < g->slots; s++)
            for (int c = 0; c < RANK_CATS; c++)
                rg->x[p * dim + (size_t)s * RANK_CATS + (size_t)c] =
                    cell(g, p, s)[c];
    kv_rank_groups_cluster(rg, cut, 0, how);
}

/* When each outlier rank departs from the main group's mean. */
static void departures(struct kv_tl_analysis *a)
{
    const struct kv_rank_groups *rg = &a->groups;
    size_t n = rg->n, dim = rg->nfeatures;
    int slots = a->grid.slots;
    a->departs = km_xcalloc(n + 1, sizeof *a->departs);
    a->worst = km_xcalloc(n + 1, sizeof *a->worst);
    double *mean = km_xcalloc(dim + 1, sizeof *mean);
    size_t nmain = 0;
    for (size_t p = 0; p < n; p++) {
        a->departs[p] = a->worst[p] = -1;
        if (rg->group[p] != 0)
            continue;
        nmain++;
        for (size_t f = 0; f < dim; f++)
            mean[f] += rg->x[p * dim + f];
    }
    for (size_t f = 0; f < dim && nmain; f++)
        mean[f] /= (double)nmain;
    double *d = km_xcalloc((size_t)slots + 1, sizeof *d);
    for (size_t p = 0; p < n; p++) {
        if (!rg->outlier_group || !rg->outlier_group[rg->group[p]])
            continue;
        int worst = 0;
        for (int s = 0; s < slots; s++) {
            d[s] = 0;
            for (int c = 0; c < RANK_CATS; c++) {
                size_t f = (size_t)s * RANK_CATS + (size_t)c;
                d[s] += fabs(rg->x[p * dim + f] - mean[f]);
            }
            if (d[s] > d[worst])
                worst = s;
        }
        int first = worst;
        for (int s = 0; s < worst; s++)
            if (d[s] >= 0.5 * d[worst]) {
                first = s;
                break;
            }
        a->departs[p] = first;
        a->worst[p] = worst;
    }
    free(d);
    free(mean);
}

int kv_tl_analyse(struct kv_tl_analysis *a, const struct kv_stats *st,
                  double cut, double phase_cut,
                  const struct kv_cluster_opts *how)
{
    memset(a, 0, sizeof *a);
    a->phase_cut = phase_cut > 0 ? phase_cut : 0.5;
    if (kv_tl_grid_build(&a->grid, st, KV_TL_GRID_SLOTS))
        return -1;
    find_phases(a, st);
    cluster_ranks(a, st, cut, how);
    departures(a);
    return 0;
}

void kv_tl_analysis_free(struct kv_tl_analysis *a)
{
    kv_tl_grid_free(&a->grid);
    free(a->phase_first);
    free(a->phase_last);
    free(a->phase_kind);
    free(a->slot_kind);
    kv_rank_groups_free(&a->groups);
    free(a->departs);
    free(a->worst);
    memset(a, 0, sizeof *a);
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */

static const char cat_letter[KV_TL_NCAT] = { 'C', 'M', 'I', '.' };

/* A slot as one character: its largest category, a capital when it holds
 * two thirds of the slot's time or more; blank when nothing ran. */
static char slot_char(const float *v)
{
    double sum = 0;
    int best = 0;
    for (int c = 0; c < KV_TL_NCAT; c++) {
        sum += v[c];
        if (v[c] > v[best])
            best = c;
    }
    if (sum <= 0)
        return ' ';
    char ch = cat_letter[best];
    if (best != KV_TL_OTHER && v[best] < sum * 2 / 3)
        ch = (char)(ch - 'A' + 'a');
    return ch;
}

static void strip(char *buf, const struct kv_tl_grid *g, size_t p)
{
    for (int s = 0; s < g->slots; s++)
        buf[s] = g->has[p] ? slot_char(cell(g, p, s)) : '-';
    buf[g->slots] = '\0';
}

static void grid_heading(FILE *f, const struct kv_tl_grid *g)
{
    char w[32];
    fprintf(f, "\nTimeline: %d slots of %s s from %s (C computation, M MPI, "
            "I I/O, . other;\n  a capital when it holds 2/3 of the slot or "
            "more)\n", g->slots, kv_human(w, g->width),
            g->origin_mpi ? "MPI_INIT's return" : "the start");
    if (g->nhave < g->n)
        fprintf(f, "  %zu of %zu ranks have no timeline ('-')\n",
                g->n - g->nhave, g->n);
}

/* Ranks as "0-3,7" (at most `size`, "..." when cut). */
static void rank_list(char *buf, size_t size, const int *ranks, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
            j++;
        char item[48];
        if (j == i)
            snprintf(item, sizeof item, "%s%d", len ? "," : "", ranks[i]);
        else
            snprintf(item, sizeof item, "%s%d-%d", len ? "," : "", ranks[i],
                     ranks[j]);
        if (len + strlen(item) + 4 >= size) {
            snprintf(buf + len, size - len, ",...");
            return;
        }
        len += (size_t)snprintf(buf + len, size - len, "%s", item);
        i = j;
    }
}

struct distinct {
    char *strip;
    int *ranks;
    size_t n, cap;
};

static int by_count(const void *pa, const void *pb)
{
    const struct distinct *a = pa, *b = pb;
    if (a->n != b->n)
        return a->n < b->n ? 1 : -1;
    return a->ranks[0] - b->ranks[0];
}

/* More ranks than lines: one line per distinct strip (hash table). */
static void distinct_strips(FILE *f, const struct kv_tl_grid *g,
                            const struct kv_stats *st)
{
    size_t cap = 64;
    while (cap < 2 * g->n)
        cap *= 2;
    struct distinct *tab = km_xcalloc(cap, sizeof *tab);
    char *buf = km_xcalloc((size_t)g->slots + 1, 1);
    size_t nd = 0;
    for (size_t p = 0; p < g->n; p++) {
        strip(buf, g, p);
        uint64_t h = 1469598103934665603u;
        for (const char *c = buf; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211u;
        size_t i = (size_t)h & (cap - 1);
        while (tab[i].strip && strcmp(tab[i].strip, buf) != 0)
            i = (i + 1) & (cap - 1);
        if (!tab[i].strip) {
            tab[i].strip = km_xstrdup(buf);
            nd++;
        }
        KM_GROW(tab[i].ranks, tab[i].cap, tab[i].n + 1);
        tab[i].ranks[tab[i].n++] = st->rank[p];
    }
    size_t k = 0;
    for (size_t i = 0; i < cap; i++)
        if (tab[i].strip)
            tab[k++] = tab[i];
    qsort(tab, nd, sizeof *tab, by_count);
    fprintf(f, "  %zu distinct timelines over %zu ranks%s\n", nd, g->n,
            nd > 16 ? ", the 16 most common" : "");
    for (size_t i = 0; i < nd; i++) {
        if (i < 16) {
            char list[64];
            rank_list(list, sizeof list, tab[i].ranks, tab[i].n);
            fprintf(f, "  %7zu |%s| ranks %s\n", tab[i].n, tab[i].strip,
                    list);
        }
        free(tab[i].strip);
        free(tab[i].ranks);
    }
    free(tab);
    free(buf);
}

void kv_summary_timeline(FILE *f, const struct kv_stats *st)
{
    struct kv_tl_grid g;
    if (kv_tl_grid_build(&g, st, KV_TL_GRID_SLOTS))
        return;
    grid_heading(f, &g);
    if (g.n <= 64) {
        char *buf = km_xcalloc((size_t)g.slots + 1, 1);
        for (size_t p = 0; p < g.n; p++) {
            strip(buf, &g, p);
            fprintf(f, "  %7d |%s|\n", st->rank[p], buf);
        }
        free(buf);
    } else {
        distinct_strips(f, &g, st);
    }
    kv_tl_grid_free(&g);
}

/* What the ranks did in a phase, as shares of its time. */
static void phase_line(FILE *f, const struct kv_tl_analysis *a, int k)
{
    const struct kv_tl_grid *g = &a->grid;
    double sum[KV_TL_NCAT] = { 0 }, all = 0;
    for (size_t p = 0; p < g->n; p++)
        for (int s = a->phase_first[k]; s <= a->phase_last[k]; s++)
            for (int c = 0; c < KV_TL_NCAT; c++)
                sum[c] += cell(g, p, s)[c];
    for (int c = 0; c < KV_TL_NCAT; c++)
        all += sum[c];
    char t0[32], t1[32], pc[KV_TL_NCAT][32];
    for (int c = 0; c < KV_TL_NCAT; c++)
        kv_percent(pc[c], all > 0 ? sum[c] / all : 0);
    fprintf(f, "  phase %d: slots %d-%d (%s-%s s), kind %c: computation %s, "
            "MPI %s, I/O %s, other %s\n", k + 1, a->phase_first[k],
            a->phase_last[k], kv_human(t0, a->phase_first[k] * g->width),
            kv_human(t1, (a->phase_last[k] + 1) * g->width),
            'A' + a->phase_kind[k] % 26, pc[0], pc[1], pc[2], pc[3]);
}

void kv_ranks_timeline(FILE *f, const struct kv_tl_analysis *a,
                       const struct kv_stats *st)
{
    const struct kv_tl_grid *g = &a->grid;
    const struct kv_rank_groups *rg = &a->groups;
    char b[32], c[32];
    fprintf(f, "\nOver time: %d slots of %s s from %s, %zu ranks with a "
            "timeline\n", g->slots, kv_human(b, g->width),
            g->origin_mpi ? "MPI_INIT's return" : "the start", g->nhave);
    fprintf(f, "Phases (slots clustered by what the ranks did in them, "
            "complete linkage, cut at %s):\n", kv_human(b, a->phase_cut));
    for (int k = 0; k < a->nphases; k++)
        phase_line(f, a, k);
    fprintf(f, "Ranks over the slots (computation, MPI and I/O per slot; "
            "cut at %s of %s s): %zu group%s\n", kv_percent(b, rg->cut),
            kv_human(c, rg->scale), rg->ngroups, rg->ngroups == 1 ? "" : "s");
    if (rg->method_note[0])
        fprintf(f, "  %s\n", rg->method_note);
    size_t shown = 0, outliers = 0;
    for (size_t k = 0; k < rg->ngroups; k++) {
        char list[256];
        kv_group_ranks(list, sizeof list, rg, st, k);
        if (k < 8)
            fprintf(f, "  group %zu: %zu rank%s (%s)%s\n", k + 1,
                    rg->group_size[k], rg->group_size[k] == 1 ? "" : "s",
                    list, k == 0 ? ", main" : rg->outlier_group[k]
                                              ? ", outlier" : "");
    }
    for (size_t p = 0; p < rg->n; p++) {
        if (a->departs[p] < 0)
            continue;
        outliers++;
        if (shown++ >= 32)
            continue;
        fprintf(f, "  rank %d departs from the main group at slot %d (%s s),"
                " most in slot %d (%s s)\n", st->rank[p], a->departs[p],
                kv_human(b, a->departs[p] * g->width), a->worst[p],
                kv_human(c, a->worst[p] * g->width));
    }
    if (outliers > 32)
        fprintf(f, "  ... and %zu more outlier ranks\n", outliers - 32);
    if (!outliers)
        fprintf(f, "  No outlier ranks over time at this cut.\n");
}

/* ------------------------------------------------------------------------ */
/* CSV and JSON                                                              */

/* Whole nanoseconds as seconds, exactly and without trailing zeros
 * ("0.9", "2", "1.000000001"): no search for the shortest form, which
 * 10^5 ranks x 128 slots x 12 columns would make slow. */
static void put_ns(FILE *f, int64_t ns)
{
    char b[40];
    kv_put_end(f, b, kv_put_ns(b, ns));
}

static double row_start(const struct kv_timeline *tl, int r)
{
    return r == 0 ? -tl->origin : (r - 1) * tl->width;
}

/* The "start_s,width_s" texts of slot rows 1.. of one width (%.10g), made
 * once for all the ranks that share it: printf's %g is the costliest
 * part of a row, and 10^5 ranks have 10^7 rows. */
struct slot_texts {
    double width;
    int n;                   /* rows made */
    char (*text)[48];
};

static const char *slot_text(struct slot_texts *c, const struct kv_timeline *tl,
                             int r)
{
    if (c->width != tl->width || c->n == 0) {
        c->width = tl->width;
        c->n = 0;
    }
    if (r > c->n) {
        c->text = km_xrealloc(c->text, (size_t)r * sizeof *c->text);
        for (int k = c->n + 1; k <= r; k++)
            snprintf(c->text[k - 1], sizeof *c->text, "%.10g,%.10g",
                     row_start(tl, k), tl->width);
        c->n = r;
    }
    return c->text[r - 1];
}

/* Rows gathered into one buffer and written 64 KiB at a time: at 10^5
 * ranks these two files are 10^8 short rows, and a stdio call per row
 * costs more than making it. */
struct rows {
    FILE *f;
    size_t n;
    char buf[1 << 16];
};

/* Room for `need` more bytes at the end of r->buf (need <= 1 KiB). */
static char *rows_room(struct rows *r, size_t need)
{
    if (r->n + need > sizeof r->buf) {
        fwrite(r->buf, 1, r->n, r->f);
        r->n = 0;
    }
    return r->buf + r->n;
}

static void rows_flush(struct rows *r)
{
    fwrite(r->buf, 1, r->n, r->f);
    r->n = 0;
}

void kv_csv_rank_timeline(FILE *f, const void *stats)
{
    const struct kv_stats *st = stats;
    struct slot_texts cache = { 0 };
    struct rows *out = km_xmalloc(sizeof *out);
    out->f = f;
    out->n = 0;
    fputs("rank,slot,start_s,width_s,computation_s,mpi_s,io_s,other_s,"
          "estimated\n", f);
    for (size_t p = 0; p < st->n; p++) {
        const struct kv_timeline *tl = &st->sec[p]->tl;
        char est[64], *e = est;
        for (int c = 0; c < KV_TL_NCAT; c++)
            if (tl->est >> c & 1) {
                if (e > est)
                    *e++ = '+';
                e = stpcpy(e, cat_name[c]);
            }
        for (int r = 0; tl->v && r <= tl->slots; r++) {
            char *row = rows_room(out, 320), *q = row;
            q = kv_put_int(q, st->rank[p]);
            *q++ = ',';
            q = kv_put_int(q, r - 1);
            *q++ = ',';
            /* (%.10g: one call each, and no 6.1440000000000001) */
            if (r == 0)
                q += snprintf(q, 48, "%.10g,%.10g", row_start(tl, r),
                              tl->origin);
            else
                q = stpcpy(q, slot_text(&cache, tl, r));
            for (int c = 0; c < KV_TL_NCAT; c++) {
                *q++ = ',';
                q = kv_put_ns(q, tl->v[(size_t)r * tl->ncols + c]);
            }
            *q++ = ',';
            memcpy(q, est, (size_t)(e - est));
            q += e - est;
            *q++ = '\n';
            out->n += (size_t)(q - row);
        }
    }
    rows_flush(out);
    free(out);
    free(cache.text);
}

/* The routine names as CSV fields, each made once (rank_timeline_routines
 * repeats them on every row), and their lengths. */
static char **csv_names(const struct kv_run *run, size_t **len)
{
    char **names = km_xcalloc(run->nroutines + 1, sizeof *names);
    *len = km_xcalloc(run->nroutines + 1, sizeof **len);
    for (size_t i = 0; i < run->nroutines; i++) {
        names[i] = kv_csv_field(run->routines[i].name);
        (*len)[i] = strlen(names[i]);
    }
    return names;
}

void kv_csv_rank_timeline_routines(FILE *f, const void *stats)
{
    const struct kv_stats *st = stats;
    size_t *nlen;
    char **names = csv_names(st->run, &nlen);
    struct rows *out = km_xmalloc(sizeof *out);
    out->f = f;
    out->n = 0;
    fputs("rank,slot,routine,computation_s,estimated\n", f);
    for (size_t p = 0; p < st->n; p++) {
        const struct kv_timeline *tl = &st->sec[p]->tl;
        for (int r = 0; tl->v && r <= tl->slots; r++)
            for (int k = 0; k < tl->ntop; k++) {
                int64_t v = tl->v[(size_t)r * tl->ncols + KV_TL_NCAT + k];
                if (v == 0)
                    continue;
                char *row = rows_room(out, 96), *q = row;
                q = kv_put_int(q, st->rank[p]);
                *q++ = ',';
                q = kv_put_int(q, r - 1);
                *q++ = ',';
                size_t n = nlen[tl->top[k]];
                if (n <= 512) {
                    out->n += (size_t)(q - row);
                    row = q = rows_room(out, n + 64);
                    memcpy(q, names[tl->top[k]], n);
                    q += n;
                } else {                         /* a long name: apart */
                    out->n += (size_t)(q - row);
                    rows_flush(out);
                    fwrite(names[tl->top[k]], 1, n, f);
                    row = q = rows_room(out, 64);
                }
                *q++ = ',';
                q = kv_put_ns(q, v);
                *q++ = ',';
                *q++ = (char)('0' + ((tl->est >> (KV_TL_NCAT + k)) & 1));
                *q++ = '\n';
                out->n += (size_t)(q - row);
            }
    }
    rows_flush(out);
    free(out);
    for (size_t i = 0; i < st->run->nroutines; i++)
        free(names[i]);
    free(names);
    free(nlen);
}

static void json_column(FILE *f, const struct kv_timeline *tl, int col)
{
    fputc('[', f);
    for (int r = 1; r <= tl->slots; r++) {
        if (r > 1)
            fputc(',', f);
        put_ns(f, tl->v[(size_t)r * tl->ncols + col]);
    }
    fputc(']', f);
}

void kv_json_rank_timeline(FILE *f, const struct kv_run *run,
                           const struct kv_rank *r)
{
    const struct kv_timeline *tl = &r->tl;
    fputs(",\"timeline\":", f);
    if (tl->slots == 0 || !tl->v) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"slots\":%d,\"width\":", tl->slots);
    kv_json_num(f, tl->width);
    fputs(",\"origin\":", f);
    kv_json_num(f, tl->origin);
    fprintf(f, ",\"origin_is_mpi_init\":%s,\"before\":{",
            tl->origin_mpi ? "true" : "false");
    for (int c = 0; c < KV_TL_NCAT; c++) {
        fprintf(f, "%s\"%s\":", c ? "," : "", cat_name[c]);
        put_ns(f, tl->v[c]);
    }
    fputs("}", f);
    for (int c = 0; c < KV_TL_NCAT; c++) {
        fprintf(f, ",\"%s\":", cat_name[c]);
        json_column(f, tl, c);
    }
    fputs(",\"estimated\":[", f);
    bool any = false;
    for (int c = 0; c < KV_TL_NCAT; c++)
        if (tl->est >> c & 1) {
            fprintf(f, "%s\"%s\"", any ? "," : "", cat_name[c]);
            any = true;
        }
    fputs("],\"routines\":[", f);
    for (int k = 0; k < tl->ntop; k++) {
        fprintf(f, "%s{\"routine\":", k ? "," : "");
        kv_json_str(f, run->routines[tl->top[k]].name);
        fprintf(f, ",\"estimated\":%s,\"before\":",
                (tl->est >> (KV_TL_NCAT + k)) & 1 ? "true" : "false");
        put_ns(f, tl->v[KV_TL_NCAT + k]);
        fputs(",\"computation\":", f);
        json_column(f, tl, KV_TL_NCAT + k);
        fputc('}', f);
    }
    fputs("]}", f);
}

struct ranks_csv {
    const struct kv_tl_analysis *a;
    const struct kv_stats *st;
};

static void csv_phases(FILE *f, const void *ctx)
{
    const struct ranks_csv *c = ctx;
    const struct kv_tl_analysis *a = c->a;
    fputs("phase,first_slot,last_slot,start_s,end_s,kind\n", f);
    for (int k = 0; k < a->nphases; k++) {
        fprintf(f, "%d,%d,%d,", k + 1, a->phase_first[k], a->phase_last[k]);
        kv_csv_num(f, a->phase_first[k] * a->grid.width);
        fputc(',', f);
        kv_csv_num(f, (a->phase_last[k] + 1) * a->grid.width);
        fprintf(f, ",%d\n", a->phase_kind[k] + 1);
    }
}

static void csv_ranks(FILE *f, const void *ctx)
{
    const struct ranks_csv *c = ctx;
    const struct kv_rank_groups *rg = &c->a->groups;
    fputs("rank,group,outlier,departs_slot,most_different_slot\n", f);
    for (size_t p = 0; p < rg->n; p++)
        fprintf(f, "%d,%d,%d,%d,%d\n", c->st->rank[p], rg->group[p] + 1,
                rg->outlier_group[rg->group[p]], c->a->departs[p],
                c->a->worst[p]);
}

int kv_ranks_timeline_csv(struct kv_out *o, const char *dir,
                          const struct kv_tl_analysis *a,
                          const struct kv_stats *st)
{
    static const struct kv_csv_file files[] = {
        { "timeline_phases.csv", csv_phases },
        { "timeline_ranks.csv", csv_ranks },
    };
    struct ranks_csv ctx = { a, st };
    return kv_csv_files(o, dir, files, 2, &ctx);
}
