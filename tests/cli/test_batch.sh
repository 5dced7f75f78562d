#!/bin/sh
# test_batch.sh -- `fuseplan batch`, `batch report` and `cut` end to end:
# the dataset and its labels agree with the plans (every gold plan
# verifies; a pair labelled fused_in_gold shares a group; on tiny cuts gold
# is exhaustive enumeration's lexicographic optimum); every item is
# isolated (an abort, a crash, memory exhausted, a bad graph: that item is
# an error, the rest completes); a kill -9 mid-batch loses only the item
# in flight and a rerun recomputes nothing finished; the lock; bad input
# exits 3 before any work.
#
# The faults come from the test hook FUSEPLAN_TEST_FAULT=KIND:NAME
# (batch/item.c), built unless configure --disable-test-hooks.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

T=$T_TMP
top=$(cd "$top_srcdir" && pwd) # manifests name files relative to themselves
D=$top/tests/data
G=$D/small.json
REAL=$top/data/graphs/gpt2.fwd.json.gz
"$FUSEPLAN" gen --family random --size 14 -o "$T/g14.json" || exit 1

# rows DIR: the index rows of DIR, one per line.
rows() { cat "$1/index.jsonl"; }

# field KEY: the value of "KEY" in each line of stdin (strings unquoted).
field() {
  awk -v k="\"$1\": " '{
    i = index($0, k); if (!i) { print ""; next }
    s = substr($0, i + length(k))
    if (substr(s, 1, 1) == "\"") { s = substr(s, 2); sub(/".*/, "", s) }
    else sub(/[,}].*/, "", s)
    print s }'
}

# count DIR KEY VALUE: how many rows of DIR have KEY == VALUE.
count() { rows "$1" | field "$2" | grep -c -x -e "$3"; }

# Built with the hooks when an item told to abort does (exit 1).
hooks=no
FUSEPLAN_TEST_FAULT=abort:small "$FUSEPLAN" batch "$G" -o "$T/probe" -q \
  >/dev/null 2>&1 || hooks=yes
[ $hooks = yes ] || echo "note: built without test hooks: no fault cases" >&2

# ---- a small dataset and its labels ----------------------------------------

t_case "cut"
t_run "$FUSEPLAN" cut "$REAL" --nodes 4..8 --count 6 --seed 3 -o "$T/cuts"
t_exit 0 && t_eq "cuts written" "$(ls "$T/cuts" | wc -l | tr -d ' ')" 6
t_run "$FUSEPLAN" cut "$REAL" --nodes 4..8 --count 6 --seed 3 -o "$T/cuts2"
t_true "the same seed gives the same cuts" \
  test "$(ls "$T/cuts")" = "$(ls "$T/cuts2")"

t_case "cut: a graph's name never leads a file out of -o DIR"
# The name is the file's: '../../escaped' once wrote ./escaped@...; names
# with '/', controls or a newline made such paths or unprintable names.
mkdir -p "$T/work/a"
for name in '../../escaped' '/abs/x' 'ctl\u001b[2J\u0007/..\nnl' '..' ''; do
  esc=$(printf '%s' "$name" | sed 's/\\/\\\\/g') # JSON escapes kept by sed
  sed "s|\"name\": \"gen[^\"]*\"|\"name\": \"$esc\"|" "$T/g14.json" >"$T/work/e.json"
  rm -rf "$T/work/a/out"
  t_run_in "$T/work/a" "$FUSEPLAN" cut ../e.json --nodes 1..1 --count 1 -o out
  t_exit 0 || continue
  t_eq "files in the work tree ('$name')" \
    "$(cd "$T/work" && find . -type f | LC_ALL=C sort | tr '\n' ' ')" \
    "./a/out/$(ls "$T/work/a/out") ./e.json "
  # One file, of the safe characters, not hidden: no '..', no newline.
  t_true "a printable file name ('$name')" sh -c "test \$(ls -A '$T/work/a/out' | wc -l) -eq 1 &&
    ls -A '$T/work/a/out' | LC_ALL=C grep -q -x '[A-Za-z0-9_+@=-][A-Za-z0-9._+@=-]*'"
