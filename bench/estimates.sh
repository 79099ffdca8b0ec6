#!/bin/sh
# estimates.sh — how well libkm's estimates follow a cost that changes,
# and what an execution costs, measured here and now (run by hand, not in
# CI; `make bench` from the build directory runs it after runtime.sh).
#
#   bench/estimates.sh [BUILDDIR]        (default: build/ next to bench/)
#
# The program is fixtures/run/changing-cost: six routines called 200,000
# times each, doing their own work, whose cost per call ramps up
# (RAMPUP), ramps down (RAMPDN), jumps tenfold halfway (STEP), takes one of
# two values at random (BIMOD) or in turn (ALTERN), or never changes
# (CONST).  It is instrumented at the default levels and run, side by side
# and in turns, uninstrumented, with every execution measured
# (KM_TIME_PREDICTION_MODE_NUMBER=0) and at thresholds 10, 1000 and 100000
# (the default), where past the threshold executions are sampled.
#
# For each routine and threshold it prints the elapsed time of the
# sampled run against the run that measured every call:
#   raw    E / M - 1: both runs keep some of libkm's overhead in a routine's
#          time (the start-up calibration is a best case), a measured
#          execution more than an estimated one, so this mixes the
#          overhead left in with the error of the estimate;
#   error  the error of the estimate alone, ((E - M) - (E_C - M_C)) / M:
#          CONST's cost never changes, so its estimate holds no error of
#          that kind, and every routine runs as often, so the overhead
#          left in (E_C - M_C) is the same for each and cancels out.
# and the cost of an execution (instrumented run less the plain one, per
# region execution) in each run, with libkm's own figure for its overhead
# (the header figure "libkm overhead") beside the real one (the run less
# the plain one) and their ratio; and last, one line per cost shape with
# the error of its estimate at the default threshold against the goal of
# issue 27 (within 5%).  Medians over REPEAT runs (default 7).  With
# BASELINE=REV, kmrun and libkm of git revision REV (bench/baseline.sh)
# instrument the program too, run in turns with every call measured and
# at the default threshold: the last lines show its error beside today's.
here=$(cd "$(dirname "$0")" && pwd)
WORK_PREFIX=kmest . "$here/common.sh"

src=$top/fixtures/run/changing-cost/changing.f
mkdir inst
cp "$top/control/KM_control.dat" inst/
"$KMRUN" -y -td inst "$src" 2> kmrun.log || die "kmrun failed"
# shellcheck disable=SC2086
$F77 $FFLAGS -o plain "$src" || die "cannot build the plain program"
# shellcheck disable=SC2086
$F77 $FFLAGS -o prog inst/KM_changing.f "$LIBKM" || die "cannot build the instrumented one"
baselines=
if [ -n "${BASELINE:-}" ]; then
    base=$(sh "$here/baseline.sh" "$BASELINE" "$build") || exit 1
    mkdir binst
    cp "$base/../src/control/KM_control.dat" binst/
    "$base/kmrun/kmrun" -y -td binst "$src" 2> bkmrun.log ||
        die "the baseline's kmrun failed"
    # shellcheck disable=SC2086
    $F77 $FFLAGS -o baseprog binst/KM_changing.f "$base/runtime/libkm.a" ||
        die "cannot build the baseline's instrumented program"
    baselines="0 100000"
fi

# seconds a command takes
seconds() {
    s=$(date +%s.%N)
    "$@" > /dev/null 2>&1
    e=$(date +%s.%N)
    echo "$e - $s" | bc
}

thresholds="0 10 1000 100000"
mkdir runs
i=0
while [ "$i" -lt "$REPEAT" ]; do
    echo "plain $(seconds ./plain)" >> runs/times
    for t in $thresholds; do
        d=runs/$t.$i
        mkdir "$d"
        (cd "$d" && KM_TIME_PREDICTION_MODE_NUMBER=$t &&
            export KM_TIME_PREDICTION_MODE_NUMBER &&
            echo "$t $(seconds ../../prog)" >> ../times)
        [ -f "$d/KM_output.000" ] || die "no KM_output at threshold $t"
    done
    for t in $baselines; do
        d=runs/b$t.$i
        mkdir "$d"
        (cd "$d" && KM_TIME_PREDICTION_MODE_NUMBER=$t &&
            export KM_TIME_PREDICTION_MODE_NUMBER && ../../baseprog > /dev/null 2>&1)
        [ -f "$d/KM_output.000" ] || die "no KM_output from the baseline at threshold $t"
    done
    i=$((i + 1))
