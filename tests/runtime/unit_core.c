/*
 * unit_core.c — unit tests of libkm's core accounting: elapsed and net
 * times through routines, locations, recursion and unwinding; estimates
 * past the threshold and their settling into the measured frames around
 * them; libkm's own overhead; the frame stack's depth; registration.
 */
#include "unit.h"

/* SPEC: sub1 entered at T0 calls sub2 between T1 and T2, returns at T3. */
void test_spec_example(void)
{
    begin("spec_example");
    int32_t m = reg_routine("1 1 100000 0 MAIN main.f");
    int32_t s1 = reg_routine("2 10 100000 0 sub1 sub1.f");
    int32_t s2 = reg_routine("2 20 100000 0 SUB2 sub1.f");
    CHECK_EQ(m, 1);
    CHECK_EQ(s1, 2);
    CHECK_EQ(s2, 3);
    in_at(100, m);
    in_at(110, s1);                   /* T0 */
    in_at(130, s2);                   /* T1 */
    out_at(170, s2);                  /* T2 */
    out_at(200, s1);                  /* T3 */
    out_at(250, m);
    CHECK_EQ(km_test_depth(), 0);
    struct km_report rep = report_at(300);
    CHECK_EQ(R(&rep, s1)->elapsed, T(200 - 110));
    CHECK_EQ(R(&rep, s1)->excl, T((130 - 110) + (200 - 170)));
    CHECK_EQ(R(&rep, s2)->elapsed, T(40));
    CHECK_EQ(R(&rep, s2)->excl, T(40));
    CHECK_EQ(R(&rep, m)->elapsed, T(150));
    CHECK_EQ(R(&rep, m)->excl, T(150 - 90));
    CHECK_EQ(rep.total, T(300));
    CHECK_EQ(rep.outside, T(300 - 150));
    CHECK_EQ(rep.overhead, 0);
    CHECK_EQ(rep.routine_counts, 3);
    CHECK(strcmp(R(&rep, s1)->name, "SUB1") == 0);
    CHECK_EQ(R(&rep, m)->order, 1);
    CHECK_EQ(R(&rep, s1)->order, 2);
    CHECK_EQ(R(&rep, s2)->order, 3);
    /* 3 registrations and 3 new call paths (two reads each), 3 entries,
     * 3 exits, the start and the report */
    CHECK_EQ(rep.clock_reads, 20);
    CHECK_EQ(rep.clock_reads, fake_reads);
    check_identity(&rep);
    km_report_free(&rep);
}

/* DO / IO / USER pass their callees' time through to the routine;
 * CALL and MPI are callees whose own time is "unmeasured callees". */