done
t_eq "files named escaped outside out/" \
  "$(find "$T" -name '*escaped*' ! -path "$T/work/a/out/*" | wc -l | tr -d ' ')" 0

cat >"$T/manifest" <<EOM
# tiny cuts of a real graph, and a hand-made graph under two limits
{"graph": "$REAL", "cut": {"nodes": "4..8", "count": 6, "seed": 3}}
{"graph": "$G", "peak_limit": ["eager", "90%"]}
EOM
t_case "batch of cuts with exhaustive compared"
t_run "$FUSEPLAN" batch --manifest "$T/manifest" -o "$T/ds" -q \
  --compare greedy,exhaustive,inductor --time-limit 20
t_exit 0
t_eq "items" "$(rows "$T/ds" | wc -l | tr -d ' ')" 8
t_eq "all gold" "$(count "$T/ds" gold true)" 8
for f in index.jsonl pairs.csv.gz nodes.csv.gz; do
  t_true "$f written" test -s "$T/ds/$f"
done

t_case "gold equals exhaustive enumeration's lexicographic optimum"
rows "$T/ds" | awk '{
  split("traffic_bytes peak_bytes exhaustive_traffic_bytes exhaustive_peak_bytes", k, " ")
  for (j = 1; j <= 4; j++) {
    i = index($0, "\"" k[j] "\": "); s = substr($0, i + length(k[j]) + 4)
    sub(/[,}].*/, "", s); v[j] = s
  }
  if (v[1] != v[3] || v[2] != v[4]) { print "mismatch: " $0; bad = 1 }
} END { exit bad }' >"$T/lex" 2>&1
t_true "gold differs from enumeration: $(head -c 300 "$T/lex")" test ! -s "$T/lex"

t_case "Inductor's plan, restricted to each cut, is compared"
t_eq "cuts with inductor figures" \
  "$(rows "$T/ds" | grep '"cut_count": [0-9]' | grep -c '"inductor_traffic_bytes": [0-9]')" 6

t_case "every gold plan verifies"
rows "$T/ds" | field plan >"$T/plans"
rows "$T/ds" | field graph >"$T/graphs"
i=0
while read -r plan; do
  i=$((i + 1))
  name=$(sed -n "${i}p" "$T/graphs")
  graph=$G
  [ "$name" = small ] || graph=$T/cuts/$name.json.gz
  t_run "$FUSEPLAN" verify "$graph" "$T/ds/$plan"
  t_exit 0 || break
done <"$T/plans"
t_eq "plans checked" "$i" 8

t_case "pairs labelled fused_in_gold share a group in nodes.csv.gz"
gzip -dc "$T/ds/nodes.csv.gz" >"$T/nodes.csv"
gzip -dc "$T/ds/pairs.csv.gz" >"$T/pairs.csv"
t_eq "pairs header" "$(head -n 1 "$T/pairs.csv" | cut -d, -f1-5)" "id,gold,round,u,v"
awk -F, 'NR == FNR { if (FNR > 1) grp[$1 "/" $3] = $5; next }
  FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { same = grp[$1 "/" $4] == grp[$1 "/" $5]
    if (same != $col["fused_in_gold"]) { print "bad: " $0; bad = 1 }
    n++ }
  END { if (n < 10) { print "only " n " pairs"; bad = 1 }; exit bad }' \
  "$T/nodes.csv" "$T/pairs.csv" >"$T/labels" 2>&1
t_true "labels disagree with the plans: $(head -c 300 "$T/labels")" \
  test ! -s "$T/labels"
t_true "some pair fused in gold" \
  awk -F, 'NR > 1 && $19 == 1 { f = 1 } END { exit !f }' "$T/pairs.csv"

t_case "report"
t_run "$FUSEPLAN" batch report "$T/ds" --svg "$T/r.svg"
t_exit 0 && t_out_has "all: 8 items, 8 gold" && t_out_has "greedy"
t_true "the SVG has a legend and axis labels" \
  grep -q "excess traffic over gold" "$T/r.svg"
t_run "$FUSEPLAN" batch report "$T/ds" --json
t_exit 0 && t_out_has '"method": "exhaustive", "items": 8, "equal": 8'

t_case "rerun skips every finished item"
ls -li --time-style=full-iso "$T/ds/items" >"$T/before"
t_run "$FUSEPLAN" batch --manifest "$T/manifest" -o "$T/ds" \
  --compare greedy,exhaustive,inductor --time-limit 20
t_exit 0 && t_err_has "0 run" && t_err_has "8 already done"
ls -li --time-style=full-iso "$T/ds/items" >"$T/after"
t_true "item files changed" cmp -s "$T/before" "$T/after"

# ---- isolation ---------------------------------------------------------------

