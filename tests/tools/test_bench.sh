#!/bin/sh
# test_bench.sh -- the machinery that writes BENCHMARKS.md (bench/run.sh,
# bench/lib.sh), without running a benchmark: the section table against
# the scripts and the make targets, the in-place splice of one section,
# the headline table, one cheap section end to end (replica), and
# BENCHMARKS.md itself (under 400 lines, every section with its command).
# Needs bash (the bench scripts are bash); never writes to top_srcdir.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init
command -v bash >/dev/null 2>&1 || {
  echo "SKIP: no bash"
  exit 77
}
S=$top_srcdir/bench

t_case "every section of the table has its script and its make target"
names=$(bash "$S/run.sh" --list | cut -d'|' -f1)
t_true "bench/run.sh --list is empty" test -n "$names"
for n in $names; do
  t_true "no bench/$n.sh" test -f "$S/$n.sh"
done
# BENCH_SECTIONS in Makefile.am, continuation lines joined.
targets=$(sed -n '/^BENCH_SECTIONS =/,/[^\\]$/p' "$top_srcdir/Makefile.am" |
  tr -d '\134' | sed 's/^BENCH_SECTIONS =//' | tr -s ' \t' '\n' | grep . | sort)
want=$(for n in $names; do echo "bench-$n"; done | sort)
t_eq "Makefile.am's BENCH_SECTIONS" "$targets" "$want"

t_case "bench_splice replaces a section and inserts a new one in table order"
f=$T_TMP/B.md
printf '%s\n' '# t' '' '<!-- section: headline -->' 'h' '<!-- end: headline -->' \
  '<!-- section: replica -->' 'old replica' '<!-- end: replica -->' \
  '<!-- section: bounds -->' 'bounds' '<!-- end: bounds -->' >"$f"
printf '%s\n' '<!-- section: eval -->' 'eval' '<!-- end: eval -->' >"$T_TMP/c.md"
printf '%s\n' '<!-- section: replica -->' 'new replica' 'line 2' '<!-- end: replica -->' >"$T_TMP/e.md"
# shellcheck disable=SC2016 # expanded by the inner bash
t_run bash -c '. "$1/lib.sh"; srcdir=$2; bench_splice "$3" eval "$4" && bench_splice "$3" replica "$5"' \
  x "$S" "$top_srcdir" "$f" "$T_TMP/c.md" "$T_TMP/e.md"
t_eq "bench_splice's exit ($(cat "$T_ERR"))" "$T_RC" 0
printf '%s\n' '# t' '' '<!-- section: headline -->' 'h' '<!-- end: headline -->' \
  '<!-- section: replica -->' 'new replica' 'line 2' '<!-- end: replica -->' \
  '<!-- section: eval -->' 'eval' '<!-- end: eval -->' \
  '<!-- section: bounds -->' 'bounds' '<!-- end: bounds -->' >"$T_TMP/want.md"
t_true "spliced file differs: $(diff "$T_TMP/want.md" "$f" | head -n 5)" cmp -s "$f" "$T_TMP/want.md"

t_case "the headline table gathers the sections' headline lines in order"
printf '%s\n' '<!-- section: replica -->' '<!-- headline: B | 2 -->' '<!-- end: replica -->' \
  '<!-- section: eval -->' '<!-- headline: A | 1 -->' '<!-- end: eval -->' >"$T_TMP/h.md"
t_run bash "$S/run.sh" --headline "$T_TMP/h.md"
t_eq "first row" "$(sed -n 4p "$T_OUT")" \
  '| B | 2 | [greedy as a replica of Inductor](#greedy-as-a-replica-of-inductor) |'
t_eq "second row" "$(sed -n 5p "$T_OUT")" '| A | 1 | [Load + evaluate](#load--evaluate) |'
t_eq "last line" "$(tail -n 1 "$T_OUT")" '<!-- end: headline -->'

t_case "a section script prints its whole section (replica)"
if [ -x "$top_builddir/bench/bench_replica" ]; then
  t_run bash "$S/replica.sh" "$FUSEPLAN"
  t_eq "bench/replica.sh's exit ($(head -n 3 "$T_ERR"))" "$T_RC" 0
  t_eq "first line" "$(head -n 1 "$T_OUT")" '<!-- section: replica -->'
  t_eq "last line" "$(tail -n 1 "$T_OUT")" '<!-- end: replica -->'
  t_true "no title" grep -q '^## greedy as a replica of Inductor$' "$T_OUT"
  # shellcheck disable=SC2016 # backquotes of markdown
  t_true "no command line" grep -q '^Whether greedy.* Command (in the build directory): `make bench-replica`; commit ' "$T_OUT"
  t_true "no headline line" grep -q '^<!-- headline: .* | [0-9]* of [0-9]* real graphs' "$T_OUT"
fi

t_case "BENCHMARKS.md: under 400 lines, every section with its command"
B=$top_srcdir/BENCHMARKS.md
t_true "$(wc -l <"$B") lines" test "$(wc -l <"$B")" -lt 400
awk '/^<!-- section: / { s = $3; c = 0; n++ } / Command \(in the build directory\): `/ { c = 1 }
  /^<!-- end: / { if (s != "headline" && !c) print s; e++ }
  END { if (n != e || n < 2) print "markers: " n " starts, " e " ends" }' "$B" >"$T_TMP/bad"
t_eq "sections without a command, or unbalanced markers" "$(cat "$T_TMP/bad")" ""

t_finish
