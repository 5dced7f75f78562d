#!/bin/sh
# run_corpus.sh -- the fuzz targets as a regression test.  Each target,
# linked with a plain main() (standalone_main.c), replays its inputs:
#   fuzz_graph_load     tests/fuzz/corpus (all of it) and tests/data
#                       (the CLI test data, with the bad-input corpus
#                       tests/data/bad);
#   fuzz_plan_load      tests/fuzz/corpus/fuzz_plan_load and tests/data;
#   fuzz_batch_records  tests/fuzz/corpus/fuzz_batch_records.
# A broken invariant aborts the program, and in a --enable-sanitizers
# build ASan / UBSan stop it on any memory or undefined-behaviour error.
#
# Environment: top_srcdir, top_builddir (set by `make check`).

: "${top_srcdir:=.}"
: "${top_builddir:=.}"
corpus=$top_srcdir/tests/fuzz/corpus

for d in "$corpus" "$top_srcdir/tests/data/bad"; do
  if [ ! -d "$d" ]; then
    echo "FAIL: $d is missing" >&2
    exit 1
  fi
done

# need_seeds DIR MIN: a corpus must hold seeds, or the run proves nothing.
need_seeds() {
  n=0
  for f in "$1"/*; do
    [ -f "$f" ] && n=$((n + 1))
  done
  if [ "$n" -lt "$2" ]; then
    echo "FAIL: $1 holds $n seeds (expected at least $2)" >&2
    exit 1
  fi
}
need_seeds "$corpus" 20
need_seeds "$corpus/fuzz_plan_load" 10
need_seeds "$corpus/fuzz_batch_records" 10

log=$(mktemp "${TMPDIR:-/tmp}/run_corpus.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
trap 'exit 1' HUP INT TERM

# replay TARGET DIR...: -v logs each input before it runs, so the last one
# logged is the one that failed.
replay() {
  target=$top_builddir/tests/fuzz/$1
  shift
  if [ ! -x "$target" ]; then
    echo "FAIL: $target is not built" >&2
    exit 1
  fi
  for d in "$@"; do
    if ! "$target" -v "$d" 2>"$log"; then
      echo "FAIL: ${target##*/} failed on $d" >&2
      grep '^running ' "$log" | tail -n 1 | sed 's/^running/  last input:/' >&2
      grep -v '^running ' "$log" >&2
      exit 1
    fi
    grep -v '^running ' "$log" >&2
  done
}
replay fuzz_graph_load "$corpus" "$top_srcdir/tests/data"
replay fuzz_plan_load "$corpus/fuzz_plan_load" "$top_srcdir/tests/data"
replay fuzz_batch_records "$corpus/fuzz_batch_records"
echo "run_corpus.sh: seed and bad-input corpora replayed cleanly"
exit 0
