#!/usr/bin/env bash
# bench/inductor-loop.sh -- the "The loop" section of BENCHMARKS.md: the
# whole loop (python -m fuseplan_inductor run) on corpus models at a
# training batch size: export, fuseplan solve (auto), compile with the
# plans, measure eager, Inductor's plan and fuseplan's plan on this CPU.
# Peaks: predicted by `fuseplan eval`, measured with torch.profiler; step
# time: median after a warm-up.
#
# Usage: bench/inductor-loop.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FUSEPLAN_PYTHON  a python with fuseplan_inductor and the pinned
#                               torch + timm (pip install ./tools[torch]); without
#                               one the section says so and exits 0
#              FP_LOOP_MODELS   models (default: deit_small_patch16_224
#                               convnext_tiny; resnet50 and
#                               mobilenetv3_large_100 take 10-30 min each)
#              FP_LOOP_BATCH    batch size (default 2)
#              FP_LOOP_S        seconds per fuseplan solve (default 10)
#              FP_LOOP_STEPS    timed steps per method (default 2)
#              FP_LOOP_REPLAN   --replan (default 0: a group Inductor refuses
#                               or splits is a failed row, not repaired)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init inductor-loop "$@"
# this tree's fuseplan_inductor, not the one installed in the venv
export PYTHONPATH="$srcdir/tools${PYTHONPATH:+:$PYTHONPATH}"
py=${FUSEPLAN_PYTHON:-}
models=${FP_LOOP_MODELS:-deit_small_patch16_224 convnext_tiny}
batch=${FP_LOOP_BATCH:-2}
secs=${FP_LOOP_S:-10}
steps=${FP_LOOP_STEPS:-2}
replan=${FP_LOOP_REPLAN:-0}
tmp=$bench_tmp

# measure: one loop per model into $tmp/MODEL.json (.fail, .secs).
measure() {
  local m start
  for m in $models; do
    start=$(date +%s)
    if nice -n 10 "$py" -m fuseplan_inductor run "$m" --batch "$batch" --time-limit "$secs" \
      --steps "$steps" --replan "$replan" --fuseplan "$fp" --json >"$tmp/$m.json" 2>"$tmp/$m.err"; then :; else
      echo "$m: exit $? ($(bench_failure "$tmp/$m.err"))" >"$tmp/$m.fail"
    fi
    echo "$(($(date +%s) - start))" >"$tmp/$m.secs"
  done
}

# table: the measurements as one markdown table and a note per model.
table() {
# shellcheck disable=SC2086 # one argument per model
"$py" - "$tmp" $models <<'PY'
import json, os, sys
tmp, models = sys.argv[1], sys.argv[2:]
mib = lambda b: f"{b / 2**20:.1f}"
print("| model | method | kernels | kernels = plan | outputs = eager | predicted traffic MiB "
      "| predicted peak MiB | measured peak MiB | measured / predicted | step s | x eager |")
print("|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
notes = []
for m in models:
    rows = [json.loads(l) for l in open(os.path.join(tmp, m + ".json")) if l.strip()]
    if os.path.exists(os.path.join(tmp, m + ".fail")):
        notes.append(open(os.path.join(tmp, m + ".fail")).read().strip())
    if not rows:
        continue
    t0 = rows[0]["step_time_s"]
    for r in rows:
        km = {None: "-", True: "yes", False: "no"}[r["kernels_match_plan"]]
        print(f"| {m} | {r['method']} | {r['kernels']} | {km} | {'yes' if r['outputs_match'] else 'no'} "
              f"| {mib(r['predicted_traffic_bytes'])} | {mib(r['predicted_peak_bytes'])} "
              f"| {mib(r['measured_peak_bytes'])} "
              f"| {r['measured_peak_bytes'] / r['predicted_peak_bytes']:.2f} "
              f"| {r['step_time_s']:.3f} | {r['step_time_s'] / t0:.2f} |")
    f = rows[-1]
    secs = open(os.path.join(tmp, m + ".secs")).read().strip()
    per_graph = "; ".join(
        f"{g['graph']}: measured {mib(g['measured_peak_bytes'])} / predicted "
        f"{mib(g['predicted_peak_bytes'])} MiB"
        for g in f["graphs"] if "measured_peak_bytes" in g)
    notes.append(f"{m}: fuseplan's plans have {f['groups_not_in_inductor_plan']} groups that "
                 f"are not in Inductor's plans; per graph (fuseplan): {per_graph}; "
                 f"the loop took {secs} s.")
print()
for n in notes:
    print(f"- {n}")
PY
}

body() {
  if [ -z "$py" ] || ! "$py" -c 'import fuseplan_inductor, torch' >/dev/null 2>&1; then
    echo "(skipped: set FUSEPLAN_PYTHON to a python with fuseplan_inductor and torch)"
    return 0
  fi
  echo "Per model: \`python -m fuseplan_inductor run MODEL --batch $batch --time-limit $secs --steps $steps --replan $replan --json\` (torch $("$py" -c 'import torch; print(torch.__version__)'), 1 thread)."
  echo
  measure
  table
}
bench_main "FUSEPLAN_PYTHON=PY FP_LOOP_MODELS='$models' FP_LOOP_BATCH=$batch FP_LOOP_S=$secs FP_LOOP_STEPS=$steps FP_LOOP_REPLAN=$replan make bench-inductor-loop" body
