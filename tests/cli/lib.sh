# shellcheck shell=sh disable=SC2317 # functions of a sourced library
# lib.sh -- helpers shared by the CLI test scripts (POSIX sh; sourced).
#
# Environment (set by `make check`, see AM_TESTS_ENVIRONMENT in Makefile.am):
#   FUSEPLAN      the fuseplan binary under test
#   top_srcdir    the source tree (may be read-only: never write there)
#   top_builddir  the build tree
# A script sources this file, calls t_init, runs checks, and ends with
# t_finish, which exits 0 when every check passed and 1 otherwise.  Checks
# record a failure and go on, so one run lists every broken case; each
# check returns 0 when it passed and 1 when it failed, so that dependent
# checks can be skipped (`t_exit 0 && t_out_has ...`).

: "${top_srcdir:=.}"
: "${top_builddir:=.}"
: "${FUSEPLAN:=$top_builddir/fuseplan}"

t_failures=0
t_checks=0
t_case='(no case)'

# t_init: checks the binary and makes $T_TMP, a scratch directory removed
# on exit; $T_OUT and $T_ERR receive the output of t_run.
t_init() {
  if [ ! -x "$FUSEPLAN" ]; then
    echo "FAIL: FUSEPLAN='$FUSEPLAN' is not an executable" >&2
    exit 1
  fi
  T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/fuseplan-test.XXXXXX") || exit 1
  # shellcheck disable=SC2154 # t_status is assigned by the trap itself
  trap 't_status=$?; chmod -R u+w "$T_TMP" 2>/dev/null; rm -rf "$T_TMP"; exit $t_status' EXIT
  trap 'exit 1' HUP INT TERM
  T_OUT=$T_TMP/stdout
  T_ERR=$T_TMP/stderr
}

# t_case NAME: names the case the following checks belong to.
t_case() {
  t_case=$1
}

# t_fail MESSAGE: records a failure of the current case.
t_fail() {
  t_failures=$((t_failures + 1))
  printf 'FAIL: %s: %s\n' "$t_case" "$1" >&2
}

# t_run CMD ARGS...: runs a command; its stdout, stderr and exit code land
# in $T_OUT, $T_ERR and $T_RC.
t_run() {
  T_RC=0
  "$@" >"$T_OUT" 2>"$T_ERR" || T_RC=$?
  T_CMD=$*
}

# t_run_in DIR CMD ARGS...: t_run with DIR as the working directory.
t_run_in() {
  T_RC=0
  t_dir=$1
  shift
  (cd "$t_dir" && exec "$@") >"$T_OUT" 2>"$T_ERR" || T_RC=$?
  T_CMD="(in $t_dir) $*"
}

# t_show: prints the last command and the start of what it wrote.
t_show() {
  {
    printf '  command: %s\n  exit:    %s\n' "$T_CMD" "$T_RC"
    sed -n '1,5s/^/  stdout:  /p' "$T_OUT"
    sed -n '1,5s/^/  stderr:  /p' "$T_ERR"
  } >&2
}

# t_exit CODE: the last command exited with CODE.
t_exit() {
  t_checks=$((t_checks + 1))
  if [ "$T_RC" != "$1" ]; then
    t_fail "expected exit code $1, got $T_RC"
    t_show
    return 1
  fi
  return 0
}

# t_err_has TEXT: stderr of the last command contains TEXT (fixed string).
t_err_has() {
  t_checks=$((t_checks + 1))
  if ! grep -F -e "$1" "$T_ERR" >/dev/null 2>&1; then
    t_fail "stderr lacks: $1"
    t_show
    return 1
  fi
  return 0
}

# t_out_has TEXT: stdout of the last command contains TEXT (fixed string).
t_out_has() {
  t_checks=$((t_checks + 1))
  if ! grep -F -e "$1" "$T_OUT" >/dev/null 2>&1; then
    t_fail "stdout lacks: $1"
    t_show
    return 1
  fi
  return 0
}

