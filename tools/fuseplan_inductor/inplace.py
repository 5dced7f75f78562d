"""In-place pairs: where Inductor may write a kernel's output over one of
its inputs (graph format version 3, node field ``inplace``;
docs/exporter.md, "In-place pairs").

Inductor decides in ``SchedulerNode.decide_inplace_update`` (scheduler.py),
while it generates each kernel.  Some of its conditions are static (the
node, the two buffers, their layouts and sizes) and some are dynamic (no
other user of the input is still to run, how the node is fused).  The
exporter writes the pairs for which the static ones hold; fuseplan's
evaluator applies the dynamic ones to its own order and groups.
``recording`` collects what Inductor really decided for its own plan, so
the exported pairs can be checked against it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

# version of the graph format that has the node field "inplace"
VERSION = 3


def _layout_ok(sbuf):
    """The input buffer's layout allows in-place use (not NoneLayout,
    MultiOutputLayout, a mutation's layout or a communication buffer) and
    it is no output of a fallback kernel that aliases that kernel's input."""
    from torch._inductor import ir

    bad = tuple(getattr(ir, n) for n in ("NoneLayout", "MultiOutputLayout",
                                         "MutationLayoutSHOULDREMOVE", "CommBufferLayout")
                if hasattr(ir, n))
    if sbuf.node is None or isinstance(sbuf.node.get_output_spec(), bad):
        return False
    op = sbuf.defining_op
    return not (op is not None and isinstance(op.node, (ir.FallbackKernel, ir.MultiOutput))
                and len(sbuf.node.get_inputs_that_alias_output()) > 0)


def _sizes(inp, out):
    """'equal' when Inductor's allocation sizes of buffers INP and OUT are
    the same expression (same device and dtype), 'slack' when OUT is only
    statically within [0.95, 1] of INP (can_match_buffer_size's slack),
    else None."""
    from torch._inductor.codegen.wrapper import can_match_buffer_size
    from torch._inductor.utils import sympy_str
    from torch._inductor.virtualized import V

    if inp.get_device_or_error() != out.get_device_or_error() or inp.get_dtype() != out.get_dtype():
        return None
    sv = V.graph.sizevars
    a = sv.simplify(V.graph.get_allocation_storage_size(inp))
    b = sv.simplify(V.graph.get_allocation_storage_size(out))
    if sympy_str(a) == sympy_str(b):
        return "equal"
    return "slack" if can_match_buffer_size(inp, out) else None


def _writable(sbuf):
    """The output buffer SBUF may take over an input's storage: it is
    allocated by its kernel, aliases nothing and mutates nothing."""
    from torch._inductor import ir
    from torch._inductor.virtualized import V

    b = sbuf.node
    comm = getattr(ir, "CommBufferLayout", ())
    return not (not b.should_allocate() or b.get_inputs_that_alias_output()
                or b.get_mutation_names() or sbuf.get_name() in V.graph.removed_buffers
                or isinstance(b.get_output_spec(), comm))


def _node_pairs(sched, node):
    """([(read, written)] of scheduler node NODE where the static
    conditions hold with equal sizes, number of pairs with only the size
    slack)."""
    from torch._inductor import scheduler as S
    from torch._inductor.virtualized import V

    wrapper = getattr(V.graph, "wrapper_code", None)
    pairs, slack = [], 0
    for out in node.get_outputs():
        if not _writable(out):
            continue
        for read in node.read_writes.reads:
            inp = sched.name_to_donated_buffer.get(read.name) or sched.name_to_buf.get(read.name)
            if (inp is None or isinstance(inp.defining_op, S.NopKernelSchedulerNode)
                    or (wrapper is not None and not wrapper.can_reuse(inp, node))
                    or not any(u.node is node and u.can_inplace for u in inp.users or ())
                    or not _layout_ok(inp)):
                continue
            fit = _sizes(inp.node, out.node)
            if fit == "equal":
                pairs.append((inp.get_name(), out.get_name()))
            slack += fit == "slack"
    return pairs, slack


def static_pairs(sched: Any, sched_nodes: dict[str, Any],
                 graph: dict[str, Any]) -> tuple[dict[str, list[list[str]]], int]:
    """The in-place pairs of the pre-fusion graph GRAPH (a fuseplan graph
    dict; SCHED_NODES: its node names -> Inductor's scheduler nodes of
    SCHED, before fusion): {node name: [[read buffer, written buffer]]}
    for every kernel node (not extern, not a template) with a pair whose
    static conditions hold (decide_inplace_update, NodeUser.can_inplace,
    can_match_buffer_size with equal sizes), and the number of pairs left
    out because their sizes only match within Inductor's 0.95 slack.  A
    pair whose names are not the node's read and written buffers in GRAPH
    is left out.  Call inside Inductor's compilation (V.graph set)."""
    from torch._inductor import scheduler as S

    out, slack = {}, 0
    for nd in graph["nodes"]:
        sn = sched_nodes.get(nd["name"])
        if nd["kind"] == "extern" or not isinstance(sn, S.SchedulerNode) or sn.is_template():
            continue
        reads = {r if isinstance(r, str) else r["buffer"] for r in nd["reads"]}
        pairs, s = _node_pairs(sched, sn)
        slack += s
        pairs = [[r, w] for r, w in pairs if r in reads and w in nd["writes"]]
        if pairs:
            out[nd["name"]] = pairs
    return out, slack


