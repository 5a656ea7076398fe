#!/usr/bin/env bash
# bench_replay.sh — the CPU replay against the best CPU libraries, side by side, in one run.
#
#   tools/bench/bench_replay.sh [--quick] [--local]   (settings below, overridable from the environment)
#
# 1. Installs the peers' libraries if missing (apt: libgraphblas-dev, petsc-dev;
#    benchmark only: shiro does not link them) and builds the peer programs of
#    tools/bench/ into $OUT (peer-graphblas, peer-petsc).
# 2. Inputs: the shared matrices (../shared/data/matrices) with at least
#    $MIN_NNZ stored nonzeros, and R-MAT matrices of the scales in $RMAT
#    (shiro-gen rmat, edge factor 16, seed 1; kept in $OUT between runs); a
#    plan per matrix, R and N (shiro-plan --ranks R --strategy $STRATEGY
#    --partition $PARTITION --n N; default auto-cpu, joint or col, whichever's
#    busiest rank costs less, on the work partition: the contiguous rows that
#    balance the cost of each rank's multiplies under the covers, entries plus
#    4 + 4/N per row an op visits; STRATEGY=joint PARTITION=block for joint on
#    the equal rows PETSc gets), kept too (made again when shiro-plan is newer).
# 3. Local multiply: shiro's kernels on the one-rank plan's local op (all of A)
#    against GraphBLAS GrB_mxm (the better of C = A·B and C += A·B), on one
#    thread and on all ($THREADS), for every N in $LOCAL_NS, float and double.
# 4. Whole replay: mpirun -np R shiro-bench-cpu (shiro_spmm) against mpirun
#    -np R peer-petsc (MatMatMult, MPIAIJ × MPIDENSE, the block partition:
#    equal rows, which balances PETSc's own work, nonzeros per rank, within
#    2% on these matrices; MatMult for N = 1), for R in $RANKS and N in $NS, double (shiro float
#    too, for information); threads per rank: all cores / R (at least 1).
# 5. Overlap and pack/unpack at N = $OVERLAP_N, double, R in $RANKS (R > 1):
#    the call's START..WAIT window against the exchange alone and the multiply
#    alone, with the kernels polling the stage in flight (the replay) and
#    without (as before): overlap = (comm + comp - window) / min(comm, comp);
#    the gathers and adds in GB/s against memcpy.
# 6. The replay's goals, each PASS or MISS with its worst case.
#
# Every contender runs $RUNS times, alternating (shiro, peer, shiro, ...);
# each run is itself the best of $REPS samples of about $MS ms; the tables
# show the best run. Ratios are peer time / shiro time: above 1, shiro is
# faster. On a shared machine numbers move from run to run: the load average
# is printed with each table; compare numbers of the same run only.
#
# --local: steps 1-3 and the local multiply's goals only (no PETSc needed), e.g. the
# power-law goal: RMAT="19 20" ONLY=none LOCAL_NS="32 64" tools/bench/bench_replay.sh --local
# --quick: soc-Slashdot0902, mdual, delaunay_n16, bcsstk33 and R-MAT s18;
# local N {32, 64}; replay R {2, 4} and N {1, 32}: about 10 minutes on 2
# cores. The full run (every matrix, R {1, 2, 4}, N {1, 16, 32, 64, 128}):
# about 2 hours on 2 cores.
# shellcheck disable=SC2046  # $(bind ...) and $(pkg-config ...) are meant to split into words
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
quick=0
local_only=0
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    --local) local_only=1 ;;
    -h|--help) sed -n '2,/^# shellcheck/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "bench_replay.sh: unknown argument '$a' (expected --quick or --local)" >&2; exit 2 ;;
  esac
done

BUILD=${BUILD:-}
OUT=${OUT:-/tmp/shiro-bench-replay}
MATRICES_DIR=${MATRICES_DIR:-$here/../shared/data/matrices}
MIN_NNZ=${MIN_NNZ:-100000}
THREADS=${THREADS:-$(nproc)}
RUNS=${RUNS:-3}
REPS=${REPS:-7}
MS=${MS:-20}
OVERLAP_N=${OVERLAP_N:-32}
PARTITION=${PARTITION:-work}
STRATEGY=${STRATEGY:-auto-cpu}
if [ "$quick" = 1 ]; then
  ONLY=${ONLY:-"soc-Slashdot0902 mdual delaunay_n16 bcsstk33"}
  RMAT=${RMAT-"18"}
  RANKS=${RANKS:-"2 4"}
  NS=${NS:-"1 32"}
  LOCAL_NS=${LOCAL_NS:-"32 64"}
else
  ONLY=${ONLY:-}
  RMAT=${RMAT-"18 19"}
  RANKS=${RANKS:-"1 2 4"}
  NS=${NS:-"1 16 32 64 128"}
  LOCAL_NS=${LOCAL_NS:-"1 16 32 64 128"}
