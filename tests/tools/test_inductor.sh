#!/bin/sh
# test_inductor.sh -- fuseplan_inductor (tools/): plans applied inside
# torch.compile (tools/tests/test_apply.py: Inductor's own plan, one C++
# function per kernel and adjacent buffer reuse, a
# foreign, a stale and an unfusible plan, the fallback, bad plan
# directories, an unsupported torch; tools/tests/test_two_hop.py: the
# exporter's verdicts on pairs two steps apart, convnext's LayerNorm
# triple; test_pairs.py: the pair checks at scale (two-hop pairs, pairs
# only an extern joins, pairs Inductor refuses for their distance);
# test_whole_step.py: whole-step and fake-tensor export;
# test_fidelity.py: entry-live bytes against the compiled step, in-place
# pairs against Inductor's own in-place updates; test_measure.py: a CPU
# peak measured again after unprofiled steps is the same figure), and the
# whole loop (python -m fuseplan_inductor run) on the tiny model, on timm's
# test_resnet at batch 2 and on llama-tiny's whole step (--whole-step): the
# kernels are the plan's, outputs and gradients match eager; a missing fuseplan binary, an unsupported torch and a foreign
# plan directory give their one-line errors.
#
# Needs a python with torch: $FUSEPLAN_PYTHON, else python3 (dev.sh test
# makes one).  Without one the test is skipped (exit 77).

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"

PY=${FUSEPLAN_PYTHON:-python3}
if ! "$PY" -c 'import torch, timm' >/dev/null 2>&1; then
  echo "SKIP: no torch and timm in '$PY' (set FUSEPLAN_PYTHON, see docs/inductor.md)"
  exit 77
fi
t_init
tools=$top_srcdir/tools
# the package from the source tree, whatever is installed
export PYTHONPATH="$tools${PYTHONPATH:+:$PYTHONPATH}"
run() { "$PY" -m fuseplan_inductor run "$@" --fuseplan "$FUSEPLAN" --time-limit 5 --steps 2; }

t_case 'plans() and the exporter: tools/tests/test_*.py'
t_run "$PY" -m unittest discover -s "$tools/tests" -p 'test_*.py'
t_exit 0 || cat "$T_ERR"

# check_rows FILE MODEL: the JSON rows of one run
check_rows() {
  "$PY" - "$1" "$2" <<'PY'
import json, sys
rows = {r["method"]: r for r in map(json.loads, open(sys.argv[1]))}
assert list(rows) == ["eager", "inductor", "fuseplan"], list(rows)
need = ["method", "kernels", "kernels_match_plan", "outputs_match", "predicted_traffic_bytes",
        "predicted_peak_bytes", "measured_peak_bytes", "step_time_s"]
for r in rows.values():
    missing = [k for k in need if k not in r]
    assert not missing, (r["method"], missing)
    assert r["outputs_match"], (r["method"], r.get("outputs_diff"))
    assert r["step_time_s"] > 0 and r["measured_peak_bytes"] > 0
f = rows["fuseplan"]
assert f["kernels_match_plan"] is True, "fuseplan's kernels are not the plan's"
assert f["kernels"] == sum(g["planned_kernels"] for g in f["graphs"])
assert rows["eager"]["kernels"] > f["kernels"], "nothing fused"
for r in rows.values():
    ratio = r["measured_peak_bytes"] / r["predicted_peak_bytes"]
    print(f"{sys.argv[2]} {r['method']}: measured / predicted peak {ratio:.2f}")
    # the measured peak adds what the model leaves out (allocator, autograd,
    # the loss), docs/inductor.md; far off means the wrong plan was measured
    assert 0.5 < ratio < 3, ratio
PY
}

for m in tiny test_resnet; do
  t_case "run $m --batch 2 --json"
  t_run run "$m" --batch 2 --json --work "$T_TMP/$m"
  t_exit 0 || { cat "$T_ERR"; continue; }
  cp "$T_OUT" "$T_TMP/$m.rows"
  t_true "the rows of $m" check_rows "$T_TMP/$m.rows" "$m"
done

# the whole step as one graph (forward + backward + cross-entropy of the
# tiny Llama-style config): kernels = plan, loss and gradients = eager
t_case 'run llama-tiny --whole-step --json'
t_run run llama-tiny --batch 2 --seq 16 --whole-step --json --work "$T_TMP/whole"
if t_exit 0; then
  cp "$T_OUT" "$T_TMP/whole.rows"
  t_true "the rows of llama-tiny --whole-step" check_rows "$T_TMP/whole.rows" llama-tiny
  t_true "not one whole-step graph" test "$(ls "$T_TMP"/whole/export/*.step.json | wc -l)" -eq 1
else
  cat "$T_ERR"
fi

t_case 'run: table'
t_run run tiny --batch 2 --plans "$T_TMP/tiny/plans"
t_exit 0
t_out_has 'fuseplan '
t_out_has 'groups not in Inductor'

t_case 'run: missing fuseplan binary'
t_run "$PY" -m fuseplan_inductor run tiny --batch 2 --fuseplan "$T_TMP/no/fuseplan"
t_exit 2
t_err_has 'fuseplan binary not found'

t_case 'run: unsupported torch'
t_run "$PY" -c 'import sys, torch; torch.__version__ = "2.3.0"
from fuseplan_inductor.run import main; sys.exit(main(sys.argv[1:]))' run tiny --batch 2
t_exit 2
t_err_has 'torch 2.3.0 is not supported'

t_case 'run: a foreign plan directory (test_resnet plans for tiny)'
t_run run tiny --batch 2 --plans "$T_TMP/test_resnet/plans"
t_exit 3
t_err_has 'NoPlanError'
t_err_has 'has no plan for the fwd graph'

t_case 'run: a stale plan directory (batch 2 plans for batch 3)'
t_run run tiny --batch 3 --plans "$T_TMP/tiny/plans"
t_exit 3
t_err_has 'the plan is stale'

t_finish
