#!/bin/sh
# test_values.sh -- the *values* of the enumerated options and the exit
# codes say the same everywhere: in the binary, in --help, in the man page
# and in the README/docs tables.  (test_docs.sh and test_man.sh compare
# option names only.)
#
# What is compared, each source against the binary:
#   solve --method, pareto --method, solve --order, solve --objective and
#   batch --objective: the set of values and the default;
#   solve --order: the default of each heuristic method;
#   batch --method: the default;
#   the exit codes.
# The binary's sets are the lists its "unknown value" messages print
# (made from the planner table and the X-macro tables that parse them);
# the defaults are what a run without the option does (the method the plan
# records; the plan that equals the run with --order O / --objective O).
#
# The forms read:
#   --help     "--method M  NAME (default): ..." entries, one per line;
#              "a | b (default) | c" lists; "default V for M, W for N and
#              O"; "(default V)"; "Exit codes: 0 ..., 1 ..." lists.
#   man page   in ".Ss fuseplan CMD", the ".It Fl \-OPT" item: ".Cm NAME :"
#              entries (--method of solve) or a list of ".Cm" lines joined
#              by "or" (a leading ".Cm a , b :" line names the methods the
#              option applies to); "(the default" after a value marks it;
#              "The default is .Cm V for .Cm M ..."; ".It N" in EXIT
#              STATUS.
#   tables     README.md or docs/*.md (either counts; every one found is
#              checked): the row "| `--OPT ...` | ... |" of the section
#              "## `fuseplan CMD" (any level); its values are the first run of
#              `value`s joined by ", " and " or " that has an " or "; a
#              value followed by "(the default)" is the default.  A table
#              whose first column is headed order or objective lists every
#              value; one headed method lists only accepted methods; one
#              headed code under an "Exit codes" heading lists the codes.
# A mismatch fails with one line naming the file, the option, and what is
# missing or extra.  The comparison is also run on altered copies of the
# man page and README and must report the changes: a test of the test.

# The sets are word lists, split on purpose; backticks in single quotes
# are Markdown's; tr's ',|' is a set of characters.
# shellcheck disable=SC2016,SC2020,SC2086

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

MAN1=$top_srcdir/man/fuseplan.1

# ---------------------------------------------------------------- helpers

# set_of: the words of standard input (separated by blanks, commas, "|"
# and the word "or"), sorted and unique, one line.
set_of() {
  tr ',|' '  ' | tr -s ' \t\n' '\n' | grep -v -x -e '' -e 'or' |
    LC_ALL=C sort -u | tr '\n' ' ' | sed 's/ $//'
  echo
}

# compare WHAT WHERE GOT WANT: GOT (a set_of line) equals WANT, or one
# failure line names WHERE and the values missing and extra.
compare() {
  t_checks=$((t_checks + 1))
  [ "$3" = "$4" ] && return 0
  printf '%s\n' $4 | LC_ALL=C sort >"$T_TMP/want"
  printf '%s\n' $3 | LC_ALL=C sort >"$T_TMP/got"
  miss=$(LC_ALL=C comm -23 "$T_TMP/want" "$T_TMP/got" | tr '\n' ' ')
  extra=$(LC_ALL=C comm -13 "$T_TMP/want" "$T_TMP/got" | tr '\n' ' ')
  t_fail "$2: $1: missing {${miss% }}, extra {${extra% }} (the binary: {$4})"
}

# rel FILE: FILE relative to the source tree, for messages.
rel() {
  printf '%s\n' "${1#"$top_srcdir"/}"
}

# ----------------------------------------------------------- the binary

# bin_values CMD OPT: the values of CMD's --OPT, from the message for an
# unknown one ("... (a, b, c)" or "--OPT: a, b or c").
bin_values() {
  "$FUSEPLAN" "$1" no-such.json --"$2" no-such-value >/dev/null 2>"$T_TMP/e"
  head -n 1 "$T_TMP/e" | sed -e 's/.*(\([^()]*\))$/\1/' -e 's/.*: //' | set_of
}

