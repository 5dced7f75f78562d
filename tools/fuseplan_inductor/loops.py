"""Loop nests of exported nodes: graph format 3's node field ``loop``.

Inductor's C++ scheduling compares loop-size tuples, not element counts
(docs/exporter.md, "What Inductor fuses"): a column reduction over
(768,) x (98,) and a pointwise node over (2, 49, 768) cover the same
75264 elements and are no kernel.  The exporter writes each node's loops,
``[[sizes...], [reduction sizes...]]`` from ``SchedulerNode.group[1]``,
and fuseplan applies the rule of docs/cost-model.md ("Loop nests"), which
``fuse`` repeats here for the exporter's own checks.  The Triton
scheduling's groups are the products ``(numel, rnumel)`` that ``iter``
already holds, so its nodes get no ``loop``.
"""

from __future__ import annotations

from typing import Any

MAX_DIMS = 8  # FP_MAX_LOOP_DIMS: sizes of one loop nest, both lists together


def of_node(snode: Any, kind: str) -> list[list[int]] | None:
    """The ``loop`` of a pre-fusion SchedulerNode of kind KIND ("pointwise"
    or "reduction"), or None: a Triton group (products, not tuples), a
    symbolic size, or more than MAX_DIMS sizes.  A pointwise node with
    reduction sizes runs them as loops (its ``iter`` is their product)."""
    sizes, rsizes = snode.group[1]
    if not isinstance(sizes, (tuple, list)) or not isinstance(rsizes, (tuple, list)):
        return None
    try:
        s, r = [int(x) for x in sizes], [int(x) for x in rsizes]
    except TypeError:  # a symbolic size
        return None
    if kind != "reduction":
        s, r = s + r, []
    elif not r:
        return None
    if len(s) + len(r) > MAX_DIMS or any(x < 1 for x in s + r):
        return None
    return [s, r]


def _input_space(p: dict[str, Any], q: dict[str, Any]) -> bool:
    """Whether pointwise P loops over reduction Q's sizes then reduction
    sizes (Inductor's COMPATIBLE_REDUCTION)."""
    return (p["kind"] == "pointwise" and q["kind"] == "reduction"
            and p["loop"][0] == q["loop"][0] + q["loop"][1])


def _prefix(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether the shorter loop of A and B is a non-empty prefix of the
    other (outer-loop fusion)."""
    x, y = a["loop"][0], b["loop"][0]
    d = min(len(x), len(y))
    return d >= 1 and x[:d] == y[:d]


def fuse(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """fuseplan's loop rule on two non-extern nodes whose iteration spaces
    already pass the sizes rule (model/graph.c, loops_fuse): true when
    either has no loop; else equal loops, a pointwise node over a
    reduction's loops and reduction sizes, two pointwise nodes one of them
    one-dimensional, or, with a reduction, a shared outer loop."""
    if "loop" not in a or "loop" not in b or a["loop"] == b["loop"]:
        return True
    if _input_space(a, b) or _input_space(b, a):
        return True
    if a["kind"] == "pointwise" and b["kind"] == "pointwise":
        return len(a["loop"][0]) <= 1 or len(b["loop"][0]) <= 1
    return _prefix(a, b)


def outer_only(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether A and B pass ``fuse`` only by a shared outer loop, which
    Inductor fuses only vertically (can_fuse_vertical_outer_loop)."""
    if "loop" not in a or "loop" not in b or a["loop"] == b["loop"]:
        return False
    if _input_space(a, b) or _input_space(b, a):
        return False
    if a["kind"] == "pointwise" and b["kind"] == "pointwise":
        return False
    return _prefix(a, b)


def rewrite(members: list[dict[str, Any]], rep: dict[str, Any]) -> int:
    """Gives the members of a group whose iteration spaces were rewritten
    to REP's (the exporter's iteration-space rewrite) REP's loops too: a
    reduction REP's loop for reductions, its sizes then reduction sizes for
    pointwise nodes; without a loop on REP, or past MAX_DIMS, none.  The
    original is kept in ``inductor_loop``.  Returns the loops changed."""
    loop = rep.get("loop")
    changed = 0
    for m in members:
        if loop is None:
            new = None
        elif m["kind"] == "reduction":
            new = loop if rep["kind"] == "reduction" else None
        else:
            new = [loop[0] + loop[1], []]
        if m.get("loop") == new:
            continue
        if "loop" in m:
            m.setdefault("inductor_loop", m["loop"])
            del m["loop"]
        if new is not None:
            m["loop"] = [list(new[0]), list(new[1])]
        changed += 1
    return changed


def independent_outer_pairs(graph: dict[str, Any], desc: dict[str, int],
                            pos: dict[str, int], same_group: dict[str, int],
                            sizes_ok: Any) -> list[list[str]]:
    """The pairs [u, v] (u first in program order) that fuseplan's rules
    allow only by a shared outer loop although neither node depends on the
    other (DESC: node -> bit mask of its descendants' positions POS), and
    that Inductor's plan does not put together (SAME_GROUP: node -> group
    index).  Inductor fuses such a pair only vertically; listed unfusible,
    they keep fuseplan from fusing it horizontally.  SIZES_OK(a, b): the
    sizes rule with the loop rule (the pair must pass it)."""
    buckets: dict[int, list[dict[str, Any]]] = {}
    for nd in graph["nodes"]:
        if nd["kind"] != "extern" and nd.get("loop") and nd["loop"][0]:
            buckets.setdefault(nd["loop"][0][0], []).append(nd)
    out = []
    for nodes in buckets.values():
        reds = [nd for nd in nodes if nd["kind"] == "reduction"]
        for r in reds:
            for o in nodes:
                u, v = sorted((r["name"], o["name"]), key=pos.get)
                if u == v or (o["kind"] == "reduction" and o["name"] < r["name"]):
                    continue  # each pair of reductions once
                if same_group[u] == same_group[v] or desc[u] >> pos[v] & 1:
                    continue
                if outer_only(r, o) and sizes_ok(r, o):
                    out.append([u, v])
    return sorted(out, key=lambda p: (pos[p[0]], pos[p[1]]))
