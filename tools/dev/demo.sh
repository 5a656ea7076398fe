#!/bin/sh
# demo.sh — install, build, plan a real matrix for 8 ranks (4 per node), replay it
# under mpirun with the result checked against a serial reference.
#   tools/dev/demo.sh [MATRIX.mtx] [RANKS] [GPUS_PER_NODE]
# BUILD=DIR uses that build directory (default build/); DEMO_SKIP_SETUP=1 skips
# installing and building (the tests run the demo on their own build).
set -eu
cd "$(dirname "$0")/../.."
matrix=${1:-tests/data/ca-GrQc.mtx}
ranks=${2:-8}
gpn=${3:-4}
build=${BUILD:-build}
if [ "${DEMO_SKIP_SETUP:-0}" != 1 ]; then
  tools/dev/install-deps.sh
  tools/dev/build.sh
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
plan=$build/demo.shiro.h5
echo "== shiro-plan: volumes of every strategy (--compare), and the plan"
"$build/tools/shiro-plan" "$matrix" --ranks "$ranks" --gpus-per-node "$gpn" --compare -o "$plan"
# The strategy written is the plan's own (shiro-plan's default: with 1 < G < R the one its cost
# model predicts fastest on tsubame4-like links, else joint).
strategy=$("$build/tools/shiro-plan-dump" "$plan" --json | sed -n 's/.*"strategy": "\([a-z]*\)".*/\1/p')
echo "== plan written with $strategy: $plan"
echo "== shiro-plan-dump"
"$build/tools/shiro-plan-dump" "$plan"
echo "== mpirun -np $ranks shiro-spmm (checked against a serial reference)"
mpirun -np "$ranks" "$build/tools/shiro-spmm" "$plan" --n 32 --dtype float,double --iters 20 --check "$matrix"
