#!/bin/sh
# trace.sh — the trace file (trace.f, registered with the trace flag):
# a program that ends leaves KM_trace with every event, the status it
# ended with and no open region; one that hangs and is killed with SIGKILL
# (nothing can run then) leaves a KM_trace showing the regions it was in;
# KM_TRACE_FILE_NUMBER=0 turns the trace off, 1 on for a program
# instrumented without it; the ring keeps the last KM_TRACE_LINES events.
. "${srcdir:-.}/tests/runtime/common.sh"
need "$F77"

$F77 -o prog "$FIX/trace.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build trace.f: $(cat build.log)"; finish; }

# events FILE: the event lines in order, "IN|OUT depth region", numbered
events() {
    awk '$1 ~ /^[0-9]+$/' "$1" | sort -n | awk '{ print $1, $3, $4, $5 }'
}
# header FILE NAME: the value of a "! Name : value" line
header() {
    sed -n "s/^! $2 *: \(.*[^ ]\) *\$/\1/p" "$1"
}

mkdir ends && cd ends || exit 1
echo 0 | ../prog > out 2> err || fail "exited with status $?"
[ -s err ] && fail "standard error: $(cat err)"
t=KM_trace
[ -f $t ] || { fail "no $t"; finish; }
expect "trace line length" "$(awk '{ print length($0) }' $t | sort -u)" 127
expect "Status" "$(header $t Status)" "results written at END"
expect "Depth" "$(header $t Depth)" 0
expect "open regions" "$(sed -n '/^! Open regions/,/^! =====/p' $t | grep -vc '^! *$')" 2
# MAIN, OUTER, the loop, 50 LEAF entries and exits, then back out
expect "event count" "$(events $t | wc -l)" $((2 * (3 + 50)))
expect "first events" "$(events $t | head -4 | tr '\n' ' ')" \
    "1 IN 1 MAIN 2 IN 2 OUTER 3 IN 3 DO 4 IN 4 LEAF "
expect "last event" "$(events $t | tail -1)" "106 OUT 1 MAIN"
check KM_output.000
cd .. || exit 1

mkdir hangs && cd hangs || exit 1
echo 1 > in
../prog < in > out 2> err &
pid=$!
n=0
while [ ! -f ready ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
[ -f ready ] || fail "ready never appeared"
kill -KILL $pid
{ wait $pid; } 2> /dev/null
expect "killed: no KM_output" "$(ls | grep -c KM_output)" 0
t=KM_trace
expect "killed: Status" "$(header $t Status)" "running"
expect "killed: Depth" "$(header $t Depth)" 3
expect "killed: open regions" \
    "$(sed -n '/^! Open regions/,/^! =====/p' $t | awk '$1 == "!" && $2 ~ /^[0-9]+$/ { printf "%s %s ", $2, $3 }')" \
    "1 MAIN 2 OUTER 3 STUCK "
expect "killed: last event" "$(events $t | tail -1)" "105 IN 3 STUCK"
cd .. || exit 1

mkdir off && cd off || exit 1
echo 0 | KM_TRACE_FILE_NUMBER=0 ../prog > out 2> err || fail "off: status $?"
[ -f KM_trace ] && fail "KM_TRACE_FILE_NUMBER=0 still traced"
cd .. || exit 1

mkdir on && cd on || exit 1
$F77 -o serial "$FIX/serial.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build serial.f: $(cat build.log)"; finish; }
KM_TRACE_FILE_NUMBER=1 KM_TRACE_LINES=100 ./serial > out 2> err ||
    fail "on: status $?"
t=KM_trace
[ -f $t ] || { fail "KM_TRACE_FILE_NUMBER=1 wrote no trace"; finish; }
expect "on: ring size" "$(events $t | wc -l)" 100
# serial.f makes 4010 routine and 7 location entries, and as many exits
expect "on: newest event" "$(events $t | tail -1 | cut -d' ' -f1-3)" "8034 OUT 1"
expect "on: Status" "$(header $t Status)" "results written at END"
cd .. || exit 1
finish
