"""The pre-fusion graph: Inductor's scheduler nodes as a fuseplan graph.

``capture`` maps the scheduler's nodes, just before fusion, to the fuseplan
graph format (docs/exporter.md has the mapping).  The exporter writes that
graph; the plan applier (apply.py) rebuilds it at compile time and matches
it to a plan by ``fingerprint``: a hash of the graph's content in order, so
that a plan is applied only to the graph it was made for.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from . import loops


def _prod(xs):
    """Product of a size tuple (CPU groups); a number passes through (Triton
    groups are already products)."""
    if not isinstance(xs, (tuple, list)):
        return int(xs)
    p = 1
    for x in xs:
        p *= int(x)
    return p


class PreFusion:
    """One compiled graph's pre-fusion state."""

    def __init__(self) -> None:
        self.graph = None  # fuseplan graph dict (name still None)
        self.fingerprint = None
        self.sched_nodes = {}  # exported node name -> scheduler node
        self.nonfreeable = set()
        self.mutations = {}
        self.concat = {}
        self.pre_fusion_count = 0
        self.meta = {}


def fingerprint(graph: dict[str, Any]) -> str:
    """Stable hash of a fuseplan graph dict: buffer names, bytes and flags,
    node names, kinds, iteration spaces, reads and writes, and the outputs,
    all in order.  Inductor's own iteration spaces are hashed (a node's
    ``inductor_iter`` when the exporter rewrote ``iter``), so the exported
    file and the graph rebuilt at compile time agree.  Returns
    "sha256:" + 24 hex digits."""
    nodes = []
    for nd in graph["nodes"]:
        nodes.append([nd["name"], nd["kind"], nd.get("inductor_iter", nd.get("iter")),
                      nd["reads"], nd["writes"]])
    bufs = [[b["name"], b["bytes"], bool(b.get("input")), bool(b.get("freeable"))]
            for b in graph["buffers"]]
    text = json.dumps([bufs, nodes, graph["outputs"]], separators=(",", ":"), sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:24]


def _buf_bytes(node):
    """numel x dtype size, as memory.py computes a buffer's size."""
    from torch._inductor.utils import get_dtype_size
    from torch._inductor.virtualized import V

    return int(V.graph.sizevars.optimization_hint(node.get_numel(), fallback=0)) * get_dtype_size(
        node.get_dtype()
    )