@contextlib.contextmanager
def recording() -> Iterator[list[list[str]]]:
    """Yields a list that collects, while the block runs, every in-place
    decision Inductor's code generation makes ([input buffer, output
    buffer], from KernelArgs.make_inplace); restores it after."""
    from torch._inductor.codegen import common

    seen = []
    orig = common.KernelArgs.make_inplace

    def make_inplace(self, input_name, output_name):
        seen.append([input_name, output_name])
        return orig(self, input_name, output_name)

    common.KernelArgs.make_inplace = make_inplace
    try:
        yield seen
    finally:
        common.KernelArgs.make_inplace = orig


def annotate(graph: dict[str, Any], pairs: dict[str, list[list[str]]], slack: int,
             decided: list[list[str]] | None) -> None:
    """Writes PAIRS (static_pairs) into GRAPH's nodes as their ``inplace``
    field, and sets the version to VERSION when any node has one; records
    in meta the pair count, SLACK (pairs left out for the size slack) and,
    when known, Inductor's own in-place decisions for its plan (DECIDED,
    from recording) and how many of them are exported pairs."""
    n = 0
    for nd in graph["nodes"]:
        p = pairs.get(nd["name"])
        if p:
            nd["inplace"] = p
            n += len(p)
    if n:
        graph["version"] = max(graph.get("version", 1), VERSION)
    meta = graph.setdefault("meta", {})
    meta["inplace_pairs"] = n
    meta["inplace_size_slack"] = slack
    if decided is not None:
        exported = {tuple(p) for ps in pairs.values() for p in ps}
        meta["inductor_inplace"] = decided
        meta["inductor_inplace_exported"] = sum(1 for p in decided if tuple(p) in exported)


def _old_versions(graph, mutations, bufs):
    """{new version: old version} of MUTATIONS ({new buffer: the real name
    it mutates}, Scheduler.mutation_real_name) in GRAPH: the one buffer the
    mutating node reads that holds the old value (the real buffer or an
    earlier version of it), of the new version's bytes.  A mutation with
    no such buffer, or several, is left out."""
    writer = {w: nd for nd in graph["nodes"] for w in nd["writes"]}
    old_of = {}
    for new, real in mutations.items():
        nd = writer.get(new)
        if nd is None or new not in bufs:
            continue
        reads = {r if isinstance(r, str) else r["buffer"] for r in nd["reads"]}
        old = [r for r in reads if r in bufs and (r == real or mutations.get(r) == real)]
        if len(old) == 1 and bufs[old[0]]["bytes"] == bufs[new]["bytes"]:
            old_of[new] = (nd, old[0])
    return old_of


def mutation_pairs(graph: dict[str, Any], mutations: dict[str, str],
                   pairs: dict[str, list[list[str]]]) -> set[str]:
    """Makes each mutation of GRAPH one storage (docs/exporter.md,
    "Mutations"): the mutating node gets the in-place pair [old version,
    new version], added to PAIRS ({node: pairs}, static_pairs); a mutated
    graph input whose new version is an output becomes freeable (it dies
    with its last reader of the old value, the mutating node at the
    latest), and an earlier version of it that a later mutation takes over
    is no longer an output, nor is a mutated buffer that the graph returns
    by its real name (its new version is).  MUTATIONS: {new buffer: real
    name}.  Edits GRAPH and PAIRS in place; returns the names of the
    inputs made freeable.  A mutation whose node already lists a pair on its old
    version is left as it is (the loader's star rule)."""
    bufs = {b["name"]: b for b in graph["buffers"]}
    outs = graph["outputs"]
    freed = set()
    for new, (nd, old) in _old_versions(graph, mutations, bufs).items():
        mine = pairs.setdefault(nd["name"], [])
        if any(p[0] == old for p in mine):
            continue
        b = bufs[old]
        if b.get("input"):
            if new not in outs or old in outs:
                continue
            if not b.get("freeable"):
                b["freeable"] = True
                freed.add(old)
        elif old in outs and new in outs:
            if old in mutations:
                outs.remove(old)  # the later version is the state that persists
        elif old in outs:
            # the graph returns the buffer by its real name, whose storage
            # holds the new version (an embedding's gradient, zero-filled
            # and then accumulated into): the old version is no output
            outs[outs.index(old)] = new
        mine.append([old, new])
    for k in [k for k, v in pairs.items() if not v]:
        del pairs[k]
    return freed
