#!/usr/bin/env bash
# bench/proof.sh -- time to proof: per real graph (data/graphs and
# data/exported), how long `fuseplan solve` (auto, default tolerances)
# takes to stop under a generous limit, why it stopped, and the gaps of
# the two lexicographic levels (traffic, then peak among least-traffic
# plans): the "proof" section of BENCHMARKS.md.
#
# Usage: bench/proof.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_PROOF_S     the --time-limit of each solve (default 60)
#              FP_PROOF_DIRS  the corpus directories (default: data/graphs
#                             data/exported)
#              FP_PROOF_ONLY  a grep -E pattern: only graphs whose name
#                             matches (default: all)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init proof "$@"
secs=${FP_PROOF_S:-60}
dirs=${FP_PROOF_DIRS:-"$srcdir/data/graphs $srcdir/data/exported"}
only=${FP_PROOF_ONLY:-.}

num() { grep -o "\"$1\": *[0-9.e+-]*" "$2" | head -n 1 | sed 's/.*: *//'; }
str() { grep -o "\"$1\": *\"[^\"]*\"" "$2" | head -n 1 | sed 's/.*: *"//; s/"$//'; }
pct() { if [ -n "$1" ]; then awk -v g="$1" 'BEGIN { printf "%.4f%%", 100 * g }'; else echo "-"; fi; }
now() { date +%s.%N; }

# The 1-minute load average: the machine is shared, timings depend on it.
load() { awk '{ print $1 }' /proc/loadavg 2>/dev/null || echo "?"; }

body() {
  local done_list="" name wall why t0 t1 n stopped=0 total=0 tmp=$bench_tmp
  local load0
  load0=$(load)
  # The graphs that stop proven or within tolerance go in one line (name
  # and seconds); a row each for the others, with their gaps.
  echo "| graph | nodes | seconds | stop_reason | gap (traffic) | gap2 (peak) | levels proven |"
  echo "|---|---:|---:|---|---:|---:|---:|"
  for d in $dirs; do
    for g in "$d"/*.json.gz; do
      case $g in *.plan.json.gz) continue ;; esac
      name=$(basename "${g%.json.gz}")
      echo "$name" | grep -Eq "$only" || continue
      "$fp" info "$g" --json >"$tmp/info.json"
      t0=$(now)
      "$fp" solve "$g" --time-limit "$secs" -q -o "$tmp/p.json"
      t1=$(now)
      wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
      why=$(str stop_reason "$tmp/p.json")
      n=$(num nodes "$tmp/info.json")
      total=$((total + 1))
      case $why in
      proven | gap)
        stopped=$((stopped + 1))
        done_list="$done_list${done_list:+, }$name ($n nodes) $wall s $why"
        ;;
      *) echo "| $name | $n | $wall | $why | $(pct "$(num gap "$tmp/p.json")") | $(pct "$(num gap2 "$tmp/p.json")") | $(num levels_proven "$tmp/p.json") |" ;;
      esac
    done
  done
  echo
  echo "Stopped proven or within tolerance on $stopped of $total graphs${done_list:+: $done_list}. Load average (1 min) $load0 at the start, $(load) at the end."
  bench_headline "auto stops proven or within tolerance (--time-limit $secs)" "$stopped of $total real graphs"
}
bench_main "make bench-proof" body
