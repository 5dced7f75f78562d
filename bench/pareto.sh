#!/usr/bin/env bash
# bench/pareto.sh -- the "Pareto fronts with proofs" section of
# BENCHMARKS.md: the traffic-vs-peak front with proofs on the corpus
# graphs where Inductor trades peak for traffic (its plan over the eager
# peak with less traffic than fuseplan's default answer): every point's
# peak limit, traffic, peak, status, gap and seconds, with Inductor's plan
# as a --start; the first graph's front is also drawn
# (docs/img/bench-pareto-GRAPH.svg, `fuseplan pareto --svg`).
#
# Usage: bench/pareto.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_PARETO_S  seconds per front (default 120)
#              FP_PARETO_GRAPHS  graph names in data/graphs (default: the
#              trade-off graphs below)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init pareto "$@"
secs=${FP_PARETO_S:-120}
graphs=${FP_PARETO_GRAPHS:-mixer_b16_224.fwd deit_small_patch16_224.fwd}
tmp=$bench_tmp

eager() { # eager KEY: the eager plan's KEY from $tmp/info.json
  grep -o '"eager": {[^}]*}' "$tmp/info.json" | grep -o "\"$1\": [0-9]*" | sed 's/.*: //'
}
v() { echo "$1" | grep -o "\"$2\": *[^,}]*" | sed 's/.*: *//; s/"//g'; }

# front NAME: one graph's table (points, then Inductor's plan).
front() {
  local name=$1 g ip et ep svg=() it ipk
  g=$srcdir/data/graphs/$name.json.gz
  ip=$srcdir/data/graphs/$name.inductor.plan.json.gz
  "$fp" info "$g" --json >"$tmp/info.json"
  et=$(eager traffic_bytes)
  ep=$(eager peak_bytes)
  if [ -z "$plot" ]; then
    plot=docs/img/bench-pareto-$name.svg
    svg=(--svg "$srcdir/$plot")
  fi
  "$fp" pareto "$g" --time-limit "$secs" --start "$ip" -o "$tmp/f.json" "${svg[@]}" >/dev/null
  echo
  echo "**$name** (Inductor's plan: the last row)"
  echo
  echo "| peak limit x | traffic x | peak x | status | gap | seconds | solves |"
  echo "|---:|---:|---:|---|---:|---:|---:|"
  grep -o '{"peak_limit"[^}]*}' "$tmp/f.json" | while read -r pt; do
    v "$pt" gap >>"$tmp/gaps"
    awk -v l="$(v "$pt" peak_limit)" -v t="$(v "$pt" traffic_bytes)" -v p="$(v "$pt" peak_bytes)" \
      -v s="$(v "$pt" status)" -v gap="$(v "$pt" gap)" -v ts="$(v "$pt" time_s)" -v n="$(v "$pt" solves)" \
      -v et="$et" -v ep="$ep" 'BEGIN {
        printf "| %.4f | %.4f | %.4f | %s | %.2f%% | %.1f | %d |\n",
          l / ep, t / et, p / ep, s, 100 * gap, ts, n }'
  done
  "$fp" eval "$g" "$ip" --json >"$tmp/i.json"
  it=$(grep -o '"traffic_bytes": *[0-9]*' "$tmp/i.json" | head -1 | sed 's/.*: *//')
  ipk=$(grep -o '"peak_bytes": *[0-9]*' "$tmp/i.json" | head -1 | sed 's/.*: *//')
  awk -v t="$it" -v p="$ipk" -v et="$et" -v ep="$ep" 'BEGIN {
    printf "| Inductor | %.4f | %.4f | | | | |\n", t / et, p / ep }'
}

body() {
  plot=""
  : >"$tmp/gaps"
  echo "\`fuseplan pareto GRAPH --time-limit $secs --start INDUCTOR_PLAN\`; x: ratio to the eager plan."
  for name in $graphs; do
    [ -f "$srcdir/data/graphs/$name.json.gz" ] || continue
    front "$name"
  done
  if [ -n "$plot" ]; then
    echo
    echo "![The front of $(basename "$plot" .svg | sed 's/^bench-pareto-//')]($plot)"
  fi
  awk -v s="$secs" '{ n++; if ($1 > m) m = $1 }
    END { printf "<!-- headline: Pareto fronts with proofs (%s s per front): worst gap | %.2f%% over %d points -->\n", s, 100 * m, n }' "$tmp/gaps"
}
bench_main "FP_PARETO_S=$secs make bench-pareto" body
