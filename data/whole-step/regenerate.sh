#!/bin/sh
# data/whole-step/regenerate.sh -- re-exports the whole-step corpus (one
# graph per training step: forward + loss + backward (+ an SGD or AdamW
# update) of Llama-style models at the sizes that pytorch/pytorch #190777
# and #190804 measure)
# with tools/export_inductor.py --whole-step --fake, and prints the table
# of data/whole-step/README.md.
#
# Usage: PYTHON=/path/to/venv/bin/python data/whole-step/regenerate.sh
# (a python with the torch of tools/requirements.txt).  Under fake tensors
# nothing is allocated or executed: about 2.5 minutes and 1 GB of memory
# per graph on 2 cores, 5-7 CPU minutes for the 8B and 13B ones and 12
# for the 405B one (FP_WS_LARGE=1 adds Llama-3 70B and 405B sized -clip
# graphs).  `regenerate.sh --table-only [DIR]` prints the
# table of DIR (default: this directory) without exporting; it needs
# build/fuseplan (or $FUSEPLAN) for the eager peak and traffic.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
fp=${FUSEPLAN:-$top/build/fuseplan}
ex="$py $top/tools/export_inductor.py --whole-step --fake --dtype bfloat16 --batch 1 --seq 2048 --out $here"

if [ "${1:-}" != --table-only ]; then
  for m in llama-d12-w3072-v256k llama-d14-w3584-v256k; do
    $ex "$m"
    $ex "$m" --cpu-backend triton --name "$m-triton"
  done
  # the same step in float32, and in bfloat16 with an in-place SGD update
  # (each gradient dies at its update instead of living to the end)
  $ex llama-d14-w3584-v256k --dtype float32 --name llama-d14-w3584-v256k-fp32
  $ex llama-d14-w3584-v256k --whole-step=sgd --name llama-d14-w3584-v256k-sgd
  # with the optimizer: AdamW as torchtitan runs it by default (float32
  # master weights and moments for the bfloat16 compute, foreach) under
  # the C++ scheduling; per parameter (foreach=False) under the Triton one
  # (the exporter loses Triton's foreach nodes from Inductor's plan, see
  # README.md); on d14 also per parameter under C++, and without master
  # weights (moments in bfloat16, as torch.optim keeps them for bfloat16
  # parameters)
  for m in llama-d12-w3072-v256k llama-d14-w3584-v256k; do
    $ex "$m" --whole-step=adamw-master-foreach --name "$m-adamw"
    $ex "$m" --whole-step=adamw-master --cpu-backend triton --name "$m-adamw-single-triton"
  done
  $ex llama-d14-w3584-v256k --whole-step=adamw-master --name llama-d14-w3584-v256k-adamw-single
  $ex llama-d14-w3584-v256k --whole-step=adamw --name llama-d14-w3584-v256k-adamw-bf16
  # batch 8: activations (the 256k-vocabulary logits) outweigh the state
  $ex llama-d12-w3072-v256k --whole-step=adamw-master-foreach --batch 8 \
    --name llama-d12-w3072-v256k-b8-adamw
  # gradient clipping by global norm before the AdamW update
  # (clip_grad_norm_ in the step, as torchtitan does) at #190804's size
  $ex llama-d14-w3584-v256k --whole-step=adamw-master-foreach-clip \
    --name llama-d14-w3584-v256k-adamw-clip
  # the same at Llama-3 8B's and Llama-2 13B's shapes (full-width heads:
  # no grouped-query attention), 3k-4.3k nodes: foreach under C++, per
  # parameter under Triton
  l3=f14336-v128256
  $ex llama-d32-w4096-$l3 --whole-step=adamw-master-foreach-clip --name llama3-8b-adamw-clip
  $ex llama-d32-w4096-$l3 --whole-step=adamw-master-clip --cpu-backend triton \
    --name llama3-8b-adamw-single-clip-triton
  $ex llama-d40-w5120-f13824-v32000 --whole-step=adamw-master-clip --cpu-backend triton \
    --name llama2-13b-adamw-single-clip-triton
  # Llama-3 405B's shape (d126 w16384 f53248, full-width heads), per
  # parameter under Triton, without clipping: 11,508 nodes, about 12 CPU
  # minutes and 4.3 GB (without the oracle's samples: not timed at this size)
  $ex llama-d126-w16384-f53248-v128256 --whole-step=adamw-master --cpu-backend triton \
    --oracle 0 --name llama3-405b-adamw-single-triton
  # FP_WS_LARGE=1: Llama-3 70B and 405B shapes with clipping, about 7.5k
  # and 11.5k nodes; not in this directory (README.md, *Export at scale*:
  # the clipping's pair checks grow as the square of the depth)
  if [ "${FP_WS_LARGE:-0}" = 1 ]; then
    $ex llama-d80-w8192-f28672-v128256 --whole-step=adamw-master-foreach-clip \
      --name llama3-70b-adamw-clip
    $ex llama-d126-w16384-f53248-v128256 --whole-step=adamw-master-foreach-clip \
      --name llama3-405b-adamw-clip
  fi
fi

# the README table: one row per graph (sizes in GB = 10^9 bytes)
d=${2:-$here}
for g in "$d"/*.step.json.gz; do
  p=${g%.json.gz}.inductor.plan.json.gz
  printf '%s\t' "$g"
  "$fp" eval --json "$g" "$p" | tr -d '\n'
  echo
done | "$py" -c "$(cat <<'PY'
import gzip, json, sys
print("| graph | scheduling | nodes | buffers | Inductor kernels | eager peak GB "
      "| Inductor peak GB | eager traffic GB | Inductor traffic GB | export s |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for line in sys.stdin:
    path, ev = line.split("\t", 1)
    ev = json.loads(ev)
    g = json.load(gzip.open(path))
    m = g["meta"]
    e = ev["eager"]
    print(f"| `{g['name']}` | {m['inductor_cpu_backend']} | {len(g['nodes'])} "
          f"| {len(g['buffers'])} | {ev['kernels']} | {e['peak_bytes'] / 1e9:.3f} "
          f"| {ev['peak_bytes'] / 1e9:.3f} | {e['traffic_bytes'] / 1e9:.1f} "
          f"| {ev['traffic_bytes'] / 1e9:.1f} | {m['export_seconds']} |")
PY
)"
