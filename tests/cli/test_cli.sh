#!/bin/sh
# test_cli.sh -- end-to-end tests of the `fuseplan` command: help, usage
# errors, the figures of hand-checked plans, verify / compare verdicts,
# solve, gen, atomic output and gzip round trips.
#
# The graph tests/data/small.json is small enough to evaluate by hand; the
# figures asserted below are computed from the cost model
# (docs/cost-model.md) in the comments, not copied from the program's
# output.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

D=$top_srcdir/tests/data
G=$D/small.json
T=$T_TMP

# ---- help -------------------------------------------------------------------
for cmd in solve eval verify compare info gen; do
  t_case "$cmd --help"
  t_run "$FUSEPLAN" "$cmd" --help
  t_exit 0
  t_out_has "usage: fuseplan $cmd"
  t_err_empty
done
t_case 'fuseplan --help'
t_run "$FUSEPLAN" --help
t_exit 0
t_out_has 'usage: fuseplan <command>'
for cmd in solve eval verify compare info gen; do
  t_out_has "  $cmd "
done
t_case 'fuseplan --version'
t_run "$FUSEPLAN" --version
t_exit 0
t_out_has 'fuseplan '

# ---- usage errors: exit 2, nothing on stdout ----------------------------------
# usage_error FRAGMENT ARGS...: `fuseplan ARGS` exits 2 saying FRAGMENT.
usage_error() {
  u_frag=$1
  shift
  t_case "usage: $*"
  t_run "$FUSEPLAN" "$@"
  t_exit 2 && t_err_has "$u_frag"
  t_out_empty
}
usage_error 'usage: fuseplan'
usage_error "unknown command 'frobnicate'" frobnicate "$G"
usage_error "unknown option '--bogus'" info --bogus "$G"
usage_error "unknown option '-x'" info -x "$G"
usage_error "option '--json' takes no value" info --json=yes "$G"
usage_error 'expected one GRAPH file' info
usage_error 'expected one GRAPH file' info "$G" "$G"
usage_error 'expected GRAPH and PLAN' eval "$G"
usage_error "option '--timeline' needs a value" eval "$G" "$D/small_plan_legal.json" --timeline
usage_error 'expected GRAPH and PLAN' verify "$G"
usage_error 'expected GRAPH and PLAN' verify "$G" "$D/small_plan_legal.json" "$D/small_plan_legal.json"
usage_error 'expected GRAPH and at least one PLAN' compare "$G"
usage_error 'expected one GRAPH file' solve
usage_error "option '-o' needs a value" solve "$G" -o
usage_error "method 'annealing'" solve "$G" --method annealing
usage_error "order 'zigzag'" solve "$G" --order zigzag
usage_error '--peak-limit' solve "$G" --peak-limit lots
usage_error '--peak-limit' solve "$G" --peak-limit 10XB
usage_error '--peak-limit' solve "$G" --peak-limit %
usage_error '--peak-limit' solve "$G" --peak-limit -5%
usage_error '--peak-limit' solve "$G" --peak-limit 99999999999999999999
usage_error '--peak-limit' solve "$G" --peak-limit 20000000TiB
usage_error "--size: expected 10 .. 10000000, got '9'" gen --size 9
usage_error "--size: expected 10 .. 10000000, got '10000001'" gen --size 10000001
usage_error "--size: expected 10 .. 10000000, got 'ten'" gen --size ten
usage_error "--size: expected 10 .. 10000000, got '-20'" gen --size -20
usage_error "--size: expected 10 .. 10000000, got '20x'" gen --size 20x
usage_error "unknown family 'lstm'" gen --family lstm
usage_error '--seed: expected an unsigned integer' gen --seed -1
usage_error '--seed: expected an unsigned integer' gen --seed 18446744073709551616
usage_error "unexpected argument 'extra'" gen extra

# ---- input errors through every command: exit 3 -------------------------------
t_case 'info on a missing file'
t_run "$FUSEPLAN" info "$T/no-such-graph.json"
t_exit 3 && t_err_has "$T/no-such-graph.json: cannot open"
t_err_one_line
t_case 'info on a directory'
t_run "$FUSEPLAN" info "$D"
t_exit 3 && t_err_has "$D"
t_err_one_line
t_case 'eval with a bad graph'
t_run "$FUSEPLAN" eval "$D/bad/cycle2.json" "$D/small_plan_legal.json"
t_exit 3 && t_err_has "$D/bad/cycle2.json: node 'n0'"
t_case 'verify with a missing plan file'
t_run "$FUSEPLAN" verify "$G" "$T/no-such-plan.json"
t_exit 3 && t_err_has "$T/no-such-plan.json: cannot open"
t_case 'compare with a bad plan file'
t_run "$FUSEPLAN" compare "$G" "$D/bad/plan_unknown_node.json"
t_exit 3 && t_err_has "unknown node 'n9'"
t_case 'solve with a bad graph'
t_run "$FUSEPLAN" solve "$D/bad/two_writers.json"
t_exit 3 && t_err_has 'two writers'
t_case 'info reads standard input'
t_run "$FUSEPLAN" info --json - <"$G"
t_exit 0 && t_eq 'nodes' "$(json_num nodes "$T_OUT")" 7

