/*
 * km_clock.c — the clock libkm measures with.
 *
 * Owns the choice of clock source, the length of one tick and the start-up
 * measurement of what one read costs:
 *
 *   TSC        the CPU's counter: the x86 time-stamp counter when the CPU
 *              says it is invariant (constant rate, running in every power
 *              state), aarch64's generic timer (CNTVCT_EL0), and in both
 *              cases only while the kernel itself keeps time with it (so
 *              the counters of all CPUs agree); read inline, in order (see
 *              km_internal.h), calibrated against CLOCK_MONOTONIC at
 *              start-up and again over the whole run at every write
 *   MONOTONIC  clock_gettime(CLOCK_MONOTONIC), everywhere else
 *   CPU        clock_gettime(CLOCK_THREAD_CPUTIME_ID): the CPU time of the
 *              thread running the program instead of elapsed time, when the
 *              environment says KM_CLOCK=cpu (as the original KMtool
 *              allowed); not the process's, which today's MPI libraries
 *              inflate with helper threads of their own; a system call per
 *              read.  Each thread's CPU time counts from that thread's
 *              start, so another thread's is read on its own clock
 *              (km_clock_cpu_read_id)
 *
 * KM_CLOCK=tsc or KM_CLOCK=monotonic forces the choice.  Must never keep
 * state of its own (the caller owns the struct km_clock), allocate, or
 * print more than one line for a bad KM_CLOCK.
 */
#include "runtime/km_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define KM_HAVE_TSC 1
#define KM_COUNTER_NAME "TSC (invariant"
#define KM_KERNEL_CLOCKSOURCE "tsc"
#include <cpuid.h>
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
#define KM_HAVE_TSC 1
#define KM_COUNTER_NAME "generic timer (CNTVCT_EL0"
#define KM_KERNEL_CLOCKSOURCE "arch_sys_counter"
#else
#define KM_HAVE_TSC 0
#endif

static int64_t timespec_ns(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return timespec_ns(&ts);
}

static km_tick monotonic_read(void)
{
    return monotonic_ns();
}

static km_tick km_clock_cpu_read(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return timespec_ns(&ts);
}

int km_clock_cpu_id(clockid_t *id)
{
    return pthread_getcpuclockid(pthread_self(), id) == 0 ? 0 : -1;
}

int km_clock_is_cpu(const struct km_clock *c)
{
    return c->kind == KM_CLOCK_CALL && c->read == km_clock_cpu_read;
}

int km_clock_cpu_read_id(clockid_t id, km_tick *tick)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return -1;
    *tick = timespec_ns(&ts);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* TSC                                                                       */

#if KM_HAVE_TSC
/* CPUID leaf 0x80000007, EDX bit 8: the TSC runs at a constant rate in
 * every P-, C- and T-state.  (In a virtual machine each CPUID instruction
 * traps to the hypervisor, some microseconds: two is all it takes.)
 * aarch64's generic timer always runs at a constant rate. */
static int cpu_has_invariant_tsc(void)
{
#if defined(__aarch64__)
    return 1;
#else
    unsigned a, b, c, d;
    if ((unsigned)__get_cpuid_max(0x80000000u, NULL) < 0x80000007u)
        return 0;
    __cpuid(0x80000007u, a, b, c, d);
    (void)a, (void)b, (void)c;
    return (d >> 8) & 1;
#endif
}

/* Linux switches its clocksource away from the TSC when it finds the CPUs'
 * counters out of step; while it keeps time with the TSC (on aarch64, the
 * generic timer), so can we.
 * Elsewhere (no such file) the CPUID bit has to do. */
