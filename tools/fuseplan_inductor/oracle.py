"""The exporter's oracle check: groups larger than pairs, asked of Inductor.

fuseplan's legality is pairwise (iteration spaces, ``unfusible`` pairs,
dependency order); Inductor's is not (docs/exporter.md, "What Inductor
fuses").  ``probe`` samples random groups of 2-6 nodes that the pairwise
rules allow, connected ones (grown along shared buffers) and others, and
asks Inductor's scheduler whether each one becomes one kernel;
``summarize`` keeps the groups that the exported graph's rules call legal
and counts those Inductor refuses.  docs/exporter.md documents the record
(the graph's ``meta.oracle``).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Sequence
from typing import Any

DEFAULT_SAMPLES = 500
MAX_DISAGREEMENTS_LISTED = 50


def _buffers(node: dict[str, Any]) -> set[str]:
    """The buffers a fuseplan node reads or writes."""
    reads = {r if isinstance(r, str) else r["buffer"] for r in node["reads"]}
    return reads | set(node["writes"])


class Rules:
    """fuseplan's legality of one group on one graph dict: no extern node,
    every pair compatible and not unfusible, every linked pair with one of
    its linkers (the graph's ``linked``), at most max_fusion_size nodes,
    and convex (no path leaves the group and comes back), which is what
    dependency order asks of a group whose other nodes stay alone."""

    def __init__(self, graph: dict[str, Any], compatible: Callable[[dict, dict], bool],
                 unfusible: set[tuple[str, str]]) -> None:
        nodes = graph["nodes"]
        self.byname = {nd["name"]: nd for nd in nodes}
        self.pos = {nd["name"]: i for i, nd in enumerate(nodes)}
        self.compatible = compatible
        self.unfusible = unfusible
        self.max_size = graph.get("max_fusion_size", 64)
        self.linked = [(a, b, frozenset(via)) for a, b, via in graph.get("linked", [])]
        writer = {w: nd["name"] for nd in nodes for w in nd["writes"]}
        succ = {nd["name"]: set() for nd in nodes}
        for nd in nodes:
            for b in _buffers(nd) - set(nd["writes"]):
                if b in writer and writer[b] != nd["name"]:
                    succ[writer[b]].add(nd["name"])
        # reachability as bit masks over program positions (nodes are in
        # program order, so one backward sweep and one forward sweep)
        self.desc = {}
        for nd in reversed(nodes):
            m = 0
            for v in succ[nd["name"]]:
                m |= self.desc[v] | (1 << self.pos[v])
            self.desc[nd["name"]] = m
        pred = {nd["name"]: set() for nd in nodes}
        for u, vs in succ.items():
            for v in vs:
                pred[v].add(u)
        self.anc = {}
        for nd in nodes:
            m = 0
            for u in pred[nd["name"]]:
                m |= self.anc[u] | (1 << self.pos[u])
            self.anc[nd["name"]] = m
        # nodes that share a buffer (the adjacency connected groups grow on)
        users = {}
        for nd in nodes:
            if nd["kind"] != "extern":
                for b in _buffers(nd):
                    users.setdefault(b, []).append(nd["name"])
        self.near = {nd["name"]: set() for nd in nodes}
        for us in users.values():
            for u in us:
                self.near[u].update(x for x in us if x != u)

    def pair_ok(self, u: str, v: str) -> bool:
        """Whether u and v may share a group (extern, compatibility, unfusible)."""
        a, b = self.byname[u], self.byname[v]
        if a["kind"] == "extern" or b["kind"] == "extern":
            return False
        if (u, v) in self.unfusible or (v, u) in self.unfusible:
            return False
        return self.compatible(a, b)

    def convex(self, group: Sequence[str]) -> bool:
        """Whether no path between two members passes through a non-member."""
        g = d = a = 0
        for x in group:
            g |= 1 << self.pos[x]
            d |= self.desc[x]
            a |= self.anc[x]
        return (d & a) & ~g == 0

    def linked_ok(self, group: Sequence[str]) -> bool:
        """Whether every linked pair in the group has one of its linkers
        in it too (graph format 3's ``linked``, docs/formats.md)."""
        members = set(group)
        return all(not (a in members and b in members) or (via & members)
                   for a, b, via in self.linked)

    def legal(self, group: Sequence[str]) -> bool:
        """Whether the group is legal under fuseplan's rules."""
        if len(group) > self.max_size or len(set(group)) != len(group):
            return False
        for i, u in enumerate(group):
            for v in group[i + 1:]:
                if not self.pair_ok(u, v):
                    return False
        return self.convex(group) and self.linked_ok(group)

    def connected(self, group: Sequence[str]) -> bool:
        """Whether the group is connected by shared buffers."""
        todo, seen = [group[0]], {group[0]}
        while todo:
            x = todo.pop()
            for y in self.near[x] & set(group):
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return len(seen) == len(group)


def _grow(rules: Rules, rng: random.Random, seeds: list[str], connected: bool) -> list[str]:
    """One random group of 2-6 nodes, legal under RULES (possibly shorter
    than aimed at; a single node when nothing can join it).  Connected
    groups grow along shared buffers, the others take nodes within 64
    program positions of the first (Inductor's horizontal distance)."""
    size = rng.randint(2, 6)
    group = [rng.choice(seeds)]
    names = list(rules.byname)
    for _ in range(8 * size):
        if len(group) == size:
            break
        if connected:
            pool = sorted(rules.near[rng.choice(group)] - set(group))
        else:
            p = rules.pos[group[0]]
            pool = names[max(0, p - 64): p + 65]
        if not pool:
            continue
        c = rng.choice(pool)
        if c in group or not all(rules.pair_ok(c, x) for x in group):
            continue
        if rules.convex(group + [c]):
            group.append(c)
    return sorted(group, key=rules.pos.get)


def _all_groups(rules: Rules, seeds: list[str], limit: int) -> list[list[str]] | None:
    """Every legal group of 2-6 nodes in program order, or None when there
    are more than LIMIT or the search visits more than 1,000 x LIMIT
    pairwise-compatible sets (most of them not convex: many nodes of one
    iteration space); then they are sampled."""
    out = []
    budget = [1000 * limit]

    def extend(group, start):
        budget[0] -= 1
        if budget[0] < 0:
            return False
        if len(group) >= 2 and rules.convex(group) and rules.linked_ok(group):
            out.append(list(group))
            if len(out) > limit:
                return False
        if len(group) == 6:
            return True
        for i in range(start, len(seeds)):
            c = seeds[i]
            if all(rules.pair_ok(c, x) for x in group):
                group.append(c)
                ok = extend(group, i + 1)
                group.pop()
                if not ok:
                    return False
        return True

    return out if extend([], 0) else None


def sample_groups(rules: Rules, count: int, seed: int = 0) -> list[list[str]]:
    """COUNT distinct legal groups of 2-6 nodes, half grown along shared
    buffers, half not (deterministic for a seed); every legal group when a
    graph has at most COUNT of them (a small graph such as ``tiny``)."""
    rng = random.Random(seed)
    seeds = [n for n, nd in rules.byname.items() if nd["kind"] != "extern"]
    seeds.sort(key=rules.pos.get)
    everything = _all_groups(rules, seeds, count)
    if everything is not None:
        return everything
    out, seen = [], set()
    for attempt in range(40 * count):
        if len(out) >= count:
            break
        g = _grow(rules, rng, seeds, connected=attempt % 2 == 0)
        if len(g) >= 2 and tuple(g) not in seen and rules.linked_ok(g):
            seen.add(tuple(g))
            out.append(g)
    return out


def _shares(a: Any, b: Any) -> bool:
    """Whether two scheduler nodes (fused or not) touch a common buffer."""
    return bool(a.read_writes.buffer_names() & b.read_writes.buffer_names())


def _pair_fuses(sched: Any, a: Any, b: Any) -> Any:
    """Inductor's verdict on two parts of a group, A before B in program
    order: the scheduler's can_fuse when they share a buffer (as the
    exporter's pair verdicts), else the backend's own legality (the
    shared-data heuristic would refuse any such pair).  Returns the fused
    node made by the backend, or None."""
    backend = sched.get_backend(a.get_device())
    vertical = bool(a.get_operation_names() & b.ancestors)
    orders = [(a, b)] if vertical else [(a, b), (b, a)]
    for x, y in orders:
        try:
            if _shares(x, y):
                ok = sched.can_fuse(x, y, check_cycle=False)
            elif vertical:
                ok = backend.can_fuse_vertical(x, y)
            else:
                ok = backend.can_fuse_horizontal(x, y)
            if ok:
                return backend.fuse(x, y)
        except Exception:  # noqa: BLE001 (the backend cannot judge or fuse it)
            continue
    return None


def snapshot(snodes: Any) -> list[tuple[Any, Any]]:
    """The loop state of every scheduler node in SNODES that has one
    (SchedulerNode.snapshot_loop_state), to hand to restore."""
    return [(n, n.snapshot_loop_state()) for n in snodes if hasattr(n, "snapshot_loop_state")]


def restore(saved: list[tuple[Any, Any]]) -> None:
    """Puts back the loop states that snapshot took."""
    for n, st in reversed(saved):
        n.restore_loop_state(st)


def _members(part: Any) -> frozenset:
    """The node names of a part (a scheduler node or a fused one)."""
    return frozenset(n.get_name() for n in part.get_nodes())


def _merges(sched: Any, parts: list[Any], seen: set[frozenset],
            refused: set[frozenset]) -> bool:
    """Whether PARTS can be merged into one by pairwise fusions, in some
    order (depth first; SEEN: the partitions already found dead ends;
    REFUSED: the pairs of parts, by members, already refused: a pair is
    asked once per group, whatever the merges that made its parts)."""
    if len(parts) == 1:
        return True
    key = frozenset(_members(p) for p in parts)
    if key in seen:
        return False
    saved = snapshot([n for p in parts for n in p.get_nodes()])
    for i in range(len(parts)):
        for j in range(i + 1, len(parts)):
            pair = frozenset((_members(parts[i]), _members(parts[j])))
            if pair in refused:
                continue
            fused = _pair_fuses(sched, parts[i], parts[j])
            if fused is None:
                refused.add(pair)
            else:
                rest = [p for k, p in enumerate(parts) if k not in (i, j)]
                if _merges(sched, [fused] + rest, seen, refused):
                    return True
            restore(saved)
    seen.add(key)
    return False


def inductor_fuses(sched: Any, snodes: Sequence[Any]) -> bool:
    """Whether Inductor can merge SNODES (pre-fusion scheduler nodes in
    program order) into one kernel by pairwise fusions, as its fusion
    loop does, in some order of the merges.  Every loop mutation the
    trial makes (loop reordering, recomputed ranges) is undone."""
    saved = snapshot(snodes)
    try:
        return _merges(sched, list(snodes), set(), set())
    finally:
        restore(saved)


def prefusion_state(sched: Any, snodes: Any) -> dict[str, Any]:
    """What the oracle needs of the scheduler as it is before fusion: the
    nodes' loop states and the map from node names to fused nodes (each
    node its own), which the vertical check reads."""
    return {"loops": snapshot(snodes), "fused": dict(sched.name_to_fused_node)}


@contextlib.contextmanager
def _before_fusion(sched: Any, sched_nodes: dict[str, Any], prefusion: dict[str, Any]):
    """Puts the scheduler back as it was before fusion (PREFUSION, from
    prefusion_state) for the body, then as Inductor left it."""
    after = snapshot(sched_nodes.values())
    fused_after, memory_after = sched.name_to_fused_node, sched._fusion_memory_state
    restore(prefusion["loops"])
    # no fusion-round memory state: as for the exporter's pair verdicts
    sched.name_to_fused_node, sched._fusion_memory_state = dict(prefusion["fused"]), None
    try:
        yield
    finally:
        sched.name_to_fused_node, sched._fusion_memory_state = fused_after, memory_after
        restore(after)


def probe(sched: Any, graph: dict[str, Any], sched_nodes: dict[str, Any],
          prefusion: dict[str, Any], compatible: Callable[[dict, dict], bool],
          count: int = DEFAULT_SAMPLES, seed: int = 0) -> list[tuple[list[str], bool]]:
    """Samples groups that GRAPH's rules (its iteration spaces, unfusible
    and linked pairs, max_fusion_size) call legal and asks Inductor about
    each, with the scheduler as it was before fusion (PREFUSION, from
    prefusion_state); called once Inductor's own fusion is done, the
    scheduler is left as Inductor left it.  Returns [(group, fuses)].
    Raises nothing of its own."""
    rules = Rules(graph, compatible, {tuple(p) for p in graph.get("unfusible", [])})
    groups = sample_groups(rules, count, seed)
    with _before_fusion(sched, sched_nodes, prefusion):
        return [(g, inductor_fuses(sched, [sched_nodes[x] for x in g])) for g in groups]


def linked_pairs(sched: Any, groups: Sequence[Sequence[str]], sched_nodes: dict[str, Any],
                 prefusion: dict[str, Any], pos: dict[str, int],
                 verdicts: dict[tuple[str, str], bool]) -> list[list[Any]]:
    """The linked pairs of Inductor's plan (GROUPS, lists of node names):
    the pairs (u, v) of one group of 3 or more nodes that Inductor does
    not fuse alone, each with its linkers, the other members c of the
    group such that Inductor fuses {u, v, c}.  When no single one does,
    the pair gets one entry [u, v, [c]] for each member c it needs
    (_linker_set), so that a group holds all of them.  A pair is
    asked with inductor_fuses, before fusion (PREFUSION), unless the
    exporter's pair verdicts (VERDICTS, keyed (u, v) in program order POS)
    already said yes.  Returns [[u, v, [c, ...]]], u before v."""
    out = []

    def fuses(names):
        return inductor_fuses(sched, [sched_nodes[x] for x in sorted(names, key=pos.get)])

    with _before_fusion(sched, sched_nodes, prefusion):
        for grp in groups:
            if len(grp) < 3:
                continue
            members = sorted(grp, key=pos.get)
            for i, u in enumerate(members):
                for v in members[i + 1:]:
                    if verdicts.get((u, v)) or fuses((u, v)):
                        continue
                    rest = [c for c in members if c not in (u, v)]
                    via = [c for c in rest if fuses((u, v, c))]
                    if via:
                        out.append([u, v, via])
                    else:
                        # no single linker: u and v need several members at
                        # once, one entry per member (each entry is a rule)
                        out.extend([u, v, [c]] for c in _linker_set(fuses, u, v, rest))
    return out


MAX_LINKER_SEARCH = 8  # members beyond which _linker_set asks no pairs


def _linker_set(fuses: Callable[[Sequence[str]], bool], u: str, v: str,
                rest: list[str]) -> list[str]:
    """The members that u and v of one of Inductor's groups need together
    when no single one links them (FUSES(names): Inductor merges them):
    the first two members of REST, in order, with which Inductor merges
    {u, v}, else all of REST (the whole group, which Inductor builds).
    Pairs are asked only when REST has at most MAX_LINKER_SEARCH members."""
    if len(rest) <= MAX_LINKER_SEARCH:
        for i, c in enumerate(rest):
            for d in rest[i + 1:]:
                if fuses((u, v, c, d)):
                    return [c, d]
    return list(rest)


def summarize(graph: dict[str, Any], probes: list[tuple[list[str], bool]],
              compatible: Callable[[dict, dict], bool]) -> dict[str, Any]:
    """The oracle record of the exported GRAPH: of the PROBES (whose groups
    are legal under the graph's rules: those that no longer are, none when
    the rules did not change after probe, are left out), how many, how many
    are connected, and the groups Inductor refuses (disagreements)."""
    rules = Rules(graph, compatible, {tuple(p) for p in graph.get("unfusible", [])})
    legal = [(g, ok) for g, ok in probes if rules.legal(g)]
    bad = [g for g, ok in legal if not ok]
    return {
        "samples": len(legal),
        "connected": sum(1 for g, _ in legal if rules.connected(g)),
        "disagreements": len(bad),
        "refused_groups": bad[:MAX_DISAGREEMENTS_LISTED],
    }


def _native_group(snode: Any) -> Any:
    """A pre-fusion scheduler node's own iteration space as its backend
    compares it (``group[1]``: loop tuples for C++, (numel, rnumel) for
    Triton), or None when it has none.  A Triton node tiled in more than
    two dimensions adds its tiling: two such nodes of equal (numel,
    rnumel) and other tilings are no kernel (tiling_prevents_pointwise_fusion)."""
    try:
        space = snode.group[1]
    except (AttributeError, TypeError, IndexError):
        return None
    if not space or isinstance(space[0], (tuple, list)) or not hasattr(snode, "get_tiling"):
        return space  # C++ loop tuples, or no Triton group
    try:
        tiling = snode.get_tiling(*space)
    except Exception:  # noqa: BLE001 (no tiling for this node: its space alone)
        return space
    if len(tiling) <= 2:
        return space
    return (space, tuple(sorted((str(k), str(v)) for k, v in tiling.items())))


def cross_candidates(graph: dict[str, Any], groups: Sequence[Sequence[str]],
                     sched_nodes: dict[str, Any], compatible: Callable[[dict, dict], bool],
                     known: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs (u, v), u first in program order, that GRAPH's rules call
    compatible although Inductor's own iteration spaces of u and v differ,
    that no group of Inductor's plan (GROUPS) holds, that are not in KNOWN
    (pairs already judged: those sharing a buffer or a common neighbour, and
    the listed ones).  Their verdict is the backend's alone: Inductor's
    heuristics refuse any pair that shares no buffer."""
    nodes = [nd for nd in graph["nodes"] if nd["kind"] != "extern"]
    group_of = {x: i for i, grp in enumerate(groups) for x in grp}
    space = {nd["name"]: _native_group(sched_nodes[nd["name"]]) for nd in nodes}
    out = []
    for i, a in enumerate(nodes):
        u = a["name"]
        for b in nodes[i + 1:]:
            v = b["name"]
            if space[u] == space[v] or group_of.get(u, -1) == group_of.get(v, -2):
                continue
            if (u, v) in known or not compatible(a, b):
                continue
            out.append((u, v))
    return out


def cross_pairs(sched: Any, graph: dict[str, Any], groups: Sequence[Sequence[str]],
                sched_nodes: dict[str, Any], prefusion: dict[str, Any],
                compatible: Callable[[dict, dict], bool], known: set[tuple[str, str]],
                verdict: Callable[[Any, Any, Any], bool]) -> tuple[list, list]:
    """Inductor's verdict on the pairs of cross_candidates, before fusion
    (PREFUSION): VERDICT(sched, a, b) is the backend's own legality of the
    two scheduler nodes.  A refused pair whose iteration space the exporter
    rewrote (``inductor_iter`` or ``inductor_loop``) may still join through
    a member c of its nodes' groups of Inductor's plan (a reduction whose
    space covers both); it is linked through every such c for which
    Inductor fuses {u, v, c}.  Returns (unfusible [[u, v]], linked [[u, v,
    [c, ...]]])."""
    byname = {nd["name"]: nd for nd in graph["nodes"]}
    pos = {nd["name"]: i for i, nd in enumerate(graph["nodes"])}
    group_of = {x: tuple(grp) for grp in groups for x in grp}
    cands = cross_candidates(graph, groups, sched_nodes, compatible, known)
    unf, linked = [], []
    with _before_fusion(sched, sched_nodes, prefusion):
        for u, v in cands:
            if verdict(sched, sched_nodes[u], sched_nodes[v]):
                continue
            via = []
            if any("inductor_iter" in byname[x] or "inductor_loop" in byname[x] for x in (u, v)):
                pool = [c for c in dict.fromkeys(group_of.get(u, ()) + group_of.get(v, ()))
                        if c not in (u, v)]
                for c in pool[:32]:
                    trio = sorted((u, v, c), key=pos.get)
                    if inductor_fuses(sched, [sched_nodes[x] for x in trio]):
                        via.append(c)
            if via:
                linked.append([u, v, via])
            else:
                unf.append([u, v])
    return unf, linked