# t_err_one_line: stderr of the last command is exactly one non-empty,
# newline-terminated line.
t_err_one_line() {
  t_checks=$((t_checks + 1))
  t_n=$(wc -l <"$T_ERR" | tr -d ' ')
  t_c=$(wc -c <"$T_ERR" | tr -d ' ')
  t_last=$(tail -n 1 "$T_ERR" | wc -c | tr -d ' ')
  if [ "$t_n" != 1 ] || [ "$t_last" != "$t_c" ] || [ "$t_c" -lt 2 ]; then
    t_fail "stderr is not exactly one line ($t_n newlines, $t_c bytes)"
    t_show
    return 1
  fi
  return 0
}

# t_err_empty / t_out_empty: the last command wrote nothing there.
t_err_empty() {
  t_checks=$((t_checks + 1))
  if [ -s "$T_ERR" ]; then
    t_fail "expected no stderr"
    t_show
    return 1
  fi
  return 0
}
t_out_empty() {
  t_checks=$((t_checks + 1))
  if [ -s "$T_OUT" ]; then
    t_fail "expected no stdout"
    t_show
    return 1
  fi
  return 0
}

# t_eq WHAT GOT WANT: GOT equals WANT (as strings).
t_eq() {
  t_checks=$((t_checks + 1))
  if [ "$2" != "$3" ]; then
    t_fail "$1: got '$2', expected '$3'"
    return 1
  fi
  return 0
}

# t_true WHAT CMD ARGS...: the command succeeds; WHAT describes the failure
# (e.g. `t_true 'plan not written' test -f plan.json`).
t_true() {
  t_checks=$((t_checks + 1))
  t_what=$1
  shift
  if ! "$@"; then
    t_fail "$t_what"
    return 1
  fi
  return 0
}

# t_false WHAT CMD ARGS...: the command fails; WHAT describes the failure.
t_false() {
  t_checks=$((t_checks + 1))
  t_what=$1
  shift
  if "$@"; then
    t_fail "$t_what"
    return 1
  fi
  return 0
}

# t_count_tmp DIR: how many entries of DIR have '.tmp.' in their name (the
# temporary files of an atomic write).
t_count_tmp() {
  t_k=0
  for t_f in "$1"/*.tmp.* "$1"/.*.tmp.*; do
    [ -e "$t_f" ] && t_k=$((t_k + 1))
  done
  echo "$t_k"
}

# t_entries DIR: the names in DIR (hidden ones too), sorted, one line.
t_entries() {
  (cd "$1" && for t_f in * .[!.]*; do [ -e "$t_f" ] && printf '%s ' "$t_f"; done)
}

# json_num KEY FILE: the integer value of the first "KEY": in FILE (the
# flat one-line objects fuseplan prints); empty when absent.
json_num() {
  awk -v k="\"$1\":" '{
    i = index($0, k)
    if (i) {
      s = substr($0, i + length(k))
      sub(/^ */, "", s)
      if (match(s, /^-?[0-9]+/)) { print substr(s, 1, RLENGTH); exit }
    }
  }' "$2"
}

# json_num_in OBJ KEY FILE: the integer KEY inside the first nested object
# "OBJ": {...} of FILE.
json_num_in() {
  awk -v o="\"$1\": {" -v k="\"$2\":" '{
    i = index($0, o)
    if (!i) next
    s = substr($0, i + length(o))
    s = substr(s, 1, index(s, "}"))
    j = index(s, k)
    if (!j) next
    s = substr(s, j + length(k))
    sub(/^ */, "", s)
    if (match(s, /^-?[0-9]+/)) { print substr(s, 1, RLENGTH); exit }
  }' "$3"
}

# t_commands: the command names in `$FUSEPLAN --help` (its "commands:"
# list, one per line indented by two spaces; continuation lines are
# indented further), one per line.
t_commands() {
  "$FUSEPLAN" --help | awk '
    /^commands:/ { on = 1; next }
    on && /^$/ { exit }
    on && /^  [a-z]/ { print $1 }'
}

# t_finish: reports and exits (0 all passed, 1 otherwise).
t_finish() {
  if [ "$t_failures" -ne 0 ]; then
    printf '%s: %d of %d checks FAILED\n' "${0##*/}" "$t_failures" "$t_checks" >&2
    exit 1
  fi
  printf '%s: all %d checks passed\n' "${0##*/}" "$t_checks"
  exit 0
}
