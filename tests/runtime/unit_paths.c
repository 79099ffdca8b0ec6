/*
 * unit_paths.c — unit tests of call paths: one path per caller, the
 * cache of a frame's children, folding at KM_PATHS_RECURSION and at
 * KM_PATHS_MAX.
 */
#include "unit.h"

/* The path of the report ending in region id under the path `parent`
 * (0: the root), or -1. */
static int32_t path_of(const struct km_report *rep, int32_t parent, int32_t id)
{
    for (int32_t i = 1; i < rep->npaths; i++)
        if (rep->paths[i].parent == parent && rep->paths[i].id == id)
            return i;
    return -1;
}

/* C called from A (10 ticks a call) and from B (40): two paths, exact
 * counts on each, each estimated at its own cost once sampled, and a
 * path's children within it. */
void test_paths_two_callers(void)
{
    begin("paths_two_callers");
    km_test_set_interval(4);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t a = reg_routine("2 10 100000 0 A m.f");
    int32_t b = reg_routine("2 20 100000 0 B m.f");
    int32_t c = reg_routine("2 30 3 0 C m.f");
    km_tick now = 0;
    in_at(now, m);
    for (int k = 0; k < 200; k++) {
        in_at(now, a);
        in_at(now + 1, c);
        out_at(now + 11, c);
        out_at(now + 12, a);
        in_at(now + 12, b);
        in_at(now + 13, c);
        out_at(now + 53, c);
        out_at(now + 54, b);
        now += 54;
    }
    out_at(now, m);
    struct km_report rep = report_at(now);
    int32_t pm = path_of(&rep, 0, m), pa = path_of(&rep, pm, a),
            pb = path_of(&rep, pm, b);
    int32_t pca = path_of(&rep, pa, c), pcb = path_of(&rep, pb, c);
    CHECK(pm > 0 && pa > 0 && pb > 0 && pca > 0 && pcb > 0);
    CHECK_EQ(rep.npaths, 6);
    CHECK_EQ(rep.paths[pca].count, 200);
    CHECK_EQ(rep.paths[pcb].count, 200);
    CHECK(rep.paths[pca].measured < 200);      /* sampled */
    CHECK_EQ(rep.paths[pca].own + rep.paths[pca].est, T(200 * 10));
    CHECK_EQ(rep.paths[pcb].own + rep.paths[pcb].est, T(200 * 40));
    CHECK_EQ(R(&rep, c)->excl, T(200 * 50));
    CHECK_EQ(rep.paths[pa].incl, T(200 * 12));
    CHECK_EQ(rep.paths[pm].incl, T(now));
    check_identity(&rep);
    km_report_free(&rep);
}

/* Four callees of MAIN whose ids share one slot of MAIN's cache of
 * children (id % KM_NKID), called in an order that keeps taking them out
 * of it and its two spare places: each keeps one path, its exact count
 * and its own cost. */
void test_paths_one_slot(void)
{
    begin("paths_one_slot");
    km_test_set_interval(4);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t c[4];
    char text[64];
    for (int k = 0, line = 10; k < 4; line++) {
        snprintf(text, sizeof text, "2 %d 3 0 C%d m.f", line, line);
        int32_t h = reg_routine(text);
        if (k == 0 || h % KM_NKID == c[0] % KM_NKID)
            c[k++] = h;
    }
    static const int order[] = { 0, 1, 0, 2, 0, 3, 1, 2, 3, 3, 2, 1, 0 };
    enum { NORDER = sizeof order / sizeof order[0] };
    uint64_t calls[4] = { 0 };
    km_time cost[4] = { 0 };
    km_tick now = 0;
    in_at(now, m);
    for (int rep = 0; rep < 100; rep++)
        for (int i = 0; i < NORDER; i++) {
            int k = order[i];
            in_at(now, c[k]);
            now += 10 * (k + 1);
            out_at(now, c[k]);
            calls[k]++;
            cost[k] += T(10 * (k + 1));
        }
    out_at(now, m);
    struct km_report rep = report_at(now);
    int32_t pm = path_of(&rep, 0, m);
    CHECK_EQ(rep.npaths, 1 + 1 + 4);
    for (int k = 0; k < 4; k++) {
        int32_t p = path_of(&rep, pm, c[k]);
        CHECK(p > 0);
        if (p <= 0)
            continue;
        CHECK_EQ(rep.paths[p].count, calls[k]);
        CHECK(rep.paths[p].measured < calls[k]);     /* sampled */
        CHECK_EQ(rep.paths[p].own + rep.paths[p].est, cost[k]);
    }
    check_identity(&rep);
    km_report_free(&rep);
}

