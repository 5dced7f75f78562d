#!/bin/sh
# test_corpus.sh -- the real-graph corpus in data/graphs (exported from
# PyTorch Inductor by tools/export_inductor.py, see docs/exporter.md):
# every graph loads; every bundled Inductor plan verifies; node, buffer and
# kernel counts equal those in data/graphs/README.md; fuseplan's evaluator
# gives Inductor's plan the peak that Inductor's own estimate gives once the
# documented modelling differences are taken out (meta
# inductor_peak_adjusted_bytes), with the graph's in-place pairs left out
# as Inductor's timeline leaves them out, and no more with them; the
# in-place pair and oracle counts equal the README's; the corpus holds the
# graphs issue 6 asks for.  The same checks hold the graphs exported beyond the corpus
# (data/exported) to their README.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

D=$top_srcdir/data/graphs
README=$D/README.md

t_case 'corpus present'
t_true "no $README" test -f "$README"
n_graphs=0
for g in "$D"/*.json.gz; do
  case $g in *.plan.json.gz) continue ;; esac
  [ -e "$g" ] || continue
  n_graphs=$((n_graphs + 1))
done
t_true "only $n_graphs graphs in $D (issue 6 asks for at least 8)" test "$n_graphs" -ge 8
for want in volo_d1_224.bwd resnet50.fwd resnet50.bwd; do
  t_true "$want is missing" test -f "$D/$want.json.gz"
done

# no_inplace IN OUT: the graph IN (uncompressed JSON) without its nodes'
# in-place pairs (docs/exporter.md, "In-place pairs"): the exporter writes
# them compact, as "inplace":[["a","b"],...] after a node's other fields.
no_inplace() {
  sed 's/,"inplace":\[\(\[[^]]*\],\{0,1\}\)*\]//g' "$1" >"$2"
}

# no_workspace IN OUT: the same without the nodes' workspaces
# (docs/exporter.md, "Workspaces"), written as "workspace":N.
no_workspace() {
  sed 's/,"workspace":[0-9]*//g' "$1" >"$2"
}

# split_excess NAME: the bytes by which fuseplan's peak of Inductor's plan
# (without in-place pairs) exceeds the adjusted estimate.  Inductor's
# timeline steps are its scheduler groups, the plan is the kernels code
# generation emits: where code generation splits a group at the peak, a
# buffer the timeline calls kernel-local is materialized between the
# parts.  On the ViT forwards the last block's LayerNorm group is emitted
# as 5 kernels and one [64, 197] float32 statistic (50,432 bytes) is live
# at the peak; merged back into the scheduler's groups, the plan's peak
# equals the estimate (data/graphs/README.md).
split_excess() {
  case $1 in
    deit_small_patch16_224.fwd | vit_base_patch16_224.fwd) echo 50432 ;;
    *) echo 0 ;;
  esac
}

# readme_col NAME COL: column COL (1-based, between the pipes) of the
# $README table row for graph NAME (the row starting with "| `NAME` |").
readme_col() {
  awk -F'|' -v n="\`$1\`" -v c="$2" '{
    x = $2; gsub(/^ +| +$/, "", x)
    if (x == n) { y = $(c + 1); gsub(/^ +| +$/, "", y); print y; exit }
  }' "$README"
}

