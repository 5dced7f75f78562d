#!/usr/bin/env bash
# bench/ilp.sh -- the "ILP against the heuristics" section of
# BENCHMARKS.md: bench/bench_ilp on generated graphs of 20 to 400 nodes,
# at a 10 s limit (FP_BENCH_ILP=quick) or at 10 s and 60 s (full).
#
# Usage: bench/ilp.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_BENCH_ILP  quick (default) or full
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init ilp "$@"
mode=${FP_BENCH_ILP:-quick}

body() { "$builddir/bench/bench_ilp" "$mode"; }
bench_main "FP_BENCH_ILP=$mode make bench-ilp" body
