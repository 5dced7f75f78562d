#!/usr/bin/env bash
# bench/replica.sh -- the "greedy as a replica of Inductor" section of
# BENCHMARKS.md: bench/bench_replica on every graph of data/graphs and
# data/exported (each with Inductor's plan beside it).  The causes of
# every difference: docs/heuristics.md, "How faithful greedy is".  The
# graphs whose groups match are named in one line, not a row each.
#
# Usage: bench/replica.sh [--update] [FUSEPLAN]   (from the build directory)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init replica "$@"

body() {
  local graphs=()
  for g in "$srcdir"/data/graphs/*.json.gz "$srcdir"/data/exported/*.json.gz; do
    case $g in *.plan.json.gz) continue ;; esac
    graphs+=("$g")
  done
  "$builddir/bench/bench_replica" "${graphs[@]}" >"$bench_tmp/t"
  # The rows whose groups differ; the graphs with the same groups, in
  # another order or in the same, by name in one line with the summary
  # (BENCHMARKS.md stays under 400 lines).
  awk -F'|' '
    function yes(i) { x = $i; gsub(/ /, "", x); return x == "yes" }
    function trim(x) { gsub(/^ +| +$/, "", x); return x }
    /^\| / && NR > 2 && yes(5) && yes(7) && yes(9) {
      same = same (same ? ", " : " ") trim($2); next }
    /^\| / && NR > 2 && yes(5) && yes(7) {
      kern = kern (kern ? ", " : " ") trim($2); next }
    /^\| / && NR > 2 && yes(5) {
      order = order (order ? "; " : " ") trim($2) " (" trim($8) (yes(9) ? "" : "; not from its groups either") ")"; next }
    /^$/ { next }
    /^groups equal on / { print ""
      printf "%s", $0
      if (order) printf " Same groups, another order (first difference):%s.", order
      if (kern) printf " Same groups and order, but `--order inductor` on Inductor'"'"'s kernels gives another order:%s.", kern
      print " Same groups, same order and `--order inductor` giving its order:" same "."; next }
    { print }' "$bench_tmp/t"
  sed -n 's/^groups equal on \([0-9]*\) of \([0-9]*\) graphs; groups and order on \([0-9]*\) of.*/\1 \2 \3/p' \
    "$bench_tmp/t" | {
    read -r same n order
    bench_headline "greedy forms exactly Inductor's groups (and order)" "$same of $n real graphs ($order)"
  }
}
bench_main "make bench-replica" body
