/*
 * scale.c — complete linkage of up to hundreds of thousands of points.
 *
 * The exact method (cluster.c) keeps a float distance matrix: n(n-1)/2
 * values, 20 GB for 100,000 ranks.  This file chooses among three ways,
 * and says which it took (kv_linkage_describe):
 *
 * 1. Exact: the matrix of every point, when the points are all distinct
 *    (or --exact) and few enough.
 *
 * 2. Distinct: identical points (equal in every coordinate) merged first,
 *    then the chain over the distinct points only, when those are at most
 *    max_exact.  The result is the exact method's, merge for merge and
 *    number for number, ties included.  Why: the distance between two
 *    distinct points is never 0 as a float (checked: the smallest gap
 *    between two values of one coordinate, divided by the scale, is
 *    above 0 as a float; else way 1), so the duplicates of a point p are
 *    its only points at distance 0, and every point has the distances of
 *    its lowest duplicate, its representative r.  In the exact method's
 *    chain (cluster.c: the nearest is the lowest index on a tie, the
 *    chain's previous element wins a tie), a non-representative is never
 *    pushed (a tie with its lower representative, which is active until
 *    its class is merged, is won by the representative; a chain element
 *    is always a representative), and when r is first pushed its nearest
 *    is its lowest remaining duplicate j, whose nearest (preferring r) is
 *    r: the chain merges (r, j) at height 0, pops both, and the element
 *    below r finds r again, unchanged (the maximum of equal distances),
 *    until r's class is one cluster; from then on the chain runs as the
 *    chain over representatives alone does.  So the exact method's merges
 *    are: the class merges (r, j), j increasing, classes in the order
 *    their representatives first enter the representatives' chain, then
 *    that chain's merges, all of positive height; kv_label_merges sorts
 *    by height then by order found, which puts them where the exact
 *    method does.
 *
 * 3. Cells, when the distinct points are more than max_exact: the exact
 *    dendrogram is then out of reach (the matrix does not fit, and no
 *    known algorithm finds complete linkage's merges without looking at
 *    every pair).  The points are grouped into cells by a leader pass: in
 *    order, a point joins the first cell (by creation) whose leader lies
 *    within the radius and whose coordinate sum is within it too (a
 *    filter: |sum a - sum b| <= L1), or leads a new cell; the radius
 *    starts at a quarter of the cut and doubles while there would be
 *    more than KV_MAX_CELLS cells.  For every cell: its box (least and
 *    largest value of each coordinate) and radius (the largest distance
 *    of a member from its leader).  Bounds on the distance of any point
 *    of cell A to any point of cell B, valid for the rounded float values
 *    the exact method compares (each operation of the distance is
 *    monotone, and the triangle inequality is given a relative margin of
 *    1e-9, far above the summation's rounding):
 *      upper(A, B) = min(sum of max |corner differences|,
 *                        (radius A + radius B + d(leaders)) (1 + 1e-9))
 *      lower(A, B) = max(sum of the gaps between the boxes,
 *                        d(leaders)(1 - 1e-9) - (radius A + radius B)(1 + 1e-9))
 *    and upper(A, A) for a cell's own diameter.  Where the bounds of two
 *    cells leave open on which side of the cut they fall, and the pairs
 *    are few enough (KV_REFINE_PAIRS in all), every pair is computed and
 *    the exact least and largest distance replace the bounds.  The
 *    dendrogram: each
 *    cell's members merged in order of rank at height upper(A, A), then
 *    the cells by complete linkage (the chain) over max(upper(A, B),
 *    upper(A, A), upper(B, B)).  Cut into groups, the groups carry a
 *    certificate, checked after every cut: no cell is split, and (cut at
 *    a height h) every upper bound inside a group is <= h and every
 *    lower bound between groups > h, or (cut into k groups) every upper
 *    bound inside a group is below every lower bound between groups.
 *    When it holds, the groups are the exact method's: a cluster of
 *    points inside a group is nearer to every other such cluster of its
 *    group than to any point outside, so no chain merges it outside
 *    before its group is whole (a merge needs reciprocal nearest
 *    neighbours), and every merge inside a group is lower than every
 *    merge across groups: the cut at h, or the last k - 1 merges, fall
 *    between the groups, whatever the ties.  When it does not hold for a
 *    cut at h (complete linkage may well part two points nearer than h),
 *    the cells are joined into blocks wherever a lower bound is <= h: no
 *    merge of height <= h crosses a block.  A block whose upper bounds
 *    are all <= h is one group (as above); a block of at most
 *    KV_BLOCK_POINTS points whose distances <= h are all different gets
 *    the groups of the exact method run on its points alone (without
 *    ties, complete linkage has one dendrogram, which any chain finds,
 *    and the merges of height <= h inside a block do not depend on the
 *    points outside it, all farther than h).  If every block is one or
 *    the other, the groups are proven; else they are approximate and the
 *    output says so.  The merges, heights
 *    and leaf order are always approximate in this way (the heights are
 *    upper bounds of the exact ones).  Also exact for any groups: the
 *    largest distance between two groups (kv_linkage_farthest: every
 *    pair not excluded by a cell's upper bound is computed), and the
 *    diameter of a group of at most KV_DIAMETER_PAIRS pairs (every pair);
 *    a larger group's diameter is the upper bound, said to be one.
 *
 * Must never know what the points are (ranks, threads), or print.
 */