for D in "$top_srcdir/data/graphs" "$top_srcdir/data/exported"; do
  README=$D/README.md
  t_case "$(basename "$D"): README present"
  t_true "no $README" test -f "$README"
  for g in "$D"/*.json.gz; do
    case $g in *.plan.json.gz) continue ;; esac
    [ -e "$g" ] || continue
    base=$(basename "$g" .json.gz)
    p=$D/$base.inductor.plan.json.gz

    t_case "$base: info"
    t_run "$FUSEPLAN" info --json "$g"
    t_exit 0 || continue
    cp "$T_OUT" "$T_TMP/info.json"
    nodes=$(json_num nodes "$T_TMP/info.json")
    buffers=$(json_num buffers "$T_TMP/info.json")
    t_eq "nodes (README)" "$nodes" "$(readme_col "$base" 5)"
    t_eq "buffers (README)" "$buffers" "$(readme_col "$base" 6)"

    t_case "$base: Inductor plan verifies"
    t_true "no plan $p" test -f "$p" || continue
    t_run "$FUSEPLAN" verify "$g" "$p"
    t_exit 0 || continue
    t_out_has "legal plan"
    t_run "$FUSEPLAN" eval --json "$g" "$p"
    t_exit 0 || continue
    cp "$T_OUT" "$T_TMP/eval.json"
    t_eq "Inductor kernels (README)" "$(json_num kernels "$T_TMP/eval.json")" \
      "$(readme_col "$base" 7)"

    # Inductor's timeline (memory.py) has no in-place kernels and no
    # workspaces: without both the evaluator equals its adjusted estimate;
    # the pairs may only lower the peak (as tests/tools/test_exporter.sh
    # checks on tiny).
    t_case "$base: peak agrees with Inductor's estimate"
    gzip -dc "$g" >"$T_TMP/graph.json"
    adjusted=$(json_num inductor_peak_adjusted_bytes "$T_TMP/graph.json")
    raw=$(json_num inductor_peak_bytes "$T_TMP/graph.json")
    t_true "no inductor_peak_bytes in meta" test -n "$raw"
    no_inplace "$T_TMP/graph.json" "$T_TMP/nopairs_ws.json"
    no_workspace "$T_TMP/nopairs_ws.json" "$T_TMP/nopairs.json"
    t_run "$FUSEPLAN" info --json "$T_TMP/nopairs.json"
    t_exit 0 && t_eq "in-place pairs left after stripping" \
      "$(json_num inplace_pairs "$T_OUT")" 0
    t_run "$FUSEPLAN" eval --json "$T_TMP/nopairs.json" "$p"
    t_exit 0 && t_eq "peak without in-place pairs vs meta.inductor_peak_adjusted_bytes" \
      "$(json_num peak_bytes "$T_OUT")" "$((adjusted + $(split_excess "$base")))"
    t_run "$FUSEPLAN" eval --json "$T_TMP/nopairs_ws.json" "$p"
    t_true "in-place pairs raised the peak (above the adjusted estimate without workspaces)" \
      test "$(json_num peak_bytes "$T_TMP/eval.json")" -le \
      "$(($(json_num peak_bytes "$T_OUT") - $(split_excess "$base")))"
    t_eq "README peak column" "$(readme_col "$base" 9)" "$adjusted"

    # the README's in-place pairs and the oracle's record (docs/exporter.md,
    # "The oracle check"): a re-export that changes them shows here
    t_case "$base: in-place pairs and oracle (README)"
    t_eq "in-place pairs (README)" "$(json_num inplace_pairs "$T_TMP/info.json")" \
      "$(readme_col "$base" 11)"
    for k in samples:12 connected:13 disagreements:14; do
      v=$(json_num "${k%:*}" "$T_TMP/graph.json")
      t_eq "oracle ${k%:*} (README; - without a record)" "${v:--}" \
        "$(readme_col "$base" "${k#*:}")"
    done

    # The plan is legal under the exported rules: so is each of fuseplan's
    # own plans, and greedy never does worse than eager on traffic.
    t_case "$base: greedy plan"
    t_run "$FUSEPLAN" solve "$g" --method greedy -o "$T_TMP/greedy.json"
    t_exit 0 || continue
    t_run "$FUSEPLAN" verify "$g" "$T_TMP/greedy.json"
    t_exit 0
  done
done

# Executing Inductor's own plan of a real graph: every node is a surrogate
# kernel (the exported graphs have no op semantics), and the executor's
# measured peak and traffic equal the evaluator's prediction to the byte.
# MobileNetV3 forward: the smallest peak of the corpus (2.2 GiB allocated),
# about 5 s.
g=$top_srcdir/data/graphs/mobilenetv3_large_100.fwd.json.gz
p=$top_srcdir/data/graphs/mobilenetv3_large_100.fwd.inductor.plan.json.gz
t_case 'run: surrogate kernels on a corpus graph, measured == predicted'
t_run "$FUSEPLAN" run "$g" "$p" --no-check --json
if t_exit 0; then
  cp "$T_OUT" "$T_TMP/run.json"
  for k in traffic_bytes peak_bytes read_bytes write_bytes; do
    t_eq "measured $k" "$(json_num_in measured "$k" "$T_TMP/run.json")" \
      "$(json_num_in predicted "$k" "$T_TMP/run.json")"
  done
  t_run "$FUSEPLAN" eval --json "$g" "$p"
  t_eq 'predicted peak == eval peak' \
    "$(json_num_in predicted peak_bytes "$T_TMP/run.json")" \
    "$(json_num peak_bytes "$T_OUT")"
  t_true 'accounting exact' grep -q '"accounting": "exact"' "$T_TMP/run.json"
  t_true 'all surrogates' grep -q '"surrogate_nodes": 575' "$T_TMP/run.json"
fi

t_finish
