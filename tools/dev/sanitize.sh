#!/bin/sh
# sanitize.sh — builds the project with AddressSanitizer + UndefinedBehaviorSanitizer
# in its own build directory and runs the whole test suite under the 'asan' test
# setup (tests/fuzz/meson.build: leak suppressions for Open MPI/HDF5, full stacks,
# halt on the first UB report, every report logged to BUILD/sanitizer-logs/).
#
#   tools/dev/sanitize.sh [BUILD_DIR] [meson test options, e.g. --suite unit]
#
# BUILD_DIR defaults to bsan; the compiler is $CC or cc (gcc; CC=clang works too).
# MPI programs run under mpirun even for one rank (gcc's LeakSanitizer crashes in
# Open MPI singletons, ENVIRONMENT.md §6); the test drivers already do so.
# Exit status: 0 when every test passed and no process wrote a sanitizer report
# (a driver may swallow a child's stderr, so ASan's and LSan's log files are
# checked too; gcc's UBSan ignores log_path and reports on stderr, exit 87).
set -eu
cd "$(dirname "$0")/../.."
build=bsan
case "${1:-}" in -*|'') ;; *) build=$1; shift ;; esac
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Db_sanitize=address,undefined -Db_lundef=false -Dcuda=disabled --werror
fi
ninja -C "$build"
logs="$build/sanitizer-logs"
mkdir -p "$logs"
rm -f "$logs"/asan.* "$logs"/ubsan.*
rc=0
meson test -C "$build" --setup=asan --print-errorlogs "$@" || rc=$?
# Only reports count: with allocator_may_return_null=1, ASan also logs a warning for
# every refused allocation (tests of absurd sizes), which is not an error.
reports=$(find "$logs" -type f \( -name 'asan.*' -o -name 'ubsan.*' \) -exec grep -l -E 'ERROR: |runtime error:|SUMMARY: ' {} + | sort || true)
if [ -n "$reports" ]; then
  echo "sanitize.sh: sanitizer reports in $logs:" >&2
  for f in $reports; do
    echo "=== $f" >&2
    head -n 40 "$f" >&2
  done
  [ "$rc" -ne 0 ] || rc=1
fi
[ "$rc" -eq 0 ] && echo "sanitize.sh: clean (every test passed, no sanitizer report)"
exit "$rc"
