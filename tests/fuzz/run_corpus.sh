#!/bin/sh
# run_corpus.sh -- the fuzz target as a regression test: replays the seed
# corpus (tests/fuzz/corpus), the bad-input corpus (tests/data/bad) and the
# CLI test data (tests/data) through tests/fuzz/fuzz_graph_load, the
# target linked with a plain main() (standalone_main.c).  A broken
# invariant aborts the program, and in a --enable-sanitizers build ASan /
# UBSan stop it on any memory or undefined-behaviour error.
#
# Environment: top_srcdir, top_builddir (set by `make check`).

: "${top_srcdir:=.}"
: "${top_builddir:=.}"
target=$top_builddir/tests/fuzz/fuzz_graph_load

if [ ! -x "$target" ]; then
  echo "FAIL: $target is not built" >&2
  exit 1
fi
for d in "$top_srcdir/tests/fuzz/corpus" "$top_srcdir/tests/data/bad"; do
  if [ ! -d "$d" ]; then
    echo "FAIL: $d is missing" >&2
    exit 1
  fi
done

# The corpus must hold seeds, or the run proves nothing.
n=0
for f in "$top_srcdir"/tests/fuzz/corpus/*; do
  [ -f "$f" ] && n=$((n + 1))
done
if [ "$n" -lt 20 ]; then
  echo "FAIL: tests/fuzz/corpus holds $n seeds (expected at least 20)" >&2
  exit 1
fi

# tests/data holds tests/data/bad.  -v logs each input before it runs, so
# the last one logged is the one that failed.
log=$(mktemp "${TMPDIR:-/tmp}/run_corpus.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
trap 'exit 1' HUP INT TERM
for d in "$top_srcdir/tests/fuzz/corpus" "$top_srcdir/tests/data"; do
  if ! "$target" -v "$d" 2>"$log"; then
    echo "FAIL: fuzz_graph_load failed on $d" >&2
    grep '^running ' "$log" | tail -n 1 | sed 's/^running/  last input:/' >&2
    grep -v '^running ' "$log" >&2
    exit 1
  fi
  grep -v '^running ' "$log" >&2
done
echo "run_corpus.sh: seed and bad-input corpora replayed cleanly"
exit 0