void test_transparent_and_callee(void)
{
    begin("transparent");
    int32_t a = reg_routine("2 1 100000 0 A a.f");
    int32_t d = reg("10 5 100000 0 DO 10 I = 1, N", a);
    int32_t c = reg("11 6 100000 0 CALL B(X)", a);
    int32_t io = reg("13 7 100000 0 WRITE(6,*) X", a);
    int32_t u = reg("14 8 100000 0 !KM_measure start", a);
    int32_t mp = reg("12 9 100000 0 CALL MPI_BARRIER(COMM, IERR)", a);
    int32_t b = reg_routine("2 1 100000 0 B b.f");
    in_at(0, a);
    in_at(10, d);                     /* DO */
    in_at(20, c);                     /* CALL B inside the loop */
    in_at(25, b);
    out_at(65, b);                    /* B: 40 */
    out_at(70, c);                    /* CALL: 50, own 10 */
    in_at(80, io);
    out_at(95, io);                   /* IO: 15, transparent */
    in_at(100, u);
    in_at(105, b);                    /* B called straight from a USER region */
    out_at(125, b);                   /* B: 20 */
    out_at(130, u);                   /* USER: 30 */
    out_at(140, d);                   /* DO: 130 */
    in_at(150, mp);
    out_at(157, mp);                  /* MPI: 7 */
    out_at(200, a);
    struct km_report rep = report_at(200);
    CHECK_EQ(R(&rep, d)->elapsed, T(130));
    CHECK_EQ(R(&rep, c)->elapsed, T(50));
    CHECK_EQ(R(&rep, c)->excl, T(10));
    CHECK_EQ(R(&rep, b)->elapsed, T(60));
    CHECK_EQ(R(&rep, b)->count, 2);
    CHECK_EQ(R(&rep, io)->elapsed, T(15));
    CHECK_EQ(R(&rep, u)->elapsed, T(30));
    CHECK_EQ(R(&rep, mp)->elapsed, T(7));
    /* A's callees: the CALL (50), B from the USER region (20), MPI (7) */
    CHECK_EQ(R(&rep, a)->elapsed, T(200));
    CHECK_EQ(R(&rep, a)->excl, T(200 - 50 - 20 - 7));
    CHECK_EQ(R(&rep, a)->mpi, T(7));
    CHECK_EQ(R(&rep, a)->io, T(15));
    CHECK_EQ(rep.mpi, T(7));
    CHECK_EQ(rep.startup, 0);
    CHECK_EQ(rep.io, T(15));
    CHECK_EQ(rep.uninstr, T(10));
    CHECK_EQ(rep.outside, 0);
    /* the parents of the locations: the loop holds the CALL */
    CHECK_EQ(R(&rep, c)->parent, d);
    CHECK_EQ(R(&rep, u)->parent, d);
    CHECK_EQ(R(&rep, d)->parent, a);
    check_identity(&rep);

    char *text = formatted(&rep);
    CHECK_IN(text, "! Routine 1 A, file a.f, line 1, 5 locations");
    CHECK_IN(text, "       1 DO         5    1.3000000e-07          1     0.0 DO 10 I = 1, N\n");
    CHECK_IN(text, "       5 MPI        9    7.0000000e-09          1     0.0 CALL MPI_BARRIER(COMM, IERR)\n");
    CHECK_IN(text, "\n       2 B      ");
    CHECK_IN(text, "\n7.0000000e-09   ! MPI time\n0.0000000e+00   ! MPI start-up time\n1.5000000e-08   ! I/O time\n0.0000000e+00   ! Time outside routines\n1.0000000e-08   ! Time in uninstrumented routines\n0.0000000e+00   ! Estimated time\n");
    free(text);
    km_report_free(&rep);
}

/* A recursive routine's elapsed counts its outermost activation only;
 * net is exclusive over all of them. */
void test_recursion(void)
{
    begin("recursion");
    int32_t r = reg_routine("3 1 100000 0 FACT fact.f");
    int32_t c = reg("11 4 100000 0 CALL FACT(N-1)", r);
    in_at(0, r);
    in_at(10, c);
    in_at(12, r);
    in_at(20, c);
    in_at(21, r);
    out_at(31, r);                    /* innermost: 10 */
    out_at(33, c);                    /* inner call: 13, own 3 */
    out_at(40, r);                    /* middle: 28, net 28 - 13 = 15 */
    out_at(45, c);                    /* outer call: 35, own 7 */
    out_at(60, r);                    /* outer: 60, net 60 - 35 = 25 */
    struct km_report rep = report_at(60);
    CHECK_EQ(R(&rep, r)->count, 3);
    CHECK_EQ(R(&rep, r)->elapsed, T(60));
    CHECK_EQ(R(&rep, r)->excl, T(10 + 15 + 25));
    CHECK_EQ(R(&rep, c)->count, 2);
    CHECK_EQ(R(&rep, c)->elapsed, T(35));
    CHECK_EQ(R(&rep, c)->excl, T(3 + 7));
    CHECK_EQ(km_test_depth(), 0);
    check_identity(&rep);
    km_report_free(&rep);
}

/* KM_OUT of a frame below the top closes everything above it at once; a
 * KM_OUT of a region that is not open is ignored and reported. */
