#!/usr/bin/env bash
# bench/pareto.sh -- the traffic-vs-peak front with proofs on the corpus
# graphs where Inductor trades peak for traffic (its plan over the eager
# peak with less traffic than fuseplan's default answer): every point's
# bound, gap, status and seconds, with Inductor's plan as a --start.
#
# Usage: bench/pareto.sh [FUSEPLAN]   (default: build/fuseplan)
# Environment: FP_PARETO_S  seconds per front (default 120)
#              FP_PARETO_GRAPHS  graph names in data/graphs (default: the
#              trade-off graphs below)
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
fp=${1:-$srcdir/build/fuseplan}
secs=${FP_PARETO_S:-120}
graphs=${FP_PARETO_GRAPHS:-mixer_b16_224.fwd deit_small_patch16_224.fwd}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "\`fuseplan pareto GRAPH --time-limit $secs --start INDUCTOR_PLAN\`, 8"
echo "points.  Bound: a lower bound on the traffic of every legal plan under"
echo "the point's peak limit; a point is optimal exactly when its bound"
echo "reaches its traffic.  Traffic and peak are ratios to the eager plan."
for name in $graphs; do
  g=$srcdir/data/graphs/$name.json.gz
  ip=$srcdir/data/graphs/$name.inductor.plan.json.gz
  [ -f "$g" ] && [ -f "$ip" ] || continue
  "$fp" info "$g" --json >"$tmp/info.json"
  et=$(grep -o '"eager": {[^}]*}' "$tmp/info.json" | grep -o '"traffic_bytes": [0-9]*' | sed 's/.*: //')
  ep=$(grep -o '"eager": {[^}]*}' "$tmp/info.json" | grep -o '"peak_bytes": [0-9]*' | sed 's/.*: //')
  start=$(date +%s.%N)
  "$fp" pareto "$g" --time-limit "$secs" --start "$ip" -o "$tmp/f.json" >/dev/null
  took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo
  echo "**$name** ($took s; Inductor's plan: the last row)"
  echo
  echo "| peak limit x eager | traffic x | peak x | status | gap | seconds | solves |"
  echo "|---:|---:|---:|---|---:|---:|---:|"
  grep -o '{"peak_limit"[^}]*}' "$tmp/f.json" | while read -r pt; do
    v() { echo "$pt" | grep -o "\"$1\": *[^,}]*" | sed 's/.*: *//; s/"//g'; }
    awk -v l="$(v peak_limit)" -v t="$(v traffic_bytes)" -v p="$(v peak_bytes)" \
      -v s="$(v status)" -v gap="$(v gap)" -v ts="$(v time_s)" -v n="$(v solves)" \
      -v et="$et" -v ep="$ep" 'BEGIN {
        printf "| %.4f | %.4f | %.4f | %s | %.2f%% | %.1f | %d |\n",
          l / ep, t / et, p / ep, s, 100 * gap, ts, n }'
  done
  "$fp" eval "$g" "$ip" --json >"$tmp/i.json"
  it=$(grep -o '"traffic_bytes": *[0-9]*' "$tmp/i.json" | head -1 | sed 's/.*: *//')
  ipk=$(grep -o '"peak_bytes": *[0-9]*' "$tmp/i.json" | head -1 | sed 's/.*: *//')
  awk -v t="$it" -v p="$ipk" -v et="$et" -v ep="$ep" 'BEGIN {
    printf "| Inductor | %.4f | %.4f | | | | |\n", t / et, p / ep }'
done
