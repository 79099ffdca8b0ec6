#!/bin/sh
# wrapper.sh — what kmfc adds to a build's time: the same build run plain
# and through kmfc, side by side in one run, as a ratio.
#
#   bench/wrapper.sh [-n RUNS] [-b BUILDDIR] SRCDIR 'COMMAND' [FC]
#
# COMMAND builds a fresh copy of SRCDIR (it runs in that copy, with @FC@
# replaced by FC, default gfortran, or by "kmfc FC"); each of the RUNS
# rounds (default 1) builds once plain and once with kmfc, alternating, and
# the medians are compared.  BUILDDIR: kmtool's build tree (default:
# build/ beside this script's folder); KM_CONTROL is left as it is.
# Examples:
#   bench/wrapper.sh fixtures/build/make 'make FC="@FC@"'
#   bench/wrapper.sh -n 3 ~/NPB3.4-MPI \
#       'make BT CLASS=S MPIFC="@FC@"' mpif90
#   bench/wrapper.sh ~/lapack \
#       'mkdir b && cd b && FC="@FC@" cmake .. >/dev/null && make -j2'
set -e
here=$(cd "$(dirname "$0")" && pwd)
runs=1
build="$here/../build"
while getopts n:b: opt; do
    case $opt in
    n) runs=$OPTARG ;;
    b) build=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { sed -n '2,17p' "$0"; exit 2; }
src=$(cd "$1" && pwd)
cmd=$2
fc=${3:-gfortran}
build=$(cd "$build" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kmbench-wrapper.XXXXXX")
trap 'rm -rf "$work"' EXIT
KMFC_KMRUN="$build/kmrun/kmrun"
KMFC_LIBKM="$build/runtime/libkm.a"
export KMFC_KMRUN KMFC_LIBKM

# one_build LABEL FC: seconds for COMMAND in a fresh copy, FC for @FC@
one_build() {
    rm -rf "$work/$1"
    cp -R "$src" "$work/$1"
    c=$(printf '%s' "$cmd" | sed "s|@FC@|$2|g")
    t0=$(date +%s.%N)
    (cd "$work/$1" && sh -c "$c") > "$work/$1.log" 2>&1 ||
        { echo "wrapper.sh: the $1 build failed:" >&2
          tail -5 "$work/$1.log" >&2; exit 1; }
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: > "$work/plain.t"
: > "$work/kmfc.t"
i=0
while [ "$i" -lt "$runs" ]; do
    one_build plain "$fc" >> "$work/plain.t"
    one_build kmfc "$build/wrapper/kmfc $fc" >> "$work/kmfc.t"
    i=$((i + 1))
done
p=$(median < "$work/plain.t")
k=$(median < "$work/kmfc.t")
files=$(find "$work/kmfc" -name 'KM_*' ! -name 'KM_output*' | wc -l)
printf 'build of %s (%s), %d round(s), %s copies instrumented:\n' \
    "$(basename "$src")" "$cmd" "$runs" "$files"
printf '  plain %8.2f s   kmfc %8.2f s   ratio %.2fx\n' "$p" "$k" \
    "$(echo "$k / $p" | bc -l)"
