/*
 * kmcheck.c — a test harness between instrumented code and libkm.
 *
 * run.test instruments its fixtures with INNER_PREFIX = KC_ and links this
 * file in place of the forwarding routines kmrun writes for that prefix.
 * Every call is handed on to libkm unchanged; on the way it checks that
 * the instrumented code keeps the region stack balanced, and says so on
 * standard error when it does not (which makes the run's standard error
 * differ from the uninstrumented program's, so the test fails):
 *
 *   - KM_OUT of a region that is not open;
 *   - a region entered while it is still open in the same activation of
 *     its routine (a jump left it without closing it);
 *   - a CALL, MPI or I/O location entered while another location of the
 *     same routine activation is open, or still open when its routine
 *     returns (a jump out of the statement did not close it).
 *
 * It also notes, for every region, the region directly around each of its
 * entries, and at exit writes kmcheck.nest.<pid>: one line "CHILD|PARENT"
 * for every region always entered inside the same other region, each
 * named as tests/kmnest.awk finds it in KM_output ("R NAME" for a
 * routine, "L ROUTINE KIND LINE" for a location).  A child can never take
 * longer than such a parent, estimated or not.
 *
 * Every thread is checked on its own stack, as libkm measures it.
 *
 * Never changes what libkm sees or what the program does otherwise.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/km_abi.h"

#define kc_reg_f  F77_FUNC_(kc_reg, KC_REG)
#define kc_in_f   F77_FUNC_(kc_in, KC_IN)
#define kc_out_f  F77_FUNC_(kc_out, KC_OUT)
#define kc_end_f  F77_FUNC_(kc_end, KC_END)
#define kc_stop_f F77_FUNC_(kc_stop, KC_STOP)
#define kc_exit_f F77_FUNC_(kc_exit, KC_EXIT)
#define kc_writ_f F77_FUNC_(kc_writ, KC_WRIT)
#define kc_opt_f  F77_FUNC_(kc_opt, KC_OPT)
#define kc_mpii_f F77_FUNC_(kc_mpii, KC_MPII)
#define kc_mpif_f F77_FUNC_(kc_mpif, KC_MPIF)
#define kc_abrt_f F77_FUNC_(kc_abrt, KC_ABRT)
#define kc_abor_f F77_FUNC_(kc_abor, KC_ABOR)

void kc_reg_f(int32_t *h, const int32_t *hr, const char *text);
void kc_in_f(const int32_t *h);
void kc_out_f(const int32_t *h);
void kc_end_f(void);
void kc_stop_f(void);
void kc_exit_f(void);
void kc_writ_f(void);
void kc_opt_f(const char *text);
void kc_mpii_f(void);
void kc_mpif_f(void);
void kc_abrt_f(void);
void kc_abor_f(void);

#define DEPTH (1 << 20)        /* frames: recursion 10^5 deep is 2 each */
#define KEY 256
#define PARENT_NONE 0         /* not entered yet */
#define PARENT_ROOT (-1)      /* entered outside every region */
#define PARENT_MANY (-2)      /* entered inside different regions */

static int *kinds;            /* kinds[id] */
static int *parents;          /* parents[id]: a region id or PARENT_* */
static char (*keys)[KEY];     /* keys[id]: its name in KM_output */
static int nkinds;
static int reports;
/* every thread keeps its own stack, as libkm does; what is shared (the
 * tables above, `reports`) is under the lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int32_t *stack;
static __thread int sp;

static void problem(const char *what, int32_t id)
{
    if (reports++ < 20)
        fprintf(stderr, "kmcheck: %s (region %d, kind %d)\n", what, (int)id,
                id > 0 && id < nkinds ? kinds[id] : -1);
}

/* (minus a routine's handle: a task's body, which may enter its routine,
 * is a routine's boundary) */
static int kind_of(int32_t id)
{
    if (id < 0 && id != INT32_MIN)
        id = -id;
    return id > 0 && id < nkinds ? kinds[id] : 0;
}

static int is_location(int kind)
{
    return kind == KM_K_CALL || kind == KM_K_MPI || kind == KM_K_IO;
}

static const char *kind_label(int kind)
{
    switch (kind) {
    case KM_K_DO: return "DO";
    case KM_K_CALL: return "CALL";
    case KM_K_MPI: return "MPI";
    case KM_K_IO: return "IO";
    case KM_K_USER: return "USER";
    default: return "OTHER";
    }
}