# canon FILE: FILE's plan without the time it took.
canon() {
  sed 's/"time_s": [^,}]*//' "$1"
}

# solve_json OUT ARGS...: `fuseplan solve` with ARGS, the plan in OUT.
solve_json() {
  out=$1
  shift
  "$FUSEPLAN" solve "$@" --json -q >"$out" 2>/dev/null
}

# ------------------------------------------------------------ --help

# help_block CMD OPT: the lines of OPT's entry in `fuseplan CMD --help`,
# up to the next option.
help_block() {
  "$FUSEPLAN" $1 --help | awk -v o="  --$2 " '
    on && /^  -/ { exit }
    index($0, o) == 1 { on = 1 }
    on { print }'
}

# help_entries CMD: the method entries of CMD's --method ("NAME:" or
# "NAME (default):" at the description column); prints NAME lines, the
# default as "NAME*".
help_entries() {
  help_block "$1" method | sed 's/--method M/          /' | awk '
    match($0, /^                   [a-z][a-z-]*( \(default\))?:/) {
      s = substr($0, 20, RLENGTH - 20)
      sub(/ \(default\)$/, "*", s)
      print s
    }'
}

# help_list CMD OPT: the "a | b (default) | c" list of OPT's entry (after
# a leading "who:" label, before the first ";"), the default as "b*".
help_list() {
  help_block "$1" "$2" | sed "s/^  --$2 [A-Z]*//" | tr '\n' ' ' |
    sed -e 's/([^()]*)//g' -e 's/;.*//' -e 's/^ *[a-z/-]*: //' |
    sed 's/ (default)/*/g; s/  */ /g'
  # "(default)" was removed with the parentheses above; put it back:
  help_block "$1" "$2" | tr '\n' ' ' |
    grep -o '[a-z-]* (default)' | sed 's/ (default)/*/' | sed 's/^/@/'
}

# split_default: reads "a b* c" (words, any separators) and "@b*" lines;
# prints the set on line 1 and the default(s) on line 2.
split_default() {
  tr ',|' '  ' | tr -s ' \t\n' '\n' | grep -v -x -e '' -e or >"$T_TMP/w"
  grep -v '^@' "$T_TMP/w" | sed 's/\*$//' | set_of
  { grep '^@' "$T_TMP/w" | sed 's/^@//'; grep -v '^@' "$T_TMP/w"; } |
    sed -n 's/\*$//p' | set_of
}

# pairs: reads text "V for M, N and O; W for P" where the V and M are the
# words (any separators) and prints "M=V" per method, sorted, one line.
pairs() {
  tr -s ' \t\n,.;:()' '\n' | grep -v -x -e '' -e and | awk '
    { w[++n] = $0 }
    END {
      for (i = 1; i <= n; i++)
        if (w[i + 1] == "for") { v = w[i]; i++ }
        else if (v != "") print w[i] "=" v
    }' | LC_ALL=C sort -u | tr '\n' ' ' | sed 's/ $//'
}

# --------------------------------------------------------- the man page

# man_item CMD OPT [FILE]: the lines of the ".It Fl \-OPT" item of the
# ".Ss fuseplan CMD" subsection.
man_item() {
  awk -v cmd="$1" -v o=".It Fl \\\\-$2 " '
    /^\.S[hs] / { sec = ($0 == ".Ss fuseplan " cmd || index($0, ".Ss fuseplan " cmd " ") == 1); on = 0; next }
    sec && /^\.(It|El)/ { on = (index($0, o) == 1) ; next }
    on { print }' "${3:-$MAN1}"
}

