#!/bin/sh
# test_completion.sh -- the generated bash completion
# ($top_builddir/completions/fuseplan.bash, made by tools/gen_completion.sh
# from the binary's --help) completes the commands, every option of each
# command's --help, and the values of options with fixed choices.
# Skipped (77) without bash.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

command -v bash >/dev/null 2>&1 || {
  echo 'SKIP: bash not installed'
  exit 77
}
COMP=$top_builddir/completions/fuseplan.bash

# complete WORD...: what the completion offers for the command line
# "fuseplan WORD...", the last word being the one under the cursor; one
# candidate per line, sorted.
complete_words() {
  bash -c '. "$0"; COMP_WORDS=(fuseplan "$@"); COMP_CWORD=$#;
    _fuseplan; printf "%s\n" "${COMPREPLY[@]}"' "$COMP" "$@" | LC_ALL=C sort
}

t_case 'the completion file is generated and parses'
t_true "no $COMP" test -f "$COMP"
t_true 'bash -n' bash -n "$COMP"

t_case 'commands'
t_eq 'fuseplan s' "$(complete_words s)" 'solve'
t_eq 'fuseplan co' "$(complete_words co)" 'compare'
t_eq 'fuseplan b' "$(complete_words b)" 'batch'
t_eq 'fuseplan --v' "$(complete_words --v)" '--version'

t_case 'every option of every command'
for c in $(t_commands); do
  offered=$(complete_words "$c" -)
  for o in $("$FUSEPLAN" "$c" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
    printf '%s\n' "$offered" | grep -qx -- "$o" ||
      t_fail "'fuseplan $c -<TAB>' does not offer $o"
  done
  t_checks=$((t_checks + 1))
done

t_case 'values with fixed choices'
t_eq 'solve --method g' "$(complete_words solve x.json --method g)" \
  'greedy
greedy-lowmem
greedy-peak'
t_eq 'pareto --method ' "$(complete_words pareto x.json --method '')" \
  'auto
exhaustive
ilp'
t_eq 'solve --order l' "$(complete_words solve --order l)" 'listed
lpmf'
t_eq 'run --backend ' "$(complete_words run --backend '')" 'cpu
cuda'
t_eq 'gen --family c' "$(complete_words gen --family c)" 'convnet'
t_eq 'solve --time-limit (a number)' "$(complete_words solve --time-limit '')" ''

t_case 'file names for file arguments'
mkdir "$T_TMP/d" && : >"$T_TMP/d/graph.json"
t_eq 'solve --start FILE' "$(complete_words solve --start "$T_TMP/d/gr")" \
  "$T_TMP/d/graph.json"
t_eq 'eval GRAPH' "$(complete_words eval "$T_TMP/d/g")" "$T_TMP/d/graph.json"

t_finish
