/*
 * hotpath.c — what one measurement costs, on this machine, now: a clock
 * read, a KM_IN + KM_OUT pair that reads the clock, one past the
 * extrapolation threshold (no clock), one that is traced, two past it
 * that alternate in one slot of their caller's cache; and the first
 * two on a second thread (an OpenMP worker's), whose state libkm reaches
 * through a thread-local pointer; and the same two on 1, 2, 4, 8 and 16
 * threads at once, each doing its own pairs (per pair and per thread:
 * flat when no thread slows the others through shared state).  Each
 * figure is
 * the best of many short batches, taken in rounds spread over a few
 * seconds, so that the other processes of a shared machine (on the other
 * hardware thread of the same core, say) disturb it as little as possible.
 *
 * Prints "name value" lines (nanoseconds) for bench/runtime.sh; run in a
 * scratch directory (the traced pair writes KM_trace there: batches of
 * 20,000 pairs, 640 KB, so that each crosses blocks and the figure holds
 * their share of claiming and growing the file; 64 MB in all).
 */
#include "runtime/km_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { BATCH = 20000, BATCHES = 10, ROUNDS = 40 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static km_tick monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (km_tick)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static volatile km_tick sink;

/* Lower `best` to the best seconds per iteration of BATCHES batches of n
 * iterations. */
#define BEST(best, n, body)                                                \
    do {                                                                   \
        for (int b_ = 0; b_ < BATCHES; b_++) {                             \
            double t0_ = now();                                            \
            for (int i_ = 0; i_ < (n); i_++) {                             \
                body;                                                      \
            }                                                              \
            double t_ = (now() - t0_) / (n);                               \
            if (t_ < (best))                                               \
                (best) = t_;                                               \
        }                                                                  \
    } while (0)

static int32_t reg(const char *text)
{
    int32_t h = 0;
    km_reg_f(&h, &h, text);
    return h;
}

static int32_t measured, extrap;
static double thread_pair = 1, thread_xpair = 1;

/* The same pairs on a thread of its own (its first calls register it). */
static void *worker(void *arg)
{
    (void)arg;
    km_in_f(&extrap);                 /* this thread's measured execution */
    km_out_f(&extrap);
    for (int round = 0; round < ROUNDS; round++) {
        BEST(thread_pair, BATCH, km_in_f(&measured); km_out_f(&measured));
        BEST(thread_xpair, BATCH, km_in_f(&extrap); km_out_f(&extrap));
    }
    return NULL;
}

/* ---- 1 to 16 threads at once ------------------------------------------ */

enum { MAX_THREADS = 16, SWEEP_ROUNDS = 10 };

static pthread_barrier_t start_line;
static double sweep_pair[MAX_THREADS], sweep_xpair[MAX_THREADS];

/* One of n threads: after all have started, the best batch of each kind
 * of pair.  With more threads than processors a batch (a fraction of a
 * millisecond) mostly runs whole between two switches, so the best one
 * is the cost of a pair while the other threads run too. */
static void *sweeper(void *arg)
{
    int i = (int)(intptr_t)arg;
    double pair = 1, xpair = 1;
    km_in_f(&extrap);                 /* this thread's measured execution */
    km_out_f(&extrap);
    pthread_barrier_wait(&start_line);
    for (int round = 0; round < SWEEP_ROUNDS; round++) {
        BEST(pair, BATCH, km_in_f(&measured); km_out_f(&measured));
        BEST(xpair, BATCH, km_in_f(&extrap); km_out_f(&extrap));
    }
    sweep_pair[i] = pair;
    sweep_xpair[i] = xpair;
    return NULL;
}

/* Print "threads_pair N ns" and "threads_extrapolated N ns", the mean over
 * the n threads of each one's best; 0 if the threads could not start. */
static void sweep(int n)
{
    pthread_t tid[MAX_THREADS];
    int started = 0;
    pthread_barrier_init(&start_line, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        if (pthread_create(&tid[i], NULL, sweeper, (void *)(intptr_t)i) == 0)
            started++;
    if (started < n) {               /* the barrier would never open */
        fprintf(stderr, "hotpath: only %d of %d threads started\n", started, n);
        exit(1);
    }
    double p = 0, x = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(tid[i], NULL);
        p += sweep_pair[i];
        x += sweep_xpair[i];
    }
    pthread_barrier_destroy(&start_line);
    printf("threads_pair %d %.2f\n", n, p / n * 1e9);
    printf("threads_extrapolated %d %.2f\n", n, x / n * 1e9);
}

int main(void)
{
    const struct km_clock *c = km_test_clock();
    int32_t main_h = reg("1 1 0 0 BENCH hotpath.c");
    measured = reg("2 2 0 0 MEASURED hotpath.c");     /* never */
    extrap = reg("2 3 1 0 EXTRAP hotpath.c");         /* at once */
    int32_t traced = reg("2 4 0 1 TRACED hotpath.c");
    /* a second region extrapolated at once whose id falls in EXTRAP's
     * slot of their caller's cache of children (id % 8) */
    int32_t other;
    char text[64];
    for (int line = 5;; line++) {
        snprintf(text, sizeof text, "2 %d 1 0 OTHER%d hotpath.c", line, line);
        other = reg(text);
        if (other % 8 == extrap % 8 || line > 64)
            break;
    }
    km_in_f(&main_h);
    for (int i = 0; i < 4; i++) {     /* the measured executions */
        km_in_f(&extrap);
        km_out_f(&extrap);
        km_in_f(&other);
        km_out_f(&other);
    }

    double read = 1, mono = 1, pair = 1, xpair = 1, tpair = 1, apair = 1;
    for (int round = 0; round < ROUNDS; round++) {
        BEST(read, BATCH, sink += km_clock_read(c));
        BEST(mono, BATCH / 4, sink += monotonic());
        BEST(pair, BATCH, km_in_f(&measured); km_out_f(&measured));
        BEST(xpair, BATCH, km_in_f(&extrap); km_out_f(&extrap));
        BEST(apair, BATCH / 2, km_in_f(&extrap); km_out_f(&extrap);
             km_in_f(&other); km_out_f(&other));
        if (round % 4 == 0)
            BEST(tpair, BATCH, km_in_f(&traced); km_out_f(&traced));
    }
    km_out_f(&main_h);
    pthread_t tid;
    if (pthread_create(&tid, NULL, worker, NULL) == 0)
        pthread_join(tid, NULL);

    printf("clock %s\n", c->name);
    printf("read %.2f\n", read * 1e9);
    printf("monotonic %.2f\n", mono * 1e9);
    printf("pair %.2f\n", pair * 1e9);
    printf("extrapolated %.2f\n", xpair * 1e9);
    printf("traced %.2f\n", tpair * 1e9);
    printf("alternating %.2f\n", apair / 2 * 1e9);
    printf("thread_pair %.2f\n", thread_pair * 1e9);
    printf("thread_extrapolated %.2f\n", thread_xpair * 1e9);
    for (int n = 1; n <= MAX_THREADS; n *= 2)
        sweep(n);
    km_test_reset();                  /* no KM_output for this */
    return 0;
}
