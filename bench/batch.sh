#!/usr/bin/env bash
# bench/batch.sh -- the "Gold plans: fuseplan batch" section of
# BENCHMARKS.md: every heuristic against gold on the starter dataset
# (data/gold/manifest; its curves drawn in docs/img/bench-gold.svg by
# `fuseplan batch report --svg`), batch throughput with --jobs 1 and 2,
# and the overhead of batch per item against a plain `solve` of the same
# item.
#
# Usage: bench/batch.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_BATCH_GOLD  an already built starter dataset to report on
#                             (default: build it here, --jobs 2, which
#                             takes a while; its wall time is printed)
#              FP_BATCH_CUTS  cuts per real graph for the throughput and
#                             overhead runs (default 1: 21 items)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init batch "$@"
cuts=${FP_BATCH_CUTS:-1}
tmp=$bench_tmp
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# report: the starter dataset, built here unless FP_BATCH_GOLD names one.
report() {
  local gold=${FP_BATCH_GOLD:-} t0 load0
  if [ -z "$gold" ]; then
    gold=$tmp/gold
    load0=$(awk '{ print $1 }' /proc/loadavg 2>/dev/null || echo "?")
    t0=$(now)
    "$fp" batch --manifest "$srcdir/data/gold/manifest" -o "$gold" --jobs 2 -q || true
    echo "Built with \`fuseplan batch --manifest data/gold/manifest -o gold --jobs 2\` in $(secs "$t0" "$(now)") s at a load average (1 min) of $load0 (the plans of older exports of the corpus under today's rules: data/gold/README.md)."
    echo
  fi
  # The whole graphs (no cut): gold needs both levels proven.
  local whole names
  whole=$(grep -E '"cut_first": *null' "$gold/index.jsonl" || true)
  names=$(echo "$whole" | grep -E '"gold": *true' | grep -o '"graph": *"[^"]*"' |
    sed 's/.*: *"//; s/"$//' | sort | paste -sd, - | sed 's/,/, /g')
  echo "\`fuseplan batch report gold\`: each method against gold (proven lexicographic optimum); =gold: same traffic and peak; excess over gold in % (median, p90, max). Whole graphs gold (both levels proven): $(echo "$whole" | grep -cE '"gold": *true') of $(echo "$whole" | grep -c .)${names:+ ($names)}."
  echo
  echo '```'
  "$fp" batch report "$gold" --svg "$srcdir/docs/img/bench-gold.svg" |
    awk '/^all:/ && !done { on = 1 } on && /^[^ ]/ && !/^all:/ { on = 0; done = 1 } on' | tee "$tmp/all"
  echo '```'
  echo
  echo "![Each method's traffic excess over gold](docs/img/bench-gold.svg)"
  echo
  sed -n 's/^all: \([0-9]*\) items, \([0-9]*\) gold.*/\1 \2/p' "$tmp/all" | {
    read -r n g
    bench_headline "Gold plans in the starter dataset (data/gold/manifest)" "$g of $n items"
  }
}

# throughput: the same items with one job and with two.
throughput() {
  local j t0
  declare -A wall
  printf '{"graph": "%s/data/graphs/*.json.gz", "cut": {"nodes": "12..40", "count": %d, "seed": 2}, "time_limit": 30}\n' \
    "$srcdir" "$cuts" >"$tmp/m"
  for j in 1 2; do
    t0=$(now)
    "$fp" batch --manifest "$tmp/m" -o "$tmp/j$j" --jobs "$j" -q || true
    wall[$j]=$(secs "$t0" "$(now)")
  done
  n=$(wc -l <"$tmp/j1/index.jsonl" | tr -d ' ')
  echo "Throughput on $n cuts of 12-40 nodes ($cuts per real graph, seed 2, 30 s limit), default --compare:"
  echo
  echo "| jobs | wall (s) | items/s | speed-up |"
  echo "|---:|---:|---:|---:|"
  for j in 1 2; do
    awk -v j="$j" -v w="${wall[$j]}" -v n="$n" -v w1="${wall[1]}" \
      'BEGIN { printf "| %d | %.1f | %.3f | %.2f |\n", j, w, n / w, w1 / w }'
  done
  echo
}

# overhead: the same cuts as files, each solved by `fuseplan solve` in its
# own process, against one batch of them with nothing compared.
overhead() {
  local g c t0 solve batch
  for g in "$srcdir"/data/graphs/*.json.gz; do
    case $g in *.plan.json.gz) continue ;; esac
    "$fp" cut "$g" --nodes 12..40 --count "$cuts" --seed 2 -o "$tmp/cuts" -q
  done
  t0=$(now)
  for c in "$tmp"/cuts/*.json.gz; do
    "$fp" solve "$c" --time-limit 10 -q -o "$tmp/plan.json"
  done
  solve=$(secs "$t0" "$(now)")
  t0=$(now)
  "$fp" batch "$tmp/cuts" -o "$tmp/over" --compare '' --jobs 1 -q \
    --time-limit 10 || true
  batch=$(secs "$t0" "$(now)")
  echo "Overhead: the same $n cuts, one \`fuseplan solve\` process each against \`fuseplan batch DIR --compare '' --jobs 1\`, both \`--time-limit 10\`:"
  echo
  echo "| solve, total (s) | batch, total (s) | overhead per item |"
  echo "|---:|---:|---:|"
  awk -v s="$solve" -v b="$batch" -v n="$n" \
    'BEGIN { printf "| %.1f | %.1f | %+.1f%% (%+.3f s) |\n", s, b, 100 * (b - s) / s, (b - s) / n }'
}

body() {
  report
  throughput
  overhead
}
bench_main "${FP_BATCH_GOLD:+FP_BATCH_GOLD=$FP_BATCH_GOLD }FP_BATCH_CUTS=$cuts make bench-batch" body
