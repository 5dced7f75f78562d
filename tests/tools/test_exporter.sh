#!/bin/sh
# test_exporter.sh -- tools/export_inductor.py on a tiny model (conv,
# batch norm, linear, layer norm): forward and backward graphs and
# Inductor's plans are written, load, verify, and fuseplan's evaluator
# agrees with Inductor's adjusted peak estimate; llama-tiny's whole step
# (--whole-step --fake, and with an AdamW step) is one graph that says so.
#
# Needs a python with torch: $FUSEPLAN_PYTHON, else python3.  Without one
# the test is skipped (exit 77); CI does not need torch.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"

PY=${FUSEPLAN_PYTHON:-python3}
if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
  echo "SKIP: no torch in '$PY' (set FUSEPLAN_PYTHON to a python with torch," \
    "see tools/requirements.txt)"
  exit 77
fi
t_init

EX=$top_srcdir/tools/export_inductor.py

t_case '--help'
t_run "$PY" "$EX" --help
t_exit 0
t_out_has '--cpu-backend'

for be in cpp triton; do
  out=$T_TMP/$be
  t_case "export tiny ($be scheduling)"
  t_run "$PY" "$EX" tiny --batch 4 --cpu-backend "$be" --plain --out "$out"
  t_exit 0 || continue
  for w in fwd bwd; do
    g=$out/tiny.$w.json
    p=$out/tiny.$w.inductor.plan.json
    t_case "tiny.$w ($be): files"
    t_true "no $g" test -f "$g" || continue
    t_true "no $p" test -f "$p" || continue

    t_case "tiny.$w ($be): loads, plan verifies"
    t_run "$FUSEPLAN" info --json "$g"
    t_exit 0 || continue
    cp "$T_OUT" "$T_TMP/info.json"
    t_run "$FUSEPLAN" verify "$g" "$p"
    t_exit 0 || continue
    t_run "$FUSEPLAN" eval --json "$g" "$p"
    t_exit 0 || continue
    cp "$T_OUT" "$T_TMP/eval.json"

    # Inductor's timeline (memory.py) has no in-place kernels and no
    # workspaces: without them the evaluator must equal its adjusted
    # estimate; with the pairs it may only be lower (docs/exporter.md,
    # "Inductor's estimate").
    t_case "tiny.$w ($be): peak equals Inductor's adjusted estimate"
    strip='import json, sys
g = json.load(open(sys.argv[1]))
for nd in g["nodes"]:
    for k in sys.argv[3:]:
        nd.pop(k, None)
