#!/bin/sh
# test_mpi.sh -- `mpirun -np 3 fuseplan batch` (built with MPI; skipped
# otherwise): the same index rows (timing aside) and plans as a serial
# run, items counted per worker; a worker rank killed with SIGKILL (the
# test hook FUSEPLAN_TEST_FAULT=rankdie:NAME) stops the job, which names
# the item in flight, keeps what finished, and a rerun completes it
# without recomputing a finished item; under mpirun --enable-recovery the
# job survives it: rank 0 finds the worker lost by its silence, records
# its item as an error, the other workers finish every other item in the
# same run, and a rerun recomputes only the lost item.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

grep -q '^#define HAVE_MPI 1' "${top_builddir:-.}/config.h" 2>/dev/null || {
  echo "built without MPI (configure --with-mpi): skipped" >&2
  exit 77
}
command -v mpirun >/dev/null || exit 77

# Open MPI leaks at exit (its plugins): LeakSanitizer off for these runs
# (the same code runs without MPI under test_cluster.sh with it on).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS

T=$T_TMP
top=$(cd "$top_srcdir" && pwd)
REAL=$top/data/graphs/gpt2.fwd.json.gz
MPIRUN="mpirun --oversubscribe -np 3"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"

# rows DIR: DIR's index rows without the timing column.
rows() { sed 's/"time_s": [^,}]*[,]* *//' "$1/index.jsonl"; }
# plans DIR: every plan of DIR, without the solver's time.
plans() { for p in "$1"/plans/*; do gzip -dc "$p"; done | sed 's/"time_s": [^,}]*//'; }

"$FUSEPLAN" cut "$REAL" --nodes 4..7 --count 5 --seed 2 -o "$T/cuts" -q
set -- "$T/cuts" --compare greedy --time-limit 30

t_case "mpirun -np 3 equals serial"
t_run "$FUSEPLAN" batch "$@" -o "$T/serial" -q
t_exit 0
t_run $MPIRUN "$FUSEPLAN" batch "$@" -o "$T/mpi"
t_exit 0 && t_err_has "5 run (5 optimal" && t_err_has "items per worker: rank 1:"
t_true "index rows differ" test "$(rows "$T/serial")" = "$(rows "$T/mpi")"
t_true "plans differ" test "$(plans "$T/serial")" = "$(plans "$T/mpi")"
t_true "the workers ran every item" sh -c \
  "grep 'items per worker' '$T_ERR' | grep -o 'rank [12]: [0-9]*' | awk '{ s += \$3 } END { exit s != 5 }'"

# A victim graph, cheapest of all (handed out last), whose worker dies.
sed 's/"name": *"small"/"name": "zzvictim"/' "$top/tests/data/small.json" \
  >"$T/zzvictim.json"
cat >"$T/manifest" <<EOM
{"graph": "$T/cuts"}
{"graph": "$T/zzvictim.json", "time_limit": 0.001}
EOM
hooks=yes
FUSEPLAN_TEST_FAULT=abort:zzvictim "$FUSEPLAN" batch "$T/zzvictim.json" \
  -o "$T/probe" -q >/dev/null 2>&1 && hooks=no
if [ $hooks = yes ]; then
  t_case "a worker killed with SIGKILL: reported, rerun completes"
  FUSEPLAN_TEST_FAULT=rankdie:zzvictim t_run $MPIRUN "$FUSEPLAN" batch \
    --manifest "$T/manifest" --compare greedy --time-limit 30 -o "$T/k"
  t_false "exit 0 after a dead worker" test "$T_RC" = 0
  cp "$T_ERR" "$T/err1"
  t_eq "finished before the death" "$(ls "$T/k/items" | wc -l | tr -d ' ')" 5
  ls -li --time-style=full-iso "$T/k/items" >"$T/before"
  t_run $MPIRUN "$FUSEPLAN" batch --manifest "$T/manifest" --compare greedy \
    --time-limit 30 -o "$T/k"
  t_exit 0 && t_err_has "1 run" && t_err_has "5 already done"
  t_err_has "died with 1 items in flight"
  t_true "the lost item is named (by rank 0 as it stopped, or by the rerun)" \
    grep -q zzvictim "$T/err1" "$T_ERR"
  ls -li --time-style=full-iso "$T/k/items" >"$T/after"
  t_true "a finished item was recomputed" sh -c \
    "grep -v total '$T/before' | while read -r l; do grep -qxF \"\$l\" '$T/after' || exit 1; done"
  t_eq "index rows" "$(wc -l <"$T/k/index.jsonl" | tr -d ' ')" 6

  t_case "a worker killed under --enable-recovery: the rest finishes in the same run"
  FUSEPLAN_TEST_FAULT=rankdie:zzvictim t_run $MPIRUN --enable-recovery \
    "$FUSEPLAN" batch --manifest "$T/manifest" --compare greedy \
    --time-limit 30 -o "$T/r"
  # Open MPI 4.1's mpirun --enable-recovery exits 0 whatever its ranks
  # return: rank 0's summary says how the batch went.
  t_err_has "6 run (5 optimal, 1 failed or infeasible), 0 already done"
  t_true "the lost item and its rank are named" \
    grep -Eq "worker rank [12] lost while solving [0-9a-f]{16} \(.*zzvictim.json\): no word from it for" "$T_ERR"
  t_true "one worker is counted lost, the items counted" sh -c \
    "grep 'items per worker' '$T_ERR' | grep -o 'rank [12]: [0-9]*[ (lost)]*;' | awk '/lost/ { n++ } { s += \$3 } END { exit !(n == 1 && s == 5) }'"
  t_false "a survivor stopped" grep -q "every worker rank was lost" "$T_ERR"
  t_eq "index rows" "$(wc -l <"$T/r/index.jsonl" | tr -d ' ')" 6
  t_eq "the lost item is an error row" \
    "$(grep zzvictim "$T/r/index.jsonl" | grep -c '"status": "error"')" 1
  t_eq "every other item finished" \
    "$(grep -v zzvictim "$T/r/index.jsonl" | grep -c '"status": "optimal"')" 5
  t_eq "no note of an item in flight is left" "$(ls "$T/r/tmp" | wc -l | tr -d ' ')" 0
  ls -li --time-style=full-iso "$T/r/items" | grep -v total >"$T/before"
  victim=$(grep zzvictim "$T/r/index.jsonl" | sed 's/^{"id": "\([0-9a-f]*\)".*/\1/')
  t_run $MPIRUN --enable-recovery "$FUSEPLAN" batch --manifest "$T/manifest" \
    --compare greedy --time-limit 30 -o "$T/r"
  # The victim's 0.001 s may or may not prove its 7 nodes: either is fine.
  t_err_has "6 items: 1 run (" && t_err_has "optimal, 0 failed or infeasible), 5 already done"
  t_false "the rerun reported a dead run" grep -q "items in flight" "$T_ERR"
  t_eq "the lost item is recomputed" \
    "$(grep zzvictim "$T/r/index.jsonl" | grep -c '"status": "error"')" 0
  ls -li --time-style=full-iso "$T/r/items" >"$T/after"
  t_true "a finished item was recomputed" sh -c \
    "grep -v '$victim' '$T/before' | while read -r l; do grep -qxF \"\$l\" '$T/after' || exit 1; done"
fi

t_finish
