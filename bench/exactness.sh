#!/usr/bin/env bash
# bench/exactness.sh -- the "Exactness on small graphs" section of
# BENCHMARKS.md: how often the exact model proves the optimum on small
# generated graphs: every family at 36 and 50 nodes, seeds FP_EXACT_SEEDS,
# `--method ilp --window exact` and the default `--method auto`, each
# under the same wall-clock limit.
#
# Usage: bench/exactness.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_EXACT_S  seconds per solve (default 10)
#              FP_EXACT_SEEDS  the seeds (default "1 2")
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init exactness "$@"
secs=${FP_EXACT_S:-10}
seeds=${FP_EXACT_SEEDS:-1 2}

num() { grep -o "\"$1\": *[^,}]*" "$2" | head -n 1 | sed 's/.*: *//; s/"//g'; }
cell() { # cell PLAN: status / levels proven / gap % / seconds
  awk -v s="$(num status "$1")" -v l="$(num levels_proven "$1")" \
    -v g="$(num gap "$1")" -v t="$(num time_s "$1")" \
    'BEGIN { printf "%s / %s / %.3f%% / %.1f", s, l, 100 * g, t }'
}

body() {
  local proven_ilp=0 proven_auto=0 both_auto=0 total=0 g=$bench_tmp/g.json
  echo "| family | nodes | seed | model rows | ilp --window exact, $secs s | auto, $secs s |"
  echo "|---|---:|---:|---:|---|---|"
  for f in transformer convnet mlp random; do
    for n in 36 50; do
      for s in $seeds; do
        "$fp" gen --family "$f" --size "$n" --seed "$s" -o "$g"
        "$fp" solve "$g" --method ilp --window exact --time-limit "$secs" -q -o "$bench_tmp/i.json"
        "$fp" solve "$g" --time-limit "$secs" -q -o "$bench_tmp/a.json"
        total=$((total + 1))
        [ "$(num levels_proven "$bench_tmp/i.json")" -ge 1 ] && proven_ilp=$((proven_ilp + 1))
        [ "$(num levels_proven "$bench_tmp/a.json")" -ge 1 ] && proven_auto=$((proven_auto + 1))
        [ "$(num levels_proven "$bench_tmp/a.json")" -ge 2 ] && both_auto=$((both_auto + 1))
        echo "| $f | $n | $s | $(num rows "$bench_tmp/i.json") | $(cell "$bench_tmp/i.json") | $(cell "$bench_tmp/a.json") |"
      done
    done
  done
  echo
  echo "Proved optimal (first level): exact ILP $proven_ilp of $total, auto $proven_auto of $total (both levels: $both_auto)."
  bench_headline "Small graphs (36-50 nodes) proven optimal by auto in $secs s" "$proven_auto of $total ($both_auto with peak too)"
}
bench_main "FP_EXACT_S=$secs FP_EXACT_SEEDS='$seeds' make bench-exactness" body
