#!/bin/sh
# data/gold/emittable.sh -- how many plans of a gold dataset built from an
# older export of the corpus are still legal (emittable) under the graphs
# as they are now, for data/gold/README.md.
#
# Usage: data/gold/emittable.sh OLD_GOLD_DIR OLD_GRAPHS_DIR [FUSEPLAN]
#   OLD_GOLD_DIR    a dataset of `fuseplan batch --manifest data/gold/manifest`
#                   built from the older graphs (its index.jsonl and plans/)
#   OLD_GRAPHS_DIR  those older graphs (e.g. `git archive COMMIT data/graphs`)
#   FUSEPLAN        the binary (default: build/fuseplan of the source tree)
#
# Each item's plan is checked with `fuseplan verify` against today's graph
# of the same file name.  A cut's plan covers its nodes only: its groups
# are put in place of the cut's first node, every other node stays alone in
# listed order; a path between two nodes of a cut runs inside the cut (its
# nodes are consecutive), so the whole plan is legal exactly when the cut's
# plan is.  Node names are matched; an item with a node that today's graph
# lacks, or whose node there is another operation (its kind or buffer
# sizes differ: the export numbers nodes afresh), is
# counted apart: the graph changed under it.  Prints the counts, per graph and per broken rule.
# Needs python3; about a minute for the 966 items on 2 cores.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || {
  echo "usage: $0 OLD_GOLD_DIR OLD_GRAPHS_DIR [FUSEPLAN]" >&2
  exit 2
}
python3 - "$1" "$2" "$top/data/graphs" "${3:-$top/build/fuseplan}" <<'EOF'
import collections, gzip, json, os, re, subprocess, sys, tempfile

gold, old_graphs, graphs, fp = sys.argv[1:5]


def signatures(path):
    """Each node's operation, as far as fuseplan sees it: its kind and the
    sizes of the buffers it reads and writes (not its iteration space,
    which the exporter may rewrite: a rule, not the operation)."""
    g = json.load(gzip.open(path))
    size = {b["name"]: b["bytes"] for b in g["buffers"]}
    name = lambda r: r["buffer"] if isinstance(r, dict) else r  # noqa: E731
    return {n["name"]: (n["kind"],
                        sorted(size[name(r)] for r in n["reads"]),
                        sorted(size[name(w)] for w in n["writes"])) for n in g["nodes"]}


cache, old, count = {}, {}, collections.Counter()
per_graph = collections.defaultdict(collections.Counter)
rules = collections.Counter()
tmp = tempfile.mkdtemp()
for line in open(os.path.join(gold, "index.jsonl")):
    it = json.loads(line)
    src = os.path.basename(it["source"])
    path = os.path.join(graphs, src)
    if path not in cache:
        cache[path] = signatures(path)
        old[path] = signatures(os.path.join(old_graphs, src))
    names = list(cache[path])
    groups = json.load(gzip.open(os.path.join(gold, it["plan"])))["groups"]
    kind = "gold" if it.get("gold") else "not gold"
    base = src.replace(".json.gz", "")
    members = {n for grp in groups for n in grp}
    if any(n not in cache[path] or cache[path][n] != old[path][n] for n in members):
        count[kind + ": the graph changed under it"] += 1
        per_graph[base]["changed"] += 1
        continue
    first = min(names.index(n) for n in members)
    rest = [n for n in names if n not in members]
    k = sum(1 for n in names[:first] if n not in members)
    whole = [[n] for n in rest[:k]] + groups + [[n] for n in rest[k:]]
    plan = os.path.join(tmp, "plan.json")
    with open(plan, "w") as f:
        json.dump({"format": "fuseplan.plan", "version": 1,
                   "graph": base, "groups": whole}, f)
    r = subprocess.run([fp, "verify", path, plan], capture_output=True, text=True)
    if r.returncode == 0:
        count[kind + ": legal"] += 1
        per_graph[base]["legal"] += 1
        continue
    count[kind + ": not legal"] += 1
    per_graph[base]["not legal"] += 1
    why = (r.stderr or r.stdout).strip().splitlines()[-1]
    why = re.sub(r"'[^']*'", "X", why.split(": ", 2)[-1])
    rules[re.sub(r"\[[0-9, ]*\]", "[..]", re.sub(r"group [0-9]+: ", "", why))] += 1
os.remove(os.path.join(tmp, "plan.json"))
os.rmdir(tmp)
for k in sorted(count):
    print(f"{k}: {count[k]}")
for b in sorted(per_graph):
    print(b, ", ".join(f"{k} {v}" for k, v in sorted(per_graph[b].items())))
for why, c in rules.most_common():
    print(f"{c} {why}")
EOF