# ---- info: the eager figures of small.json ------------------------------------
# small.json, nodes in listed order (step = index in the eager plan):
#   n0 pw [1024,1]   reads x          writes a    (x 4096 input, resident)
#   n1 pw [1024,1]   reads a          writes b    (a, b, c 4096 each)
#   n2 pw [1024,1]   reads a, b       writes c
#   n3 red [16,64]   reads c          writes r    (r 64)
#   n4 extern        reads r, w       writes m    (w 2048 input, resident; m 512)
#   n5 pw [256,1]    reads m, g:512   writes y    (g 1024 freeable input;
#                                                  y 256 output)
#   n6 pw [1024,1]   reads c, x       writes z    (z 4096 output)
# resident = x + w = 6144.  Eager: every produced buffer is materialized.
# traffic (reads + writes per step):
#   n0 4096+4096, n1 4096+4096, n2 8192+4096, n3 4096+64, n4 2112+512,
#   n5 (512+512)+256, n6 8192+4096  = 31808 + 17216 = 49024
# live(t) = 6144 + g (1024, steps 0..5) + materialized buffers alive at t:
#   t0 a            -> 11264     t4 c r m       -> 11840
#   t1 a b          -> 15360     t5 c m y       -> 12032
#   t2 a b c        -> 19456     t6 c y z (no g) -> 14592
#   t3 c r          -> 11328
# eager peak = 19456 (step 2); 7 kernels.
t_case 'info --json small.json'
t_run "$FUSEPLAN" info --json "$G"
if t_exit 0; then
  t_eq nodes "$(json_num nodes "$T_OUT")" 7
  t_eq buffers "$(json_num buffers "$T_OUT")" 10
  t_eq extern "$(json_num extern "$T_OUT")" 1
  t_eq freeable_inputs "$(json_num freeable_inputs "$T_OUT")" 1
  t_eq unfusible_pairs "$(json_num unfusible_pairs "$T_OUT")" 1
  t_eq max_fusion_size "$(json_num max_fusion_size "$T_OUT")" 3
  t_eq total_bytes "$(json_num total_bytes "$T_OUT")" 24384
  t_eq resident_bytes "$(json_num resident_bytes "$T_OUT")" 6144
  t_eq eager.traffic_bytes "$(json_num_in eager traffic_bytes "$T_OUT")" 49024
  t_eq eager.peak_bytes "$(json_num_in eager peak_bytes "$T_OUT")" 19456
  t_eq eager.kernels "$(json_num_in eager kernels "$T_OUT")" 7
  lb_t=$(json_num_in lower_bound traffic_bytes "$T_OUT")
  lb_p=$(json_num_in lower_bound peak_bytes "$T_OUT")
  # The legal plan below reaches 24448 / 15424: the bounds may not exceed it.
  t_true "lower bound on traffic $lb_t above a legal plan's 24448" \
    [ "${lb_t:-99999999}" -le 24448 ]
  t_true "lower bound on peak $lb_p above a legal plan's 15424" \
    [ "${lb_p:-99999999}" -le 15424 ]
fi
t_case 'info small.json (text)'
t_run "$FUSEPLAN" info "$G"
t_exit 0 && t_out_has 'eager peak       19456 (19.00 KiB)'
t_out_has 'eager traffic    49024 (47.88 KiB)'
t_out_has 'outside live     0 B'

# The same graph with 1000 bytes live outside it (version 2): every peak
# figure and the resident bytes gain 1000; traffic does not move.
sed 's/"version": 1, "name": "small",/"version": 2, "name": "small", "outside_live_bytes": 1000,/' \
  "$G" >"$T/outside.json"
t_case 'info --json with outside_live_bytes'
t_run "$FUSEPLAN" info --json "$T/outside.json"
if t_exit 0; then
  t_eq outside_live_bytes "$(json_num outside_live_bytes "$T_OUT")" 1000
  t_eq resident_bytes "$(json_num resident_bytes "$T_OUT")" 7144
  t_eq eager.peak_bytes "$(json_num_in eager peak_bytes "$T_OUT")" 20456
  t_eq eager.traffic_bytes "$(json_num_in eager traffic_bytes "$T_OUT")" 49024
  t_true "peak bound $(json_num_in lower_bound peak_bytes "$T_OUT") above 16424" \
    [ "$(json_num_in lower_bound peak_bytes "$T_OUT")" -le 16424 ]
