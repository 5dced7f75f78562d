#!/bin/sh
# test_man.sh -- the manual pages say what --help says, and mandoc finds
# nothing wrong in them.
#
# man/fuseplan.1 has a subsection ".Ss fuseplan CMD" for every command
# that `fuseplan --help` lists; every option of `fuseplan CMD --help`
# (long, "--name", and short, "-o") is named with Fl in that subsection,
# and the subsection names no option the help lacks.  The exit codes of
# the README's table (every row) are in EXIT STATUS.  `mandoc -Tlint` on
# both pages prints nothing but the note that the other page is not
# installed yet (skipped without mandoc).  The checker is also run on an
# altered copy of the page (solve's --mip-gap removed, a made-up option added) and must report
# both: a test of the test.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

MAN1=$top_srcdir/man/fuseplan.1
MAN5=$top_srcdir/man/fuseplan-formats.5

# help_options CMD: the options of `fuseplan CMD --help`, one per line:
# every --name, and the short -x that starts an option line.
help_options() {
  "$FUSEPLAN" "$1" --help | awk '
    /^  -[a-z],/ { print substr($1, 1, 2) }
    {
      s = $0
      while (match(s, /--[a-z][a-z0-9-]*/)) {
        o = substr(s, RSTART, RLENGTH)
        if (o != "--help") print o
        s = substr(s, RSTART + RLENGTH)
      }
    }' | LC_ALL=C sort -u
}

# man_options CMD FILE: the options named with Fl in CMD's subsection.
man_options() {
  awk -v cmd="$1" '
    /^\.S[hs] / { on = ($0 == ".Ss fuseplan " cmd || index($0, ".Ss fuseplan " cmd " ") == 1); next }
    on {
      s = $0
      # "Fl \-jobs" renders as --jobs, "Fl j" as -j ("Fl \-" alone, the
      # end of options, is left out).
      while (match(s, /Fl (\\-)?[a-z0-9][-a-z0-9]*/)) {
        o = substr(s, RSTART + 3, RLENGTH - 3)
        sub(/^\\/, "", o)
        print "-" o
        s = substr(s, RSTART + RLENGTH)
      }
    }' "$2" | LC_ALL=C sort -u
}

# check CMD FILE: one line per mismatch; nothing when they agree.
check() {
  help_options "$1" >"$T_TMP/help"
  man_options "$1" "$2" >"$T_TMP/man"
  LC_ALL=C comm -23 "$T_TMP/help" "$T_TMP/man" | while read -r o; do
    echo "$1: $o is in 'fuseplan $1 --help' but not in the man page"
  done
  LC_ALL=C comm -13 "$T_TMP/help" "$T_TMP/man" | while read -r o; do
    echo "$1: $o is in the man page but not in 'fuseplan $1 --help'"
  done
}

cmds=$(t_commands)
t_case 'the commands'
t_true "no command in 'fuseplan --help'" test -n "$cmds"
for c in $cmds; do
  t_true "fuseplan.1 has no '.Ss fuseplan $c'" grep -q "^\.Ss fuseplan $c\( \|$\)" "$MAN1"
  check "$c" "$MAN1" >"$T_TMP/mismatch"
  t_checks=$((t_checks + 1))
  while read -r line; do t_fail "$line"; done <"$T_TMP/mismatch"
done

t_case 'the man page documents no command the binary lacks'
grep '^\.Ss fuseplan ' "$MAN1" | awk '{ print $3 }' >"$T_TMP/sections"
while read -r c; do
  printf '%s\n' "$cmds" | grep -qx "$c" || t_fail "fuseplan.1 documents '$c'"
done <"$T_TMP/sections"
t_checks=$((t_checks + 1))

t_case 'exit status, --help, --version'
# the codes of the README's table: its rows "| N | ..."
codes=$(awk '/^#+ Exit codes/ { on = 1; next } /^#/ { on = 0 }
  on && /^\| [0-9]+ \|/ { print $2 }' "$top_srcdir/README.md")
t_true "no exit codes in the README's table" test -n "$codes"
for code in $codes; do
  t_true "EXIT STATUS has no '.It $code'" sh -c \
    "awk '/^\.Sh EXIT STATUS/ { on = 1; next } /^\.Sh / { on = 0 } on' '$MAN1' | grep -qx '\.It $code'"
done
t_true 'the synopsis names --version' grep -q 'Fl \\-help | \\-version' "$MAN1"

t_case 'the checker reports a missing and an extra option'
sed -e '/^\.It Fl \\-mip-gap Ar G$/d' \
  -e 's/^\.It Fl \\-json$/.It Fl \\-json\n.It Fl \\-made-up-option/' "$MAN1" >"$T_TMP/altered.1"
{ check solve "$T_TMP/altered.1"; check info "$T_TMP/altered.1"; } >"$T_TMP/got"
t_eq 'findings' "$(cat "$T_TMP/got")" \
  "solve: --mip-gap is in 'fuseplan solve --help' but not in the man page
solve: --made-up-option is in the man page but not in 'fuseplan solve --help'
info: --made-up-option is in the man page but not in 'fuseplan info --help'"

t_case 'mandoc -Tlint'
if command -v mandoc >/dev/null 2>&1; then
  for page in "$MAN1" "$MAN5"; do
    # Each page refers to the other, which is not installed yet.
    mandoc -Tlint "$page" 2>&1 | grep -v 'STYLE: referenced manual not found: Xr fuseplan' >"$T_TMP/lint"
    t_eq "mandoc -Tlint $(basename "$page")" "$(cat "$T_TMP/lint")" ''
  done
  t_run mandoc -Tmarkdown "$MAN1"
  t_exit 0 && t_out_has 'EXIT STATUS'
else
  echo 'SKIP: mandoc not installed (apt-get install mandoc): no lint'
fi

t_finish
