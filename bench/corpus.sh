#!/usr/bin/env bash
# bench/corpus.sh -- every method on the real-graph corpus (data/graphs,
# exported from PyTorch Inductor by tools/export_inductor.py), next to
# Inductor's own plan; prints markdown tables on stdout.
#
# Usage: bench/corpus.sh [FUSEPLAN]   (default: ./fuseplan, then build/fuseplan)
# Environment: FP_CORPUS_DIR   the corpus (default: data/graphs of the source tree)
#              FP_CORPUS_AUTO_S seconds for `solve --method auto` per graph
#                              (default 10; 0 leaves auto out)
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
fp=${1:-}
if [ -z "$fp" ]; then
  for c in ./fuseplan "$srcdir/build/fuseplan"; do
    if [ -x "$c" ]; then
      fp=$c
      break
    fi
  done
fi
if [ -z "$fp" ] || [ ! -x "$fp" ]; then
  echo "bench/corpus.sh: no fuseplan binary (pass its path)" >&2
  exit 2
fi
dir=${FP_CORPUS_DIR:-$srcdir/data/graphs}
auto_s=${FP_CORPUS_AUTO_S:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# num KEY FILE: the first integer value of "KEY": in FILE
num() {
  grep -o "\"$1\": *[0-9]*" "$2" | head -n 1 | sed 's/.*: *//'
}
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.3f", a / b }'
}
gib() {
  awk -v a="$1" 'BEGIN { printf "%.2f", a / 1073741824 }'
}

methods="eager greedy greedy-lowmem greedy-peak"
[ "$auto_s" != 0 ] && methods="$methods auto"

graphs=()
for g in "$dir"/*.json.gz "$dir"/*.json; do
  [ -e "$g" ] || continue
  case $g in *.plan.json*) continue ;; esac
  graphs+=("$g")
done

echo "| graph | method | kernels | traffic (bytes) | traffic GiB | x eager | peak (bytes) | peak GiB | x eager |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
agree_rows=()
for g in "${graphs[@]}"; do
  base=$(basename "$g")
  base=${base%.gz}
  base=${base%.json}
  plan=""
  for c in "$dir/$base.inductor.plan.json.gz" "$dir/$base.inductor.plan.json"; do
    [ -e "$c" ] && plan=$c && break
  done
  "$fp" info --json "$g" >"$tmp/info.json"
  et=$(num traffic_bytes "$tmp/info.json")
  ep=$(num peak_bytes "$tmp/info.json")
  rows=()
  if [ -n "$plan" ]; then
    "$fp" eval --json "$g" "$plan" >"$tmp/eval.json"
    rows+=("inductor|$tmp/eval.json")
  fi
  for m in $methods; do
    extra=()
    [ "$m" = auto ] && extra=(--time-limit "$auto_s")
    if "$fp" solve "$g" --method "$m" "${extra[@]}" -o "$tmp/$m.json" >/dev/null 2>"$tmp/err"; then
      "$fp" eval --json "$g" "$tmp/$m.json" >"$tmp/$m.eval.json"
      label=$m
      if [ "$m" = auto ]; then
        st=$(grep -o '"status": *"[a-z-]*"' "$tmp/$m.json" | sed 's/.*: *"//; s/"$//')
        label="auto ${auto_s}s ($st)"
      fi
      rows+=("$label|$tmp/$m.eval.json")
    else
      rows+=("$m (failed: $(head -n 1 "$tmp/err"))|")
    fi
  done
  for r in "${rows[@]}"; do
    label=${r%%|*}
    f=${r#*|}
    if [ -z "$f" ]; then
      echo "| $base | $label | | | | | | | |"
      continue
    fi
    k=$(num kernels "$f")
    t=$(num traffic_bytes "$f")
    p=$(num peak_bytes "$f")
    echo "| $base | $label | $k | $t | $(gib "$t") | $(ratio "$t" "$et") | $p | $(gib "$p") | $(ratio "$p" "$ep") |"
  done
  if [ -n "$plan" ]; then
    m=$tmp/graph.json
    gzip -dc -f "$g" >"$m"
    raw=$(num inductor_peak_bytes "$m")
    adj=$(num inductor_peak_adjusted_bytes "$m")
    res=$(num resident_input_bytes "$m")
    fpp=$(num peak_bytes "$tmp/eval.json")
    same=no
    [ "$adj" = "$fpp" ] && same=yes
    agree_rows+=("| $base | $raw | $res | $adj | $fpp | $same | $(ratio "$fpp" "$raw") |")
  fi
done
echo
echo "Inductor's own peak estimate for its plan (torch/_inductor/memory.py,"
echo "estimate_peak_memory) against fuseplan's evaluator on the same plan."
echo "Adjusted: the same Inductor timeline with the modelling differences of"
echo "docs/exporter.md taken out (inputs Inductor never frees, buffers local to"
echo "a fused kernel, partial sizes of freeable inputs, mutations, concatenation)."
echo
echo "| graph | Inductor estimate | resident inputs | Inductor adjusted | fuseplan eval | equal | fuseplan / Inductor |"
echo "|---|---:|---:|---:|---:|---|---:|"
for r in "${agree_rows[@]}"; do
  echo "$r"
done
