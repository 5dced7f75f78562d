#!/usr/bin/env bash
# bench/bounds.sh -- the "What the structural bounds cost" section of
# BENCHMARKS.md: `fuseplan info` (load, eager plan, the traffic bound and
# the peak bound with all its rules) on generated graphs of every family
# at 1,000 and 10,000 nodes, best of 3 wall-clock runs.  With FP_BOUNDS_OLD
# (a second binary), both side by side and their ratio (the peak bounds
# must be equal).
#
# Usage: bench/bounds.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_BOUNDS_OLD  an older fuseplan binary to compare with
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init bounds "$@"
old=${FP_BOUNDS_OLD:-}

best_of_3() { # best_of_3 BINARY GRAPH: seconds
  local best="" t0 t1
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    "$1" info "$2" >/dev/null
    t1=$(date +%s.%N)
    best=$(awk -v a="$t0" -v b="$t1" -v m="$best" \
      'BEGIN { d = b - a; if (m == "" || d < m) m = d; printf "%.3f", m }')
  done
  echo "$best"
}
peak_bound() { "$1" info "$2" | awk '/^peak bound/ { print $3 }'; }

body() {
  local g pb t to
  if [ -n "$old" ]; then
    echo "| graph | nodes | peak bound (bytes) | info s | before s | ratio |"
    echo "|---|---:|---:|---:|---:|---:|"
  else
    echo "| graph | nodes | peak bound (bytes) | info s |"
    echo "|---|---:|---:|---:|"
  fi
  for f in transformer convnet mlp random; do
    for n in 1000 10000; do
      g=$bench_tmp/$f-$n.json
      "$fp" gen --family "$f" --size "$n" --seed 1 -o "$g"
      pb=$(peak_bound "$fp" "$g")
      t=$(best_of_3 "$fp" "$g")
      if [ -n "$old" ]; then
        [ "$(peak_bound "$old" "$g")" = "$pb" ] || {
          echo "peak bounds differ on $f:$n" >&2
          exit 1
        }
        to=$(best_of_3 "$old" "$g")
        echo "| $f:$n | $n | $pb | $t | $to | $(awk -v a="$to" -v b="$t" 'BEGIN { printf "%.1f", a / b }') |"
      else
        echo "| $f:$n | $n | $pb | $t |"
      fi
    done
  done
}
bench_main "make bench-bounds" body