fi
if [ "$local_only" = 1 ]; then RANKS=""; fi  # no replay, no overlap, no replay goals

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
load() { cut -d' ' -f1-3 /proc/loadavg; }
# Open MPI binds each rank to one core by default (np <= 2): threads of a rank need --bind-to none
bind() { if [ "$1" -gt 1 ]; then echo "--bind-to none"; fi; }
die() { echo "bench_replay.sh: $*" >&2; exit 1; }

# ---- 1. the peers ----
need=()
peers=(libgraphblas-dev); [ "$local_only" = 1 ] || peers+=(petsc-dev)
for p in "${peers[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (benchmark only)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  if ! { $SUDO apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need[@]}" >&2; }; then
    die "could not install ${need[*]} (apt-get)"
  fi
fi
if [ -z "$BUILD" ]; then
  for d in "$here/build" "$OUT/build"; do
    if [ -x "$d/tools/bench/shiro-bench-cpu" ]; then BUILD=$d; break; fi
  done
fi
if [ -z "$BUILD" ]; then
  BUILD=$OUT/build
  echo "building shiro in $BUILD" >&2
  mkdir -p "$OUT"
  [ -d "$BUILD" ] || meson setup "$BUILD" "$here" -Dcuda=disabled >&2
  ninja -C "$BUILD" >&2
fi
bench=$BUILD/tools/bench/shiro-bench-cpu
plan=$BUILD/tools/shiro-plan
dump=$BUILD/tools/shiro-plan-dump
gen=$BUILD/tools/gen/shiro-gen
for x in "$bench" "$plan" "$dump" "$gen"; do [ -x "$x" ] || die "$x is missing (BUILD=$BUILD: run ninja there)"; done
mkdir -p "$OUT/plans" "$OUT/peers"
cc -O2 -o "$OUT/peers/peer-graphblas" "$here/tools/bench/peer_graphblas.c" -lgraphblas -lz || die "building peer-graphblas failed"
if [ "$local_only" = 0 ]; then
  mpicc -O2 -o "$OUT/peers/peer-petsc" "$here/tools/bench/peer_petsc.c" $(pkg-config --cflags --libs PETSc) -lz \
    || die "building peer-petsc failed"
fi
grb=$OUT/peers/peer-graphblas
petsc=$OUT/peers/peer-petsc

# ---- 2. inputs ----
mats=()
if [ -d "$MATRICES_DIR" ]; then
  while IFS=$'\t' read -r file _ _ _ _ nnz _; do
    [ "$file" = file ] && continue
    [ "$nnz" -ge "$MIN_NNZ" ] || continue
    base=${file%%.mtx*}
    if [ -n "$ONLY" ] && [[ " $ONLY " != *" $base "* ]]; then continue; fi
    mats+=("$MATRICES_DIR/$file")
  done < "$MATRICES_DIR/MANIFEST.tsv"
else
  echo "note: $MATRICES_DIR is absent: R-MAT matrices only" >&2
fi
for s in $RMAT; do
  f=$OUT/rmat-s$s.mtx
  [ -s "$f" ] || { "$gen" rmat --scale "$s" --edge-factor 16 --seed 1 -o "$f.tmp" && mv "$f.tmp" "$f"; }
  mats+=("$f")
done
name() { local b; b=$(basename "$1"); echo "${b%%.mtx*}"; }
plan_of() {  # plan_of MATRIX R N: the plan's path (made again when shiro-plan is newer than it)
  local p
  p=$OUT/plans/$(name "$1")-$2-$STRATEGY-$PARTITION-n$3.h5
  if ! { [ -s "$p" ] && [ "$p" -nt "$plan" ]; }; then
    "$plan" "$1" --ranks "$2" --strategy "$STRATEGY" --partition "$PARTITION" --n "$3" -o "$p" --quiet
  fi
  echo "$p"
}
kv() { tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }   # kv KEY < line: the value of KEY=...
min() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "") print b; else if (b == "" || a + 0 <= b + 0) print a; else print b }'; }
csv() { echo "$1" | tr ' ' ','; }

echo "# shiro bench_replay.sh  $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')  build $BUILD"
echo "# host $(hostname), $(nproc) cores, load average $(load); runs $RUNS (alternating), each best of $REPS samples of ~$MS ms"
echo "# shiro's plans: --strategy $STRATEGY --partition $PARTITION --n N (the N run); PETSc: the block partition"
echo "# matrices: $(for m in "${mats[@]}"; do printf '%s ' "$(name "$m")"; done)"
echo

