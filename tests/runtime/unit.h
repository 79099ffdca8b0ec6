/*
 * unit.h — the harness shared by libkm's unit tests (unit.c, which holds
 * it and main(), and the unit_*.c groups of tests): the CHECK macros, the
 * fake clock, the helpers that register regions, enter and leave them at
 * given ticks, take a report and check that its figures add up, the
 * helpers for files and standard error, the fake MPI's operations, and
 * the tests main() runs.
 */
#ifndef KM_UNIT_H
#define KM_UNIT_H

#include "runtime/km_core.h"      /* (KM_NKID; it includes km_internal.h) */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern int failures;
extern const char *current;       /* the test under way */

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond)) {                                                      \
            printf("FAIL %s (%s:%d): %s\n", current, __FILE__, __LINE__,    \
                   #cond);                                                  \
            failures++;                                                     \
        }                                                                   \
    } while (0)

#define CHECK_EQ(a, b)                                                      \
    do {                                                                    \
        long long a_ = (long long)(a), b_ = (long long)(b);                 \
        if (a_ != b_) {                                                     \
            printf("FAIL %s (%s:%d): %s == %lld, expected %s == %lld\n",    \
                   current, __FILE__, __LINE__, #a, a_, #b, b_);            \
            failures++;                                                     \
        }                                                                   \
    } while (0)

#define CHECK_NEAR(a, b)                                                    \
    do {                                                                    \
        double a_ = (a), b_ = (b);                                          \
        if (!(a_ - b_ <= 1e-12 * b_ && b_ - a_ <= 1e-12 * b_)) {            \
            printf("FAIL %s (%s:%d): %s == %.17g, expected %.17g\n",        \
                   current, __FILE__, __LINE__, #a, a_, b_);                \
            failures++;                                                     \
        }                                                                   \
    } while (0)

/* `text` holds `want`; if not, the text is shown. */
#define CHECK_IN(text, want)                                                \
    do {                                                                    \
        const char *t_ = (text), *w_ = (want);                              \
        if (!t_ || !strstr(t_, w_)) {                                       \
            printf("FAIL %s (%s:%d): no \"%s\" in:\n%s\n", current,        \
                   __FILE__, __LINE__, w_, t_ ? t_ : "(null)");            \
            failures++;                                                     \
        }                                                                   \
    } while (0)

/* Ticks of the fake clock in libkm's unit of time, subticks. */
#define T(ticks) KM_SUB(ticks)

/* ---- fake clock (unit.c) ------------------------------------------------ */

extern km_tick fake_now;
extern long long fake_reads;
extern km_tick fake_after_read;   /* time that passes after each read */

/* ---- helpers (unit.c) --------------------------------------------------- */

extern char topdir[4096];
extern char workdir[4200];
extern char spare_tmp[4200];      /* TMPDIR: nothing goes to /tmp */

void begin(const char *name);
int32_t reg(const char *text, int32_t hr);
int32_t reg_routine(const char *text);
void in_at(km_tick t, int32_t h);
void out_at(km_tick t, int32_t h);
struct km_report report_at(km_tick t);
void check_identity(const struct km_report *rep);
void reg_ten(int32_t r[10]);
char *slurp(const char *name);
int exists(const char *name);
char *slurp_n(const char *name, size_t *len);
char *listing(const char *dir);
void capture_stderr(void);
char *captured(void);
char *formatted(const struct km_report *rep);

/* The figures of region `id` in a report. */
static inline const struct km_region *R(const struct km_report *rep,
                                        int32_t id)
{
    return &rep->reg[id - 1];
}

/* ---- a place that fails (unit.c) ---------------------------------------- */

extern char spare[4300];           /* KM_OUTPUT_DIR of the test under way */
void use_spare(void);

/* Standard error held the one line saying that the working directory
 * failed with `why` and the file went to <spare>/<leaf> (frees err). */
#define CHECK_MOVED(err, why, leaf)                                         \
    do {                                                                    \
        char want_[16384];                                                  \
        snprintf(want_, sizeof want_, "kmtool: cannot write KM_output in "  \
                 "%s (%s); written to %s/%s instead\n", workdir, why,       \
                 spare, leaf);                                              \
        CHECK(strcmp(err, want_) == 0);                                     \
        free(err);                                                          \
    } while (0)

/* ---- fake MPI (unit_mpi.c) ---------------------------------------------- */

extern const struct km_mpi_ops fake_ops;
void fake_reset(int rank, int size);

/* ---- the tests (main() runs them in its own order) ---------------------- */

/* unit_core.c */
void test_spec_example(void);
void test_transparent_and_callee(void);
void test_recursion(void);
void test_unwinding(void);
void test_estimates(void);
void test_threshold_override(void);
void test_costly_start(void);
void test_settle(void);
void test_paths_inside_frames(void);
void test_many_estimated(void);
void test_estimated_loop(void);
void test_long_samples(void);
void test_fit_in_parent(void);
void test_overhead(void);
void test_stack_overflow(void);
void test_registration(void);

/* unit_sampling.c */
void test_sampling_rate(void);
void test_per_caller(void);
void test_adaptive_sampling(void);
void test_changing_costs(void);
void test_waiting_estimated(void);
void test_waiting_open(void);

/* unit_paths.c */
void test_paths_two_callers(void);
void test_paths_one_slot(void);
void test_paths_recursion_limit(void);
void test_paths_limit(void);
void test_paths_recursion_callers(void);
void test_paths_new_cost(void);

/* unit_output.c */
void test_print_out_and_end(void);
void test_file_names(void);
void test_file_replaced_meanwhile(void);
void test_file_moved(void);
void test_file_moved_replaced(void);
void test_file_nowhere(void);
void test_signal_write(void);

/* unit_mpi.c */
void test_mpi_finalize(void);
void test_mpi_unmeasured(void);
void test_mpi_not_finalized(void);
void test_header_alone(void);
void test_gather_agree(void);
void test_gather_many(void);
void test_gather_moved(void);
void test_rank_file_moved(void);
void test_redundant(void);

/* unit_timeline.c */
void test_timeline_phases(void);
void test_timeline_doubling(void);
void test_timeline_estimated(void);

/* unit_trace.c */
void test_trace(void);

/* unit_io.c */
void test_files_full(void);
void test_mpiio(void);

#endif
