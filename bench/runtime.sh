#!/bin/sh
# runtime.sh — what libkm costs, measured here and now (run by hand, not in
# CI; `make bench` from the build directory runs it).
#
#   bench/runtime.sh [BUILDDIR]        (default: build/ next to bench/)
#
# Prints, in one run (BASELINE=REV adds the hot path of libkm at git
# revision REV, built here, beside today's, and REV's instrumentation of
# each whole program at the default levels, bench/baseline.sh's build of
# its kmrun and libkm, as one more build taking its turn):
#   * the cost of one clock read (libkm's clock, and CLOCK_MONOTONIC);
#   * the cost of a KM_IN + KM_OUT pair that reads the clock, one past the
#     extrapolation threshold, one that is traced (bench/hotpath.c), and
#     the first two per thread on 1, 2, 4, 8 and 16 threads at once;
#   * the whole-program overhead of the bundled examples (examples/heat on
#     2 MPI ranks, examples/solve run 20 times over) and of a call-heavy
#     kernel (bench/kernel.f, bench/cell.f), instrumented by kmrun at the
#     default levels, at the maximum levels, and at the maximum levels
#     with extrapolation off (KM_TIME_PREDICTION_MODE_NUMBER=0), each as a
#     ratio to the uninstrumented build run side by side; and the default
#     instrumentation linked with empty entry points (bench/stub.c), which
#     shows what instrumenting does to the compiled code apart from libkm
#     (calls, inlining, and the layout of code and data, which alone can
#     move a program's time by several per cent either way); and for
#     each program libkm's own overhead figure (KM_output's header)
#     against the time the default build really added.
# Each figure of issue 27's goal table is printed with its goal beside it.
#
# The machine may be shared: every program is run REPEAT times (default 7),
# the builds taking turns, and the ratios compare the fastest runs (the
# least disturbed).  Environment: F77 MPIF77 MPIRUN MPIRUN_FLAGS CC FFLAGS
# REPEAT; HOT_ONLY=1 stops after the hot path.  Work files go to a
# temporary directory, removed at the end.
here=$(cd "$(dirname "$0")" && pwd)
WORK_PREFIX=kmbench . "$here/common.sh"
: "${MPIF77:=mpif77}"
: "${MPIRUN:=mpirun}"
if [ -z "${MPIRUN_FLAGS+set}" ]; then
    MPIRUN_FLAGS=--oversubscribe
    [ "$(id -u)" = 0 ] && MPIRUN_FLAGS="--allow-run-as-root $MPIRUN_FLAGS"
fi

say() { printf '%s\n' "$*"; }

# the baseline's kmrun and libkm (BASELINE=REV), built once by baseline.sh
base=
if [ -n "${BASELINE:-}" ]; then
    base=$(sh "$here/baseline.sh" "$BASELINE" "$build") || exit 1
fi

# ---- the hot path -----------------------------------------------------------
$CC -std=gnu11 -O2 -D_POSIX_C_SOURCE=200809L -I"$build" -I"$top" \
    -o hotpath "$here/hotpath.c" "$LIBKM" -lpthread || die "cannot build hotpath.c"
$CC -O2 -I"$build" -I"$top" -c -o stub.o "$here/stub.c" || die "cannot build stub.c"
mkdir hot && (cd hot && ../hotpath) > hot.txt || die "hotpath failed"
val() { awk -v k="$1" '$1 == k { print $2 }' hot.txt; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2> /dev/null | head -1)
say "kmtool runtime benchmark, $(date '+%Y-%m-%d %H:%M')"
say "machine: ${cpu:-unknown}, $(getconf _NPROCESSORS_ONLN 2> /dev/null) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2> /dev/null)"
say "clock:   $(sed -n 's/^clock //p' hot.txt)"
say ""
say "Hot path (best of 400 batches in 40 rounds)"
awk -v r="$(val read)" -v m="$(val monotonic)" -v p="$(val pair)" \
    -v x="$(val extrapolated)" -v t="$(val traced)" -v a="$(val alternating)" \
    -v tp="$(val thread_pair)" -v tx="$(val thread_extrapolated)" 'BEGIN {
    printf "  clock read                      %7.2f ns   (CLOCK_MONOTONIC %.2f ns)\n", r, m
    printf "  KM_IN + KM_OUT, measured        %7.2f ns   = %.2f x two clock reads   (goal <= 25 ns, reads ordered)\n", p, p / (2 * r)
    printf "  KM_IN + KM_OUT, extrapolated    %7.2f ns   (goal <= 2 ns; above 3.5 ns a regression)\n", x
    printf "  KM_IN + KM_OUT, traced          %7.2f ns\n", t
    printf "  ... extrapolated, two callees   %7.2f ns   (each pair; alternating in one slot of their caller'"'"'s cache)\n", a
    printf "  on another thread: measured     %7.2f ns   (%.3f x the program thread'"'"'s)\n", tp, tp / p
    printf "  on another thread: extrapolated %7.2f ns   (%.3f x)\n", tx, tx / x
}'
# (each thread's best batch, mean over the threads; goal: flat)
awk '$1 == "threads_pair" { p[$2] = $3; n[++k] = $2 }
     $1 == "threads_extrapolated" { x[$2] = $3 }
     END {
         if (!k) exit
         printf "  per thread, threads at once   "
         for (i = 1; i <= k; i++) printf " %6d", n[i]
         printf "\n  measured pair (ns)            "
         for (i = 1; i <= k; i++) printf " %6.2f", p[n[i]]
         printf "   %d/1: %.3f x (goal flat)\n", n[k], p[n[k]] / p[n[1]]
         printf "  extrapolated pair (ns)        "
         for (i = 1; i <= k; i++) printf " %6.2f", x[n[i]]
         printf "   %d/1: %.3f x (goal flat)\n", n[k], x[n[k]] / x[n[1]]
     }' hot.txt

