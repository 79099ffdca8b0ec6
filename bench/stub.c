/*
 * stub.c — libkm's entry points doing nothing (but giving every region a
 * handle, so that the instrumented code registers each one once, as with
 * libkm).  bench/runtime.sh links instrumented programs with this too:
 * the difference to the plain build is what instrumenting does to the
 * compiled code itself (calls, lost inlining, another layout), the
 * difference to the libkm build is libkm's own work.
 */
#include "config.h"

#include <stdint.h>

void F77_FUNC_(km_reg, KM_REG)(int32_t *h, const int32_t *hr, const char *t);
void F77_FUNC_(km_in, KM_IN)(const int32_t *h);
void F77_FUNC_(km_out, KM_OUT)(const int32_t *h);
void F77_FUNC_(km_end, KM_END)(void);
void F77_FUNC_(km_stop, KM_STOP)(void);
void F77_FUNC_(km_exit, KM_EXIT)(void);
void F77_FUNC_(km_writ, KM_WRIT)(void);
void F77_FUNC_(km_mpii, KM_MPII)(void);
void F77_FUNC_(km_mpif, KM_MPIF)(void);

void F77_FUNC_(km_reg, KM_REG)(int32_t *h, const int32_t *hr, const char *t)
{
    (void)hr;
    (void)t;
    *h = 1;
}

void F77_FUNC_(km_in, KM_IN)(const int32_t *h) { (void)h; }
void F77_FUNC_(km_out, KM_OUT)(const int32_t *h) { (void)h; }
void F77_FUNC_(km_end, KM_END)(void) {}
void F77_FUNC_(km_stop, KM_STOP)(void) {}
void F77_FUNC_(km_exit, KM_EXIT)(void) {}
void F77_FUNC_(km_writ, KM_WRIT)(void) {}
void F77_FUNC_(km_mpii, KM_MPII)(void) {}
void F77_FUNC_(km_mpif, KM_MPIF)(void) {}