static int kernel_trusts_tsc(void)
{
    char buf[32];
    int fd = open("/sys/devices/system/clocksource/clocksource0/"
                  "current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 1;
    buf[n] = '\0';
    size_t len = strlen(KM_KERNEL_CLOCKSOURCE);
    return strncmp(buf, KM_KERNEL_CLOCKSOURCE, len) == 0 &&
           (buf[len] == '\n' || buf[len] == '\0');
}

/* A TSC value and the CLOCK_MONOTONIC time at the same instant, to within
 * half the narrowest of a few brackets of two monotonic reads. */
static void tsc_pair(const struct km_clock *c, km_tick *tick, int64_t *ns)
{
    int64_t best = -1;
    for (int k = 0; k < 5; k++) {
        int64_t a = monotonic_ns();
        km_tick t = km_clock_read(c);
        int64_t b = monotonic_ns();
        if (best < 0 || b - a < best) {
            best = b - a;
            *tick = t;
            *ns = a + (b - a) / 2;
        }
    }
}

static void tsc_name(struct km_clock *c)
{
    snprintf(c->name, sizeof c->name, KM_COUNTER_NAME ", %.4f GHz against "
             "CLOCK_MONOTONIC)", 1e-9 / c->seconds_per_tick);
}

/* Start-up calibration: 20 microseconds give a first estimate to within a
 * few 1e-3 (the brackets are tens of nanoseconds wide), good enough for
 * the trace's times until every write refines it over the whole run; a
 * short program should not pay more at start-up. */
static void tsc_init(struct km_clock *c)
{
    c->kind = KM_CLOCK_TSC;
    c->read = monotonic_read;        /* never used for the TSC */
    tsc_pair(c, &c->cal_tick0, &c->cal_ns0);
    km_tick t;
    int64_t ns;
    do
        tsc_pair(c, &t, &ns);
    while (ns - c->cal_ns0 < 20000 || t <= c->cal_tick0);
    c->seconds_per_tick = (double)(ns - c->cal_ns0) * 1e-9 /
                          (double)(t - c->cal_tick0);
    tsc_name(c);
}
#endif

void km_clock_calibrate(struct km_clock *c)
{
#if KM_HAVE_TSC
    if (c->kind == KM_CLOCK_TSC) {
        km_tick t;
        int64_t ns;
        tsc_pair(c, &t, &ns);
        /* the longer the span, the better: past the start-up window
         * the whole run is always the better figure */
        if (ns - c->cal_ns0 > 20000 && t > c->cal_tick0) {
            c->seconds_per_tick = (double)(ns - c->cal_ns0) * 1e-9 /
                                  (double)(t - c->cal_tick0);
            tsc_name(c);
        }
    }
#endif
    c->read_cost = c->read_ticks * c->seconds_per_tick;
}

/* ------------------------------------------------------------------------ */
/* Waiting for a processor                                                   */

/* /proc/thread-self/schedstat: "<on-cpu ns> <run-queue wait ns> <slices>";
 * read without stdio (this may run in a signal handler). */
static int64_t run_delay(char *buf, ssize_t n);

int64_t km_clock_waited_ns(void)
{
    char buf[96];
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return run_delay(buf, n);
}

/* The same through a file the calling thread keeps open (*fd1: its
 * descriptor + 1, opened at the first call; 0 not open): a read costs a
 * pread, about a microsecond. */
int64_t km_clock_waited_fd(int *fd1)
{
    char buf[96];
    if (*fd1 <= 0) {
        int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -1;
        *fd1 = fd + 1;
    }
    return run_delay(buf, pread(*fd1 - 1, buf, sizeof buf - 1, 0));
}

/* The second field of schedstat's text buf[0..n). */
static int64_t run_delay(char *buf, ssize_t n)
{
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = buf;
    while (*p >= '0' && *p <= '9')          /* time on a processor */
        p++;
    if (*p != ' ')
        return -1;
    p++;
    int64_t v = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 18; p++, digits++)
        v = v * 10 + (*p - '0');
    return digits ? v : -1;
}

/* ------------------------------------------------------------------------ */
/* Choice                                                                    */

/* Ticks per read: the best of a few batches, so that a preemption during
 * one batch does not inflate the figure. */
static double measure_read_ticks(const struct km_clock *c)
{
    enum { BATCHES = 5, READS = 200 };
    km_tick best = -1;
    for (int b = 0; b < BATCHES; b++) {
        km_tick t0 = km_clock_read(c);
        for (int i = 0; i < READS - 1; i++)
            (void)km_clock_read(c);
        km_tick dt = km_clock_read(c) - t0;   /* READS + 1 reads, READS gaps */
        if (best < 0 || dt < best)
            best = dt;
    }
    return best < 0 ? 0.0 : (double)best / READS;
}

static void use_call(struct km_clock *c, km_tick (*read)(void),
                     const char *name)
{
    c->kind = KM_CLOCK_CALL;
    c->read = read;
    c->seconds_per_tick = 1e-9;
    snprintf(c->name, sizeof c->name, "%s", name);
}

enum wish { WISH_BEST, WISH_TSC, WISH_MONOTONIC, WISH_CPU };

static enum wish wished_clock(void)
{
    const char *s = getenv("KM_CLOCK");
    if (!s || !*s)
        return WISH_BEST;
    if (strcasecmp(s, "tsc") == 0)
        return WISH_TSC;
    if (strcasecmp(s, "monotonic") == 0)
        return WISH_MONOTONIC;
    if (strcasecmp(s, "cpu") == 0)
        return WISH_CPU;
    km_complain("ignoring KM_CLOCK=%.40s (tsc, monotonic or cpu)", s);
    return WISH_BEST;
}

void km_clock_init(struct km_clock *c)
{
    memset(c, 0, sizeof *c);
    enum wish w = wished_clock();
    if (w == WISH_CPU) {
        use_call(c, km_clock_cpu_read, "CPU time (CLOCK_THREAD_CPUTIME_ID)");
    } else {
        use_call(c, monotonic_read, "CLOCK_MONOTONIC");
#if KM_HAVE_TSC
        if (w == WISH_TSC ||
            (w == WISH_BEST && kernel_trusts_tsc() && cpu_has_invariant_tsc()))
            tsc_init(c);
#else
        if (w == WISH_TSC)
            km_complain("KM_CLOCK=tsc: no TSC on this machine, using "
                        "CLOCK_MONOTONIC");
#endif
    }
    c->read_ticks = measure_read_ticks(c);
    c->read_cost = c->read_ticks * c->seconds_per_tick;
}
