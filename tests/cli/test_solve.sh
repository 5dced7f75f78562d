#!/bin/sh
# test_solve.sh -- end-to-end tests of planning from the command line:
# every method's plan verifies and states the evaluator's metrics; the ILP
# agrees with exhaustive enumeration; limits, objectives, model export,
# usage errors; `pareto` writes a consistent front.
#
# tests/data/small.json has 7 nodes: small enough for exhaustive search.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

D=$top_srcdir/tests/data
G=$D/small.json
T=$T_TMP

# solve_ok NAME ARGS...: `solve G ARGS -o T/NAME.json` exits 0, the plan
# verifies, and its stated metrics equal `eval --json`'s.
solve_ok() {
  name=$1
  shift
  t_case "solve $*"
  t_run "$FUSEPLAN" solve "$G" -o "$T/$name.json" "$@"
  t_exit 0 || return 1
  t_run "$FUSEPLAN" verify "$G" "$T/$name.json"
  t_exit 0 || return 1
  t_run "$FUSEPLAN" eval --json "$G" "$T/$name.json"
  t_exit 0 || return 1
  t_eq "$name traffic" "$(json_num traffic_bytes "$T/$name.json")" \
    "$(json_num traffic_bytes "$T_OUT")"
  t_eq "$name peak" "$(json_num peak_bytes "$T/$name.json")" \
    "$(json_num peak_bytes "$T_OUT")"
}

for m in eager greedy greedy-lowmem greedy-peak ilp exhaustive auto; do
  solve_ok "$m" --method "$m"
done
solve_ok default
solve_ok auto-peak --method auto --objective peak --jobs 1 --seed 3
solve_ok eager-best --method eager --order best
solve_ok greedy-dfs --method greedy --order dfs
solve_ok ilp-peak --method ilp --objective peak --window exact
solve_ok exh-peak --method exhaustive --objective peak
solve_ok ilp-weighted --method ilp --objective weighted --lambda 0.5
solve_ok exh-weighted --method exhaustive --objective weighted --lambda 0.5

# The ILP is exact on 7 nodes: the same optimum as exhaustive enumeration,
# and never above any heuristic under the same (eager) peak limit.
t_case 'ilp == exhaustive'
ilp=$(json_num traffic_bytes "$T/ilp.json")
t_eq 'traffic' "$ilp" "$(json_num traffic_bytes "$T/exhaustive.json")"
t_eq 'peak objective' "$(json_num peak_bytes "$T/ilp-peak.json")" \
  "$(json_num peak_bytes "$T/exh-peak.json")"
t_true 'ilp status optimal' grep -q '"status": "optimal"' "$T/ilp.json"
for m in eager greedy-peak; do
  t_true "ilp traffic <= $m" test "$ilp" -le "$(json_num traffic_bytes "$T/$m.json")"
done
# The lowest peak of any plan is no higher than any heuristic's.
for m in eager greedy greedy-lowmem greedy-peak; do
  t_true "min peak <= $m" test "$(json_num peak_bytes "$T/exh-peak.json")" \
    -le "$(json_num peak_bytes "$T/$m.json")"
done

# ---- limits -------------------------------------------------------------------
t_case 'infeasible peak limit'
for m in greedy-peak ilp exhaustive; do
  t_run "$FUSEPLAN" solve "$G" --method "$m" --peak-limit 10 -o "$T/never.json"
  t_exit 1
  t_err_has 'infeasible'
  t_true "no plan written ($m)" test ! -e "$T/never.json"
done
t_case 'peak limit as a percentage'
t_run "$FUSEPLAN" solve "$G" --method exhaustive --peak-limit 90% -o "$T/p90.json"
eager_peak=$(json_num peak_bytes "$T/eager.json")
if t_exit 0; then
  t_true 'peak <= 90% of eager' test "$(json_num peak_bytes "$T/p90.json")" \
    -le $((eager_peak * 90 / 100))
fi
t_case 'traffic limit with objective peak'
t_run "$FUSEPLAN" solve "$G" --method ilp --objective peak --traffic-limit 1 \
  -o "$T/never.json"
t_exit 1 && t_err_has 'infeasible'

