#!/usr/bin/env bash
# bench/dominance.sh -- the "Dominance against Inductor" section of
# BENCHMARKS.md: fuseplan's default answer against the compiler's own plan
# on every graph that has one (data/graphs and data/exported: PyTorch
# Inductor's pre-fusion graphs and its *.inductor.plan.json.gz), with and
# without --start, the traffic answer's gap to its bound, and the peak
# objective's answer and gap, and the exporter's oracle record (groups of
# 2-6 nodes fuseplan's rules call legal, asked of Inductor; meta.oracle,
# docs/exporter.md); one row per graph.
#
# Usage: bench/dominance.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_DOM_S  seconds per solve (default 10)
#              FP_CORPUS_DIR  the graphs (default: data/graphs and data/exported)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init dominance "$@"
dirs=${FP_CORPUS_DIR:-$srcdir/data/graphs $srcdir/data/exported}
secs=${FP_DOM_S:-10}
tmp=$bench_tmp

num() { grep -o "\"$1\": *[0-9.e+-]*" "$2" | head -n 1 | sed 's/.*: *//'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'; }
pct() { awk -v x="$1" 'BEGIN { printf "%.3f%%", 100 * x }'; }
status() { grep -o '"status": "[a-z-]*"' "$1" | head -n 1 | sed 's/.*: "//; s/"//'; }
# verdict AT AP IT IP: how fuseplan's (traffic, peak) compares with Inductor's
verdict() {
  if [ "$1" = "$3" ] && [ "$2" = "$4" ]; then echo equal
  elif [ "$1" -le "$3" ] && [ "$2" -le "$4" ]; then echo dominates
  elif [ "$3" -le "$1" ] && [ "$4" -le "$2" ]; then echo "**dominated**"
  else echo "trade-off"; fi
}

# oracle GRAPH: "samples / connected / disagreements" of the graph's
# meta.oracle ("-" for a graph exported with --oracle 0); the counts go to
# $tmp/oracle.
oracle() {
  gzip -dc "$1" | grep -o '"oracle":{[^}]*}' >"$tmp/o.json" || true
  if [ ! -s "$tmp/o.json" ]; then
    echo "-"
    return
  fi
  local k c=""
  for k in samples connected disagreements; do c="$c $(num "$k" "$tmp/o.json")"; done
  echo "$c" >>"$tmp/oracle"
  echo "$c" | awk '{ print $1 " / " $2 " / " $3 }'
}

# row GRAPH PLAN: one table row; the verdicts and gaps go to $tmp/stats.
row() {
  local g=$1 ip=$2 it ipk ep inside r v vs at ap tgap
  "$fp" eval "$g" "$ip" --json >"$tmp/i.json"
  "$fp" info "$g" --json >"$tmp/info.json"
  it=$(num traffic_bytes "$tmp/i.json")
  ipk=$(num peak_bytes "$tmp/i.json")
  ep=$(grep -o '"eager": {[^}]*}' "$tmp/info.json" | grep -o '"peak_bytes": [0-9]*' | sed 's/.*: //')
  inside=inside
  [ "$ipk" -gt "$ep" ] && inside=over
  "$fp" solve "$g" --time-limit "$secs" -q -o "$tmp/a.json"
  at=$(num traffic_bytes "$tmp/a.json")
  ap=$(num peak_bytes "$tmp/a.json")
  tgap=$(num gap "$tmp/a.json")
  v=$(verdict "$at" "$ap" "$it" "$ipk")
  "$fp" solve "$g" --time-limit "$secs" -q -o "$tmp/s.json" --start "$ip"
  vs=$(verdict "$(num traffic_bytes "$tmp/s.json")" "$(num peak_bytes "$tmp/s.json")" "$it" "$ipk")
  "$fp" solve "$g" --objective peak --time-limit "$secs" -q -o "$tmp/p.json"
  r="| $(basename "${g%.json.gz}") | $inside | $(ratio "$at" "$it") | $(ratio "$ap" "$ipk") | $v | $vs"
  echo "$r | $(pct "$tgap") | $(ratio "$(num peak_bytes "$tmp/p.json")" "$ipk") | $(pct "$(num gap "$tmp/p.json")") | $(status "$tmp/p.json") | $(oracle "$g") |"
  echo "$v $vs $tgap $(num gap "$tmp/p.json")" >>"$tmp/stats"
}

# oracle_line: the oracle column summed up (the exporter's command: the
# graphs' regenerate.sh, tools/export_inductor.py --oracle 500 by default).
oracle_line() {
  awk '{ n++; s += $1; d += $3; if ($3 > 0) b++ }
    END { printf "Oracle (`data/graphs/regenerate.sh`, `data/exported/regenerate.sh`: the exporter asks Inductor whether each sampled group is one kernel; meta.oracle): %d disagreements in %d groups on %d graphs, %d graphs with any.", d, s, n, b }' "$tmp/oracle"
}

body() {
  : >"$tmp/stats"
  : >"$tmp/oracle"
  echo "| graph | Inductor peak vs eager | traffic x | peak x | verdict | verdict with --start | traffic gap | peak objective: peak x | gap | status | oracle: samples / connected / disagreements |"
  echo "|---|---|---:|---:|---|---|---:|---:|---:|---|---:|"
  for d in $dirs; do
    for g in "$d"/*.json.gz; do
      case $g in *.plan.json.gz) continue ;; esac
      [ -f "${g%.json.gz}.inductor.plan.json.gz" ] || continue
      row "$g" "${g%.json.gz}.inductor.plan.json.gz"
    done
  done
  echo
  echo "x: fuseplan / Inductor; \"over\": Inductor's peak is above the eager peak, outside the default limit. $(oracle_line)"
  awk -v s="$secs" '
    { n++; for (i = 1; i <= 2; i++) if ($i ~ /dominated/) bad[i]++
      c[$1]++; if ($3 > tg) tg = $3; if ($4 > pg) pg = $4 }
    END {
      printf "<!-- headline: fuseplan'"'"'s answer (%s s) dominated by Inductor'"'"'s plan | on %d of %d real graphs (%d with --start); dominates on %d, equal on %d, trade-off on %d -->\n",
        s, bad[1], n, bad[2], c["dominates"], c["equal"], c["trade-off"]
      printf "<!-- headline: Worst gap to the lower bound, traffic / peak objective (%s s) | %.3f%% / %.3f%% -->\n",
        s, 100 * tg, 100 * pg
    }' "$tmp/stats"
}
bench_main "FP_DOM_S=$secs make bench-dominance" body
