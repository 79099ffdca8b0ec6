#!/bin/sh
# mpistop.sh — an MPI program whose ranks STOP without MPI_FINALIZE
# (mpistop.f, 2 ranks): collectives are unsafe then, so each rank writes
# its own section to its own KM_output.NNN.<rank>, marked as holding that
# rank only.
. "${srcdir:-.}/tests/runtime/common.sh"
need "$MPIF77"
need "$MPIRUN"
grep -q 'define KM_HAVE_MPI 1' "$top_builddir/config.h" 2>/dev/null ||
    skip "libkm.a was built without MPI (no mpi.h at configure time)"

limit=
command -v timeout > /dev/null 2>&1 && limit="timeout 300"

$MPIF77 -o prog "$FIX/mpistop.f" "$MPIGLUE" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build mpistop.f with $MPIF77: $(cat build.log)"; finish; }
# mpirun may well report the missing MPI_FINALIZE with a failure status
$limit $MPIRUN $MPIRUN_FLAGS -np 2 ./prog > out 2> err
grep kmtool err && fail "libkm complained"
only_outputs KM_output.000.0 KM_output.000.1
ranks=
for f in KM_output.000.0 KM_output.000.1; do
    check $f
    expect "$f: Written at" "$(sed -n 4p $f)" "! Written at : STOP"
    grep -q Prediction $f && fail "$f: a Prediction section from one rank"
    r=$(grep "^! Ranks      :" $f | sed -n 's/^! Ranks      : 2, this file holds rank \([01]\) only (MPI not finalized)$/\1/p')
    [ -n "$r" ] || fail "$f: Ranks line '$(grep "^! Ranks      :" $f)'"
    expect "$f: Processors and Rank" "$(grep '! Processors and Rank' $f | awk '{print $1, $2}')" "0002 $r"
    expect "$f: PSTOP count" "$(routine $f "$r" PSTOP 5)" 1
    ranks="$ranks$r"
done
expect "ranks of the two files" "$ranks" 01
finish
