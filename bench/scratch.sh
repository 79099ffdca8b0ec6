# scratch.sh — sourced by the bench scripts that build a small program
# against an installed kmtool (files.sh, messages.sh, mpiio.sh):
#
#   bench_scratch DEFAULT_COMPILER [BUILDDIR] [COMPILER]
#
# sets build (absolute, so that it holds after the cd), fc and prefix, and
# moves into a temporary directory removed when the script exits.
bench_scratch() {
    build=$(cd "${2:-$here/../build}" && pwd)
    fc=${3:-$1}
    prefix="$build/prefix"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    cd "$work"
}