fi
t_run "$FUSEPLAN" info "$T/outside.json"
t_exit 0 && t_out_has 'resident inputs  6144 (6.00 KiB)'
t_out_has 'outside live     1000 B'
# The same graph with an 8000-byte workspace on the extern n4 (version 4):
# at n4's eager step x, w, g, c, r and m hold 11840 bytes, so the eager
# peak is 19840 (was 19456 at another step), and no plan avoids it.
sed 's/"version": 1, "name": "small",/"version": 4, "name": "small",/; s/"writes": \["m"\]}/"writes": ["m"], "workspace": 8000}/' \
  "$G" >"$T/workspace.json"
t_case 'info with a workspace'
t_run "$FUSEPLAN" info --json "$T/workspace.json"
if t_exit 0; then
  t_eq workspace_bytes "$(json_num workspace_bytes "$T_OUT")" 8000
  t_eq largest_workspace_bytes "$(json_num largest_workspace_bytes "$T_OUT")" 8000
  t_eq eager.peak_bytes "$(json_num_in eager peak_bytes "$T_OUT")" 19840
  t_eq lower_bound.peak_bytes "$(json_num_in lower_bound peak_bytes "$T_OUT")" 19840
fi
t_run "$FUSEPLAN" info "$T/workspace.json"
t_exit 0 && t_out_has "workspaces       8000 (7.81 KiB)  (largest 8000 (7.81 KiB), node 'n4'"
t_run "$FUSEPLAN" info "$G"
t_exit 0 && t_true 'no workspaces line without workspaces' \
  sh -c '! grep -q workspaces "$1"' _ "$T_OUT"
t_case 'eval with outside_live_bytes: the legal plan peaks 1000 higher'
t_run "$FUSEPLAN" eval "$T/outside.json" "$D/small_plan_legal.json" --json
t_exit 0 && t_eq peak_bytes "$(json_num peak_bytes "$T_OUT")" 16424

# An empty graph is valid: no kernels, no traffic, peak = resident inputs
# (p 1000 + o 250, a freeable input that is an output; q is freeable and
# unread, so never live).
t_case 'info --json empty_graph.json'
t_run "$FUSEPLAN" info --json "$D/empty_graph.json"
if t_exit 0; then
  t_eq nodes "$(json_num nodes "$T_OUT")" 0
  t_eq resident_bytes "$(json_num resident_bytes "$T_OUT")" 1250
  t_eq eager.traffic_bytes "$(json_num_in eager traffic_bytes "$T_OUT")" 0
  t_eq eager.peak_bytes "$(json_num_in eager peak_bytes "$T_OUT")" 1250
  t_eq eager.kernels "$(json_num_in eager kernels "$T_OUT")" 0
fi
t_case 'verify + eval of the empty plan of the empty graph'
t_run "$FUSEPLAN" verify "$D/empty_graph.json" "$D/empty_plan.json"
t_exit 0
t_run "$FUSEPLAN" eval --json "$D/empty_graph.json" "$D/empty_plan.json"
if t_exit 0; then
  t_eq traffic_bytes "$(json_num traffic_bytes "$T_OUT")" 0
  t_eq peak_bytes "$(json_num peak_bytes "$T_OUT")" 1250
  t_eq kernels "$(json_num kernels "$T_OUT")" 0
fi

# ---- eval: a legal fused plan, by hand -----------------------------------------
# small_plan_legal.json: G0 = [n0 n1 n2], G1 = [n3 n6], G2 = [n4], G3 = [n5].
# Materialized (some reader outside the writer's group, or output): c (read
# by n3, n6 in G1), r, m, y (output), z (output); a and b stay inside G0.
# traffic:
#   G0 reads x 4096 (a, b produced inside)           writes c 4096
#   G1 reads c 4096 once (n3 and n6), x 4096          writes r 64 + z 4096
#   G2 reads r 64 + w 2048                            writes m 512
#   G3 reads m 512 + g 512 (per-read bytes)           writes y 256
#   read 4096+8192+2112+1024 = 15424, write 4096+4160+512+256 = 9024,
#   traffic = 24448
# live(t) = 6144 resident + g 1024 (freeable, last reader n5 at step 3) +
#   t0: c 4096                      -> 11264
#   t1: c 4096, r 64, z 4096        -> 15424
#   t2: r 64, m 512, z 4096         -> 11840
#   t3: m 512, y 256, z 4096        -> 12032
# peak = 15424 at step 1; 4 kernels; 5 materialized buffers.
t_case 'eval --json small_plan_legal.json'
t_run "$FUSEPLAN" eval --json "$G" "$D/small_plan_legal.json"
if t_exit 0; then
  t_eq traffic_bytes "$(json_num traffic_bytes "$T_OUT")" 24448
  t_eq peak_bytes "$(json_num peak_bytes "$T_OUT")" 15424
  t_eq kernels "$(json_num kernels "$T_OUT")" 4
  t_eq read_bytes "$(json_num read_bytes "$T_OUT")" 15424
  t_eq write_bytes "$(json_num write_bytes "$T_OUT")" 9024
  t_eq peak_step "$(json_num peak_step "$T_OUT")" 1
  t_eq materialized "$(json_num materialized "$T_OUT")" 5
  t_eq resident_bytes "$(json_num resident_bytes "$T_OUT")" 6144
  t_eq eager.traffic_bytes "$(json_num_in eager traffic_bytes "$T_OUT")" 49024
  t_eq eager.peak_bytes "$(json_num_in eager peak_bytes "$T_OUT")" 19456
