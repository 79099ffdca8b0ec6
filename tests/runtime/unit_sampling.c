/*
 * unit_sampling.c — unit tests of sampling past the threshold: the rate
 * of samples, estimates per caller, estimates that follow a changing or
 * skewed cost (libkm's adaptive interval), and waiting for a processor
 * during estimated executions (the run delay goes to the routine).
 */
#include "unit.h"

/* Past the threshold one execution in about k is measured, at random
 * gaps between k/2 and 3k/2. */
void test_sampling_rate(void)
{
    begin("sampling");
    km_test_set_interval(16);
    km_test_seed(12345);
    int32_t s = reg_routine("2 1 10 0 S s.f");
    enum { N = 16000 };
    for (int k = 0; k < N; k++) {
        in_at(10 * k, s);
        out_at(10 * k + 3, s);
    }
    struct km_report rep = report_at(10 * N);
    uint64_t sampled = R(&rep, s)->measured - 10;
    CHECK(sampled > (N - 10) / 16 * 9 / 10 && sampled < (N - 10) / 16 * 11 / 10);
    CHECK_EQ(R(&rep, s)->elapsed, T(3 * N));
    check_identity(&rep);
    km_report_free(&rep);
}

/* The estimate follows a cost that changes: a routine called N times
 * whose cost ramps up, ramps down, steps, or takes one of two values at
 * random or in turn is reported within 5% of its true time (sampled one
 * in 64, threshold 10). */
static km_tick pattern_cost(int pattern, int k, int n, uint32_t *lcg)
{
    switch (pattern) {
    case 0: return 10 + 200 * (km_tick)k / n;          /* ramp up */
    case 1: return 210 - 200 * (km_tick)k / n;         /* ramp down */
    case 2: return k < n / 2 ? 10 : 100;               /* step */
    case 3:                                            /* bimodal */
        *lcg = *lcg * 1664525u + 1013904223u;
        return (*lcg >> 16) & 1 ? 100 : 10;
    case 4: return k % 2 ? 100 : 10;                   /* in turn */
    default: return 50;                                /* constant */
    }
}

/* A routine that costs 10 when A calls it and 1000 when B does: each
 * caller's elapsed time holds what its own calls cost, not the average. */
void test_per_caller(void)
{
    begin("per_caller");
    km_test_set_interval(8);
    km_test_seed(99);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t a = reg_routine("2 1 10 0 A a.f");
    int32_t b = reg_routine("2 1 10 0 B b.f");
    int32_t d = reg_routine("2 1 10 0 D d.f");
    enum { N = 20000 };
    km_tick now = 0;
    in_at(now, m);
    for (int k = 0; k < N; k++) {
        in_at(now + 1, a);
        in_at(now + 2, d);
        out_at(now + 12, d);          /* D in A: 10 */
        out_at(now + 13, a);          /* A: 12, own 2 */
        in_at(now + 14, b);
        in_at(now + 15, d);
        out_at(now + 1015, d);        /* D in B: 1000 */
        out_at(now + 1016, b);        /* B: 1002, own 2 */
        now += 1017;
    }
    out_at(now, m);
    struct km_report rep = report_at(now);
    double ra = (double)R(&rep, a)->elapsed / (double)T(12 * N);
    double rb = (double)R(&rep, b)->elapsed / (double)T(1002 * N);
    double rd = (double)R(&rep, d)->elapsed / (double)T(1010 * N);
    printf("note: per caller: A %.4f, B %.4f, D %.4f of their true times\n",
           ra, rb, rd);
    CHECK(ra > 0.95 && ra < 1.05);
    CHECK(rb > 0.95 && rb < 1.05);
    CHECK(rd > 0.95 && rd < 1.05);
    check_identity(&rep);
    km_report_free(&rep);
}

/* Sampling at the interval libkm chooses for itself.  The gap to the next
 * sample must not depend on what the samples saw: when a costly sample
 * shortens the gap after it, its high estimate is applied to fewer
 * executions and the estimate comes out low (-23..-42% on a routine whose
 * every 7th call costs 50 times the others).  The clock advances by what
 * libkm says an execution costs (20 ticks measured, 1 estimated), outside
 * the routine's interval, so that the caller's measured time is true.
 * With `wrapped`, a CALL location measured on its own schedule encloses
 * each call: the routine's estimate must not be cut to fit a measured
 * CALL whose one execution happened to be cheap. */
static km_tick shape_cost(int shape, int k, int n, uint32_t *lcg)
{
    switch (shape) {
    case 6: return k % 7 == 6 ? 2500 : 50;             /* every 7th 50x */
    case 7:                                            /* rare stalls */
        *lcg = *lcg * 1664525u + 1013904223u;
        return (*lcg >> 8) % 2000 == 0 ? 100000 : 100;
    default: return pattern_cost(shape, k, n, lcg);
    }
}

