#!/usr/bin/env bash
# bench/corpus.sh -- the "Real graphs" section of BENCHMARKS.md: every
# method on the real-graph corpus (data/graphs, exported from PyTorch
# Inductor by tools/export_inductor.py) next to Inductor's own plan, one
# row per graph, and Inductor's own peak estimate for its plan against
# fuseplan's evaluator (with the graph's in-place pairs left out, as
# Inductor's timeline leaves them out).
#
# Usage: bench/corpus.sh [--update] [FUSEPLAN]   (from the build directory)
# Environment: FP_CORPUS_DIR   the corpus (default: data/graphs of the source tree)
#              FP_CORPUS_AUTO_S seconds for `solve --method auto` per graph
#                              (default 10; 0 leaves auto out)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init corpus "$@"
dir=${FP_CORPUS_DIR:-$srcdir/data/graphs}
auto_s=${FP_CORPUS_AUTO_S:-10}
tmp=$bench_tmp

# num KEY FILE: the first integer value of "KEY": in FILE
num() { grep -o "\"$1\": *[0-9]*" "$2" | head -n 1 | sed 's/.*: *//'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.3f", a / b }'; }
gib() { awk -v a="$1" 'BEGIN { printf "%.2f", a / 1073741824 }'; }
# cell EVAL_JSON: traffic x / peak x against the eager figures et, ep
cell() { echo "$(ratio "$(num traffic_bytes "$1")" "$et") / $(ratio "$(num peak_bytes "$1")" "$ep")"; }

# row GRAPH: one table row; Inductor's cells stay empty without its plan.
row() {
  local g=$1 base plan m c cells="" est="| | | |"
  base=$(basename "$g")
  base=${base%.gz}
  base=${base%.json}
  plan=$dir/$base.inductor.plan.json.gz
  [ -e "$plan" ] || plan=""
  "$fp" info --json "$g" >"$tmp/info.json"
  et=$(num traffic_bytes "$tmp/info.json")
  ep=$(num peak_bytes "$tmp/info.json")
  if [ -n "$plan" ]; then
    "$fp" eval --json "$g" "$plan" >"$tmp/ind.json"
    cells="| $(cell "$tmp/ind.json") "
    gzip -dc -f "$g" >"$tmp/graph.json"
    # Inductor's timeline has no in-place kernels: its adjusted estimate is
    # fuseplan's peak with the graph's in-place pairs left out
    # (docs/exporter.md; the exporter writes them compact).
    sed 's/,"inplace":\[\(\[[^]]*\],\{0,1\}\)*\]//g' "$tmp/graph.json" >"$tmp/nopairs.json"
    "$fp" eval --json "$tmp/nopairs.json" "$plan" >"$tmp/ind0.json"
    local adj fp0 fpp
    adj=$(num inductor_peak_adjusted_bytes "$tmp/graph.json")
    fp0=$(num peak_bytes "$tmp/ind0.json")
    fpp=$(num peak_bytes "$tmp/ind.json")
    est="| $([ "$adj" = "$fp0" ] && echo yes || echo "no: $((fp0 - adj)) B") | $(ratio "$fpp" "$fp0") | $(ratio "$fpp" "$(num inductor_peak_bytes "$tmp/graph.json")") |"
  else
    cells="| "
  fi
  for m in $methods; do
    local extra=()
    [ "$m" = auto ] && extra=(--time-limit "$auto_s")
    if "$fp" solve "$g" --method "$m" "${extra[@]}" -q -o "$tmp/$m.json" 2>"$tmp/err"; then
      "$fp" eval --json "$g" "$tmp/$m.json" >"$tmp/$m.eval.json"
      c=$(cell "$tmp/$m.eval.json")
      [ "$m" = auto ] && c="$c ($(grep -o '"status": *"[a-z-]*"' "$tmp/$m.json" | sed 's/.*: *"//; s/"$//'))"
    else
      c="failed: $(head -n 1 "$tmp/err")"
    fi
    cells="$cells| $c "
  done
  echo "| $base | $(num nodes "$tmp/info.json") | $(gib "$et") / $(gib "$ep") $cells$est"
}

methods="greedy greedy-lowmem greedy-peak"
[ "$auto_s" != 0 ] && methods="$methods auto"

body() {
  local hdr="| graph | nodes | eager traffic / peak GiB | Inductor | greedy | greedy-lowmem | greedy-peak"
  local sep="|---|---:|---:|---|---|---|---"
  [ "$auto_s" != 0 ] && hdr="$hdr | auto ${auto_s} s (status)" && sep="$sep|---"
  echo "$hdr | Inductor's peak estimate = fuseplan's without in-place pairs (adjusted) | with / without in-place pairs | fuseplan / Inductor estimate |"
  echo "$sep|---|---:|---:|"
  for g in "$dir"/*.json.gz "$dir"/*.json; do
    [ -e "$g" ] || continue
    case $g in *.plan.json*) continue ;; esac
    row "$g"
  done | tee "$tmp/rows"
  echo
  echo "Adjusted: Inductor's estimate (torch/_inductor/memory.py) without the modelling differences of docs/exporter.md; it has no in-place kernels, so it is compared with fuseplan's peak of Inductor's plan with the graph's in-place pairs left out. The last two columns are fuseplan's peak with the pairs. Where the estimate is below fuseplan's peak without pairs (\"no: N B\"), code generation split a scheduler group at the peak: Inductor's timeline steps are its scheduler groups, the plan is the emitted kernels (data/graphs/README.md)."
  bench_headline "Inductor's own peak estimate (adjusted) equals fuseplan's evaluator" \
    "$(grep -c '| yes | [0-9.]* | [0-9.]* |$' "$tmp/rows" || true) of $(grep -c '| [0-9.]* | [0-9.]* |$' "$tmp/rows" || true) real graphs"
}
bench_main "FP_CORPUS_AUTO_S=$auto_s make bench-corpus" body
