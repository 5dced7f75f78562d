#!/usr/bin/env bash
# bench/eval.sh -- the "Load + evaluate" section of BENCHMARKS.md:
# bench/bench_eval on generated graphs of 10^4 nodes up to FP_BENCH_MAX.
#
# Usage: bench/eval.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_BENCH_MAX  the largest size (default 1000000)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init eval "$@"
max=${FP_BENCH_MAX:-1000000}

body() {
  "$builddir/bench/bench_eval" "$max" | tee "$bench_tmp/t"
  # The largest transformer graph: what loading a big file costs.
  awk -F'|' '$2 ~ /transformer/ { n = $3; s = $9 }
    END { gsub(/ /, "", n); gsub(/ /, "", s)
          printf "<!-- headline: Load + evaluate, transformer graph of %s nodes | %s s -->\n", n, s }' "$bench_tmp/t"
}
bench_main "FP_BENCH_MAX=$max make bench-eval" body