/* The region's name in KM_output, from its registration text. */
static void make_key(int32_t id, int32_t routine, const char *text)
{
    int kind = 0, line = 0;
    char name[200] = "";
    sscanf(text, "%d %d %*d %*d %199s", &kind, &line, name);
    if (KM_KIND_IS_ROUTINE(kind)) {
        for (char *c = name; *c; c++)
            if (*c >= 'a' && *c <= 'z')
                *c = (char)(*c - 'a' + 'A');
        snprintf(keys[id], KEY, "R %s", name);
    } else {
        const char *r = routine > 0 && routine < nkinds ? keys[routine] : "R ?";
        snprintf(keys[id], KEY, "L %s %s %d", r + 2, kind_label(kind), line);
    }
}

static void write_nesting(void)
{
    char name[64];
    snprintf(name, sizeof name, "kmcheck.nest.%ld", (long)getpid());
    FILE *f = fopen(name, "w");
    if (!f)
        return;
    for (int id = 1; id < nkinds; id++)
        if (parents[id] > 0)
            fprintf(f, "%s|%s\n", keys[id], keys[parents[id]]);
    fclose(f);
}

static void grow(int32_t id)
{
    if (id < nkinds)
        return;
    int n = id * 2 + 16;
    kinds = realloc(kinds, sizeof *kinds * (size_t)n);
    parents = realloc(parents, sizeof *parents * (size_t)n);
    keys = realloc(keys, sizeof *keys * (size_t)n);
    if (!kinds || !parents || !keys)
        abort();
    for (int k = nkinds; k < n; k++) {
        kinds[k] = 0;
        parents[k] = PARENT_NONE;
        keys[k][0] = '\0';
    }
    if (nkinds == 0)
        atexit(write_nesting);
    nkinds = n;
}

void kc_reg_f(int32_t *h, const int32_t *hr, const char *text)
{
    int32_t routine = *hr;
    km_reg_f(h, hr, text);
    int32_t id = __atomic_load_n(h, __ATOMIC_ACQUIRE);
    if (id <= 0)
        return;
    pthread_mutex_lock(&lock);
    grow(id);
    kinds[id] = atoi(text);
    make_key(id, KM_KIND_IS_ROUTINE(kinds[id]) ? id : routine, text);
    pthread_mutex_unlock(&lock);
}

static void note_parent(int32_t id)
{
    if (id <= 0 || id >= nkinds)
        return;
    int parent = sp > 0 ? abs(stack[sp - 1]) : PARENT_ROOT;
    if (parents[id] == PARENT_NONE)
        parents[id] = parent;
    else if (parents[id] != parent)
        parents[id] = PARENT_MANY;
}

void kc_in_f(const int32_t *h)
{
    if (!stack && !(stack = malloc(DEPTH * sizeof *stack)))
        abort();
    pthread_mutex_lock(&lock);
    int kind = kind_of(*h);
    if (!KM_KIND_IS_ROUTINE(kind))
        for (int k = sp - 1; k >= 0; k--) {
            int other = kind_of(stack[k]);
            if (KM_KIND_IS_ROUTINE(other))
                break;
            if (stack[k] == *h)
                problem("entered while still open", *h);
            else if (is_location(kind) && is_location(other))
                problem("location entered inside another location", *h);
        }
    note_parent(*h);
    pthread_mutex_unlock(&lock);
    if (sp < DEPTH)
        stack[sp++] = *h;
    km_in_f(h);
}

void kc_out_f(const int32_t *h)
{
    if (!stack && !(stack = malloc(DEPTH * sizeof *stack)))
        abort();
    pthread_mutex_lock(&lock);
    int k = sp - 1;
    while (k >= 0 && stack[k] != *h)
        k--;
    if (k < 0) {
        problem("KM_OUT of a region that is not open", *h);
    } else {
        if (KM_KIND_IS_ROUTINE(kind_of(*h)))
            for (int j = k + 1; j < sp; j++)
                if (is_location(kind_of(stack[j])))
                    problem("location still open when its routine returns",
                            stack[j]);
        sp = k;
    }
    pthread_mutex_unlock(&lock);
    km_out_f(h);
}

void kc_end_f(void)  { sp = 0; km_end_f(); }
void kc_stop_f(void) { sp = 0; km_stop_f(); }
void kc_exit_f(void) { sp = 0; km_exit_f(); }
void kc_writ_f(void) { km_writ_f(); }
void kc_abrt_f(void) { sp = 0; km_abrt_f(); }
void kc_abor_f(void) { sp = 0; km_abor_f(); }
void kc_opt_f(const char *text) { km_opt_f(text); }

/* Only in the MPI build of this file: referring to them would pull libkm's
 * MPI part, and MPI with it, into a serial program. */
#ifdef KC_MPI
void kc_mpii_f(void) { km_mpii_f(); }
void kc_mpif_f(void) { km_mpif_f(); }
#endif