# man_entries: reads an item; prints its ".Cm NAME :" entries and the
# ".Cm NAME" followed by "(the default" (as "NAME*").
man_entries() {
  awk '
    prev != "" && /^\(the default/ { print prev "*"; prev = ""; next }
    prev != "" { prev = "" }
    /^\.Cm [a-z][a-z-]* :$/ { print $2; next }
    /^\.Cm [a-z][a-z-]*$/ { prev = $2 }'
}

# man_list: reads an item; prints the first list of ".Cm" lines joined by
# "or" lines (a ".Cm ... :" label line before it skipped), a value
# followed by a "(the default" line as "NAME*".
man_list() {
  awk '
    function flush() { if (last != "") print last; last = "" }
    done { next }
    /^\.Cm .* :$/ && !on { next }
    /^\.Cm / {
      on = 1; flush()
      n = split($0, f, " ")
      for (i = 2; i <= n; i++) if (f[i] ~ /^[a-z]/) { flush(); last = f[i] }
      if ($NF == ".") { flush(); done = 1 }
      next
    }
    on && /^\(the default/ { print last "*"; last = ""; next }
    on && $0 == "or" { next }
    on { flush(); done = 1 }
    END { flush() }'
}

# man_cm_text: reads item lines; prints them with macros dropped (".Cm a ,"
# -> "a ,"), for pairs and "(default X)".
man_cm_text() {
  sed -e 's/^\.[A-Z][a-z] //' -e 's/\\-/-/g'
}

# --------------------------------------------------- README and docs

DOC_FILES="$top_srcdir/README.md $(ls "$top_srcdir"/docs/*.md)"

# doc_cell CMD OPT FILE: the second cell of the row of `--OPT` in the
# "## `fuseplan CMD" section (any heading level) of FILE (nothing when there is none).
doc_cell() {
  awk -v cmd="$1" -v o="| \`--$2 " '
    /^```/ { fence = !fence }
    !fence && /^#/ {
      h = "`fuseplan " cmd
      t = $0
      sub(/^#+ /, "", t) # any heading level
      on = index(t, h) == 1 && substr(t, length(h) + 1, 1) ~ /[ `]/
      next
    }
    on && index($0, o) == 1 {
      n = split($0, c, "|"); print c[3]
    }' "$3"
}

# doc_list: reads a cell; prints the first run of `values` joined by ", ",
# " or " or ", or " that has an " or ", the default as "NAME*".
doc_list() {
  awk '{
    n = split($0, p, "`")
    for (k = 2; k <= n; k += 2) {
      v = p[k]; s = p[k + 1]
      if (v !~ /^[a-z][a-z-]*$/) { run = ""; hasor = 0; continue }
      d = sub(/^ \(the default\)/, "", s)
      run = run " " v (d ? "*" : "")
      if (s == " or " || s == ", or ") hasor = 1
      else if (s != ", ") {
        if (hasor) { print run; exit }
        run = ""; hasor = 0
      }
    }
  }'
}

# doc_value_tables HEAD: per file, "FILE: values" of the tables whose
# first column is headed HEAD (for "code", only under an "Exit codes"
# heading).
doc_value_tables() {
  for f in $DOC_FILES; do
    awk -v h="$1" '
      /^```/ { fence = !fence }
      !fence && /^#/ { exitsec = ($0 ~ /Exit codes/); on = 0; next }
      /^\|/ {
        split($0, c, "|"); v = c[2]; gsub(/^ +| +$/, "", v)
        if (!on && v == h && (h != "code" || exitsec)) { on = 1; getline; next }
        if (on) { gsub(/`/, "", v); print v }
        next
      }
      { on = 0 }' "$f" | set_of >"$T_TMP/table"
    [ -n "$(cat "$T_TMP/table")" ] && printf '%s: %s\n' "$(rel "$f")" "$(cat "$T_TMP/table")"
  done
}

# check_docs CMD OPT WANT WANT_DEFAULT [FILES]: the rows of CMD's --OPT in
# FILES (default README.md and docs/*.md) against the binary; at least one
# file must have it.
check_docs() {
  found=0
  for f in ${5:-$DOC_FILES}; do
    cell=$(doc_cell "$1" "$2" "$f")
    [ -n "$cell" ] || continue
    found=1
    printf '%s\n' "$cell" | doc_list | split_default >"$T_TMP/dl"
    compare "$1 --$2 values" "$(rel "$f")" "$(sed -n 1p "$T_TMP/dl")" "$3"
    compare "$1 --$2 default" "$(rel "$f")" "$(sed -n 2p "$T_TMP/dl")" "$4"
  done
  t_true "no row '| \`--$2' in a '## \`fuseplan $1' section of README.md or docs/*.md" \
    test "$found" = 1
}

