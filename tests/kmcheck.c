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
 * Never changes what libkm sees or what the program does otherwise.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/km_abi.h"

#define kc_reg_f  F77_FUNC_(kc_reg, KC_REG)
#define kc_in_f   F77_FUNC_(kc_in, KC_IN)
#define kc_out_f  F77_FUNC_(kc_out, KC_OUT)
#define kc_end_f  F77_FUNC_(kc_end, KC_END)
#define kc_stop_f F77_FUNC_(kc_stop, KC_STOP)
#define kc_exit_f F77_FUNC_(kc_exit, KC_EXIT)
#define kc_writ_f F77_FUNC_(kc_writ, KC_WRIT)
#define kc_mpii_f F77_FUNC_(kc_mpii, KC_MPII)
#define kc_mpif_f F77_FUNC_(kc_mpif, KC_MPIF)

void kc_reg_f(int32_t *h, const int32_t *hr, const char *text);
void kc_in_f(const int32_t *h);
void kc_out_f(const int32_t *h);
void kc_end_f(void);
void kc_stop_f(void);
void kc_exit_f(void);
void kc_writ_f(void);
void kc_mpii_f(void);
void kc_mpif_f(void);

#define DEPTH 100000

static int *kinds;            /* kinds[id] */
static int nkinds;
static int32_t stack[DEPTH];
static int sp;
static int reports;

static void problem(const char *what, int32_t id)
{
    if (reports++ < 20)
        fprintf(stderr, "kmcheck: %s (region %d, kind %d)\n", what, (int)id,
                id > 0 && id < nkinds ? kinds[id] : -1);
}

static int kind_of(int32_t id)
{
    return id > 0 && id < nkinds ? kinds[id] : 0;
}

static int is_location(int kind)
{
    return kind == KM_K_CALL || kind == KM_K_MPI || kind == KM_K_IO;
}

void kc_reg_f(int32_t *h, const int32_t *hr, const char *text)
{
    km_reg_f(h, hr, text);
    if (*h <= 0)
        return;
    if (*h >= nkinds) {
        int n = *h * 2 + 16;
        kinds = realloc(kinds, sizeof *kinds * (size_t)n);
        if (!kinds)
            abort();
        for (int k = nkinds; k < n; k++)
            kinds[k] = 0;
        nkinds = n;
    }
    kinds[*h] = atoi(text);
}

void kc_in_f(const int32_t *h)
{
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
    if (sp < DEPTH)
        stack[sp++] = *h;
    km_in_f(h);
}

void kc_out_f(const int32_t *h)
{
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
    km_out_f(h);
}

void kc_end_f(void)  { sp = 0; km_end_f(); }
void kc_stop_f(void) { sp = 0; km_stop_f(); }
void kc_exit_f(void) { sp = 0; km_exit_f(); }
void kc_writ_f(void) { km_writ_f(); }

/* Only in the MPI build of this file: referring to them would pull libkm's
 * MPI part, and MPI with it, into a serial program. */
#ifdef KC_MPI
void kc_mpii_f(void) { km_mpii_f(); }
void kc_mpif_f(void) { km_mpif_f(); }
#endif