void test_unwinding(void)
{
    begin("unwinding");
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t a = reg_routine("2 1 100000 0 A a.f");
    int32_t d = reg("10 3 100000 0 DO 10 I = 1, N", a);
    int32_t c = reg("11 4 100000 0 CALL B", a);
    int32_t b = reg_routine("2 1 100000 0 B b.f");
    in_at(0, m);
    in_at(10, a);
    in_at(20, d);
    in_at(30, c);
    in_at(40, b);
    long long before = fake_reads;
    out_at(100, a);                   /* jump out of the loop and return */
    CHECK_EQ(fake_reads - before, 1);
    CHECK_EQ(km_test_depth(), 1);
    out_at(110, c);                   /* not open: ignored */
    int32_t zero = 0;
    km_in_f(&zero);                   /* unregistered handle: ignored */
    CHECK_EQ(km_test_depth(), 1);
    out_at(120, m);
    CHECK_EQ(km_test_depth(), 0);
    struct km_report rep = report_at(130);
    CHECK_EQ(R(&rep, b)->elapsed, T(60));
    CHECK_EQ(R(&rep, c)->elapsed, T(70));
    CHECK_EQ(R(&rep, c)->excl, T(10));
    CHECK_EQ(R(&rep, d)->elapsed, T(80));
    CHECK_EQ(R(&rep, a)->elapsed, T(90));
    CHECK_EQ(R(&rep, a)->excl, T(20));
    CHECK_EQ(R(&rep, m)->excl, T(120 - 90));
    CHECK_EQ(rep.bad_out, 1);
    CHECK_EQ(rep.bad_in, 1);
    CHECK_EQ(rep.clock_reads, fake_reads);   /* one read closed four */
    check_identity(&rep);
    char *text = formatted(&rep);
    CHECK_IN(text, "\n! Warning: 1 KM_OUT calls for regions that were not open were ignored\n");
    CHECK_IN(text, "\n! Warning: 1 KM_IN/KM_OUT calls with an unregistered handle were ignored\n");
    free(text);
    km_report_free(&rep);
}

/* Past the threshold: no clock reads for the executions estimated, exact
 * counts, the estimate the mean own time of the measured executions but
 * the first; an estimated routine's elapsed time holds what the measured
 * regions inside it reported; every estimate is marked. */
void test_estimates(void)
{
    begin("estimates");
    km_test_set_interval(1000000);   /* no sample within this test */
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t s = reg_routine("2 1 3 0 S s.f");
    int32_t t = reg_routine("2 1 100000 0 T t.f");
    int32_t d = reg("10 2 3 0 DO 5 I = 1, 2", s);
    in_at(0, m);
    km_tick now = 100;
    const km_tick dur[3] = { 90, 20, 30 };   /* mean of 20, 30: 25 */
    for (int k = 0; k < 3; k++) {
        in_at(now, s);
        in_at(now + 1, d);
        out_at(now + 3, d);           /* DO: 2 each */
        out_at(now + dur[k], s);
        now += 100;
    }
    struct km_report rep = report_at(now);
    km_time mean;
    CHECK_EQ(km_test_path_estimate(s, &mean), 1);
    CHECK_EQ(mean, T(25));
    CHECK_EQ(km_test_path_estimate(d, &mean), 1);
    CHECK_EQ(mean, T(2));
    km_report_free(&rep);

    long long before = fake_reads;
    for (int k = 0; k < 4; k++) {     /* S and its loop: no clock at all */
        in_at(now, s);
        in_at(now + 1, d);
        out_at(now + 2, d);
        out_at(now + 50, s);
        now += 100;
    }
    CHECK_EQ(fake_reads - before, 0);
    before = fake_reads;
    in_at(now, s);                    /* T inside S is still measured */
    in_at(now + 1, t);
    out_at(now + 6, t);
    out_at(now + 50, s);
    CHECK_EQ(fake_reads - before, 2 + 2);   /* (and its new path's) */
    now += 100;
    out_at(now, m);

    rep = report_at(now);
    CHECK_EQ(R(&rep, s)->count, 8);
    CHECK_EQ(R(&rep, s)->measured, 3);
    /* the last S holds T's 5 */
    CHECK_EQ(R(&rep, s)->elapsed, T(140 + 4 * 25 + (25 + 5)));
    CHECK_EQ(R(&rep, s)->excl, T(140 + 5 * 25));
    CHECK_EQ(R(&rep, s)->est_el, T(5 * 25));
    CHECK_EQ(R(&rep, s)->est_excl, T(5 * 25));
    CHECK_EQ(R(&rep, d)->count, 7);
    CHECK_EQ(R(&rep, d)->elapsed, T(6 + 4 * 2));
    CHECK_EQ(R(&rep, d)->est_el, T(4 * 2));
    CHECK_EQ(R(&rep, t)->elapsed, T(5));
    CHECK_EQ(R(&rep, t)->est_el, 0);
    /* MAIN sees S's estimated elapsed time as callee time: its net
     * absorbed the estimates */
    CHECK_EQ(R(&rep, m)->excl, T(now - (140 + 4 * 25 + (25 + 5))));
    CHECK_EQ(R(&rep, m)->absorbed, T(5 * 25));
    CHECK_EQ(R(&rep, m)->est_el, 0);
    CHECK_EQ(rep.estimated, T(5 * 25));
    CHECK_EQ(rep.extrapolated, 1);
    CHECK_EQ(rep.clock_reads, fake_reads);
    check_identity(&rep);
    char *text = formatted(&rep);
    /* S: elapsed, net estimated in part; 125 of 270 = 46.3% */
    CHECK_IN(text, "\n       2 S                        ~2.7000000e-07   ~2.6500000e-07         +8    0.0000000e+00    0.0000000e+00    46.3\n");
    /* MAIN: measured elapsed, net computed from estimates */
    CHECK_IN(text, "\n       1 MAIN                      9.0000000e-07   ~6.3000000e-07          1 ");
    CHECK_IN(text, " +7    57.1 DO 5 I = 1, 2\n");
    CHECK_IN(text, "\n       3 T                         5.0000000e-09    5.0000000e-09          1 ");
    CHECK_IN(text, " +10 ");    /* the Total row */
    CHECK_IN(text, "\n~1.2500000e-07  ! Estimated time\n");
    free(text);
    km_report_free(&rep);
}

