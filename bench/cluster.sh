#!/usr/bin/env bash
# bench/cluster.sh -- the "Gold plans across processes" section of
# BENCHMARKS.md: fuseplan batch across processes: items per second
# serial, with --jobs 2, and under mpirun (-np 2: one worker; -np 3: two
# workers; rank 0 only hands out items) on a subset of the starter
# dataset's items (the starter manifest's first line, with fewer cuts per
# graph), and a model of the wall time of 100k items on 64 nodes x 32
# cores built from those figures; prints markdown.
#
# Usage: bench/cluster.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_CLUSTER_CUTS  cuts per real graph (default 1: 21 items)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init cluster "$@"
cuts=${FP_CLUSTER_CUTS:-1}
tmp=$bench_tmp
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# The starter manifest's cuts (12-40 nodes, 20 s per item), fewer of them.
printf '{"graph": "%s/data/graphs/*.json.gz", "cut": {"nodes": "12..40", "count": %d, "seed": 1}, "time_limit": 20}\n' \
  "$srcdir" "$cuts" >"$tmp/m"
mpirun=""
if command -v mpirun >/dev/null &&
  grep -q '^#define HAVE_MPI 1' "$(dirname "$fp")/config.h" 2>/dev/null; then
  mpirun="mpirun --oversubscribe"
  [ "$(id -u)" = 0 ] && mpirun="$mpirun --allow-run-as-root"
fi
declare -A wall
run() { # name, command...
  local name=$1
  shift
  local t0
  t0=$(now)
  "$@" >/dev/null 2>&1 || true
  wall[$name]=$(secs "$t0" "$(now)")
}
# measure: the four runs (two without MPI), then n, mean and max.
measure() {
  run serial "$fp" batch --manifest "$tmp/m" -o "$tmp/serial" -q
  run jobs2 "$fp" batch --manifest "$tmp/m" -o "$tmp/jobs2" -q --jobs 2
  if [ -n "$mpirun" ]; then
    # shellcheck disable=SC2086 # $mpirun is a command with options
    run np2 $mpirun -np 2 "$fp" batch --manifest "$tmp/m" -o "$tmp/np2" -q
    # shellcheck disable=SC2086
    run np3 $mpirun -np 3 "$fp" batch --manifest "$tmp/m" -o "$tmp/np3" -q
  fi
  n=$(wc -l <"$tmp/serial/index.jsonl" | tr -d ' ')
  # The largest item time of the serial run (its time_s column).
  max=$(sed 's/.*"time_s": \([0-9.e+-]*\).*/\1/' "$tmp/serial/index.jsonl" |
    awk '{ if ($1 > m) m = $1 } END { printf "%.2f\n", m }')
}

row() { # label, workers, wall
  awk -v l="$1" -v w="$2" -v t="$3" -v n="$n" -v s="${wall[serial]}" \
    'BEGIN { printf "| %s | %d | %.2f | %.3f | %.2f |\n", l, w, t, n / t, s / t }'
}

# model: the items' work spread over P workers at the efficiency measured
# here with two workers, plus the largest item (the tail the largest-first
# order leaves at the end), plus rank 0's hand-out cost per item
# (measured: the -np 2 run against serial).
model() {
  local best2=${wall[jobs2]}
  [ -n "$mpirun" ] && best2=${wall[np3]}
  echo "| 100k items, 64 x 32 cores (P = 2047 workers) | t: s per item | e: efficiency of 2 workers | t_max (s) | d: rank 0's s per item | T = N t / (P e) + t_max + N d / P |"
  echo "|---|---:|---:|---:|---:|---:|"
  awk -v n="$n" -v s="${wall[serial]}" -v w2="$best2" -v max="$max" \
    -v np2="${wall[np2]:-${wall[serial]}}" 'BEGIN {
    eff = s / (2 * w2); if (eff > 1) eff = 1
    per = s / n; disp = (np2 - s) / n; if (disp < 0) disp = 0
    N = 100000; P = 64 * 32 - 1
    T = N * per / (P * eff) + max + N * disp / P
    printf "| model | %.3f | %.2f | %.2f | %.4f | %.0f s (%.1f min) |\n", per, eff, max, disp, T, T / 60
  }'
}

body() {
  measure
  echo "$n items: the starter manifest's cuts (12-40 nodes, seed 1, 20 s per item), $cuts per real graph:"
  echo
  echo "| run | workers | wall (s) | items/s | ratio to serial |"
  echo "|---|---:|---:|---:|---:|"
  row "\`batch\` (serial)" 1 "${wall[serial]}"
  row "\`batch --jobs 2\`" 2 "${wall[jobs2]}"
  if [ -n "$mpirun" ]; then
    row "\`mpirun -np 2 batch\`" 1 "${wall[np2]}"
    row "\`mpirun -np 3 batch\`" 2 "${wall[np3]}"
  else
    echo "| \`mpirun\` | - | not built with MPI | | |"
  fi
  echo
  model
}
bench_main "FP_CLUSTER_CUTS=$cuts make bench-cluster" body
