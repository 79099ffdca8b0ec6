#!/bin/sh
# unit.sh — build the unit tests of libkm's core (tests/runtime/unit.c,
# the harness and main(), and the groups of tests in unit_*.c; unit.h
# declares what they share) against libkm.a and run them: the core's
# arithmetic with a fake clock (see unit.c's main() for the list).
. "${srcdir:-.}/tests/runtime/common.sh"
: "${CC:=cc}"
need "$CC"

[ -f "$top_builddir/config.h" ] || { fail "$top_builddir/config.h missing: run configure"; finish; }
$CC -std=c11 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -I"$top_builddir" \
    -I"$srcdir" -o unit "$FIX"/unit.c "$FIX"/unit_*.c "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build the unit tests: $(cat build.log)"; finish; }
[ -s build.log ] && fail "warnings building the unit tests: $(cat build.log)"
./unit > unit.log 2> unit.err || fail "$(grep -v '^PASS' unit.log)"
grep -q '^PASS: 0 failure' unit.log || fail "the unit tests did not finish: $(tail -3 unit.log)"
finish
