#!/usr/bin/env bash
# bench/batch.sh -- fuseplan batch: every heuristic against gold on the
# starter dataset (data/gold/manifest), batch throughput with --jobs 1
# and 2, and the overhead of batch per item against a plain `solve` of the
# same item; prints markdown.
#
# Usage: bench/batch.sh [FUSEPLAN]   (default: build/fuseplan)
# Environment: FP_BATCH_GOLD  an already built starter dataset to report on
#                             (default: build it here, --jobs 2, which
#                             takes a while; its wall time is printed)
#              FP_BATCH_CUTS  cuts per real graph for the throughput and
#                             overhead runs (default 1: 20 items)
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
fp=${1:-$srcdir/build/fuseplan}
cuts=${FP_BATCH_CUTS:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

gold=${FP_BATCH_GOLD:-}
if [ -z "$gold" ]; then
  gold=$tmp/gold
  t0=$(now)
  "$fp" batch --manifest "$srcdir/data/gold/manifest" -o "$gold" --jobs 2 -q || true
  echo "Built with \`fuseplan batch --manifest data/gold/manifest -o gold --jobs 2\`"
  echo "in $(secs "$t0" "$(now)") s."
  echo
fi
echo "\`fuseplan batch report gold\`: each method against gold (proven"
echo "lexicographic optimum) on the gold items; =gold: same traffic and peak;"
echo "excess over gold's traffic and peak, in % (median, p90, max)."
echo
echo '```'
"$fp" batch report "$gold" | awk '/^all:/ && !done { on = 1 } on && /^[^ ]/ && !/^all:/ { on = 0; done = 1 } on'
echo '```'
echo
echo "Per source graph (the same columns):"
echo
echo '```'
"$fp" batch report "$gold" | awk '/^all:/ { skip = 1; next } skip && /^ / { next } { skip = 0; print }'
echo '```'
echo

# Throughput: the same items with one job and with two.
printf '{"graph": "%s/data/graphs/*.json.gz", "cut": {"nodes": "12..40", "count": %d, "seed": 2}, "time_limit": 30}\n' \
  "$srcdir" "$cuts" >"$tmp/m"
declare -A wall
for j in 1 2; do
  t0=$(now)
  "$fp" batch --manifest "$tmp/m" -o "$tmp/j$j" --jobs "$j" -q || true
  wall[$j]=$(secs "$t0" "$(now)")
done
n=$(wc -l <"$tmp/j1/index.jsonl" | tr -d ' ')
echo "Throughput on $n cuts of 12-40 nodes (one per real graph per"
echo "\`FP_BATCH_CUTS\`, seed 2, 30 s limit), default --compare:"
echo
echo "| jobs | wall (s) | items/s | speed-up |"
echo "|---:|---:|---:|---:|"
for j in 1 2; do
  awk -v j="$j" -v w="${wall[$j]}" -v n="$n" -v w1="${wall[1]}" \
    'BEGIN { printf "| %d | %.1f | %.3f | %.2f |\n", j, w, n / w, w1 / w }'
done
echo

# Overhead: the same cuts as files, each solved by `fuseplan solve` in its
# own process, against one batch of them with nothing compared.
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
echo "Overhead per item: the same $n cuts solved one \`fuseplan solve\` each"
echo "(its own process) against \`fuseplan batch DIR --compare '' --jobs 1\`,"
echo "both with \`--time-limit 10\`"
echo "(a child per item, plus its plan, labels and record files):"
echo
echo "| solve, total (s) | batch, total (s) | overhead per item |"
echo "|---:|---:|---:|"
awk -v s="$solve" -v b="$batch" -v n="$n" \
  'BEGIN { printf "| %.1f | %.1f | %+.1f%% (%+.3f s) |\n", s, b, 100 * (b - s) / s, (b - s) / n }'