struct shape_result {
    double f;                /* F's elapsed / its true time */
    double call;             /* the CALL's elapsed / its true time */
    double main_net;         /* MAIN's net time / its true net */
    uint64_t measured;
};

static struct shape_result run_shape(int shape, int wrapped, uint64_t seed,
                                     int n)
{
    km_test_seed(seed);
    km_test_set_costs(20, 1, 0);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t c = wrapped ? reg("11 5 10 0 CALL F(X)", m) : 0;
    int32_t f = reg_routine("2 1 10 0 F f.f");
    uint32_t lcg = (uint32_t)seed;
    km_tick now = 0, truth = 0;
    in_at(now, m);
    for (int k = 0; k < n; k++) {
        km_tick cost = shape_cost(shape, k, n, &lcg);
        long long before = fake_reads;
        if (wrapped)
            in_at(now + 1, c);
        int call_measured = fake_reads != before;   /* (it read the clock) */
        before = fake_reads;
        in_at(now + 2, f);
        out_at(now + 2 + cost, f);
        now += 2 + cost + (fake_reads != before ? 20 : 1);
        truth += cost;
        if (wrapped) {
            out_at(++now, c);
            now += call_measured ? 20 : 1;
        }
    }
    out_at(++now, m);
    struct km_report rep = report_at(now);
    km_time main_true = T((wrapped ? 1 : 2) * (km_tick)n + 1);
    struct shape_result res = {
        .f = (double)R(&rep, f)->elapsed / (double)T(truth),
        .call = wrapped ? (double)R(&rep, c)->elapsed /
                              (double)T(truth + 2 * (km_tick)n) : 1,
        .main_net = (double)R(&rep, m)->excl / (double)main_true,
        .measured = R(&rep, f)->measured,
    };
    check_identity(&rep);
    km_report_free(&rep);
    return res;
}

void test_adaptive_sampling(void)
{
    static const char *names[] = { "ramp_up", "ramp_down", "step", "bimodal",
                                   "alternating", "constant", "seventh",
                                   "stalls" };
    for (int wrapped = 0; wrapped < 2; wrapped++) {
        for (int shape = 0; shape < 8; shape++) {
            char name[64];
            snprintf(name, sizeof name, "adaptive_%s%s", names[shape],
                     wrapped ? "_call" : "");
            begin(name);
            struct shape_result r = run_shape(shape, wrapped,
                                              11 + (uint64_t)shape, 1000000);
            printf("note: %-28s F %.4f, CALL %.4f of their true times, "
                   "MAIN's net %.3f; %llu measured\n", name, r.f, r.call,
                   r.main_net, (unsigned long long)r.measured);
            if (shape != 7) {
                CHECK(r.f > 0.95 && r.f < 1.05);
                CHECK(r.call > 0.95 && r.call < 1.05);
                continue;
            }
            /* Rare stalls (one call in 2000 costs 1000 times the others,
             * as a preemption does) are a third of F's time, and a sample
             * sees one in about 40 of them: one run's estimate is off by
             * some 10% either way.  Its mean over runs is right within
             * 4% (0.963 for F alone, 1.003 for the CALL; 0.89-0.91 when
             * estimates were settled per frame, cut for good where a
             * caught stall made them exceed the time measured so far). */
            double sum = r.f;
            for (int s = 1; s < 16; s++) {
                char again[80];
                snprintf(again, sizeof again, "%s_%d", name, s);
                begin(again);
                sum += run_shape(shape, wrapped, 100 + (uint64_t)s,
                                 1000000).f;
            }
            printf("note: %-28s F %.4f on average over 16 runs\n", name,
                   sum / 16);
            CHECK(sum / 16 > 0.94 && sum / 16 < 1.05);
        }
    }
}

void test_changing_costs(void)
{
    static const char *names[] = { "ramp up", "ramp down", "step",
                                   "bimodal", "alternating", "constant" };
    for (int pattern = 0; pattern < 6; pattern++) {
        begin(names[pattern][0] == 'r' ? (pattern ? "ramp_down" : "ramp_up")
              : names[pattern]);
        km_test_set_interval(64);
        km_test_seed(7 + (uint64_t)pattern);
        int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
        int32_t f = reg_routine("2 1 10 0 F f.f");
        enum { N = 200000 };
        uint32_t lcg = 1;
        km_tick now = 0, truth = 0;
        in_at(now, m);
        for (int k = 0; k < N; k++) {
            km_tick c = pattern_cost(pattern, k, N, &lcg);
            in_at(now + 3, f);
            out_at(now + 3 + c, f);
            now += 3 + c;
            truth += c;
        }
        out_at(now, m);
        struct km_report rep = report_at(now);
        double got = (double)R(&rep, f)->elapsed / (double)T(truth);
        double net = (double)R(&rep, m)->excl / (double)T(3 * N);
        /* MAIN's net (3 per call) absorbs F's error (60 per call on
         * average): it is marked, not required within 5% */
        printf("note: %-12s F %.4f of its true time, MAIN's net %.4f, "
               "%llu of %d measured\n", names[pattern], got, net,
               (unsigned long long)R(&rep, f)->measured, N);
        CHECK(got > 0.95 && got < 1.05);
        CHECK(R(&rep, m)->absorbed > 0);
        check_identity(&rep);
        km_report_free(&rep);
    }
}

