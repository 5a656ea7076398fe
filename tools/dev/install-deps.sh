#!/bin/sh
# install-deps.sh — installs the Debian 12 packages shiro needs to build and test.
#   tools/dev/install-deps.sh            build + test (Meson, MPI, HDF5, METIS, PT-Scotch, zlib; numpy, scipy, mpi4py, h5py,
#                                    torch for the Python package python/shiro and its tests)
#   tools/dev/install-deps.sh --quality  also clang + libFuzzer + libomp (fuzzing, clang sanitizers),
#                                        clang-format, shellcheck, pyflakes3 (tools/dev/check-style.sh)
#   tools/dev/install-deps.sh --sim      also SimGrid (smpicc, smpirun: tools/sim/simulate.sh, the sim tests)
# Flags combine. Idempotent: quiet and quick when everything is already there. Needs root (or sudo).
set -eu
pkgs="build-essential pkg-config meson ninja-build python3 zlib1g-dev libmetis-dev libptscotch-dev libtrilinos-zoltan-dev libhdf5-dev hdf5-tools libopenmpi-dev openmpi-bin"
pkgs="$pkgs python3-numpy python3-scipy python3-mpi4py python3-torch python3-h5py python3-venv python3-setuptools"
for flag in "$@"; do
  case "$flag" in
    --quality) pkgs="$pkgs clang libclang-rt-14-dev libomp-dev clang-format shellcheck pyflakes3" ;;
    --sim) pkgs="$pkgs libsimgrid-dev" ;;
    *) echo "install-deps: unknown flag '$flag' (expected --quality or --sim)" >&2; exit 2 ;;
  esac
done
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
