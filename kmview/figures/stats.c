/*
 * stats.c — dense per-rank tables and min / mean / max over ranks.
 *
 * Owns the one definition of every derived figure kmview prints or
 * exports, so that the summary, CSV, JSON and HTML can never disagree.
 * Must never print.
 */
#include "kmview/figures/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support/buf.h"

const char *const kv_metric_key[KV_NMETRICS] = {
    [KV_M_ELAPSED] = "elapsed", [KV_M_NET] = "net", [KV_M_COUNTS] = "counts",
    [KV_M_MPI] = "mpi", [KV_M_IO] = "io",
};

double kv_max_over_mean(const struct kv_stat *s)
{
    return s->mean > 0 ? s->max / s->mean : NAN;
}

void kv_stat_of(struct kv_stat *s, const double *v, size_t n, const int *rank)
{
    *s = (struct kv_stat){ .min_rank = -1, .max_rank = -1 };
    for (size_t p = 0; p < n; p++) {
        if (p == 0 || v[p] < s->min)
            s->min = v[p], s->min_rank = rank[p];
        if (p == 0 || v[p] > s->max)
            s->max = v[p], s->max_rank = rank[p];
        s->sum += v[p];
    }
    s->mean = n ? s->sum / (double)n : 0;
}

/* sum(elapsed x pct / 100) / sum(elapsed) of n cells; NaN when a pct is
 * unknown, 0 when there is no time. */
static double est_fraction(const double *elapsed, const double *pct, size_t n)
{
    double e = 0, s = 0;
    for (size_t p = 0; p < n; p++) {
        if (isnan(pct[p]))
            return NAN;
        e += elapsed[p] * pct[p] / 100;
        s += elapsed[p];
    }
    return s > 0 ? e / s : 0;
}

static void fill_routines(struct kv_stats *st)
{
    size_t n = st->n;
    for (int m = 0; m < KV_NMETRICS; m++)
        st->rv[m] = km_xcalloc(st->nr * n + 1, sizeof(double));
    st->r_extrap = km_xcalloc(st->nr + 1, sizeof(bool));
    st->rest = km_xcalloc(st->nr * n + 1, 1);
    st->rpct = km_xcalloc(st->nr * n + 1, sizeof(double));
    st->r_est = km_xcalloc(st->nr + 1, sizeof(unsigned));
    st->r_frac = km_xcalloc(st->nr + 1, sizeof(double));
    /* a rank without the routine has none of its time, estimated or not */
    bool unknown = st->n && st->run->format_version < 2;
    for (size_t i = 0; i < st->nr * n; i++)
        st->rpct[i] = unknown ? NAN : 0;
    for (size_t p = 0; p < n; p++) {
        const struct kv_rank *r = st->sec[p];
        for (size_t i = 0; i < r->nrc; i++) {
            const struct kv_rcell *c = &r->rc[i];
            size_t at = (size_t)c->routine * n + p;
            st->rv[KV_M_ELAPSED][at] = c->elapsed;
            st->rv[KV_M_NET][at] = c->net;
            st->rv[KV_M_COUNTS][at] = (double)c->count;
            st->rv[KV_M_MPI][at] = c->mpi;
            st->rv[KV_M_IO][at] = c->io;
            st->r_extrap[c->routine] |= c->extrap;
            st->rest[at] = (unsigned char)c->est;
            st->rpct[at] = c->est_pct;
            st->r_est[c->routine] |= c->est;
        }
    }
    for (size_t i = 0; i < st->nr; i++)
        st->r_frac[i] = est_fraction(st->rv[KV_M_ELAPSED] + i * n,
                                     st->rpct + i * n, n);
}

static void fill_locations(struct kv_stats *st)
{
    size_t n = st->n;
    st->lv[KV_M_ELAPSED] = km_xcalloc(st->nl * n + 1, sizeof(double));
    st->lv[KV_M_COUNTS] = km_xcalloc(st->nl * n + 1, sizeof(double));
    st->l_extrap = km_xcalloc(st->nl + 1, sizeof(bool));
    st->lest = km_xcalloc(st->nl * n + 1, sizeof(bool));
    st->lpct = km_xcalloc(st->nl * n + 1, sizeof(double));
    st->l_est = km_xcalloc(st->nl + 1, sizeof(bool));
    st->l_frac = km_xcalloc(st->nl + 1, sizeof(double));
    bool unknown = st->run->format_version < 2;
    for (size_t i = 0; i < st->nl * n; i++)
        st->lpct[i] = unknown ? NAN : 0;
    for (size_t p = 0; p < n; p++) {
        const struct kv_rank *r = st->sec[p];
        for (size_t i = 0; i < r->nlc; i++) {
            const struct kv_lcell *c = &r->lc[i];
            size_t at = (size_t)c->location * n + p;
            st->lv[KV_M_ELAPSED][at] = c->elapsed;
            st->lv[KV_M_COUNTS][at] = (double)c->count;
            st->l_extrap[c->location] |= c->extrap;
            st->lest[at] = c->est;
            st->lpct[at] = c->est_pct;
            st->l_est[c->location] |= c->est;
        }
    }
    for (size_t i = 0; i < st->nl; i++)
        st->l_frac[i] = est_fraction(st->lv[KV_M_ELAPSED] + i * n,
                                     st->lpct + i * n, n);
}

