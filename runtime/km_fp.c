/*
 * km_fp.c — the program's floating-point exception flags, kept as they
 * were across libkm's own arithmetic.
 *
 * libkm computes in floating point off the hot path (start-up, a write's
 * figures, the time slots, run-delay shares), which raises INEXACT and
 * the like in the flags the program sees: flang's STOP then prints "IEEE
 * arithmetic exceptions signaled: INEXACT" where the plain program prints
 * nothing, and a program that tests IEEE_GET_FLAG reads libkm's flags.
 * So each of those paths saves the flags first and puts them back after.
 *
 * fegetexceptflag and fesetexceptflag live in libm, which every Fortran
 * program links but a C one need not: weak references, and nothing is
 * kept where they are absent (a static link that pulled no fenv code in).
 *
 * Must never change the rounding mode or the exception masks, only the
 * flags; safe in a signal handler (they touch no memory but *s).
 */
#include "runtime/km_internal.h"

extern __typeof__(fegetexceptflag) fegetexceptflag __attribute__((weak));
extern __typeof__(fesetexceptflag) fesetexceptflag __attribute__((weak));

void km_fp_save(struct km_fpflags *s)
{
    s->saved = fegetexceptflag && fesetexceptflag &&
               fegetexceptflag(&s->flags, FE_ALL_EXCEPT) == 0;
}

void km_fp_restore(const struct km_fpflags *s)
{
    if (s->saved)
        fesetexceptflag(&s->flags, FE_ALL_EXCEPT);
}
