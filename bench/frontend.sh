#!/bin/bash
# frontend.sh — how fast kmrun reads Fortran, next to gfortran -fsyntax-only.
#
#   bench/frontend.sh [-k KMRUN] [DIR]
#
# Reads every .f file under DIR (LAPACK's top directory is a good DIR) or,
# without DIR, a synthetic input generated here (bench/gen-fortran.awk:
# about a million lines of FORTRAN 77 in 200 files), three ways, each on
# one core, one after the other in this one run:
#   kmrun --dump        the front end alone (reader, classifier, scanner,
#                       parser), its dump thrown away;
#   kmrun -td           the whole instrumentation, KM_ files written;
#   gfortran -fsyntax-only, the compiler's own syntax and semantic check.
# It prints lines per second of CPU time (user + system) for each, and the
# ratio of kmrun's speed to gfortran's.  A benchmark, not a test: run it by
# hand; the machine's other load changes the figures, much less the ratio.
set -e
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
kmrun=$top/build/kmrun/kmrun
if [ "$1" = -k ]; then kmrun=$2; shift 2; fi
[ -x "$kmrun" ] || { echo "no kmrun at $kmrun (build first, or -k KMRUN)" >&2; exit 1; }
FC=${FC:-gfortran}
work=$(mktemp -d "${TMPDIR:-/tmp}/kmbench.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -n "$1" ]; then
    find "$1" -name '*.f' -type f | sort > "$work/files"
    what="the .f files under $1"
else
    mkdir "$work/src"
    awk -v dir="$work/src" -v files=200 -v routines=46 \
        -f "$here/gen-fortran.awk"
    find "$work/src" -name '*.f' | sort > "$work/files"
    what="a synthetic input (bench/gen-fortran.awk)"
fi
nfiles=$(wc -l < "$work/files")
[ "$nfiles" -gt 0 ] || { echo "no .f files" >&2; exit 1; }
lines=$(xargs cat < "$work/files" | wc -l)
echo "input: $what: $nfiles files, $lines lines"

# cpu COMMAND...: run it; print the CPU seconds (user + system) it took.
# (`times` writes to a file: in a pipe it would count the pipe's shell.)
cpu() {
    times > "$work/t0"
    "$@" > /dev/null 2>> "$work/errors" || true
    times > "$work/t1"
    awk 'function s(t) { split(t, a, "m"); sub(/s$/, "", a[2])
                         return a[1] * 60 + a[2] }
         FNR == 2 { c[FILENAME] = s($1) + s($2) }
         END { printf "%.3f\n", c[ARGV[2]] - c[ARGV[1]] }' \
        "$work/t0" "$work/t1"
}

# Every file on one command line (xargs splits only very long lists).
dump() { xargs "$kmrun" --dump < "$work/files"; }
instrument() {
    mkdir -p "$work/out"
    xargs "$kmrun" -y --default-control="$top/control/KM_control.dat" \
        -td "$work/out" < "$work/files"
}
syntax() { xargs -n 200 "$FC" -std=legacy -fsyntax-only -w < "$work/files"; }

t_dump=$(cpu dump)
t_inst=$(cpu instrument)
t_fc=$(cpu syntax)
awk -v l="$lines" -v d="$t_dump" -v i="$t_inst" -v g="$t_fc" -v fc="$FC" '
    function rate(t) { return t > 0 ? l / t : 0 }
    BEGIN {
        printf "%-28s %8.2f s CPU %12.0f lines/s\n", "kmrun --dump (front end)", d, rate(d)
        printf "%-28s %8.2f s CPU %12.0f lines/s\n", "kmrun -td (instrumenting)", i, rate(i)
        printf "%-28s %8.2f s CPU %12.0f lines/s\n", fc " -fsyntax-only", g, rate(g)
        if (d > 0 && i > 0)
            printf "kmrun is %.1f times as fast as %s -fsyntax-only (front end), %.1f times (instrumenting)\n", g / d, fc, g / i
    }'
written=$(find "$work/out" -name 'KM_*.f' | wc -l)
distinct=$(sed 's|.*/||' "$work/files" | sort -u | wc -l)
# (files of the same name in different directories share one KM_ file)
echo "kmrun wrote $written KM_ files for the $distinct distinct file names"
errs=$(grep -c ': error: ' "$work/errors" || true)
echo "error messages, all three runs: $errs"
grep ': error: ' "$work/errors" | head -5
