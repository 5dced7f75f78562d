#!/bin/sh
# test_docs.sh -- the option tables of docs/cli.md say what `--help` says.
#
# The commands are the ones `fuseplan --help` lists.  For each command CMD,
# docs/cli.md has a section whose heading starts with "## `fuseplan CMD",
# with a table whose first column names the options.  Every `--option` in
# `fuseplan CMD --help` must be in that first column, and every `--option`
# there must be in the help text; a mismatch fails, naming the command and
# the option.  `--help` itself is common to every command and documented
# once, so it is left out on both sides.  A command that takes no options
# has a section with no table.
#
# The checker is also run on two altered copies of the README (a row
# removed, a row added) and must report each change: a test of the test.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

README=$top_srcdir/docs/cli.md

# options: the distinct --options in standard input, sorted.
options() {
  awk '{
    s = $0
    while (match(s, /--[a-z][a-z0-9-]*/)) {
      o = substr(s, RSTART, RLENGTH)
      if (o != "--help") print o
      s = substr(s, RSTART + RLENGTH)
    }
  }' | sort -u
}

# section CMD FILE: the lines of FILE's section for CMD, from its heading
# to the next heading (lines in code blocks are not headings).
section() {
  awk -v cmd="$1" '
    /^```/ { fence = !fence }
    !fence && /^#/ {
      if (on) exit
      h = "## `fuseplan " cmd
      if (index($0, h) == 1) {
        c = substr($0, length(h) + 1, 1)
        if (c == " " || c == "`") { on = 1; print; next }
      }
    }
    on { print }' "$2"
}

# readme_options CMD FILE: the --options in the first column of the
# tables in CMD's section of FILE.
readme_options() {
  section "$1" "$2" | awk -F'|' '
    /^\|/ && $2 !~ /^ *-*:?-+:? *$/ { print $2 }' | options
}

# help_options CMD: the --options in `fuseplan CMD --help`.
help_options() {
  "$FUSEPLAN" "$1" --help | options
}

# check CMD FILE: prints one line per mismatch between FILE's table for
# CMD and CMD's --help; prints nothing when they agree.
check() {
  help_options "$1" >"$T_TMP/help"
  readme_options "$1" "$2" >"$T_TMP/readme"
  comm -23 "$T_TMP/help" "$T_TMP/readme" | while read -r o; do
    echo "$1: $o is in 'fuseplan $1 --help' but not in the README's table"
  done
  comm -13 "$T_TMP/help" "$T_TMP/readme" | while read -r o; do
    echo "$1: $o is in the README's table but not in 'fuseplan $1 --help'"
  done
}

# listed NAME: NAME is one of the commands found in `fuseplan --help`.
listed() {
  printf '%s\n' "$cmds" | grep -qx "$1"
}

t_case 'fuseplan --help lists the commands'
cmds=$(t_commands)
t_true "no command found in 'fuseplan --help'" test -n "$cmds"
for c in solve pareto eval verify compare info run gen; do
  t_true "'$c' is not listed by 'fuseplan --help'" listed "$c"
done

for c in $cmds; do
  t_case "README section for '$c'"
  t_true "docs/cli.md has no section '### \`fuseplan $c'" \
    test -n "$(section "$c" "$README")" || continue
  "$FUSEPLAN" "$c" --help >"$T_OUT" 2>"$T_ERR"
  t_true "'fuseplan $c --help' failed" test $? -eq 0 || continue
  t_case "README options of '$c' = 'fuseplan $c --help'"
  check "$c" "$README" >"$T_TMP/mismatch"
  t_checks=$((t_checks + 1))
  while read -r line; do
    t_fail "$line"
  done <"$T_TMP/mismatch"
done

# Every command section of the README is a command of the binary.
t_case 'README documents no command the binary lacks'
grep '^## `fuseplan [a-z]' "$README" | sed 's/^## `fuseplan \([a-z-]*\).*/\1/' |
  while read -r c; do
    listed "$c" || echo "$c"
  done >"$T_TMP/extra"
t_checks=$((t_checks + 1))
while read -r c; do
  t_fail "docs/cli.md documents 'fuseplan $c', which 'fuseplan --help' does not list"
done <"$T_TMP/extra"

# The checker itself: a README without solve's --jobs row, and with a
# made-up option in info's table, must give exactly those two findings.
t_case 'the checker reports a missing and an extra option'
awk '
  /^```/ { fence = !fence }
  !fence && /^#/ { sec = $0 }
  index(sec, "## `fuseplan solve") == 1 && /^\| `-j N`, `--jobs N`/ { next }
  { print }
  index(sec, "## `fuseplan info") == 1 && /^\| `--json`/ {
    print "| `--made-up-option` | not an option |"
  }' "$README" >"$T_TMP/README.altered"
check solve "$T_TMP/README.altered" >"$T_TMP/got"
check info "$T_TMP/README.altered" >>"$T_TMP/got"
t_eq 'findings' "$(cat "$T_TMP/got")" \
  "solve: --jobs is in 'fuseplan solve --help' but not in the README's table
info: --made-up-option is in the README's table but not in 'fuseplan info --help'"

t_finish