/* KM_TIME_PREDICTION_MODE_NUMBER overrides every threshold; 0 disables.
 * The first measured execution is never an estimate, so threshold 1
 * measures two (doc/KM_output.md). */
void test_threshold_override(void)
{
    begin("override");
    km_test_set_interval(1000000);
    setenv("KM_TIME_PREDICTION_MODE_NUMBER", "2", 1);
    int32_t s = reg_routine("2 1 100000 0 S s.f");
    for (int k = 0; k < 5; k++) {
        in_at(k * 10, s);
        out_at(k * 10 + 4, s);
    }
    struct km_report rep = report_at(100);
    CHECK_EQ(R(&rep, s)->count, 5);
    CHECK_EQ(R(&rep, s)->measured, 2);
    CHECK_EQ(R(&rep, s)->elapsed, T(20));
    check_identity(&rep);
    km_report_free(&rep);

    begin("override0");
    setenv("KM_TIME_PREDICTION_MODE_NUMBER", "0", 1);
    s = reg_routine("2 1 1 0 S s.f");
    for (int k = 0; k < 5; k++) {
        in_at(k * 10, s);
        out_at(k * 10 + 4, s);
    }
    rep = report_at(100);
    CHECK_EQ(R(&rep, s)->measured, 5);
    km_time mean;
    CHECK_EQ(km_test_path_estimate(s, &mean), 0);
    km_report_free(&rep);
    unsetenv("KM_TIME_PREDICTION_MODE_NUMBER");

    begin("threshold1");
    km_test_set_interval(1000000);
    s = reg_routine("2 1 1 0 S s.f");
    in_at(0, s);
    out_at(100, s);                   /* first: one-time costs */
    in_at(200, s);
    out_at(210, s);                   /* second: the estimate */
    in_at(300, s);
    out_at(390, s);                   /* estimated: 10 */
    rep = report_at(400);
    CHECK_EQ(R(&rep, s)->measured, 2);
    CHECK_EQ(R(&rep, s)->elapsed, T(100 + 10 + 10));
    check_identity(&rep);
    km_report_free(&rep);
}

/* The defect of issue 10: Z costly only in its first 10 calls, called by
 * Y only in Y's first 10, threshold 10.  Y's estimate is its own time (1),
 * not a mean that held Z: no negative elapsed, no net above elapsed. */
