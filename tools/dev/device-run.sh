#!/bin/bash
# device-run.sh — the one-shot check of the CUDA backend on the H200 device machine.
#
# Builds natively there (Meson + ninja from its Python environment, nvcc, Open MPI,
# serial HDF5, zlib; METIS is not there and not needed), runs the gpu test suite
# (kernel unit test + the mpirun replay matrix with --backend cuda), a short
# compute-sanitizer pass, an extra replay on a larger matrix, and the benchmark
# (R-MAT scale 22 and the largest shared matrices; a 4-rank plan on the one GPU).
# Every log goes to $OUT (at most 8 files come back); the last lines printed are
# the summary (the tool returns the end of the output).
#
# Usage, from the session (the checkout's root is the working directory there):
#   # once, here: the shared matrices travel only if carried (../shared does not)
#   echo /.devdata/ >> .git/info/exclude; mkdir -p .devdata
#   cp ../shared/data/matrices/{soc-Slashdot0902,mdual,delaunay_n16,cit-HepTh}.mtx.gz .devdata/
#   # then one device call:
#   run(command: "bash tools/dev/device-run.sh", carry: [".devdata"], timeout_s: 480)
# Order: build, gpu tests, R-MAT benchmark (the targets), compute-sanitizer, a larger replay,
# shared-matrix benchmarks. About 6 minutes with the default budget; rerun parts with
# SKIP_TESTS=1 / SKIP_SANITIZER=1 / a smaller DEVICE_BUDGET_S if device time is short.
# Knobs (environment): SHIRO_MATRICES=DIR (default: the first of .devdata,
# shared/data/matrices, ../shared/data/matrices); DEVICE_BUDGET_S (default 360): after the
# build and the tests, a step starts only if its minimum fits in what is left, and is cut
# at the budget; RMAT_SCALE (default 22); SKIP_TESTS=1; SKIP_SANITIZER=1.
set -u
OUT=${OUT:-/tmp/shiro-device-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.." || exit 1
T0=$(date +%s)
BUDGET=${DEVICE_BUDGET_S:-360}
RMAT_SCALE=${RMAT_SCALE:-22}
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
elapsed() { echo $(( $(date +%s) - T0 )); }
say() { echo "== [$(elapsed)s] $*"; }
note() { echo "$*" | tee -a "$SUMMARY"; }
# time_left SECONDS: true if a step needing at least that long still fits the budget.
time_left() { [ $(( $(elapsed) + $1 )) -le "$BUDGET" ]; }
# cap SECONDS: that, or what is left of the budget if less (at least 30).
cap() { local l=$(( BUDGET - $(elapsed) )); [ "$l" -lt 30 ] && l=30; [ "$1" -lt "$l" ] && l=$1; echo "$l"; }

export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8} PYTHONUNBUFFERED=1
NPROC=$(nproc 2>/dev/null || echo 8)

# ---- 0. the machine ------------------------------------------------------------------
{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
  nvcc --version 2>&1 | tail -2
  meson --version 2>&1; ninja --version 2>&1; mpirun --version 2>&1 | head -1
  ls /usr/include/nccl.h /usr/local/cuda/include/nccl.h 2>&1; ls /lib/x86_64-linux-gnu/libnccl* /usr/local/cuda/lib64/libnccl* 2>&1
  git log --oneline -3 2>&1
  command -v python3; python3 -c "import numpy, scipy, torch; from mpi4py import MPI; print('python', torch.__version__, torch.cuda.is_available(), MPI.Get_library_version().splitlines()[0])" 2>&1
} > "$OUT/env.txt" 2>&1
say "machine: $(head -3 "$OUT/env.txt" | tail -1)"

