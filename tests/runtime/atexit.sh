#!/bin/sh
# atexit.sh — a program that ends in a routine kmrun never saw (atexit.f:
# STOP without KM_STOP) still leaves its results, written by the atexit
# handler into the file its PRINT_OUT routine wrote earlier.
. "${srcdir:-.}/tests/runtime/common.sh"
need "$F77"

$F77 -o prog "$FIX/atexit.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build atexit.f: $(cat build.log)"; finish; }
./prog > out 2> err
expect "exit status" "$?" 0
[ -s out ] && fail "standard output: $(cat out)"
[ -s err ] && fail "standard error: $(cat err)"
only_outputs KM_output.000
f=KM_output.000
check $f
expect "Written at" "$(sed -n 4p $f)" "! Written at : exit"
expect "Output counts by KM_writ" "$(figure $f 0 'Output counts by KM_writ')" 2
expect "MAIN count" "$(routine $f 0 MAIN 5)" 1
expect "PRNT count" "$(routine $f 0 PRNT 5)" 1
expect "CALL QUIT count" "$(location $f 0 MAIN CALL 14 5)" 1
# QUIT's time is the CALL's own: in "uninstrumented routines", not in MAIN's net
[ "$(figure $f 0 'Time in uninstrumented routines')" = "$(location $f 0 MAIN CALL 14 4)" ] ||
    fail "uninstrumented routines != the time of CALL QUIT"
finish
