#!/bin/sh
# aarch64.sh — libkm on aarch64, built with Debian's cross compiler and run
# under qemu-user: every runtime file compiles without a warning, the
# generic timer (CNTVCT_EL0, read in order with isb) is the counter
# KM_CLOCK=tsc gives, and the core's unit tests pass.  What the reads cost
# on real hardware is not measured here.
. "${srcdir:-.}/tests/runtime/common.sh"
CROSS=aarch64-linux-gnu-gcc
need "$CROSS"
need qemu-aarch64
SYSROOT=/usr/aarch64-linux-gnu
[ -d "$SYSROOT" ] || skip "no $SYSROOT"
[ -f "$top_builddir/config.h" ] || { fail "$top_builddir/config.h missing"; finish; }

flags="-std=c11 -Wall -Wextra -O2 -D_POSIX_C_SOURCE=200809L -I$top_builddir -I$srcdir"
objs=""
for f in "$srcdir"/runtime/km_*.c; do
    case $f in */km_mpi.c) continue ;; esac   # needs the MPI glue
    o=$(basename "$f" .c).o
    # shellcheck disable=SC2086
    $CROSS $flags -c -o "$o" "$f" > "$o.log" 2>&1 ||
        { fail "cannot compile $(basename "$f"): $(cat "$o.log")"; continue; }
    [ -s "$o.log" ] && fail "warnings compiling $(basename "$f"): $(cat "$o.log")"
    objs="$objs $o"
done
[ "$failed" = 0 ] || finish
# shellcheck disable=SC2086
aarch64-linux-gnu-ar rcs libkm.a $objs || { fail "ar failed"; finish; }
echo "ok - aarch64: every runtime file compiles without a warning"

# shellcheck disable=SC2086
$CROSS $flags -o counter "$FIX/counter.c" libkm.a -lpthread > build.log 2>&1 ||
    { fail "cannot build counter.c: $(cat build.log)"; finish; }
KM_CLOCK=tsc qemu-aarch64 -L "$SYSROOT" ./counter "generic timer (CNTVCT_EL0" \
    > counter.log 2>&1 || fail "$(grep -v '^ok' counter.log)"
cat counter.log

# shellcheck disable=SC2086
$CROSS $flags -o unit "$FIX"/unit.c "$FIX"/unit_*.c libkm.a -lpthread > build.log 2>&1 ||
    { fail "cannot build the unit tests: $(cat build.log)"; finish; }
[ -s build.log ] && fail "warnings building the unit tests: $(cat build.log)"
qemu-aarch64 -L "$SYSROOT" ./unit > unit.log 2> unit.err ||
    fail "unit tests on aarch64: $(grep -v '^PASS\|^note' unit.log)"
grep -q '^PASS: 0 failure' unit.log &&
    echo "ok - aarch64: the core's unit tests pass under qemu-user" ||
    fail "the unit tests did not finish on aarch64: $(tail -3 unit.log)"
finish
