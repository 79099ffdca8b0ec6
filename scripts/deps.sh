#!/bin/sh
# deps.sh — install the Debian packages kmtool needs that are missing.
#
# Sourced by scripts/demo and scripts/test.  Uses sudo when not root.
# Everything comes from Debian's own archive.  Chromium (and a font for it
# to draw text with) runs the test of kmview's HTML report headless;
# libomp-19-dev is flang's OpenMP runtime; libotf2-trace-dev is the OTF2
# library kmview trace --otf2 writes with (optional to build), otf2-tools
# its otf2-print, which the test of the archives reads them with; the
# aarch64 cross compiler and qemu-user build and run libkm for aarch64.
# km_install_speedscope (below) installs speedscope from npm.
KMTOOL_PACKAGES="gcc make autoconf automake flex bison gfortran \
libopenmpi-dev openmpi-bin mpich libmpich-dev flang-19 libomp-19-dev cmake \
ninja-build \
gdb chromium fonts-dejavu-core libotf2-trace-dev otf2-tools \
gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"

km_missing_packages() {
    missing=""
    for p in $KMTOOL_PACKAGES "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q "install ok installed" || missing="$missing $p"
    done
    echo "$missing"
}

km_install_deps() {
    missing=$(km_missing_packages "$@")
    [ -z "$missing" ] && return 0
    echo "Installing:$missing"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq &&
        # shellcheck disable=SC2086
        $sudo apt-get install -y -qq --no-install-recommends $missing \
            >/dev/null
}

# speedscope (the npm package, pinned): tests/kmview/paths.test loads the
# file kmview paths --speedscope writes into it in headless Chromium.  It
# goes into a cache directory, never the repository: $KM_NPM_CACHE,
# default ~/.cache/kmtool-npm (the test looks there too).  npm comes with
# Node.js; Debian's npm package when there is none.
KM_SPEEDSCOPE_VERSION=1.25.0
km_npm_dir() {
    echo "${KM_NPM_CACHE:-$HOME/.cache/kmtool-npm}"
}

km_install_speedscope() {
    dir=$(km_npm_dir)
    grep -qs "\"version\": \"$KM_SPEEDSCOPE_VERSION\"" \
        "$dir/node_modules/speedscope/package.json" && return 0
    command -v npm >/dev/null 2>&1 || km_install_deps npm || return 1
    echo "Installing speedscope@$KM_SPEEDSCOPE_VERSION into $dir"
    mkdir -p "$dir" &&
        npm install --prefix "$dir" --no-audit --no-fund --silent \
            "speedscope@$KM_SPEEDSCOPE_VERSION" >/dev/null
}

# Configure and build kmtool in build/ (out of the source tree).
km_build() {
    top=$1
    shift
    (cd "$top" && autoreconf -fi >/dev/null) || return 1
    km_build_in "$top" "$top/build" "$@"
}

# Configure (with the given options) and build in DIR; configure exists.
km_build_in() {
    top=$1
    dir=$2
    shift 2
    mkdir -p "$dir"
    (cd "$dir" && "$top/configure" -q "$@" &&
        make -j"$(nproc 2>/dev/null || echo 2)" >/dev/null) || return 1
}
