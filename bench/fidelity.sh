#!/usr/bin/env bash
# bench/fidelity.sh -- the "Fidelity" section of BENCHMARKS.md: how well
# fuseplan's memory model predicts what Inductor really allocates.  For
# each model, the whole loop (python -m fuseplan_inductor run, 1 thread,
# under nice) measures eager, Inductor's plan and fuseplan's plan; per
# graph and method the table gives the predicted peak (fuseplan eval),
# the measured peak (torch.profiler, inside the graph's call) and their
# ratio, the difference fuseplan - Inductor measured and predicted, and
# the step time ratios.  A model that fails is a row saying why.
#
# Usage: bench/fidelity.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FUSEPLAN_PYTHON  a python with fuseplan_inductor and the pinned
#                               torch + timm; without one the section says so
#              FP_FID_MODELS    models (default: the corpus models that run on
#                               a CPU at batch 2, three more timm models and the
#                               smallest whole-step Llama-style model; a
#                               llama-... name runs with --whole-step)
#              FP_FID_BATCH     batch size (default 2)
#              FP_FID_SEQ       sequence length of gpt2 and llama-... (default 128)
#              FP_FID_S         seconds per fuseplan solve (default 10)
#              FP_FID_STEPS     timed steps per method (default 2)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init fidelity "$@"
py=${FUSEPLAN_PYTHON:-}
# the package of this source tree, whatever version the python has installed
export PYTHONPATH="$srcdir/tools${PYTHONPATH:+:$PYTHONPATH}"
models=${FP_FID_MODELS:-resnet50 gpt2 deit_small_patch16_224 mobilenetv3_large_100 convnext_tiny \
mixer_b16_224 efficientnet_b0 levit_128 resmlp_12_224 llama-d2-w256-v1k}
batch=${FP_FID_BATCH:-2}
seq=${FP_FID_SEQ:-128}
secs=${FP_FID_S:-10}
steps=${FP_FID_STEPS:-2}
tmp=$bench_tmp

# measure: one loop per model into $tmp/MODEL.json (and .fail on failure).
measure() {
  local m extra
  for m in $models; do
    extra=()
    case $m in llama-*) extra=(--whole-step) ;; esac
    if OMP_NUM_THREADS=1 nice -n 10 "$py" -m fuseplan_inductor run "$m" --batch "$batch" \
      --seq "$seq" --time-limit "$secs" --steps "$steps" --threads 1 --fuseplan "$fp" \
      "${extra[@]}" --json >"$tmp/$m.json" 2>"$tmp/$m.err"; then :; else
      echo "exit $? ($(bench_failure "$tmp/$m.err" | cut -c1-160))" \
        >"$tmp/$m.fail"
    fi
  done
}

# table: one row per graph (a failed model: one row saying why) and the
# headline counts.
table() {
# shellcheck disable=SC2086 # one argument per model
"$py" - "$tmp" $models <<'PY'
import json, os, sys
tmp, models = sys.argv[1], sys.argv[2:]
mib = lambda b: f"{b / 2**20:.1f}"
print("| model | graph | eager: pred / meas MiB (meas/pred) | inductor | fuseplan "
      "| fuseplan - inductor MiB: meas / pred | step time fuseplan/inductor (inductor/eager) |")
print("|---|---|---|---|---|---|---|")
within = total = agree = pairs = 0
for m in models:
    path = os.path.join(tmp, m + ".json")
    rows = {}
    if os.path.exists(path):
        rows = {r["method"]: r for r in map(json.loads, filter(str.strip, open(path)))}
    fail = os.path.join(tmp, m + ".fail")
    if os.path.exists(fail) or set(rows) != {"eager", "inductor", "fuseplan"}:
        why = open(fail).read().strip() if os.path.exists(fail) else "no rows"
        print(f"| {m} | - | failed: {why.replace('|', '/')} | | | | |")
        continue
    e, i, f = rows["eager"], rows["inductor"], rows["fuseplan"]
    t = f"{f['step_time_s'] / i['step_time_s']:.2f} ({i['step_time_s'] / e['step_time_s']:.2f})"
    top = max(range(len(e["graphs"])), key=lambda k: e["graphs"][k]["predicted_peak_bytes"])
    for k, (ge, gi, gf) in enumerate(zip(e["graphs"], i["graphs"], f["graphs"])):
        cells = []
        # eager has no per-graph measurement: its step peak goes with the
        # graph of the largest predicted peak
        for g, meas in ((ge, e["measured_peak_bytes"] if k == top else None),
                        (gi, gi.get("measured_peak_bytes")), (gf, gf.get("measured_peak_bytes"))):
            p = g["predicted_peak_bytes"]
            if meas is None:
                cells.append(f"{mib(p)} / -")
                continue
            total += 1
            within += abs(meas / p - 1) <= 0.02
            cells.append(f"{mib(p)} / {mib(meas)} ({meas / p:.2f})")
        d_meas = d_pred = "-"
        if "measured_peak_bytes" in gi and "measured_peak_bytes" in gf:
            dm = gf["measured_peak_bytes"] - gi["measured_peak_bytes"]
            dp = gf["predicted_peak_bytes"] - gi["predicted_peak_bytes"]
            d_meas, d_pred = f"{dm / 2**20:+.1f}", f"{dp / 2**20:+.1f}"
            pairs += 1
            agree += (dm > 0) == (dp > 0) and (dm < 0) == (dp < 0)
        print(f"| {m} | {gi['graph'].rsplit('.', 1)[-1]} | {' | '.join(cells)} "
              f"| {d_meas} / {d_pred} | {t} |")
with open(os.path.join(tmp, "headline"), "w") as h:
    h.write(f"{within} {total} {agree} {pairs}\n")
PY
}

body() {
  if [ -z "$py" ] || ! "$py" -c 'import fuseplan_inductor, torch' >/dev/null 2>&1; then
    echo "(skipped: set FUSEPLAN_PYTHON to a python with fuseplan_inductor and torch)"
    return 0
  fi
  measure
  table
  read -r within total agree pairs <"$tmp/headline"
  echo
  echo "Per model: \`nice python -m fuseplan_inductor run MODEL --batch $batch --seq $seq --time-limit $secs --steps $steps --threads 1 --json\` (llama-...: \`--whole-step\`; torch $("$py" -c 'import torch; print(torch.__version__)')). Measured / predicted within 2%: $within of $total graph peaks; fuseplan - inductor measured and predicted of the same sign: $agree of $pairs graphs."
  bench_headline "Measured / predicted peak within 2% (CPU, per graph and method)" "$within of $total; plan-to-plan difference of the predicted sign on $agree of $pairs graphs"
}
bench_main "FUSEPLAN_PYTHON=PY FP_FID_MODELS='$models' FP_FID_BATCH=$batch FP_FID_S=$secs FP_FID_STEPS=$steps make bench-fidelity" body
