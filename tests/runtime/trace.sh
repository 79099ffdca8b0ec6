#!/bin/sh
# trace.sh — the trace file (trace.f, registered with the trace flag), read
# by the tests' own reader (tracedump.c, from doc/KM_trace.md alone): a
# program that ends leaves KM_trace.000 with every event in order and the
# state "results written"; one that hangs and is killed with SIGKILL
# (nothing can run then) leaves every event up to the kill, showing the
# regions it was in; SIGTERM marks the header with the signal;
# KM_TRACE_FILE_NUMBER=0 turns the trace off, 1 on for a program
# instrumented without it; KM_TRACE_LIMIT stops it, counting what did not
# fit.
. "${srcdir:-.}/tests/runtime/common.sh"
need "$F77"
: "${CC:=cc}"
need "$CC"

$F77 -o prog "$FIX/trace.f" "$LIBKM" -lpthread > build.log 2>&1 ||
    { fail "cannot build trace.f: $(cat build.log)"; finish; }
$CC -o tracedump "$FIX/tracedump.c" > build-dump.log 2>&1 ||
    { fail "cannot build tracedump.c: $(cat build-dump.log)"; finish; }
DUMP=$work/tracedump

# events FILE: entries and exits, "IN|OUT depth region"
events() {
    "$DUMP" "$1" | awk '$2 == "IN" || $2 == "OUT" { print $2, $3, $4 }'
}
# header FILE FIELD: a field of tracedump's first line
header() {
    "$DUMP" "$1" | awk -v k="$2" 'NR == 1 { for (i = 1; i < NF; i++)
        if ($i == k) print $(i + 1) }'
}

mkdir ends && cd ends || exit 1
echo 0 | ../prog > out 2> err || fail "exited with status $?"
[ -s err ] && fail "standard error: $(cat err)"
t=KM_trace.000
[ -f $t ] || { fail "no $t"; finish; }
"$DUMP" $t > dump || fail "tracedump cannot read $t"
expect "state: results written" "$(header $t state)" 2
expect "size: the blocks claimed" "$(wc -c < $t)" \
    $((($(header $t blocks) + 1) * 262144))
# MAIN, OUTER, the loop, 50 LEAF entries and exits, then back out
expect "event count" "$(events $t | wc -l)" $((2 * (3 + 50)))
expect "first events" "$(events $t | head -4 | tr '\n' ' ')" \
    "IN 1 MAIN IN 2 OUTER IN 3 DO IN 4 LEAF "
expect "last event" "$(events $t | tail -1)" "OUT 1 MAIN"
expect "nothing open" "$(grep -c '^open' dump)" 0
expect "an END record" "$(grep -c '^0 END 0$' dump)" 1
check KM_output.000
cd .. || exit 1

# Five runs traced at once in one directory, 104,002 events each: each
# has a trace of its own, whole (one truncated the others' files under
# them, and their next store killed them with SIGBUS: 4 of 5 died), and a
# later run's takes the next number, leaving them as they were.
mkdir together && cd together || exit 1
for i in 1 2 3 4 5; do
    (echo 2 | ../prog > out.$i 2> err.$i; echo $? > status.$i) &
done
wait
for i in 1 2 3 4 5; do
    expect "together: run $i's exit status" "$(cat status.$i)" 0
done
expect "together: five traces" "$(ls KM_trace* | tr '\n' ' ')" \
    "KM_trace.000 KM_trace.001 KM_trace.002 KM_trace.003 KM_trace.004 "
pids=""
for t in KM_trace.00[0-4]; do
    expect "together: $t complete" "$(header $t state) $(events $t | wc -l)" \
        "2 104002"
    pids="$pids $(od -An -t d8 -j 40 -N 8 $t)"    # (its header's pid)
done
expect "together: five processes' traces" \
    "$(echo $pids | tr ' ' '\n' | sort -u | wc -l)" 5