def capture(sched: Any, nodes: Sequence[Any]) -> PreFusion:
    """Builds the fuseplan graph from the pre-fusion scheduler nodes of
    ``sched`` (inside Inductor's compilation: V.graph is the graph being
    lowered).  Returns a PreFusion; raises nothing of its own."""
    pf = PreFusion()
    from torch._inductor import ir
    from torch._inductor import scheduler as S
    from torch._inductor.dependencies import StarDep, WeakDep
    from torch._inductor.utils import is_nonfreeable_buffers
    from torch._inductor.virtualized import V

    graph_inputs = V.graph.graph_inputs
    mutation_real_name = dict(sched.mutation_real_name)

    def is_multi_output(n):
        return isinstance(n, S.ExternKernelSchedulerNode) and isinstance(n.node, ir.MultiOutput)

    # 1. nop nodes and MultiOutput nodes are folded away.
    #    alias[buf] = list of buffers a read of buf stands for.
    alias = {}
    writer_override = {}  # MultiOutput buffer -> node name of the kernel that makes it
    dropped = set()
    for n in nodes:
        if isinstance(n, S.NopKernelSchedulerNode):
            srcs = []
            for d in n.read_writes.reads:
                if not isinstance(d, WeakDep):
                    srcs.append(d.name)
            for b in n.get_outputs():
                alias[b.get_name()] = srcs
            dropped.add(n.get_name())
        elif is_multi_output(n):
            src = [d.name for d in n.read_writes.reads if not isinstance(d, WeakDep)]
            dropped.add(n.get_name())
            for b in n.get_outputs():
                writer_override[b.get_name()] = src[0] if src else None

    def resolve(name, seen=()):
        if name in alias and name not in seen:
            out = []
            for s in alias[name]:
                out.extend(resolve(s, seen + (name,)))
            return out
        return [name]

    # owner of a MultiOutput buffer: the writer of the MultiOutputLayout buffer
    buf_writer = {}
    for n in nodes:
        for b in n.get_outputs():
            buf_writer[b.get_name()] = n.get_name()

    def owner(bufname, depth=0):
        src = writer_override[bufname]
        w = buf_writer.get(src)
        if src in writer_override and depth < 16:
            return owner(src, depth + 1)
        return w

    # 2. buffers
    buffers = {}  # name -> dict
    order = []

    def add_buffer(name, nbytes, **flags):
        if name not in buffers:
            buffers[name] = {"name": name, "bytes": int(nbytes), **flags}
            order.append(name)

    read_names = set()
    for n in nodes:
        if n.get_name() in dropped:
            continue
        for d in n.read_writes.reads:
            if isinstance(d, WeakDep) and d.is_fake:
                continue
            for r in resolve(d.name):
                read_names.add(r)
    outputs_raw = list(V.graph.get_output_names())
    outputs = []
    for o in outputs_raw:
        outputs.extend(resolve(o))

    nonfreeable_names = set()
    for name, box in graph_inputs.items():
        if not isinstance(box, ir.TensorBox) and not hasattr(box, "get_numel"):
            continue
        try:
            nbytes = _buf_bytes(box)
        except Exception:  # noqa: BLE001 (symbolic or non-tensor input)
            continue
        nf = is_nonfreeable_buffers(StarDep(name))
        if nf:
            nonfreeable_names.add(name)
        if nf and name in read_names or name in outputs:
            add_buffer(name, nbytes, input=True, **({} if nf else {"freeable": True}))
        else:
            # read by nobody (or a graph-owned input): Inductor never counts it
            add_buffer(name, nbytes, input=True, freeable=True)
    for name, t in V.graph.constants.items():
        add_buffer(name, t.numel() * t.element_size(), input=True)

    multi_layout = set()
    mutation_info = {}
    for n in nodes:
        for b in n.get_outputs():
            bn = b.get_name()
            lay = b.node.layout
            if isinstance(lay, ir.MultiOutputLayout):
                multi_layout.add(bn)
                add_buffer(bn, 0)
            elif isinstance(lay, ir.NoneLayout):
                add_buffer(bn, 0)
            else:
                nb = _buf_bytes(b.node)
                add_buffer(bn, nb)
                if bn in mutation_real_name:
                    mutation_info[bn] = mutation_real_name[bn]

    # 3. nodes
    fp_nodes = []
    node_names = set()
    for n in nodes:
        name = n.get_name()
        if name in dropped:
            continue
        if isinstance(n, S.SchedulerNode) and not n.is_template():
            sizes, rsizes = n.group[1]
            if n.is_reduction():
                kind, it = "reduction", [_prod(sizes), _prod(rsizes)]
            else:
                kind, it = "pointwise", [_prod(sizes) * _prod(rsizes), 1]
            loop = loops.of_node(n, kind)
        else:
            kind, it, loop = "extern", None, None
        reads = {}
        for d in n.read_writes.reads:
            if isinstance(d, WeakDep):
                if d.is_fake:
                    continue
                nb = 0  # ordering (a read must precede a mutation): no bytes
            elif isinstance(d, StarDep):
                nb = None
            else:
                try:
                    nb = int(V.graph.get_dep_size_hint(d))
                except Exception:  # noqa: BLE001
                    nb = None
            for r in resolve(d.name):
                if r not in buffers:
                    pf.meta.setdefault("dropped_reads", []).append([name, r])
                    continue
                full = buffers[r]["bytes"]
                rb = full if nb is None or len(resolve(d.name)) > 1 else min(nb, full)
                reads[r] = max(reads.get(r, 0), rb)
        writes = [b.get_name() for b in n.get_outputs()]
        for bn in writer_override:
            if owner(bn) == name:
                writes.append(bn)
        # a MultiOutputLayout holder that only the folded MultiOutput nodes read
        writes = [w for w in writes if w not in multi_layout or w in read_names]
        if not writes:
            add_buffer(name + ".none", 0)
            writes = [name + ".none"]
        node = {"name": name, "kind": kind}
        if it is not None:
            node["iter"] = it
        if loop is not None:
            node["loop"] = loop
        node["reads"] = [
            r if rb == buffers[r]["bytes"] else {"buffer": r, "bytes": rb}
            for r, rb in reads.items()
        ]
        node["writes"] = writes
        fp_nodes.append(node)
        node_names.add(name)

    # mutation of a graph input: the new value persists (output); see exporter.md
    out_set = []
    for o in outputs:
        if o in buffers and o not in out_set:
            out_set.append(o)
    for bn, tgt in mutation_info.items():
        if tgt in graph_inputs and bn not in out_set:
            out_set.append(bn)

    # drop buffers nobody writes, reads or outputs (folded holders)
    written = {w for nd in fp_nodes for w in nd["writes"]}
    used = written | {
        r if isinstance(r, str) else r["buffer"] for nd in fp_nodes for r in nd["reads"]
    }
    used |= set(out_set)
    bufs = [buffers[b] for b in order if b in used or buffers[b].get("input")]

    pf.graph = {
        "format": "fuseplan.graph",
        "version": 3 if any("loop" in nd for nd in fp_nodes) else 1,
        "name": None,
        "max_fusion_size": 64,
        "buffers": bufs,
        "nodes": fp_nodes,
        "outputs": out_set,
        "unfusible": [],
    }
    pf.sched_nodes = {n.get_name(): n for n in nodes if n.get_name() not in dropped}
    pf.nonfreeable = nonfreeable_names
    pf.mutations = mutation_info
    pf.concat = {k: v for k, v in alias.items()}
    pf.pre_fusion_count = len(nodes)
    pf.fingerprint = fingerprint(pf.graph)
    return pf
