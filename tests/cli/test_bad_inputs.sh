#!/bin/sh
# test_bad_inputs.sh -- every file in tests/data/bad/ is rejected with the
# exit code, the one-line message and the message fragment its MANIFEST
# entry gives (see tests/data/bad/MANIFEST for the format).
#
# Graph entries run `fuseplan info FILE`, plan entries
# `fuseplan verify GRAPH FILE`.  Besides the code and the fragment, the
# message must name the file (as given on the command line), stderr must be
# exactly one line, and stdout must stay empty.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

BAD=$top_srcdir/tests/data/bad
MANIFEST=$BAD/MANIFEST
if [ ! -r "$MANIFEST" ]; then
  echo "FAIL: cannot read $MANIFEST" >&2
  exit 1
fi

# The checker itself: a valid graph must load, or every case below would
# pass for the wrong reason.
t_case 'sanity: valid graph'
t_run "$FUSEPLAN" info "$top_srcdir/tests/data/small.json"
t_exit 0

n_cases=0
listed=$T_TMP/listed
: >"$listed"
while IFS= read -r line || [ -n "$line" ]; do
  case $line in
  '' | '#'*) continue ;;
  esac
  kind=${line%% *}
  rest=${line#* }
  graph=
  if [ "$kind" = plan ]; then
    graph=${rest%% *}
    rest=${rest#* }
  fi
  file=${rest%% *}
  rest=${rest#* }
  code=${rest%% *}
  frag=${rest#"$code"}
  frag=${frag# }
  n_cases=$((n_cases + 1))
  printf '%s\n' "$file" >>"$listed"
  t_case "$kind $file"
  case $kind in
  graph) t_run "$FUSEPLAN" info "$BAD/$file" ;;
  plan) t_run "$FUSEPLAN" verify "$BAD/$graph" "$BAD/$file" ;;
  *)
    t_fail "MANIFEST: unknown kind '$kind' in line: $line"
    continue
    ;;
  esac
  t_exit "$code" || continue
  t_err_one_line
  t_err_has "$BAD/$file"
  [ -n "$frag" ] && t_err_has "$frag"
  t_out_empty
done <"$MANIFEST"

# Every file in the corpus has an entry (an unlisted file tests nothing).
t_case 'MANIFEST covers the corpus'
for f in "$BAD"/* "$BAD"/.[!.]*; do
  [ -e "$f" ] || continue
  name=${f##*/}
  [ "$name" = MANIFEST ] && continue
  t_true "$name is not listed in MANIFEST" grep -qxF -e "$name" "$listed"
done
t_true "MANIFEST lists fewer than 30 cases ($n_cases)" [ "$n_cases" -ge 30 ]

t_finish