if [ $hooks = yes ]; then
  cp "$G" "$T/victim.json"
  sed 's/"name": *"small"/"name": "victim"/' "$G" >"$T/victim.json"
  for kind in abort segv oom; do
    t_case "an item that dies ($kind) is recorded and the batch goes on"
    rm -rf "$T/iso"
    FUSEPLAN_TEST_FAULT=$kind:victim t_run "$FUSEPLAN" batch "$G" \
      "$T/victim.json" -o "$T/iso" -q --item-memory 1G
    t_exit 1 && t_err_has "1 failed"
    t_eq "completed" "$(count "$T/iso" status optimal)" 1
    t_eq "error" "$(count "$T/iso" status error)" 1
    rows "$T/iso" | grep '"status": "error"' >"$T/err_row"
    # (a sanitizer build reports a crash itself and exits 1)
    t_true "the error names a signal" \
      grep -q -E '"signal": [0-9]|AddressSanitizer|ABORTING' "$T/err_row"
  done
fi

t_case "a bad graph inside a valid batch is an error item"
printf '{"format": "fuseplan.graph", "version": 1, "nodes": 3}\n' >"$T/bad.json"
t_run "$FUSEPLAN" batch "$G" "$T/bad.json" -o "$T/badds" -q
t_exit 1
t_eq "completed" "$(count "$T/badds" status optimal)" 1
t_true "the loader's message is kept" grep -q 'bad.json: ' "$T/badds/index.jsonl"

t_case "a FIFO in a graph directory is skipped with a warning, not waited on"
mkdir -p "$T/withfifo"
cp "$G" "$T/withfifo/a.json"
mkfifo "$T/withfifo/b.json"
t_run timeout 60 "$FUSEPLAN" batch "$T/withfifo" -o "$T/fifods" -q
t_exit 0 && t_err_has "b.json' is not a regular file: skipped"
t_eq "items" "$(rows "$T/fifods" | wc -l | tr -d ' ')" 1

t_case "a gzip bomb over --max-input-bytes is an error item, the parent stays small"
head -c 64000000 /dev/zero | gzip -1 >"$T/bomb.json.gz"
# (the resident set is measured only without a sanitizer's shadow memory)
if [ -x /usr/bin/time ] && ! nm "$FUSEPLAN" 2>/dev/null | grep -q __asan_init; then
  t_run /usr/bin/time -f 'maxrss %M' "$FUSEPLAN" batch "$G" "$T/bomb.json.gz" \
    -o "$T/bombds" -q --max-input-bytes 32M
  rss=$(sed -n 's/^maxrss //p' "$T_ERR")
  # against the program's own footprint (its shared libraries: MPI's)
  base=$(/usr/bin/time -f 'maxrss %M' "$FUSEPLAN" --version 2>&1 >/dev/null |
    sed -n 's/^maxrss //p')
  t_true "the batch held $rss KiB, the program alone $base KiB" \
    test "${rss:-999999}" -lt $((${base:-0} + 16000))
else
  t_run "$FUSEPLAN" batch "$G" "$T/bomb.json.gz" -o "$T/bombds" -q \
    --max-input-bytes 32M
fi
t_exit 1
t_eq "completed" "$(count "$T/bombds" status optimal)" 1
t_true "the error names the file and the limit" \
  grep -q 'bomb.json.gz: larger than 33554432 bytes' "$T/bombds/index.jsonl"

t_case "a manifest's time_limit may be any number the option takes (1e308)"
printf '{"graph": "%s", "time_limit": 1e308}\n' "$G" >"$T/m_huge"
t_run "$FUSEPLAN" batch --manifest "$T/m_huge" -o "$T/huge" -q
t_exit 0
t_eq "solved" "$(count "$T/huge" status optimal)" 1

t_case "a manifest's gap2 makes an item of its own, solved to that tolerance"
printf '{"graph": "%s"}\n{"graph": "%s", "gap2": 0, "gap": 0}\n' "$G" "$G" \
  >"$T/m_gap"
t_run "$FUSEPLAN" batch --manifest "$T/m_gap" -o "$T/gapds" -q --compare ''
t_exit 0
t_eq "items" "$(rows "$T/gapds" | wc -l)" 2
t_eq "gold" "$(count "$T/gapds" gold true)" 2

# ---- the exit status is the dataset's ---------------------------------------

t_case "an infeasible item: exit 1, and 1 again on the identical rerun"
t_run "$FUSEPLAN" batch "$G" --peak-limit 1,eager -o "$T/inf" -q
t_exit 1 && t_err_has "2 rows, 1 failed or infeasible"
t_run "$FUSEPLAN" batch "$G" --peak-limit 1,eager -o "$T/inf" -q
t_exit 1 && t_err_has "0 run" && t_err_has "2 rows, 1 failed or infeasible"

