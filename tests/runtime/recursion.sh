#!/bin/sh
# recursion.sh — recursion (recursion.f) is counted exactly and its time
# never twice: a recursive routine's elapsed time is its outermost
# activations' (so it cannot exceed its caller's), its net time is the sum
# of every level's own, and the accounting identity holds.
. "${srcdir:-.}/tests/runtime/common.sh"
need "$F77"

$F77 -o prog "$FIX/recursion.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build recursion.f: $(cat build.log)"; finish; }
./prog > out 2> err || fail "exited with status $?"
expect "standard output" "$(cat out)" "     40320     40320"
[ -s err ] && fail "standard error: $(cat err)"
f=KM_output.000
check $f
for rc in MAIN:1 FACT:24 WALK:24; do
    expect "count of ${rc%:*}" "$(routine $f 0 ${rc%:*} 5)" "${rc#*:}"
done
expect "count of CALL WALK" "$(location $f 0 WALK CALL 63 5)" 21
# Each level does the same work, so counting nested activations again would
# make FACT's and WALK's elapsed times several times MAIN's; net time is
# where every level's work goes (MAIN's own loop does no work).
main=$(routine $f 0 MAIN 3)
for r in FACT WALK; do
    awk -v e="$(routine $f 0 $r 3)" -v n="$(routine $f 0 $r 4)" -v m="$main" \
        'BEGIN { exit !(e <= m && n <= e && n > 0.9 * e) }' ||
        fail "$r: elapsed $(routine $f 0 $r 3), net $(routine $f 0 $r 4), MAIN $main"
done
awk -v c="$(location $f 0 WALK CALL 63 4)" -v e="$(routine $f 0 WALK 3)" \
    'BEGIN { exit !(c <= e) }' ||
    fail "CALL WALK's elapsed $(location $f 0 WALK CALL 63 4) exceeds WALK's"
echo "ok - recursive elapsed times within their callers'"
finish
