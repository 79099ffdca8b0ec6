#!/bin/sh
# fallback.sh — a KM_output that the working directory cannot take goes to
# KM_OUTPUT_DIR, else to TMPDIR (set here to a scratch directory, never
# /tmp), whole, with one line on standard error saying where; when no place
# takes it, one line naming each place and why, no file and no temporary
# file anywhere, the program's output and exit status unchanged.  The
# working directory is made unwritable by removing it under the running
# program (tests may run as root, whom permissions do not stop), or by
# taking every name a KM_output can have; a place below a regular file
# cannot be written either.  Serial programs (serial.f, callexit.f), the
# gathered file of an MPI run on 2 and 4 ranks (mpi.f, its ranks' own
# files written while MPI runs moving too), and the ranks' own files of an
# MPI program that STOPs before MPI_FINALIZE (mpistop.f).
. "${srcdir:-.}/tests/runtime/common.sh"
need "$F77"

# in_gone DIR COMMAND...: run COMMAND in DIR, removed once entered
in_gone() {
    (d=$1; shift; mkdir "$d" && cd "$d" && rmdir "$d" && exec "$@")
}
unset KM_OUTPUT_DIR

# the_end FILE: its last line
the_end() {
    expect "$1: last line" "$(tail -1 "$1")" "! ===== End ====="
}

# files DIR WANTED...: every file in DIR (temporary files included)
files() {
    d=$1
    shift
    label=${d#$work}
    label=${label#/}
    expect "files in ${label:-the test directory}" "$(echo $(ls -A "$d"))" "$*"
}

$F77 -o prog "$FIX/serial.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build serial.f: $(cat build.log)"; finish; }
$F77 -o callexit "$FIX/callexit.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build callexit.f: $(cat build.log)"; finish; }
mkdir out tmp || exit 1
touch afile

# The working directory is gone, KM_OUTPUT_DIR is set: the file is there,
# and the three writes of the run (two PRINT_OUT, END) say so once.
in_gone "$work/gone" env KM_OUTPUT_DIR=$work/out TMPDIR=$work/tmp \
    "$work/prog" > stdout 2> stderr
expect "exit status, KM_OUTPUT_DIR" "$?" 0
expect "standard output, KM_OUTPUT_DIR" "$(cat stdout)" "      12.0"
expect "standard error, KM_OUTPUT_DIR" "$(cat stderr)" \
    "kmtool: cannot write KM_output in the working directory (No such file or directory); written to $work/out/KM_output.000 instead"
files "$work/out" KM_output.000
files "$work/tmp"
f=out/KM_output.000
check $f
the_end $f
expect "$f: Written at" "$(sed -n 4p $f)" "! Written at : END"
expect "$f: Output counts by KM_writ" "$(figure $f 0 'Output counts by KM_writ')" 3
expect "$f: count of SUB2" "$(routine $f 0 SUB2 5)" 4000

# Without KM_OUTPUT_DIR: TMPDIR (with a trailing slash, as some set it).
in_gone "$work/gone" env TMPDIR=$work/tmp/ "$work/prog" > stdout 2> stderr
expect "exit status, TMPDIR" "$?" 0
expect "standard output, TMPDIR" "$(cat stdout)" "      12.0"
expect "standard error, TMPDIR" "$(cat stderr)" \
    "kmtool: cannot write KM_output in the working directory (No such file or directory); written to $work/tmp/KM_output.000 instead"
files "$work/tmp" KM_output.000
files "$work/out" KM_output.000
check tmp/KM_output.000
the_end tmp/KM_output.000

# Every name a KM_output can take is taken in the working directory: the
# link fails there, and the whole file moves to KM_OUTPUT_DIR, taking the
# lowest number free there.
mkdir full && cd full || exit 1
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "KM_output.%03d\n", i }' |
    xargs touch
KM_OUTPUT_DIR=$work/out TMPDIR=$work/tmp ../prog > stdout 2> stderr
expect "exit status, names taken" "$?" 0
expect "standard error, names taken" "$(cat stderr)" \
    "kmtool: cannot write KM_output in $(pwd -P) (KM_output.000 to KM_output.999 are taken); written to $work/out/KM_output.001 instead"
expect "files in full" "$(ls -A | grep -v '^KM_output\.[0-9][0-9][0-9]$' | tr '\n' ' ')" "stderr stdout "
expect "empty files in full" "$(find . -name 'KM_output.*' -size +0 | wc -l)" 0
cd .. || exit 1
files "$work/out" KM_output.000 KM_output.001
check out/KM_output.001
the_end out/KM_output.001

# No place takes the file: one line naming each place, no file, no
# temporary file, the exit status of CALL EXIT(3) kept.
in_gone "$work/gone" env KM_OUTPUT_DIR=$work/afile/out \
    TMPDIR=$work/afile/tmp "$work/callexit" > stdout 2> stderr
