#!/bin/sh
# test_installed.sh -- what `make install` put in place works for a user:
# run by `make installcheck` (and so by `make distcheck` on its install
# tree), with the directories of the install in the environment
# (DESTDIR, bindir, libdir, includedir, pkgconfigdir, mandir,
# bashcompletiondir, CC, top_srcdir; see installcheck-local in Makefile.am).
#
#   - examples/plan_graph.c compiles outside the tree with
#     `cc prog.c $(pkg-config --cflags --libs fuseplan)` (shared), and
#     against libfuseplan.a with `pkg-config --static --libs`, and both
#     plan a graph whose plan the installed `fuseplan verify` accepts;
#   - the shared library exports exactly the fp_ functions the installed
#     headers declare (no internal helper, nothing without the prefix),
#     and has a versioned soname;
#   - no internal header is installed;
#   - both manual pages and the bash completion are installed.
#
# Under DESTDIR (a staged install) pkg-config reads the staged .pc file
# with PKG_CONFIG_SYSROOT_DIR=$DESTDIR, as for a cross-compiled sysroot.

# shellcheck source=tests/cli/lib.sh
FUSEPLAN="$DESTDIR$bindir/fuseplan"
. "$top_srcdir/tests/cli/lib.sh"
t_init

: "${CC:=cc}"
lib=$DESTDIR$libdir
inc=$DESTDIR$includedir
PKG_CONFIG_PATH=$DESTDIR$pkgconfigdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
if [ -n "$DESTDIR" ]; then
  PKG_CONFIG_SYSROOT_DIR=$DESTDIR
  export PKG_CONFIG_SYSROOT_DIR
fi
graph=$top_srcdir/data/examples/transformer-train-400.json.gz

t_case 'pkg-config knows fuseplan'
t_run pkg-config --modversion fuseplan
t_exit 0
t_run pkg-config --cflags --libs fuseplan
t_exit 0 && t_out_has '-lfuseplan'
flags=$(cat "$T_OUT")

# The example, copied out of the tree, as a user would build it.
cp "$top_srcdir/examples/plan_graph.c" "$T_TMP/prog.c"

t_case 'the example builds against the shared library'
# shellcheck disable=SC2086 # the flags are words
t_run "$CC" -std=c11 -Wall -Wextra -Werror "$T_TMP/prog.c" $flags -o "$T_TMP/prog"
t_exit 0
t_case 'the shared build runs and writes a plan fuseplan verify accepts'
t_run env LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$T_TMP/prog" "$graph" "$T_TMP/plan.json" 1
t_exit 0 && t_out_has 'traffic' && t_out_has 'gap to the lower bound'
t_run "$FUSEPLAN" verify "$graph" "$T_TMP/plan.json"
t_exit 0
t_case 'the shared build is linked to libfuseplan.so'
t_run sh -c "LD_LIBRARY_PATH='$lib' ldd '$T_TMP/prog'"
t_exit 0 && t_out_has 'libfuseplan.so.'

t_case 'the example builds against libfuseplan.a'
t_run pkg-config --cflags --static --libs fuseplan
t_exit 0
static=$(sed 's/-lfuseplan\( \|$\)/ /' "$T_OUT")
# shellcheck disable=SC2086
t_run "$CC" -std=c11 "$T_TMP/prog.c" "$lib/libfuseplan.a" $static -o "$T_TMP/prog_static"
t_exit 0
t_case 'the static build runs without the shared library'
t_run "$T_TMP/prog_static" "$graph" "$T_TMP/plan2.json" 1
t_exit 0 && t_out_has 'wrote'
t_run sh -c "ldd '$T_TMP/prog_static' | grep -c libfuseplan"
t_eq 'libfuseplan in ldd' "$(cat "$T_OUT")" 0

t_case 'the soname is versioned'
so=$(ls "$lib"/libfuseplan.so.*.*.* 2>/dev/null | head -n 1)
t_true "no $lib/libfuseplan.so.N.N.N" test -n "$so"
if [ -n "$so" ] && command -v objdump >/dev/null 2>&1; then
  t_run sh -c "objdump -p '$so' | awk '/SONAME/ { print \$2 }'"
  soname=$(cat "$T_OUT")
  t_true "soname '$soname' is not libfuseplan.so.N" \
    sh -c "printf '%s\n' '$soname' | grep -qx 'libfuseplan\.so\.[0-9][0-9]*'"
  t_true "the soname $soname is not installed" test -e "$lib/$soname"
fi

t_case 'exported symbols: the fp_ functions of the installed headers'
if [ -n "$so" ] && command -v nm >/dev/null 2>&1; then
  nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' |
    LC_ALL=C sort -u >"$T_TMP/exported"
  cat "$inc/fuseplan.h" "$inc"/fuseplan/*/*.h | grep -o '\bfp_[a-z0-9_]*(' |
    tr -d '(' | LC_ALL=C sort -u >"$T_TMP/declared"
  t_eq 'exported but not declared' \
    "$(LC_ALL=C comm -23 "$T_TMP/exported" "$T_TMP/declared")" ''
  t_eq 'declared but not exported' \
    "$(LC_ALL=C comm -13 "$T_TMP/exported" "$T_TMP/declared")" ''
  t_true 'fp_version is exported' grep -qx fp_version "$T_TMP/exported"
  t_false 'an internal helper (fp_strmap_get) is exported' \
    grep -qx fp_strmap_get "$T_TMP/exported"
fi

t_case 'the headers: fuseplan.h and its modules, nothing internal'
t_true 'fuseplan.h' test -f "$inc/fuseplan.h"
for h in model/status.h model/graph.h model/plan.h model/eval.h \
  model/json.h solver/solver.h heuristics/heuristics.h; do
  t_true "fuseplan/$h" test -f "$inc/fuseplan/$h"
done
for h in model/graph_internal.h model/json_util.h model/strmap.h \
  solver/mip/ilp_model.h solver/mip/mip.h gen/generate.h; do
  t_false "internal header fuseplan/$h is installed" test -e "$inc/fuseplan/$h"
done

t_case 'manual pages and completion'
t_true 'man1/fuseplan.1' test -f "$DESTDIR$mandir/man1/fuseplan.1"
t_true 'man5/fuseplan-formats.5' test -f "$DESTDIR$mandir/man5/fuseplan-formats.5"
t_true 'bash completion' test -f "$DESTDIR$bashcompletiondir/fuseplan"
if command -v bash >/dev/null 2>&1; then
  t_true 'the completion parses' bash -n "$DESTDIR$bashcompletiondir/fuseplan"
fi

t_finish
