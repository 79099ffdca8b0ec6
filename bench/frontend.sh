#!/bin/bash
# frontend.sh — how fast kmrun reads Fortran, fixed form and free form,
# next to gfortran -fsyntax-only.
#
#   bench/frontend.sh [-k KMRUN] [DIR]
#
# Reads every .f file (fixed form) and every .f90 file (free form) under
# DIR (LAPACK's top directory is a good DIR) or, without DIR, a synthetic
# input generated here (bench/gen-fortran.awk: about a million lines of
# FORTRAN 77 in 200 files, written once in fixed form and once, the same
# code, in free form), three ways, each on one core, one after the other
# in this one run:
#   kmrun --dump        the front end alone (reader, classifier, scanner,
#                       parser), its dump thrown away;
#   kmrun -td           the whole instrumentation, KM_ files written;
#   gfortran -fsyntax-only, the compiler's own syntax and semantic check.
# It prints lines per second of CPU time (user + system) for each, and the
# ratio of kmrun's speed to gfortran's, for each form.  A benchmark, not a
# test: run it by hand; the machine's other load changes the figures, much
# less the ratio.
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
    find "$1" -name '*.f' -type f | sort > "$work/fixed"
    find "$1" -name '*.f90' -type f | sort > "$work/free"
    what="the .f and .f90 files under $1"
else
    mkdir "$work/src" "$work/src90"
    awk -v dir="$work/src" -v files=200 -v routines=46 \
        -f "$here/gen-fortran.awk"
    awk -v dir="$work/src90" -v files=200 -v routines=46 -v form=free \
        -f "$here/gen-fortran.awk"
    find "$work/src" -name '*.f' | sort > "$work/fixed"
    find "$work/src90" -name '*.f90' | sort > "$work/free"
    what="a synthetic input (bench/gen-fortran.awk), in both forms"
fi
echo "input: $what"

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

# Every file of the list $files on one command line (xargs splits only
# very long lists).
dump() { xargs "$kmrun" --dump < "$files"; }
instrument() {
    rm -rf "$work/out"
    mkdir -p "$work/out"
    xargs "$kmrun" -y --default-control="$top/control/KM_control.dat" \
        -td "$work/out" < "$files"
}
syntax() { xargs -n 200 "$FC" -std=legacy -fsyntax-only -w < "$files"; }

# measure FORM LIST: the three runs over the files of LIST.
measure() {
    form=$1
    files=$2
    nfiles=$(wc -l < "$files")
    if [ "$nfiles" -eq 0 ]; then
        echo "$form form: no files"
        return
    fi
    lines=$(xargs cat < "$files" | wc -l)
    echo "$form form: $nfiles files, $lines lines"
    t_dump=$(cpu dump)
    t_inst=$(cpu instrument)
    t_fc=$(cpu syntax)
    awk -v l="$lines" -v d="$t_dump" -v i="$t_inst" -v g="$t_fc" -v fc="$FC" '
        function rate(t) { return t > 0 ? l / t : 0 }
        BEGIN {
            printf "  %-28s %8.2f s CPU %12.0f lines/s\n", "kmrun --dump (front end)", d, rate(d)
            printf "  %-28s %8.2f s CPU %12.0f lines/s\n", "kmrun -td (instrumenting)", i, rate(i)
            printf "  %-28s %8.2f s CPU %12.0f lines/s\n", fc " -fsyntax-only", g, rate(g)
            if (d > 0 && i > 0)
                printf "  kmrun is %.1f times as fast as %s -fsyntax-only (front end), %.1f times (instrumenting)\n", g / d, fc, g / i
        }'
    written=$(find "$work/out" \( -name 'KM_*.f' -o -name 'KM_*.f90' \) | wc -l)
    distinct=$(sed 's|.*/||' "$files" | sort -u | wc -l)
    # (files of the same name in different directories share one KM_ file)
    echo "  kmrun wrote $written KM_ files for the $distinct distinct file names"
}

measure fixed "$work/fixed"
measure free "$work/free"
errs=$(grep -c ': error: ' "$work/errors" || true)
echo "error messages, all runs: $errs"
grep ': error: ' "$work/errors" | head -5
