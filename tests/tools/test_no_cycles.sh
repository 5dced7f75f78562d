#!/bin/sh
# test_no_cycles.sh -- no call circle between the files of the library
# (the convenience library libfuseplan_core.la), the generator
# (libfuseplan_gen.la) and the command (cli/).
#
# From the library's object files, `nm` gives the global symbols each file
# defines (T, D, B, R, ...) and the symbols it uses (U).  File A *uses*
# file B when A refers to a symbol that B defines.  The test fails when
# the "uses" graph has a circle, A -> ... -> A through two or more files
# (a strongly connected component of more than one file), and prints each
# circle's files and the edges inside it, with a symbol for each edge.
#
#   test_no_cycles.sh              the members of the archives
#                                  $top_builddir/.libs/libfuseplan_core.a and
#                                  libfuseplan_gen.a, and cli/*.o
#   test_no_cycles.sh OBJ.o...     only these object files (e.g. to check a
#                                  module on its own)
#
# An automake object such as $top_builddir/solver/.libs/libfuseplan_core_la-ilp.o
# is reported as its source, solver/ilp.c.  POSIX sh and awk; NM may name
# another nm.

: "${top_builddir:=.}"
NM=${NM:-nm}

# The objects: the archive's members, each found in the build tree (the
# archive is rebuilt from scratch, so it holds no stale member; a stale
# object left in the build tree is not a member and is not read).
if [ $# -eq 0 ]; then
  members=
  for lib in "$top_builddir/.libs/libfuseplan_core.a" \
    "$top_builddir/.libs/libfuseplan_gen.a" \
    "$top_builddir/.libs/libfuseplan_batch.a"; do
    if [ ! -f "$lib" ]; then
      echo "FAIL: $lib not found (build the library first)" >&2
      exit 1
    fi
    members="$members $(ar t "$lib")" || exit 1
  done
  set --
  for o in "$top_builddir"/cli/*.o; do
    [ -f "$o" ] && set -- "$@" "$o"
  done
  for m in $members; do
    found=
    for o in "$top_builddir"/*/"$m" "$top_builddir"/*/*/"$m"; do
      [ -f "$o" ] || continue
      if [ -n "$found" ]; then
        echo "FAIL: archive member $m matches both $found and $o" >&2
        exit 1
      fi
      found=$o
    done
    if [ -z "$found" ]; then
      echo "FAIL: archive member $m not found under $top_builddir" >&2
      exit 1
    fi
    set -- "$@" "$found"
  done
fi
if [ $# -lt 2 ]; then
  echo "FAIL: fewer than two object files to check" >&2
  exit 1
fi

tmp=$(mktemp "${TMPDIR:-/tmp}/fuseplan-cycles.XXXXXX") || exit 1
trap 'rm -f "$tmp" "$tmp.nm"' EXIT
trap 'exit 1' HUP INT TERM

# One line per symbol: "FILE KIND NAME", KIND D (defined) or U (used).
for o in "$@"; do
  # solver/.libs/libfuseplan_core_la-ilp.o -> solver/ilp.c
  src=${o#"$top_builddir"/}
  dir=${src%/*}
  dir=${dir%/.libs}
  base=${src##*/}
  base=${base#*_la-}
  [ "$dir" = "$src" ] && dir=.
  src=$dir/${base%.o}.c
  "$NM" -P "$o" >"$tmp.nm" || {
    echo "FAIL: $NM -P $o failed" >&2
    rm -f "$tmp.nm"
    exit 1
  }
  awk -v f="$src" '
    NF >= 2 && $1 !~ /:$/ {
      if ($2 == "U") print f, "U", $1
      else if ($2 ~ /^[TDBRCGSVW]$/) print f, "D", $1
    }' "$tmp.nm"
done >"$tmp"
rm -f "$tmp.nm"

awk -v nobj="$#" '
  $2 == "D" && !($3 in def) { def[$3] = $1 }
  { file[$1] = 1; if ($2 == "U") { nu++; use[nu] = $1; sym[nu] = $3 } }
  END {
    n = 0
    for (f in file) {   # sorted by name, so the report is stable
      for (i = n; i >= 1 && name[i] > f; i--) name[i + 1] = name[i]
      name[i + 1] = f; n++
    }
    for (i = 1; i <= n; i++) idx[name[i]] = i
    edges = 0
    for (i = 1; i <= nu; i++) {
      if (!(sym[i] in def)) continue   # libc, GLPK, cJSON, ...
      a = idx[use[i]]; b = idx[def[sym[i]]]
      if (a == b) continue
      if (!((a, b) in edge)) { edge[a, b] = sym[i]; edges++ }
    }
    if (edges == 0) {
      print "FAIL: no file uses another: nm output not understood?" > "/dev/stderr"
      exit 1
    }
    # Reachability (Floyd-Warshall on booleans); n is a few dozen files.
    for (a = 1; a <= n; a++)
      for (b = 1; b <= n; b++)
        reach[a, b] = ((a, b) in edge)
    for (k = 1; k <= n; k++)
      for (a = 1; a <= n; a++)
        if (reach[a, k])
          for (b = 1; b <= n; b++)
            if (reach[k, b]) reach[a, b] = 1
    # Strongly connected components: a and b with a ->* b ->* a.
    circles = 0
    for (a = 1; a <= n; a++) {
      if (a in done) continue
      members = name[a]; size = 1; comp[1] = a
      for (b = a + 1; b <= n; b++)
        if (!(b in done) && reach[a, b] && reach[b, a]) {
          done[b] = 1; size++; comp[size] = b; members = members " " name[b]
        }
      done[a] = 1
      if (size < 2) continue
      circles++
      printf "FAIL: call circle between %d files: %s\n", size, members > "/dev/stderr"
      for (i = 1; i <= size; i++)
        for (j = 1; j <= size; j++)
          if ((comp[i], comp[j]) in edge)
            printf "  %s -> %s (uses %s)\n", name[comp[i]], name[comp[j]], \
              edge[comp[i], comp[j]] > "/dev/stderr"
    }
    if (circles) {
      printf "%s: %d call circle(s) among %d files\n", "test_no_cycles.sh", \
        circles, n > "/dev/stderr"
      exit 1
    }
    printf "test_no_cycles.sh: %d files, %d uses between files, no call circle\n", n, edges
  }' "$tmp"