void test_costly_start(void)
{
    begin("costly_start");
    km_test_set_interval(1000000);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t y = reg_routine("2 1 10 0 Y y.f");
    int32_t z = reg_routine("2 1 10 0 Z z.f");
    enum { N = 1000 };
    in_at(0, m);
    km_tick now = 1;
    for (int k = 0; k < N; k++) {
        in_at(now, y);
        if (k < 10) {
            in_at(now + 1, z);
            out_at(now + 1001, z);
            now += 1000;
        }
        out_at(now + 2, y);           /* Y's own time: 2 */
        now += 3;
    }
    out_at(now, m);
    struct km_report rep = report_at(now);
    CHECK_EQ(R(&rep, y)->elapsed, T(10 * 1002 + (N - 10) * 2));
    CHECK_EQ(R(&rep, y)->excl, T(N * 2));
    CHECK_EQ(R(&rep, z)->elapsed, T(10 * 1000));
    CHECK_EQ(R(&rep, m)->excl, T(now - 10 * 1002 - (N - 10) * 2));
    CHECK_EQ(R(&rep, m)->elapsed, T(now));
    check_identity(&rep);
    km_report_free(&rep);
}

/* Estimates that do not fit in the measured frame around them are scaled
 * down until they do: S measured at 100 twice, then ten executions that
 * really take 10 but are estimated at 100 inside MAIN's 300. */
void test_settle(void)
{
    begin("settle");
    km_test_set_interval(1000000);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t s = reg_routine("2 1 2 0 S s.f");
    in_at(0, m);
    in_at(0, s);
    out_at(100, s);
    in_at(100, s);
    out_at(200, s);
    km_tick now = 200;
    for (int k = 0; k < 10; k++, now += 10) {
        in_at(now, s);
        out_at(now + 10, s);
    }
    out_at(300, m);
    struct km_report rep = report_at(300);
    /* 1000 estimated in 300 - 200 measured: 10% kept */
    CHECK_EQ(R(&rep, s)->elapsed, T(300));
    CHECK_EQ(R(&rep, s)->excl, T(300));
    CHECK_EQ(R(&rep, s)->est_el, T(100));
    CHECK_EQ(R(&rep, m)->excl, 0);
    CHECK_EQ(R(&rep, m)->absorbed, T(1000));
    CHECK_EQ(rep.outside, 0);
    check_identity(&rep);
    km_report_free(&rep);

    /* The same at the root: estimates pending outside every measured
     * frame are settled against the total time. */
    begin("settle_root");
    km_test_set_interval(1000000);
    s = reg_routine("2 1 2 0 S s.f");
    in_at(0, s);
    out_at(100, s);
    in_at(100, s);
    out_at(200, s);
    for (int k = 0; k < 10; k++) {
        in_at(200 + 10 * k, s);
        out_at(210 + 10 * k, s);
    }
    rep = report_at(300);
    CHECK_EQ(R(&rep, s)->elapsed, T(300));
    CHECK_EQ(rep.outside, 0);
    check_identity(&rep);
    km_report_free(&rep);
}

/* A region estimated inside one measured frame, and run inside others
 * within it: every path's first executions are measured (R inside each
 * level of G is a path of its own), and each frame takes out of its own
 * time what was inside it. */
void test_paths_inside_frames(void)
{
    begin("paths_inside_frames");
    km_test_set_interval(1000000);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t g = reg_routine("2 1 100000 0 G g.f");
    int32_t r = reg_routine("2 1 2 0 R r.f");
    in_at(0, m);
    in_at(1, r);
    out_at(5, r);
    in_at(6, r);
    out_at(10, r);                    /* estimate: 4 */
    in_at(11, r);
    out_at(15, r);                    /* estimated, waits at MAIN */
    long long before = fake_reads;
    for (int k = 0; k < 5; k++) {     /* nested measured frames, R in each */
        in_at(20 + 10 * k, g);
        in_at(21 + 10 * k, r);
        out_at(22 + 10 * k, r);
    }
    for (int k = 4; k >= 0; k--)
        out_at(100 - k, g);           /* G at depth 5: 56, holds 4 */
    CHECK_EQ(fake_reads - before, 20 + 2 * 10);  /* (G's and R's 5 new
                                                   paths, two reads each) */
    out_at(110, m);
    struct km_report rep = report_at(110);
    CHECK_EQ(R(&rep, r)->count, 8);
    CHECK_EQ(R(&rep, r)->measured, 7);
    CHECK_EQ(R(&rep, r)->elapsed, T(4 + 4 + 4 + 5 * 1));
    /* the outermost G: 80, holding 1 of R and the next G */
    CHECK_EQ(R(&rep, g)->elapsed, T(80));
    CHECK_EQ(R(&rep, g)->excl, T(80 - 5 * 1));
    CHECK_EQ(R(&rep, m)->excl, T(110 - 80 - 12));
    CHECK_EQ(rep.npaths, 1 + 1 + 1 + 5 + 5);
    check_identity(&rep);
    km_report_free(&rep);
}

