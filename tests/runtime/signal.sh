#!/bin/sh
# signal.sh — results written on a terminating signal: a program that never
# ends by itself (signal.f) killed with SIGTERM, then with SIGINT, leaves a
# whole, consistent KM_output.000 saying which signal wrote it, and still
# dies of that signal (exit status 128 + N); an MPI program (sigmpi.f, 2
# ranks) whose mpirun gets SIGTERM leaves each rank's own file.
. "${srcdir:-.}/tests/runtime/common.sh"
need "$F77"

# await FILE...: wait (at most a minute) until every FILE exists
await() {
    n=0
    for w in "$@"; do
        while [ ! -f "$w" ] && [ $n -lt 600 ]; do
            sleep 0.1
            n=$((n + 1))
        done
        [ -f "$w" ] || { fail "$w never appeared"; return 1; }
    done
}

# reap PID: its exit status, killing it after a minute if it will not die
reap() {
    n=0
    while kill -0 "$1" 2> /dev/null && [ $n -lt 600 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    kill -KILL "$1" 2> /dev/null && fail "process $1 ignored the signal"
    wait "$1"
}

# stop_with SIGNAL NUMBER COMMAND...: run COMMAND, stop it with SIGNAL once
# it is ready, expect exit status 128 + NUMBER and a KM_output.000
stop_with() {
    sig=$1 num=$2
    shift 2
    "$@" > out 2> err &
    pid=$!
    await ready && sleep 0.2
    kill -"$sig" $pid
    reap $pid
    expect "SIG$sig: exit status" "$?" $((128 + num))
    [ -s err ] && fail "SIG$sig: standard error: $(cat err)"
    only_outputs KM_output.000
    f=KM_output.000
    check $f
    expect "SIG$sig: Written at" "$(sed -n 4p $f)" "! Written at : signal $num"
    expect "SIG$sig: MAIN count" "$(routine $f 0 MAIN 5)" 1
    expect "SIG$sig: SPIN count" "$(routine $f 0 SPIN 5)" 1
    [ -n "$(routine $f 0 TICK 5)" ] || fail "SIG$sig: no TICK row"
}

$F77 -o prog "$FIX/signal.f" "$FIX/tick.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build signal.f: $(cat build.log)"; finish; }

mkdir term && cd term && cp ../prog . || exit 1
stop_with TERM 15 ./prog
cd .. || exit 1

# A shell starts background jobs with SIGINT ignored (and libkm leaves an
# ignored signal alone): give the program the default action back.
if env --default-signal=INT true 2> /dev/null; then
    mkdir int && cd int && cp ../prog . || exit 1
    stop_with INT 2 env --default-signal=INT ./prog
    cd .. || exit 1
else
    echo "ok - SIGINT not tried: env --default-signal is missing # SKIP"
fi

if grep -q 'define KM_HAVE_MPI 1' "$top_builddir/config.h" 2>/dev/null &&
   command -v "$MPIF77" > /dev/null 2>&1 && command -v "$MPIRUN" > /dev/null 2>&1; then
    mkdir mpi && cd mpi || exit 1
    $MPIF77 -o prog "$FIX/sigmpi.f" "$FIX/tick.f" "$MPIGLUE" "$LIBKM" > build.log 2>&1 ||
        { fail "cannot build sigmpi.f: $(cat build.log)"; finish; }
    # (straight to mpirun: timeout(1) would follow the SIGTERM with a
    # SIGCONT, which Open MPI's mpirun takes as a second signal and answers
    # by killing the ranks at once)
    $MPIRUN $MPIRUN_FLAGS -np 2 ./prog > out 2> err &
    pid=$!
    await ready.0 ready.1 && sleep 0.2
    kill -TERM $pid
    reap $pid
    grep kmtool err && fail "MPI: libkm complained"
    only_outputs KM_output.000.0 KM_output.000.1
    for r in 0 1; do
        f=KM_output.000.$r
        check $f
        expect "MPI rank $r: Written at" "$(sed -n 4p $f)" "! Written at : signal 15"
        expect "MPI rank $r: Ranks" "$(grep "^! Ranks      :" $f)" \
            "! Ranks      : 2, this file holds rank $r only (MPI not finalized)"
        expect "MPI rank $r: MPMAIN count" "$(routine $f $r MPMAIN 5)" 1
    done
    cd .. || exit 1
else
    echo "ok - MPI not tried: libkm or the MPI tools are missing # SKIP"
fi
finish
