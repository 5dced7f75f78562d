#!/bin/sh
# test_faults.sh -- output and input files that are not what they seem:
# every output option writes through one writer, which writes a device or
# a FIFO in place (never replacing it with a plain file), reports a failed
# write (a full disk: exit 4, "No space left on device"), and follows a
# symbolic link to replace the file it points to (the link stays a link).
# On the input side: every truncation of a gzip file is rejected, so is
# data after the gzip stream, and gzip members that follow one another
# load as one file.
#
# The "full disk" is a character device 1,7 (what /dev/full is) made in the
# scratch directory, so that a writer that wrongly replaced it would only
# replace a scratch file.  Without mknod (not root) /dev/full itself is
# used: then the directory /dev is not writable, and a replacement fails
# anyway.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

T=$T_TMP
G=$top_srcdir/tests/data/small.json
P=$top_srcdir/tests/data/small_plan_legal.json

# is_char PATH: PATH is (still) a character device.
is_char() { [ -c "$1" ] && [ ! -L "$1" ]; }

# Device nodes made here must work (a file system mounted nodev refuses
# to open them): a null device (1,3) that takes a write says so.
if mknod "$T/null" c 1 3 2>/dev/null && is_char "$T/null" &&
  (echo probe >"$T/null") 2>/dev/null && mknod "$T/full" c 1 7 2>/dev/null; then
  FULL=$T/full
else
  echo "note: cannot make working device nodes (not root?): using /dev/full" >&2
  rm -f "$T/null" "$T/full"
  FULL=/dev/full
fi

# out_cmd OUTPUT: runs, for the output file OUTPUT, the command line of
# case $oc (one per output option).
out_cmd() {
  case $oc in
  solve-o) t_run "$FUSEPLAN" solve "$G" --method greedy -o "$1" ;;
  gen-o) t_run "$FUSEPLAN" gen --family mlp --size 20 --seed 1 -o "$1" ;;
  pareto-o) t_run "$FUSEPLAN" pareto "$G" --method exhaustive --points 2 -o "$1" ;;
  pareto-svg) t_run "$FUSEPLAN" pareto "$G" --method exhaustive --points 2 --svg "$1" ;;
  eval-timeline) t_run "$FUSEPLAN" eval "$G" "$P" --timeline "$1" ;;
  eval-timeline-svg) t_run "$FUSEPLAN" eval "$G" "$P" --timeline "$1.svg" ;;
  run-kernel-times) t_run "$FUSEPLAN" run "$G" "$P" --kernel-times "$1" ;;
  esac
}
OUT_CASES='solve-o gen-o pareto-o pareto-svg eval-timeline eval-timeline-svg run-kernel-times'

# ---- a full device: the write fails, exit 4, the device stays ------------
for oc in $OUT_CASES; do
  t_case "$oc into a full device"
  target=$FULL
  [ "$oc" = eval-timeline-svg ] && continue # the name must end in .svg: below
  out_cmd "$target"
  t_exit 4 && t_err_has "$target: cannot write: No space left on device"
  t_true "$target is no longer a character device" is_char "$target"
done
if [ "$FULL" != /dev/full ]; then
  # A .svg name for the timeline: a second device node with that name.
  t_case 'eval --timeline into a full device named .svg'
  if mknod "$T/full2.svg" c 1 7 2>/dev/null; then
    oc=eval-timeline-svg
    out_cmd "$T/full2"
    t_exit 4 && t_err_has "full2.svg: cannot write: No space left on device"
    t_true 'full2.svg is no longer a character device' is_char "$T/full2.svg"
  fi
fi
t_case 'solve -o /dev/full'
if [ -w /dev/full ] && [ "$FULL" != /dev/full ]; then
  # Only after the scratch device passed: a broken writer would replace it.
  if is_char "$T/full"; then
    t_run "$FUSEPLAN" solve "$G" --method greedy -o /dev/full
    t_exit 4 && t_err_has '/dev/full: cannot write: No space left on device'
    t_true '/dev/full is no longer a character device' is_char /dev/full
  fi
fi

# ---- a character device that takes the data (1,3: what /dev/null is) ------
t_case 'solve -o a null device'
if [ -e "$T/null" ]; then
  t_run "$FUSEPLAN" solve "$G" --method greedy -o "$T/null"
  t_exit 0
  t_true 'null device replaced' is_char "$T/null"
  t_eq 'temporary files left' "$(t_count_tmp "$T")" 0