/* Ten regions estimated in one measured frame: no clock read, and the
 * figures of settling at its end. */
void test_many_estimated(void)
{
    begin("many_estimated");
    km_test_set_interval(1000000);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t r[10];
    reg_ten(r);
    km_tick now = 0;
    in_at(now, m);
    for (int k = 0; k < 10; k++) {    /* two measured executions each: 3 */
        for (int j = 0; j < 2; j++, now += 3) {
            in_at(now, r[k]);
            out_at(now + 3, r[k]);
        }
    }
    long long before = fake_reads;
    for (int k = 0; k < 10; k++, now += 3) {   /* estimated: 3 each */
        in_at(now, r[k]);
        out_at(now + 3, r[k]);
    }
    CHECK_EQ(fake_reads - before, 0);
    out_at(now, m);
    struct km_report rep = report_at(now);
    for (int k = 0; k < 10; k++) {
        CHECK_EQ(R(&rep, r[k])->elapsed, T(9));
        CHECK_EQ(R(&rep, r[k])->est_el, T(3));
    }
    CHECK_EQ(R(&rep, m)->excl, 0);
    check_identity(&rep);
    km_report_free(&rep);

    /* Estimates made in the frame that exceed its time are cut: ten
     * regions measured at 3, then each estimated at 3 in the time of 1. */
    begin("many_estimated_cut");
    km_test_set_interval(1000000);
    m = reg_routine("1 1 100000 0 MAIN m.f");
    reg_ten(r);
    now = 0;
    in_at(now, m);
    for (int k = 0; k < 10; k++)
        for (int j = 0; j < 2; j++, now += 3) {
            in_at(now, r[k]);
            out_at(now + 3, r[k]);
        }
    for (int k = 0; k < 10; k++, now += 1) {
        in_at(now, r[k]);
        out_at(now + 1, r[k]);
    }
    out_at(now, m);
    rep = report_at(now);
    km_time all = 0;
    for (int k = 0; k < 10; k++)
        all += R(&rep, r[k])->elapsed;
    CHECK(all <= R(&rep, m)->elapsed);
    check_identity(&rep);
    km_report_free(&rep);
}

/* An estimated loop around estimated calls, in a frame where estimates
 * were made before the loop began: the loop keeps its own figures
 * (LAPACK testing, in an earlier design: a DO loop around calls reported
 * Est(%) -21.7). */
void test_estimated_loop(void)
{
    begin("estimated_loop");
    km_test_set_interval(1000000);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t l = reg("10 3 2 0 DO 10 I = 1, N", m);
    int32_t r[10];
    reg_ten(r);
    km_tick now = 0;
    in_at(now, m);
    for (int j = 0; j < 2; j++, now += 10) {   /* the loop: measured, 4 */
        in_at(now, l);
        out_at(now + 4, l);
    }
    for (int j = 0; j < 2; j++, now += 100) {  /* R0 measured, 100 */
        in_at(now, r[0]);
        out_at(now + 100, r[0]);
    }
    for (int k = 1; k < 10; k++)               /* measured, 1 each */
        for (int j = 0; j < 2; j++, now += 1) {
            in_at(now, r[k]);
            out_at(now + 1, r[k]);
        }
    for (int j = 0; j < 3; j++, now += 100) {  /* R0 estimated: 300 */
        in_at(now, r[0]);
        out_at(now + 100, r[0]);
    }
    in_at(now, l);                             /* the loop, estimated */
    now += 2;
    for (int k = 1; k < 10; k++, now += 1) {   /* estimated, 1 each */
        in_at(now, r[k]);
        out_at(now + 1, r[k]);
    }
    now += 2;
    out_at(now, l);
    out_at(now + 1, m);
    struct km_report rep = report_at(now + 1);
    const struct km_region *q = R(&rep, l);
    CHECK(q->est_el >= 0 && q->est_el <= q->elapsed);
    CHECK(q->est_excl >= 0 && q->est_excl <= q->excl);
    CHECK(q->elapsed <= R(&rep, m)->elapsed);
    check_identity(&rep);
    km_report_free(&rep);
}

