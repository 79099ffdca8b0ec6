/*
 * km_clock.c — the clock libkm measures with.
 *
 * Owns the choice of clock source, the length of one tick and the start-up
 * measurement of what one read costs.  Today the only source is
 * clock_gettime(CLOCK_MONOTONIC) in integer nanoseconds; another source
 * (an invariant TSC, say) is one more reader function plus its tick length
 * chosen in km_clock_init.  Must never keep state of its own (the caller
 * owns the struct km_clock), never allocate, never print.
 */
#include "runtime/km_internal.h"

#include <time.h>

static km_tick monotonic_read(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (km_tick)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Seconds per read: the best of a few batches, so that a preemption during
 * one batch does not inflate the figure. */
static double measure_read_cost(const struct km_clock *c)
{
    enum { BATCHES = 5, READS = 1000 };
    km_tick best = -1;
    for (int b = 0; b < BATCHES; b++) {
        km_tick t0 = c->read();
        for (int i = 0; i < READS - 1; i++)
            (void)c->read();
        km_tick dt = c->read() - t0;     /* READS + 1 reads, READS gaps */
        if (best < 0 || dt < best)
            best = dt;
    }
    return best < 0 ? 0.0 : (double)best * c->seconds_per_tick / READS;
}

void km_clock_init(struct km_clock *c)
{
    c->read = monotonic_read;
    c->seconds_per_tick = 1e-9;
    c->name = "CLOCK_MONOTONIC";
    c->read_cost = measure_read_cost(c);
}
