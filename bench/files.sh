#!/bin/sh
# files.sh — what following files costs an I/O statement: one program of
# small I/O statements (unformatted sequential writes of 8 doubles,
# formatted writes of one line, unformatted reads back, an INQUIRE),
# built three ways side by side in one run: not instrumented, measured
# as before the Files block (IO_MEASURED_LEVEL = 2, kmrun's file calls
# taken out again: KM_IN and KM_OUT only), and measured with them
# (KM_IOU before each statement, INQUIRE(IOLENGTH=) and KM_IOL after an
# unformatted one).  Prints each build's time per statement, best of 3
# rounds, and the ratios.
#
#   bench/files.sh [BUILDDIR] [F77]
#
# BUILDDIR: kmtool's build tree (default: build/ beside this script's
# folder, after make install into its prefix/); F77 default gfortran.
set -e
here=$(cd "$(dirname "$0")" && pwd)
. "$here/scratch.sh"
bench_scratch gfortran "$@"
cat > io.f <<'F'
      PROGRAM IO
      INTEGER N, I, K, R
      PARAMETER (N = 200000)
      DOUBLE PRECISION A(8), T0, T1, BEST
      INTEGER*8 C0, C1, RATE
      LOGICAL THERE
      DO 5 K = 1, 8
         A(K) = K
    5 CONTINUE
      BEST = 1D30
      DO 40 R = 1, 3
      CALL SYSTEM_CLOCK(C0, RATE)
      OPEN (10, FILE='u.bin', FORM='UNFORMATTED', STATUS='REPLACE')
      OPEN (11, FILE='f.txt', STATUS='REPLACE')
      DO 10 I = 1, N
         WRITE (10) I, A
         WRITE (11, '(I8, 2F8.2)') I, A(1), A(2)
   10 CONTINUE
      REWIND 10
      DO 20 I = 1, N
         READ (10) K, A
         INQUIRE (UNIT=10, EXIST=THERE)
   20 CONTINUE
      CLOSE (10, STATUS='DELETE')
      CLOSE (11, STATUS='DELETE')
      CALL SYSTEM_CLOCK(C1)
      T1 = DBLE(C1 - C0) / DBLE(RATE) / (4 * N) * 1D9
      BEST = MIN(BEST, T1)
   40 CONTINUE
      PRINT '(F10.1)', BEST
      END
F
printf 'IO_MEASURED_LEVEL = 2\nDOLOOP_MEASURED_LEVEL = 0\n' > KM_control.dat
"$prefix/bin/kmrun" -y io.f > /dev/null 2>&1
# before the Files block: the same file without the calls files.c adds
awk '/CALL KM_IO[UNML]\(|INQUIRE\(IOLENGTH=/ { skip = 1; next }
     skip && /^     &/ { next }
     { skip = 0; print }' KM_io.f > KM_before.f
$fc -O2 -o plain io.f
$fc -O2 -o before KM_before.f "$prefix/lib/libkm.a" -lpthread
$fc -O2 -o files KM_io.f "$prefix/lib/libkm.a" -lpthread
p=$(./plain); b=$(./before); f=$(./files)
echo "ns per I/O statement: not instrumented $p, measured $b, measured with files $f"
awk -v p="$p" -v b="$b" -v f="$f" 'BEGIN {
    printf "with files / measured = %.3f; measured / not instrumented = %.3f; " \
           "files add %.0f ns per statement\n", f / b, b / p, f - b }'
