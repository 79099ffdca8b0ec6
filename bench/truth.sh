#!/bin/sh
# truth.sh — are libkm's times true, on the three cases where an audit
# found them wrong (issue 27)?  Run by hand, not in CI; `make bench` from
# the build directory runs it after estimates.sh.
#
#   bench/truth.sh [BUILDDIR]        (default: build/ next to bench/)
#
# The programs are the run fixtures tests/truth.test checks (one program
# each, so that the benchmark and the test measure the same thing); each
# is built plain and instrumented at the default levels, linked straight
# to libkm, and run REPEAT times (default 7), the settings taking turns:
#   bimodal-cost    every 7th call of WORK costs 50 times the others,
#                   10^6 calls: WORK's estimated time (default threshold)
#                   against WORK with every call measured, and against the
#                   plain build's loop as the program times it;
#   busy-neighbour  WORK of constant cost, 10^6 calls from LOOP, pinned to
#                   processor 0 beside a busy loop pinned there too
#                   (taskset; left out without it): LOOP's net time as a
#                   share of the run at the default threshold and with
#                   every call measured, and WORK's share at the one
#                   against the other;
#   short-routine   NEXTX, about 20 ns of dependent floating-point steps,
#                   10^6 calls, every call measured: its time on the
#                   default clock against the plain build's own loop time
#                   (the goal), and KM_CLOCK=monotonic's against it too.
# Figures are taken from the quietest run of each setting (the shortest
# loop, as the program timed it), but for the busy neighbour, where every
# run waits by design: medians.  Each line has issue 27's goal beside it.
# With BASELINE=REV in the environment, kmrun and libkm of git revision
# REV (bench/baseline.sh builds them) instrument each program too, and
# that build takes its turn beside today's: each figure then shows the
# baseline's value after today's.
here=$(cd "$(dirname "$0")" && pwd)
WORK_PREFIX=kmtruth . "$here/common.sh"

base=
if [ -n "${BASELINE:-}" ]; then
    base=$(sh "$here/baseline.sh" "$BASELINE" "$build") || exit 1
fi

