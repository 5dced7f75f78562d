#!/bin/sh
# test_cluster.sh -- a batch split across processes and machines gives
# the dataset of a single run: 1 process, --jobs 2 and 3 shards
# (--shard K/N) merged with `batch merge` give the same index rows
# and the same plan files for proven items (timing columns aside); every shard
# holds only its own items; merge refuses an id whose records differ, but
# not for their timing (time_s);
# a bad --shard exits 2 (usage) before any work.  (mpirun: test_mpi.sh.)

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

T=$T_TMP
top=$(cd "$top_srcdir" && pwd)
REAL=$top/data/graphs/gpt2.fwd.json.gz

# rows DIR: DIR's index rows without the timing column.
rows() { sed 's/"time_s": [^,}]*[,]* *//' "$1/index.jsonl"; }

# plan FILE: a plan file's text without the solver's time.
plan() { gzip -dc "$1" | sed 's/"time_s": [^,}]*//'; }

# same_plans A B: whether A and B hold the same plans (timing aside).
same_plans() {
  [ "$(ls "$1/plans")" = "$(ls "$2/plans")" ] || return 1
  for p in "$1"/plans/*; do
    [ "$(plan "$p")" = "$(plan "$2/plans/${p##*/}")" ] || return 1
  done
}

"$FUSEPLAN" cut "$REAL" --nodes 4..7 --count 5 --seed 2 -o "$T/cuts" -q
cp "$top/tests/data/small.json" "$T/cuts/"
set -- "$T/cuts" --compare greedy --time-limit 30 -q

t_case "serial"
t_run "$FUSEPLAN" batch "$@" -o "$T/serial"
t_exit 0
n=$(wc -l <"$T/serial/index.jsonl" | tr -d ' ')
t_eq "items" "$n" 6
t_eq "all proven" "$(grep -c '"gold": true' "$T/serial/index.jsonl")" 6

t_case "--jobs 2 equals serial"
t_run "$FUSEPLAN" batch "$@" -o "$T/jobs2" --jobs 2
t_exit 0
t_true "index rows differ" test "$(rows "$T/serial")" = "$(rows "$T/jobs2")"
t_true "plan files differ" same_plans "$T/serial" "$T/jobs2"

t_case "3 shards, merged, equal serial"
for k in 1 2 3; do
  t_run "$FUSEPLAN" batch "$@" -o "$T/shard$k" --shard "$k/3"
  t_exit 0
done
total=0
for k in 1 2 3; do
  total=$((total + $(ls "$T/shard$k/items" | wc -l)))
done
t_eq "each item in exactly one shard" "$total" 6
t_eq "shards are disjoint" \
  "$(ls "$T/shard1/items" "$T/shard2/items" "$T/shard3/items" | grep json | sort -u | wc -l | tr -d ' ')" 6
t_run "$FUSEPLAN" batch "$@" -o "$T/shard2b" --shard 2/3
t_true "a shard is the same on a rerun elsewhere" \
  test "$(ls "$T/shard2/items")" = "$(ls "$T/shard2b/items")"
t_run "$FUSEPLAN" batch merge "$T/shard1" "$T/shard2" "$T/shard3" -o "$T/merged"
t_exit 0 && t_err_has "6 items from 3 directories"
t_true "index rows differ" test "$(rows "$T/serial")" = "$(rows "$T/merged")"
t_true "plan files differ" same_plans "$T/serial" "$T/merged"
for f in pairs.csv.gz nodes.csv.gz; do
  gzip -dc "$T/serial/$f" >"$T/s.csv"
  gzip -dc "$T/merged/$f" >"$T/m.csv"
  t_true "$f differs" cmp -s "$T/s.csv" "$T/m.csv"
done
cp "$T/merged/index.jsonl" "$T/merged_before"
t_run "$FUSEPLAN" batch merge "$T/shard1" "$T/shard2" -o "$T/merged" -q
t_exit 0
t_true "merging again changes nothing" cmp -s "$T/merged_before" "$T/merged/index.jsonl"
ls -li --time-style=full-iso "$T/merged/items" >"$T/items_before"
t_run "$FUSEPLAN" batch "$@" -o "$T/merged"
t_exit 0
ls -li --time-style=full-iso "$T/merged/items" >"$T/items_after"
t_true "a batch on the merged dir recomputed items" \
  cmp -s "$T/items_before" "$T/items_after"

t_case "merge takes records that differ only in their timing (time_s)"
cp -r "$T/shard1" "$T/timed"
victim=$(ls "$T/timed/items" | head -n 1)
sed 's/"time_s": [^,}]*/"time_s": 12345/' "$T/timed/items/$victim" >"$T/v" &&
  mv "$T/v" "$T/timed/items/$victim"
t_run "$FUSEPLAN" batch merge "$T/shard2" "$T/shard1" "$T/timed" -o "$T/timedm" -q
t_exit 0
t_eq "items" "$(ls "$T/timedm/items" | wc -l | tr -d ' ')" \
  "$(cat "$T/shard1/index.jsonl" "$T/shard2/index.jsonl" | wc -l | tr -d ' ')"

t_case "merge refuses an id whose records differ"
cp -r "$T/shard1" "$T/copy"
victim=$(ls "$T/copy/items" | head -n 1)
sed 's/"glpk_version": "[^"]*"/"glpk_version": "0.1"/' "$T/copy/items/$victim" >"$T/v" &&
  mv "$T/v" "$T/copy/items/$victim"
t_run "$FUSEPLAN" batch merge "$T/shard2" "$T/shard1" "$T/copy" -o "$T/clash"
t_exit 3 && t_err_one_line && t_err_has "${victim%.json}" &&
  t_err_has "$T/shard1" && t_err_has "$T/copy"
t_eq "nothing written" "$(ls "$T/clash/items" | wc -l | tr -d ' ')" 0
cp -r "$T/shard1" "$T/twin"
t_run "$FUSEPLAN" batch merge "$T/shard1" "$T/twin" -o "$T/twins" -q
t_exit 0
t_true "identical copies merge" cmp -s "$T/shard1/index.jsonl" "$T/twins/index.jsonl"
t_run "$FUSEPLAN" batch merge "$T/no-such" -o "$T/nothing" -q
t_exit 3 && t_err_one_line

for bad in 0/3 4/3 3 a/b 1/0 -1/2; do
  t_case "bad --shard $bad"
  t_run "$FUSEPLAN" batch "$@" -o "$T/none" --shard "$bad"
  t_exit 2 && t_err_one_line && t_err_has "--shard"
  t_false "work was started" test -e "$T/none"
done

t_finish
