#!/bin/sh
# build.sh — configures (once) and builds shiro in ./build. CUDA is used when nvcc is found.
set -eu
cd "$(dirname "$0")/../.."
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
