#!/usr/bin/env bash
# bench/run.sh -- runs the benchmarks and rewrites BENCHMARKS.md.
# Usage (from a build directory): make bench
set -euo pipefail
builddir=$(pwd)
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
out="$srcdir/BENCHMARKS.md"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  echo "# fuseplan benchmarks"
  echo
  echo "Regenerate with \`make bench\` (runs \`bench/run.sh\` from the build"
  echo "directory; it rewrites this file).  Machine: $(nproc) cores,"
  echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
  echo "$(uname -sr); built with \`$(grep -m1 '^CFLAGS =' "$builddir/Makefile" | cut -d= -f2 | sed 's/^ //')\`."
  echo "Date: $(date -u +%Y-%m-%d)."
  echo
  echo "## Load + evaluate (issue: core)"
  echo
  echo "Generated graphs (\`fuseplan gen\`), written as JSON, then loaded from"
  echo "the file (read, parse with cJSON, validate, build indexes) and the eager"
  echo "plan evaluated (legality check, traffic, peak).  Best of 3 runs (2 at"
  echo "1M nodes), one process, one core.  The per-node columns compare sizes:"
  echo "flat ns/node means linear time."
  echo
  "$builddir/bench/bench_eval" "${FP_BENCH_MAX:-1000000}"
  echo
  echo "## Heuristics side by side (issue: heuristics)"
  echo
  echo "Generated graphs (seed 1), every method on the same graph in one"
  echo "run.  Cells: traffic / peak as ratios to the eager plan (every node"
  echo "alone, listed order), kernels, and seconds for the method (fusion +"
  echo "final memory-aware reorder + verification).  greedy-peak plans under"
  echo "the default limit, the eager peak (ratio <= 1.000 by construction)."
  echo
  "$builddir/bench/bench_methods" "${FP_BENCH_METHODS_MAX:-100000}"
  echo
  echo "## The ILP against the heuristics (issue: solver)"
  echo
  echo "Generated graphs (seed 1), default ILP settings (objective traffic,"
  echo "peak limit = eager peak, exact model up to 40 nodes, else a window of"
  echo "+-4 steps around the warm start), at each wall-clock limit.  First"
  echo "incumbent: when the warm start (best heuristic meeting the limit) is"
  echo "in hand.  Gap: against the best valid lower bound (the MIP bound when"
  echo "the model is exact, and the decomposed cluster bound of docs/solver.md,"
  echo "\"Bounds\", which also enters the model as cluster cuts).  Saved: traffic"
  echo "the ILP's plan saves, relative to the heuristic's plan at the same peak"
  echo "limit."
  echo
  "$builddir/bench/bench_ilp" ${FP_BENCH_ILP:-}
  echo
  echo "Exactness on small graphs (\`bench/exactness.sh\`, \`FP_EXACT_S\` seconds"
  echo "per solve, default 10):"
  echo
  bash "$srcdir/bench/exactness.sh" "$builddir/fuseplan"
  echo
  echo "What the structural bounds cost (\`bench/bounds.sh\`: \`fuseplan info\`,"
  echo "best of 3, on generated graphs of seed 1):"
  echo
  bash "$srcdir/bench/bounds.sh" "$builddir/fuseplan"
  echo
  echo "## Real graphs (issue: corpus)"
  echo
  echo "The corpus in data/graphs: PyTorch Inductor's pre-fusion scheduler"
  echo "graphs of real models (one training step, forward and backward; see"
  echo "data/graphs/README.md and docs/exporter.md), Inductor's own plan for"
  echo "each, and fuseplan's methods on the same graph (auto: wall-clock limit"
  echo "\`FP_CORPUS_AUTO_S\`, default 10 s per graph).  Ratios are to the eager"
  echo "plan (every node alone, listed order).  \`bench/corpus.sh\` prints this."
  echo
  bash "$srcdir/bench/corpus.sh" "$builddir/fuseplan"
  echo
  echo "## greedy as a replica of Inductor (issue: certification, item 7)"
  echo
  echo "Every graph of data/graphs against Inductor's own plan beside it:"
  echo "whether greedy (default settings, \`--order inductor\`) forms the"
  echo "same groups, how many of Inductor's groups it does not form, whether"
  echo "the order is the same too, the first difference, and whether"
  echo "\`--order inductor\` applied to Inductor's own groups gives Inductor's"
  echo "order.  Causes of every difference: docs/heuristics.md, \"How faithful"
  echo "greedy is\".  Command: \`bench/bench_replica data/graphs/*.json.gz\`"
  echo "(plans excluded)."
  echo
  # shellcheck disable=SC2046
  "$builddir/bench/bench_replica" $(ls "$srcdir"/data/graphs/*.json.gz | grep -v '\.plan\.json\.gz$')
  echo
  echo "### The graphs exported beyond the corpus"
  echo
  echo "The graphs of data/exported (data/exported/README.md), same command."
  echo
  # shellcheck disable=SC2046
  "$builddir/bench/bench_replica" $(ls "$srcdir"/data/exported/*.json.gz | grep -v '\.plan\.json\.gz$')
  echo
  echo "## Never beaten, always proven: auto against Inductor's own plans (issue: certification)"
  echo
  echo "\`bench/dominance.sh\` prints this (\`FP_DOM_S\` seconds per solve, default 10)."
  echo
  bash "$srcdir/bench/dominance.sh" "$builddir/fuseplan"
  echo
  echo "### Graphs beyond the corpus (data/exported)"
  echo
  echo "The same tables on the graphs of data/exported (data/exported/README.md):"
  echo "\`FP_CORPUS_DIR=data/exported bash bench/dominance.sh\`."
  echo
  FP_CORPUS_DIR="$srcdir/data/exported" bash "$srcdir/bench/dominance.sh" "$builddir/fuseplan"
  echo
  echo "## Pareto fronts with proofs on trade-off graphs (issue: certification)"
  echo
  echo "\`bench/pareto.sh\` prints this (\`FP_PARETO_S\` seconds per front, default 120)."
  echo
  bash "$srcdir/bench/pareto.sh" "$builddir/fuseplan"
  echo
  echo "## Gold plans at corpus scale: fuseplan batch (issue: batch)"
  echo
  echo "\`bench/batch.sh\` prints this (\`FP_BATCH_GOLD\`: an already built"
  echo "starter dataset; \`FP_BATCH_CUTS\`: cuts per graph for the timings)."
  echo
  bash "$srcdir/bench/batch.sh" "$builddir/fuseplan"
  echo
  echo "## The loop: fuseplan's plans compiled by Inductor (issue: inductor)"
  echo
  echo "\`python -m fuseplan_inductor run\` (docs/inductor.md) on corpus models:"
  echo "export one training step, \`fuseplan solve\` (auto, peak limit = eager),"
  echo "compile with the plans, and measure eager, Inductor's plan (as its code"
  echo "generation emits it) and fuseplan's plan on this CPU.  Peaks: predicted by"
  echo "\`fuseplan eval\` (the larger graph), measured with torch.profiler over the"
  echo "step.  Step time: median after a warm-up.  Needs FUSEPLAN_PYTHON (dev.sh test"
  echo "makes one); \`bench/inductor-loop.sh\` prints this."
  echo
  bash "$srcdir/bench/inductor-loop.sh" "$builddir/fuseplan"
  echo
  echo "## Gold plans across processes and machines (issue: cluster)"
  echo
  echo "\`bench/cluster.sh\` prints this (\`FP_CLUSTER_CUTS\`: cuts per graph)."
  echo
  bash "$srcdir/bench/cluster.sh" "$builddir/fuseplan"
  echo
  echo "### A lost worker rank under mpirun --enable-recovery"
  echo
  echo "\`bench/mpi-lost.sh\` prints this (\`FP_LOST_RUNS\`: runs)."
  echo
  bash "$srcdir/bench/mpi-lost.sh" "$builddir/fuseplan"
  echo
  echo "## auto: large-neighbourhood search against the heuristics (issue: auto)"
  echo
  echo "\`--method auto\` (default settings, one job, peak limit = the eager"
  echo "peak) against every heuristic on the same graphs, in one run.  Cells:"
  echo "traffic x / peak x are ratios to the eager plan.  Gap: against auto's"
  echo "own lower bound (docs/solver.md, \"Bounds\"), valid for every plan."
  echo "Saves: traffic auto's plan saves against the best heuristic plan"
  echo "whose peak is within the eager peak (auto's starting point).  Windows:"
  echo "window ILPs solved.  The two limits ran side by side, one per core."
  echo
  long=$(mktemp)
  # shellcheck disable=SC2086
  "$builddir/bench/bench_auto" "${FP_BENCH_AUTO_LONG_S:-300}" \
    ${FP_BENCH_AUTO_LONG:-transformer:1000 transformer:10000} >"$long" &
  # shellcheck disable=SC2086
  "$builddir/bench/bench_auto" "${FP_BENCH_AUTO_S:-60}" \
    ${FP_BENCH_AUTO:-transformer:1000 convnet:1000 random:1000 mlp:1000 \
      transformer:3000 convnet:3000 random:3000 mlp:3000 transformer:10000 \
      convnet:10000 random:10000 mlp:10000} $(for g in volo_d1_224.bwd volo_d1_224.fwd resnet50.bwd \
      deit_small_patch16_224.bwd convnext_tiny.bwd gpt2.bwd; do
      ls "$srcdir/data/graphs/$g.json.gz" 2>/dev/null; done)
  wait
  echo
  cat "$long"
  rm -f "$long"
} >"$tmp"
cp "$tmp" "$out"
echo "wrote $out"
