#!/bin/sh
# serial.sh — a hand-instrumented serial program (serial.f) linked with
# plain $F77 and libkm.a, no MPI anywhere: exact counts, a consistent
# KM_output.000, KM_WRIT rewriting the same file, a second run writing
# KM_output.001 without touching 000, and extrapolation past
# KM_TIME_PREDICTION_MODE_NUMBER (exact '+' counts, fewer clock reads).
. "${srcdir:-.}/tests/runtime/common.sh"
need "$F77"

$F77 -o prog "$FIX/serial.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build serial.f with $F77 and libkm.a alone: $(cat build.log)"; finish; }
if nm prog | awk '$NF ~ /^(P?MPI_|ompi_|mpi_)/' | grep . > mpi.log ||
   { command -v ldd > /dev/null && ldd prog | grep -i mpi > mpi.log; }; then
    fail "the serial program references MPI: $(head -3 mpi.log)"
fi

./prog > out 2> err || fail "run 1 exited with status $?"
expect "standard output" "$(cat out)" "      12.0"
[ -s err ] && fail "run 1 wrote to standard error: $(cat err)"
only_outputs KM_output.000
f=KM_output.000
check $f
expect "Program" "$(sed -n 2p $f)" "! Program    : ./prog"
expect "Written at" "$(sed -n 4p $f)" "! Written at : END"
expect "Processors and Rank" "$(grep '! Processors and Rank' $f | awk '{print $1, $2}')" "0001 0"
expect "Output counts by KM_writ" "$(figure $f 0 'Output counts by KM_writ')" 3
expect "Counts of routines" "$(figure $f 0 'Counts of routines')" 4010
expect "Routines" "$(figure $f 0 Routines)" 5
# rows in order of first entry, exact counts
expect "routine order" "$(awk '/^! +No Routine/ {t = 1; next} /^!/ {t = 0} t {printf "%s ", $2}' $f)" \
    "MAIN SUB1 SUB2 F PRNT "
for rc in MAIN:1 SUB1:4 SUB2:4000 F:3 PRNT:2; do
    expect "count of ${rc%:*}" "$(routine $f 0 ${rc%:*} 5)" "${rc#*:}"
done
expect "MAIN's DO count" "$(location $f 0 MAIN DO 20 5)" 1
expect "MAIN's CALL count" "$(location $f 0 MAIN CALL 24 5)" 1
expect "MAIN's IO count" "$(location $f 0 MAIN IO 25 5)" 1
expect "SUB1's DO count" "$(location $f 0 SUB1 DO 43 5)" 4
expect "IO statement text" "$(grep '^ *3 IO ' $f | sed 's/.* 1 *[0-9.]* //')" "WRITE(*, '(F10.1)') S"
# MAIN's I/O column is its WRITE's time
expect "MAIN's IO time" "$(routine $f 0 MAIN 7)" "$(location $f 0 MAIN IO 25 4)"
reads1=$(figure $f 0 'Counts of time get function')
cp $f first.copy

# A second run takes the next number and leaves the first file alone.
./prog > out 2> err || fail "run 2 exited with status $?"
only_outputs KM_output.000 KM_output.001
cmp -s KM_output.000 first.copy || fail "run 2 changed KM_output.000"
check KM_output.001
expect "reads, run 2" "$(figure KM_output.001 0 'Counts of time get function')" "$reads1"

# Past 10 measured executions SUB2 is sampled: its count stays exact with
# a '+', the others are unmarked, and its 3990 later executions are
# measured one in k (k >= 2 for so short a routine), saving at least half
# their clock reads.
KM_TIME_PREDICTION_MODE_NUMBER=10 ./prog > out 2> err ||
    fail "run 3 exited with status $?"
f=KM_output.002
check $f
expect "SUB2 extrapolated" "$(routine $f 0 SUB2 5)" "+4000"
expect "SUB1 not extrapolated" "$(routine $f 0 SUB1 5)" 4
expect "Total counts" "$(awk '/^! +Total /{print $4}' $f)" "+4010"
reads3=$(figure $f 0 'Counts of time get function')
[ "$reads3" -le $((reads1 - 3990)) ] ||
    fail "reads, run 3: $reads3, not at most $((reads1 - 3990))"
[ -s err ] && fail "run 3 wrote to standard error: $(cat err)"
finish
