#!/bin/sh
# test_no_cycles.sh -- the files of the library (the convenience library
# libfuseplan_core.la), the generator (libfuseplan_gen.la), the batch
# runner (libfuseplan_batch.la) and the command (cli/) depend on one
# another one way only: no circle between files, and no folder that
# depends on a folder ranked above it.
#
# A file *depends on* another when it includes it or uses it:
#   - uses: from the object files, `nm` gives the global symbols each file
#     defines (T, D, B, R, ...) and the symbols it uses (U); file A uses
#     file B when A refers to a symbol that B defines;
#   - includes: from the sources under $top_srcdir, every #include "..."
#     that names a file of the tree.  A header X.h or X_internal.h beside
#     X.c is part of X.c (its interface), so including it depends on X.c;
#     a header with no such X.c is a file of its own.
# The test fails
#   - when the dependencies have a circle, A -> ... -> A through two or
#     more files (a strongly connected component of more than one file),
#     printing each circle's files and the edges inside it;
#   - when a file depends on a file of another folder whose rank (the
#     table `rooms` below) is not lower than its own folder's, or lies in
#     a folder the table does not rank;
#   - when docs/architecture.md ("Rooms") does not show the same table.
#
#   test_no_cycles.sh              the members of the archives
#                                  $top_builddir/.libs/libfuseplan_core.a,
#                                  libfuseplan_gen.a and libfuseplan_batch.a,
#                                  and cli/*.o
#   test_no_cycles.sh OBJ.o...     only these object files' uses (e.g. to
#                                  check a module on its own), with every
#                                  include of the tree
#
# An automake object such as
# $top_builddir/solver/mip/libfuseplan_core_la-ilp_model.o is reported as
# its source, solver/mip/ilp_model.c.  POSIX sh and awk; NM may name
# another nm.

: "${top_builddir:=.}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
NM=${NM:-nm}

# The rooms: folders, each with a rank, lowest first.  A file belongs to
# the longest folder of the table that holds it (solver/mip/ilp_model.c to
# solver/mip, solver/solver.h to solver).  A file may depend only on files
# of its own folder or of folders of a lower rank; two folders of the same
# rank know nothing of each other.  solver itself holds the two public
# headers, solver.h and planner.h, below every room of solver/.
rooms='
1 model
2 heuristics
2 gen
2 cuda_exec
3 solver
4 solver/common
4 solver/window
5 solver/mip
6 solver/bound
7 solver/exact
8 solver/search
9 solver/planner
10 batch
11 cli
'

# The objects: the archive's members, each found in the build tree (the
# archive is rebuilt from scratch, so it holds no stale member).
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
    # Two members of one name would be two sources of one name.
    if [ "$(printf '%s\n' $members | grep -cx "$m")" -ne 1 ]; then
      echo "FAIL: two archive members are named $m" >&2
      exit 1
    fi
    # The object of that name in the build tree; after a source moved to
    # another folder, the object at its old place is stale, and older
    # than the one the archive was made of: the newest is the member.
    found=
    for o in "$top_builddir"/*/"$m" "$top_builddir"/*/*/"$m" \
      "$top_builddir"/*/*/*/"$m"; do
      [ -f "$o" ] || continue
      if [ -z "$found" ] || [ "$o" -nt "$found" ]; then found=$o; fi
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
trap 'rm -f "$tmp" "$tmp.nm" "$tmp.src"' EXIT
trap 'exit 1' HUP INT TERM

# One line per symbol: "FILE KIND NAME", KIND D (defined) or U (used).
for o in "$@"; do
  # solver/exact/libfuseplan_core_la-ilp.o -> solver/exact/ilp.c
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

# One line per include of a file of the tree: "FILE I FILE2 HEADER", FILE2
# the file that HEADER is part of (see the top).  Paths are relative to
# $top_srcdir; an include is looked up beside its file, then from the top.
(cd "$top_srcdir" && find model heuristics gen cuda_exec solver batch cli \
  -name '*.[ch]' | LC_ALL=C sort) >"$tmp.src" || exit 1