# check_tables HEAD WHAT WANT: the tables headed HEAD (at least one) list
# exactly WANT.
check_tables() {
  doc_value_tables "$1" >"$T_TMP/vt"
  t_true "no table headed '$1' in README.md or docs/*.md" test -s "$T_TMP/vt"
  while IFS=: read -r f vals; do
    compare "$2" "$f" "$(printf '%s\n' "$vals" | set_of)" "$3"
  done <"$T_TMP/vt"
}

# -------------------------------------------------------------- methods

t_case 'solve --method'
methods=$(bin_values solve method)
t_true "no method list in 'fuseplan solve --method no-such-value'" test -n "$methods"
"$FUSEPLAN" gen --family random --size 60 --seed 1 -o "$T_TMP/g60.json"
"$FUSEPLAN" gen --family random --size 10 --seed 1 -o "$T_TMP/g10.json"
solve_json "$T_TMP/def.json" "$T_TMP/g10.json" --time-limit 5
default_method=$(sed -n 's/.*"solver": {"method": "\([a-z-]*\)".*/\1/p' "$T_TMP/def.json")
help_entries solve | split_default >"$T_TMP/h"
compare 'solve --method values' 'fuseplan solve --help' "$(sed -n 1p "$T_TMP/h")" "$methods"
compare 'solve --method default' 'fuseplan solve --help' "$(sed -n 2p "$T_TMP/h")" "$default_method"
"$FUSEPLAN" --help | awk '/^  solve/ { on = 1 } on && /^  [a-z]/ && !/^  solve/ { exit } on' |
  tr '\n' ' ' | sed -e 's/.*M: //' -e 's/ (default)/*/' | split_default >"$T_TMP/h"
compare 'solve --method values' 'fuseplan --help' "$(sed -n 1p "$T_TMP/h")" "$methods"
compare 'solve --method default' 'fuseplan --help' "$(sed -n 2p "$T_TMP/h")" "$default_method"
man_item solve method | man_entries | split_default >"$T_TMP/m"
compare 'solve --method values' "$(rel "$MAN1")" "$(sed -n 1p "$T_TMP/m")" "$methods"
compare 'solve --method default' "$(rel "$MAN1")" "$(sed -n 2p "$T_TMP/m")" "$default_method"
check_docs solve method "$methods" "$default_method"
doc_value_tables method | while IFS=: read -r f vals; do
  for v in $vals; do
    printf '%s\n' $methods | grep -qx -- "$v" ||
      echo "$f: the method table lists '$v', which 'fuseplan solve --method' does not accept"
  done
done >"$T_TMP/extra"
t_checks=$((t_checks + 1))
while read -r line; do t_fail "$line"; done <"$T_TMP/extra"

t_case 'pareto --method'
pmethods=$(bin_values pareto method)
t_true "no method list in 'fuseplan pareto --method no-such-value'" test -n "$pmethods"
help_entries pareto | split_default >"$T_TMP/h"
compare 'pareto --method values' 'fuseplan pareto --help' "$(sed -n 1p "$T_TMP/h")" "$pmethods"
compare 'pareto --method default' 'fuseplan pareto --help' "$(sed -n 2p "$T_TMP/h")" "$default_method"
"$FUSEPLAN" pareto --help | tr '\n' ' ' | sed -n 's/.*\[--method \([^]]*\)\].*/\1/p' | set_of >"$T_TMP/h"
compare 'pareto --method values' 'fuseplan pareto --help (usage)' "$(cat "$T_TMP/h")" "$pmethods"
man_item pareto method | man_list | split_default >"$T_TMP/m"
compare 'pareto --method values' "$(rel "$MAN1")" "$(sed -n 1p "$T_TMP/m")" "$pmethods"
compare 'pareto --method default' "$(rel "$MAN1")" "$(sed -n 2p "$T_TMP/m")" "$default_method"
check_docs pareto method "$pmethods" "$default_method"

