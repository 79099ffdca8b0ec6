/*
 * threads.c — libkm under many threads: every thread measured on its own,
 * exact counts per thread, and the registration race (threads that reach
 * a region no thread has registered yet, all at once, as instrumented
 * code's unguarded `IF (KM_H(1) .EQ. 0) CALL KM_REG(...)` lets them).
 * threads.sh runs it built normally and, where the compiler has it, with
 * ThreadSanitizer, which must find no data race.
 *
 * `threads signal`: a worker thread, inside a region, gets SIGTERM while
 * the program's thread waits for it: the results are written once, with
 * both threads, and the signal then ends the process.
 *
 * Output: one line per failed check; exit status 0 when all pass.
 */
#include "runtime/km_internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 8
#define ROUNDS 20                /* fresh registrations raced for, in turn */
#define CALLS 3000               /* past the threshold: some estimated */

static int failures;

#define CHECK_EQ(what, a, b)                                                \
    do {                                                                    \
        long long a_ = (long long)(a), b_ = (long long)(b);                 \
        if (a_ != b_) {                                                     \
            printf("FAIL %s (%s:%d): %s == %lld, expected %lld\n", what,    \
                   __FILE__, __LINE__, #a, a_, b_);                         \
            failures++;                                                     \
        }                                                                   \
    } while (0)

/* What instrumented code does with a handle: register it the first time
 * it is 0 (several threads may see 0 together), then enter and leave. */
static void reg_once(int32_t *h, const int32_t *hr, const char *text)
{
    if (__atomic_load_n(h, __ATOMIC_ACQUIRE) == 0)
        km_reg_f(h, hr, text);
}

static int32_t h_main;
static int32_t h_work[ROUNDS];       /* one routine per round */
static int32_t h_loop[ROUNDS];       /* a DO loop inside each */
static pthread_barrier_t start;

static void work(int round)
{
    char text[64];
    snprintf(text, sizeof text, "2 %d 1000 0 WORK%d threads.f", 10 + round,
             round);
    reg_once(&h_work[round], &h_work[round], text);
    km_in_f(&h_work[round]);
    snprintf(text, sizeof text, "10 %d 1000 0 DO I = 1, N", 11 + round);
    reg_once(&h_loop[round], &h_work[round], text);
    km_in_f(&h_loop[round]);
    km_out_f(&h_loop[round]);
    km_out_f(&h_work[round]);
}

/* Every round: all threads wait, then enter a routine none has entered,
 * together; then call it CALLS times more. */
static void *thread_body(void *arg)
{
    (void)arg;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&start);
        for (int c = 0; c <= CALLS; c++)
            work(round);
    }
    return NULL;
}

#define CHURN 50
static int32_t h_churn;

/* A short-lived thread: ten executions of a routine of its own. */
static void *churn_body(void *arg)
{
    (void)arg;
    reg_once(&h_churn, &h_churn, "2 40 1000 0 CHURN threads.f");
    for (int c = 0; c < 10; c++) {
        km_in_f(&h_churn);
        km_out_f(&h_churn);
    }
    return NULL;
}

#define TASKS 3
static int32_t h_tasker, h_tloop;

/* A task's body, as kmrun writes it: a loop of routine TASKER inside. */
static void task_body(void)
{
    int32_t minus = -h_tasker;
    km_in_f(&minus);
    km_in_f(&h_tloop);
    for (volatile int k = 0; k < 100000; k++)
        ;
    km_out_f(&h_tloop);
    km_out_f(&minus);
}

/* Tasks another thread created, run on a thread where TASKER is not. */
static void *tasks_elsewhere(void *arg)
{
    (void)arg;
    for (int k = 0; k < TASKS; k++)
        task_body();
    return NULL;
}

/* The report of the thread that ran it, by thread number. */
static const struct km_report *thread_report(const struct km_report *rep,
                                             int thread)
{
    if (rep->thread == thread)
        return rep;
    for (int32_t k = 0; k < rep->nothers; k++)
        if (rep->others[k].thread == thread)
            return &rep->others[k];
    return NULL;
}

/* Every thread's figures add up, exactly, as the rank's do. */
static void check_sums(const struct km_report *r)
{
    CHECK_EQ("sum", r->total, r->net + r->mpi + r->startup + r->uninstr +
                                  r->outside + r->overhead);
}

static void *signalled(void *arg)
{
    (void)arg;
    static int32_t h;
    reg_once(&h, &h, "2 30 1000 0 SIGNALLED threads.f");
    km_in_f(&h);
    raise(SIGTERM);                  /* to this thread */
    km_out_f(&h);
    return NULL;
}

