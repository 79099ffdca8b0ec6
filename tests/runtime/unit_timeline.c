/*
 * unit_timeline.c — unit tests of the Timeline block: slots that hold
 * exactly what ran in them, the slot width doubling, MPI_INIT's return as
 * the origin, figures that rest on estimates.
 */
#include "unit.h"

/* Every category of f adds up to its total, and no row's routine columns
 * to more than its computation. */
static void check_timeline_sums(const struct km_tl_figures *f)
{
    for (int c = 0; c < KM_TL_NCAT; c++) {
        int64_t sum = 0;
        for (int32_t r = 0; r < f->rows; r++) {
            CHECK(f->cat[r][c] >= 0);
            sum += f->cat[r][c];
        }
        CHECK_EQ(sum, f->total[c]);
    }
    for (int32_t r = 0; r < f->rows; r++) {
        int64_t sum = 0;
        for (int32_t k = 0; k < f->ntop; k++)
            sum += f->rt[k][r];
        CHECK(sum <= f->cat[r][KM_TL_COMP]);
    }
}

/* Compute 50 ms in A, 30 ms of MPI, 10 ms of I/O, 10.5 ms in MAIN: with
 * no overhead every slot of 1 ms holds exactly what ran in it. */
void test_timeline_phases(void)
{
    begin("timeline_phases");
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t a = reg_routine("2 10 100000 0 A m.f");
    int32_t red = reg("12 5 100000 0 CALL MPI_ALLREDUCE(A, B, 1)", m);
    int32_t io = reg("13 7 100000 0 WRITE(6,*) X", m);
    in_at(0, m);
    in_at(0, a);
    out_at(50000000, a);
    in_at(50000000, red);
    out_at(80000000, red);
    in_at(80000000, io);
    out_at(90000000, io);
    out_at(100000000, m);
    struct km_report rep = report_at(100500000);
    struct km_tl_figures f;
    CHECK(rep.tl != NULL);
    CHECK_EQ(km_tl_figures(&rep, &f), 0);
    CHECK_EQ(f.rows, 102);              /* before, slots 0 .. 100 */
    CHECK_NEAR(f.width, 1e-3);
    CHECK_NEAR(f.origin, 0);
    CHECK_EQ(f.origin_mpi, 0);
    CHECK_EQ(f.total[KM_TL_COMP], 60000000);
    CHECK_EQ(f.total[KM_TL_MPI], 30000000);
    CHECK_EQ(f.total[KM_TL_IO], 10000000);
    CHECK_EQ(f.total[KM_TL_OTHER], 500000);     /* outside, at the end */
    check_timeline_sums(&f);
    for (int32_t s = 0; s < 100; s++) {
        int c = s < 50 ? KM_TL_COMP : s < 80 ? KM_TL_MPI
              : s < 90 ? KM_TL_IO : KM_TL_COMP;
        for (int k = 0; k < KM_TL_NCAT; k++)
            CHECK_EQ(f.cat[s + 1][k], k == c ? 1000000 : 0);
    }
    CHECK_EQ(f.cat[101][KM_TL_OTHER], 500000);
    CHECK_EQ(f.ntop, 2);
    CHECK_EQ(f.top[0], a);              /* 50 ms, then MAIN's 10 ms */
    CHECK_EQ(f.top[1], m);
    CHECK_EQ(f.rt[0][1], 1000000);
    CHECK_EQ(f.rt[0][51], 0);
    CHECK_EQ(f.rt[1][95], 1000000);
    CHECK_EQ(f.est[KM_TL_COMP] + f.est[KM_TL_MPI] + f.est[KM_TL_IO], 0);
    km_report_free(&rep);
    km_end_f();
    char *t = slurp("KM_output.000");
    CHECK_IN(t, "\n! ===== Timeline =====\n101             ! Slots\n"
             "1.0000000e-03   ! Slot width (s)\n0.0000000e+00   ! Origin (s "
             "after the start, the start)\n2               ! Routines: 2 1\n"
             "!   Slot Computation(ns) MPI(ns) IO(ns) Other(ns) R2(ns) R1(ns)\n"
             "  before 0 0 0 0 0 0\n       0 1000000 0 0 0 1000000 0\n");
    CHECK_IN(t, "\n      50 0 1000000 0 0 0 0\n");
    CHECK_IN(t, "\n     100 0 0 0 ~500000 0 0\n!\n! ===== Paths =====\n");
    free(t);
}

/* 300 ms of alternating phases: the width doubles twice (4 ms), the
 * slots merged in pairs keep every figure; MPI_INIT's return at 5 ms
 * becomes the origin. */
void test_timeline_doubling(void)
{
    begin("timeline_doubling");
    fake_reset(0, 2);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t a = reg_routine("2 10 100000 0 A m.f");
    int32_t red = reg("12 5 100000 0 CALL MPI_ALLREDUCE(A, B, 1)", m);
    in_at(0, m);
    fake_now = 5000000;
    km_core_mpi_init(&fake_ops);
    for (int i = 0; i < 30; i++) {   /* 6 ms computing, 4 ms in MPI */
        km_tick t0 = 5000000 + (km_tick)i * 10000000;
        in_at(t0, a);
        out_at(t0 + 6000000, a);
        in_at(t0 + 6000000, red);
        out_at(t0 + 10000000, red);
    }
    struct km_report rep = report_at(305000000);
    struct km_tl_figures f;
    CHECK_EQ(km_tl_figures(&rep, &f), 0);
    CHECK_NEAR(f.width, 4e-3);
    CHECK_EQ(f.origin_mpi, 1);
    CHECK_NEAR(f.origin, 5e-3);
    CHECK_EQ(f.rows, 1 + 76);         /* 300 ms: slots 0 .. 74, and 75 */
    CHECK_EQ(f.cat[0][KM_TL_COMP], 5000000);    /* MAIN before MPI_INIT */
    CHECK_EQ(f.total[KM_TL_MPI], 120000000);
    check_timeline_sums(&f);
    /* slot 0 (0-4 ms after the origin): computing; slot 1 (4-8 ms): 2 ms
     * computing, 2 ms MPI */
    CHECK_EQ(f.cat[1][KM_TL_COMP], 4000000);
    CHECK_EQ(f.cat[2][KM_TL_COMP], 2000000);
    CHECK_EQ(f.cat[2][KM_TL_MPI], 2000000);
    km_report_free(&rep);
}

/* Past the threshold most executions are estimated: the figures still
 * add up, and say that they rest on estimates. */
void test_timeline_estimated(void)
{
    begin("timeline_estimated");
    km_test_set_interval(10);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t a = reg_routine("2 10 2 0 A m.f");
    in_at(0, m);
    for (int i = 0; i < 1000; i++) {
        in_at((km_tick)i * 200000, a);
        out_at((km_tick)i * 200000 + 150000, a);
    }
    out_at(200000000, m);
    struct km_report rep = report_at(200000000);
    struct km_tl_figures f;
    CHECK_EQ(km_tl_figures(&rep, &f), 0);
    CHECK(R(&rep, a)->count > R(&rep, a)->measured);
    CHECK_EQ(f.est[KM_TL_COMP], 1);
    CHECK_EQ(f.top_est[0], 1);
    check_timeline_sums(&f);
    km_report_free(&rep);
}
