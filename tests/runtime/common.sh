# common.sh — sourced by the tests/runtime/*.sh scripts.
#
# Environment (automake's TESTS environment or the caller's):
#   F77 MPIF77 MPIRUN MPIRUN_FLAGS top_builddir srcdir
# Each test runs in a fresh temporary directory ($work), kept only when the
# test fails.  Exit status: 0 pass, 1 fail, 77 a needed tool is missing.

: "${F77:=gfortran}"
: "${MPIF77:=mpif77}"
: "${MPIRUN:=mpirun}"
: "${MPIRUN_FLAGS=--allow-run-as-root --oversubscribe}"
: "${top_builddir:=.}"
: "${srcdir:=.}"
top_builddir=$(cd "$top_builddir" && pwd) || exit 1
srcdir=$(cd "$srcdir" && pwd) || exit 1
LIBKM=$top_builddir/runtime/libkm.a
FIX=$srcdir/tests/runtime
CHECKER=$FIX/check_output.awk
test_name=$(basename "$0" .sh)
failed=0

# Every check prints "ok - ..." or "FAIL - ...", as the other tests do;
# scripts/test counts those lines.
fail() {
    echo "FAIL - $test_name: $*"
    failed=1
}

skip() {
    echo "SKIP: $test_name: $*"
    cd / && [ -n "${work:-}" ] && rm -rf "$work"
    exit 77
}

# need TOOL: skip the test when a command (first word) is missing
need() {
    set -- $1
    command -v "$1" >/dev/null 2>&1 || skip "$1 not found"
}

finish() {
    cd / || exit 1
    if [ "$failed" = 0 ]; then
        rm -rf "$work"
        echo "PASS: $test_name"
        exit 0
    fi
    echo "($test_name: files kept in $work)"
    exit 1
}

[ -f "$LIBKM" ] || { echo "FAIL: $test_name: $LIBKM is not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/kmrt-$test_name.XXXXXX") || exit 1
cd "$work" || exit 1

# An MPI program links libkm's MPI calls too: the Fortran file kmrun
# writes, compiled with the program's MPI compiler (MPIGLUE before LIBKM).
# (outside $work, whose files some tests list; every test writes the same
# text, each by an atomic rename)
MPIGLUE=$top_builddir/tests/KM_libkm_mpi.f
"$top_builddir/kmrun/kmrun" --mpi-glue="$MPIGLUE" ||
    { echo "FAIL: $test_name: kmrun --mpi-glue"; exit 1; }

# check FILE [exact]: structure and arithmetic of a KM_output file
# (exact: the accounting identity must hold where nothing was extrapolated)
check() {
    if awk -v exact="${2:-1}" -f "$CHECKER" "$1" > check.log 2>&1; then
        echo "ok - $1 is consistent"
    else
        fail "$1 is inconsistent: $(cat check.log)"
    fi
}

# routine FILE RANK NAME COLUMN: a routine table cell
# (COLUMN 3 elapsed, 4 net, 5 counts, 6 MPI, 7 IO)
routine() {
    awk -v rank="$2" -v name="$3" -v col="$4" '
        /^! ===== / { sec = ($2 == "=====" && $3 == "Rank" && $4 == rank); tab = 0; next }
        sec && /^![ ]+No Routine/ { tab = 1; next }
        sec && tab && /^!/ { tab = 0 }
        sec && tab && $2 == name { print $col; exit }' "$1"
}

# location FILE RANK ROUTINE KIND LINE COLUMN: a location cell
# (COLUMN 4 elapsed, 5 counts)
location() {
    awk -v rank="$2" -v name="$3" -v kind="$4" -v line="$5" -v col="$6" '
        /^! ===== / { sec = ($3 == "Rank" && $4 == rank); blk = 0; next }
        sec && /^! Routine [0-9]+ / { blk = ($4 == name ","); next }
        sec && blk && !/^!/ && $2 == kind && $3 == line { print $col; exit }' "$1"
}

# figure FILE RANK NAME: the value of a header figure of a rank section
figure() {
    awk -v rank="$2" -v name="$3" '
        /^! ===== / { sec = ($3 == "Rank" && $4 == rank); next }
        sec && !/^!/ {
            i = index($0, "! ")
            if (i && substr($0, i + 2) == name) { print $1; exit }
        }' "$1"
}

# expect WHAT GOT WANTED
expect() {
    if [ "x$2" = "x$3" ]; then
        echo "ok - $1"
    else
        fail "$1: got '$2', expected '$3'"
    fi
}

# only_outputs WANTED...: the KM_output files (and no temporary file) here
only_outputs() {
    got=$(ls -A | grep 'KM_output' | tr '\n' ' ')
    expect "KM_output files" "$got" "$* "
}
