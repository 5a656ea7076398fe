#!/usr/bin/env bash
# bench_planner.sh — reader and planner throughput on generated R-MAT matrices.
#
#   tools/bench/bench_planner.sh            (settings below, overridable from the environment)
#
# 1. Generates Graph500 R-MAT matrices with shiro-gen (kept between runs in
#    $OUT, regenerated only when missing): for each scale in $SCALES,
#    edge factor $EDGE_FACTOR, seed $SEED, one file per field in $FIELDS
#    (pattern; real = 17-digit values).
# 2. Reader: for each file and each thread count in $THREADS, the fastest of
#    $REPEAT runs (each a fresh process) of mm-fscanf-baseline (one fscanf per
#    entry into triplet arrays, single-threaded, no CSR) and of mm-read-time
#    (mm_read: file to CSR), timed in the same run of this script, side by
#    side: MB/s by wall clock, CPU seconds (all threads), and the ratio.
# 3. Planner: for each pattern file, thread count and strategy in
#    $STRATEGIES, shiro-plan --json at R=$RANKS, G=$GPN: phase times (read,
#    partition, cover, plan, write), nonzeros per second of partition + cover
#    + plan (read and write excluded) and of partition + cover + plan + write,
#    and peak RSS (and bytes per nonzero above 64 MiB), from the run (of $PLAN_REPEAT) with the least partition +
#    cover + plan. shiro-plan writes each program as soon as it is built:
#    "plan" is the build loop's wall time less the time spent writing, exact
#    on one thread; on more, other threads build while one writes, so the
#    column with write included is the one to compare across thread counts. For each value in
#    $HUGEPAGES (1: shiro-plan's heap on transparent huge pages, its default;
#    0: SHIRO_HUGEPAGES=0, 4 KiB pages; "1 0" shows both side by side).
# $EXTRA: more Matrix Market files for the reader table (e.g. a grid from
# shiro-gen grid3d, or a downloaded real-valued matrix); plain files only.
#
# Prints numbers, never pass/fail. The machine's load is printed first: on a
# shared machine, compare numbers of the same run only.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-}
if [ -z "$BUILD" ]; then
  for d in "$here/bgen" "$here/build" "$here/b2" "$here/b3"; do
    if [ -x "$d/tools/shiro-plan" ] && [ -x "$d/tools/gen/shiro-gen" ]; then BUILD=$d; break; fi
  done
fi
OUT=${OUT:-/tmp/shiro-bench}
SCALES=${SCALES:-"18 20"}
EDGE_FACTOR=${EDGE_FACTOR:-16}
SEED=${SEED:-1}
FIELDS=${FIELDS:-"pattern real"}
THREADS=${THREADS:-"1 2"}
REPEAT=${REPEAT:-3}
RANKS=${RANKS:-128}
GPN=${GPN:-4}
STRATEGIES=${STRATEGIES:-"joint group"}
PLAN_REPEAT=${PLAN_REPEAT:-1}
HUGEPAGES=${HUGEPAGES:-1}
EXTRA=${EXTRA:-}

if [ -z "$BUILD" ] || [ ! -x "$BUILD/tools/shiro-plan" ]; then
  echo "bench_planner.sh: no build found; set BUILD=<meson build dir> (with tools/shiro-plan)" >&2
  exit 2
fi
gen=$BUILD/tools/gen/shiro-gen
base=$BUILD/tools/gen/mm-fscanf-baseline
rtime=$BUILD/tools/gen/mm-read-time
plan=$BUILD/tools/shiro-plan
mkdir -p "$OUT"

echo "# shiro bench_planner.sh  $(date -u +%Y-%m-%dT%H:%M:%SZ)  build $BUILD"
echo "# host $(hostname), $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# R-MAT scales [$SCALES], edge factor $EDGE_FACTOR, seed $SEED, fields [$FIELDS]; threads [$THREADS]; best of $REPEAT"
echo

# ---- 1. inputs ----
files=()
for s in $SCALES; do
  for f in $FIELDS; do
    path="$OUT/rmat-s$s-e$EDGE_FACTOR-seed$SEED-$f.mtx"
    if [ ! -s "$path" ]; then
      t0=$(date +%s.%N)
      "$gen" rmat --scale "$s" --edge-factor "$EDGE_FACTOR" --seed "$SEED" --field "$f" -o "$path.tmp"
      mv "$path.tmp" "$path"
      t1=$(date +%s.%N)
      awk -v f="$path" -v b="$(stat -c %s "$path")" -v t0="$t0" -v t1="$t1" \
        'BEGIN { printf "generated %s: %.1f MB in %.2f s (%.0f MB/s)\n", f, b/1e6, t1-t0, b/1e6/(t1-t0) }'
    fi
    files+=("$path")
  done
done
echo

