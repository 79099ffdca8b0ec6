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
        if (rep->paths[i].parent == parent && rep->paths[i].id == id &&
            !(rep->paths[i].folded & KM_FOLD_MAX))
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
             "KM_PATHS_RECURSION times on one path): the Paths block marks "
             "the paths that hold them\n");
    CHECK_IN(text, "\n! Thread 0: 4 paths, 8 entries on folded paths\n");
    CHECK_IN(text, "Est(%) Fold\n");
    CHECK_EQ(rep.paths[p1].folded, 0);
    CHECK_EQ(rep.paths[p2].folded, 0);
    CHECK_EQ(rep.paths[p3].folded, KM_FOLD_RECURSION);
    free(text);
    check_identity(&rep);
    km_report_free(&rep);
}

/* KM_PATHS_MAX=16 and 40 distinct paths: the new ones past the limit go
 * on under MAIN, the outermost region, in a path of their region's
 * marked as folded there and apart from a path that really runs under
 * MAIN (R_2 and R_3, past the limit too); every region's count is exact,
 * and MAIN holds all of their time (under the root they were outside it:
 * MAIN's elapsed came out short of its one measured execution). */
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
    /* the root, MAIN, R_0 and its 10, R_1 and 2 of its, R_2, R_3: 16 +
     * 2; R_0 .. R_9 folded under MAIN */
    CHECK_EQ(rep.npaths, 16 + 2 + 10);
    for (int k = 0; k < 10; k++)
        CHECK_EQ(R(&rep, r[k])->count, (k < 4 ? 10 : 0) + 4);
    int32_t pm = path_of(&rep, 0, m);
    int64_t on_folded = 0;
    int nfolded = 0;
    for (int32_t p = 1; p < rep.npaths; p++) {
        const struct km_pnode *q = &rep.paths[p];
        if (!(q->folded & KM_FOLD_MAX))
            continue;
        nfolded++;
        on_folded += (int64_t)q->count;
        CHECK_EQ(q->parent, pm);
        /* R_0, R_1 from R_2 and R_3; the others from R_1 too */
        CHECK_EQ(q->count, q->id == r[0] || q->id == r[1] ? 2 : 3);
    }
    CHECK_EQ(nfolded, 10);
    CHECK_EQ(on_folded, 2 * 2 + 8 * 3);
    CHECK_EQ(rep.folded, on_folded);
    for (int k = 0; k < 4; k++) {     /* the paths that ran, unmarked */
        int32_t p = path_of(&rep, pm, r[k]);
        CHECK(p > 0 && rep.paths[p].folded == 0 && rep.paths[p].count == 10);
    }
    CHECK_EQ(R(&rep, m)->elapsed, T(now));
    CHECK_EQ(rep.paths[pm].incl, T(now));
    for (int32_t p = 1; p < rep.npaths; p++)      /* one tree, in MAIN */
        if (p != pm)
            CHECK(rep.paths[p].parent != 0);
    check_identity(&rep);
    km_report_free(&rep);
}

/* Calls of region `callee` made from region `caller` over the report's
 * paths (gprof's call-graph edges: each path counts on the edge from its
 * parent's region). */
static uint64_t edge(const struct km_report *rep, int32_t caller,
                     int32_t callee)
{
    uint64_t n = 0;
    for (int32_t i = 1; i < rep->npaths; i++) {
        const struct km_pnode *p = &rep->paths[i];
        if (p->id == callee && rep->paths[p->parent].id == caller)
            n += p->count;
    }
    return n;
}

/* R(d) calls PA when d is a multiple of 3 and PB otherwise, each of them
 * R(d - 1); test_paths_recursion_callers runs it. */
static km_tick walk_callers(km_tick now, int d, int32_t r, int32_t pa,
                            int32_t pb)
{
    in_at(now++, r);
    if (d > 0) {
        int32_t p = d % 3 == 0 ? pa : pb;
        in_at(now++, p);
        now = walk_callers(now, d - 1, r, pa, pb);
        out_at(now++, p);
    }
    out_at(now++, r);
    return now;
}

/* Indirect recursion 20 deep past KM_PATHS_RECURSION (2): a folded entry
 * goes on in a path of its region entered from the same caller, so each
 * call is counted on the edge from its real caller (folded into the
 * nearest R, R under PB came out 10 and R under PA 10; the truth is 14
 * and 6); and with KM_PATHS_RECURSION=1 a directly recursive routine
 * keeps its edge to itself (it was gone: all of its calls were MAIN's). */
void test_paths_recursion_callers(void)
{
    begin("paths_recursion_callers");
    setenv("KM_PATHS_RECURSION", "2", 1);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t r = reg_routine("2 10 100000 0 R m.f");
    int32_t pa = reg_routine("2 20 100000 0 PA m.f");
    int32_t pb = reg_routine("2 30 100000 0 PB m.f");
    in_at(0, m);
    km_tick now = walk_callers(1, 20, r, pa, pb);
    out_at(now, m);
    struct km_report rep = report_at(now);
    CHECK_EQ(R(&rep, r)->count, 21);
    CHECK_EQ(edge(&rep, m, r), 1);
    CHECK_EQ(edge(&rep, pa, r), 6);
    CHECK_EQ(edge(&rep, pb, r), 14);
    CHECK_EQ(edge(&rep, r, pa), 6);
    CHECK_EQ(edge(&rep, r, pb), 14);
    CHECK(rep.folded > 0);
    CHECK(rep.npaths < 1 + 1 + 2 * 20);          /* it did fold */
    check_identity(&rep);
    km_report_free(&rep);

    begin("paths_recursion_one");
    setenv("KM_PATHS_RECURSION", "1", 1);
    m = reg_routine("1 1 100000 0 MAIN m.f");
    r = reg_routine("2 10 100000 0 FIB m.f");
    in_at(0, m);
    for (int k = 0; k < 10; k++)
        in_at(1 + k, r);
    for (int k = 0; k < 10; k++)
        out_at(20 + k, r);
    out_at(30, m);
    rep = report_at(30);
    unsetenv("KM_PATHS_RECURSION");
    CHECK_EQ(edge(&rep, m, r), 1);
    CHECK_EQ(edge(&rep, r, r), 9);
    CHECK_EQ(rep.npaths, 1 + 1 + 2);             /* MAIN, FIB, FIB;FIB */
    check_identity(&rep);
    km_report_free(&rep);
}

/* Making a new path's node takes time (memory, a bigger table): libkm's
 * overhead, not the frame's that is open around it.  Each read of the
 * clock here takes 5 ticks, so each of the two new paths (MAIN's, S's)
 * takes 5 between its two reads (before, MAIN's own time held S's). */
void test_paths_new_cost(void)
{
    begin("paths_new_cost");
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t s = reg_routine("2 10 100000 0 S m.f");
    fake_after_read = 5;
    in_at(0, m);          /* new path: reads 0, 5 */
    in_at(100, s);        /* new path: reads 100, 105; S begins at 110 */
    out_at(200, s);
    out_at(300, m);
    fake_after_read = 0;
    struct km_report rep = report_at(400);
    CHECK_EQ(R(&rep, s)->elapsed, T(200 - 110));
    /* MAIN (10 to 300): its elapsed time and its own less the new
     * path's 5, its own less S's 90 too */
    CHECK_EQ(R(&rep, m)->elapsed, T(300 - 10 - 5));
    CHECK_EQ(R(&rep, m)->excl, T(300 - 10 - 5 - 90));
    CHECK_EQ(rep.overhead, T(5 + 5));
    check_identity(&rep);
    km_report_free(&rep);
}