/* ---- waiting for a processor ---------------------------------------------- */

static int64_t fake_waited;          /* the run delay, ns (a tick is 1 ns) */

static int64_t fake_waited_read(void)
{
    return fake_waited;
}

/* Issue 27, item 2: LOOP (measured) calls WORK 2000 times, 100 ticks
 * each; past the threshold WORK is estimated, and every estimated
 * execution waits 900 ticks for a processor.  That waiting is WORK's (a
 * measured WORK would hold it), not LOOP's, whose own work takes no time:
 * LOOP's net must come out 0, not 900 ticks per estimated WORK.  Then
 * LOOP runs again without waiting but for one sample of WORK that waited
 * long (a preemption caught): WORK keeps that wait, but its estimate
 * learns nothing of it.  In an earlier design LOOP's net held all the
 * estimated executions' waiting, and the caught sample raised the
 * estimate by an eighth of its wait. */
static km_tick waiting_loop(km_tick now, int32_t l, int32_t w, int n,
                            km_tick wait_est, long long *estimated,
                            km_time *after_caught)
{
    if (l)
        in_at(now, l);
    int caught = after_caught == NULL;
    for (int i = 0; i < n; i++) {
        long long reads = fake_reads;
        in_at(now, w);
        int measured = fake_reads > reads;
        km_tick wait = measured ? 0 : wait_est;
        if (measured && !caught)
            wait = 1000000;
        now += 100 + wait;
        fake_waited += wait;
        *estimated += !measured;
        out_at(now, w);
        if (measured && !caught) {
            caught = 1;
            km_test_path_estimate(w, after_caught);
        }
    }
    if (l)
        out_at(now, l);
    return now;
}

void test_waiting_estimated(void)
{
    begin("waiting_estimated");
    fake_waited = 0;
    km_test_set_waited(fake_waited_read);
    km_test_set_interval(8);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t l = reg_routine("2 1 100000 0 LOOP m.f");
    int32_t w = reg_routine("3 1 3 0 WORK m.f");
    in_at(0, m);
    long long estimated = 0;
    km_tick now = waiting_loop(0, l, w, 2000, 900, &estimated, NULL);
    km_time mean;
    CHECK_EQ(km_test_path_estimate(w, &mean), 1);
    CHECK_EQ(mean, T(100));
    CHECK(estimated > 1500);
    struct km_report rep = report_at(now);
    CHECK_EQ(R(&rep, w)->count, 2000);
    CHECK_EQ(R(&rep, l)->excl, 0);
    CHECK_EQ(R(&rep, m)->excl, 0);
    CHECK_EQ(R(&rep, w)->excl, T(now));
    CHECK_EQ(R(&rep, w)->est_excl, T(1000 * estimated));
    check_identity(&rep);
    km_report_free(&rep);

    km_time caught = 0;
    now = waiting_loop(now, l, w, 200, 0, &estimated, &caught);
    CHECK_EQ(caught, T(100));
    out_at(now, m);
    rep = report_at(now);
    CHECK_EQ(R(&rep, w)->count, 2200);
    check_identity(&rep);
    km_report_free(&rep);
}

/* The same loop in the main program, whose frame is still open when the
 * results are written: its waiting during WORK's estimated executions
 * goes to WORK all the same. */
void test_waiting_open(void)
{
    begin("waiting_open");
    fake_waited = 0;
    km_test_set_waited(fake_waited_read);
    km_test_set_interval(8);
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t w = reg_routine("3 1 3 0 WORK m.f");
    in_at(0, m);
    long long estimated = 0;
    km_tick now = waiting_loop(0, 0, w, 2000, 900, &estimated, NULL);
    CHECK(estimated > 1500);
    struct km_report rep = report_at(now);
    CHECK_EQ(R(&rep, m)->excl, 0);
    CHECK_EQ(R(&rep, w)->excl, T(now));
    CHECK_EQ(R(&rep, w)->est_excl, T(1000 * estimated));
    check_identity(&rep);
    km_report_free(&rep);
    out_at(now, m);
}