fi

# ---- a FIFO: written in place, read by a background cat -------------------
# fifo_done: lets the reader $reader of $T/fifo end and waits for it.  A
# writer that replaced the FIFO left cat waiting on the old one (killed);
# one that never opened it is stood in for by opening it here.
fifo_done() {
  t_i=0
  while kill -0 "$reader" 2>/dev/null && [ "$t_i" -lt 20 ]; do
    sleep 0.1
    t_i=$((t_i + 1))
  done
  if ! kill -0 "$reader" 2>/dev/null; then
    :
  elif [ -p "$T/fifo" ]; then
    timeout 5 sh -c ': >"$1"' sh "$T/fifo" 2>/dev/null
  else
    kill "$reader" 2>/dev/null
  fi
  wait "$reader" 2>/dev/null
}
for oc in $OUT_CASES; do
  t_case "$oc into a FIFO"
  rm -f "$T/fifo" "$T/fifo.got"
  mkfifo "$T/fifo"
  cat "$T/fifo" >"$T/fifo.got" &
  reader=$!
  if [ "$oc" = eval-timeline-svg ]; then
    ln -s fifo "$T/fifo.svg" # the name must end in .svg
    out_cmd "$T/fifo"
    rm -f "$T/fifo.svg"
  else
    out_cmd "$T/fifo"
  fi
  fifo_done
  t_exit 0
  t_true 'the FIFO was replaced' test -p "$T/fifo"
  t_true 'nothing came through the FIFO' test -s "$T/fifo.got"
done
# What came through a FIFO is the plan itself.
t_case 'solve -o FIFO: the plan verifies'
rm -f "$T/fifo"
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/fifo.plan.json" &
reader=$!
t_run "$FUSEPLAN" solve "$G" --method greedy-peak -o "$T/fifo"
fifo_done
t_exit 0
t_run "$FUSEPLAN" verify "$G" "$T/fifo.plan.json"
t_exit 0 && t_out_has 'legal plan'

# ---- a symbolic link: its target is replaced, the link stays ---------------
mkdir "$T/elsewhere" "$T/here"
for oc in $OUT_CASES; do
  t_case "$oc through a symlink into another directory"
  suffix=
  [ "$oc" = eval-timeline-svg ] && suffix=.svg
  rm -f "$T/elsewhere/"* "$T/here/"*
  echo old >"$T/elsewhere/target$suffix"
  ln -s ../elsewhere/target$suffix "$T/here/link$suffix"
  out_cmd "$T/here/link"
  t_exit 0
  t_true 'the link is no longer a symlink' test -L "$T/here/link$suffix"
  t_eq 'link target' "$(readlink "$T/here/link$suffix")" "../elsewhere/target$suffix"
  t_false 'the target still holds the old text' grep -qx old "$T/elsewhere/target$suffix"
  t_true 'the target was left empty' test -s "$T/elsewhere/target$suffix"
  t_eq 'entries of here/' "$(t_entries "$T/here")" "link$suffix "
  t_eq 'entries of elsewhere/' "$(t_entries "$T/elsewhere")" "target$suffix "
done
t_case 'solve -o a chain of two links, the plan verifies'
rm -f "$T/elsewhere/"* "$T/here/"*
ln -s "$T/elsewhere/plan.json" "$T/elsewhere/abs"
ln -s ../elsewhere/abs "$T/here/chain"
t_run "$FUSEPLAN" solve "$G" --method greedy -o "$T/here/chain"
t_exit 0
t_true 'the final target was not created' test -f "$T/elsewhere/plan.json"
t_true 'the first link was replaced' test -L "$T/here/chain"
t_true 'the second link was replaced' test -L "$T/elsewhere/abs"
t_run "$FUSEPLAN" verify "$G" "$T/here/chain"
t_exit 0
t_case 'solve -o a symlink loop'
ln -s loop1 "$T/here/loop2"
ln -s loop2 "$T/here/loop1"
t_run "$FUSEPLAN" solve "$G" --method greedy -o "$T/here/loop1"
t_exit 4 && t_err_has 'loop1: cannot write:'
t_true 'loop1 replaced' test -L "$T/here/loop1"
t_case 'solve -o a symlink to a full device'
ln -s "$FULL" "$T/here/tofull"
t_run "$FUSEPLAN" solve "$G" --method greedy -o "$T/here/tofull"
t_exit 4 && t_err_has 'tofull: cannot write: No space left on device'
t_true 'the link was replaced' test -L "$T/here/tofull"
t_true "$FULL is no longer a character device" is_char "$FULL"