json.dump(g, open(sys.argv[2], "w"))'
    "$PY" -c "$strip" "$g" "$T_TMP/nopairs.json" inplace workspace
    "$PY" -c "$strip" "$g" "$T_TMP/nopairs_ws.json" inplace
    t_run "$FUSEPLAN" eval --json "$T_TMP/nopairs.json" "$p"
    t_exit 0 && t_eq "peak without in-place pairs and workspaces" \
      "$(json_num peak_bytes "$T_OUT")" \
      "$(json_num inductor_peak_adjusted_bytes "$g")"
    t_run "$FUSEPLAN" eval --json "$T_TMP/nopairs_ws.json" "$p"
    t_true "in-place pairs raised the peak" \
      test "$(json_num peak_bytes "$T_TMP/eval.json")" -le \
      "$(json_num peak_bytes "$T_OUT")"
    t_true "Inductor's raw estimate should leave out the resident inputs" \
      test "$(json_num inductor_peak_bytes "$g")" -lt \
      "$(json_num peak_bytes "$T_TMP/eval.json")"

    t_case "tiny.$w ($be): content"
    t_true "extern nodes missing" test "$(json_num extern "$T_TMP/info.json")" -ge 2
    t_true "fused nothing" test "$(json_num kernels "$T_TMP/eval.json")" -lt \
      "$(json_num nodes "$T_TMP/info.json")"
  done
  # The bytes live when each graph is entered, measured in the exporter's
  # process, are its counted inputs plus outside_live_bytes; the backward
  # is entered with the forward's output and the loss still held.
  for w in fwd bwd; do
    g=$out/tiny.$w.json
    t_case "tiny.$w ($be): outside_live_bytes"
    t_run "$FUSEPLAN" info --json "$g"
    t_exit 0 || continue
    outside=$(json_num outside_live_bytes "$T_OUT")
    t_eq "entry live = counted inputs + outside" \
      "$(json_num entry_live_bytes "$g")" \
      "$(($(json_num entry_input_bytes "$g") + ${outside:-0}))"
  done
  t_true "the backward records no outside bytes" test "${outside:-0}" -gt 0
  # The parameters the backward reads are its inputs (the stand-ins return
  # a saved parameter as itself): counted once, so the outside bytes stay
  # below the forward's resident bytes (parameters and inputs).
  t_run "$FUSEPLAN" info --json "$out/tiny.fwd.json"
  t_exit 0 && t_true "outside bytes $outside hold the parameters twice" \
    test "${outside:-0}" -lt "$(json_num resident_bytes "$T_OUT")"
  t_true "a graph with outside bytes is not version 2 to 4" \
    grep -Eq '"version": *[234],' "$out/tiny.bwd.json"
  # loop nests (graph format 3): the C++ scheduling's loop tuples, none
  # for the Triton scheduling, whose groups are iter's products
  t_case "tiny ($be): loop nests"
  if [ "$be" = cpp ]; then
    t_true "no loop nest in the C++ graph" \
      grep -q '"loop":\[\[8\],\[144\]\]' "$out/tiny.fwd.json"
    t_true "a graph with loop nests is not version 3 or 4" \
      grep -Eq '"version": *[34],' "$out/tiny.fwd.json"
  else
    t_true "a loop nest in the Triton graph" \
      test -z "$(grep -o '"loop"' "$out/tiny.fwd.json")"
  fi
  # in-place pairs (version 3), on by default: fuseplan counts the ones
  # the exporter says it wrote (their rules: tools/tests/test_fidelity.py)
  t_case "tiny ($be): in-place pairs"
  t_run "$FUSEPLAN" info --json "$out/tiny.fwd.json"
  t_exit 0 && t_true "no in-place pair in tiny.fwd" \
    test "$(json_num inplace_pairs "$T_OUT")" -gt 0
  t_eq "pairs read = pairs written" "$(json_num inplace_pairs "$T_OUT")" \
    "$(json_num inplace_pairs "$out/tiny.fwd.json")"
  t_true "a graph with in-place pairs is not version 3 or 4" \
    grep -Eq '"version": *[34],' "$out/tiny.fwd.json"
  # workspaces (version 4, docs/exporter.md "Workspaces"): tiny's
  # convolutions hold temporaries; fuseplan reads the bytes the meta says
  # were written
  t_case "tiny ($be): workspaces"
  t_run "$FUSEPLAN" info --json "$out/tiny.bwd.json"
  ws=$("$PY" -c 'import json, sys
m = json.load(open(sys.argv[1]))["meta"]["workspaces"]
print(m["total_bytes"] if m["measured"] and not m["failed"] else -1)' "$out/tiny.bwd.json")
  t_exit 0 && t_eq "workspace bytes read = written" \
    "$(json_num workspace_bytes "$T_OUT")" "$ws"
  t_true "no workspace measured on tiny.bwd ($ws)" test "${ws:--1}" -gt 0
  if [ "$be" = cpp ]; then
    t_case "tiny (cpp): --no-inplace"
    t_run "$PY" "$EX" tiny --batch 4 --no-inplace --oracle 0 --plain \
      --out "$T_TMP/noip"
    t_exit 0 && t_true "in-place pairs written with --no-inplace" \
      test -z "$(grep -o '"inplace"' "$T_TMP/noip/tiny.fwd.json" \
        "$T_TMP/noip/tiny.bwd.json")"
  fi

  # the oracle (docs/exporter.md, "The oracle check"): tiny is small
  # enough that every group of 2-6 nodes that the exported rules allow is
  # asked of Inductor, and none may be a group Inductor cannot emit as one
  # kernel (a disagreement).  The linked pairs (graph format 3) are what
  # brought the count to 0 (it was 3, 1, 1, 0): pairs of one of Inductor's
  # groups that it fuses only through a third member.  The sample counts
  # and the pairs are held so that a change of the rules or the oracle
  # shows.
  for w in fwd bwd; do
    g=$out/tiny.$w.json
    case $be.$w in
      cpp.fwd) want='84 0 3' ;;
      cpp.bwd) want='11 0 1' ;;
      triton.fwd) want='65 0 5' ;;
      triton.bwd) want='12 0 0' ;;
    esac
    t_case "tiny.$w ($be): oracle and linked pairs"
    t_true "no oracle record in $g" grep -q '"oracle":{"samples":' "$g" || continue
    t_eq "samples disagreements linked_pairs" \
      "$(json_num samples "$g") $(json_num disagreements "$g") $(json_num linked_pairs "$g")" \
      "$want"
    t_true "refused groups listed" grep -q '"refused_groups":\[\]' "$g"
    # fuseplan loads the pairs and Inductor's plan keeps them
    t_run "$FUSEPLAN" verify "$g" "$out/tiny.$w.inductor.plan.json"
    t_exit 0
  done
  # tiny.bwd (C++): op8 and op10, a reduction and a pointwise node, are in
  # one kernel only with op9, the other reduction of their group
  if [ "$be" = cpp ]; then
    t_true "op8, op10 are no linked pair through op9" \
      grep -q '"linked": *\[\["op8", *"op10", *\["op9"\]\]\]' "$out/tiny.bwd.json"
  fi
  # code generation splits (docs/exporter.md): Inductor's plan as exported
  # is the kernels its code generation emits.  The C++ code generation
  # emits tiny.fwd's layer-norm group op9..op13 (a (4) x (10) reduction
  # and its consumers, outer-loop fused) as 5 loop nests: the plan has its
  # 5 parts, their pairs are unfusible, and the exporter's own outer-loop
  # check (outer.py, on single nodes) finds that split.
  if [ "$be" = cpp ]; then
    g=$out/tiny.fwd.json
    t_case "tiny.fwd (cpp): the plan is the emitted kernels"
    t_run "$FUSEPLAN" eval --json "$g" "$out/tiny.fwd.inductor.plan.json"
    if t_exit 0; then
      t_eq "plan groups = emitted kernels" "$(json_num kernels "$T_OUT")" \
        "$(json_num inductor_emitted_kernels "$g")"
    fi
    t_eq "split groups" "$(json_num inductor_codegen_split_groups "$g")" 1
    t_true "the split parts op9, op10 are not unfusible" \
      grep -q '\["op9","op10"\]' "$g"
    t_eq "splits found by the outer-loop check" "$(json_num split_groups_found "$g")" 1
  fi
  t_case "export tiny ($be): --oracle 0 leaves the plan as it is"
  t_run "$PY" "$EX" tiny --batch 4 --cpu-backend "$be" --plain --oracle 0 --which fwd \
    --out "$out.off"
  t_exit 0
  t_true "--oracle 0 still wrote an oracle record" \
    test -z "$(grep -o '"oracle"' "$out.off/tiny.fwd.json")"
  t_true "the oracle changed Inductor's plan" \
    cmp -s "$out/tiny.fwd.inductor.plan.json" "$out.off/tiny.fwd.inductor.plan.json"
  # forward: three batch-norm buffers (running mean, var, count) are
  # mutated in place and come out as graph outputs
  t_case "tiny.fwd ($be): mutations"
  t_eq mutations "$(json_num mutations "$out/tiny.fwd.json")" 3
  # backward: the convolution's backward is one extern node writing two
  # buffers (its MultiOutput nodes are folded into it)
  t_case "tiny.bwd ($be): multi-output kernel"
  t_true "no extern node writes two buffers" \
    grep -q '"kind":"extern","reads":\[[^]]*\],"writes":\["[^"]*","[^"]*"\]' "$out/tiny.bwd.json"
