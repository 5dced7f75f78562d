#!/usr/bin/env bash
# bench/same-plans.sh -- do two fuseplan binaries make the same plans?  For
# every graph of the corpus (data/graphs) and tests/data/small.json, every
# heuristic method's plan (groups, metrics, solver status and objective),
# and `gen` output for every family at two sizes; prints each difference
# and a count.  Use it to show that a refactor changed no behaviour.
#
# Usage: bench/same-plans.sh OLD_FUSEPLAN NEW_FUSEPLAN   (exit 1 on a difference)
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
old=$1
new=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The parts of a plan file that must not change (timings may).
key() {
  python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
s = p.get("solver", {})
print(json.dumps(p["groups"]), json.dumps(p.get("metrics", {}), sort_keys=True),
      json.dumps({k: s.get(k) for k in ("method", "status", "objective")}, sort_keys=True))
PY
}
n=0
d=0
for g in "$srcdir"/data/graphs/*.json.gz "$srcdir/tests/data/small.json"; do
  case $g in *.plan.json.gz) continue ;; esac
  for m in eager greedy greedy-lowmem greedy-peak; do
    "$old" solve "$g" --method "$m" -q -o "$tmp/old.json"
    "$new" solve "$g" --method "$m" -q -o "$tmp/new.json"
    n=$((n + 1))
    if [ "$(key "$tmp/old.json")" != "$(key "$tmp/new.json")" ]; then
      d=$((d + 1))
      echo "differs: $(basename "$g") --method $m"
    fi
  done
done
for f in transformer convnet mlp random; do
  for s in 36 300; do
    "$old" gen --family "$f" --size "$s" --seed 7 -o "$tmp/old.json"
    "$new" gen --family "$f" --size "$s" --seed 7 -o "$tmp/new.json"
    n=$((n + 1))
    cmp -s "$tmp/old.json" "$tmp/new.json" || {
      d=$((d + 1))
      echo "differs: gen --family $f --size $s"
    }
  done
done
echo "compared $n outputs, $d differ"
[ "$d" -eq 0 ]
