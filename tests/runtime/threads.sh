#!/bin/sh
# threads.sh — tests/runtime/threads.c (many threads, exact counts per
# thread, the registration race) against libkm.a, then built from libkm's
# sources with ThreadSanitizer, which must report no data race (skipped,
# and said, where the compiler cannot build with -fsanitize=thread).
. "${srcdir:-.}/tests/runtime/common.sh"
: "${CC:=cc}"
need "$CC"

flags="-std=c11 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -I$top_builddir -I$srcdir"
# shellcheck disable=SC2086
$CC $flags -pthread -o threads "$FIX/threads.c" "$LIBKM" > build.log 2>&1 ||
    { fail "cannot build threads.c: $(cat build.log)"; finish; }
./threads > threads.log 2> threads.err || fail "$(grep -v '^PASS' threads.log)"
grep -q '^PASS: 0 failure' threads.log ||
    fail "threads.c did not finish: $(tail -3 threads.log)"

# SIGTERM to a worker thread: one file, both threads, then the signal.
mkdir sig && (cd sig && ../threads signal > out 2> err)
status=$?
[ "$status" = 143 ] || fail "signal: exit status $status, expected 143 (SIGTERM)"
[ "$(ls sig | grep -c '^KM_output')" = 1 ] ||
    fail "signal: KM_output files: $(ls sig | tr '\n' ' ')"
grep -q '^! Written at : signal 15$' sig/KM_output.000 ||
    fail "signal: not written at the signal"
grep -Eq '^2 +! Threads$' sig/KM_output.000 ||
    fail "signal: the file has not both threads"
awk -f "$CHECKER" sig/KM_output.000 > sig/check.log 2>&1 ||
    fail "signal: KM_output is not consistent: $(head -5 sig/check.log)"

sources=""
for f in "$srcdir"/runtime/km_*.c; do
    case $f in */km_mpi.c) continue ;; esac   # needs the MPI glue
    sources="$sources $f"
done
echo 'int main(void) { return 0; }' > probe.c
if ! $CC -fsanitize=thread -o probe probe.c > probe.log 2>&1 || ! ./probe; then
    echo "SKIP: $test_name: no ThreadSanitizer here: $(head -3 probe.log)"
    finish
fi
# shellcheck disable=SC2086
$CC $flags -fsanitize=thread -g -O1 -pthread -o threads-tsan \
    "$FIX/threads.c" $sources > tsan-build.log 2>&1 ||
    { fail "cannot build threads.c with -fsanitize=thread: $(head -5 tsan-build.log)"; finish; }
TSAN_OPTIONS="halt_on_error=1 exitcode=66" ./threads-tsan > tsan.log 2> tsan.err
status=$?
[ "$status" = 0 ] ||
    fail "under ThreadSanitizer (status $status): $(head -40 tsan.err)"
grep -q 'WARNING: ThreadSanitizer' tsan.err &&
    fail "ThreadSanitizer: $(head -40 tsan.err)"
finish