# ---- 1. build --------------------------------------------------------------------------
say "build"
# shiro-spmm needs the CUDA runtime for its device copies of B and C (gpu_deps in
# tools/meson.build). If this checkout does not give it yet, patch this copy only.
if ! grep -A1 "executable('shiro-spmm'" tools/meson.build | grep -q gpu_deps; then
  sed -i "/executable('shiro-spmm'/{n;s/cli_dep\]/cli_dep] + gpu_deps/}" tools/meson.build
  note "patched tools/meson.build (this copy only): shiro-spmm gets gpu_deps: $(grep -A1 "executable('shiro-spmm'" tools/meson.build | tail -1)"
fi
SETUP_ARGS=(-Dcuda=enabled -Dgpu_arch=9.0 -Dbuildtype=release)
grep -q "option('metis'" meson_options.txt 2>/dev/null && SETUP_ARGS+=(-Dmetis=disabled)
{
  if [ ! -f bdev/build.ninja ]; then
    meson setup bdev "${SETUP_ARGS[@]}" || {
      # NCCL present only as libnccl.so.2 (no development link): give the linker one.
      mkdir -p .devlib && for f in /lib/x86_64-linux-gnu/libnccl.so.2 /usr/lib/x86_64-linux-gnu/libnccl.so.2; do
        [ -e "$f" ] && ln -sf "$f" .devlib/libnccl.so; done
      export LIBRARY_PATH=$PWD/.devlib:${LIBRARY_PATH:-}
      rm -rf bdev && meson setup bdev "${SETUP_ARGS[@]}"
    }
  fi
  ninja -C bdev -j "$NPROC"
} > "$OUT/build.log" 2>&1
BUILD_RC=$?
note "build: rc=$BUILD_RC ($(grep -c -i 'warning' "$OUT/build.log") warning lines) at $(elapsed)s"
if [ "$BUILD_RC" != 0 ]; then
  tail -40 "$OUT/build.log"
  cat "$SUMMARY"
  exit 1
fi
B=bdev

# ---- matrices ---------------------------------------------------------------------------
MDIR=${SHIRO_MATRICES:-}
for d in .devdata shared/data/matrices ../shared/data/matrices; do
  [ -z "$MDIR" ] && [ -d "$d" ] && MDIR=$d
done
SHARED=()
if [ -n "$MDIR" ]; then
  for f in soc-Slashdot0902 mdual delaunay_n16 cit-HepTh; do
    for e in .mtx.gz .mtx; do [ -e "$MDIR/$f$e" ] && SHARED+=("$MDIR/$f$e") && break; done
  done
fi
note "matrices: ${MDIR:-none carried} (${#SHARED[@]} of the large shared ones)"

# ---- 2. tests ----------------------------------------------------------------------------
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  say "meson test --suite gpu"
  # The tests share the one GPU (small matrices) and the 16 cores: several at once.
  timeout 330 meson test -C $B --suite gpu --print-errorlogs --num-processes 4 > "$OUT/gpu-tests.log" 2>&1
  TEST_RC=$?
  cat $B/meson-logs/testlog.txt >> "$OUT/gpu-tests.log" 2>/dev/null
  note "gpu tests: rc=$TEST_RC; $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$OUT/gpu-tests.log" | head -4 | tr -s ' ' | tr '\n' ' ')"
  grep -E "^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|SKIP)" "$OUT/gpu-tests.log" | head -20 | tee -a "$SUMMARY"
  grep -E "^note:" "$OUT/gpu-tests.log" | sort | uniq -c | head -5 | tee -a "$SUMMARY"
fi

# ---- 3. benchmark: R-MAT (the targets) ---------------------------------------------------
# R-MAT made in memory by the benchmark (writing and parsing a 1 GB .mtx would cost device minutes).
if time_left 60; then
  say "bench R-MAT scale $RMAT_SCALE (generated in memory)"
  timeout "$(cap 240)" $B/tools/bench/gpu/shiro-bench-gpu --rmat "$RMAT_SCALE,16,1" >> "$OUT/bench.log" 2>&1
  rc=$?
  note "bench R-MAT: rc=$rc"
fi

