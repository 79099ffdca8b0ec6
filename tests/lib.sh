# lib.sh — helpers shared by the end-to-end tests (sourced, not run).
#
# Environment (set by `make check`, defaults for running a test by hand
# from the build directory): srcdir, top_builddir, F77, MPIF77, MPIRUN,
# MPIRUN_FLAGS.  Each test works in a fresh directory under tests/work/.

: "${srcdir:=.}"
: "${top_builddir:=.}"
: "${CC:=cc}"
: "${F77:=gfortran}"
: "${MPIF77:=mpif77}"
: "${MPIRUN:=mpirun}"
: "${MPIRUN_FLAGS=--oversubscribe}"
FFLAGS=${FFLAGS:--std=legacy -O1}

top_builddir=$(cd "$top_builddir" && pwd)
srcdir=$(cd "$srcdir" && pwd)
KMRUN="$top_builddir/kmrun/kmrun"
KMLIB="$top_builddir/runtime"
KMVIEW="$top_builddir/kmview/kmview"
DEFAULT_CONTROL="$srcdir/control/KM_control.dat"

failures=0
checks=0

# A fresh work directory for this test.
workdir() {
    name=${KM_TEST_NAME:-$(basename "$0" .test)}
    WORK="$top_builddir/tests/work/$name"
    rm -rf "$WORK"
    mkdir -p "$WORK"
    cd "$WORK" || exit 99
}

pass() { checks=$((checks + 1)); echo "ok - $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL - $*"; }

# check DESCRIPTION COMMAND...: pass if the command succeeds.
check() {
    what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

finish() {
    echo "$checks checks, $failures failed"
    [ "$failures" -eq 0 ]
    exit $?
}

# kmrun with the source tree's default control file.
kmrun() {
    "$KMRUN" --default-control="$DEFAULT_CONTROL" "$@"
}

# Instrument with kmrun into DIR: instrument DIR control-text files...
# An empty control text keeps the default control file.
instrument() {
    dir=$1
    control=$2
    shift 2
    mkdir -p "$dir"
    if [ -n "$control" ]; then
        printf '%s\n' "$control" > "$dir/KM_control.dat"
    fi
    kmrun -y -td "$dir" "$@" </dev/null
}

# Times and dates differ between runs; nothing else may.
scrub() {
    sed -e 's/[0-9]\.[0-9]*[eE][-+][0-9]*/<time>/g'
}

# fortran_files DIR: the Fortran sources of DIR, either form.
fortran_files() {
    for f in "$1"/*.f "$1"/*.F "$1"/*.f90 "$1"/*.F90; do
        [ -f "$f" ] && echo "$f"
    done
}

have() { command -v "$1" >/dev/null 2>&1; }

mpirun_n() {
    n=$1
    shift
    # shellcheck disable=SC2086
    "$MPIRUN" $MPIRUN_FLAGS -np "$n" "$@"
}

# The routine table of KM_output: "rank name count elapsed net" per row,
# with a leading + removed from counts that were extrapolated.
routines() {
    awk -f "$srcdir/tests/kmout.awk" "$1"
}
