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

sources=""
for f in core region clock signal trace mem format file gather; do
    sources="$sources $srcdir/runtime/km_$f.c"
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
