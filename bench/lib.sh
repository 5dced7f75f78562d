# shellcheck shell=bash
# bench/lib.sh -- sourced by every bench/NAME.sh that writes a section of
# BENCHMARKS.md.  A section is delimited by `<!-- section: NAME -->` and
# `<!-- end: NAME -->`; its header comes from bench/run.sh's section table
# (the one list of sections); `<!-- headline: WHAT | RESULT -->` lines in
# it feed the headline table at the top of the file.
#
#   . "$(dirname "$0")/lib.sh"
#   bench_init NAME "$@"       # parses [--update] [FUSEPLAN]
#   body() { ...tables...; bench_headline "what" "result"; }
#   bench_main "ENV=... " body  # prints the section; --update splices it in
#
# Run from a build directory (make bench-NAME does), or pass FUSEPLAN.

# bench_init NAME [--update] [FUSEPLAN]: sets bench_name, srcdir, fp (the
# binary, absolute), builddir (its directory), bench_update (0/1) and
# bench_tmp (a scratch directory removed on exit).  Exits 2 without a
# binary.
bench_init() {
  bench_name=$1
  shift
  bench_update=0
  if [ "${1:-}" = --update ]; then
    bench_update=1
    shift
  fi
  srcdir=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
  fp=${1:-}
  if [ -z "$fp" ]; then
    for c in ./fuseplan "$srcdir/build/fuseplan"; do
      [ -x "$c" ] && fp=$c && break
    done
  fi
  if [ -z "$fp" ] || [ ! -x "$fp" ]; then
    echo "bench/$bench_name.sh: no fuseplan binary (run from the build directory or pass its path)" >&2
    exit 2
  fi
  builddir=$(cd "$(dirname "$fp")" && pwd)
  fp=$builddir/$(basename "$fp")
  bench_tmp=$(mktemp -d)
  trap 'rm -rf "$bench_tmp"' EXIT
}

# bench_header NAME COMMAND: the section's start marker, its title, and
# one line with its purpose (from bench/run.sh's table), the command that
# regenerates it alone, the commit, the UTC date and the machine.  No
# blank line after the title and one line for both: BENCHMARKS.md stays
# under 400 lines.
bench_header() {
  local row title purpose commit cpu
  row=$(bash "$srcdir/bench/run.sh" --list | awk -F'|' -v n="$1" '$1 == n')
  title=$(echo "$row" | cut -d'|' -f2)
  purpose=$(echo "$row" | cut -d'|' -f3-)
  commit=unknown # a release tarball has no history of its own
  [ -e "$srcdir/.git" ] && commit=$(git -C "$srcdir" rev-parse --short HEAD 2>/dev/null || echo unknown)
  cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //')
  echo "<!-- section: $1 -->"
  echo "## ${title:-$1}"
  echo "$purpose Command (in the build directory): \`$2\`; commit $commit, $(date -u +%Y-%m-%d), $(nproc) cores (${cpu:-unknown CPU})."
  echo
}

# bench_failure ERRFILE: the last line of a failed run's stderr that is
# not a library's warning (USDT, torch's [W ... ] and W1/ERROR logs).
bench_failure() {
  grep -v '^\(USDT\|\[W\|W1\|ERROR\)' "$1" | tail -n 1
}

# bench_headline WHAT RESULT: a row for the headline table at the top.
bench_headline() {
  echo "<!-- headline: $1 | $2 -->"
}

# bench_splice FILE NAME SECTION_FILE: replaces NAME's section of FILE
# (markers included) with SECTION_FILE; when FILE has none, inserts it
# before the first section that follows NAME in bench/run.sh's table (any
# section, for the headline), or at the end.  Atomic (temporary file + rename).
bench_splice() {
  local out=$1 name=$2 sec=$3 new later
  new=$(mktemp "$out.XXXXXX")
  later=$(bash "$srcdir/bench/run.sh" --list | cut -d'|' -f1 |
    awk -v n="$name" 'found || n == "headline" { printf "%s ", $0 } $0 == n { found = 1 }')
  [ -f "$out" ] || echo "# fuseplan benchmarks" >"$out"
  awk -v n="$name" -v later=" $later" -v f="$sec" '
    function put() { while ((getline l < f) > 0) print l; done = 1 }
    $0 == "<!-- section: " n " -->" { put(); skip = 1; next }
    skip { if ($0 == "<!-- end: " n " -->") skip = 0; next }
    /^<!-- section: / && !done && index(later, " " $3 " ") { put() }
    { print }
    END { if (!done) put() }' "$out" >"$new"
  chmod 644 "$new"
  mv "$new" "$out"
}

# bench_main COMMAND BODY: prints the section (header, BODY's output, end
# marker); with --update, also puts it into BENCHMARKS.md in place and
# remakes the headline table there.  BODY's failure fails the script.
bench_main() {
  local sec=$bench_tmp/section.md
  {
    bench_header "$bench_name" "$1"
    "$2"
    echo "<!-- end: $bench_name -->"
  } >"$sec"
  cat "$sec"
  if [ "$bench_update" = 1 ]; then
    bench_splice "$srcdir/BENCHMARKS.md" "$bench_name" "$sec"
    bash "$srcdir/bench/run.sh" --headline "$srcdir/BENCHMARKS.md" >"$bench_tmp/headline.md"
    bench_splice "$srcdir/BENCHMARKS.md" headline "$bench_tmp/headline.md"
  fi
}