fi
t_case 'eval (text) small_plan_legal.json'
t_run "$FUSEPLAN" eval "$G" "$D/small_plan_legal.json"
t_exit 0 && t_out_has '24448'
t_out_has 'first reached at step 1 (n3, ...)'

# The eager plan written out by hand gives the eager figures above.
t_case 'eval --json small_plan_eager.json'
t_run "$FUSEPLAN" eval --json "$G" "$D/small_plan_eager.json"
if t_exit 0; then
  t_eq traffic_bytes "$(json_num traffic_bytes "$T_OUT")" 49024
  t_eq peak_bytes "$(json_num peak_bytes "$T_OUT")" 19456
  t_eq read_bytes "$(json_num read_bytes "$T_OUT")" 31808
  t_eq peak_step "$(json_num peak_step "$T_OUT")" 2
fi

# ---- eval --timeline ----------------------------------------------------------
# One line per kernel plus the header, with the per-step figures above.
t_case 'eval --timeline (legal plan)'
t_run "$FUSEPLAN" eval "$G" "$D/small_plan_legal.json" --timeline "$T/tl.csv"
if t_exit 0 && t_true 'timeline file written' test -f "$T/tl.csv"; then
  cat >"$T/tl.want" <<'EOF'
step,nodes,live_bytes,read_bytes,write_bytes,first_node
0,3,11264,4096,4096,"n0"
1,2,15424,8192,4160,"n3"
2,1,11840,2112,512,"n4"
3,1,12032,1024,256,"n5"
EOF
  t_true 'timeline differs from the hand computation' cmp -s "$T/tl.want" "$T/tl.csv"
fi
# max live_bytes of the timeline = eval's peak_bytes, on the eager plan too.
for plan in small_plan_legal small_plan_eager; do
  t_case "timeline max = peak ($plan)"
  t_run "$FUSEPLAN" eval --json "$G" "$D/$plan.json" --timeline "$T/$plan.csv"
  if t_exit 0; then
    peak=$(json_num peak_bytes "$T_OUT")
    kernels=$(json_num kernels "$T_OUT")
    tl_max=$(awk -F, 'NR > 1 && $3 + 0 > m { m = $3 + 0 } END { print m }' "$T/$plan.csv")
    tl_lines=$(awk 'END { print NR }' "$T/$plan.csv")
    t_eq 'max live_bytes' "$tl_max" "$peak"
    t_eq 'timeline lines' "$tl_lines" $((kernels + 1))
  fi
done

# A name ending in .svg gets a plot instead of CSV, with the peak marked.
t_case 'eval --timeline FILE.svg'
t_run "$FUSEPLAN" eval "$G" "$D/small_plan_legal.json" --timeline "$T/tl.svg"
if t_exit 0 && t_true 'svg timeline written' test -s "$T/tl.svg"; then
  t_eq 'first bytes' "$(head -c 4 "$T/tl.svg")" '<svg'
  t_true 'svg does not end with </svg>' grep -q '</svg>' "$T/tl.svg"
  t_true 'svg lacks the peak (15424)' grep -q '15424' "$T/tl.svg"
  t_false 'svg timeline holds the CSV header' grep -q '^step,nodes' "$T/tl.svg"
fi

# ---- verify: legal and illegal plans ---------------------------------------------
t_case 'verify small_plan_legal.json'
t_run "$FUSEPLAN" verify "$G" "$D/small_plan_legal.json"
t_exit 0 && t_out_has 'legal plan'
t_err_empty

