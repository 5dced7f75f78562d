#!/usr/bin/env bash
# bench/run.sh -- runs every section of BENCHMARKS.md (bench/NAME.sh, in
# the order of the table below) and writes the file atomically: a title,
# the headline table (the sections' `<!-- headline: ... -->` lines), then
# the sections.  Each section's wall time goes to stderr.
#
# Usage (from a build directory):
#   make bench                      every section (bash bench/run.sh)
#   make bench-NAME                 one section, updated in place
#   bench/run.sh --list             the section table: name|title|purpose
#   bench/run.sh --headline FILE    the headline section made from FILE
# Environment: FP_BENCH_SECTIONS  names to run (default: all); the file
#              written holds only those
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}

# The sections, in file order (what a user asks first, first): name (the
# script is bench/NAME.sh) | title | one-line purpose.  A line starting
# with # is left out.
sections() {
  cat <<'EOF'
dominance|Dominance against Inductor|fuseplan's default answer (auto, peak limit = eager peak) against Inductor's own plan on data/graphs and data/exported; gaps to the lower bounds; the exporter's oracle per graph (groups legal under the exported rules, asked of Inductor: samples / connected / refused).
proof|Time to proof|`fuseplan solve GRAPH --time-limit 60` (auto, --gap 0, --gap2 1e-3) on every real graph: wall seconds until it stops, why, each lexicographic level's gap (1: traffic; 2: peak among plans of that traffic).
pareto|Pareto fronts with proofs|`fuseplan pareto --start INDUCTOR_PLAN` on the graphs where Inductor trades peak for traffic; ratios to eager.
whole-step|Whole training steps|fuseplan's default answer against Inductor's plan on every whole-step graph of data/whole-step (forward + backward with an AdamW step, an SGD step or none; the sizes of pytorch/pytorch #190777 and #190804, Llama-3 8B and 405B, Llama-2 13B): traffic / peak, bounds, gaps, seconds.
corpus|Real graphs|Inductor's pre-fusion graphs of real models (data/graphs): traffic x / peak x of each plan against the eager plan, and Inductor's own peak estimate against fuseplan's.
replica|greedy as a replica of Inductor|Whether greedy (`--order inductor`) forms Inductor's groups and order on every graph of data/graphs and data/exported.
batch|Gold plans: fuseplan batch|The starter gold dataset (data/gold/manifest): each method against gold, throughput with 1 and 2 jobs, overhead against `fuseplan solve`.
auto|auto against the heuristics|`--method auto` (peak limit = eager peak, one job) against every heuristic on generated and real graphs; gap to auto's own bound.
exactness|Exactness on small graphs|Generated graphs of 36 and 50 nodes, peak limit = eager peak; cells: status / lexicographic levels proven / gap / seconds.
ilp|The ILP against the heuristics|`--method ilp` (peak limit = eager peak) on generated graphs (seed 1): model size, first incumbent, status, gap, traffic saved against the heuristics.
methods|Heuristics side by side|Every heuristic on generated graphs (seed 1); cells: traffic x / peak x (ratios to eager) / kernels / seconds.
eval|Load + evaluate|Generated graphs written as JSON, loaded (parse, validate, index) and the eager plan evaluated; best of 3, one core; flat ns/node means linear time.
bounds|What the structural bounds cost|`fuseplan info` (eager plan, traffic bound, peak bound with every rule) on generated graphs of seed 1, best of 3.
cluster|Gold plans across processes|`fuseplan batch` serial, with --jobs 2 and under mpirun, and a model of 100k items on 64 x 32 cores.
mpi-lost|A lost worker rank|`mpirun --enable-recovery -np 3 fuseplan batch` with a worker killed (SIGKILL) 3 s in: when rank 0 records the lost item.
inductor-loop|The loop: plans compiled by Inductor|`python -m fuseplan_inductor run` on corpus models: export, solve, compile with the plans, measure eager, Inductor's and fuseplan's plans on this CPU.
fidelity|Fidelity: predicted against measured peaks|Per compiled graph and method (eager, Inductor's plan, fuseplan's plan): fuseplan's predicted peak against the peak measured on this CPU, the plan-to-plan difference measured and predicted, step time ratios; per model `nice python -m fuseplan_inductor run MODEL --threads 1 --replan 0 --json` (llama-...: `--whole-step`), both plans compiled as the model counts (one C++ function per kernel, a freed buffer reused only by the next kernel; a row marked "backend functions" or "inductor reuse" was measured with the C++ backend's own functions or Inductor's own reuse, one marked "no workspaces" exported without the extern workspaces, docs/inductor.md).
EOF
}
list() { sections | grep -v '^#'; }

# headline FILE: the headline section, one row per headline line of the
# sections of FILE, in their order.
headline() {
  echo "<!-- section: headline -->"
  echo "| Result | Value | Section |"
  echo "|---|---|---|"
  awk 'FNR == NR { split($0, f, "|"); title[f[1]] = f[2]; next }
    /^<!-- section: / { sec = $3 }
    /^<!-- headline: / {
      s = $0; sub(/^<!-- headline: /, "", s); sub(/ -->$/, "", s)
      a = tolower(title[sec]); gsub(/[^a-z0-9 -]/, "", a); gsub(/ /, "-", a)
      printf "| %s | [%s](#%s) |\n", s, title[sec], a
    }' <(list) "$1"
  echo "<!-- end: headline -->"
}

case ${1:-} in
--list)
  list
  exit 0
  ;;
--headline)
  headline "$2"
  exit 0
  ;;
esac

builddir=$(pwd)
out=$srcdir/BENCHMARKS.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
want=${FP_BENCH_SECTIONS:-$(list | cut -d'|' -f1)}
failed=""
: >"$tmp/sections.md"
for name in $want; do
  list | cut -d'|' -f1 | grep -qx "$name" || {
    echo "bench/run.sh: no section '$name' (bench/run.sh --list)" >&2
    exit 2
  }
  t0=$(date +%s)
  if bash "$srcdir/bench/$name.sh" "$builddir/fuseplan" >"$tmp/$name.md"; then
    cat "$tmp/$name.md" >>"$tmp/sections.md"
  else
    failed="$failed $name"
  fi
  echo "bench/run.sh: $name took $(($(date +%s) - t0)) s" >&2
done
{
  echo "# fuseplan benchmarks"
  echo
  echo "Written by \`make bench\` (bench/run.sh); \`make bench-NAME\` reruns one section in place; each names its command, commit, date and machine."
  echo
  headline "$tmp/sections.md"
  cat "$tmp/sections.md"
} >"$tmp/out.md"
mv "$tmp/out.md" "$out.tmp.$$"
chmod 644 "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "wrote $out" >&2
if [ -n "$failed" ]; then
  echo "bench/run.sh: failed:$failed (left out)" >&2
  exit 1
fi
