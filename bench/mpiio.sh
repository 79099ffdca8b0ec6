#!/bin/sh
# mpiio.sh — what following files costs an MPI-IO call: one program of
# small MPI-IO calls on one rank (MPI_FILE_WRITE_AT of 8 doubles with a
# status, MPI_FILE_READ_AT of them with MPI_STATUS_IGNORE, MPI_FILE_GET_SIZE)
# built three ways side by side in one run: not instrumented, measured as
# before the MPI-IO block (MPI_MEASURED_LEVEL = 2, kmrun's MPI-IO calls
# taken out again: KM_IN and KM_OUT only), and measured with them
# (KM_MPIO before each call; KM_MPIG or KM_MPIB after a data access: the
# datatype's size through the MPI library).  Prints each build's time per
# call, best of 3 rounds, and the ratios.
#
#   bench/mpiio.sh [BUILDDIR] [MPIF77]
#
# BUILDDIR: kmtool's build tree (default: build/ beside this script's
# folder, after make install into its prefix/); MPIF77 default mpif77;
# MPIRUN and MPIRUN_FLAGS as for the tests (default: mpirun
# --allow-run-as-root, Open MPI's).
set -e
here=$(cd "$(dirname "$0")" && pwd)
. "$here/scratch.sh"
bench_scratch mpif77 "$@"
cat > mio.f <<'F'
      PROGRAM MIO
      INCLUDE 'mpif.h'
      INTEGER N, I, K, R, FH, IERR, STATUS(MPI_STATUS_SIZE)
      PARAMETER (N = 100000)
      INTEGER(KIND=MPI_OFFSET_KIND) OFF, SIZE
      DOUBLE PRECISION A(8), T0, T1, BEST
      CALL MPI_INIT(IERR)
      DO 5 K = 1, 8
         A(K) = K
    5 CONTINUE
      BEST = 1D30
      CALL MPI_FILE_OPEN(MPI_COMM_SELF, 'm.bin',
     &    MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE,
     &    MPI_INFO_NULL, FH, IERR)
      DO 40 R = 1, 3
      T0 = MPI_WTIME()
      DO 10 I = 1, N
         OFF = MOD(I, 1024) * 64
         CALL MPI_FILE_WRITE_AT(FH, OFF, A, 8, MPI_DOUBLE_PRECISION,
     &       STATUS, IERR)
         CALL MPI_FILE_READ_AT(FH, OFF, A, 8, MPI_DOUBLE_PRECISION,
     &       MPI_STATUS_IGNORE, IERR)
         CALL MPI_FILE_GET_SIZE(FH, SIZE, IERR)
   10 CONTINUE
      T1 = (MPI_WTIME() - T0) / (3 * N) * 1D9
      BEST = MIN(BEST, T1)
   40 CONTINUE
      CALL MPI_FILE_CLOSE(FH, IERR)
      PRINT '(F10.1)', BEST
      CALL MPI_FINALIZE(IERR)
      END
F
printf 'MPI_MEASURED_LEVEL = 2\nDOLOOP_MEASURED_LEVEL = 0\n' > KM_control.dat
"$prefix/bin/kmrun" -y mio.f > /dev/null 2>&1
# before the MPI-IO block: the same file without the calls mpiio.c adds
awk '/CALL KM_MPI[ONHGB]\(/ { skip = 1; next }
     skip && /^     &/ { next }
     { skip = 0; print }' KM_mio.f > KM_before.f
$fc -O2 -o plain mio.f
$fc -O2 -o before KM_before.f KM_libkm_mpi.f "$prefix/lib/libkm.a" -lpthread
$fc -O2 -o files KM_mio.f KM_libkm_mpi.f "$prefix/lib/libkm.a" -lpthread
run() { ${MPIRUN:-mpirun} ${MPIRUN_FLAGS---allow-run-as-root} -np 1 "$1"; }
p=$(run ./plain); b=$(run ./before); f=$(run ./files)
echo "ns per MPI-IO call: not instrumented $p, measured $b, measured with files $f"
awk -v p="$p" -v b="$b" -v f="$f" 'BEGIN {
    printf "with files / measured = %.3f; measured / not instrumented = %.3f; " \
           "files add %.0f ns per call\n", f / b, b / p, f - b }'
