#!/bin/sh
# test.sh — install, build, and run the whole test suite (meson test). Extra arguments
# go to meson test, e.g. tools/dev/test.sh --suite unit
set -eu
cd "$(dirname "$0")/../.."
tools/dev/install-deps.sh
tools/dev/build.sh
meson test -C build --print-errorlogs "$@"