# ---- gzip input: truncation, trailing data, members ------------------------
t_case 'every truncation of a gzip graph is rejected'
gzip -c "$G" >"$T/g.json.gz"
n=$(wc -c <"$T/g.json.gz" | tr -d ' ')
k=1
loaded=
while [ "$k" -lt "$n" ]; do
  head -c "$k" "$T/g.json.gz" >"$T/cut.json.gz"
  t_run "$FUSEPLAN" info "$T/cut.json.gz"
  [ "$T_RC" = 3 ] || loaded="$loaded $k:$T_RC"
  k=$((k + 1))
done
t_eq 'prefix lengths not rejected with exit 3' "$loaded" ''
t_case 'gzip stream followed by other data'
cp "$T/g.json.gz" "$T/tail.json.gz"
printf '\n' >>"$T/tail.json.gz"
t_run "$FUSEPLAN" info "$T/tail.json.gz"
t_exit 3 && t_err_has 'corrupt or truncated gzip data (data after the end of the stream)'
t_case 'two gzip members make one file'
head -c 200 "$G" | gzip -c >"$T/two.json.gz"
tail -c +201 "$G" | gzip -c >>"$T/two.json.gz"
t_run "$FUSEPLAN" info "$T/two.json.gz"
t_exit 0 && t_out_has 'nodes            7'
t_case 'a gzip graph on standard input'
t_run sh -c '"$1" info - <"$2"' sh "$FUSEPLAN" "$T/g.json.gz"
t_exit 0 && t_out_has 'nodes            7'

# ---- the input limit: --max-input-bytes (issue 15, item 6) ---------------
# A gzip bomb (100 MB of zeros in about 100 KB) over a 1 MiB limit stops
# as soon as its output passes the limit: exit 3 with one line naming the
# file, and, under a sanitizer-free build, within 300 MB of address space
# (it would need 100 MB to inflate, and the buffer's doubling more).
t_case '--max-input-bytes: a gzip bomb'
head -c 100000000 /dev/zero | gzip -1 >"$T/bomb.json.gz"
limit_v=
if ! nm "$FUSEPLAN" 2>/dev/null | grep -q __asan_init; then
  limit_v='ulimit -v 300000 &&'
fi
t_run sh -c "$limit_v"' exec "$0" info --max-input-bytes 1MiB "$1"' \
  "$FUSEPLAN" "$T/bomb.json.gz"
t_exit 3 && t_err_one_line && t_err_has 'bomb.json.gz: larger than 1048576 bytes'
t_run sh -c "$limit_v"' exec "$0" info "$1" --max-input-bytes=1M' \
  "$FUSEPLAN" /dev/zero
t_exit 3 && t_err_one_line && t_err_has '/dev/zero: larger than 1048576 bytes'

# The limit is exact (a file of exactly the limit loads, one byte more
# does not), holds for plans as for graphs, and every command that reads
# files takes it.
t_case '--max-input-bytes: exact, graphs and plans'
gsize=$(wc -c <"$G" | tr -d ' ')
psize=$(wc -c <"$P" | tr -d ' ')
t_run "$FUSEPLAN" info "$G" --max-input-bytes "$gsize"
t_exit 0
t_run "$FUSEPLAN" info "$G" --max-input-bytes $((gsize - 1))
t_exit 3 && t_err_one_line && t_err_has "small.json: larger than $((gsize - 1)) bytes"
if [ "$psize" -lt "$gsize" ]; then
  t_run "$FUSEPLAN" verify "$G" "$P" --max-input-bytes $((psize - 1))
  t_exit 3 && t_err_has 'small.json: larger than'