# ---- 3. local multiply: shiro vs GraphBLAS ----
declare -A S1 ST G1 GT
for m in "${mats[@]}"; do
  p1=$(plan_of "$m" 1 64)  # one rank: every N's plan is the same
  for _ in $(seq "$RUNS"); do
    while read -r line; do
      k="$(name "$m") $(echo "$line" | kv dtype) $(echo "$line" | kv n)"
      S1[$k]=$(min "${S1[$k]:-}" "$(echo "$line" | kv local1_ms)")
      ST[$k]=$(min "${ST[$k]:-}" "$(echo "$line" | kv localT_ms)")
    done < <(OMP_NUM_THREADS=$THREADS mpirun $(bind "$THREADS") -np 1 "$bench" "$p1" --only local --n "$(csv "$LOCAL_NS")" \
               --dtype double,float --reps "$REPS" --ms "$MS")
    while read -r line; do
      k="$(name "$m") $(echo "$line" | kv dtype) $(echo "$line" | kv n)"
      if [ "$(echo "$line" | kv threads)" = 1 ]; then G1[$k]=$(min "${G1[$k]:-}" "$(echo "$line" | kv best_ms)")
      else GT[$k]=$(min "${GT[$k]:-}" "$(echo "$line" | kv best_ms)"); fi
    done < <("$grb" "$m" --n "$(csv "$LOCAL_NS")" --dtype double,float --threads "1,$THREADS" --reps "$REPS" --ms "$MS")
  done
done
echo "## Local multiply (all of A, R = 1): shiro's kernels vs GraphBLAS GrB_mxm, ms per call; ratio = GraphBLAS / shiro"
echo "## load average $(load)"
printf '%-18s %-6s %4s | %9s %9s %6s | %9s %9s %6s | %7s %7s\n' matrix dtype N "shiro 1t" "GrB 1t" ratio \
  "shiro ${THREADS}t" "GrB ${THREADS}t" ratio "shiro ×" "GrB ×"
for m in "${mats[@]}"; do
  for d in double float; do
    for n in $LOCAL_NS; do
      k="$(name "$m") $d $n"
      awk -v m="$(name "$m")" -v d="$d" -v n="$n" -v s1="${S1[$k]}" -v g1="${G1[$k]}" -v st="${ST[$k]}" -v gt="${GT[$k]}" \
        'BEGIN { printf "%-18s %-6s %4d | %9.3f %9.3f %6.2f | %9.3f %9.3f %6.2f | %7.2f %7.2f\n",
                 m, d, n, s1, g1, g1 / s1, st, gt, gt / st, s1 / st, g1 / gt }'
    done
  done
done
echo

# ---- 4. whole replay: shiro vs PETSc (not with --local) ----
if [ "$local_only" = 0 ]; then
declare -A SD SF P
for R in $RANKS; do
  t=$(( $(nproc) / R )); [ "$t" -ge 1 ] || t=1
  for m in "${mats[@]}"; do
    for n in $NS; do plan_of "$m" "$R" "$n" >/dev/null; done
    for _ in $(seq "$RUNS"); do
      for n in $NS; do
        while read -r line; do
          k="$(name "$m") $R $n"
          if [ "$(echo "$line" | kv dtype)" = double ]; then SD[$k]=$(min "${SD[$k]:-}" "$(echo "$line" | kv call_ms)")
          else SF[$k]=$(min "${SF[$k]:-}" "$(echo "$line" | kv call_ms)"); fi
        done < <(OMP_NUM_THREADS=$t mpirun $(bind "$t") -np "$R" "$bench" "$(plan_of "$m" "$R" "$n")" --only call --n "$n" \
                 --dtype double,float --reps "$REPS" --ms "$MS")
      done
      while read -r line; do
        k="$(name "$m") $R $(echo "$line" | kv n)"
        P[$k]=$(min "${P[$k]:-}" "$(echo "$line" | kv ms)")
        done < <(OMP_NUM_THREADS=$t mpirun $(bind "$t") -np "$R" "$petsc" "$m" --n "$(csv "$NS")" --reps "$REPS" --ms "$MS")
    done
  done
done
echo "## Whole replay: shiro_spmm vs PETSc (N = 1: MatMult, else MatMatMult MPIAIJ x MPIDENSE), ms per call; ratio = PETSc / shiro (double)"
echo "## load average $(load)"
printf '%-18s %2s %4s | %10s %10s %6s | %12s | %s\n' matrix R N "shiro" "PETSc" ratio "shiro float" strategy
for m in "${mats[@]}"; do
  for R in $RANKS; do
    for n in $NS; do
      k="$(name "$m") $R $n"
      st=$("$dump" "$(plan_of "$m" "$R" "$n")" | sed -n 's/.*strategy \([a-z-]*\),.*/\1/p' | head -1)
      awk -v m="$(name "$m")" -v R="$R" -v n="$n" -v s="${SD[$k]}" -v p="${P[$k]}" -v f="${SF[$k]}" -v st="$st" \
        'BEGIN { printf "%-18s %2d %4d | %10.3f %10.3f %6.2f | %12.3f | %s\n", m, R, n, s, p, p / s, f, st }'
    done
  done