# ---- 4. compute-sanitizer on the kernel test (out-of-bounds, uninitialized reads) ---------
if [ "${SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer > /dev/null && time_left 60; then
  say "compute-sanitizer memcheck"
  timeout "$(cap 150)" compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $B/tests/gpu/test_cuda_ops --quick > "$OUT/extra.log" 2>&1
  rc=$?
  note "compute-sanitizer memcheck test_cuda_ops --quick: rc=$rc ($(grep -c 'Invalid\|ERROR SUMMARY: [1-9]' "$OUT/extra.log") error lines)"
  tail -3 "$OUT/extra.log" | tee -a "$SUMMARY"
  if time_left 45; then
    P1=/tmp/eu1.shiro.h5
    $B/tools/shiro-plan tests/data/email-Eu-core.mtx --ranks 1 --strategy joint -o $P1 --quiet >> "$OUT/extra.log" 2>&1
    timeout "$(cap 90)" compute-sanitizer --tool memcheck --error-exitcode 3 $B/tools/shiro-spmm $P1 --backend cuda \
      --transport mpi --n 7,32 --dtype float,double --iters 2 --direction both --check tests/data/email-Eu-core.mtx >> "$OUT/extra.log" 2>&1
    rc=$?
    note "compute-sanitizer memcheck shiro-spmm (1 rank, both directions): rc=$rc"
    tail -2 "$OUT/extra.log" | tee -a "$SUMMARY"
  fi
fi

# ---- 5. a replay on a larger matrix: 4 ranks on the GPU (MPI), and 1 rank (NCCL) ---------
if [ ${#SHARED[@]} -gt 0 ] && time_left 60; then
  say "replay ${SHARED[0]}"
  {
    timeout "$(cap 120)" python3 tests/mpi/replay_check.py $B "${SHARED[0]}" --backend cuda --transport mpi --ranks 4 --strategies joint,row \
      --n 32 --dtype float,double
    echo "replay-rc=$?"
    timeout "$(cap 60)" python3 tests/mpi/replay_check.py $B "${SHARED[0]}" --backend cuda --transport nccl --ranks 1 --strategies joint \
      --n 32,128 --dtype float
    echo "replay-rc=$?"
  } >> "$OUT/extra.log" 2>&1
  note "replay ${SHARED[0]}: $(grep -c '^ok' "$OUT/extra.log") ok, $(grep -c '^FAIL' "$OUT/extra.log") FAIL, exits: $(grep '^replay-rc=' "$OUT/extra.log" | tr '\n' ' ')"
fi

# ---- 6. benchmark: the largest shared matrices, one rank; a 4-rank plan on the one GPU -----
for m in "${SHARED[@]:0:2}"; do
  time_left 30 || break
  say "bench $m"
  timeout "$(cap 90)" $B/tools/bench/gpu/shiro-bench-gpu "$m" --reps 20 >> "$OUT/bench-shared.log" 2>&1
  rc=$?
  note "bench $(basename "$m"): rc=$rc"
done
if [ ${#SHARED[@]} -gt 0 ] && time_left 45; then
  say "bench 4-rank plan of ${SHARED[0]} on one GPU (MPI transport)"
  P=/tmp/shared4.shiro.h5
  if $B/tools/shiro-plan "${SHARED[0]}" --ranks 4 --gpus-per-node 4 --strategy joint -o $P --quiet >> "$OUT/bench-shared.log" 2>&1; then
    timeout "$(cap 90)" mpirun -np 4 $B/tools/bench/gpu/shiro-bench-gpu --plan $P "${SHARED[0]}" --transport mpi --n 32,128 --dtype float \
      --no-micro >> "$OUT/bench-shared.log" 2>&1
    rc=$?
    note "bench 4-rank plan: rc=$rc"
  fi
fi

# ---- summary -------------------------------------------------------------------------------
grep -h "^TARGET" "$OUT/bench.log" "$OUT/bench-shared.log" 2>/dev/null >> "$SUMMARY"
say "done"
echo "---- R-MAT table"
awk '/^dtype/{on=1} on{print} /replay_ms:/{if(on)exit}' "$OUT/bench.log" 2>/dev/null
echo "---- summary"
cat "$SUMMARY"