# illegal PLAN FRAGMENT: verify and eval exit 1 naming PLAN and the problem.
illegal() {
  for i_cmd in verify eval; do
    t_case "$i_cmd $1"
    t_run "$FUSEPLAN" "$i_cmd" "$G" "$D/$1"
    t_exit 1 && t_err_has "$D/$1: $2"
    t_err_one_line
    t_out_empty
  done
}
illegal small_illegal_order.json "node 'n1' (group 0) reads 'a' before its writer 'n0' runs (group 1)"
illegal small_illegal_cycle.json "node 'n2' (group 0) reads 'b' before its writer 'n1' runs (group 1)"
illegal small_illegal_dup.json "node 'n0' appears twice (groups 0 and 7)"
illegal small_illegal_missing.json "node 'n6' is missing from the plan"
illegal small_illegal_iter.json "group 5: nodes 'n5' [256, 1] and 'n6' [1024, 1] have incompatible iteration spaces"
illegal small_illegal_extern.json "group 3: extern node 'n4' is fused with 'n3'"
illegal small_illegal_size.json 'group 0 has 4 nodes, more than max_fusion_size 3'
illegal small_illegal_unfusible.json "group 2: nodes 'n2' and 'n6' are listed unfusible"
illegal small_illegal_empty_group.json 'group 3 is empty'

# linked pairs (graph format 3): small.json with n0, n1 linked through n2;
# a plan that fuses n0 and n1 without n2 is illegal, and every method's
# plan keeps the rule
t_case 'verify: a linked pair without its linker'
sed -e 's/"version": 1/"version": 3/' \
  -e 's/"unfusible": \[\["n2", "n6"\]\],/&\n "linked": [["n0", "n1", ["n2"]]],/' \
  "$G" >"$T_TMP/linked.json"
printf '%s\n' '{"format": "fuseplan.plan", "version": 1, "graph": "small",' \
  ' "groups": [["n0", "n1"], ["n2"], ["n3", "n6"], ["n4"], ["n5"]]}' \
  >"$T_TMP/linked_plan.json"
t_run "$FUSEPLAN" verify "$T_TMP/linked.json" "$T_TMP/linked_plan.json"
t_exit 1 && t_err_has "linked_plan.json: group 0: nodes 'n0' and 'n1' are a linked pair and the group holds none of their 1 linkers ('n2')"
t_err_one_line
t_run "$FUSEPLAN" verify "$T_TMP/linked.json" "$D/small_plan_legal.json"
t_exit 0
t_run "$FUSEPLAN" info --json "$T_TMP/linked.json"
t_exit 0 && t_eq linked_pairs "$(json_num linked_pairs "$T_OUT")" 1
t_run "$FUSEPLAN" info "$T_TMP/linked.json"
t_exit 0 && t_out_has 'unfusible pairs 1; linked pairs 1'
for m in greedy greedy-lowmem ilp auto; do
  t_case "solve --method $m keeps a linked pair with its linker"
  t_run "$FUSEPLAN" solve "$T_TMP/linked.json" --method "$m" -o "$T_TMP/linked_$m.json"
  t_exit 0 || continue
  t_run "$FUSEPLAN" verify "$T_TMP/linked.json" "$T_TMP/linked_$m.json"
  t_exit 0
done

# ---- compare -------------------------------------------------------------------
# Run inside tests/data: the table's plan column shows the first 28
# characters of each plan's path.
t_case 'compare: legal plans only'
t_run_in "$D" "$FUSEPLAN" compare small.json small_plan_legal.json small_plan_eager.json
t_exit 0 && t_out_has '(eager)'
t_eq 'rows' "$(grep -c '^small_plan_' "$T_OUT")" 2
t_true 'legal plan row lacks 4 kernels, 24448 and 15424' \
  grep -q '^small_plan_legal.json .* 4 *24448 .* 15424 ' "$T_OUT"

t_case 'compare: an illegal plan among legal ones'
t_run_in "$D" "$FUSEPLAN" compare small.json small_plan_legal.json \
  small_illegal_size.json small_plan_eager.json
t_exit 1
t_true 'legal row missing' grep -q '^small_plan_legal.json .* 24448 ' "$T_OUT"
t_true 'row after the illegal plan missing' grep -q '^small_plan_eager.json .* 49024 ' "$T_OUT"
t_true 'illegal row missing' \
  grep -q '^small_illegal_size.json .*ILLEGAL: group 0 has 4 nodes' "$T_OUT"
t_eq 'eager row' "$(grep -c '^(eager) ' "$T_OUT")" 1

t_case 'compare --json: an illegal plan among legal ones'
t_run "$FUSEPLAN" compare --json "$G" "$D/small_plan_legal.json" "$D/small_illegal_extern.json"
t_exit 1
t_eq 'legal entries' "$(grep -c '"legal": true' "$T_OUT")" 2
t_eq 'illegal entries' "$(grep -c '"legal": false' "$T_OUT")" 1
t_true 'legal plan figures' grep -q '"traffic_bytes": 24448, "peak_bytes": 15424' "$T_OUT"
t_out_has "\"problem\": \"group 3: extern node 'n4' is fused with 'n3'\""
t_eq 'first character' "$(head -c 1 "$T_OUT")" '['