# ---- the hot path before and after (BASELINE=REV) ----------------------------
# The baseline's libkm and the same hotpath.c linked against each (with
# each revision's own headers), run in turns: the change's cost side by
# side.
if [ -n "$base" ]; then
    $CC -std=gnu11 -O2 -D_POSIX_C_SOURCE=200809L -I"$base" -I"$base/../src" \
        -o hotpath-base "$here/hotpath.c" "$base/runtime/libkm.a" -lpthread ||
        die "cannot build hotpath.c against $BASELINE"
    for round in 1 2 3; do
        (cd hot && ../hotpath-base) >> hot-base.txt
        (cd hot && ../hotpath) >> hot-now.txt
    done
    best() { awk -v k="$1" '$1 == k && (b == "" || $2 < b) { b = $2 } END { print b }' "$2"; }
    say ""
    say "Hot path before ($BASELINE) and now, side by side (best of 3 turns each)"
    for k in pair extrapolated traced alternating; do
        awk -v k="$k" -v b="$(best $k hot-base.txt)" -v n="$(best $k hot-now.txt)" 'BEGIN {
            printf "  KM_IN + KM_OUT, %-14s %7.2f ns -> %7.2f ns   (%+.2f ns, %.3f x)\n", k, b, n, n - b, n / b }'
    done
    # the per-thread sweep, if both revisions' runs printed it
    for k in threads_pair threads_extrapolated; do
        for n in 1 2 4 8 16; do
            b=$(awk -v k=$k -v n=$n '$1 == k && $2 == n && (b == "" || $3 < b) { b = $3 } END { print b }' hot-base.txt)
            c=$(awk -v k=$k -v n=$n '$1 == k && $2 == n && (b == "" || $3 < b) { b = $3 } END { print b }' hot-now.txt)
            what=measured
            [ $k = threads_extrapolated ] && what=extrapolated
            [ -n "$b" ] && [ -n "$c" ] && awk -v k="$what" -v n=$n -v b="$b" -v c="$c" 'BEGIN {
                printf "  %-12s pair, %2d threads %7.2f ns -> %7.2f ns   (%+.2f ns, %.3f x)\n", k, n, b, c, c - b, c / b }'
        done
    done
fi

[ -n "${HOT_ONLY:-}" ] && exit 0

# ---- whole programs -----------------------------------------------------------
cat > max.dat <<'EOF'
! every level at its maximum
ROUTINE_MEASURED_LEVEL = 2
DOLOOP_MEASURED_LEVEL = 99
CALL_MEASURED_LEVEL = 2
MPI_MEASURED_LEVEL = 2
IO_MEASURED_LEVEL = 2
EOF

# instrument NAME CONTROL FILES...: kmrun FILES into NAME/ with CONTROL
# (empty: the default control file)
# (DIR .../base: with the baseline's kmrun and its default control file)
instrument() {
    dir=$1 control=$2
    shift 2
    mkdir -p "$dir"
    [ -n "$control" ] && cp "$control" "$dir/KM_control.dat"
    kmrun=$KMRUN ctop=$top
    case $dir in
    */base) kmrun=$wholebase/kmrun/kmrun ctop=$wholebase/../src ;;
    esac
    "$kmrun" --default-control="$ctop/control/KM_control.dat" -y -td "$dir" \
        "$@" < /dev/null > "$dir/kmrun.log" 2>&1 ||
        die "kmrun failed on $*: $(tail -3 "$dir/kmrun.log")"
}