t_case 'batch --method default'
help_block batch method | tr '\n' ' ' | sed -n 's/.*(default \([a-z-]*\)).*/\1/p' >"$T_TMP/h"
compare 'batch --method default' 'fuseplan batch --help' "$(cat "$T_TMP/h")" "$default_method"
man_item batch method | man_cm_text | tr '\n' ' ' | sed -n 's/.*(default \([a-z-]*\) ).*/\1/p' >"$T_TMP/m"
compare 'batch --method default' "$(rel "$MAN1")" "$(cat "$T_TMP/m")" "$default_method"
for f in $DOC_FILES; do
  cell=$(doc_cell batch method "$f")
  [ -n "$cell" ] || continue
  compare 'batch --method default' "$(rel "$f")" \
    "$(printf '%s\n' "$cell" | sed -n 's/.*(default `\([a-z-]*\)`).*/\1/p')" "$default_method"
done

# --------------------------------------------------------------- orders

t_case 'solve --order'
orders=$(bin_values solve order)
t_true "no order list in 'fuseplan solve --order no-such-value'" test -n "$orders"
# The default of each method that takes --order: the orders whose plan
# equals the plan made without --order (on this graph greedy, greedy-lowmem
# and eager have one default each).
truth=''
for m in $methods; do
  solve_json "$T_TMP/o.json" "$T_TMP/g60.json" --method "$m" --order listed || continue
  solve_json "$T_TMP/d.json" "$T_TMP/g60.json" --method "$m"
  for o in $orders; do
    solve_json "$T_TMP/o.json" "$T_TMP/g60.json" --method "$m" --order "$o"
    [ "$(canon "$T_TMP/o.json")" = "$(canon "$T_TMP/d.json")" ] && truth="$truth $m=$o"
  done
done
takers=$(printf '%s\n' $truth | sed 's/=.*//' | set_of)
t_true 'no method takes --order' test -n "$takers"

# check_order_defaults WHERE PAIRS: the stated default of each method is
# one whose plan is the default plan, for exactly the methods that take
# --order.
check_order_defaults() {
  compare 'solve --order: methods with a default' "$1" \
    "$(printf '%s\n' $2 | sed 's/=.*//' | set_of)" "$takers"
  for p in $2; do
    t_checks=$((t_checks + 1))
    printf '%s\n' $truth | grep -qx -- "$p" ||
      t_fail "$1: solve --order: the default for ${p%=*} is not ${p#*=} (the default plan equals: $(printf '%s\n' $truth | sed -n "s/^${p%=*}=//p" | tr '\n' ' '))"
  done
}

help_list solve order | split_default >"$T_TMP/h"
compare 'solve --order values' 'fuseplan solve --help' "$(sed -n 1p "$T_TMP/h")" "$orders"
check_order_defaults 'fuseplan solve --help' \
  "$(help_block solve order | tr '\n' ' ' | sed -n 's/.*; *default //p' | pairs)"
man_item solve order | man_list | split_default >"$T_TMP/m"
compare 'solve --order values' "$(rel "$MAN1")" "$(sed -n 1p "$T_TMP/m")" "$orders"
check_order_defaults "$(rel "$MAN1")" \
  "$(man_item solve order | man_cm_text | tr '\n' ' ' | sed -n 's/.*The default is //p' | pairs)"
check_docs solve order "$orders" ''
for f in $DOC_FILES; do
  cell=$(doc_cell solve order "$f")
  [ -n "$cell" ] || continue
  check_order_defaults "$(rel "$f")" \
    "$(printf '%s\n' "$cell" | sed -n 's/.*The default is //p' | tr -d '`' | pairs)"
done
check_tables order 'the order table' "$orders"

# ----------------------------------------------------------- objectives