# ---- model export and progress ---------------------------------------------
t_case 'model export'
t_run "$FUSEPLAN" solve "$G" --method ilp --lp-out "$T/m.lp" --mps-out "$T/m.mps" -q
t_exit 0
t_err_empty
# GLPK prints to stdout (e.g. "Writing problem data to ..."); the terminal
# hook must swallow all of it (docs/glpk.md).
t_out_empty
t_true 'LP file names the objective' grep -q '^Minimize' "$T/m.lp"
t_true 'MPS file has ROWS' grep -q '^ROWS' "$T/m.mps"
# An LP reader must accept the exported model (row names unique): glpsol,
# from glpk-utils, checks it without solving.
if command -v glpsol >/dev/null 2>&1; then
  t_case 'glpsol reads the exported model'
  t_run glpsol --lp "$T/m.lp" --check
  t_exit 0
fi
t_case 'ilp prints no progress in a pipe'
t_run "$FUSEPLAN" solve "$G" --method ilp --json
t_exit 0
t_true 'one summary line on stderr' test "$(wc -l <"$T_ERR")" -eq 1
t_out_has '"method": "ilp"'

# ---- usage errors -----------------------------------------------------------
usage() {
  t_case "usage: $*"
  t_run "$FUSEPLAN" "$@"
  t_exit 2
  t_out_empty
}
usage solve "$G" --method greedy --objective peak
usage solve "$G" --method greedy --lp-out "$T/x.lp"
usage solve "$G" --method ilp --order dfs
usage solve "$G" --method ilp --objective speed
usage solve "$G" --method ilp --time-limit 0
usage solve "$G" --method ilp --window -3
usage solve "$G" --method greedy --order sideways
usage solve "$G" --max-fusion-size 9
usage solve "$G" --method auto --window 4
usage solve "$G" --method auto --jobs 0
usage solve "$G" --method auto --seed -1
usage solve "$G" --method ilp --jobs 2
usage solve "$G" --method greedy --seed 2
usage pareto "$G" --points 1
usage pareto "$G" --method greedy
usage pareto

t_case 'exhaustive refuses large graphs'
t_run "$FUSEPLAN" gen --family mlp --size 30 --seed 1 -o "$T/g30.json"
t_run "$FUSEPLAN" solve "$T/g30.json" --method exhaustive
t_exit 2
t_err_has 'exhaustive'

# ---- pareto -------------------------------------------------------------------
t_case 'pareto front'
t_run "$FUSEPLAN" pareto "$G" --method exhaustive --points 4 -o "$T/front.json" \
  --svg "$T/front.svg"
if t_exit 0; then
  t_out_has 'greedy-peak'
  t_true 'front JSON format' grep -q '"format": "fuseplan.pareto"' "$T/front.json"
  t_true 'four points' test "$(grep -c '"peak_limit"' "$T/front.json")" -eq 4
  t_true 'svg' grep -q '<svg' "$T/front.svg"
  # the first point is the lowest peak, the last the least traffic
  t_eq 'lowest peak' "$(json_num peak_bytes "$T/front.json")" \
    "$(json_num peak_bytes "$T/exh-peak.json")"
  last=$(grep '"peak_limit"' "$T/front.json" | tail -n 1 >"$T/last.txt" &&
    json_num traffic_bytes "$T/last.txt")
  t_true 'last point traffic <= exhaustive traffic under eager' \
    test "$last" -le "$(json_num traffic_bytes "$T/exhaustive.json")"
fi

# auto is the default method; on 7 nodes it is the exact ILP.
t_case 'auto: default, exact on small graphs'
t_true 'default method is auto' grep -q '"method": "auto"' "$T/default.json"
t_eq 'auto traffic == exhaustive' "$(json_num traffic_bytes "$T/auto.json")" \
  "$(json_num traffic_bytes "$T/exhaustive.json")"
t_eq 'auto peak objective == exhaustive' \
  "$(json_num peak_bytes "$T/auto-peak.json")" \
  "$(json_num peak_bytes "$T/exh-peak.json")"

# Ctrl-C: auto stops at once and writes its best plan so far, which
# verifies; it does not wait for the 300 s limit.
t_case 'auto: SIGINT writes the best plan so far'
t_run "$FUSEPLAN" gen --family transformer --size 1500 --seed 4 -o "$T/big.json"
t_exit 0
start=$(date +%s)
"$FUSEPLAN" solve "$T/big.json" --time-limit 300 -q -o "$T/big.plan.json" &
pid=$!
sleep 3
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
took=$(($(date +%s) - start))
t_eq 'exit status after SIGINT' "$rc" 0
t_true "stopped within 60 s (took $took s)" test "$took" -lt 60
t_run "$FUSEPLAN" verify "$T/big.json" "$T/big.plan.json"
t_exit 0
t_true 'plan says auto' grep -q '"method": "auto"' "$T/big.plan.json"