/* Every measured execution of A is long and every estimated one short (a
 * bimodal cost; on a loaded machine, a sample that waited for a
 * processor), over many time slots: the estimates, learned from the long
 * ones, are cut to the time MAIN measured.  In an earlier design MAIN
 * came out shorter than A and the overhead negative. */
void test_long_samples(void)
{
    begin("long_samples");
    km_test_set_interval(4);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t a = reg_routine("2 10 2 0 A m.f");
    km_tick now = 0;
    in_at(now, m);
    for (int i = 0; i < 4000; i++) {
        long long reads = fake_reads;
        in_at(now, a);
        now += fake_reads > reads ? 3000000 : 10;  /* measured: long */
        out_at(now, a);
        now += 5;
    }
    out_at(now, m);
    struct km_report rep = report_at(now);
    CHECK(R(&rep, a)->count > R(&rep, a)->measured);
    CHECK(R(&rep, a)->elapsed <= R(&rep, m)->elapsed);
    check_identity(&rep);
    km_report_free(&rep);
}

/* A loop estimated longer than the routine around it is cut to it. */
void test_fit_in_parent(void)
{
    begin("fit");
    km_test_set_interval(1000000);
    int32_t a = reg_routine("2 1 100000 0 A a.f");
    int32_t l = reg("10 3 2 0 DO 10 I = 1, N", a);
    km_tick now = 0;
    for (int k = 0; k < 3; k++) {
        in_at(now, a);
        in_at(now + 5, l);
        out_at(now + (k < 2 ? 55 : 7), l);
        out_at(now + (k < 2 ? 60 : 10), a);
        now += 100;
    }
    struct km_report rep = report_at(now);
    CHECK_EQ(R(&rep, a)->elapsed, T(130));
    CHECK_EQ(R(&rep, l)->elapsed, T(130));    /* 150, cut */
    CHECK_EQ(R(&rep, l)->est_el, T(30));      /* 50, less the 20 cut */
    check_identity(&rep);
    km_report_free(&rep);
}

/* libkm's own costs come out of the times: an empty routine costs what
 * its body costs (1), its caller's net is its loop (2 per call), and the
 * overhead is a figure of its own. */
void test_overhead(void)
{
    begin("overhead");
    km_test_set_interval(1000000);
    km_test_set_costs(20, 4, 10);     /* measured, estimated, inner */
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t e = reg_routine("2 1 10 0 EMPTY e.f");
    enum { N = 1000 };
    /* each entry and exit: 5 before the entry's read, 10 between the
     * reads (5 + 5), 5 after the exit's read */
    in_at(5, m);
    km_tick now = 10;
    for (int k = 0; k < N; k++) {
        now += 2;                     /* the loop */
        if (k < 10) {                 /* measured: 20, with a body of 1 */
            in_at(now + 5, e);
            out_at(now + 5 + 5 + 1 + 5, e);
            now += 21;
        } else {                      /* estimated: 4 in all */
            in_at(now + 2, e);
            out_at(now + 3, e);
            now += 5;
        }
    }
    out_at(now + 5, m);
    struct km_report rep = report_at(now + 10);
    CHECK_EQ(R(&rep, e)->elapsed, T(N * 1));
    CHECK_EQ(R(&rep, e)->excl, T(N * 1));
    CHECK_EQ(R(&rep, m)->elapsed, T(N * 3));
    CHECK_EQ(R(&rep, m)->excl, T(N * 2));
    CHECK_EQ(rep.overhead, T(20 + 10 * 20 + (N - 10) * 4));
    CHECK_EQ(rep.outside, 0);
    check_identity(&rep);
    km_report_free(&rep);
    km_test_set_costs(0, 0, 0);
}

/* A recursion deeper than the stack's first 4,096 places: the stack
 * grows, and every frame is measured as any other (before, entries past
 * it were dropped: DEEP counted 4,094 times of 10,000, its time its
 * caller's); a report taken that deep, and a jump out of every frame at
 * once, find them all. */