# ---- solve ---------------------------------------------------------------------
t_case 'solve --method eager -o'
mkdir "$T/out"
t_run "$FUSEPLAN" solve "$G" --method eager -o "$T/out/plan.json"
if t_exit 0 && t_true 'plan written' test -f "$T/out/plan.json"; then
  t_eq 'files in the output directory' "$(t_entries "$T/out")" 'plan.json '
  t_run "$FUSEPLAN" verify "$G" "$T/out/plan.json"
  t_exit 0
  t_run "$FUSEPLAN" eval --json "$G" "$T/out/plan.json"
  t_exit 0
  # The metrics the plan file states are the evaluator's figures.
  tr -d '\n' <"$T/out/plan.json" >"$T/plan.flat"
  t_eq 'metrics.traffic_bytes = eval' \
    "$(json_num_in metrics traffic_bytes "$T/plan.flat")" "$(json_num traffic_bytes "$T_OUT")"
  t_eq 'metrics.peak_bytes = eval' \
    "$(json_num_in metrics peak_bytes "$T/plan.flat")" "$(json_num peak_bytes "$T_OUT")"
  t_eq 'metrics.kernels = eval' \
    "$(json_num_in metrics kernels "$T/plan.flat")" "$(json_num kernels "$T_OUT")"
  t_eq 'eager plan traffic' "$(json_num traffic_bytes "$T_OUT")" 49024
  t_eq 'eager plan peak' "$(json_num peak_bytes "$T_OUT")" 19456
fi

t_case 'verify rejects a plan whose stated metrics are wrong'
if [ -f "$T/out/plan.json" ]; then
  sed 's/"traffic_bytes": 49024/"traffic_bytes": 49000/' "$T/out/plan.json" >"$T/lying.json"
  t_true 'metrics edited' grep -q '"traffic_bytes": 49000' "$T/lying.json"
  t_run "$FUSEPLAN" verify "$G" "$T/lying.json"
  t_exit 1 && t_err_has "$T/lying.json: metrics.traffic_bytes"
fi

t_case 'solve --json prints the plan that -o writes'
t_run "$FUSEPLAN" solve "$G" --method eager --json -q
if t_exit 0; then
  cp "$T_OUT" "$T/stdout.plan.json"
  t_run "$FUSEPLAN" verify "$G" "$T/stdout.plan.json"
  t_exit 0
  # The same plan except for the solver's time_s.
  sed 's/"time_s": [0-9.e+-]*//' "$T/stdout.plan.json" >"$T/a.cmp"
  sed 's/"time_s": [0-9.e+-]*//' "$T/out/plan.json" >"$T/b.cmp"
  t_true 'solve --json and -o differ' cmp -s "$T/a.cmp" "$T/b.cmp"
fi

# --peak-limit around the eager peak (19456 = 19 KiB).
# peak_limit LIMIT CODE: solve with --peak-limit LIMIT exits CODE.
peak_limit() {
  t_case "solve --peak-limit $1"
  t_run "$FUSEPLAN" solve "$G" --method eager --peak-limit "$1" -o "$T/pl.json"
  if t_exit "$2" && [ "$2" = 1 ]; then
    t_err_has 'infeasible'
    t_err_has '19456'
    t_true 'no plan written when infeasible' test ! -e "$T/pl.json"
  fi
  rm -f "$T/pl.json"
}
peak_limit 19455 1
peak_limit 19456 0
peak_limit 19KiB 0
peak_limit 18KiB 1
peak_limit eager 0
peak_limit 100% 0
peak_limit 99% 1
peak_limit 150% 0
peak_limit 1GiB 0

# -o is atomic: a failed write leaves nothing behind and exits 4.
t_case 'solve -o into a missing directory'
t_run "$FUSEPLAN" solve "$G" --method eager -o "$T/missing/plan.json"
t_exit 4 && t_err_has "$T/missing/plan.json"
t_true 'directory appeared' test ! -e "$T/missing"

t_case 'solve -o onto a directory'
mkdir "$T/isdir"
t_run "$FUSEPLAN" solve "$G" --method eager -o "$T/isdir"
t_exit 4 && t_err_has "$T/isdir"
t_eq 'directory contents' "$(t_entries "$T/isdir")" ''
t_eq 'temporary files left' "$(t_count_tmp "$T")" 0

