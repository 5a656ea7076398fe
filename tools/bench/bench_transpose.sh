#!/bin/bash
# bench_transpose.sh — shiro_spmm_transpose against shiro_spmm, side by side, CPU backend (the
# goal: within 1.1x, the same volumes).
#
#   tools/bench/bench_transpose.sh [--build DIR] [--runs K] [--iters I] [--n N] [--dtype T] [MATRIX...]
#
# For R-MAT s18 (shiro-gen rmat --scale 18 --edge-factor 16, generated into $TMPDIR and kept) and the
# given matrices (default: soc-Slashdot0902 and cit-HepTh of ../shared/data/matrices), plans
# R = 2 and R = 4 (flat, default strategy) and R = 4 with 2 per node (two-tier), and runs
# `shiro-spmm --direction both` K times (default 3): each run alternates 5 rounds of I calls of each
# direction and keeps the best round of each. Prints per case the K ratios transposed/forward and
# their median, and a last line PASS or MISS (every median <= 1.1). One rank per core is best; on a
# shared machine the ratios of one run move by a tenth or more, hence the median of K.
# The MPI transport decides which rank copies a message (Open MPI's CMA: the receiver); the
# environment passes through to mpirun, e.g. OMPI_MCA_btl_vader_single_copy_mechanism=none
# (runtime/README.md, transpose.c, says what it changes).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$here/build runs=3 iters=10 n=32 dtype=double
mats=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --dtype) dtype=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench_transpose.sh: unknown option $1" >&2; exit 2 ;;
    *) mats+=("$1"); shift ;;
  esac
done
shared=$here/../shared/data/matrices
[ ${#mats[@]} -gt 0 ] || mats=("$shared/soc-Slashdot0902.mtx.gz" "$shared/cit-HepTh.mtx.gz")
work=${TMPDIR:-/tmp}/shiro-bench-transpose
mkdir -p "$work"
rmat=$work/rmat18.mtx
[ -s "$rmat" ] || "$build/tools/gen/shiro-gen" rmat --scale 18 --edge-factor 16 -o "$rmat" >/dev/null
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
pass=1
echo "transposed/forward time per call, N = $n $dtype, CPU backend, OMP_NUM_THREADS=$OMP_NUM_THREADS, median of $runs runs"
for m in "$rmat" "${mats[@]}"; do
  for rg in 2:1 4:1 4:2; do
    r=${rg%:*} g=${rg#*:}
    plan=$work/plan.shiro.h5
    "$build/tools/shiro-plan" "$m" --ranks "$r" --gpus-per-node "$g" -o "$plan" --quiet
    ratios=() times=""
    for _ in $(seq "$runs"); do
      line=$(mpirun -np "$r" --bind-to none "$build/tools/shiro-spmm" "$plan" --direction both --n "$n" --dtype "$dtype" \
               --iters "$iters" --warmup 2 | grep "transposed/forward time")
      ratios+=("$(echo "$line" | sed 's/.*transposed\/forward time \([0-9.]*\).*/\1/')")
      times="$times $(echo "$line" | sed 's/.*(\(.*\) ms\/call)/\1/' | tr -d ' ')"
    done
    med=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    awk -v x="$med" 'BEGIN {exit !(x > 1.1)}' && pass=0
    printf '%-26s R=%s G=%s: median %s (runs: %s; transposed/forward ms:%s)\n' "$(basename "$m")" "$r" "$g" "$med" \
      "${ratios[*]}" "$times"
  done
done
[ $pass = 1 ] && echo "PASS: every median within 1.1x" || echo "MISS: a median above 1.1x"
