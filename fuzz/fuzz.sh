#!/bin/sh
# fuzz.sh — build the front end's libFuzzer target and run it.
#
#   fuzz/fuzz.sh [-b BUILDDIR] [-t SECONDS] [-j JOBS] [--rewriter]
#                [--build-only]
#
# BUILDDIR is a configured and built kmtool tree (default: build/ at the
# top of the source tree); it supplies config.h and the flex and bison
# output.  The target is fuzz/fuzz_frontend in BUILDDIR, compiled with
# clang's -fsanitize=fuzzer,address,undefined from the front end's sources.
# It runs for SECONDS (default 600) on JOBS processes (default 1), under
# nice, starting from the front-end fixtures, and keeps what it learns in
# BUILDDIR/fuzz/corpus.  Crashing, leaking or slow inputs are written to
# BUILDDIR/fuzz/artifacts; replay one with
#   BUILDDIR/fuzz/fuzz_frontend ARTIFACT
# and make it a fixture once fixed.  With --rewriter the target is
# fuzz/fuzz_kmrun, which also instruments each input (its corpus and
# artifacts are BUILDDIR/fuzz/kmrun-*).  See fuzz/README.md.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
seconds=600
jobs=1
build_only=no
rewriter=no
while [ $# -gt 0 ]; do
    case $1 in
        -b) build=$2; shift 2 ;;
        -t) seconds=$2; shift 2 ;;
        -j) jobs=$2; shift 2 ;;
        --rewriter) rewriter=yes; shift ;;
        --build-only) build_only=yes; shift ;;
        *) echo "usage: $0 [-b BUILDDIR] [-t SECONDS] [-j JOBS]" \
                "[--rewriter] [--build-only]" >&2
           exit 2 ;;
    esac
done
build=$(cd "$build" && pwd)
CLANG=${CLANG:-clang}

# A generated file is in the build tree, or in the source tree of a
# distribution.
generated() {
    if [ -f "$build/$1" ]; then echo "$build/$1"; else echo "$top/$1"; fi
}
for f in config.h lexer/scanner.c parser/grammar.c parser/grammar.h; do
    if [ ! -f "$(generated $f)" ]; then
        echo "fuzz.sh: $f not found: configure and make in $build first" >&2
        exit 1
    fi
done

target=$build/fuzz/fuzz_frontend
corpus=corpus
artifacts=artifacts
extra=""
if [ "$rewriter" = yes ]; then
    target=$build/fuzz/fuzz_kmrun
    corpus=kmrun-corpus
    artifacts=kmrun-artifacts
    extra="-DKM_FUZZ_REWRITE $(echo "$top"/rewriter/*.c "$top"/control/*.c)"
fi
mkdir -p "$build/fuzz/$corpus" "$build/fuzz/$artifacts"
# shellcheck disable=SC2086
"$CLANG" -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -fno-omit-frame-pointer -I"$top" -I"$build" -I"$build/parser" \
    -o "$target" $extra \
    "$top/fuzz/fuzz_frontend.c" \
    "$top"/lexer/*.c \
    "$(generated lexer/scanner.c)" "$(generated parser/grammar.c)" \
    "$top/parser/parse.c" "$top/parser/build.c" "$top/parser/dump.c" \
    "$top/parser/names.c" \
    "$top/support/buf.c" "$top/support/diag.c"
echo "built $target"
[ "$build_only" = yes ] && exit 0

# Seeds: every fixture (front end and run, either form), behind the
# option byte its name and .flags ask for: bit 3 free form (.f90 .F90, or
# --free-form), bits 0-1 the line length (the form's own unless .flags
# say; 200 is seeded as none), bit 2 D lines as code.  Include files are
# seeded in both forms.
seeds=$build/fuzz/seeds
mkdir -p "$seeds"
# seed FILE NAME [FORM]: write FILE as seed NAME.
seed() {
    form=$3
    if [ -z "$form" ]; then
        case $1 in
            *.f90|*.F90) form=free ;;
            *) form=fixed ;;
        esac
    fi
    flags=$(cat "${1%.*}.flags" 2>/dev/null || :)
    case $flags in
        *--free-form*) form=free ;;
        *--fixed-form*) form=fixed ;;
    esac
    opt=0
    [ "$form" = free ] && opt=$((opt + 9))   # free form, 132 columns
    case $flags in
        *line-length=132*) opt=$((opt / 8 * 8 + 1)) ;;
        *line-length=none*|*line-length=200*) opt=$((opt / 8 * 8 + 2)) ;;
    esac
    case $flags in *d-lines*) opt=$((opt + 4)) ;; esac
    { printf "\\$(printf %03o "$opt")"; cat "$1"; } > "$seeds/$2"
}
for f in "$top"/fixtures/frontend/*.f "$top"/fixtures/frontend/*.F \
         "$top"/fixtures/frontend/*.f90 "$top"/fixtures/frontend/*.F90; do
    [ -f "$f" ] || continue
    seed "$f" "$(basename "$f")"
done
for f in "$top"/fixtures/frontend/include/*; do
    [ -f "$f" ] || continue
    seed "$f" "fixed-$(basename "$f")" fixed
    seed "$f" "free-$(basename "$f")" free
done
for f in "$top"/fixtures/run/*/*.f "$top"/fixtures/run/*/*.f90; do
    [ -f "$f" ] || continue
    d=$(dirname "$f")
    seed "$f" "run-$(basename "$d")-$(basename "$f")"
done

cd "$build/fuzz"
# Several jobs write their logs to fuzz-N.log here; one runs in the
# foreground.  -timeout: an input the front end needs more than 10 s for
# is a hang.
parallel=""
[ "$jobs" -gt 1 ] && parallel="-jobs=$jobs -workers=$jobs"
# shellcheck disable=SC2086
exec nice -n 10 "$target" -max_total_time="$seconds" $parallel \
    -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -dict="$top/fuzz/fortran.dict" -artifact_prefix="$artifacts/" \
    -print_final_stats=1 "$corpus" "$seeds"
