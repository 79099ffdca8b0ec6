#!/bin/sh
# trace.sh — what reading libkm's binary trace costs kmview, at 10^6 and
# 10^7 events (by hand, not in CI):
#
#   make bench-trace                     (from the build tree), or
#   bench/trace.sh BUILDDIR [EVENTS...]  (default 1000000 10000000)
#
# For each size, tests/kmview/kmtracegen writes RANKS (default 4) trace
# files of EVENTS / RANKS events each (one thread, nesting 6 deep, a
# message to the next rank every few events for the first MESSAGES per
# rank, default 50,000) into a temporary directory (removed at the end),
# then each command is timed with /usr/bin/time, one at a time: elapsed
# and CPU seconds, and the maximum resident set size.  The commands:
# `kmview trace` (the text: one pass over every record), `kmview trace
# --json` (Trace Event JSON: a second pass, written out), and the HTML
# report with the Trace view (`kmview KM_output --html --trace`).  Then
# the sizes of the traces, the JSON and the report, and the load average
# (other jobs slow every figure down).
set -eu
build=${1:?usage: bench/trace.sh BUILDDIR [EVENTS...]}
shift
sizes=${*:-1000000 10000000}
ranks=${RANKS:-4}
messages=${MESSAGES:-50000}
kmview=$build/kmview/kmview
gen=$build/tests/kmview/kmtracegen
kmgen=$build/tests/kmview/kmgen
[ -x /usr/bin/time ] || { echo "trace.sh: needs /usr/bin/time" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trace-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# timed LABEL COMMAND...: one row of the table.
timed() {
    label=$1
    shift
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null
    read -r e u s m <"$tmp/time"
    cpu=$(echo "$u $s" | awk '{ printf "%.2f", $1 + $2 }')
    printf '  %-10s %8.2f s (cpu %6s s) %8d MB\n' "$label" "$e" "$cpu" $((m / 1024))
}

size() { du -k --apparent-size "$@" | awk '{ s += $1 } END { printf "%.1f MB", s / 1024 }'; }

"$kmgen" profile "$tmp/run.out" /dev/null --ranks "$ranks" --routines 9 --locations 3
for n in $sizes; do
    d=$tmp/t$n
    mkdir "$d"
    echo "$n events ($ranks ranks), load $(cut -d' ' -f1-3 /proc/loadavg):"
    "$gen" --ranks "$ranks" --events $((n / ranks)) --messages "$messages" --depth 6 "$d"
    echo "  traces: $(size "$d"/KM_trace.*) (sparse zeros included), $(awk '$1 == "events" { print $2 }' "$d/expect") events, $(awk '$1 == "regions" { print $2 }' "$d/expect") regions, $(awk '$1 == "matched" { print $2 }' "$d/expect") messages"
    timed text "$kmview" trace "$d"/KM_trace.*
    timed json "$kmview" trace -q --json="$d/trace.json" "$d"/KM_trace.*
    echo "  JSON: $(size "$d/trace.json")"
    rm -f "$d/trace.json"
    timed html "$kmview" -q --html="$d/report.html" "$tmp/run.out" --trace "$d"/KM_trace.*
    echo "  report: $(size "$d/report.html")"
    rm -rf "$d"
done
