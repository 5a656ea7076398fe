#!/bin/sh
# test.sh — install, build, and run the whole test suite (meson test). Extra arguments
# go to meson test, e.g. tools/test.sh --suite unit
set -eu
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
meson test -C build --print-errorlogs "$@"