done

# One line per run: threshold, then name=elapsed for every routine, and
# the executions of every region (routines and locations).
for d in runs/*.*; do
    t=${d#runs/}
    t=${t%.*}
    awk -v t="$t" '
        /^! +No Routine/ { tab = 1; next }
        /^!/ { tab = 0; next }
        tab { v = $3; sub(/^~/, "", v); el[$2] = v; c = $5; sub(/^\+/, "", c); n += c }
        /^ *[0-9]+ (DO|CALL|MPI|IO|USER) / { c = $5; sub(/^\+/, "", c); n += c }
        /! libkm overhead$/ { o = $1; sub(/^~/, "", o) }
        END { printf "%s n=%d o=%s", t, n, o
              for (r in el) printf " %s=%s", r, el[r]
              printf "\n" }' "$d/KM_output.000"
done > figures

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2> /dev/null | head -1)
echo "kmtool estimates benchmark, $(date '+%Y-%m-%d %H:%M')"
echo "machine: ${cpu:-unknown}, $(getconf _NPROCESSORS_ONLN 2> /dev/null) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2> /dev/null)"
echo "program: fixtures/run/changing-cost, default levels, $REPEAT runs of each, medians"
echo
awk -v ths="$thresholds" '
function median(list,    n, a, i, j, x) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) {          # insertion sort
        x = a[i]
        for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
        a[j + 1] = x
    }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
FILENAME == "runs/times" { time[$1] = time[$1] " " $2; next }
{
    t = $1; sub(/^n=/, "", $2); calls[t] = calls[t] " " $2
    sub(/^o=/, "", $3); ovh[t] = ovh[t] " " $3
    for (i = 4; i <= NF; i++) {
        split($i, kv, "=")
        el[t, kv[1]] = el[t, kv[1]] " " kv[2]
    }
}
END {
    split("RAMPUP RAMPDN STEP BIMOD ALTERN CONST", rs, " ")
    nt = split(ths, th, " ")
    printf "%-8s %-9s %12s %12s %8s %8s\n", "routine", "threshold", "estimated(s)", "every call(s)", "raw", "error"
    for (k = 1; k <= 6; k++) {
        r = rs[k]
        m = median(el[0, r]); mc = median(el[0, "CONST"])
        for (j = 2; j <= nt; j++) {
            t = th[j]
            e = median(el[t, r]); ec = median(el[t, "CONST"])
            raw = e / m - 1
            err = ((e - m) - (ec - mc)) / m
            printf "%-8s %-9s %12.4e %12.4e %+7.1f%% %+7.1f%%\n", r, t, e, m, 100 * raw, 100 * err
        }
    }
    plain = median(time["plain"])
    printf "\nwhole run (s), what one region execution costs it (ns), and the\n"
    printf "figure libkm gives for its overhead against the run less the plain one (s):\n"
    printf "  %-26s %8.4f\n", "uninstrumented", plain
    for (j = 1; j <= nt; j++) {
        t = th[j]
        w = median(time[t]); n = median(calls[t]); o = median(ovh[t])
        printf "  %-26s %8.4f  %6.2f ns/execution  overhead figure %.4f of %.4f = %.2f (goal 0.85-1.15)\n", \
               (t == 0 ? "every execution measured" : "threshold " t), w, \
               1e9 * (w - plain) / n, o, w - plain, o / (w - plain)
    }
    # the goal table of issue 27: the error of the estimate at the
    # default threshold (the last one), each cost shape
    t = th[nt]
    printf "\nerror of the estimate at the default threshold (%s), goal within 5%%:\n", t
    split("BIMOD bimodal STEP step RAMPUP ramp-up RAMPDN ramp-down ALTERN alternating", sh, " ")
    for (k = 1; k < 10; k += 2) {
        r = sh[k]
        m = median(el[0, r]); mc = median(el[0, "CONST"])
        e = median(el[t, r]); ec = median(el[t, "CONST"])
        err = ((e - m) - (ec - mc)) / m
        printf "  %-12s %+7.1f%%   %-13s", sh[k + 1], 100 * err, \
               (err <= 0.05 && err >= -0.05 ? "within 5%" : "NOT within 5%")
        if (("b0", r) in el) {
            m = median(el["b0", r]); mc = median(el["b0", "CONST"])
            e = median(el["b" t, r]); ec = median(el["b" t, "CONST"])
            printf "   [baseline %+.1f%%]", 100 * ((e - m) - (ec - mc)) / m
        }
        printf "\n"
    }
}' runs/times figures