static int signal_case(void)
{
    reg_once(&h_main, &h_main, "1 1 1000 0 MAIN threads.f");
    km_in_f(&h_main);
    pthread_t tid;
    pthread_create(&tid, NULL, signalled, NULL);
    pthread_join(tid, NULL);
    km_out_f(&h_main);
    return 1;                        /* not reached: the signal ends it */
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "signal") == 0)
        return signal_case();
    pthread_t tid[NTHREADS];
    pthread_barrier_init(&start, NULL, NTHREADS + 1);
    reg_once(&h_main, &h_main, "1 1 1000 0 MAIN threads.f");
    km_in_f(&h_main);
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&tid[i], NULL, thread_body, NULL);
    thread_body(NULL);               /* the program's thread takes part */
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(tid[i], NULL);

    /* one id per region, whoever registered it */
    for (int round = 0; round < ROUNDS; round++) {
        CHECK_EQ("ids", h_work[round], 2 + 2 * round);
        CHECK_EQ("ids", h_loop[round], 3 + 2 * round);
    }
    struct km_report rep;
    CHECK_EQ("report", km_test_report(&rep, "END"), 0);
    CHECK_EQ("threads", rep.nothers, NTHREADS);
    CHECK_EQ("thread 0", rep.thread, 0);
    for (int t = 0; t <= NTHREADS; t++) {
        const struct km_report *r = thread_report(&rep, t);
        if (!r) {
            printf("FAIL threads: no report of thread %d\n", t);
            failures++;
            continue;
        }
        CHECK_EQ("regions", r->nreg, 1 + 2 * ROUNDS);
        for (int round = 0; round < ROUNDS; round++) {
            CHECK_EQ("counts", r->reg[h_work[round] - 1].count, CALLS + 1);
            CHECK_EQ("counts", r->reg[h_loop[round] - 1].count, CALLS + 1);
        }
        CHECK_EQ("main", r->reg[h_main - 1].count, t == 0 ? 1 : 0);
        CHECK_EQ("routine counts", r->routine_counts,
                 (uint64_t)ROUNDS * (CALLS + 1) + (t == 0));
        check_sums(r);
    }
    km_report_free(&rep);

    /* Threads that end leave their state to those that start: 50 more
     * threads, one after the other, make no new state; the executions add
     * up over the states they used. */
    for (int k = 0; k < CHURN; k++) {
        pthread_t one;
        pthread_create(&one, NULL, churn_body, NULL);
        pthread_join(one, NULL);
    }
    CHECK_EQ("report", km_test_report(&rep, "END"), 0);
    CHECK_EQ("states after churn", rep.nothers, NTHREADS);
    uint64_t churned = 0;
    for (int t = 0; t <= NTHREADS; t++) {
        const struct km_report *r = thread_report(&rep, t);
        if (r && h_churn > 0 && h_churn <= r->nreg)
            churned += r->reg[h_churn - 1].count;
        if (r)
            check_sums(r);
    }
    CHECK_EQ("churn executions", churned, CHURN * 10);
    km_report_free(&rep);

    /* Task bodies (KM_IN of minus their routine's handle): where the
     * routine is open, nothing more; on a thread where it is not, the
     * routine is entered, so its figures hold those of its loop. */
    reg_once(&h_tasker, &h_tasker, "2 50 1000 0 TASKER threads.f");
    reg_once(&h_tloop, &h_tasker, "10 51 1000 0 DO K = 1, N");
    km_in_f(&h_tasker);
    task_body();
    km_out_f(&h_tasker);
    pthread_t other;
    pthread_create(&other, NULL, tasks_elsewhere, NULL);
    pthread_join(other, NULL);
    CHECK_EQ("report", km_test_report(&rep, "END"), 0);
    CHECK_EQ("tasker here", rep.reg[h_tasker - 1].count, 1);
    CHECK_EQ("its loop here", rep.reg[h_tloop - 1].count, 1);
    uint64_t tasker = 0, tloop = 0;
    for (int32_t k = 0; k < rep.nothers; k++) {
        const struct km_report *r = &rep.others[k];
        if (h_tloop > r->nreg)
            continue;
        tasker += r->reg[h_tasker - 1].count;
        tloop += r->reg[h_tloop - 1].count;
        if (r->reg[h_tasker - 1].elapsed < r->reg[h_tloop - 1].elapsed) {
            printf("FAIL tasks: a loop outlasts its routine on thread %d\n",
                   r->thread);
            failures++;
        }
        check_sums(r);
    }
    CHECK_EQ("tasker elsewhere: entered by each task body", tasker, TASKS);
    CHECK_EQ("its loop elsewhere", tloop, TASKS);
    km_report_free(&rep);
    km_out_f(&h_main);
    printf("PASS: %d failure(s)\n", failures);
    return failures != 0;
}