# ---- resume checks every item record -----------------------------------------

sed 's/"name": *"small"/"name": "ga"/' "$G" >"$T/ga.json"
sed 's/"name": *"small"/"name": "gb"/' "$G" >"$T/gb.json"
t_run "$FUSEPLAN" batch "$T/ga.json" "$T/gb.json" -o "$T/rv" -q
t_exit 0
ida=$(rows "$T/rv" | grep '"graph": "ga"' | field id)
idb=$(rows "$T/rv" | grep '"graph": "gb"' | field id)
# rerun: the batch again; then index.jsonl has 2 compact rows, a and b.
rerun() {
  t_run "$FUSEPLAN" batch "$T/ga.json" "$T/gb.json" -o "$T/rv"
  t_exit 0
  t_eq "rows" "$(rows "$T/rv" | wc -l | tr -d ' ')" 2
  t_eq "rows of a and b" "$(rows "$T/rv" | field id | sort | tr '\n' ' ')" \
    "$(printf '%s\n%s\n' "$ida" "$idb" | sort | tr '\n' ' ')"
  t_eq "compact lines" "$(grep -c '^{"id": "[0-9a-f]*", .*}$' "$T/rv/index.jsonl")" 2
}

t_case "an item record copied over another's is recomputed"
cp "$T/rv/items/$ida.json" "$T/rv/items/$idb.json"
rerun
t_err_has "items/$idb.json: holds item $ida, not $idb: recomputed" &&
  t_err_has "1 run"

t_case "an item whose plan is gone is recomputed"
rm "$T/rv/plans/$ida.json.gz"
rerun
t_err_has "plans/$ida.json.gz" && t_err_has "recomputed" && t_err_has "1 run"
t_true "the plan is back" test -s "$T/rv/plans/$ida.json.gz"

t_case "an item whose plan is corrupt is recomputed"
printf 'garbage' | gzip >"$T/rv/plans/$ida.json.gz"
rerun
t_err_has "plans/$ida.json.gz" && t_err_has "1 run"

t_case "an item whose label rows are another's is recomputed"
cp "$T/rv/labels/$idb.nodes.csv" "$T/rv/labels/$ida.nodes.csv"
rerun
t_err_has "labels/$ida.nodes.csv: not the label rows of item $ida: recomputed"

t_case "a pretty-printed item record stays one line of the index"
sed 's/, "/,\n  "/g' "$T/rv/items/$ida.json" >"$T/pretty" &&
  mv "$T/pretty" "$T/rv/items/$ida.json"
t_true "the record spans lines" test "$(wc -l <"$T/rv/items/$ida.json")" -gt 5
rerun
t_err_has "0 run"

t_case "a garbage record of no item of the command is left out, with a warning"
junk=$(printf '%064d' 7)
echo 'not json at all' >"$T/rv/items/$junk.json"
rerun
t_err_has "items/$junk.json" && t_err_has "left out of the dataset"

t_case "the temporary files a kill -9 leaves are removed by the rerun"
for f in items/$ida.json.tmp.Ab12Cd plans/$ida.json.gz.tmp.Zz99Yy \
  index.jsonl.tmp.q1w2e3 labels/$ida.nodes.csv.tmp.000000; do
  echo partial >"$T/rv/$f"
done
echo '{}' >"$T/rv/tmp/keep.inflight"
rerun
t_eq "temporary files left" "$(find "$T/rv" -name '*.tmp.*' | wc -l | tr -d ' ')" 0
t_true "other files are kept" test -f "$T/rv/tmp/keep.inflight"

# ---- kill -9 and the lock ----------------------------------------------------

