#!/bin/sh
# kmview.sh — kmview's time and peak memory at 10^3, 10^4 and 10^5 ranks
# (by hand, not in CI):
#
#   make bench-kmview                    (from the build tree), or
#   bench/kmview.sh BUILDDIR [RANKS...]  (default 1000 10000 100000)
#
# For each size, bench/kmoutgen writes a synthetic run into a temporary
# directory (removed at the end; 10^5 ranks with every block take 1.7
# GB), then every kmview command is timed with /usr/bin/time, one at a
# time (elapsed seconds, CPU seconds in parentheses, maximum resident set
# size): `kmview ranks`
# (the default, and --exact, the O(n^2) method, where its matrix fits in
# EXACT_MAX_MB, default 4096), `kmview ranks --threads`, the summary, the
# CSV and the JSON exports (every figure: their size grows with ranks x
# routines), and the HTML report.  One table, a row per command, a column
# per size, then the sizes of the files and the load average before each
# size (the machine's other jobs slow every figure down: compare runs of
# the same load).
#
# Environment:
#   KMOUTGEN_ARGS  more arguments for kmoutgen; its runs have every block
#                  (Threads, Messages, Peers, Files, MPI-IO, Timeline)
#                  unless told otherwise: "--blocks none" writes the runs
#                  measured before those blocks existed, byte for byte
#   COMMANDS       which rows (default: ranks ranks-exact threads summary
#                  csv json html)
#   EXACT_MAX_MB   as above
set -eu
build=${1:?usage: bench/kmview.sh BUILDDIR [RANKS...]}
shift
sizes=${*:-1000 10000 100000}
kmview=$build/kmview/kmview
gen=$build/bench/kmoutgen
exact_max_mb=${EXACT_MAX_MB:-4096}
commands=${COMMANDS:-ranks ranks-exact threads summary csv json html}
[ -x /usr/bin/time ] || { echo "kmview.sh: needs /usr/bin/time" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kmview-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# "elapsed s (CPU s) peak MB" of one command, its output thrown away:
# the CPU time (user + system) says what the elapsed time would be on an
# idle machine, give or take the writing of the outputs.
measure() {
    if /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err"
    then awk '{ printf "%.2f s (%.2f) %5.0f MB", $1, $2 + $3, $4 / 1024 }' "$tmp/time"
    else echo "failed: $(head -c 60 "$tmp/err")"
    fi
}

label() {
    case $1 in
    ranks) echo "kmview ranks" ;;
    ranks-exact) echo "kmview ranks --exact (old)" ;;
    threads) echo "kmview ranks --threads" ;;
    summary) echo "kmview (summary)" ;;
    csv) echo "kmview -q --csv" ;;
    json) echo "kmview -q --json" ;;
    html) echo "kmview -q --html" ;;
    sizes) echo "file / HTML / JSON" ;;
    load) echo "load average before" ;;
    esac
}

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"; }

for n in $sizes; do
    f=$tmp/run.$n
    # shellcheck disable=SC2086
    "$gen" --ranks "$n" ${KMOUTGEN_ARGS:-} -o "$f"
    echo "load	$n	$(load)" >>"$tmp/results"
    for c in $commands; do
        case $c in
        ranks) r=$(measure "$kmview" ranks "$f") ;;
        ranks-exact)
            if [ $((n / 1000 * n / 1000 * 2)) -le "$exact_max_mb" ]; then
                r=$(measure "$kmview" ranks --exact "$f")
            else
                r="not run ($((n / 1000 * n / 1000 * 2)) MB matrix)"
            fi ;;
        threads) r=$(measure "$kmview" ranks --threads "$f") ;;
        summary) r=$(measure "$kmview" "$f") ;;
        csv) r=$(measure "$kmview" -q --csv="$tmp/csv.$n" "$f") ;;
        json) r=$(measure "$kmview" -q --json="$tmp/json.$n" "$f") ;;
        html) r=$(measure "$kmview" -q --html="$tmp/html.$n" "$f") ;;
        *) echo "kmview.sh: no command '$c'" >&2; exit 2 ;;
        esac
        echo "$c	$n	$r" >>"$tmp/results"
    done
    extra=$(for x in "$f" "$tmp/html.$n" "$tmp/json.$n"; do
                if [ -e "$x" ]; then du -k "$x" | cut -f1; else echo -; fi
            done | awk '{ printf "%s%s", (NR > 1 ? " / " : ""),
                          $1 == "-" ? "-" : sprintf("%.0f MB", $1 / 1024) }')
    echo "sizes	$n	$extra" >>"$tmp/results"
    rm -rf "$f" "$tmp/csv.$n" "$tmp/json.$n" "$tmp/html.$n"
done

echo "kmoutgen --ranks N${KMOUTGEN_ARGS:+ $KMOUTGEN_ARGS} (every block unless told otherwise); $(nproc 2>/dev/null || echo ?) processors"
printf "%-28s" "ranks:"
for n in $sizes; do printf " %-31s" "$n"; done
echo
for c in $commands sizes load; do
    printf "%-28s" "$(label "$c")"
    for n in $sizes; do
        printf " %-31s" "$(awk -F '\t' -v c="$c" -v n="$n" \
            '$1 == c && $2 == n { print $3 }' "$tmp/results")"
    done
    echo
done
