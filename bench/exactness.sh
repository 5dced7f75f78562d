#!/usr/bin/env bash
# bench/exactness.sh -- how often the exact model proves the optimum on
# small generated graphs: every family at 36 and 50 nodes, seeds 1-4,
# `--method ilp --window exact` and the default `--method auto`, each
# under the same wall-clock limit.  Prints a markdown table.
#
# Usage: bench/exactness.sh [FUSEPLAN]   (default: build/fuseplan)
# Environment: FP_EXACT_S  seconds per solve (default 10)
#              FP_EXACT_SEEDS  the seeds (default "1 2 3 4")
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
fp=${1:-$srcdir/build/fuseplan}
secs=${FP_EXACT_S:-10}
seeds=${FP_EXACT_SEEDS:-1 2 3 4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

num() { grep -o "\"$1\": *[^,}]*" "$2" | head -n 1 | sed 's/.*: *//; s/"//g'; }
cell() { # cell PLAN: status / levels proven / gap % / seconds
  awk -v s="$(num status "$1")" -v l="$(num levels_proven "$1")" \
    -v g="$(num gap "$1")" -v t="$(num time_s "$1")" \
    'BEGIN { printf "%s / %s / %.3f%% / %.1f", s, l, 100 * g, t }'
}

echo "Generated graphs, peak limit = the eager peak, $secs s per solve."
echo "Cells: status / lexicographic levels proven / gap / seconds (the"
echo "seconds include the second level, which runs until it is proven or"
echo "the time is up)."
echo
echo "| family | nodes | seed | model rows | ilp --window exact | auto |"
echo "|---|---:|---:|---:|---|---|"
proven_ilp=0 proven_auto=0 both_auto=0 total=0
for f in transformer convnet mlp random; do
  for n in 36 50; do
    for s in $seeds; do
      g=$tmp/g.json
      "$fp" gen --family "$f" --size "$n" --seed "$s" -o "$g"
      "$fp" solve "$g" --method ilp --window exact --time-limit "$secs" -q -o "$tmp/i.json"
      "$fp" solve "$g" --time-limit "$secs" -q -o "$tmp/a.json"
      total=$((total + 1))
      [ "$(num levels_proven "$tmp/i.json")" -ge 1 ] && proven_ilp=$((proven_ilp + 1))
      [ "$(num levels_proven "$tmp/a.json")" -ge 1 ] && proven_auto=$((proven_auto + 1))
      [ "$(num levels_proven "$tmp/a.json")" -ge 2 ] && both_auto=$((both_auto + 1))
      echo "| $f | $n | $s | $(num rows "$tmp/i.json") | $(cell "$tmp/i.json") | $(cell "$tmp/a.json") |"
    done
  done
done
echo
echo "Proved optimal (first level): exact ILP $proven_ilp of $total, auto $proven_auto of $total (both levels: $both_auto)."
