#!/bin/sh
# smoke.sh — short fuzzing pass for CI: builds the libFuzzer harnesses with clang
# in their own build directory and runs each one for ~20 s or 50 000 executions,
# whichever comes first, after replaying every committed seed and regression input.
#
#   tests/fuzz/smoke.sh [BUILD_DIR] [run_fuzz.py options]
#
# BUILD_DIR defaults to bfuzz (in the project root). Longer campaigns, e.g. 10^6
# executions per harness with no time limit:
#   tests/fuzz/smoke.sh bfuzz --runs 1000000 --time 0
# Exit status: 0 clean, 1 a finding in our code (see the printed artifact and its .txt
# report), 2 set-up error. Faults inside libhdf5 on damaged files are reported, not failed.
set -eu
cd "$(dirname "$0")/../.."
build=bfuzz
case "${1:-}" in -*|'') ;; *) build=$1; shift ;; esac
if ! command -v clang >/dev/null 2>&1; then
  echo "smoke.sh: clang not found (apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 2
fi
if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" -Dfuzz=true -Dcuda=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false >/dev/null || exit 2
fi
ninja -C "$build" >/dev/null || exit 2
exec python3 tests/fuzz/run_fuzz.py "$build" "$@"