# build PROG COMPILER FILES...: plain, default, max and stub builds of one
# program in PROG/{plain,default,max,stub}, and with BASELINE the
# baseline's default build in PROG/base
build() {
    prog=$1 fc=$2
    shift 2
    mkdir -p "$prog/plain"
    $fc $FFLAGS -o "$prog/plain/prog" "$@" > "$prog/build.log" 2>&1 ||
        die "cannot build $prog: $(tail -3 "$prog/build.log")"
    for cfg in default max $basecfg; do
        control=
        [ $cfg = max ] && control=$work/max.dat
        instrument "$prog/$cfg" "$control" "$@"
        kmfiles=
        for f in "$@"; do
            kmfiles="$kmfiles $prog/$cfg/KM_$(basename "$f")"
        done
        # (libkm's MPI calls, written by kmrun for an MPI program)
        [ -f "$prog/$cfg/KM_libkm_mpi.f" ] &&
            kmfiles="$kmfiles $prog/$cfg/KM_libkm_mpi.f"
        lib=$LIBKM
        [ $cfg = base ] && lib=$wholebase/runtime/libkm.a
        # shellcheck disable=SC2086
        $fc $FFLAGS -o "$prog/$cfg/prog" $kmfiles "$lib" >> "$prog/build.log" 2>&1 ||
            die "cannot build the $cfg $prog: $(tail -3 "$prog/build.log")"
    done
    mkdir -p "$prog/stub"
    # shellcheck disable=SC2086
    (cd "$prog/default" && $fc $FFLAGS -o ../stub/prog KM_*.f "$work/stub.o") \
        >> "$prog/build.log" 2>&1 ||
        die "cannot build the stub $prog: $(tail -3 "$prog/build.log")"
}

now_ns() { date +%s%N; }

# timed DIR TIMES COMMAND...: run COMMAND (in DIR) TIMES times; seconds
# spent in COMMAND only (the KM_output each run leaves is moved away
# between the clock readings, so that no build pays for its bookkeeping)
timed() {
    dir=$1 times=$2
    shift 2
    (
        cd "$dir" || exit 1
        total=0
        k=0
        while [ $k -lt "$times" ]; do
            t0=$(now_ns)
            "$@" > out 2> err || { echo "failed: $* ($(tail -2 err))" >&2; exit 1; }
            t1=$(now_ns)
            total=$((total + t1 - t0))
            [ -f KM_output.000 ] && mv KM_output.000 last.km
            rm -f KM_output.*
            k=$((k + 1))
        done
        awk -v t="$total" 'BEGIN { printf "%.4f\n", t / 1e9 }'
    )
}

# estimate FILE: seconds libkm spent measuring, from the counts of a
# KM_output (rank 0): every measured execution a measured pair, every
# other one an extrapolated pair, at the hot path's costs above
estimate() {
    awk -v pair="$(val pair)" -v x="$(val extrapolated)" '
        /^! ===== / { sec = ($3 == "Rank" && $4 == "0") }
        !sec || /^!/ { next }
        /! Counts of time get function$/ { reads = $1; next }
        /! / { next }
        NF >= 6 && $5 ~ /^\+?[0-9]+$/ { c = $5; sub(/^\+/, "", c); n += c }
        END { m = reads / 2; printf "%.6f\n", (m * pair + (n - m) * x) * 1e-9 }' "$1"
}

# overhead FILE: libkm's own figure for its overhead (the header line
# "libkm overhead"), the largest over the ranks (the run waits for the
# slowest)
overhead() {
    awk '/! libkm overhead$/ { v = $1; sub(/^~/, "", v); if (v + 0 > m) m = v + 0 }
         END { printf "%.6f\n", m }' "$1"
}