#include "kmview/figures/scale.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/buf.h"

#define KV_MAX_CELLS 2048
#define KV_DIAMETER_PAIRS (1u << 25)
#define KV_REFINE_PAIRS (1u << 26)
#define KV_BLOCK_POINTS 4096
#define MARGIN 1e-9

struct kv_cell {
    size_t leader;           /* its first (lowest) point */
    size_t size;
    size_t first;            /* its members: lk->members[first .. + size) */
    double radius;           /* largest sum distance from the leader */
    double self;             /* upper bound of its diameter, as a sum */
    bool refined;            /* self_exact is its diameter */
    float self_exact;
    double *lo, *hi;         /* its box */
};

static double sum_distance(const struct kv_points *pt, size_t p, size_t q)
{
    const double *a = pt->x + p * pt->dim, *b = pt->x + q * pt->dim;
    double s = 0;
    for (size_t f = 0; f < pt->dim; f++)
        s += fabs(a[f] - b[f]);
    return s;
}

static double scaled(const struct kv_points *pt, double s)
{
    return pt->scale > 0 ? s / pt->scale : 0;
}

static float as_float(const struct kv_points *pt, double s)
{
    return (float)scaled(pt, s);
}

/* ---- 1 and 2: the matrix ------------------------------------------------- */

static float *matrix(const struct kv_points *pt, const size_t *pts, size_t n)
{
    float *d = km_xcalloc(n * (n - (n > 0)) / 2 + 1, sizeof *d);
    for (size_t p = 0; p < n; p++)
        for (size_t q = p + 1; q < n; q++)
            d[kv_condensed_index(n, p, q)] =
                as_float(pt, sum_distance(pt, pts ? pts[p] : p,
                                          pts ? pts[q] : q));
    return d;
}

static void link_exact(struct kv_linkage *lk)
{
    float *d = matrix(lk->pt, NULL, lk->pt->n);
    kv_complete_linkage(d, lk->pt->n, lk->merges);
    free(d);
}

