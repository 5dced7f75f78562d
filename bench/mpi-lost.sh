#!/usr/bin/env bash
# bench/mpi-lost.sh -- how long rank 0 of `mpirun --enable-recovery -np 3
# fuseplan batch` takes to find a worker rank lost: each run kills one
# worker rank with SIGKILL 3 s into the batch (in the middle of a solve)
# and measures, from the kill, when rank 0 wrote the lost item's error
# record (its mtime: the detection) and when the run ended; prints
# markdown.  Needs a build with MPI and Open MPI's mpirun.
#
# Usage: bench/mpi-lost.sh [FUSEPLAN]   (default: build/fuseplan)
# Environment: FP_LOST_RUNS  runs (default 5)
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
fp=${1:-$srcdir/build/fuseplan}
runs=${FP_LOST_RUNS:-5}
if ! command -v mpirun >/dev/null ||
  ! grep -q '^#define HAVE_MPI 1' "$(dirname "$fp")/config.h" 2>/dev/null; then
  echo "not built with MPI (configure --with-mpi): nothing measured"
  exit 0
fi
mpirun="mpirun --oversubscribe --enable-recovery -np 3"
[ "$(id -u)" = 0 ] && mpirun="$mpirun --allow-run-as-root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Four cuts of 60-80 nodes, 6 s each: solves long enough to die in.
"$fp" cut "$srcdir/data/graphs/gpt2.fwd.json.gz" --nodes 60..80 --count 4 \
  --seed 3 -o "$tmp/cuts" -q
echo "\`$mpirun fuseplan batch\` over 4 cuts of gpt2.fwd (60-80 nodes,"
echo "--time-limit 6, --compare greedy); a worker rank killed with SIGKILL"
echo "3 s in; times from the kill ($(nproc) cores, shared with other work):"
echo
echo "| run | lost item recorded (s) | run ended (s) | items lost | index rows |"
echo "|---|---:|---:|---:|---:|"
for i in $(seq "$runs"); do
  out=$tmp/out$i
  $mpirun "$fp" batch "$tmp/cuts" --compare greedy --time-limit 6 -o "$out" \
    >"$tmp/log$i" 2>&1 &
  job=$!
  sleep 3
  # The worker ranks: mpirun's children running fuseplan, all but rank 0
  # (the oldest).
  victim=$(pgrep -P "$(pgrep -P $job -x mpirun || echo $job)" -f "batch" |
    sort -n | tail -1)
  t_kill=$(date +%s.%N)
  kill -9 "$victim"
  wait $job || true
  t_end=$(date +%s.%N)
  id=$(grep '"status": "error"' "$out/index.jsonl" | head -1 |
    sed 's/^{"id": "\([0-9a-f]*\)".*/\1/')
  t_rec=$t_kill
  [ -n "$id" ] && t_rec=$(date -r "$out/items/$id.json" +%s.%N)
  echo "| $i | $(secs "$t_kill" "$t_rec") | $(secs "$t_kill" "$t_end") |" \
    "$(grep -c 'lost while solving' "$tmp/log$i" || true) |" \
    "$(wc -l <"$out/index.jsonl" | tr -d ' ') |"
done
echo
echo "Rank 0 takes a worker for lost after 10 s without its heartbeat (one a"
echo "second while it solves): the kill lands up to a second after the last."
