#!/bin/sh
# baseline.sh — kmrun and libkm of another git revision, built once for
# the benchmarks (make bench with BASELINE=REV), so that they can run
# that revision's instrumentation beside today's in the same run.
#
#   bench/baseline.sh REV BUILDDIR
#
# Builds REV (git archive of the source tree, configured as it is) in
# BUILDDIR/bench-baseline/REV/build, unless a build of it is there
# already, and prints the path of that build directory (which holds
# kmrun/kmrun, runtime/libkm.a and, beside it in ../src, control/).
# Messages go to standard error; exit status 1 if it cannot.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
rev=${1:?usage: baseline.sh REV BUILDDIR}
build=$(cd "${2:?usage: baseline.sh REV BUILDDIR}" && pwd) || exit 1
commit=$(git -C "$top" rev-parse --verify -q "$rev^{commit}") ||
    { echo "baseline.sh: no revision $rev in $top" >&2; exit 1; }
dir=$build/bench-baseline/$commit
if [ ! -f "$dir/built" ]; then
    echo "baseline.sh: building $rev ($commit) in $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir/src" "$dir/build" || exit 1
    git -C "$top" archive "$commit" | tar -x -C "$dir/src" || exit 1
    (
        cd "$dir/src" && autoreconf -fi && cd ../build &&
            ../src/configure -q &&
            # (a second try: some revisions' generated headers race at -j2)
            { make -j2 kmrun/kmrun runtime/libkm.a ||
              make kmrun/kmrun runtime/libkm.a; }
    ) > "$dir/build.log" 2>&1 ||
        { echo "baseline.sh: cannot build $rev: $(tail -3 "$dir/build.log")" >&2; exit 1; }
    touch "$dir/built"
fi
echo "$dir/build"