if [ $hooks = yes ]; then
  for i in 1 2 3; do
    sed "s/\"name\": *\"small\"/\"name\": \"g$i\"/" "$G" >"$T/g$i.json"
  done
  sed 's/"name": *"small"/"name": "zhang"/' "$G" >"$T/zhang.json"
  t_case "kill -9 mid-batch, then rerun"
  FUSEPLAN_TEST_FAULT=hang:zhang "$FUSEPLAN" batch "$T/g1.json" "$T/g2.json" \
    "$T/g3.json" "$T/zhang.json" -o "$T/k" -q >/dev/null 2>&1 &
  pid=$!
  n=0
  while [ "$(ls "$T/k/items" 2>/dev/null | wc -l)" -lt 3 ] && [ $n -lt 200 ]; do
    sleep 0.1
    n=$((n + 1))
  done
  t_case "a second batch on the same DIR is refused"
  t_run "$FUSEPLAN" batch "$G" -o "$T/k" -q
  t_exit 3 && t_err_has "in use by another batch" && t_err_one_line
  kill -9 $pid
  wait $pid 2>/dev/null
  t_case "kill -9 mid-batch, then rerun"
  t_eq "finished before the kill" "$(ls "$T/k/items" | wc -l | tr -d ' ')" 3
  ls -li --time-style=full-iso "$T/k/items" >"$T/k_before"
  (cd "$T/k/items" && cat ./*.json) | cksum >"$T/k_sum"
  t_run "$FUSEPLAN" batch "$T/g1.json" "$T/g2.json" "$T/g3.json" \
    "$T/zhang.json" -o "$T/k"
  t_exit 0 && t_err_has "1 run" && t_err_has "3 already done"
  ls -li --time-style=full-iso "$T/k/items" | grep -v -e total >"$T/k_after"
  t_true "a finished item was rewritten" \
    sh -c "grep -v total '$T/k_before' | while read -r l; do grep -qxF \"\$l\" '$T/k_after' || exit 1; done"
  t_eq "index rows" "$(rows "$T/k" | wc -l | tr -d ' ')" 4

  for sig in INT TERM; do
    t_case "SIG$sig stops the batch with exit 4 (the exit-code table's)"
    rm -rf "$T/sig"
    FUSEPLAN_TEST_FAULT=hang:zhang "$FUSEPLAN" batch "$T/zhang.json" \
      -o "$T/sig" -q >/dev/null 2>"$T/sig_err" &
    pid=$!
    n=0
    while [ ! -e "$T/sig/tmp/"*.log ] && [ $n -lt 200 ]; do
      sleep 0.1
      n=$((n + 1))
    done
    kill -s "$sig" $pid
    rc=0
    wait $pid || rc=$?
    t_eq "exit status" "$rc" 4
    t_true "it says how to finish" grep -q "rerun the command" "$T/sig_err"
  done
fi

# ---- bad input (exit 3) and bad options (exit 2) before any work -----------

# bad_as CODE WHAT ARGS...: the batch exits CODE with one line, nothing made.
bad_as() {
  local code=$1
  t_case "bad input: $2"
  shift 2
  rm -rf "$T/none"
  t_run "$FUSEPLAN" batch "$@" -o "$T/none"
  t_exit "$code" && t_err_one_line
  t_false "work was started" test -e "$T/none"
}
bad() { bad_as 3 "$@"; }
usage() { bad_as 2 "$@"; }
printf '{"graph": "%s"}\n{"graph": "%s", "peak": "eager"}\n' "$G" "$G" >"$T/m_key"
bad "unknown manifest key" --manifest "$T/m_key"
t_err_has "m_key:2: unknown key 'peak'"
printf '{"graph": "%s", "peak_limit": "lots"}\n' "$G" >"$T/m_lim"
bad "bad limit in the manifest" --manifest "$T/m_lim"
t_err_has "m_lim:1: peak limit 'lots'"
usage "bad limit" "$G" --peak-limit 12parsecs
t_err_has "--peak-limit: peak limit '12parsecs'"
bad "missing path" "$G" "$T/no-such.json"
t_err_has "argument 2: '$T/no-such.json': no such file"
bad "glob matching nothing" "$T/nothing-*.json"
t_err_has "no file matches"
printf '{"graph": "nothing-*.json"}\n' >"$T/m_glob"
bad "manifest glob matching nothing" --manifest "$T/m_glob"
t_err_has "m_glob:1: 'nothing-*.json': no file matches"
usage "unknown method" "$G" --method fastest
t_err_has "options: unknown method 'fastest'"
usage "unknown objective" "$G" --objective smallest
usage "unknown compared method" "$G" --compare greedy,psychic
printf '{"graph": "%s", "gap2": 1}\n' "$G" >"$T/m_gap2"
bad "gap2 out of range in the manifest" --manifest "$T/m_gap2"
t_err_has "m_gap2:1: gap2 '1'"
usage "bad gap" "$G" --gap -1
t_err_has "options: gap '-1'"
printf '{"graph": "%s", "method": "fastest"}\n' "$G" >"$T/m_meth"
bad "unknown method in the manifest" --manifest "$T/m_meth"
t_err_has "m_meth:1: unknown method 'fastest'"

t_finish
