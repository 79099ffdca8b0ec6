#!/bin/sh
# stop.sh — results written at a STOP inside a subroutine, with frames
# open (stop.f), and at CALL EXIT (callexit.f): one file, the right event,
# exact counts, the accounting identity, the program's exit status kept.
# Then the same STOP where no file can grow (ulimit -f 0), in the working
# directory nor in the fallback place (TMPDIR): one error line naming both,
# no KM_output and no temporary file left, the earlier file untouched.
. "${srcdir:-.}/tests/runtime/common.sh"
need "$F77"

mkdir stop && cd stop || exit 1
$F77 -o prog "$FIX/stop.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build stop.f: $(cat build.log)"; finish; }
./prog > out 2> err
expect "exit status at STOP" "$?" 0
[ -s out ] && fail "standard output: $(cat out)"
[ -s err ] && fail "standard error: $(cat err)"
only_outputs KM_output.000
f=KM_output.000
check $f
expect "Written at" "$(sed -n 4p $f)" "! Written at : STOP"
expect "Output counts by KM_writ" "$(figure $f 0 'Output counts by KM_writ')" 1
expect "MAIN count" "$(routine $f 0 MAIN 5)" 1
expect "STOPPER count" "$(routine $f 0 STOPPER 5)" 1
expect "CALL count" "$(location $f 0 MAIN CALL 9 5)" 1
expect "DO count" "$(location $f 0 STOPPER DO 22 5)" 1
grep -q Warning $f && fail "warnings: $(grep Warning $f)"
cd .. || exit 1

mkdir exit && cd exit || exit 1
$F77 -o prog "$FIX/callexit.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build callexit.f: $(cat build.log)"; finish; }
./prog > out 2> err
expect "exit status at CALL EXIT(3)" "$?" 3
[ -s err ] && fail "standard error: $(cat err)"
only_outputs KM_output.000
f=KM_output.000
check $f
expect "Written at" "$(sed -n 4p $f)" "! Written at : EXIT"
expect "BYE count" "$(routine $f 0 BYE 5)" 1
cd .. || exit 1

mkdir spare || exit 1
cd stop || exit 1
cp KM_output.000 before
# (standard error goes to a pipe, which the limit does not stop)
err=$( (trap '' XFSZ; ulimit -f 0 && TMPDIR=$work/spare exec ./prog 2>&1 > /dev/null); echo "status $?")
expect "exit status at STOP, disk full" "$(echo "$err" | tail -1)" "status 0"
expect "the one error line" "$(echo "$err" | sed '$d')" \
    "kmtool: KM_output not written: cannot write in $(pwd -P) (File too large), nor in $work/spare (File too large)"
only_outputs KM_output.000
cmp -s KM_output.000 before || fail "KM_output.000 changed"
expect "files in TMPDIR" "$(ls -A ../spare)" ""
cd .. || exit 1
finish