done
echo

# ---- 5. overlap, pack and unpack ----
echo "## Overlap at N = $OVERLAP_N, double, ms: window = START..WAIT inside a call (window0: kernels not polling, as before);"
echo "## comm, comp alone; overlap = (comm + comp - window) / min(comm, comp) of the best times (ovl0: with window0);"
echo "## med, med0: medians of each repetition's own value; pack (gathers into S) and unpack (adds into C) GB/s vs memcpy"
echo "## load average $(load)"
printf '%-18s %2s | %8s %8s %8s %8s | %7s %7s %7s %7s | %9s %8s %8s\n' matrix R comm comp window "window0" overlap "ovl0" \
  "med" "med0" "pack GB/s" "memcpy" "unpack"
for R in $RANKS; do
  [ "$R" -gt 1 ] || continue
  t=$(( $(nproc) / R )); [ "$t" -ge 1 ] || t=1
  for m in "${mats[@]}"; do
    line=$(OMP_NUM_THREADS=$t mpirun $(bind "$t") -np "$R" "$bench" "$(plan_of "$m" "$R" "$OVERLAP_N")" --n "$OVERLAP_N" --dtype double \
             --reps $((REPS * RUNS)) --ms "$MS")
    printf '%-18s %2d | %8.3f %8.3f %8.3f %8.3f | %7.2f %7.2f %7.2f %7.2f | %9.2f %8.2f %8.2f\n' "$(name "$m")" "$R" \
      "$(echo "$line" | kv comm_ms)" "$(echo "$line" | kv comp_ms)" "$(echo "$line" | kv window_ms)" \
      "$(echo "$line" | kv nopoll_window_ms)" "$(echo "$line" | kv overlap)" "$(echo "$line" | kv nopoll_overlap)" \
      "$(echo "$line" | kv overlap_med)" "$(echo "$line" | kv nopoll_overlap_med)" \
      "$(echo "$line" | kv pack_GBs)" "$(echo "$line" | kv memcpy_GBs)" "$(echo "$line" | kv unpack_GBs)"
  done
done
echo

fi  # --local

# ---- 6. the goals ----
echo "## Goals"
goal() {  # goal TEXT WORST_RATIO THRESHOLD WORST_CASE
  awk -v t="$1" -v w="$2" -v th="$3" -v c="$4" \
    'BEGIN { printf "%-4s %s: worst %.2f (%s), need >= %.2f\n", (w + 0 >= th + 0 ? "PASS" : "MISS"), t, w, c, th }'
}
worst() {  # worst "ratio case" lines on stdin -> "ratio case" of the least
  sort -g | head -1
}
for n in 32 64; do
  [[ " $LOCAL_NS " == *" $n "* ]] || continue
  for d in double float; do
    w1=$(for m in "${mats[@]}"; do k="$(name "$m") $d $n"; awk -v a="${G1[$k]}" -v b="${S1[$k]}" -v c="$(name "$m")" 'BEGIN { print a / b, c }'; done | worst)
    wt=$(for m in "${mats[@]}"; do k="$(name "$m") $d $n"; awk -v a="${GT[$k]}" -v b="${ST[$k]}" -v c="$(name "$m")" 'BEGIN { print a / b, c }'; done | worst)
    goal "local multiply vs GraphBLAS, 1 thread, N = $n, $d" "${w1% *}" 1.0 "${w1#* }"
    goal "local multiply vs GraphBLAS, $THREADS threads, N = $n, $d" "${wt% *}" 1.0 "${wt#* }"
  done
done
for n in 32 64; do
  [[ " $LOCAL_NS " == *" $n "* ]] || continue
  ws=$(for m in "${mats[@]}"; do k="$(name "$m") double $n"; awk -v a="${S1[$k]}" -v b="${ST[$k]}" -v c="$(name "$m")" 'BEGIN { print a / b, c }'; done | worst)
  goal "local multiply, $THREADS threads vs 1 (every matrix), N = $n, double" "${ws% *}" 1.6 "${ws#* }"
done
for R in 2 4; do
  [[ " $RANKS " == *" $R "* ]] || continue
  for n in 32 1; do
    [[ " $NS " == *" $n "* ]] || continue
    th=2.0; [ "$n" = 1 ] && th=1.0
    wr=$(for m in "${mats[@]}"; do k="$(name "$m") $R $n"; awk -v a="${P[$k]}" -v b="${SD[$k]}" -v c="$(name "$m")" 'BEGIN { print a / b, c }'; done | worst)
    goal "whole replay vs PETSc, R = $R, N = $n, double" "${wr% *}" "$th" "${wr#* }"
  done
done