# measure PROG TIMES LAUNCH...: REPEAT rounds of the builds taking turns;
# one line "PROG plain stub default max nox estimate" with each build's best
# time and the estimate of libkm's cost in the default build
measure() {
    prog=$1 times=$2
    shift 2
    for cfg in plain stub default max $basecfg; do
        for f in "$work/inputs/$prog"/*; do
            [ -f "$f" ] && cp "$f" "$prog/$cfg/"
        done
    done
    r=0
    while [ $r -lt "$REPEAT" ]; do
        for cfg in plain stub default max nox $basecfg; do
            dir=$prog/$cfg
            [ $cfg = nox ] && dir=$prog/max
            if [ $cfg = nox ]; then
                t=$(KM_TIME_PREDICTION_MODE_NUMBER=0 timed "$dir" "$times" "$@" ./prog) || exit 1
            else
                t=$(timed "$dir" "$times" "$@" ./prog) || exit 1
            fi
            echo "$cfg $t"
        done
        r=$((r + 1))
    done > "$prog/times"
    for cfg in stub default max $basecfg; do
        cmp -s "$prog/plain/out" "$prog/$cfg/out" ||
            die "$prog: the $cfg build's output differs from the plain build's"
    done
    awk -v p="$prog" -v est="$(estimate "$prog/default/last.km")" -v n="$times" \
        -v ovh="$(overhead "$prog/default/last.km")" \
        -v bovh="$( [ -n "$basecfg" ] && overhead "$prog/base/last.km")" '
        { if (!($1 in best) || $2 < best[$1]) best[$1] = $2 }
        END { printf "%s %s %s %s %s %s %s %s", p, best["plain"], best["stub"],
              best["default"], best["max"], best["nox"], est * n, ovh * n
              if ("base" in best) printf " %s %s", best["base"], bovh * n
              printf "\n" }' "$prog/times"
}

# the baseline's kmrun and libkm for the whole programs
basecfg='' wholebase=$base
[ -n "$base" ] && basecfg=base

mkdir -p inputs/heat inputs/solve inputs/kernel
# examples/heat as shipped, with four times the sweeps: long enough that
# mpirun's start-up does not drown the difference
sed '2s/^ *2000 /8000 /' "$top/examples/heat/heat.in" > inputs/heat/heat.in
results=
have_mpi=no
if command -v "$MPIF77" > /dev/null 2>&1 && command -v "$MPIRUN" > /dev/null 2>&1 &&
   grep -q 'define KM_HAVE_MPI 1' "$build/config.h"; then
    have_mpi=yes
    build heat "$MPIF77" "$top/examples/heat/heat.f"
    # shellcheck disable=SC2086
    results="$results
$(measure heat 1 nice -n 10 "$MPIRUN" $MPIRUN_FLAGS -np 2)" || exit 1
fi
build solve "$F77" "$top/examples/solve/solve.f"
results="$results
$(measure solve 20 nice -n 10)" || exit 1
build kernel "$F77" "$here/kernel.f" "$here/cell.f"
results="$results
$(measure kernel 1 nice -n 10)" || exit 1

say ""
say "Whole programs (best of $REPEAT runs each, builds taking turns; overhead over the plain build)"
printf '  %-22s %9s %12s %12s %12s %16s %12s%s\n' program "plain(s)" "stub" default \
    "max levels" "max, no extrap." "estimate" "${basecfg:+   baseline default}"
echo "$results" | awk 'NF >= 8 {
    name = $1
    if (name == "heat") name = "heat (2 MPI ranks)"
    if (name == "solve") name = "solve (20 runs)"
    if (name == "kernel") name = "kernel (call-heavy)"
    printf "  %-22s %9.3f %+11.2f%% %+11.2f%% %+11.2f%% %+15.2f%% %+11.3f%%",
           name, $2, 100 * ($3 / $2 - 1), 100 * ($4 / $2 - 1),
           100 * ($5 / $2 - 1), 100 * ($6 / $2 - 1), 100 * $7 / $2
    if (NF >= 10) printf " %+17.2f%%", 100 * ($9 / $2 - 1)
    printf "\n"
}'
[ $have_mpi = yes ] || say "  (heat not run: no MPI)"
say ""
say "libkm's overhead figure / the time the default build really added (goal 0.85-1.15)"
echo "$results" | awk 'NF >= 8 {
    name = $1
    if (name == "heat") name = "heat (2 MPI ranks)"
    if (name == "solve") name = "solve (20 runs)"
    if (name == "kernel") name = "kernel (call-heavy)"
    added = $4 - $2
    if (added > 0)
        printf "  %-22s %9.4f s of %9.4f s = %6.2f  (goal 0.85-1.15)", name, $8, added, $8 / added
    else
        printf "  %-22s %9.4f s, and the run added nothing measurable (%+.4f s)", name, $8, added
    if (NF >= 10 && $9 > $2)
        printf "   [baseline %.4f s of %.4f s = %.2f]", $10, $9 - $2, $10 / ($9 - $2)
    printf "\n"
}'
say ""
say "stub: the default instrumentation with empty entry points (bench/stub.c)."
say "estimate: libkm's own work in the default build, from its KM_output counts"
say "  (measured executions x measured pair + the others x extrapolated pair);"
say "  the measured columns also hold what instrumenting does to the compiled"
say "  code (see stub), and the code and data layout, which alone moves a"
say "  program by several per cent either way."
say "heat: examples/heat with 8000 sweeps; kernel: $(awk 'BEGIN { print 2 * 398 * 398 * 100 }') calls of routines of a few dozen flops."