static uint64_t row_hash(const double *row, size_t dim)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t f = 0; f < dim; f++) {
        double v = row[f] == 0 ? 0 : row[f];          /* -0 is 0 */
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        h = (h ^ bits) * 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static bool rows_equal(const double *a, const double *b, size_t dim)
{
    for (size_t f = 0; f < dim; f++)
        if (a[f] != b[f])
            return false;
    return true;
}

/* rep[p]: the lowest point equal to p; returns the distinct points, or 0
 * when some coordinate is not finite (no merging of duplicates then). */
static size_t representatives(const struct kv_points *pt, size_t *rep)
{
    size_t n = pt->n, dim = pt->dim, cap = 16;
    for (size_t i = 0; i < n * dim; i++)
        if (!isfinite(pt->x[i]))
            return 0;
    while (cap < 2 * n)
        cap *= 2;
    size_t *table = km_xcalloc(cap, sizeof *table);   /* point + 1 */
    size_t distinct = 0;
    for (size_t p = 0; p < n; p++) {
        const double *row = pt->x + p * dim;
        size_t at = (size_t)row_hash(row, dim) & (cap - 1);
        while (table[at] &&
               !rows_equal(pt->x + (table[at] - 1) * dim, row, dim))
            at = (at + 1) & (cap - 1);
        if (!table[at]) {
            table[at] = p + 1;
            distinct++;
        }
        rep[p] = table[at] - 1;
    }
    free(table);
    return distinct;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Is the distance of two distinct points (of `reps`) never 0 as a float? */
static bool distinct_apart(const struct kv_points *pt, const size_t *reps,
                           size_t u)
{
    if (pt->scale <= 0)
        return false;
    double *v = km_xcalloc(u + 1, sizeof *v);
    double gap = INFINITY;
    for (size_t f = 0; f < pt->dim; f++) {
        for (size_t i = 0; i < u; i++)
            v[i] = pt->x[reps[i] * pt->dim + f];
        qsort(v, u, sizeof *v, by_double);
        for (size_t i = 1; i < u; i++)
            if (v[i] != v[i - 1] && v[i] - v[i - 1] < gap)
                gap = v[i] - v[i - 1];
    }
    free(v);
    return gap == INFINITY || as_float(pt, gap) > 0;
}

/* Way 2 (see the top): the chain over the distinct points. */
static void link_distinct(struct kv_linkage *lk, const size_t *rep,
                          const size_t *reps, size_t u)
{
    size_t n = lk->pt->n;
    float *d = matrix(lk->pt, reps, u);
    struct kv_raw_merge *sub = km_xcalloc(u + 1, sizeof *sub);
    size_t *first_seen = km_xcalloc(u + 1, sizeof *first_seen);
    kv_chain_linkage(d, u, sub, first_seen);
    free(d);
    /* the representatives in the order they entered the chain */
    size_t *by_seen = km_xcalloc(u + 1, sizeof *by_seen);
    size_t *index_of = km_xcalloc(n, sizeof *index_of);  /* point -> rep ix */
    for (size_t i = 0; i < u; i++) {
        by_seen[first_seen[i]] = i;
        index_of[reps[i]] = i;
    }
    /* each class's members, increasing: a list through next[] */
    size_t *tail = km_xcalloc(u + 1, sizeof *tail);
    size_t *next = km_xcalloc(n, sizeof *next);
    for (size_t p = 0; p < n; p++) {
        size_t c = index_of[rep[p]];
        next[p] = (size_t)-1;
        if (p == rep[p])
            tail[c] = p;
        else {
            next[tail[c]] = p;
            tail[c] = p;
        }
    }
    struct kv_raw_merge *raw = km_xcalloc(n, sizeof *raw);
    size_t k = 0;
    for (size_t s = 0; s < u; s++) {
        size_t r = reps[by_seen[s]];
        for (size_t j = next[r]; j != (size_t)-1; j = next[j], k++)
            raw[k] = (struct kv_raw_merge){ r, j, 0, k };
    }
    size_t zero = k;
    for (size_t i = 0; i + 1 < u; i++, k++)
        raw[k] = (struct kv_raw_merge){ reps[sub[i].a], reps[sub[i].b],
                                        sub[i].height, zero + sub[i].order };
    kv_label_merges(raw, n, lk->merges);
    free(raw);
    free(tail);
    free(next);
    free(by_seen);
    free(index_of);
    free(first_seen);
    free(sub);
}

/* ---- 3: cells ------------------------------------------------------------ */

struct leader_pass {
    size_t *leaders;         /* cell -> leader point */
    size_t *by_sum;          /* cells sorted by their leader's sum */
    double *sum;             /* coordinate sum of each point */
    double *radius;
    size_t ncells;
};

/* The first cell (by creation) whose leader is within r of p, or -1. */
static long find_cell(const struct kv_points *pt, struct leader_pass *lp,
                      size_t p, double r)
{
    double s = lp->sum[p];
    if (!isfinite(s))                   /* no distance: the first cell */
        return lp->ncells > 0 ? 0 : -1;
    size_t lo = 0, hi = lp->ncells;             /* first with sum >= s - r */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (lp->sum[lp->leaders[lp->by_sum[mid]]] < s - r)
            lo = mid + 1;
        else
            hi = mid;
    }
    long best = -1;
    double bestd = 0;
    for (size_t i = lo; i < lp->ncells; i++) {
        size_t c = lp->by_sum[i];
        if (lp->sum[lp->leaders[c]] > s + r)
            break;
        if (best >= 0 && (long)c > best)
            continue;
        double d = sum_distance(pt, p, lp->leaders[c]);
        if (d <= r) {
            best = (long)c;
            bestd = d;
        }
    }
    if (best >= 0 && bestd > lp->radius[best])
        lp->radius[best] = bestd;
    return best;
}

/* One pass at radius r (a sum); false when it needs more than the cap. */
static bool leader_pass(const struct kv_points *pt, struct leader_pass *lp,
                        double r, int *cell)
{
    lp->ncells = 0;
    for (size_t p = 0; p < pt->n; p++) {
        long c = find_cell(pt, lp, p, r);
        if (c >= 0) {
            cell[p] = (int)c;
            continue;
        }
        if (lp->ncells == KV_MAX_CELLS)
            return false;
        size_t k = lp->ncells++, at = k;
        lp->leaders[k] = p;
        lp->radius[k] = 0;
        while (at > 0 && lp->sum[lp->leaders[lp->by_sum[at - 1]]] > lp->sum[p]) {
            lp->by_sum[at] = lp->by_sum[at - 1];
            at--;
        }
        lp->by_sum[at] = k;
        cell[p] = (int)k;
    }
    return true;
}

/* Upper and lower bounds of the sum distance between cells a and b. */
static void cell_bounds(const struct kv_points *pt, const struct kv_cell *a,
                        const struct kv_cell *b, double *up, double *low)
{
    double corner = 0, gap = 0;
    for (size_t f = 0; f < pt->dim; f++) {
        double x = fabs(a->hi[f] - b->lo[f]), y = fabs(b->hi[f] - a->lo[f]);
        corner += x > y ? x : y;
        if (b->lo[f] > a->hi[f])
            gap += b->lo[f] - a->hi[f];
        else if (a->lo[f] > b->hi[f])
            gap += a->lo[f] - b->hi[f];
    }
    double dl = sum_distance(pt, a->leader, b->leader);
    double tri = (a->radius + b->radius + dl) * (1 + MARGIN);
    double low2 = dl * (1 - MARGIN) - (a->radius + b->radius) * (1 + MARGIN);
    *up = corner < tri ? corner : tri;
    *low = gap > low2 ? gap : low2;
}

static void make_cells(struct kv_linkage *lk, const struct leader_pass *lp)
{
    const struct kv_points *pt = lk->pt;
    size_t L = lp->ncells, dim = pt->dim;
    lk->cells = km_xcalloc(L + 1, sizeof *lk->cells);
    lk->ncells = L;
    lk->members = km_xcalloc(pt->n + 1, sizeof *lk->members);
    lk->box = km_xcalloc(2 * dim * L + 1, sizeof *lk->box);
    for (size_t c = 0; c < L; c++) {
        struct kv_cell *k = &lk->cells[c];
        k->leader = lp->leaders[c];
        k->radius = lp->radius[c];
        k->lo = lk->box + 2 * dim * c;
        k->hi = k->lo + dim;
        memcpy(k->lo, pt->x + k->leader * dim, dim * sizeof *k->lo);
        memcpy(k->hi, k->lo, dim * sizeof *k->hi);
    }
    for (size_t p = 0; p < pt->n; p++) {
        struct kv_cell *k = &lk->cells[lk->cell[p]];
        k->size++;
        for (size_t f = 0; f < dim; f++) {
            double v = pt->x[p * dim + f];
            k->lo[f] = v < k->lo[f] ? v : k->lo[f];
            k->hi[f] = v > k->hi[f] ? v : k->hi[f];
        }
    }
    size_t at = 0;
    for (size_t c = 0; c < L; c++) {
        lk->cells[c].first = at;
        at += lk->cells[c].size;
        lk->cells[c].size = 0;
    }
    for (size_t p = 0; p < pt->n; p++) {
        struct kv_cell *k = &lk->cells[lk->cell[p]];
        lk->members[k->first + k->size++] = p;
    }
    size_t pairs = L * (L - (L > 0)) / 2 + 1;
    lk->upper = km_xcalloc(pairs, sizeof *lk->upper);
    lk->lower = km_xcalloc(pairs, sizeof *lk->lower);
    for (size_t a = 0; a < L; a++) {
        double up, low;
        cell_bounds(pt, &lk->cells[a], &lk->cells[a], &up, &low);
        double two = 2 * lk->cells[a].radius * (1 + MARGIN);
        lk->cells[a].self = up < two ? up : two;
        for (size_t b = a + 1; b < L; b++) {
            cell_bounds(pt, &lk->cells[a], &lk->cells[b], &up, &low);
            size_t i = kv_condensed_index(L, a, b);
            lk->upper[i] = as_float(pt, up);
            lk->lower[i] = as_float(pt, low > 0 ? low : 0);
        }
    }
}

/* The least and largest float distance between a point of cell a and one
 * of cell b (a == b: two of its points). */
static void exact_range(const struct kv_linkage *lk, size_t a, size_t b,
                        float *least, float *most)
{
    const struct kv_cell *A = &lk->cells[a], *B = &lk->cells[b];
    const size_t *ma = lk->members + A->first, *mb = lk->members + B->first;
    float lo = INFINITY, hi = 0;
    for (size_t i = 0; i < A->size; i++)
        for (size_t j = a == b ? i + 1 : 0; j < B->size; j++) {
            float d = as_float(lk->pt, sum_distance(lk->pt, ma[i], mb[j]));
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
        }
    *least = lo;
    *most = hi;
}

/* Bounds that leave open which side of the cut h a pair of cells falls
 * on are replaced by the pair's exact least and largest distance, while
 * the pairs so compared stay within KV_REFINE_PAIRS. */
static void refine_bounds(struct kv_linkage *lk, double h)
{
    size_t L = lk->ncells, budget = KV_REFINE_PAIRS;
    for (size_t a = 0; a < L; a++) {
        struct kv_cell *A = &lk->cells[a];
        size_t pairs = A->size * (A->size - 1) / 2;
        if (as_float(lk->pt, A->self) > h && pairs <= budget) {
            float least, most;
            exact_range(lk, a, a, &least, &most);
            A->self_exact = most;
            A->refined = true;
            budget -= pairs;
        }
    }
    for (size_t a = 0; a < L; a++)
        for (size_t b = a + 1; b < L; b++) {
            size_t i = kv_condensed_index(L, a, b);
            size_t pairs = lk->cells[a].size * lk->cells[b].size;
            if (lk->lower[i] > h || lk->upper[i] <= h || pairs > budget)
                continue;
            exact_range(lk, a, b, &lk->lower[i], &lk->upper[i]);
            budget -= pairs;
        }
}

/* A cell's diameter bound, as float. */
static float self_bound(const struct kv_linkage *lk, size_t c)
{
    const struct kv_cell *cl = &lk->cells[c];
    return cl->refined ? cl->self_exact : as_float(lk->pt, cl->self);
}

/* The dendrogram of way 3 (see the top). */
static void link_cells(struct kv_linkage *lk)
{
    const struct kv_points *pt = lk->pt;
    size_t n = pt->n, L = lk->ncells;
    struct kv_raw_merge *raw = km_xcalloc(n + 1, sizeof *raw);
    size_t k = 0;
    for (size_t c = 0; c < L; c++) {
        const struct kv_cell *cl = &lk->cells[c];
        for (size_t i = 1; i < cl->size; i++, k++)
            raw[k] = (struct kv_raw_merge){ cl->leader,
                                            lk->members[cl->first + i],
                                            self_bound(lk, c), k };
    }
    float *d = km_xcalloc(L * (L - (L > 0)) / 2 + 1, sizeof *d);
    for (size_t a = 0; a < L; a++)
        for (size_t b = a + 1; b < L; b++) {
            size_t i = kv_condensed_index(L, a, b);
            float v = lk->upper[i], sa = self_bound(lk, a),
                  sb = self_bound(lk, b);
            v = sa > v ? sa : v;
            d[i] = sb > v ? sb : v;
        }
    struct kv_raw_merge *sub = km_xcalloc(L + 1, sizeof *sub);
    kv_chain_linkage(d, L, sub, NULL);
    free(d);
    size_t within = k;
    for (size_t i = 0; i + 1 < L; i++, k++) {
        size_t a = lk->cells[sub[i].a].leader, b = lk->cells[sub[i].b].leader;
        raw[k] = (struct kv_raw_merge){ a < b ? a : b, a < b ? b : a,
                                        sub[i].height, within + sub[i].order };
    }
    kv_label_merges(raw, n, lk->merges);
    free(sub);
    free(raw);
}

static void build_cells(struct kv_linkage *lk, double cut)
{
    const struct kv_points *pt = lk->pt;
    struct leader_pass lp = {
        .leaders = km_xcalloc(KV_MAX_CELLS, sizeof *lp.leaders),
        .by_sum = km_xcalloc(KV_MAX_CELLS, sizeof *lp.by_sum),
        .radius = km_xcalloc(KV_MAX_CELLS, sizeof *lp.radius),
        .sum = km_xcalloc(pt->n + 1, sizeof *lp.sum),
    };
    for (size_t p = 0; p < pt->n; p++)
        for (size_t f = 0; f < pt->dim; f++)
            lp.sum[p] += pt->x[p * pt->dim + f];
    lk->cell = km_xcalloc(pt->n + 1, sizeof *lk->cell);
    double r = (cut > 0 ? cut : 0.05) / 4;
    /* a point with a coordinate that is not finite joins the first cell
     * (distinct is then 0, and no cut is certified) */
    for (;;) {
        double as_sum = pt->scale > 0 ? r * pt->scale : isinf(r) ? r : 0;
        if (leader_pass(pt, &lp, as_sum, lk->cell))
            break;
        r = pt->scale > 0 ? 2 * r : INFINITY;
    }
    lk->radius = r;
    make_cells(lk, &lp);
    refine_bounds(lk, cut);
    link_cells(lk);
    free(lp.leaders);
    free(lp.by_sum);
    free(lp.radius);
    free(lp.sum);
}

/* ---- the front door ------------------------------------------------------ */

void kv_linkage_build(struct kv_linkage *lk, const struct kv_points *pt,
                      bool exact, size_t max_exact, double cut)
{
    memset(lk, 0, sizeof *lk);
    lk->pt = pt;
    lk->certified = true;
    size_t n = pt->n;
    lk->merges = km_xcalloc(n + 1, sizeof *lk->merges);
    if (exact) {
        lk->method = KV_LINK_EXACT;
        link_exact(lk);
        return;
    }
    size_t *rep = km_xcalloc(n + 1, sizeof *rep);
    size_t u = representatives(pt, rep);
    lk->distinct = u;
    size_t *reps = km_xcalloc(u + 1, sizeof *reps);
    for (size_t p = 0, i = 0; p < n; p++)
        if (rep[p] == p && u)
            reps[i++] = p;
    if (u > 0 && u < n && u <= max_exact && distinct_apart(pt, reps, u)) {
        lk->method = KV_LINK_DISTINCT;
        link_distinct(lk, rep, reps, u);
    } else if (n <= max_exact) {
        lk->method = KV_LINK_EXACT;
        link_exact(lk);
    } else {
        lk->method = KV_LINK_CELLS;
        build_cells(lk, cut);
    }
    free(rep);
    free(reps);
}

void kv_linkage_free(struct kv_linkage *lk)
{
    free(lk->members);
    free(lk->upper);
    free(lk->lower);
    free(lk->box);
    free(lk->cells);
    free(lk->cell);
    free(lk->merges);
    memset(lk, 0, sizeof *lk);
}

/* The certificate of the groups `label` (see the top). */
static bool certify(const struct kv_linkage *lk, const int *label, double h,
                    bool at_height)
{
    size_t L = lk->ncells;
    int *group = km_xcalloc(L + 1, sizeof *group);
    bool ok = true;
    for (size_t c = 0; c < L && ok; c++) {
        const struct kv_cell *cl = &lk->cells[c];
        group[c] = label[cl->leader];
        for (size_t i = 0; i < cl->size && ok; i++)
            ok = label[lk->members[cl->first + i]] == group[c];
    }
    double inside = 0, across = INFINITY;
    for (size_t a = 0; a < L && ok; a++) {
        double s = self_bound(lk, a);
        inside = s > inside ? s : inside;
        for (size_t b = a + 1; b < L; b++) {
            size_t i = kv_condensed_index(L, a, b);
            if (group[a] == group[b])
                inside = lk->upper[i] > inside ? lk->upper[i] : inside;
            else
                across = lk->lower[i] < across ? lk->lower[i] : across;
        }
    }
    free(group);
    if (!ok)
        return false;
    return at_height ? inside <= h && across > h : inside < across;
}

static size_t root(size_t *parent, size_t i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

static int by_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Block `pts` (m points, apart from every other point by more than h):
 * its groups at h by the exact method on it alone, written to label as
 * base + 0, 1, ...; false (nothing written) when two of its distances
 * of at most h are equal. */
static bool exact_block(const struct kv_linkage *lk, const size_t *pts,
                        size_t m, double h, int *label, int base)
{
    float *d = matrix(lk->pt, pts, m);
    size_t pairs = m * (m - 1) / 2, low = 0;
    float *v = km_xcalloc(pairs + 1, sizeof *v);
    for (size_t i = 0; i < pairs; i++)
        if (d[i] <= h)
            v[low++] = d[i];
    qsort(v, low, sizeof *v, by_float);
    bool ties = false;
    for (size_t i = 1; i < low && !ties; i++)
        ties = v[i] == v[i - 1];
    free(v);
    if (!ties && m > 1) {
        struct kv_merge *mg = km_xcalloc(m, sizeof *mg);
        int *sub = km_xcalloc(m, sizeof *sub);
        kv_complete_linkage(d, m, mg);
        kv_cut_height(mg, m, h, sub);
        for (size_t i = 0; i < m; i++)
            label[pts[i]] = base + sub[i];
        free(mg);
        free(sub);
    }
    free(d);
    return !ties;
}

/* Labels 0, 1, ... in order of each group's lowest point. */
static size_t renumber(int *label, size_t n)
{
    int *to = km_xcalloc(2 * n + 1, sizeof *to);
    size_t groups = 0;
    for (size_t p = 0; p < n; p++) {
        if (!to[label[p]])
            to[label[p]] = (int)++groups;
        label[p] = to[label[p]] - 1;
    }
    free(to);
    return groups;
}

/* Groups at height h by blocks (see the top): the cells joined where a
 * lower bound is at most h; a block whose every upper bound is at most h
 * is one group, a block of at most KV_BLOCK_POINTS points without ties
 * gets the exact method's groups, any other keeps the dendrogram's cut
 * (and the cut is not certified).  Returns the groups. */
static size_t cut_by_blocks(struct kv_linkage *lk, double h, int *label)
{
    size_t n = lk->pt->n, L = lk->ncells;
    size_t *parent = km_xcalloc(L + 1, sizeof *parent);
    for (size_t c = 0; c < L; c++)
        parent[c] = c;
    for (size_t a = 0; a < L; a++)
        for (size_t b = a + 1; b < L; b++)
            if (!(lk->lower[kv_condensed_index(L, a, b)] > h))
                parent[root(parent, b)] = root(parent, a);
    bool *wide = km_xcalloc(L + 1, sizeof *wide);       /* by block root */
    size_t *points = km_xcalloc(L + 1, sizeof *points);
    for (size_t a = 0; a < L; a++) {
        size_t r = root(parent, a);
        points[r] += lk->cells[a].size;
        wide[r] |= !(self_bound(lk, a) <= h);
        for (size_t b = a + 1; b < L; b++)
            if (root(parent, b) == r)
                wide[r] |= !(lk->upper[kv_condensed_index(L, a, b)] <= h);
    }
    for (size_t p = 0; p < n; p++)              /* apart from the blocks */
        label[p] += (int)n;
    bool all = lk->distinct > 0;
    int next = 0;                   /* labels below n: the blocks' groups */
    size_t *pts = km_xcalloc(n + 1, sizeof *pts);
    for (size_t r = 0; r < L; r++) {
        if (root(parent, r) != r)
            continue;
        size_t m = 0;
        for (size_t p = 0; p < n; p++)
            if (root(parent, (size_t)lk->cell[p]) == r)
                pts[m++] = p;
        if (!wide[r]) {
            for (size_t i = 0; i < m; i++)
                label[pts[i]] = next;
            next++;
        } else if (m <= KV_BLOCK_POINTS &&
                   exact_block(lk, pts, m, h, label, next))
            next += (int)m;
        else
            all = false;
    }
    lk->certified = all;
    free(pts);
    free(parent);
    free(wide);
    free(points);
    return renumber(label, n);
}

size_t kv_linkage_cut(struct kv_linkage *lk, double h, size_t k, int *label)
{
    size_t n = lk->pt->n;
    if (n == 0)
        return 0;
    size_t groups = k > 0 ? kv_cut_count(lk->merges, n, k, label)
                          : kv_cut_height(lk->merges, n, h, label);
    lk->certified = true;
    if (lk->method != KV_LINK_CELLS)
        return groups;
    lk->certified = lk->distinct > 0 && certify(lk, label, h, k == 0);
    if (!lk->certified && k == 0)
        groups = cut_by_blocks(lk, h, label);
    return groups;
}

/* Largest sum distance from p to a point of cell c labelled b, if above
 * best (else best). */
static double farthest_in_cell(const struct kv_linkage *lk, const int *label,
                               size_t p, size_t c, int b, double best)
{
    const struct kv_points *pt = lk->pt;
    const struct kv_cell *cl = &lk->cells[c];
    const double *x = pt->x + p * pt->dim;
    double corner = 0;
    for (size_t f = 0; f < pt->dim; f++) {
        double u = fabs(x[f] - cl->lo[f]), v = fabs(x[f] - cl->hi[f]);
        corner += u > v ? u : v;
    }
    double tri = (sum_distance(pt, p, cl->leader) + cl->radius) * (1 + MARGIN);
    if (scaled(pt, corner < tri ? corner : tri) <= best)
        return best;
    const size_t *m = lk->members + cl->first;
    for (size_t i = 0; i < cl->size; i++)
        if (label[m[i]] == b) {
            double d = scaled(pt, sum_distance(pt, p, m[i]));
            best = d > best ? d : best;
        }
    return best;
}

double kv_linkage_farthest(const struct kv_linkage *lk, const int *label,
                           int a, int b)
{
    const struct kv_points *pt = lk->pt;
    double best = 0;
    for (size_t p = 0; p < pt->n; p++) {
        if (label[p] != a)
            continue;
        if (lk->method != KV_LINK_CELLS) {
            for (size_t q = 0; q < pt->n; q++)
                if (label[q] == b) {
                    double d = scaled(pt, sum_distance(pt, p, q));
                    best = d > best ? d : best;
                }
            continue;
        }
        for (size_t c = 0; c < lk->ncells; c++)
            best = farthest_in_cell(lk, label, p, c, b, best);
    }
    return best;
}

double kv_linkage_diameter(const struct kv_linkage *lk, const int *label,
                           int g, size_t size, bool *bound)
{
    const struct kv_points *pt = lk->pt;
    *bound = false;
    double best = 0;
    if (size < 2)
        return 0;
    if (lk->method != KV_LINK_CELLS || size * (size - 1) / 2 <= KV_DIAMETER_PAIRS) {
        size_t *m = km_xcalloc(size, sizeof *m), k = 0;
        for (size_t p = 0; p < pt->n && k < size; p++)
            if (label[p] == g)
                m[k++] = p;
        for (size_t i = 0; i < k; i++)
            for (size_t j = i + 1; j < k; j++) {
                float d = as_float(pt, sum_distance(pt, m[i], m[j]));
                best = d > best ? d : best;
            }
        free(m);
        return best;
    }
    /* the upper bound: the largest inside the group's cells */
    *bound = true;
    bool *holds = km_xcalloc(lk->ncells + 1, sizeof *holds);
    for (size_t p = 0; p < pt->n; p++)
        holds[lk->cell[p]] |= label[p] == g;
    for (size_t a = 0; a < lk->ncells; a++) {
        if (!holds[a])
            continue;
        double s = self_bound(lk, a);
        best = s > best ? s : best;
        for (size_t b = a + 1; b < lk->ncells; b++) {
            float u = lk->upper[kv_condensed_index(lk->ncells, a, b)];
            if (holds[b] && u > best)
                best = u;
        }
    }
    free(holds);
    return best;
}

void kv_linkage_describe(char *buf, size_t size, const struct kv_linkage *lk,
                         const char *what)
{
    if (lk->method != KV_LINK_CELLS) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, size, "%zu %s (%zu distinct) are too many for the exact "
             "dendrogram: clustered as %zu cells of radius %.4g (kmview(1), "
             "ranks); the groups are %s.", lk->pt->n, what, lk->distinct,
             lk->ncells, lk->radius,
             lk->certified ? "proven to be the exact method's"
                           : "approximate (no proof that they are the exact "
                             "method's)");
}