t_case 'solve --objective'
objectives=$(bin_values solve objective)
t_true "no objective list in 'fuseplan solve --objective no-such-value'" test -n "$objectives"
solve_json "$T_TMP/d.json" "$T_TMP/g10.json" --method exhaustive
default_objective=''
for o in $objectives; do
  solve_json "$T_TMP/o.json" "$T_TMP/g10.json" --method exhaustive --objective "$o"
  [ "$(canon "$T_TMP/o.json")" = "$(canon "$T_TMP/d.json")" ] &&
    default_objective="$default_objective $o"
done
default_objective=$(printf '%s\n' $default_objective | set_of)
t_eq 'how many objectives give the default plan' "$(set -- $default_objective && echo $#)" 1
for c in solve batch; do
  help_list $c objective | split_default >"$T_TMP/h"
  compare "$c --objective values" "fuseplan $c --help" "$(sed -n 1p "$T_TMP/h")" "$objectives"
  compare "$c --objective default" "fuseplan $c --help" "$(sed -n 2p "$T_TMP/h")" "$default_objective"
  man_item $c objective | man_list | split_default >"$T_TMP/m"
  compare "$c --objective values" "$(rel "$MAN1")" "$(sed -n 1p "$T_TMP/m")" "$objectives"
  compare "$c --objective default" "$(rel "$MAN1")" "$(sed -n 2p "$T_TMP/m")" "$default_objective"
  check_docs $c objective "$objectives" "$default_objective"
done
check_tables objective 'the objective table' "$objectives"

# ----------------------------------------------------------- exit codes

t_case 'exit codes'
# help_codes CMD: the codes of the "Exit codes: 0 ..., 1 ...; ..." text.
help_codes() {
  "$FUSEPLAN" $1 --help | awk '/^Exit codes:/ { on = 1; sub(/^Exit codes:/, "") } on' |
    tr '\n' ' ' | tr ',;' '\n\n' | sed -n 's/^ *\([0-9][0-9]*\) .*/\1/p' | set_of
}
codes=$(help_codes '')
t_true "no exit codes in 'fuseplan --help'" test -n "$codes"
compare 'exit codes' 'fuseplan run --help' "$(help_codes run)" "$codes"
awk '/^\.Sh EXIT STATUS/ { on = 1; next } /^\.Sh / { on = 0 } on && /^\.It [0-9]/ { print $2 }' \
  "$MAN1" | set_of >"$T_TMP/m"
compare 'exit codes' "$(rel "$MAN1")" "$(cat "$T_TMP/m")" "$codes"
check_tables code 'exit codes' "$codes"

# ------------------------------------------------------ the test itself

t_case 'the checks report a value missing from the man page and one added to a table'
sed '/^\.Ss fuseplan solve/,/^\.Ss fuseplan pareto/s/^\.Cm inductor \.$/.Cm dfs ./' "$MAN1" >"$T_TMP/altered.1"
man_item solve order "$T_TMP/altered.1" | man_list | split_default | sed -n 1p >"$T_TMP/altered.values"
sed 's/^\(| `--order O` |.*\)`best` or `inductor`/\1`best`, `made-up` or `inductor`/' \
  "$top_srcdir/docs/cli.md" >"$T_TMP/cli.md"
t_false 'the table was not altered' cmp -s "$T_TMP/cli.md" "$top_srcdir/docs/cli.md"
saved=$t_failures
check_docs solve order "$orders" '' "$T_TMP/cli.md" 2>"$T_TMP/findings"
compare 'solve --order values' 'altered.1' "$(cat "$T_TMP/altered.values")" "$orders" 2>>"$T_TMP/findings"
t_failures=$saved
t_eq 'findings' "$(sed "s|$T_TMP/||" "$T_TMP/findings")" \
  "FAIL: $t_case: cli.md: solve --order values: missing {}, extra {made-up} (the binary: {$orders})
FAIL: $t_case: altered.1: solve --order values: missing {inductor}, extra {} (the binary: {$orders})"

t_finish
