#!/bin/sh
# common.sh — sourced by the benchmarks (runtime.sh, estimates.sh,
# truth.sh): the build directory they measure (their first argument,
# default build/ beside bench/), kmrun and libkm in it, the compilers, and
# a work directory of their own, removed at the end (with the busy loop a
# benchmark started, if any: $busy).
#
#   WORK_PREFIX=NAME . "$here/common.sh"      (here: the bench/ directory)
bench=$(basename "$0")
top=$(cd "$here/.." && pwd)
die() { echo "$bench: $*" >&2; exit 1; }
build=$(cd "${1:-$top/build}" 2> /dev/null && pwd) ||
    die "no build directory ${1:-$top/build}"
: "${F77:=gfortran}"
: "${CC:=cc}"
: "${FFLAGS:=-O2 -std=legacy}"
: "${REPEAT:=7}"
LIBKM=$build/runtime/libkm.a
KMRUN=$build/kmrun/kmrun
for f in "$LIBKM" "$KMRUN" "$build/config.h"; do
    [ -f "$f" ] || die "$f is missing: build first"
done
work=$(mktemp -d "${TMPDIR:-/tmp}/${WORK_PREFIX:-kmbench}.XXXXXX") || exit 1
busy=
trap '[ -n "$busy" ] && kill "$busy" 2> /dev/null; rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM            # (so that the EXIT trap runs too)
cd "$work" || exit 1
