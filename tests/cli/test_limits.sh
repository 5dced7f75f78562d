#!/bin/sh
# test_limits.sh -- the promises of docs/cli.md's "Guarantees" about time and
# signals (a timing test, not a benchmark): the exact ILP of a 2,000-node
# graph under --time-limit 5 returns within 5.5 s or is refused at once
# with its estimated size; the windowed ILP and auto hold the limit on the
# same graph; a graph name GLPK would refuse never reaches it; a model
# that cannot fit in the memory the process may use
# (ulimit -v) is refused at once with its estimated size; SIGTERM and
# SIGINT during a solve are answered within 1 s with the best plan so
# far, a legal one, and during pareto with the points found so far.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

T=$T_TMP

# Every solve runs under `timeout`: one that overran by far fails, not hangs.

# now: seconds since the epoch, with fractions.
now() { date +%s.%N; }
# within SECONDS START: the time since START is at most SECONDS.
within() { awk -v s="$1" -v a="$2" -v b="$(now)" 'BEGIN { exit !(b - a <= s) }'; }

"$FUSEPLAN" gen --family transformer --size 2000 --seed 1 -o "$T/big.json" ||
  t_fail 'gen failed'
"$FUSEPLAN" gen --family random --size 60 --seed 3 -o "$T/r60.json" ||
  t_fail 'gen failed'

# ---- time limits on a 2,000-node graph -------------------------------------
t_case 'exact ILP of 2000 nodes, --time-limit 5: on time or refused at once'
start=$(now)
t_run timeout -s KILL 30 "$FUSEPLAN" solve "$T/big.json" --method ilp \
  --window exact --time-limit 5 -q -o "$T/exact.json"
if [ "$T_RC" = 0 ]; then
  t_true 'returned within 5.5 s' within 5.5 "$start"
else
  t_exit 2 && t_err_has 'too large to stop on time: about' &&
    t_err_has 'nonzeros'
  t_true 'refused within 1 s' within 1 "$start"
fi

for m in ilp auto; do
  t_case "$m on 2000 nodes, --time-limit 5: on time"
  start=$(now)
  t_run timeout -s KILL 30 "$FUSEPLAN" solve "$T/big.json" --method $m \
    --time-limit 5 -q -o "$T/$m.json"
  t_exit 0 && t_true 'returned within 5.5 s' within 5.5 "$start"
done

# ---- memory: refused up front under ulimit -v -----------------------------
# Not under a sanitizer, which reserves terabytes of address space.
if ! "$FUSEPLAN" --version 2>/dev/null | grep -q sanitize &&
  ! nm "$FUSEPLAN" 2>/dev/null | grep -q __asan_init; then
  t_case 'exact ILP of 2000 nodes under ulimit -v 2 GB: refused at once'
  start=$(now)
  t_run sh -c "ulimit -v 2000000 && exec timeout -s KILL 30 \"\$0\" \"\$@\"" \
    "$FUSEPLAN" solve \
    "$T/big.json" --method ilp --window exact --time-limit 60 -q
  t_exit 4 && t_err_has 'the exact model is too large: about' &&
    t_err_has 'GiB' && t_err_has 'more than the memory available'
  t_true 'refused within 1 s' within 1 "$start"
fi

# ---- signals: answered within 1 s with the best plan so far ---------------
# signal_run SIG SECONDS CMD...: runs CMD in the background (stdout and
# stderr into $T_OUT and $T_ERR), sends SIG after SECONDS, and waits for
# it; $T_RC is its exit code and $start the time of the signal.  A
# command that ignores the signal is killed after 10 s (and fails).
signal_run() {
  sig=$1
  sleep_s=$2
  shift 2
  "$@" >"$T_OUT" 2>"$T_ERR" &
  pid=$!
  sleep "$sleep_s"
  start=$(now)
  kill -s "$sig" "$pid"
  (sleep 10 && kill -s KILL "$pid" 2>/dev/null) &
  guard=$!
  T_RC=0
  wait "$pid" || T_RC=$?
  kill "$guard" 2>/dev/null
  T_CMD="$* (SIG$sig)"
}

# signal_case SIG METHOD [OPTIONS]: starts a long solve, sends SIG after
# 1.5 s, and checks that it ends within 1 s of it with exit 0 and a plan
# that `eval` accepts.
signal_case() {
  sig=$1
  m=$2
  shift 2
  t_case "SIG$sig during solve --method $m $*"
  rm -f "$T/sig.json"
  signal_run "$sig" 1.5 "$FUSEPLAN" solve "$T/r60.json" --method "$m" "$@" \
    --time-limit 120 -q -o "$T/sig.json"
  t_true 'answered within 1 s' within 1 "$start"
  t_exit 0 && t_run "$FUSEPLAN" eval "$T/r60.json" "$T/sig.json" &&
    t_exit 0
}
signal_case TERM ilp --window exact
signal_case INT ilp --window exact
signal_case TERM auto
signal_case INT auto

# pareto: a sweep of 8 points on a 300-node graph under --time-limit 60
# ends within 2 s of the signal (1 s, with room for a loaded machine),
# exit 0, with the points found so far: 8 rows, each plan within its
# peak limit, and the front file written.  (It used to end only at the
# end of the sweep, or, untrapped, with no front at all.)
"$FUSEPLAN" gen --family random --size 300 --seed 1 -o "$T/r300.json" ||
  t_fail 'gen failed'
for sig in INT TERM; do
  t_case "SIG$sig during pareto"
  rm -f "$T/front.json"
  signal_run "$sig" 2 "$FUSEPLAN" pareto "$T/r300.json" --points 8 \
    --time-limit 60 -o "$T/front.json"
  t_true 'answered within 2 s' within 2 "$start"
  t_exit 0 || continue
  # the table's point rows: limit, traffic, peak, ...
  t_eq 'points in the table' \
    "$(awk '$1 ~ /^[0-9]+$/ { n++ } END { print n + 0 }' "$T_OUT")" 8
  t_eq 'points over their limit' \
    "$(awk '$1 ~ /^[0-9]+$/ && $3 > $1 { n++ } END { print n + 0 }' "$T_OUT")" 0
  t_eq 'points in the front file' \
    "$(grep -c '"peak_limit"' "$T/front.json" 2>/dev/null)" 8
done

# ---- names GLPK would refuse (issue 15, item 3) ---------------------------
# A graph name of 300 bytes with a tab and an escape character: GLPK
# aborts on a name over 255 bytes or with control characters, so nothing
# of the input may reach its names unsanitized.
long=$(printf '%0300d' 0)
sed 's/"format"/"name": "'"$long"'\\t\\u001b[31m", "format"/' \
  "$top_srcdir/tests/data/small.json" >"$T/odd.json"
for m in greedy greedy-peak greedy-lowmem eager exhaustive ilp auto; do
  t_case "solve --method $m on a graph with a long name, tab and escape"
  t_run timeout -s KILL 60 "$FUSEPLAN" solve "$T/odd.json" --method $m -q \
    -o "$T/odd_plan.json"
  t_exit 0
done
t_case 'pareto on a graph with a long name, tab and escape'
t_run timeout -s KILL 60 "$FUSEPLAN" pareto "$T/odd.json" --points 2 \
  --time-limit 5 -o "$T/odd_front.json"
t_exit 0

t_finish
