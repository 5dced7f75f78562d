#!/usr/bin/env bash
# bench/methods.sh -- the "Heuristics side by side" section of
# BENCHMARKS.md: bench/bench_methods on generated graphs of every family,
# 10^3 nodes up to FP_BENCH_METHODS_MAX.
#
# Usage: bench/methods.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_BENCH_METHODS_MAX  the largest size (default 100000)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init methods "$@"
max=${FP_BENCH_METHODS_MAX:-100000}

body() { "$builddir/bench/bench_methods" "$max"; }
bench_main "FP_BENCH_METHODS_MAX=$max make bench-methods" body
