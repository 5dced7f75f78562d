#!/bin/sh
# data/graphs/regenerate.sh -- re-exports the whole corpus with
# tools/export_inductor.py and prints the table of data/graphs/README.md.
#
# Usage: PYTHON=/path/to/venv/bin/python data/graphs/regenerate.sh
# (a python with the torch and timm of tools/requirements.txt).  Nothing is
# compiled or executed: about 30 minutes on 2 shared cores with the oracle
# (97 to 271 s per model, printed on stderr), ~1.1 GB of memory.
# `regenerate.sh --table-only [DIR]` prints the table of DIR (default:
# this directory) without exporting.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
# ex MODEL ARGS...: one export, timed (wall seconds on stderr, with the
# oracle's 500 groups per graph: the exporter's default)
ex() {
  t0=$(date +%s)
  nice "$py" "$top/tools/export_inductor.py" --out "$here" "$@"
  echo "regenerate: $*: $(($(date +%s) - t0)) s" >&2
}

if [ "${1:-}" != --table-only ]; then
  ex volo_d1_224 --batch 64
  ex volo_d1_224 --batch 64 --cpu-backend triton --name volo_d1_224-triton
  ex resnet50 --batch 64
  ex resnet50 --batch 64 --cpu-backend triton --name resnet50-triton
  ex deit_small_patch16_224 --batch 64
  ex vit_base_patch16_224 --batch 64
  ex convnext_tiny --batch 64
  ex mobilenetv3_large_100 --batch 64
  # a forward graph where Inductor trades peak for traffic (+2.0% peak
  # over eager, -11.6% traffic); only its forward graph is kept
  ex mixer_b16_224 --batch 64 --which fwd
  ex gpt2 --batch 8 --seq 512
  ex gpt2 --batch 8 --seq 512 --cpu-backend triton --name gpt2-triton
fi

# the README table: one row per graph
"$py" - "${2:-$here}" <<'EOF'
import glob, gzip, json, os, sys
d = sys.argv[1]
print("| graph | model | batch | scheduling | nodes | buffers | Inductor kernels "
      "| unfusible pairs | peak (fuseplan = adjusted Inductor) | Inductor estimate "
      "| in-place pairs | oracle samples | connected | disagreements | export s |")
print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for f in sorted(glob.glob(os.path.join(d, "*.json.gz"))):
    if ".plan." in f:
        continue
    g = json.load(gzip.open(f))
    p = json.load(gzip.open(f.replace(".json.gz", ".inductor.plan.json.gz")))
    m = g["meta"]
    model = m["model"] + (f" (seq {m['seq']})" if "seq" in m else "")
    pairs = sum(len(nd.get("inplace", [])) for nd in g["nodes"])
    o = m.get("oracle", {})  # absent when exported with --oracle 0
    print(f"| `{g['name']}` | {model} | {m['batch']} | {m['inductor_cpu_backend']} "
          f"| {len(g['nodes'])} | {len(g['buffers'])} | {len(p['groups'])} "
          f"| {len(g['unfusible'])} | {m['inductor_peak_adjusted_bytes']} "
          f"| {m['inductor_peak_bytes']} | {pairs} | {o.get('samples', '-')} "
          f"| {o.get('connected', '-')} | {o.get('disagreements', '-')} "
          f"| {m['export_seconds']} |")
EOF