(cd "$top_srcdir" && awk '
  function norm(p,   n, i, k, part, out) {
    n = split(p, part, "/"); k = 0
    for (i = 1; i <= n; i++) {
      if (part[i] == "..") { if (k > 0) k-- }
      else if (part[i] != "." && part[i] != "") out[++k] = part[i]
    }
    p = out[1]
    for (i = 2; i <= k; i++) p = p "/" out[i]
    return p
  }
  function unit(p,   s) {
    if (p !~ /\.h$/) return p
    s = substr(p, 1, length(p) - 2)
    if ((s ".c") in tree) return s ".c"
    sub(/_internal$/, "", s)
    if ((s ".c") in tree) return s ".c"
    return p
  }
  FNR == NR { tree[$0] = 1; list[++n] = $0; next }
  END {
    for (i = 1; i <= n; i++) {
      f = list[i]; dir = f; sub(/\/[^\/]*$/, "", dir)
      while ((getline line < f) > 0) {
        if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
        h = line; sub(/^[^"]*"/, "", h); sub(/".*$/, "", h)
        if ((norm(dir "/" h)) in tree) h = norm(dir "/" h)
        else if (!(norm(h) in tree)) continue   # config.h, fuseplan.h
        else h = norm(h)
        a = unit(f); b = unit(h)
        if (a != b) print a, "I", b, h
      }
      close(f)
    }
  }' "$tmp.src" "$tmp.src") >>"$tmp" || exit 1

printf '%s\n' "$rooms" | awk -v docs="$top_srcdir/docs/architecture.md" '
  NF == 2 { rank[$2] = $1; nr++; order[nr] = $2 }
  # The folder of the table that holds file f, or "" when none does.
  function room(f,   d) {
    d = f
    while (sub(/\/[^\/]*$/, "", d))
      if (d in rank) return d
    return ""
  }
  FILENAME != "-" && $2 == "D" && !($3 in def) { def[$3] = $1 }
  FILENAME != "-" {
    file[$1] = 1
    if ($2 == "U") { nu++; use[nu] = $1; sym[nu] = "uses " $3 }
    if ($2 == "I") { file[$3] = 1; nu++; use[nu] = $1; to[nu] = $3; sym[nu] = "includes " $4 }
  }
  END {
    # The table in the docs: "| RANK | `FOLDER/` |" rows.
    while ((getline line < docs) > 0)
      if (line ~ /^\| [0-9]+ \| `[a-z_\/]+\/` \|/) {
        split(line, c, "|"); r = c[2]; d = c[3]
        gsub(/[ `]/, "", r); gsub(/[ `]/, "", d); sub(/\/$/, "", d)
        doc[d] = r; nd++
      }
    bad = 0
    for (i = 1; i <= nr; i++)
      if (doc[order[i]] != rank[order[i]]) {
        printf "FAIL: docs/architecture.md does not rank %s/ %s\n", order[i], rank[order[i]] > "/dev/stderr"; bad++
      }
    if (nd != nr) {
      printf "FAIL: docs/architecture.md ranks %d folders, the test %d\n", nd, nr > "/dev/stderr"; bad++
    }
    n = 0
    for (f in file) {   # sorted by name, so the report is stable
      for (i = n; i >= 1 && name[i] > f; i--) name[i + 1] = name[i]
      name[i + 1] = f; n++
    }
    for (i = 1; i <= n; i++) {
      idx[name[i]] = i
      if (room(name[i]) == "") {
        printf "FAIL: %s is in no folder of the ranks\n", name[i] > "/dev/stderr"; bad++
      }
    }
    edges = 0
    for (i = 1; i <= nu; i++) {
      if (i in to) t = to[i]
      else if (substr(sym[i], 6) in def) t = def[substr(sym[i], 6)]
      else continue   # libc, GLPK, cJSON, ...
      a = idx[use[i]]; b = idx[t]
      if (a == b) continue
      if (!((a, b) in edge)) { edge[a, b] = sym[i]; edges++ }
    }
    if (edges == 0) {
      print "FAIL: no file uses another: nm output not understood?" > "/dev/stderr"
      exit 1
    }
    # Folders: every dependency on another folder goes to a lower rank.
    for (a = 1; a <= n; a++)
      for (b = 1; b <= n; b++) {
        if (!((a, b) in edge)) continue
        ra = room(name[a]); rb = room(name[b])
        if (ra == rb || ra == "" || rb == "" || rank[rb] < rank[ra]) continue
        printf "FAIL: %s (%s/, rank %d) depends on %s (%s/, rank %d): %s\n", \
          name[a], ra, rank[ra], name[b], rb, rank[rb], edge[a, b] > "/dev/stderr"
        bad++
      }
    # Reachability (Floyd-Warshall on booleans); n is a few hundred files.
    for (a = 1; a <= n; a++)
      for (b = 1; b <= n; b++)
        if ((a, b) in edge) reach[a, b] = 1
    for (k = 1; k <= n; k++)
      for (a = 1; a <= n; a++)
        if ((a, k) in reach)
          for (b = 1; b <= n; b++)
            if ((k, b) in reach) reach[a, b] = 1
    # Strongly connected components: a and b with a ->* b ->* a.
    circles = 0
    for (a = 1; a <= n; a++) {
      if (a in done) continue
      members = name[a]; size = 1; comp[1] = a
      for (b = a + 1; b <= n; b++)
        if (!(b in done) && ((a, b) in reach) && ((b, a) in reach)) {
          done[b] = 1; size++; comp[size] = b; members = members " " name[b]
        }
      done[a] = 1
      if (size < 2) continue
      circles++
      printf "FAIL: circle between %d files: %s\n", size, members > "/dev/stderr"
      for (i = 1; i <= size; i++)
        for (j = 1; j <= size; j++)
          if ((comp[i], comp[j]) in edge)
            printf "  %s -> %s (%s)\n", name[comp[i]], name[comp[j]], \
              edge[comp[i], comp[j]] > "/dev/stderr"
    }
    if (circles || bad) {
      printf "%s: %d circle(s), %d other failure(s) among %d files\n", \
        "test_no_cycles.sh", circles, bad, n > "/dev/stderr"
      exit 1
    }
    printf "test_no_cycles.sh: %d files, %d dependencies between files, no circle, none upward among %d folders\n", n, edges, nr
  }' - "$tmp"
