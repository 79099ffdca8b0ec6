#!/bin/sh
# unit.sh — build tests/runtime/unit.c against libkm.a and run it: the
# core's arithmetic with a fake clock (see unit.c for the list).
. "${srcdir:-.}/tests/runtime/common.sh"
: "${CC:=cc}"
need "$CC"

[ -f "$top_builddir/config.h" ] || { fail "$top_builddir/config.h missing: run configure"; finish; }
$CC -std=c11 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -I"$top_builddir" \
    -I"$srcdir" -o unit "$FIX/unit.c" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build unit.c: $(cat build.log)"; finish; }
[ -s build.log ] && fail "warnings building unit.c: $(cat build.log)"
./unit > unit.log 2> unit.err || fail "$(grep -v '^PASS' unit.log)"
grep -q '^PASS: 0 failure' unit.log || fail "unit.c did not finish: $(tail -3 unit.log)"
finish
