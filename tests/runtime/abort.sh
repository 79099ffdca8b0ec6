#!/bin/sh
# abort.sh — results written when a program stops itself (abort.f, with
# abortc.c): Fortran's CALL ABORT (KM_ABOR before it, as kmrun writes
# it), a failed C assert (SIGABRT, whose handler is gfortran's runtime's
# with its default -fbacktrace) and C's quick_exit (which runs no atexit
# handler) each leave a whole,
# consistent KM_output.000 saying how it was written, with exact counts,
# and the program ends as the plain build does: the same exit status,
# standard output and messages (a backtrace's addresses aside).
. "${srcdir:-.}/tests/runtime/common.sh"
need "$F77"

${CC:-cc} -c -o abortc.o "$FIX/abortc.c" > build.log 2>&1 ||
    { fail "cannot build abortc.c: $(cat build.log)"; finish; }
$F77 -o prog.km "$FIX/abort.f" abortc.o "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build abort.f: $(cat build.log)"; finish; }
# The plain build: libkm's entry points doing nothing (named as libkm
# names them)
nm "$LIBKM" | awk '$2 == "T" && tolower($3) ~ /^km_(reg|in|out|end|abor)_*$/ {
    printf "void %s(void) {}\n", $3 }' > stubs.c
if ! ${CC:-cc} -c stubs.c > build.log 2>&1 ||
   ! $F77 -o prog.plain "$FIX/abort.f" abortc.o stubs.o >> build.log 2>&1; then
    fail "cannot build the plain abort.f: $(cat build.log)"
    finish
fi

# messages FILE: what a program said on standard error, up to a
# backtrace (its addresses differ between the builds)
messages() {
    sed '/Backtrace/q' "$1"
}

# stops HOW STATUS EVENT: both builds run as ./prog with argument HOW
# (the same name in the assert's message) in directories of their own
stops() {
    how=$1
    for b in km plain; do
        mkdir "$how.$b" && cd "$how.$b" || exit 1
        cp "../prog.$b" prog
        ./prog "$how" > out 2> err < /dev/null
        echo $? > status
        cd .. || exit 1
    done
    expect "$how: exit status" "$(cat "$how.km/status")" "$2"
    expect "$how: exit status as the plain build's" \
        "$(cat "$how.km/status")" "$(cat "$how.plain/status")"
    expect "$how: standard output as the plain build's" \
        "$(cat "$how.km/out")" "$(cat "$how.plain/out")"
    expect "$how: messages as the plain build's" \
        "$(messages "$how.km/err")" "$(messages "$how.plain/err")"
    cd "$how.km" || exit 1
    only_outputs KM_output.000
    f=KM_output.000
    check $f
    expect "$how: Written at" "$(sed -n 4p $f)" "! Written at : $3"
    expect "$how: MAIN count" "$(routine $f 0 MAIN 5)" 1
    expect "$how: BOOM count" "$(routine $f 0 BOOM 5)" 1
    cd .. || exit 1
}

stops abort 134 ABORT
stops assert 134 "signal 6"
stops quick 3 exit
finish
