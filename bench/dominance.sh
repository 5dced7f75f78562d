#!/usr/bin/env bash
# bench/dominance.sh -- fuseplan's default answer against the compiler's own
# plan on every graph of the corpus that has one (data/graphs: PyTorch
# Inductor's pre-fusion graphs and its *.inductor.plan.json.gz), with and
# without --start, and the peak objective's gap; prints markdown tables.
#
# Usage: bench/dominance.sh [FUSEPLAN]   (default: build/fuseplan)
# Environment: FP_DOM_S  seconds per solve (default 10)
#              FP_CORPUS_DIR  the corpus (default: data/graphs)
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
fp=${1:-$srcdir/build/fuseplan}
dir=${FP_CORPUS_DIR:-$srcdir/data/graphs}
secs=${FP_DOM_S:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

num() { grep -o "\"$1\": *[0-9.e+-]*" "$2" | head -n 1 | sed 's/.*: *//'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'; }
# verdict AT AP IT IP: how fuseplan's (traffic, peak) compares with Inductor's
verdict() {
  if [ "$1" = "$3" ] && [ "$2" = "$4" ]; then echo equal
  elif [ "$1" -le "$3" ] && [ "$2" -le "$4" ]; then echo dominates
  elif [ "$3" -le "$1" ] && [ "$4" -le "$2" ]; then echo "**dominated**"
  else echo "trade-off"; fi
}

echo "Objective traffic under the default peak limit (the eager peak), $secs s"
echo "per solve.  Ratios are fuseplan / Inductor.  Inductor's plan is"
echo "outside the limit where its peak is above the eager peak (\"over\")."
echo
echo "| graph | Inductor peak vs eager | traffic x | peak x | verdict | with --start: traffic x | peak x | verdict |"
echo "|---|---|---:|---:|---|---:|---:|---|"
for g in "$dir"/*.json.gz; do
  case $g in *.plan.json.gz) continue ;; esac
  b=${g%.json.gz}
  ip=$b.inductor.plan.json.gz
  [ -f "$ip" ] || continue
  name=$(basename "$b")
  "$fp" eval "$g" "$ip" --json >"$tmp/i.json"
  "$fp" info "$g" --json >"$tmp/info.json"
  it=$(num traffic_bytes "$tmp/i.json")
  ipk=$(num peak_bytes "$tmp/i.json")
  ep=$(grep -o '"eager": {[^}]*}' "$tmp/info.json" | grep -o '"peak_bytes": [0-9]*' | sed 's/.*: //')
  inside=inside
  [ "$ipk" -gt "$ep" ] && inside=over
  row="| $name | $inside"
  for start in "" "--start $ip"; do
    # shellcheck disable=SC2086
    "$fp" solve "$g" --time-limit "$secs" -q -o "$tmp/a.json" $start
    at=$(num traffic_bytes "$tmp/a.json")
    ap=$(num peak_bytes "$tmp/a.json")
    row="$row | $(ratio "$at" "$it") | $(ratio "$ap" "$ipk") | $(verdict "$at" "$ap" "$it" "$ipk")"
  done
  echo "$row |"
done
echo
echo "Objective peak ($secs s per solve): the answer, its lower bound (valid"
echo "for every plan: docs/cost-model.md, \"Peak bound\") and the gap."
echo
echo "| graph | peak (bytes) | bound (bytes) | gap | status |"
echo "|---|---:|---:|---:|---|"
for g in "$dir"/*.json.gz; do
  case $g in *.plan.json.gz) continue ;; esac
  "$fp" solve "$g" --objective peak --time-limit "$secs" -q -o "$tmp/p.json"
  gap=$(num gap "$tmp/p.json")
  printf '| %s | %s | %s | %s | %s |\n' "$(basename "${g%.json.gz}")" \
    "$(num peak_bytes "$tmp/p.json")" \
    "$(awk -v b="$(num bound "$tmp/p.json")" 'BEGIN { printf "%.0f", b }')" \
    "$(awk -v x="$gap" 'BEGIN { printf "%.3f%%", 100 * x }')" \
    "$(grep -o '"status": "[a-z-]*"' "$tmp/p.json" | head -n 1 | sed 's/.*: "//; s/"//')"
done
