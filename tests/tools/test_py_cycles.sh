#!/bin/sh
# test_py_cycles.sh -- the Python plug-in (tools/fuseplan_inductor) has no
# import circle between its modules, the rule test_no_cycles.sh holds for
# the C files.  Module A depends on module B when A imports B anywhere:
# at the top, inside a function (a deferred import still ties the two
# files together) or under TYPE_CHECKING.  A circle (a strongly connected
# component of two or more modules) fails the test, printing its modules.
#
# The checker first runs on a made-up package with a circle through a
# function-level import and must find it, so a checker that finds nothing
# cannot pass.  Needs python3 (no torch).

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "no $PY"; exit 99; }
T=$(mktemp -d) || exit 99
trap 'rm -rf "$T"' EXIT

cat >"$T/cycles.py" <<'PYEOF'
import ast
import pathlib
import sys


def deps(pkg: pathlib.Path) -> dict[str, set[str]]:
    mods = {p.stem for p in pkg.glob("*.py")}
    out: dict[str, set[str]] = {}
    for p in sorted(pkg.glob("*.py")):
        edges = set()
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module:
                    edges.add(node.module.split(".")[0])
                elif node.level == 1:
                    edges.update(a.name for a in node.names)
                elif node.module and node.module.startswith(pkg.name + "."):
                    edges.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith(pkg.name + "."):
                        edges.add(a.name.split(".")[1])
        out[p.stem] = {e for e in edges if e in mods and e != p.stem}
    return out


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


pkg = pathlib.Path(sys.argv[1])
g = deps(pkg)
for c in circles(g):
    inner = [f"{a} -> {b}" for a in c for b in sorted(g[a]) if b in c]
    print(f"{pkg.name}: import circle: {', '.join(c)} ({'; '.join(inner)})")
sys.exit(1 if circles(g) else 0)
PYEOF

fail=0
# The self-check: a circle through a deferred import must be found.
mkdir -p "$T/pkg"
printf 'from . import b\n' >"$T/pkg/a.py"
printf 'def f():\n    from .c import x\n    return x\n' >"$T/pkg/b.py"
printf 'import pkg.a\nx = 1\n' >"$T/pkg/c.py"
printf 'from .a import b\n' >"$T/pkg/d.py"
if out=$("$PY" "$T/cycles.py" "$T/pkg"); then
  echo "FAIL: the checker missed the circle a -> b -> c -> a"
  fail=1
elif ! echo "$out" | grep -q "import circle: a, b, c "; then
  echo "FAIL: the checker reported the wrong circle: $out"
  fail=1
fi

if ! "$PY" "$T/cycles.py" "$top_srcdir/tools/fuseplan_inductor"; then
  echo "FAIL: tools/fuseplan_inductor has an import circle (above)"
  fail=1
fi
[ "$fail" = 0 ] && echo "PASS: no import circle in tools/fuseplan_inductor"
exit "$fail"
