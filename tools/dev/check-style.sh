#!/bin/sh
# check-style.sh — the checks that keep the code as CONTRIBUTING.md describes it:
#   * C and CUDA formatting (.clang-format): the lines changed since BASE, or every file when
#     no BASE is given and no tag v<version> exists;
#   * shellcheck on every shell script, pyflakes on python/ and tests/.
#
#   tools/dev/check-style.sh [BASE]      BASE: a commit; default the tag v<version> when it exists
#
# Needs clang-format, clang-format-diff, shellcheck and pyflakes3 (tools/dev/install-deps.sh --quality).
# Exit status 0 when all pass; 1 with the offending lines or files on stderr; 2 when a tool is missing.
set -eu
cd "$(dirname "$0")/../.."
for t in clang-format clang-format-diff shellcheck pyflakes3; do
  command -v "$t" >/dev/null || { echo "check-style: $t not found (tools/dev/install-deps.sh --quality)" >&2; exit 2; }
done
base=${1:-}
if [ -z "$base" ]; then
  version=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" meson.build | head -n 1)
  if git rev-parse -q --verify "refs/tags/v$version" >/dev/null 2>&1; then base="v$version"; fi
fi
rc=0
c_files=$(git ls-files '*.c' '*.h' '*.cu' '*.cuh')
if [ -n "$base" ]; then
  echo "check-style: formatting of the C lines changed since $base"
  # shellcheck disable=SC2086  # the file list is meant to split
  out=$(git diff -U0 --no-color "$base" -- $c_files | clang-format-diff -p1 -style=file)
else
  echo "check-style: formatting of every C file (no base given, no tag v$version)"
  out=""
  for f in $c_files; do
    d=$(clang-format --style=file "$f" | diff -u "$f" - || true)
    [ -z "$d" ] || out="$out$d
"
  done
fi
if [ -n "$out" ]; then
  printf '%s\n' "$out" | head -n 200 >&2
  echo "check-style: formatting differs from .clang-format (above; fix with clang-format -i FILE)" >&2
  rc=1
fi
echo "check-style: shellcheck"
# shellcheck disable=SC2046
shellcheck $(git ls-files '*.sh') .ci/run .ci/check-commits || rc=1
echo "check-style: pyflakes3 python/ tests/"
# shellcheck disable=SC2046
pyflakes3 $(git ls-files 'python/*.py' 'tests/*.py' 'tools/*.py') || rc=1
[ "$rc" -eq 0 ] && echo "check-style: ok"
exit "$rc"