# GLPK never prints, even from the small ILPs nested inside a solve (the
# cluster bounds inside each window of auto).
t_case 'auto: nothing on stdout'
t_run "$FUSEPLAN" gen --family convnet --size 120 --seed 2 -o "$T/c120.json"
t_run "$FUSEPLAN" solve "$T/c120.json" --time-limit 3 -q -o "$T/c120.plan.json"
t_exit 0
t_true 'stdout is empty' test ! -s "$T_OUT"

# ---- the methods of the planner table ----------------------------------------
# `solve --help` lists the methods from the table (the first line of each
# row: "  --method M       NAME[ (default)]: ..." or 19 spaces, NAME, ":");
# every one listed is accepted on the small graph, and the default is auto.
t_case 'solve --help lists the methods'
t_run "$FUSEPLAN" solve --help
t_exit 0
sed -n -E 's/^(  --method M {7}| {19})([a-z][a-z0-9-]*)( \(default\))?: .*/\2\3/p' \
  "$T_OUT" >"$T/methods.txt"
t_eq 'default listed' "$(grep -c ' (default)$' "$T/methods.txt")" 1
t_eq 'auto is the default' "$(grep ' (default)$' "$T/methods.txt")" 'auto (default)'
t_true 'at least the seven methods' test "$(wc -l <"$T/methods.txt")" -ge 7
for m in $(sed 's/ (default)$//' "$T/methods.txt"); do
  t_case "solve --method $m (from --help)"
  t_run "$FUSEPLAN" solve "$G" --method "$m" -q
  t_exit 0
done
t_case 'fuseplan --help names the default of solve'
t_run "$FUSEPLAN" --help
t_exit 0 && t_out_has 'auto (default)'
for m in $(sed 's/ (default)$//' "$T/methods.txt"); do
  t_out_has " $m"
done
# The messages name exactly the methods that take an option.
t_case 'option errors name who takes the option'
t_run "$FUSEPLAN" solve "$G" --method greedy --jobs 2
t_exit 2 && t_err_has '--jobs applies to --method auto'
t_run "$FUSEPLAN" solve "$G" --method exhaustive --time-limit 3
t_exit 2 && t_err_has '--time-limit applies to --method auto or ilp'
t_run "$FUSEPLAN" solve "$G" --method greedy --objective peak
t_exit 2 && t_err_has '--objective applies to --method auto, ilp or exhaustive'
t_run "$FUSEPLAN" solve "$G" --method ilp --order dfs
t_exit 2 && t_err_has '--order applies to the heuristics'
t_run "$FUSEPLAN" solve "$G" --method sideways
t_exit 2 && t_err_has "unknown method 'sideways' (auto, "
# --gap / --gap2: relative tolerances in [0, 1), auto and ilp (and pareto)
# only; the plan says why the solve stopped and prints the second gap.
t_case 'gap tolerances: bad values and methods are usage errors'
for v in -0.1 nan 1 1.5 inf x ''; do
  for o in gap gap2; do
    t_run "$FUSEPLAN" solve "$G" --$o "$v"
    t_exit 2 && t_err_has "--$o: expected a number >= 0 and < 1"
    t_run "$FUSEPLAN" pareto "$G" --points 2 --$o "$v"
    t_exit 2 && t_err_has "--$o: expected a number >= 0 and < 1"
  done