/* Direct recursion 10 deep with KM_PATHS_RECURSION=3: R has three paths,
 * the deeper executions go on in the third; counts exact, R's elapsed
 * its outermost execution's. */
void test_paths_recursion_limit(void)
{
    begin("paths_recursion");
    setenv("KM_PATHS_RECURSION", "3", 1);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t r = reg_routine("2 10 100000 0 R m.f");
    in_at(0, m);
    for (int k = 0; k < 10; k++)
        in_at(10 + k, r);
    for (int k = 9; k >= 0; k--)
        out_at(30 + (9 - k), r);
    out_at(50, m);
    struct km_report rep = report_at(50);
    unsetenv("KM_PATHS_RECURSION");
    CHECK_EQ(rep.npaths, 1 + 1 + 3);
    int32_t p1 = path_of(&rep, path_of(&rep, 0, m), r);
    int32_t p2 = path_of(&rep, p1, r), p3 = path_of(&rep, p2, r);
    CHECK(p1 > 0 && p2 > 0 && p3 > 0);
    CHECK_EQ(rep.paths[p3].count, 8);
    CHECK_EQ(rep.paths[p3].folded, 1);
    CHECK_EQ(R(&rep, r)->count, 10);
    CHECK_EQ(R(&rep, r)->elapsed, T(39 - 10));
    CHECK_EQ(rep.paths[p1].incl, T(39 - 10));
    CHECK_EQ(rep.folded, 8);          /* the entries on the folded path */
    char *text = formatted(&rep);
    CHECK_IN(text, "\n! Warning: 8 entries went on call paths folded at a "
             "limit (KM_PATHS_MAX paths per thread, or a region open "
             "KM_PATHS_RECURSION times on one path): those paths end early "
             "in the Paths block\n");
    CHECK_IN(text, "\n! Thread 0: 4 paths, 8 entries on folded paths\n");
    free(text);
    check_identity(&rep);
    km_report_free(&rep);
}

/* KM_PATHS_MAX=16 and 40 distinct paths: the new ones past the limit go
 * on under MAIN, the outermost region, marked; every region's count is
 * exact, and MAIN holds all of their time (under the root they were
 * outside it: MAIN's elapsed came out short of its one measured
 * execution). */
void test_paths_limit(void)
{
    begin("paths_limit");
    setenv("KM_PATHS_MAX", "16", 1);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t r[10];
    reg_ten(r);
    km_tick now = 0;
    in_at(now, m);
    for (int i = 0; i < 4; i++)          /* R_i then R_j inside it */
        for (int j = 0; j < 10; j++) {
            in_at(now, r[i]);
            in_at(now + 1, r[j]);
            out_at(now + 2, r[j]);
            out_at(now + 3, r[i]);
            now += 3;
        }
    out_at(now, m);
    struct km_report rep = report_at(now);
    unsetenv("KM_PATHS_MAX");
    CHECK(rep.npaths <= 16 + 11);
    CHECK(rep.folded > 0);
    for (int k = 0; k < 10; k++)
        CHECK_EQ(R(&rep, r[k])->count, (k < 4 ? 10 : 0) + 4);
    int32_t pm = path_of(&rep, 0, m);
    CHECK_EQ(R(&rep, m)->elapsed, T(now));
    CHECK_EQ(rep.paths[pm].incl, T(now));
    for (int32_t p = 1; p < rep.npaths; p++)      /* one tree, in MAIN */
        if (p != pm)
            CHECK(rep.paths[p].parent != 0);
    check_identity(&rep);
    km_report_free(&rep);
}
