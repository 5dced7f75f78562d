#!/bin/sh
# test_run.sh -- end-to-end tests of `fuseplan run`: for generated graphs
# and every method's plan, the measured peak and traffic in --json equal
# the predicted ones and the outputs match eager; surrogate kernels on an
# op-less graph; the human table; usage, input and backend errors with
# their exit codes.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

T=$T_TMP
D=$top_srcdir/tests/data

# run_exact G P ARGS...: `run --json G P ARGS` exits 0, says check pass,
# and every measured byte figure equals the predicted one.
run_exact() {
  g=$1
  p=$2
  shift 2
  t_case "run $(basename "$g") $(basename "$p") $*"
  t_run "$FUSEPLAN" run --json "$g" "$p" "$@"
  t_exit 0 || return 1
  t_out_has '"check": "pass"' || return 1
  t_out_has '"accounting": "exact"'
  for k in traffic_bytes peak_bytes read_bytes write_bytes; do
    want=$(json_num_in predicted "$k" "$T_OUT")
    t_true "predicted $k present" test -n "$want" || continue
    t_eq "measured $k" "$(json_num_in measured "$k" "$T_OUT")" "$want"
  done
  # The prediction is the evaluator's.
  "$FUSEPLAN" eval --json "$g" "$p" >"$T/eval.json"
  t_eq 'predicted = eval' "$(json_num_in predicted traffic_bytes "$T_OUT")" \
    "$(json_num traffic_bytes "$T/eval.json")"
}

# Generated graphs (small seeds) and every method's plan.
for spec in convnet:86 random:175 mlp:116; do
  fam=${spec%%:*}
  seed=${spec##*:}
  g=$T/$fam.json
  "$FUSEPLAN" gen --family "$fam" --size 20 --seed "$seed" -o "$g"
  for m in eager greedy greedy-lowmem greedy-peak; do
    "$FUSEPLAN" solve "$g" --method "$m" -o "$T/$fam.$m.json" 2>/dev/null
    run_exact "$g" "$T/$fam.$m.json" && t_out_has '"outputs": "pass"'
  done
done

# Surrogate kernels: tests/data/small.json has no ops.
run_exact "$D/small.json" "$D/small_plan_legal.json" &&
  t_out_has '"surrogate_nodes": 7'
run_exact "$D/small.json" "$D/small_plan_eager.json" --repeat 3 --seed 9 &&
  t_out_has '"repeat": 3'
run_exact "$D/small.json" "$D/small_plan_legal.json" --no-check &&
  t_out_has '"outputs": "skipped"'

t_case 'human table'
t_run "$FUSEPLAN" run "$T/convnet.json" "$T/convnet.greedy.json"
t_exit 0 && t_out_has 'check        pass' && t_out_has 'predicted' &&
  t_out_has 'against eager'

t_case 'kernel times'
t_run "$FUSEPLAN" run "$D/small.json" "$D/small_plan_legal.json" --kernel-times "$T/k.csv"
t_exit 0 && t_eq 'header' "$(head -n 1 "$T/k.csv")" 'step,nodes,time_s,first_node' &&
  t_eq 'one line per kernel' "$(wc -l <"$T/k.csv" | tr -d ' ')" 5 &&
  t_eq 'first kernel' "$(sed -n 2p "$T/k.csv" | cut -d, -f1,2,4)" '0,3,"n0"'

t_case 'illegal plan: exit 1'
t_run "$FUSEPLAN" run "$D/small.json" "$D/small_illegal_order.json"
t_exit 1 && t_err_one_line && t_err_has 'small_illegal_order.json'

# Over --memory-limit is its own exit code, not a mismatch (1).
t_case 'memory limit: exit 6'
t_run "$FUSEPLAN" run "$D/small.json" "$D/small_plan_legal.json" --memory-limit 1KiB
t_exit 6 && t_err_one_line && t_err_has 'memory limit' &&
  t_eq 'no verdict on stdout' "$(wc -c <"$T_OUT" | tr -d ' ')" 0
# the bytes the message says the run needs are enough, one fewer is not
need=$(sed -n 's/.*the run needs \([0-9]*\) bytes.*/\1/p' "$T_ERR")
t_true 'the message gives the bytes needed' test -n "$need" &&
  t_run "$FUSEPLAN" run --json "$D/small.json" "$D/small_plan_legal.json" \
    --memory-limit $((need - 1)) && t_exit 6 &&
  t_run "$FUSEPLAN" run --json "$D/small.json" "$D/small_plan_legal.json" \
    --memory-limit "$need" && t_exit 0

t_case 'usage errors: exit 2'
for args in '--backend tpu' '--repeat 0' '--repeat x' '--seed -1' \
  '--arch 90' '--memory-limit 0' '--bogus'; do
  # shellcheck disable=SC2086 # split the option words on purpose
  t_run "$FUSEPLAN" run "$D/small.json" "$D/small_plan_legal.json" $args
  t_exit 2
done
t_run "$FUSEPLAN" run "$D/small.json"
t_exit 2

t_case 'missing graph: exit 3'
t_run "$FUSEPLAN" run "$T/nope.json" "$D/small_plan_legal.json"
t_exit 3 && t_err_one_line

t_case 'cuda backend: runs on a GPU, exit 5 without one'
t_run "$FUSEPLAN" run --json "$D/small.json" "$D/small_plan_legal.json" --backend cuda
if [ "$T_RC" = 0 ]; then
  t_out_has '"check": "pass"'
else
  t_exit 5 && t_err_one_line && t_err_has 'CUDA'
fi

t_case 'help'
t_run "$FUSEPLAN" run --help
t_exit 0 && t_out_has 'usage: fuseplan run'

t_finish