# best_of N CMD...: runs CMD N times, prints the output line with the smallest wall_s.
best_of() {
  local n=$1; shift
  local best="" bw=""
  for _ in $(seq "$n"); do
    local line w
    line=$("$@")
    w=$(awk '{ for (i = 1; i < NF; i++) if ($i == "wall_s") print $(i+1) }' <<<"$line")
    if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN { exit !(a < b) }'; then best=$line; bw=$w; fi
  done
  echo "$best"
}
field() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i+1) }' <<<"$1"; }

# ---- 2. reader ----
readers=("${files[@]}")
for x in $EXTRA; do readers+=("$x"); done
echo "== reader: file -> CSR (mm_read) vs fscanf into triplets (mm-fscanf-baseline) =="
printf "%-34s %8s %7s | %10s %8s | %10s %8s %10s | %9s %9s\n" \
  "file" "MB" "threads" "fscanf" "cpu_s" "mm_read" "cpu_s" "MB/s/cpu" "wall x" "cpu x"
printf "%-34s %8s %7s | %10s %8s | %10s %8s %10s | %9s %9s\n" \
  "" "" "" "MB/s" "" "MB/s" "" "" "vs fscanf" "vs fscanf"
for path in "${readers[@]}"; do
  bytes=$(stat -c %s "$path")
  for t in $THREADS; do
    b=$(best_of "$REPEAT" "$base" "$path")
    r=$(best_of "$REPEAT" "$rtime" "$path" --threads "$t")
    awk -v f="$(basename "$path")" -v by="$bytes" -v t="$t" \
      -v bw="$(field "$b" wall_s)" -v bc="$(field "$b" cpu_s)" \
      -v rw="$(field "$r" wall_s)" -v rc="$(field "$r" cpu_s)" 'BEGIN {
        printf "%-34s %8.1f %7d | %10.1f %8.3f | %10.1f %8.3f %10.1f | %9.2f %9.2f\n",
          f, by/1e6, t, by/1e6/bw, bc, by/1e6/rw, rc, by/1e6/rc, bw/rw, bc/rc }'
  done
done
echo "(MB/s: file bytes over wall time of the fastest run; cpu_s: CPU seconds of that run, all"
echo " threads; MB/s/cpu: bytes over CPU seconds; x: fscanf time over mm_read time)"
echo

# ---- 3. planner ----
echo "== planner: shiro-plan --json, R=$RANKS, G=$GPN (seconds; nnz/s over partition+cover+plan) =="
echo "# kernel transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
echo "# B/nnz: (peak RSS - 64 MiB) / nonzeros; the goal is <= 24 for pattern files, <= 32 with values"
printf "%-34s %7s %-8s %-5s %8s %9s %8s %8s %8s %8s %12s %12s %10s %9s %6s\n" \
  "file" "threads" "strategy" "heap" "read" "partition" "cover" "plan" "write" "total" "nnz/s" "+write nnz/s" "nnz" "RSS MiB" "B/nnz"
for path in "${files[@]}"; do
  case "$path" in *-pattern.mtx) ;; *) continue ;; esac
  for t in $THREADS; do
    for s in $STRATEGIES; do
     for hp in $HUGEPAGES; do
      out="$OUT/plan-$$.shiro.h5"
      best=""
      for _ in $(seq "$PLAN_REPEAT"); do
        j=$(SHIRO_HUGEPAGES=$hp "$plan" "$path" --ranks "$RANKS" --gpus-per-node "$GPN" --strategy "$s" --threads "$t" \
              --json --quiet -o "$out")
        rm -f "$out"
        best=$(python3 - "$best" "$j" <<'EOF'
import json, sys
old, new = sys.argv[1], json.loads(sys.argv[2])
plan = lambda j: sum(j["timings_s"][k] for k in ("partition", "cover", "plan"))  # what nnz/s is over
if old:
    o = json.loads(old)
    if plan(o) <= plan(new):
        new = o
print(json.dumps(new))
EOF
)
      done
      python3 - "$(basename "$path")" "$t" "$s" "$best" "$hp" <<'EOF'
import json, sys
name, t, s, j, hp = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]
ts = j["timings_s"]
mid = ts["partition"] + ts["cover"] + ts["plan"]
wr = mid + ts["write"]
print("%-34s %7s %-8s %-5s %8.3f %9.3f %8.3f %8.3f %8.3f %8.3f %12.3e %12.3e %10d %9.1f %6.1f" % (
    name, t, s, "huge" if hp != "0" else "4KiB", ts["read"], ts["partition"], ts["cover"], ts["plan"], ts["write"], ts["total"],
    j["nnz"] / mid if mid > 0 else float("nan"), j["nnz"] / wr if wr > 0 else float("nan"), j["nnz"],
    j["peak_rss_bytes"] / 2**20, (j["peak_rss_bytes"] - 64 * 2**20) / max(j["nnz"], 1)))
EOF
     done
    done
  done
done
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