static struct kv_stat *stats_of_rows(const double *v, size_t rows, size_t n,
                                     const int *rank)
{
    struct kv_stat *s = km_xcalloc(rows + 1, sizeof *s);
    for (size_t i = 0; i < rows; i++)
        kv_stat_of(&s[i], v + i * n, n, rank);
    return s;
}

/* Header figures over ranks (a figure the format lacks is NaN, at no
 * rank), and where the time goes. */
static void build_figures(struct kv_stats *st)
{
    double *col = km_xcalloc(st->n + 1, sizeof *col);
    for (int f = 0; f < KV_NFIGS; f++) {
        for (size_t p = 0; p < st->n; p++) {
            col[p] = st->sec[p]->fig[f];
            st->fig_est[f] |= st->sec[p]->fig_est[f];
        }
        kv_stat_of(&st->fig[f], col, st->n, st->rank);
        if (!kv_figure_known(st->run->format_version, f))
            st->fig[f] = (struct kv_stat){ NAN, NAN, NAN, NAN, -1, -1 };
        st->any_est |= st->fig_est[f];
    }
    free(col);
    st->total = st->fig[KV_F_TOTAL].mean;
    st->mpi = st->fig[KV_F_MPI].mean;
    st->startup = st->fig[KV_F_STARTUP].mean;
    st->io = st->fig[KV_F_IO].mean;
    st->comp = st->total - st->mpi - st->startup - st->io;
    st->comp_est = st->fig_est[KV_F_TOTAL] || st->fig_est[KV_F_MPI] ||
                   st->fig_est[KV_F_STARTUP] || st->fig_est[KV_F_IO];
    const struct kv_prediction *pr = &st->run->pred;
    for (size_t i = 0; i < pr->nrows; i++)
        st->any_est |= pr->rows[i].est != 0;
    st->any_est |= pr->est != 0;
}

/* The estimated fraction of the routines' net time, from every rank's
 * Total row (version 2). */
static void net_fraction(struct kv_stats *st)
{
    double e = 0, s = 0;
    st->net_frac = NAN;
    for (size_t p = 0; p < st->n; p++) {
        const struct kv_total_row *t = &st->sec[p]->total_row;
        if (!t->present)
            return;
        e += t->net * t->est_pct / 100;
        s += t->net;
        st->net_sum_est |= t->net_est;
    }
    st->net_frac = s > 0 ? e / s : 0;
}

void kv_stats_build(struct kv_stats *st, const struct kv_run *run)
{
    memset(st, 0, sizeof *st);
    st->run = run;
    st->nr = run->nroutines;
    st->nl = run->nlocations;
    st->rank = km_xcalloc(run->nsections + 1, sizeof *st->rank);
    st->sec = km_xcalloc(run->nsections + 1, sizeof *st->sec);
    for (size_t i = 0; i < run->nsections; i++)
        if (!run->ranks[i].lost) {
            st->rank[st->n] = run->ranks[i].rank;
            st->sec[st->n++] = &run->ranks[i];
        }
    build_figures(st);
    fill_routines(st);
    fill_locations(st);
    for (int m = 0; m < KV_NMETRICS; m++)
        st->rs[m] = stats_of_rows(st->rv[m], st->nr, st->n, st->rank);
    st->ls[KV_M_ELAPSED] = stats_of_rows(st->lv[KV_M_ELAPSED], st->nl, st->n,
                                         st->rank);
    st->ls[KV_M_COUNTS] = stats_of_rows(st->lv[KV_M_COUNTS], st->nl, st->n,
                                        st->rank);
    for (size_t i = 0; i < st->nr; i++) {
        st->net_sum += st->rs[KV_M_NET][i].mean;
        st->net_sum_est |= (st->r_est[i] & KV_EST(KV_M_NET)) != 0;
        st->any_est |= st->r_est[i] != 0;
    }
    for (size_t i = 0; i < st->nl; i++)
        st->any_est |= st->l_est[i];
    net_fraction(st);
}

void kv_stats_free(struct kv_stats *st)
{
    free(st->rank);
    free(st->sec);
    for (int m = 0; m < KV_NMETRICS; m++) {
        free(st->rv[m]);
        free(st->lv[m]);
        free(st->rs[m]);
        free(st->ls[m]);
    }
    free(st->r_extrap);
    free(st->l_extrap);
    free(st->rest);
    free(st->rpct);
    free(st->r_est);
    free(st->r_frac);
    free(st->lest);
    free(st->lpct);
    free(st->l_est);
    free(st->l_frac);
    memset(st, 0, sizeof *st);
}

double kv_share(const struct kv_stats *st, double value)
{
    return st->total > 0 ? value / st->total : 0;
}

struct order_ctx {
    const struct kv_stat *s;
    int id;
};

static int by_mean_desc(const void *a, const void *b)
{
    const struct order_ctx *x = a, *y = b;
    if (x->s->mean != y->s->mean)
        return x->s->mean > y->s->mean ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int *kv_routines_by(const struct kv_stats *st, enum kv_metric metric)
{
    struct order_ctx *o = km_xcalloc(st->nr + 1, sizeof *o);
    for (size_t i = 0; i < st->nr; i++)
        o[i] = (struct order_ctx){ &st->rs[metric][i], (int)i };
    qsort(o, st->nr, sizeof *o, by_mean_desc);
    int *ix = km_xcalloc(st->nr + 1, sizeof *ix);
    for (size_t i = 0; i < st->nr; i++)
        ix[i] = o[i].id;
    free(o);
    return ix;
}