expect "exit status, no place" "$?" 3
expect "standard error, no place" "$(cat stderr)" \
    "kmtool: KM_output not written: cannot write in the working directory (No such file or directory), nor in $work/afile/out (Not a directory), nor in $work/afile/tmp (Not a directory)"
in_gone "$work/gone" env KM_OUTPUT_DIR=$work/afile/out \
    TMPDIR=$work/afile/tmp "$work/prog" > stdout 2> stderr
expect "exit status, no place, 3 writes" "$?" 0
expect "standard output, no place" "$(cat stdout)" "      12.0"
expect "standard error, no place, 3 writes" "$(cat stderr)" \
    "kmtool: KM_output not written: cannot write in the working directory (No such file or directory), nor in $work/afile/out (Not a directory), nor in $work/afile/tmp (Not a directory)"
files "$work/out" KM_output.000 KM_output.001
files "$work/tmp" KM_output.000
files "$work" afile build.log callexit check.log full out prog stderr stdout tmp

# MPI: every rank's working directory is gone (mpirun itself needs one).
if ! command -v "${MPIF77%% *}" > /dev/null 2>&1 ||
   ! command -v "${MPIRUN%% *}" > /dev/null 2>&1 ||
   ! grep -q 'define KM_HAVE_MPI 1' "$top_builddir/config.h" 2>/dev/null; then
    echo "SKIP: $test_name: the MPI part (no MPI, or libkm.a built without it)"
    finish
fi
limit=
command -v timeout > /dev/null 2>&1 && limit="timeout 300"
$MPIF77 -o mpiprog "$FIX/mpi.f" "$MPIGLUE" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build mpi.f with $MPIF77: $(cat build.log)"; finish; }
$MPIF77 -o mpistop "$FIX/mpistop.f" "$MPIGLUE" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build mpistop.f with $MPIF77: $(cat build.log)"; finish; }

# rank_gone PROG: mpirun's line for one rank, in a directory of its own
# that is gone once the rank starts
rank_gone='d=$0.$$; mkdir "$d" && cd "$d" && rmdir "$d" && exec "$1"'

# The gathered file lands in KM_OUTPUT_DIR; so did each rank's own file,
# written while MPI ran (KM_WRIT in PRNT), which the gather removes.
for np in 2 4; do
    mkdir mpi$np || exit 1
    KM_OUTPUT_DIR=$work/mpi$np TMPDIR=$work/tmp $limit $MPIRUN $MPIRUN_FLAGS \
        -np $np sh -c "$rank_gone" "$work/rank" "$work/mpiprog" > stdout 2> stderr ||
        fail "$np ranks: mpirun exited with status $?: $(tail -5 stderr)"
    expect "$np ranks: standard output" "$(cat stdout)" \
        "$(awk -v n=$np 'BEGIN { printf "%12.1f", n * (n - 1) / 2 + 5 * n }')"
    want=$(r=0; while [ $r -lt $np ]; do
               echo "kmtool: cannot write KM_output in the working directory (No such file or directory); written to $work/mpi$np/KM_output.000.$r instead"
               r=$((r + 1))
           done
           echo "kmtool: cannot write KM_output in the working directory (No such file or directory); written to $work/mpi$np/KM_output.000 instead")
    expect "$np ranks: libkm's lines" "$(grep '^kmtool' stderr | sort)" "$(echo "$want" | sort)"
    files "$work/mpi$np" KM_output.000
    f=mpi$np/KM_output.000
    check $f
    the_end $f
    expect "$f: Written at" "$(sed -n 4p $f)" "! Written at : MPI_FINALIZE"
    expect "$f: sections" "$(grep '^! ===== ' $f | tr '\n' ' ')" \
        "! ===== Prediction ===== $(r=0; while [ $r -lt $np ]; do printf '! ===== Rank %d ===== ! ===== Timeline ===== ! ===== Paths ===== ' $r; r=$((r + 1)); done)! ===== End ===== "
    expect "$f: WORK on the last rank" "$(routine $f $((np - 1)) WORK 5)" 5
done

# Ranks that STOP before MPI_FINALIZE: each one's own file moves.
mkdir stop2 || exit 1
KM_OUTPUT_DIR=$work/stop2 TMPDIR=$work/tmp $limit $MPIRUN $MPIRUN_FLAGS \
    -np 2 sh -c "$rank_gone" "$work/rank" "$work/mpistop" > stdout 2> stderr
expect "STOP: libkm's lines" "$(grep '^kmtool' stderr | sort)" \
    "kmtool: cannot write KM_output in the working directory (No such file or directory); written to $work/stop2/KM_output.000.0 instead
kmtool: cannot write KM_output in the working directory (No such file or directory); written to $work/stop2/KM_output.000.1 instead"
files "$work/stop2" KM_output.000.0 KM_output.000.1
for r in 0 1; do
    f=stop2/KM_output.000.$r
    check $f
    the_end $f
    expect "$f: Ranks" "$(grep "^! Ranks      :" $f)" "! Ranks      : 2, this file holds rank $r only (MPI not finalized)"
done
files "$work/tmp" KM_output.000
finish