# instrument NAME PROG BUILD SRCTOP: fixtures/run/NAME at the default
# levels, with the kmrun and libkm of BUILD (SRCTOP's default control),
# linked into NAME/PROG
instrument() {
    rm -rf "$1/inst"
    mkdir -p "$1/inst"
    "$3/kmrun/kmrun" --default-control="$4/control/KM_control.dat" -y \
        -td "$1/inst" "$top/fixtures/run/$1"/*.f < /dev/null \
        > "$1/kmrun.log" 2>&1 || die "kmrun ($3) failed on $1"
    # shellcheck disable=SC2086
    (cd "$1/inst" && $F77 $FFLAGS -o "../$2" KM_*.f "$3/runtime/libkm.a") ||
        die "cannot build the instrumented $1 ($3)"
}

# build NAME: fixtures/run/NAME, plain (NAME/plain), at the default levels
# (NAME/prog) and, with BASELINE, so by the baseline (NAME/baseprog)
build() {
    # shellcheck disable=SC2086
    $F77 $FFLAGS -o "$1/plain" "$top/fixtures/run/$1"/*.f ||
        die "cannot build $1"
    instrument "$1" prog "$build" "$top"
    [ -n "$base" ] && instrument "$1" baseprog "$base" "$base/../src"
}

# run NAME TAG ROUND [PREFIX...]: one run of NAME/prog (NAME/plain for tag
# plain); its output in NAME/TAG.ROUND.out, KM_output in NAME/TAG.ROUND.km
run() {
    name=$1 tag=$2 round=$3
    shift 3
    exe=../prog
    [ "$tag" = plain ] && exe=../plain
    case $tag in base*) exe=../baseprog ;; esac
    mkdir -p "$name/run"
    # shellcheck disable=SC2086
    (cd "$name/run" && rm -f KM_output.* &&
        TRUTH_TIMES=1 "$@" $exe > "../$tag.$round.out" 2> /dev/null &&
        { [ "$tag" = plain ] || mv KM_output.000 "../$tag.$round.km"; }) ||
        die "$name: the $tag run failed"
}

# quiet NAME TAG: the round of NAME/TAG.*.out with the shortest loop
quiet() {
    for f in "$1/$2".*.out; do
        r=${f#"$1/$2".}
        echo "${r%.out} $(awk '$1 == "loop" { print $3 }' "$f")"
    done | sort -g -k2 | awk 'NR == 1 { print $1 }'
}
loop() { awk '$1 == "loop" { print $3 }' "$1/$2.$(quiet "$1" "$2").out"; }
# figure FILE ROUTINE COLUMN: elapsed (4) or net (5) of a routine
figure() { awk -f "$top/tests/kmout.awk" "$1" | awk -v r="$2" -v c="$3" '$2 == r { print $c }'; }
quiet_elapsed() { figure "$1/$2.$(quiet "$1" "$2").km" "$3" 4; }
total() { awk '/! Total time$/ { sub(/^~/, "", $1); print $1; exit }' "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

for p in bimodal-cost short-routine busy-neighbour; do
    mkdir -p $p
    build $p
done
pin=
if command -v taskset > /dev/null 2>&1 && taskset -c 0 true 2> /dev/null; then
    pin=yes
fi

i=1
while [ "$i" -le "$REPEAT" ]; do
    run bimodal-cost plain $i
    run bimodal-cost default $i
    run bimodal-cost every $i env KM_TIME_PREDICTION_MODE_NUMBER=0
    run short-routine plain $i
    run short-routine tsc $i env KM_TIME_PREDICTION_MODE_NUMBER=0
    run short-routine monotonic $i env KM_TIME_PREDICTION_MODE_NUMBER=0 KM_CLOCK=monotonic
    if [ -n "$base" ]; then
        run bimodal-cost base $i
        run short-routine basetsc $i env KM_TIME_PREDICTION_MODE_NUMBER=0
    fi
    i=$((i + 1))
done
if [ -n "$pin" ]; then
    taskset -c 0 sh -c 'while :; do :; done' &
    busy=$!
    i=1
    while [ "$i" -le "$REPEAT" ]; do
        run busy-neighbour default $i taskset -c 0
        run busy-neighbour every $i env KM_TIME_PREDICTION_MODE_NUMBER=0 taskset -c 0
        [ -n "$base" ] && run busy-neighbour base $i taskset -c 0
        i=$((i + 1))
    done
    kill "$busy"
    busy=
fi

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2> /dev/null | head -1)
echo "kmtool truth benchmark, $(date '+%Y-%m-%d %H:%M')"
echo "machine: ${cpu:-unknown}, $(getconf _NPROCESSORS_ONLN 2> /dev/null) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2> /dev/null)"
echo "programs: fixtures/run/{bimodal-cost,busy-neighbour,short-routine}, default levels, $REPEAT runs of each setting"
[ -n "$base" ] && echo "baseline: $BASELINE (its kmrun and libkm), after today's figure as [baseline ...]"

# ---- bimodal ---------------------------------------------------------------
est=$(quiet_elapsed bimodal-cost default WORK)
every=$(quiet_elapsed bimodal-cost every WORK)
plain=$(loop bimodal-cost plain)
b=
[ -n "$base" ] && b=$(quiet_elapsed bimodal-cost base WORK)
echo
echo "bimodal cost (every 7th call of WORK 50x, 10^6 calls; quietest runs)"
awk -v e="$est" -v m="$every" -v p="$plain" -v l="$(loop bimodal-cost default)" -v b="$b" 'BEGIN {
    printf "  WORK estimated (threshold 100000)  %9.4f s", e
    if (b != "") printf "   [baseline %.4f s]", b
    printf "\n  WORK, every call measured          %9.4f s   estimate %+6.1f%%   (goal within 5%%)", m, 100 * (e / m - 1)
    if (b != "") printf "   [baseline %+.1f%%]", 100 * (b / m - 1)
    printf "\n  plain build, the loop around WORK  %9.4f s   estimate %+6.1f%%   (goal within 5%%; the loop holds its own control too)", p, 100 * (e / p - 1)
    if (b != "") printf "   [baseline %+.1f%%]", 100 * (b / p - 1)
    printf "\n  the loop in the instrumented run   %9.4f s   (WORK %.2f of it)\n", l, e / l
}'

# ---- busy neighbour ------------------------------------------------------------
echo
if [ -n "$pin" ]; then
    share() {
        for f in busy-neighbour/"$1".*.km; do
            awk -v x="$(figure "$f" "$2" "$3")" -v t="$(total "$f")" 'BEGIN { print x / t }'
        done | median
    }
    echo "waiting for the processor (pinned with a busy loop to one CPU; medians)"
    lb="" wb=""
    if [ -n "$base" ]; then
        lb=$(share base LOOP 5)
        wb=$(share base WORK 4)
    fi
    awk -v ld="$(share default LOOP 5)" -v le="$(share every LOOP 5)" \
        -v wd="$(share default WORK 4)" -v we="$(share every WORK 4)" \
        -v lb="$lb" -v wb="$wb" 'BEGIN {
        printf "  LOOP net, default threshold        %6.1f%% of the run", 100 * ld
        if (lb != "") printf "   [baseline %.1f%%]", 100 * lb
        printf "\n  LOOP net, every call measured      %6.1f%% of the run   (goal: the default within 5 points of this)\n", 100 * le
        printf "  WORK, default / every call         %6.1f%% / %.1f%% of the run = %+.1f%%   (goal within 5%%)", 100 * wd, 100 * we, 100 * (wd / we - 1)
        if (wb != "") printf "   [baseline %+.1f%%]", 100 * (wb / we - 1)
        printf "\n"
    }'
else
    echo "waiting for the processor: not measured (no taskset to pin the program and a busy loop)"
fi

# ---- short routine ---------------------------------------------------------------
tsc=$(quiet_elapsed short-routine tsc NEXTX)
mono=$(quiet_elapsed short-routine monotonic NEXTX)
plain=$(loop short-routine plain)
clock=$(sed -n 's/^! Clock *: //p' short-routine/tsc.1.km | sed 's/ (.*//')
b=
[ -n "$base" ] && b=$(quiet_elapsed short-routine basetsc NEXTX)
echo
echo "short routine (NEXTX, ~20 ns of dependent steps, 10^6 calls, every call measured; quietest runs)"
awk -v t="$tsc" -v m="$mono" -v p="$plain" -v c="$clock" -v b="$b" 'BEGIN {
    printf "  NEXTX, default clock               %9.4f s   (%s)", t, c
    if (b != "") printf "   [baseline %.4f s]", b
    printf "\n  plain build, its own loop          %9.4f s   default clock %+6.1f%%   (goal within 10%%)", p, 100 * (t / p - 1)
    if (b != "") printf "   [baseline %+.1f%%]", 100 * (b / p - 1)
    printf "\n  NEXTX, KM_CLOCK=monotonic          %9.4f s   plain loop %+6.1f%%   (a second clock: the two agree)\n", m, 100 * (m / p - 1)
}'
