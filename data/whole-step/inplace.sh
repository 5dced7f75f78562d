#!/bin/sh
# data/whole-step/inplace.sh -- the peaks of the AdamW whole-step graphs
# if their in-place updates were modelled in place (the table "In place"
# of data/whole-step/README.md).
#
# The exporter keeps a mutation in SSA form (docs/exporter.md,
# *Mutations*): the new version of a mutated graph input is a new buffer
# that lives to the end, and the input stays resident, so every updated
# weight, moment and master weight counts twice from its update on.  Here
# each such input (a resident input read by a node that writes a graph
# output of the same bytes) is marked freeable instead: it dies at its
# update, and only the update's own step holds both versions.  Then
# fuseplan info (eager peak, peak bound) and eval of Inductor's plan; with
# FP_WS_S > 0 also `fuseplan solve --time-limit FP_WS_S --jobs 2` on it.
#
# Usage: data/whole-step/inplace.sh [DIR]   (default: this directory)
# Environment: FUSEPLAN (default build/fuseplan), PYTHON (python3),
#              FP_WS_S (default 0: no solve)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
fp=${FUSEPLAN:-$top/build/fuseplan}
d=${1:-$here}
secs=${FP_WS_S:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| graph | mutated inputs | eager peak GB | Inductor peak GB | Inductor / eager | peak bound GB | fuseplan traffic / peak GB |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for g in "$d"/*adamw*.step.json.gz; do
  name=$(basename "${g%.json.gz}")
  n=$("$py" - "$g" "$tmp/g.json" <<'PY'
import gzip, json, sys
g = json.load(gzip.open(sys.argv[1]))
size = {b["name"]: b for b in g["buffers"]}
outs, done = set(g["outputs"]), set()
for nd in g["nodes"]:
    reads = [r if isinstance(r, str) else r["buffer"] for r in nd["reads"]]
    for w in (w for w in nd["writes"] if w in outs):
        for r in reads:
            b = size[r]
            if (b.get("input") and not b.get("freeable") and r not in done
                    and b["bytes"] == size[w]["bytes"]):
                b["freeable"] = True
                done.add(r)
                break
json.dump(g, open(sys.argv[2], "w"))
print(len(done))
PY
)
  "$fp" info --json "$tmp/g.json" >"$tmp/info.json"
  "$fp" eval --json "$tmp/g.json" "${g%.json.gz}.inductor.plan.json.gz" >"$tmp/ind.json"
  sol=-
  if [ "$secs" != 0 ]; then
    "$fp" solve "$tmp/g.json" --time-limit "$secs" --jobs 2 -q -o "$tmp/p.json"
    "$fp" eval --json "$tmp/g.json" "$tmp/p.json" >"$tmp/fp.json"
    sol=$("$py" -c 'import json, sys
e = json.load(open(sys.argv[1]))
print("%.1f / %.3f" % (e["traffic_bytes"] / 1e9, e["peak_bytes"] / 1e9))' "$tmp/fp.json")
  fi
  "$py" - "$name" "$n" "$tmp/info.json" "$tmp/ind.json" "$sol" <<'PY'
import json, sys
name, n, info, ind, sol = sys.argv[1:]
i, e = json.load(open(info)), json.load(open(ind))
ep, ip = i["eager"]["peak_bytes"], e["peak_bytes"]
print(f"| `{name}` | {n} | {ep / 1e9:.3f} | {ip / 1e9:.3f} | {ip / ep:.3f} "
      f"| {i['lower_bound']['peak_bytes'] / 1e9:.3f} | {sol} |")
PY
done