done
t_run "$FUSEPLAN" solve "$G" --method exhaustive --gap2 0.1
t_exit 2 && t_err_has '--gap2 applies to --method auto or ilp'
t_case 'solve records stop_reason and the second level'
# ilp: the peak bound is within 0.5 of its plan's peak, so the second
# solve is skipped (stopped: gap); by default it runs and proves it.
t_run "$FUSEPLAN" solve "$G" --method ilp --gap2 0.5 --time-limit 60 -o "$T/gap.json"
t_exit 0 && t_err_has ', stopped: gap'
t_true 'ilp --gap2 0.5: stop_reason gap' grep -q '"stop_reason": "gap"' "$T/gap.json"
t_eq 'ilp --gap2 0.5: one level proven' "$(json_num levels_proven "$T/gap.json")" 1
for m in auto ilp; do
  t_run "$FUSEPLAN" solve "$G" --method "$m" --gap 0.01 --time-limit 60 -o "$T/gap.$m.json"
  t_exit 0 && t_err_has ', gap2 ' && t_err_has ', stopped: proven'
  t_true "$m stop_reason" grep -q '"stop_reason": "proven"' "$T/gap.$m.json"
  t_eq "$m objective2 = peak" "$(json_num objective2 "$T/gap.$m.json")" \
    "$(json_num peak_bytes "$T/gap.$m.json")"
  t_eq "$m bound2 = objective2" "$(json_num bound2 "$T/gap.$m.json")" \
    "$(json_num objective2 "$T/gap.$m.json")"
done
t_case 'solve --gap2 0.5 on gpt2.bwd stops on the gap, long before 60 s'
t_run "$FUSEPLAN" solve "$top_srcdir/data/graphs/gpt2.bwd.json.gz" --gap2 0.5 --time-limit 60 -o "$T/gpt2.json"
t_exit 0 && t_err_has ', stopped: gap'
t_true 'gpt2 gap2 in (0, 0.5]' awk -v g="$(grep -o '"gap2": [0-9.e-]*' "$T/gpt2.json" | sed 's/.*: //')" \
  'BEGIN { exit !(g > 0 && g <= 0.5) }'
t_true 'gpt2 time_s < 30' awk -v t="$(grep -o '"time_s": [0-9.e-]*' "$T/gpt2.json" | sed 's/.*: //')" \
  'BEGIN { exit !(t < 30) }'

# pareto's usage line lists the methods that can drive it; each runs.
t_case 'pareto --help lists its methods'
t_run "$FUSEPLAN" pareto --help
t_exit 0
pm=$(sed -n -E 's/.*\[--method ([a-z|-]+)\].*/\1/p' "$T_OUT" | tr '|' ' ')
t_true 'pareto methods listed' test -n "$pm"
for m in $pm; do
  t_case "pareto --method $m (from --help)"
  t_run "$FUSEPLAN" pareto "$G" --method "$m" --points 2 --time-limit 4
  t_exit 0
done

# --start: a start plan is checked first (an illegal one is an input error
# naming the file and the violation); a legal one joins the heuristics,
# and the answer is never worse than it in the lexicographic order.
t_case 'solve --start with an illegal plan exits 3'
t_run "$FUSEPLAN" solve "$G" --start "$top_srcdir/tests/data/small_illegal_order.json"
t_exit 3 && t_err_has "small_illegal_order.json: not a legal plan of small" &&
  t_err_one_line
t_case 'pareto --start with an illegal plan exits 3'
t_run "$FUSEPLAN" pareto "$G" --points 2 --start "$top_srcdir/tests/data/small_illegal_order.json"
t_exit 3
t_case 'solve --start with a heuristic rejects it'
t_run "$FUSEPLAN" solve "$G" --method greedy --start "$top_srcdir/tests/data/small_plan_legal.json"
t_exit 2
C=$top_srcdir/data/graphs/mobilenetv3_large_100.bwd
t_case 'solve --start with Inductor'"'"'s plan: not dominated by it'
t_run "$FUSEPLAN" solve "$C.json.gz" --time-limit 5 --start "$C.inductor.plan.json.gz" --json -q
t_exit 0
at=$(grep -o '"traffic_bytes": [0-9]*' "$T_OUT" | head -n 1 | sed 's/.*: //')
ap=$(grep -o '"peak_bytes": [0-9]*' "$T_OUT" | head -n 1 | sed 's/.*: //')
t_run "$FUSEPLAN" eval "$C.json.gz" "$C.inductor.plan.json.gz" --json
it=$(grep -o '"traffic_bytes": [0-9]*' "$T_OUT" | head -n 1 | sed 's/.*: //')
ip=$(grep -o '"peak_bytes": [0-9]*' "$T_OUT" | head -n 1 | sed 's/.*: //')
t_true "auto $at/$ap not beaten by Inductor's $it/$ip" \
  test "$at" -lt "$it" -o \( "$at" -eq "$it" -a "$ap" -le "$ip" \)

t_finish
