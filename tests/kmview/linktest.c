/*
 * linktest.c — kmview's scalable clustering (kmview/figures/scale.c) against the
 * exact nearest-neighbour chain over the whole matrix (kmview/figures/cluster.c),
 * on many random and adversarial point sets: ties (small integer
 * coordinates), duplicates, no point, one, two, all equal, a zero scale,
 * well-separated classes with noise.
 *
 *   linktest [ROUNDS]
 *
 * Asserts: (1) with the distinct points within max_exact, the merges are
 * the exact method's, field for field, and so are the cuts; (2) with
 * cells (max_exact 0), every certified cut has the exact method's groups,
 * every exact diameter is the exact one and every bound at least it, and
 * the farthest distance between two groups is the exact one; and that
 * certified cuts did occur (the check is not empty).  Prints one line
 * per failure and a summary; exit status 1 on any failure.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmview/figures/scale.h"
#include "support/buf.h"

static uint64_t state = 88172645463325252ull;
static unsigned failures, certified_cuts, cells_cuts, distinct_runs;

static double uniform(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

static size_t below(size_t k) { return (size_t)(uniform() * (double)k); }

static void fail(const char *what, const char *kind, size_t n, unsigned round)
{
    printf("FAIL round %u (%s, %zu points): %s\n", round, kind, n, what);
    failures++;
}

enum kind { RANDOM, TIES, DUPLICATES, EQUAL, CLASSES, NKINDS };
static const char *const kind_name[] = { "random", "ties", "duplicates",
                                         "all equal", "classes" };

static void make_points(enum kind k, size_t n, size_t dim, double *x)
{
    size_t classes = 1 + below(4);
    double centre[4][8];
    for (size_t c = 0; c < 4; c++)
        for (size_t f = 0; f < dim; f++)
            centre[c][f] = 10 * uniform();
    for (size_t p = 0; p < n; p++) {
        double *row = x + p * dim;
        size_t c = below(classes);
        for (size_t f = 0; f < dim; f++) {
            switch (k) {
            case RANDOM: row[f] = uniform(); break;
            case TIES: row[f] = (double)below(3); break;
            case DUPLICATES: row[f] = p > 0 && uniform() < 0.5
                                        ? x[below(p) * dim + f] : uniform();
                             break;
            case EQUAL: row[f] = 1.5; break;
            case CLASSES: row[f] = centre[c][f] + 0.05 * uniform(); break;
            default: break;
            }
        }
        if (k == DUPLICATES && p > 0 && uniform() < 0.5)  /* whole rows */
            memcpy(row, x + below(p) * dim, dim * sizeof *row);
    }
}

static float dist(const struct kv_points *pt, size_t p, size_t q)
{
    double s = 0;
    for (size_t f = 0; f < pt->dim; f++)
        s += fabs(pt->x[p * pt->dim + f] - pt->x[q * pt->dim + f]);
    return (float)(pt->scale > 0 ? s / pt->scale : 0);
}

static struct kv_merge *exact_merges(const struct kv_points *pt)
{
    size_t n = pt->n;
    float *d = km_xcalloc(n * n / 2 + 1, sizeof *d);
    for (size_t p = 0; p < n; p++)
        for (size_t q = p + 1; q < n; q++)
            d[kv_condensed_index(n, p, q)] = dist(pt, p, q);
    struct kv_merge *m = km_xcalloc(n + 1, sizeof *m);
    kv_complete_linkage(d, n, m);
    free(d);
    return m;
}

static bool same_merges(const struct kv_merge *a, const struct kv_merge *b,
                        size_t n)
{
    for (size_t k = 0; k + 1 < n; k++)
        if (a[k].a != b[k].a || a[k].b != b[k].b || a[k].size != b[k].size ||
            a[k].height != b[k].height)
            return false;
    return true;
}

/* The exact cut of `m`: at h (k == 0) or into k groups. */
static size_t exact_cut(const struct kv_merge *m, size_t n, double h, size_t k,
                        int *label)
{
    if (n == 0)
        return 0;
    return k ? kv_cut_count(m, n, k, label) : kv_cut_height(m, n, h, label);
}

