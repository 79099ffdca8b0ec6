#!/bin/sh
# signal.sh — results written on a signal that stops a program from
# outside: a program that never ends by itself (signal.f, built with the
# compiler's default flags: gfortran's runtime handles SIGXCPU) sent
# SIGTERM, SIGUSR1, SIGUSR2, SIGXCPU, SIGINT, or stopped by a CPU-time
# limit (and, linked -static, sent SIGTERM and SIGXCPU), leaves a whole, consistent KM_output.000 saying which signal
# wrote it, and still ends as the plain build does (exit status 128 + N,
# the same messages); a program with its own SIGUSR1 handler (sigown.f,
# through gfortran's SIGNAL or a C constructor) keeps it; an MPI program
# (sigmpi.f, 2 ranks) whose mpirun gets SIGTERM leaves each rank's own
# file.
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

# run_stopped DIR HOW COMMAND...: run COMMAND in DIR (made here) and stop
# it: HOW a signal's name, sent once it is ready; HOW "limit", a CPU-time
# limit of one second (ulimit -S -t 1: SIGXCPU), which the loop reaches by
# itself.  Leaves DIR/out, DIR/err and DIR/status.
run_stopped() {
    dir=$1 how=$2
    shift 2
    mkdir "$dir" && cd "$dir" || exit 1
    if [ "$how" = limit ]; then
        sh -c 'ulimit -S -t 1 && exec "$@"' sh "$@" > out 2> err &
        pid=$!
    else
        "$@" > out 2> err &
        pid=$!
        await ready && sleep 0.2
        kill -"$how" $pid
    fi
    reap $pid
    echo $? > status
    cd .. || exit 1
}

# messages FILE: what a program said on standard error, a backtrace's
# addresses (gfortran's, after its "Program received signal" line) aside
messages() {
    sed '/^Backtrace for this error:/q' "$1"
}

# stop_with NAME HOW NUMBER [PREFIX...]: the program (run through PREFIX)
# stopped as HOW says (run_stopped), against the plain build stopped the
# same way: exit status 128 + NUMBER and the plain build's, the plain
# build's messages (gfortran's handler prints one on SIGXCPU), and a
# whole KM_output.000 written at the signal with exact counts.
stop_with() {
    name=$1 how=$2 num=$3
    shift 3
    run_stopped "$name" "$how" "$@" "../$prog"
    run_stopped "$name.plain" "$how" "$@" "../$plain"
    expect "$name: exit status" "$(cat "$name/status")" $((128 + num))
    expect "$name: exit status as the plain build's" \
        "$(cat "$name/status")" "$(cat "$name.plain/status")"
    expect "$name: messages as the plain build's" \
        "$(messages "$name/err")" "$(messages "$name.plain/err")"
    cd "$name" || exit 1
    only_outputs KM_output.000
    f=KM_output.000
    check $f
    expect "$name: Written at" "$(sed -n 4p $f)" "! Written at : signal $num"
    expect "$name: MAIN count" "$(routine $f 0 MAIN 5)" 1
    expect "$name: SPIN count" "$(routine $f 0 SPIN 5)" 1
    [ -n "$(routine $f 0 TICK 5)" ] || fail "$name: no TICK row"
    cd .. || exit 1
}

$F77 -o prog "$FIX/signal.f" "$FIX/tick.f" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build signal.f: $(cat build.log)"; finish; }
# The plain build: the same program with libkm's entry points doing
# nothing (named as libkm names them), with the compiler's default flags
# (gfortran's -fbacktrace: its runtime handles SIGXCPU itself)
nm "$LIBKM" | awk '$2 == "T" && tolower($3) ~ /^km_(reg|in|out|end)_*$/ {
    printf "void %s(void) {}\n", $3 }' > stubs.c
if ! ${CC:-cc} -c stubs.c > build.log 2>&1 ||
   ! $F77 -o plain "$FIX/signal.f" "$FIX/tick.f" stubs.o >> build.log 2>&1; then
    fail "cannot build the plain signal.f: $(cat build.log)"
    finish
fi

prog=prog plain=plain
stop_with term TERM 15
stop_with usr1 USR1 10
stop_with usr2 USR2 12
stop_with xcpu XCPU 24
stop_with cpu-limit limit 24

# Linked -static, where gfortran's handler is known by its name (not
# tried, and said, where the plain program cannot be linked so)
if $F77 -static -o plain-static "$FIX/signal.f" "$FIX/tick.f" stubs.o \
    > build.log 2>&1; then
    $F77 -static -o prog-static "$FIX/signal.f" "$FIX/tick.f" "$LIBKM" \
        > build.log 2>&1 ||
        { fail "cannot build signal.f -static: $(cat build.log)"; finish; }
    prog=prog-static plain=plain-static
    stop_with static-term TERM 15
    stop_with static-xcpu XCPU 24
    prog=prog plain=plain
else
    echo "ok - -static not tried: the plain program does not link so # SKIP"
fi

# A shell starts background jobs with SIGINT ignored (and libkm leaves an
# ignored signal alone): give the program the default action back.
if env --default-signal=INT true 2> /dev/null; then
    stop_with int INT 2 env --default-signal=INT
else
    echo "ok - SIGINT not tried: env --default-signal is missing # SKIP"
fi

# own_handler NAME OWNSET...: sigown.f with its own SIGUSR1 handler
# (installed by OWNSET's file) is sent SIGUSR1: libkm leaves the handler
# alone, the program goes on and ends, and its results are written at END
own_handler() {
    name=$1
    shift
    mkdir "$name" && cd "$name" || exit 1
    if $F77 -o prog "$FIX/sigown.f" "$@" "$FIX/tick.f" "$LIBKM" \
        > build.log 2>&1; then
        ./prog > out 2> err &
        pid=$!
        await ready && sleep 0.2
        kill -USR1 $pid
        reap $pid
        expect "$name: exit status" "$?" 0
        expect "$name: the program's handler ran" "$(cat out)" caught
        only_outputs KM_output.000
        check KM_output.000
        expect "$name: Written at" "$(sed -n 4p KM_output.000)" \
            "! Written at : END"
        expect "$name: OWN count" "$(routine KM_output.000 0 OWN 5)" 1
    else
        fail "$name: cannot build sigown.f: $(cat build.log)"
    fi
    cd .. || exit 1
}

# (gfortran's names: its SIGNAL intrinsic, the C name of a COMMON)
if $F77 --version 2> /dev/null | grep -q 'GNU Fortran'; then
    ${CC:-cc} -c -o sigown.o "$FIX/sigown.c" > build.log 2>&1 ||
        { fail "cannot build sigown.c: $(cat build.log)"; finish; }
    own_handler own-signal "$FIX/sigownf.f"
    own_handler own-constructor "$PWD/sigown.o"
else
    echo "ok - a program's own SIGUSR1 handler not tried: $F77 is not gfortran # SKIP"
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
