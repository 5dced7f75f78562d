#!/usr/bin/env bash
# bench/bounds.sh -- what the structural bounds cost: `fuseplan info`
# (load, eager plan, the traffic bound and the peak bound with all its
# rules) on generated graphs of every family at 1,000, 3,000 and 10,000
# nodes, best of 3 wall-clock runs.  With a second binary, both side by
# side and their ratio (the peak bounds must be equal).  Prints a
# markdown table.
#
# Usage: bench/bounds.sh [FUSEPLAN [OLD_FUSEPLAN]]   (default: build/fuseplan)
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
fp=${1:-$srcdir/build/fuseplan}
old=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

best_of_3() { # best_of_3 BINARY GRAPH: seconds
  local best=
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s.%N)
    "$1" info "$2" >/dev/null
    t1=$(date +%s.%N)
    best=$(awk -v a="$t0" -v b="$t1" -v m="$best" \
      'BEGIN { d = b - a; if (m == "" || d < m) m = d; printf "%.3f", m }')
  done
  echo "$best"
}
peak_bound() { "$1" info "$2" | awk '/^peak bound/ { print $3 }'; }

if [ -n "$old" ]; then
  echo "| graph | nodes | peak bound (bytes) | info s | before s | ratio |"
  echo "|---|---:|---:|---:|---:|---:|"
else
  echo "| graph | nodes | peak bound (bytes) | info s |"
  echo "|---|---:|---:|---:|"
fi
for f in transformer convnet mlp random; do
  for n in 1000 3000 10000; do
    g=$tmp/$f-$n.json
    "$fp" gen --family "$f" --size "$n" --seed 1 -o "$g"
    pb=$(peak_bound "$fp" "$g")
    t=$(best_of_3 "$fp" "$g")
    if [ -n "$old" ]; then
      [ "$(peak_bound "$old" "$g")" = "$pb" ] || {
        echo "peak bounds differ on $f:$n" >&2
        exit 1
      }
      to=$(best_of_3 "$old" "$g")
      echo "| $f:$n | $n | $pb | $t | $to | $(awk -v a="$to" -v b="$t" 'BEGIN { printf "%.1f", a / b }') |"
    else
      echo "| $f:$n | $n | $pb | $t |"
    fi
  done
done