t_case 'solve -o into a read-only directory'
if [ "$(id -u)" -ne 0 ]; then
  mkdir "$T/ro"
  chmod 555 "$T/ro"
  t_run "$FUSEPLAN" solve "$G" --method eager -o "$T/ro/plan.json"
  t_exit 4 && t_err_has "$T/ro/plan.json"
  t_eq 'read-only directory contents' "$(t_entries "$T/ro")" ''
  chmod 755 "$T/ro"
else
  echo "note: running as root, read-only directory case skipped" >&2
fi

t_case 'solve -o replaces an existing file completely'
printf '%2000s\n' garbage >"$T/out/old.json"
t_run "$FUSEPLAN" solve "$G" --method eager -o "$T/out/old.json"
t_exit 0
t_run "$FUSEPLAN" verify "$G" "$T/out/old.json"
t_exit 0
t_eq 'files in the output directory' "$(t_entries "$T/out")" 'old.json plan.json '

t_case 'solve -o plan.json.gz'
t_run "$FUSEPLAN" solve "$G" --method eager -o "$T/out/plan.json.gz"
if t_exit 0; then
  t_eq 'gzip magic' "$(od -An -tx1 -N2 "$T/out/plan.json.gz" | tr -d ' ')" 1f8b
  t_run "$FUSEPLAN" verify "$G" "$T/out/plan.json.gz"
  t_exit 0
fi

# ---- gen -------------------------------------------------------------------------
# gen_ok NAME ARGS...: `fuseplan gen ARGS -o $T/NAME` succeeds.
gen_ok() {
  g_name=$1
  shift
  t_case "gen $* -o $g_name"
  t_run "$FUSEPLAN" gen "$@" -o "$T/$g_name"
  t_exit 0 && t_true "$g_name not written" test -s "$T/$g_name"
}

gen_ok a.json --family mlp --size 60 --seed 7
gen_ok b.json --family mlp --size 60 --seed 7
gen_ok c.json --family mlp --size 60 --seed 8
# docs/cli.md gives the seed's range as 0 ... 2^64-1 (2^64 itself is a
# usage error, above): both ends work, and name the graph.
t_case 'gen --seed: both ends of the range docs/cli.md gives'
t_true "docs/cli.md's gen table gives another range" \
  grep -q '^| `--seed S` | any unsigned 64-bit integer, 0 … 2^64−1 ' \
  "$top_srcdir/docs/cli.md"
for s in 0 18446744073709551615; do
  t_run "$FUSEPLAN" gen --family mlp --size 10 --seed $s
  t_exit 0 && t_out_has "\"gen.mlp.n10.s$s\""
done

t_case 'gen is deterministic'
t_true 'same arguments, different bytes' cmp -s "$T/a.json" "$T/b.json"
t_case 'gen: seeds differ'
t_false 'seeds 7 and 8 give identical graphs' cmp -s "$T/a.json" "$T/c.json"
t_case 'gen to stdout = gen -o'
t_run "$FUSEPLAN" gen --family mlp --size 60 --seed 7
t_exit 0 && t_true 'stdout differs from the -o file' cmp -s "$T_OUT" "$T/a.json"
t_eq 'temporary files left' "$(t_count_tmp "$T")" 0

# Every family: a valid graph near the requested size (random: exactly),
# which solve, verify and eval accept, with eval = the plan's metrics.
for fam in transformer convnet mlp random; do
  gen_ok "$fam.json" --family "$fam" --size 120 --seed 3
  t_case "gen $fam: info"
  t_run "$FUSEPLAN" info --json "$T/$fam.json"
  t_exit 0 || continue
  n=$(json_num nodes "$T_OUT")
  if [ "$fam" = random ]; then
    t_eq 'random: node count' "$n" 120
  else
    t_true "$fam: $n nodes, fewer than 108 (120 - 10%)" [ "${n:-0}" -ge 108 ]
    t_true "$fam: $n nodes, more than 132 (120 + 10%)" [ "${n:-0}" -le 132 ]
  fi
  info_t=$(json_num_in eager traffic_bytes "$T_OUT")
  info_p=$(json_num_in eager peak_bytes "$T_OUT")
  t_case "gen $fam: solve, verify, eval"
  t_run "$FUSEPLAN" solve "$T/$fam.json" --method eager -o "$T/$fam.plan.json"
  t_exit 0 || continue
  t_run "$FUSEPLAN" verify "$T/$fam.json" "$T/$fam.plan.json"
  t_exit 0
  t_run "$FUSEPLAN" eval --json "$T/$fam.json" "$T/$fam.plan.json"
  t_exit 0
  t_eq "$fam: eval traffic = info eager traffic" "$(json_num traffic_bytes "$T_OUT")" "$info_t"
  t_eq "$fam: eval peak = info eager peak" "$(json_num peak_bytes "$T_OUT")" "$info_p"
  tr -d '\n' <"$T/$fam.plan.json" >"$T/plan.flat"
  t_eq "$fam: plan metrics.peak_bytes = eval" \
    "$(json_num_in metrics peak_bytes "$T/plan.flat")" "$(json_num peak_bytes "$T_OUT")"