fi
big=$((gsize > psize ? gsize : psize))
for args in "info $G" "eval $G $P" "verify $G $P" "compare $G $P" \
  "solve $G --method greedy -q" "pareto $G --method exhaustive --points 2" \
  "run $G $P" "cut $G --nodes 2..3 --count 1 -o $T/cuts"; do
  t_case "--max-input-bytes with fuseplan $args"
  # shellcheck disable=SC2086 # split the words on purpose
  t_run "$FUSEPLAN" $args --max-input-bytes "$big"
  t_exit 0
  # shellcheck disable=SC2086
  t_run "$FUSEPLAN" $args --max-input-bytes 100
  t_exit 3 && t_err_one_line && t_err_has 'larger than 100 bytes'
done
t_case '--max-input-bytes: bad values'
for v in 0 -1 1.5K 1X ''; do
  t_run "$FUSEPLAN" info "$G" --max-input-bytes "$v"
  t_exit 2 && t_err_has 'max-input-bytes'
done
t_run "$FUSEPLAN" gen --size 10 --max-input-bytes 1K
t_exit 2

# Standard output on a full device: every command that prints its result
# there says so and exits 4 (the output would be lost otherwise).
S=$top_srcdir/tests/data/small.json
P=$top_srcdir/tests/data/small_plan_legal.json
for args in "info $S" "info $S --json" "eval $S $P" "eval $S $P --json" \
  "compare $S $P" "compare $S $P --json" "verify $S $P" \
  "solve $S --method greedy --json -q" "solve $S --json -q" \
  "pareto $S --points 2 --time-limit 2" "gen --family mlp --size 10 --seed 1" \
  "run $S $P" "--help" "--version"; do
  t_case "stdout full: fuseplan $args"
  # shellcheck disable=SC2086
  t_run env FULL_OUT="$FULL" sh -c '"$@" >"$FULL_OUT"' sh "$FUSEPLAN" $args
  t_exit 4 && t_err_has "standard output: No space left on device"
done

# ---- signals while an output is written (issue 15, item 9) ---------------
# temps DIR: the temporary files of atomic writes left in DIR.
temps() { find "$1" -name '*.tmp.*' | sed 's,.*/,,'; }

# Past the file-size limit (ulimit -f) the write fails like a full disk:
# exit 4, the old file untouched, no temporary file left (SIGXFSZ used
# to end the process and leave it).
t_case 'gen -o past ulimit -f'
mkdir "$T/fsize"
echo old >"$T/fsize/g.json"
t_run sh -c 'ulimit -f 64 && exec "$0" gen --size 20000 -o "$1"' \
  "$FUSEPLAN" "$T/fsize/g.json"
t_exit 4 && t_err_one_line && t_err_has 'g.json: cannot write: File too large'
t_eq 'old file kept' "$(cat "$T/fsize/g.json")" old
t_eq 'temporary files left' "$(temps "$T/fsize")" ''

# A signal that ends the process while it writes an output removes the
# temporary file.  The write of a 300,000-node graph (80 MB) is caught by
# watching for its temporary file; a run that ends before the file is
# seen is tried again.  A background job of sh starts with SIGINT
# ignored, and the suite may run under nohup (SIGHUP ignored); fuseplan
# leaves an ignored signal ignored, so `env --default-signal` gives each
# signal its default back, where env has it (else only SIGTERM runs).
for sig in TERM HUP INT; do
  t_case "SIG$sig while gen -o writes"
  dfl=
  if env --default-signal=$sig true 2>/dev/null; then
    dfl=--default-signal=$sig
  elif [ "$sig" != TERM ]; then
    continue
  fi
  rm -rf "$T/sig" && mkdir "$T/sig"
  caught=
  for try in 1 2 3; do
    env $dfl "$FUSEPLAN" gen --size 300000 -o "$T/sig/g.json" 2>"$T_ERR" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      set -- "$T"/sig/g.json.tmp.*
      if [ -e "$1" ]; then
        kill -s "$sig" "$pid" && caught=$try
        break
      fi
    done
    T_RC=0
    wait "$pid" || T_RC=$?
    [ -n "$caught" ] && break
  done
  if [ -z "$caught" ]; then
    echo "note: SIG$sig: the write ended before its temporary file was seen" >&2
    continue
  fi
  T_CMD="gen --size 300000 -o g.json (SIG$sig)"
  t_true "ended by SIG$sig (exit $T_RC)" test "$T_RC" -gt 128
  t_eq 'temporary files left' "$(temps "$T/sig")" ''
  t_true 'no half-written g.json' test ! -e "$T/sig/g.json"
done

t_finish
