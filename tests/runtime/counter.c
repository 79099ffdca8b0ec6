/*
 * counter.c — the CPU's counter as libkm reads it (run by aarch64.sh under
 * qemu-user, where the kernel's clocksource is the host's, so KM_CLOCK=tsc
 * asks for the counter).  Checks that the counter is the one chosen and
 * named, never goes back, and measures a busy interval as CLOCK_MONOTONIC
 * does, once calibrated over the run as every write does (within 1%).
 * Prints "ok - ..." or "FAIL - ..." lines.
 */
#include "runtime/km_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static int failures;

static void check(int ok, const char *what)
{
    printf("%s - counter: %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
}

static double monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    struct km_clock c;
    km_clock_init(&c);
    const char *want = argc > 1 ? argv[1] : "";
    printf("clock: %s\n", c.name);
    check(c.kind == KM_CLOCK_TSC, "the counter is read inline");
    check(strncmp(c.name, want, strlen(want)) == 0, "its name");
    km_tick last = km_clock_start(&c);
    int back = 0;
    for (int i = 0; i < 100000; i++) {
        km_tick t = i % 2 ? km_clock_read(&c) : km_clock_start(&c);
        back += t < last;
        last = t;
    }
    check(back == 0, "never goes back");
    double m0 = monotonic();
    km_tick t0 = km_clock_start(&c);
    volatile double x = 1;
    while (monotonic() - m0 < 0.05)
        x *= 1.0000001;
    km_tick t1 = km_clock_read(&c);
    double m1 = monotonic();
    km_clock_calibrate(&c);
    double ratio = (double)(t1 - t0) * c.seconds_per_tick / (m1 - m0);
    printf("counter / CLOCK_MONOTONIC over 50 ms: %.5f\n", ratio);
    check(ratio > 0.99 && ratio < 1.01, "agrees with CLOCK_MONOTONIC");
    return failures != 0;
}
