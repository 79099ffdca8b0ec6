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

#include "runtime/km_abi.h"

void km_reg_f(int32_t *h, const int32_t *hr, const char *t)
{
    (void)hr;
    (void)t;
    *h = 1;
}

void km_in_f(const int32_t *h) { (void)h; }
void km_out_f(const int32_t *h) { (void)h; }
void km_end_f(void) {}
void km_stop_f(void) {}
void km_exit_f(void) {}
void km_writ_f(void) {}
void km_mpii_f(void) {}
void km_mpif_f(void) {}
