#!/bin/sh
# recursion.sh — recursion (recursion.f) is counted exactly and its time
# never twice: a recursive routine's elapsed time is its outermost
# activations' (so it cannot exceed its caller's), its net time is the sum
# of every level's own, and the accounting identity holds; past the call
# path limits too.
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

# Past the limits (2 nodes of a region on one path, 4 paths): the deeper
# paths fold, counts stay exact, and the folded time stays inside MAIN
# (folded under the root, MAIN's elapsed was FACT's alone, less than
# FACT's and WALK's, which it calls one after the other).
rm -f KM_output.*
KM_PATHS_MAX=4 KM_PATHS_RECURSION=2 ./prog > out 2> err ||
    fail "past the path limits: exited with status $?"
expect "past the path limits: standard output" "$(cat out)" "     40320     40320"
check $f
for rc in MAIN:1 FACT:24 WALK:24; do
    expect "past the path limits: count of ${rc%:*}" \
        "$(routine $f 0 ${rc%:*} 5)" "${rc#*:}"
done
grep -q "^! Warning: [1-9][0-9]* entries went on call paths folded at a limit" $f ||
    fail "past the path limits: no warning of the folded paths"
awk -v m="$(routine $f 0 MAIN 3)" -v a="$(routine $f 0 FACT 3)" \
    -v b="$(routine $f 0 WALK 3)" 'BEGIN { exit !(m >= a + b) }' ||
    fail "past the path limits: MAIN's elapsed $(routine $f 0 MAIN 3) below FACT's $(routine $f 0 FACT 3) and WALK's $(routine $f 0 WALK 3)"
awk '/^! ===== Paths/ { on = 1 } on && $1 ~ /^[0-9]+$/ && $2 == 0 { n++ }
     END { exit n != 1 }' $f ||
    fail "past the path limits: more than MAIN outside every region"
echo "ok - past the path limits, every path inside MAIN"
finish
