/*
 * km_fp.c — the program's floating-point exception flags, kept as they
 * were across libkm's own arithmetic.
 *
 * libkm computes in floating point at start-up, registrations and
 * writes (the figures, their text), which raises INEXACT and the like in
 * the flags the program sees: flang's STOP then prints "IEEE arithmetic
 * exceptions signaled: INEXACT" where the plain program prints nothing,
 * and a program that tests IEEE_GET_FLAG reads libkm's flags.  So each of
 * those paths saves the flags first and puts them back after; what runs
 * while the program does (the hot path and its slow side: time slots,
 * run-delay shares) computes in integers only.
 *
 * fegetexceptflag and fesetexceptflag live in libm, which every Fortran
 * program links but a C one need not: weak references, and nothing is
 * kept where they are absent (a static link that pulled no fenv code in).
 *
 * Must never change the rounding mode or the exception masks, only the
 * flags; safe in a signal handler (they touch no memory but *s).
 */
#include "runtime/km_internal.h"

#include <string.h>

extern __typeof__(fegetexceptflag) fegetexceptflag __attribute__((weak));
extern __typeof__(fesetexceptflag) fesetexceptflag __attribute__((weak));

void km_fp_save(struct km_fpflags *s)
{
    s->saved = fegetexceptflag && fesetexceptflag &&
               fegetexceptflag(&s->flags, FE_ALL_EXCEPT) == 0;
}

/* (setting the flags takes several times longer than reading them, and
 * most programs have raised INEXACT themselves already) */
void km_fp_restore(const struct km_fpflags *s)
{
    fexcept_t now;
    if (s->saved && fegetexceptflag(&now, FE_ALL_EXCEPT) == 0 &&
        memcmp(&now, &s->flags, sizeof now) != 0)
        fesetexceptflag(&s->flags, FE_ALL_EXCEPT);
}
