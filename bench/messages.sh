#!/bin/sh
# messages.sh — what recording a message costs an MPI call: a loop of
# KM_MPIS (KM_libkm_mpi.f's glue: the datatype's size through the MPI
# library, then libkm's counters and the peer's row) against the same loop
# calling an empty routine of the same arguments, side by side in one run,
# on one rank; on MPI_COMM_WORLD, and on another communicator (whose
# ranks libkm translates, under a lock).
#
#   bench/messages.sh [BUILDDIR] [MPIF77]
#
# BUILDDIR: kmtool's build tree (default: build/ beside this script's
# folder, after make install into its prefix/); MPIF77 default mpif77;
# MPIRUN and MPIRUN_FLAGS as for the tests (default: mpirun
# --allow-run-as-root, Open MPI's).
set -e
here=$(cd "$(dirname "$0")" && pwd)
. "$here/scratch.sh"
bench_scratch mpif77 "$@"
cat > loop.f <<'F'
      PROGRAM LOOP
      INCLUDE 'mpif.h'
      INTEGER IERR, I, N, R, COMM2
      INTEGER(KIND=SELECTED_INT_KIND(9)) H
      DOUBLE PRECISION T0, T1, T2, T3
      CALL MPI_INIT(IERR)
      CALL KM_MPII
      H = 0
      CALL KM_REG(H, H, '3 1 100000 0 LOOP loop.f'//CHAR(0))
      N = 10000000
      CALL MPI_COMM_DUP(MPI_COMM_WORLD, COMM2, IERR)
      DO 30 R = 1, 3
      T0 = MPI_WTIME()
      DO 10 I = 1, N
         CALL EMPTY(H, I, MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD)
   10 CONTINUE
      T1 = MPI_WTIME()
      DO 20 I = 1, N
         CALL KM_MPIS(H, I, MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD)
   20 CONTINUE
      T2 = MPI_WTIME()
      DO 25 I = 1, N
         CALL KM_MPIS(H, I, MPI_DOUBLE_PRECISION, 0, 7, COMM2)
   25 CONTINUE
      T3 = MPI_WTIME()
      PRINT '(A, I1, A, F8.2, A, F8.2, A, F8.2, A)', 'round ', R,
     &   ': a call ', (T1 - T0) / N * 1D9, ' ns, with the message ',
     &   (T2 - T1) / N * 1D9, ' ns, on another communicator ',
     &   (T3 - T2) / N * 1D9, ' ns'
   30 CONTINUE
      CALL MPI_COMM_FREE(COMM2, IERR)
      CALL KM_MPIF
      CALL MPI_FINALIZE(IERR)
      END
F
cat > empty.f <<'F'
      SUBROUTINE EMPTY(H, N, T, P, G, C)
      INTEGER(KIND=SELECTED_INT_KIND(9)) H
      INTEGER N, T, P, G, C
      END
F
"$prefix/bin/kmrun" --mpi-glue=glue.f > /dev/null
# EMPTY in a file of its own: the compiler cannot inline it away
$fc -O2 -c empty.f
$fc -O2 loop.f empty.o glue.f -o loop -L"$prefix/lib" -lkm
${MPIRUN:-mpirun} ${MPIRUN_FLAGS---allow-run-as-root} -np 1 ./loop | awk '
    { print; a += $5; b += $10; c += $15; n++ }
    END { printf "added per MPI call: %.1f ns on MPI_COMM_WORLD, %.1f ns on " \
                 "another communicator (means of %d rounds)\n",
                 (b - a) / n, (c - a) / n, n }'