void test_stack_overflow(void)
{
    begin("overflow");
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t r = reg_routine("2 1 100000 0 DEEP d.f");
    enum { N = 10000 };
    in_at(0, m);
    for (int k = 0; k < N; k++)
        in_at(k + 1, r);
    CHECK_EQ(km_test_depth(), N + 1);
    struct km_report deep = report_at(N + 1);     /* every frame open */
    CHECK_EQ(R(&deep, r)->count, N);
    CHECK_EQ(R(&deep, r)->excl, T(N));
    check_identity(&deep);
    km_report_free(&deep);
    for (int k = 0; k < N; k++)
        out_at(N + k + 1, r);
    CHECK_EQ(km_test_depth(), 1);
    for (int k = 0; k < N; k++)       /* again, then out of all at once */
        in_at(2 * N + k + 1, r);
    out_at(4 * N, m);
    CHECK_EQ(km_test_depth(), 0);
    struct km_report rep = report_at(4 * N);
    CHECK_EQ(R(&rep, r)->count, 2 * N);
    CHECK_EQ(R(&rep, r)->measured, 2 * N);
    /* one tick each on the way down and up, the deepest one; then one
     * each on the way down, and the deepest to the jump */
    CHECK_EQ(R(&rep, r)->excl, T(2 * (N - 1) + 1 + (N - 1) + N));
    CHECK_EQ(R(&rep, r)->elapsed, T(2 * N - 1 + 4 * N - (2 * N + 1)));
    CHECK_EQ(R(&rep, m)->excl, T(1 + (2 * N + 1) - 2 * N));
    CHECK_EQ(rep.lost, 0);
    CHECK_EQ(rep.bad_out, 0);
    check_identity(&rep);
    char *text = formatted(&rep);
    if (strstr(text, "Warning"))
        printf("FAIL overflow: a warning in\n%s\n", text);
    free(text);
    km_report_free(&rep);
}

/* Identity (file, routine, kind, line) -> one id; bad texts -> handle 0. */
void test_registration(void)
{
    begin("registration");
    int32_t a = reg_routine("2 7 100000 0 alpha my file.f");
    int32_t a2 = reg_routine("  2   7  100000  0  ALPHA my file.f  ");
    CHECK(a > 0);
    CHECK_EQ(a2, a);
    int32_t other = reg_routine("2 7 100000 0 ALPHA other.f");
    CHECK(other != a);
    int32_t entry = reg_routine("4 7 100000 0 ALPHA my file.f");
    CHECK(entry != a);
    int32_t l1 = reg("10 9 100000 0 DO 10 I=1,N", a);
    int32_t l2 = reg("10 9 100000 0 DO 10 I = 1, N", a);
    int32_t l3 = reg("10 9 100000 0 DO 10 I=1,N", other);
    CHECK_EQ(l2, l1);
    CHECK(l3 != l1);
    CHECK_EQ(reg("10 9 100000 0 DO 10 I=1,N", 0), 0);
    CHECK_EQ(reg("10 9 100000 0 DO 10 I=1,N", l1), 0);  /* HR a location */
    CHECK_EQ(reg_routine("garbage"), 0);
    CHECK_EQ(reg_routine("2 x 100000 0 B b.f"), 0);
    CHECK_EQ(reg_routine("2 1 100000 0"), 0);
    struct km_report rep = report_at(10);
    CHECK_EQ(rep.bad_reg, 5);
    CHECK(strcmp(R(&rep, a)->name, "ALPHA") == 0);
    CHECK(strcmp(R(&rep, a)->file, "my file.f") == 0);
    CHECK(strcmp(R(&rep, l1)->text, "DO 10 I=1,N") == 0);
    CHECK_EQ(R(&rep, l1)->routine, a);
    km_report_free(&rep);
    /* many registrations: the hash table grows */
    char text[64];
    int32_t first = 0;
    for (int k = 0; k < 3000; k++) {
        snprintf(text, sizeof text, "2 %d 100000 0 R%d r.f", k, k);
        int32_t h = reg_routine(text);
        if (k == 0)
            first = h;
        CHECK(h > 0);
    }
    CHECK_EQ(reg_routine("2 0 100000 0 R0 r.f"), first);
}
