#!/usr/bin/env bash
# bench/mpi-lost.sh -- the "A lost worker rank" section of BENCHMARKS.md:
# how long rank 0 of `mpirun --enable-recovery -np 3 fuseplan batch` takes
# to find a worker rank lost: each run kills one worker rank with SIGKILL
# 3 s into the batch (in the middle of a solve) and measures, from the
# kill, when rank 0 wrote the lost item's error record (its mtime: the
# detection) and when the run ended.  Needs a build with MPI and Open
# MPI's mpirun; without them the section says so.
#
# Usage: bench/mpi-lost.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_LOST_RUNS  runs (default 3)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init mpi-lost "$@"
runs=${FP_LOST_RUNS:-3}
mpirun="mpirun --oversubscribe --enable-recovery -np 3"
[ "$(id -u)" = 0 ] && mpirun="$mpirun --allow-run-as-root"
tmp=$bench_tmp
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# lost_run I: one batch with a worker killed 3 s in; one table row.
lost_run() {
  local out=$tmp/out$1 job victim t_kill t_end id t_rec
  $mpirun "$fp" batch "$tmp/cuts" --compare greedy --time-limit 6 -o "$out" \
    >"$tmp/log$1" 2>&1 &
  job=$!
  sleep 3
  # The worker ranks: mpirun's children running fuseplan, all but rank 0
  # (the oldest).
  victim=$(pgrep -P "$(pgrep -P $job -x mpirun || echo $job)" -f "batch" |
    sort -n | tail -1)
  if [ -z "$victim" ]; then
    wait $job || true
    echo "| $1 | no worker rank was running 3 s in | | | |"
    return 0
  fi
  t_kill=$(date +%s.%N)
  kill -9 "$victim"
  wait $job || true
  t_end=$(date +%s.%N)
  id=$(grep '"status": "error"' "$out/index.jsonl" | head -1 |
    sed 's/^{"id": "\([0-9a-f]*\)".*/\1/')
  t_rec=$t_kill
  [ -n "$id" ] && t_rec=$(date -r "$out/items/$id.json" +%s.%N)
  echo "| $1 | $(secs "$t_kill" "$t_rec") | $(secs "$t_kill" "$t_end") |" \
    "$(grep -c 'lost while solving' "$tmp/log$1" || true) |" \
    "$(wc -l <"$out/index.jsonl" | tr -d ' ') |"
}

body() {
  if ! command -v mpirun >/dev/null ||
    ! grep -q '^#define HAVE_MPI 1' "$builddir/config.h" 2>/dev/null; then
    echo "Not built with MPI (configure --with-mpi): nothing measured."
    return 0
  fi
  # Four generated graphs that auto does not prove within 6 s (it stops
  # early on a proven item, and then no solve is left to die in).
  mkdir -p "$tmp/cuts"
  for s in 1 2 3 4; do
    "$fp" gen --family random --size 200 --seed "$s" -o "$tmp/cuts/random$s.json"
  done
  echo "4 generated graphs (\`gen --family random --size 200\`, seeds 1-4), \`--time-limit 6 --compare greedy\`; times from the kill:"
  echo
  echo "| run | lost item recorded (s) | run ended (s) | items lost | index rows |"
  echo "|---|---:|---:|---:|---:|"
  for i in $(seq "$runs"); do
    lost_run "$i"
  done
}
bench_main "FP_LOST_RUNS=$runs make bench-mpi-lost" body