done

# .json.gz round trip: the compressed file is gzip, loads, and says the
# same as the plain file.
gen_ok t.json --family transformer --size 80 --seed 5
gen_ok t.json.gz --family transformer --size 80 --seed 5
t_case 'gen .json.gz round trip'
if [ -f "$T/t.json.gz" ] && [ -f "$T/t.json" ]; then
  t_eq 'gzip magic' "$(od -An -tx1 -N2 "$T/t.json.gz" | tr -d ' ')" 1f8b
  t_true 'compressed file not smaller' [ "$(wc -c <"$T/t.json.gz")" -lt "$(wc -c <"$T/t.json")" ]
  t_run "$FUSEPLAN" info --json "$T/t.json"
  t_exit 0 && cp "$T_OUT" "$T/t.info"
  t_run "$FUSEPLAN" info --json "$T/t.json.gz"
  t_exit 0 && t_true 'info differs between .json and .json.gz' cmp -s "$T_OUT" "$T/t.info"
  t_true 'info printed nothing' test -s "$T/t.info"
  # Decompressed, it is the same document byte for byte.
  if command -v gzip >/dev/null 2>&1; then
    gzip -dc "$T/t.json.gz" >"$T/t.unzipped"
    t_true 'decompressed .json.gz differs from .json' cmp -s "$T/t.unzipped" "$T/t.json"
  fi
  # A solved plan for the .gz graph verifies against the plain one.
  t_run "$FUSEPLAN" solve "$T/t.json.gz" -o "$T/t.plan.json.gz"
  t_exit 0
  t_run "$FUSEPLAN" verify "$T/t.json" "$T/t.plan.json.gz"
  t_exit 0
fi

t_case 'gen -o into a missing directory'
t_run "$FUSEPLAN" gen --family mlp --size 20 --seed 1 -o "$T/missing/g.json"
t_exit 4 && t_err_has "$T/missing/g.json"
t_true 'directory appeared' test ! -e "$T/missing"

t_case 'gen: defaults'
t_run "$FUSEPLAN" gen
t_exit 0
t_true 'default gen output is not a graph' grep -q '"format": "fuseplan.graph"' "$T_OUT"

# ---- control characters in names are shown, never obeyed ---------------
# (issue 15, item 8) A graph name with an OSC sequence and a BEL, and a
# node name with a CSI sequence and a C1 control (U+009B, which some
# terminals take as CSI) load, since escapes in JSON are fine, but every
# human line that shows them (tables, summaries, error messages) prints
# \xHH and \u00HH instead of the raw bytes.
ctl_names() {
  sed -e 's/"small"/"sm\\u001b]0;x\\u0007all"/' \
    -e 's/"n1"/"n1\\u001b[2J\\u009bK"/g' "$1"
}
ctl_names "$D/small.json" >"$T/ctl.json"
ctl_names "$D/small_plan_eager.json" >"$T/ctl_plan.json"
ctl_names "$D/small_illegal_order.json" >"$T/ctl_illegal.json"
raw=$(printf '\033\007\302\233')
for args in "info ctl.json" "eval ctl.json ctl_plan.json" \
  "run ctl.json ctl_plan.json" "solve ctl.json --method greedy -o ctl_out.json" \
  "verify ctl.json ctl_illegal.json" "eval ctl.json ctl_illegal.json" \
  "compare ctl.json ctl_plan.json ctl_illegal.json"; do
  t_case "control characters in names: fuseplan $args"
  # shellcheck disable=SC2086 # split the words on purpose
  t_run_in "$T" "$FUSEPLAN" $args
  cat "$T_OUT" "$T_ERR" >"$T/ctl_all"
  t_false 'a raw ESC, BEL or C1 control is printed' \
    env LC_ALL=C grep -q "[$raw]" "$T/ctl_all"
  case $args in
  info* | eval*plan* | run* | solve*) t_true 'the name is not shown escaped' \
    grep -qF 'sm\x1b]0;x\x07all' "$T/ctl_all" ;;
  *) t_true 'the node is not shown escaped' \
    grep -qF "n1\\x1b[2J\\u009bK" "$T/ctl_all" ;;
  esac
done
t_case 'control characters in names: the plan written keeps them'
t_run "$FUSEPLAN" verify "$T/ctl.json" "$T/ctl_out.json"
t_exit 0 && t_true 'escaped in the JSON' grep -qF '\u001b' "$T/ctl_out.json"

t_finish
