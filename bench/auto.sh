#!/usr/bin/env bash
# bench/auto.sh -- the "auto against the heuristics" section of
# BENCHMARKS.md: bench/bench_auto (auto under the eager peak, one job,
# FP_BENCH_AUTO_S seconds) on generated graphs and six corpus graphs;
# with FP_BENCH_AUTO_LONG_S, a second table at that limit on
# FP_BENCH_AUTO_LONG.
#
# Usage: bench/auto.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_BENCH_AUTO_S  seconds per graph (default 30)
#              FP_BENCH_AUTO    graphs: FAMILY:SIZE or files (default below)
#              FP_BENCH_AUTO_LONG_S, FP_BENCH_AUTO_LONG  the long run
#              (default: none; e.g. 300 and "transformer:1000 transformer:10000")
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init auto "$@"
secs=${FP_BENCH_AUTO_S:-30}
gen=${FP_BENCH_AUTO:-transformer:1000 convnet:1000 random:1000 mlp:1000 \
transformer:10000 convnet:10000 random:10000 mlp:10000}
long_s=${FP_BENCH_AUTO_LONG_S:-}
long=${FP_BENCH_AUTO_LONG:-transformer:1000 transformer:10000}

body() {
  local graphs=() g
  for g in volo_d1_224.bwd volo_d1_224.fwd resnet50.bwd \
    deit_small_patch16_224.bwd convnext_tiny.bwd gpt2.bwd; do
    [ -f "$srcdir/data/graphs/$g.json.gz" ] && graphs+=("$srcdir/data/graphs/$g.json.gz")
  done
  # shellcheck disable=SC2086
  "$builddir/bench/bench_auto" "$secs" $gen "${graphs[@]}" |
    sed "s|$srcdir/data/graphs/||; s|\.json\.gz | |" | tee "$bench_tmp/t"
  sed -n 's/^Median traffic saved by auto against the best heuristic plan meeting the eager peak: \([0-9.-]*%\) (\([0-9]*\) graphs.*/\1 \2/p' \
    "$bench_tmp/t" | {
    read -r med n
    bench_headline "Traffic auto ($secs s) saves against the best heuristic under the eager peak" "median $med on $n graphs"
  }
  if [ -n "$long_s" ]; then
    echo
    # shellcheck disable=SC2086
    "$builddir/bench/bench_auto" "$long_s" $long
  fi
}
# shellcheck disable=SC2016 # the quotes are part of the command shown
bench_main "FP_BENCH_AUTO_S=$secs${FP_BENCH_AUTO:+ FP_BENCH_AUTO='$gen'}${long_s:+ FP_BENCH_AUTO_LONG_S=$long_s} make bench-auto" body