sum=$(cksum KM_trace.000)
echo 0 | ../prog > out 2> err || fail "together: a sixth run: status $?"
expect "together: the sixth run's trace" "$(ls KM_trace* | tail -1)" \
    KM_trace.005
expect "together: the first trace as it was" "$(cksum KM_trace.000)" "$sum"
cd .. || exit 1

# hang DIR SIGNAL: trace.f stuck in STUCK, killed with SIGNAL
hang() {
    mkdir "$1" && cd "$1" || exit 1
    echo 1 > in
    ../prog < in > out 2> err &
    pid=$!
    n=0
    while [ ! -f ready ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
    [ -f ready ] || fail "$1: ready never appeared"
    kill -"$2" $pid
    { wait $pid; } 2> /dev/null
}

hang killed KILL
t=KM_trace.000
expect "killed: no KM_output" "$(ls | grep -c KM_output)" 0
expect "killed: state running" "$(header $t state)" 1
expect "killed: open regions" "$("$DUMP" $t | grep '^open')" \
    "open 0 MAIN OUTER STUCK"
expect "killed: every event to the last" "$(events $t | wc -l)" 105
expect "killed: last event" "$(events $t | tail -1)" "IN 3 STUCK"
cd .. || exit 1

hang terminated TERM
t=KM_trace.000
expect "SIGTERM: state signal" "$(header $t state)" 4
expect "SIGTERM: its number" "$(header $t signal)" 15
expect "SIGTERM: open regions" "$("$DUMP" $t | grep '^open')" \
    "open 0 MAIN OUTER STUCK"
cd .. || exit 1

mkdir off && cd off || exit 1
echo 0 | KM_TRACE_FILE_NUMBER=0 ../prog > out 2> err || fail "off: status $?"
ls KM_trace* > /dev/null 2>&1 && fail "KM_TRACE_FILE_NUMBER=0 still traced"
cd .. || exit 1

mkdir on && cd on || exit 1
$F77 -o serial "$FIX/serial.f" "$LIBKM" -lpthread > build.log 2>&1 ||
    { fail "cannot build serial.f: $(cat build.log)"; finish; }
KM_TRACE_FILE_NUMBER=1 ./serial > out 2> err || fail "on: status $?"
t=KM_trace.000
[ -f $t ] || { fail "KM_TRACE_FILE_NUMBER=1 wrote no trace"; finish; }
# serial.f makes 4010 routine and 7 location entries, and as many exits
expect "on: every event" "$(events $t | wc -l)" $((2 * 4017))
expect "on: state" "$(header $t state)" 2
cd .. || exit 1

# No room for the trace (ulimit -f 0: as a full disk, the first block
# cannot be allocated): one line says no trace is written, and no empty
# KM_trace is left behind; the program runs on.
mkdir full && cd full || exit 1
mkdir spare
err=$( (trap '' XFSZ; ulimit -f 0 && echo 0 | TMPDIR=$work/full/spare exec ../prog 2>&1 >/dev/null); echo "status $?")
expect "full disk: exit status" "$(echo "$err" | tail -1)" "status 0"
expect "full disk: said so, once" \
    "$(echo "$err" | grep -c '^kmtool: trace KM_trace.000: cannot size it: .*; no trace is written$')" 1
ls KM_trace* > /dev/null 2>&1 && fail "full disk: an empty KM_trace left ($(ls -l KM_trace*))"
cd .. || exit 1

# At most 1 MiB: the header's block and 3 of 16,383 records.
mkdir limit && cd limit || exit 1
echo 2 | KM_TRACE_LIMIT=1 ../prog > out 2> err || fail "limit: status $?"
t=KM_trace.000
expect "limit: state stopped" "$(header $t state)" 3
expect "limit: the file at its limit" "$(wc -c < $t)" 1048576
recorded=$(events $t | wc -l)
expect "limit: recorded and dropped events make them all" \
    $((recorded + $(header $t dropped))) 104002
expect "limit: said so on standard error, once" \
    "$(grep -c 'trace KM_trace.000 stopped at 1 MiB' err)" 1
cd .. || exit 1
finish