done

# the whole training step as one graph, captured under fake tensors:
# fuseplan reads it, says whole-step, and Inductor's plan verifies
out=$T_TMP/whole
t_case 'export llama-tiny --whole-step --fake'
t_run "$PY" "$EX" llama-tiny --batch 2 --seq 16 --whole-step --fake --plain --out "$out"
if t_exit 0; then
  g=$out/llama-tiny.step.json
  t_run "$FUSEPLAN" info "$g"
  t_exit 0
  t_out_has 'whole-step graph (forward + backward)'
  t_run "$FUSEPLAN" verify "$g" "$out/llama-tiny.step.inductor.plan.json"
  t_exit 0
fi

# with torchtitan's AdamW step (float32 master weights, foreach) in
# bfloat16: the optimizer state is in the graph, and Inductor's plan verifies
t_case 'export llama-tiny --whole-step=adamw-master-foreach --fake'
t_run "$PY" "$EX" llama-tiny --batch 2 --seq 16 --whole-step=adamw-master-foreach --fake \
  --dtype bfloat16 --oracle 0 --plain --name adamw --out "$out"
if t_exit 0; then
  g=$out/adamw.step.json
  t_run "$FUSEPLAN" info "$g"
  t_exit 0
  t_out_has 'forward + backward + AdamW update (float32 master weights, foreach)'
  # 15 weights x (master, exp_avg, exp_avg_sq, step) + tokens + targets
  t_out_has '(62 inputs,'
  t_run "$FUSEPLAN" verify "$g" "$out/adamw.step.inductor.plan.json"
  t_exit 0
fi

t_case 'export: a bad llama name'
t_run "$PY" "$EX" llama-d2-w64 --whole-step --out "$T_TMP/bad"
t_exit 2
t_err_has "missing vocab"

t_finish