static void check_extras(struct kv_linkage *lk, const struct kv_points *pt,
                         const int *label, size_t groups, const char *kind,
                         unsigned round)
{
    size_t n = pt->n;
    for (size_t g = 0; g < groups; g++) {
        size_t size = 0;
        float diam = 0;
        for (size_t p = 0; p < n; p++) {
            size += label[p] == (int)g;
            for (size_t q = p + 1; q < n; q++)
                if (label[p] == (int)g && label[q] == (int)g &&
                    dist(pt, p, q) > diam)
                    diam = dist(pt, p, q);
        }
        bool bound;
        double got = kv_linkage_diameter(lk, label, (int)g, size, &bound);
        if (bound ? got < diam : got != diam)
            fail("a group's diameter", kind, n, round);
    }
    if (groups >= 2) {
        double far = 0;
        for (size_t p = 0; p < n; p++)
            for (size_t q = 0; q < n; q++)
                if (label[p] == 1 && label[q] == 0) {
                    double s = 0;
                    for (size_t f = 0; f < pt->dim; f++)
                        s += fabs(pt->x[p * pt->dim + f] - pt->x[q * pt->dim + f]);
                    s = pt->scale > 0 ? s / pt->scale : 0;
                    far = s > far ? s : far;
                }
        if (kv_linkage_farthest(lk, label, 1, 0) != far)
            fail("the farthest distance between groups 1 and 0", kind, n,
                 round);
    }
}

static void one_round(unsigned round)
{
    enum kind k = (enum kind)(round % NKINDS);
    size_t n = round < 3 * NKINDS ? round / NKINDS : 2 + below(180);
    size_t dim = 1 + below(6);
    double *x = km_xcalloc(n * dim + 1, sizeof *x);
    make_points(k, n, dim, x);
    double scale = round % 17 == 0 ? 0 : 0.5 + 3 * uniform();
    struct kv_points pt = { n, dim, x, scale };
    struct kv_merge *m = exact_merges(&pt);
    int *want = km_xcalloc(n + 1, sizeof *want), *got = km_xcalloc(n + 1,
                                                               sizeof *got);
    double cuts[] = { 0, 0.01, 0.05, 0.2, 1 };
    const char *kind = kind_name[k];

    /* (1) the distinct points, exactly */
    struct kv_linkage lk;
    kv_linkage_build(&lk, &pt, false, KV_EXACT_MAX, 0.05);
    distinct_runs += lk.method == KV_LINK_DISTINCT;
    if (lk.method == KV_LINK_CELLS || !same_merges(lk.merges, m, n))
        fail("merges differ from the exact method's", kind, n, round);
    kv_linkage_free(&lk);

    /* (2) cells */
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++)
        for (size_t groups = 0; groups <= 3; groups += 3) {
            kv_linkage_build(&lk, &pt, false, 0, cuts[c]);
            size_t ng = kv_linkage_cut(&lk, cuts[c], groups, got);
            size_t ne = exact_cut(m, n, cuts[c], groups, want);
            cells_cuts++;
            if (lk.certified) {
                certified_cuts++;
                if (ng != ne || memcmp(got, want, n * sizeof *got))
                    fail("certified groups differ from the exact ones", kind,
                         n, round);
            }
            check_extras(&lk, &pt, got, ng, kind, round);
            kv_linkage_free(&lk);
        }
    free(m);
    free(want);
    free(got);
    free(x);
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 400;
    for (unsigned r = 0; r < rounds; r++)
        one_round(r);
    printf("%u rounds: %u runs merged duplicates, %u of %u cuts by cells "
           "certified, %u failures\n", rounds, distinct_runs, certified_cuts,
           cells_cuts, failures);
    if (certified_cuts == 0 || distinct_runs == 0) {
        printf("FAIL: the checks did not run (no certified cut, or no "
               "duplicates merged)\n");
        return 1;
    }
    return failures ? 1 : 0;
}
