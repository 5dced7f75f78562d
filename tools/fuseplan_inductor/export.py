#!/usr/bin/env python3
"""Export PyTorch Inductor scheduler graphs, and Inductor's own plans, for fuseplan.

Compiles a model with torch.compile (Inductor backend, CPU, caches off),
runs one training step (forward, loss.backward()) and, for every graph
Inductor compiles (the AOTAutograd forward and backward graphs), writes

  OUT/<name>.<fwd|bwd>.json.gz                the pre-fusion graph (fuseplan.graph)
  OUT/<name>.<fwd|bwd>.inductor.plan.json.gz  Inductor's fused groups in its final
                                              order (fuseplan.plan)

Nothing is compiled to C++ and nothing is executed: the exporter reads the
scheduler's state in config._pre_fusion_custom_pass (the pre-fusion nodes)
and in Scheduler.codegen (the fused nodes after Inductor's peak-memory
reorder), then aborts that graph's compilation and hands AOTAutograd a
stand-in that returns uninitialised tensors of the right shapes, so that the
backward graph still gets compiled (and captured) at backward time.

The mapping from Inductor's scheduler to the fuseplan model (nop nodes,
multi-output kernels, mutations, concatenation, iteration spaces, unfusible
pairs, peak-memory estimates) is documented in docs/exporter.md.

Needs torch (and timm for timm models); not part of the C build.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

from . import inplace, loops, measure, optim, oracle, outer, prefusion, record, workspace
from .files import dump
from .models import ModelError, build_model, step_arguments
from .versions import check_torch


class _Abort(Exception):
    """Raised in Scheduler.codegen once the plan is captured."""


# --------------------------------------------------------------------------
# capture


class Capture:
    """Scheduler state of one compiled graph."""

    def __init__(self, which: str) -> None:
        self.which = which  # "fwd" or "bwd"
        self.graph = None  # fuseplan graph dict
        self.groups = None  # Inductor's plan, exported node names
        self.candidate_verdicts = None
        self.oracle_probes = None  # [(group, Inductor fuses it)], oracle.py
        self.prefusion = None  # oracle.prefusion_state, before Inductor fuses
        self.iter_rewrites = None  # _final_rules's count, once it ran
        self.fused_loops = {}  # node -> its loops after Inductor's fusion
        self.loop_rewrites = 0  # loops _final_rules changed
        self.output_strides = []
        self.emitted = None  # the kernels Inductor's code generation emits
        self.loop_snapshot = None  # the nodes' loops before Inductor fuses (oracle.snapshot)
        self.outer_splits = []  # outer-loop pairs code generation would split (outer.py)
        self.meta = {}
        self.inplace = None  # (inplace.static_pairs, Inductor's decisions) with --inplace
        self.freed_inputs = set()  # mutated inputs made freeable (inplace.mutation_pairs)
        self.t0 = time.time()

    def adopt(self, pf: prefusion.PreFusion) -> None:
        """Takes the pre-fusion graph (prefusion.PreFusion) of this graph."""
        self.graph = pf.graph
        self.sched_nodes = pf.sched_nodes
        self.nonfreeable = pf.nonfreeable
        self.mutations = pf.mutations
        self.concat = pf.concat
        self.pre_fusion_count = pf.pre_fusion_count
        self.fingerprint = pf.fingerprint
        self.meta.update(pf.meta)


@contextlib.contextmanager
def _capturing(state):
    """Installs the capture hooks for the duration of the block and yields
    the backend to hand to torch.compile; everything is restored after."""
    import torch
    import torch._inductor.config as ic
    from torch._inductor import scheduler as S
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner
    from torch._inductor.output_code import OutputCode
    from torch._inductor.utils import set_tracing_context_output_strides
    from torch._inductor.virtualized import V

    def pre_fusion(nodes):
        cap = state["current"]
        cap.adopt(prefusion.capture(V.graph.scheduler, nodes))
        if state.get("inplace"):
            pairs, slack = inplace.static_pairs(V.graph.scheduler, cap.sched_nodes, cap.graph)
            # mutations as one storage; the fingerprint stays the capture's
            cap.freed_inputs = inplace.mutation_pairs(cap.graph, cap.mutations, pairs)
            cap.inplace = ((pairs, slack), None)
        return nodes

    orig_fuse_nodes = S.Scheduler.fuse_nodes
    orig_codegen = S.Scheduler.codegen

    def fuse_nodes(self, nodes):
        # the scheduler is fully set up here (streams, mempools), still pre-fusion
        cap = state["current"]
        if cap is not None and cap.graph is not None and cap.candidate_verdicts is None:
            cap.candidate_verdicts = _candidate_verdicts(self, cap)
            cap.loop_snapshot = oracle.snapshot(cap.sched_nodes.values())
            # the linked pairs and the oracle ask Inductor in this state
            cap.prefusion = oracle.prefusion_state(self, cap.sched_nodes.values())
        return orig_fuse_nodes(self, nodes)

    def codegen(self):
        cap = state["current"]
        _capture_plan(cap, self)
        cap.fused_loops = {nd["name"]: loops.of_node(cap.sched_nodes[nd["name"]], nd["kind"])
                           for nd in cap.graph["nodes"] if "loop" in nd}
        cap.output_strides = _output_strides()
        # generate the code (nothing is compiled): the kernels Inductor
        # really emits, which may split a scheduler group (C++ outer-loop
        # fusion falls back to one loop nest per member when it cannot merge
        # the loops); the exported plan and rules follow those kernels
        try:
            with record.kernels() as rec, inplace.recording() as decided:
                orig_codegen(self)
            if cap.inplace is not None:
                cap.inplace = (cap.inplace[0], decided)
            cap.emitted = record.exported(rec, {nd["name"] for nd in cap.graph["nodes"]})
        except Exception as e:  # noqa: BLE001 (e.g. the triton scheduling without triton)
            cap.meta["inductor_codegen_error"] = f"{type(e).__name__}: {e}"[:200]
        if cap.emitted is not None and cap.loop_snapshot is not None:
            # the code is generated (and thrown away): the nodes' loops are
            # put back as they were before fusion, and code generation's
            # outer-loop check is asked about pairs of single nodes
            oracle.restore(cap.loop_snapshot)
            cap.outer_splits = outer.split_pairs(self, cap.sched_nodes)
        if cap.prefusion is not None:
            # the linked pairs of Inductor's plan, and the oracle, which
            # samples the groups that the exported rules allow, so those
            # rules are made first; both leave the nodes as they are
            cap.iter_rewrites = _final_rules(cap)
            _linked_rules(cap, self)
            if state.get("oracle", 0) > 0:
                cap.oracle_probes = oracle.probe(self, cap.graph, cap.sched_nodes,
                                                 cap.prefusion, _compatible, state["oracle"])
        raise _Abort()

    class ShapeOnly(OutputCode):
        """Stand-in for the compiled graph: uninitialised outputs of the right
        shapes and strides, so the training step proceeds without compute."""

        def __init__(self, gm, output_strides, mark):
            self.gm = gm
            self.output_strides = output_strides
            self.mark = mark  # names the graph in measure.entry_live_bytes
            self._boxed_call = True
            self._posted = False

        def post_compile(self, example_inputs, *args, **kwargs):
            # as CompiledFxGraph.post_compile does: AOTAutograd compiles the
            # backward for the forward's actual output strides (else it
            # assumes contiguous saved tensors and the backward graph gains
            # copies: the channels-last ones of a conv net, for example)
            if not self._posted:
                self._posted = True
                set_tracing_context_output_strides(example_inputs, self)

        def set_triton_bundle(self, *args, **kwargs):
            pass

        def __call__(self, inputs):
            if not state.get("marking"):
                return _stand_in_outputs(self.gm, self.output_strides, inputs)
            with torch.profiler.record_function(measure.ENTRY_MARK + self.mark):
                pass  # the moment the graph is entered
            outs = _stand_in_outputs(self.gm, self.output_strides, inputs)
            state["freed"][self.mark] = _freed_inputs(self.gm, inputs)
            return outs

    def inner(gm, example_inputs, **kwargs):
        cap = Capture(state.get("label") or ("bwd" if kwargs.get("is_backward") else "fwd"))
        state["current"] = cap
        try:
            compile_fx_inner(gm, example_inputs, **kwargs)
            raise RuntimeError("Inductor finished without reaching Scheduler.codegen")
        except Exception as e:  # noqa: BLE001
            if cap.groups is None:
                raise
            del e
        cap.meta["export_seconds"] = round(time.time() - cap.t0, 1)
        state["captures"].append(cap)
        out = ShapeOnly(gm, cap.output_strides, str(len(state["captures"]) - 1))
        out.post_compile(example_inputs)
        return out

    def backend(gm, example_inputs):
        return compile_fx(gm, example_inputs, inner_compile=inner)

    patches = {
        "fx_graph_cache": False,
        "fx_graph_remote_cache": False,
        "autotune_local_cache": False,
        "autotune_remote_cache": False,
        "reorder_for_peak_memory": True,
        "_pre_fusion_custom_pass": pre_fusion,
    }
    S.Scheduler.fuse_nodes = fuse_nodes
    S.Scheduler.codegen = codegen
    try:
        with ic.patch(patches), torch._functorch.config.patch(enable_autograd_cache=False), \
                record.hooks():
            yield backend
    finally:
        S.Scheduler.fuse_nodes = orig_fuse_nodes
        S.Scheduler.codegen = orig_codegen


def _storage_key(t):
    """An identity of T's storage (a real or a fake tensor)."""
    from torch.multiprocessing.reductions import StorageWeakRef

    return StorageWeakRef(t.untyped_storage())


def _input_storages(gm, inputs):
    """{storage key of a placeholder's example value: the real input given
    for it}: the stand-in returns an output that is (a view of) an input as
    that input, as the compiled graph does, so that the memory measured
    through the stand-ins (_entry_live) is the real run's.  A forward
    that saves a parameter for the backward, for example, allocates
    nothing for it."""
    import torch

    owner = {}
    for ph, x in zip(gm.graph.find_nodes(op="placeholder"), inputs, strict=False):
        v = ph.meta.get("val")
        if isinstance(v, torch.Tensor) and isinstance(x, torch.Tensor):
            owner.setdefault(_storage_key(v), x)
    return owner


def _freed_inputs(gm, inputs):
    """Which of GM's inputs the compiled graph really frees: the compiled
    graph clears its argument list INPUTS (`args.clear()`) and deletes each
    input after its last reader, which frees the storage only when nothing
    else holds it (AOTAutograd's backward clears the saved tensors first
    and hands over its list; a parameter, the user's input or a tangent
    that autograd still holds stays).  Clears INPUTS, as the compiled graph
    would, and returns (names of the tensor placeholders, names of those
    whose storage died with it)."""
    import torch

    refs = [(ph.target, _storage_key(x))
            for ph, x in zip(gm.graph.find_nodes(op="placeholder"), inputs, strict=False)
            if isinstance(x, torch.Tensor)]
    inputs.clear()
    return {n for n, _ in refs}, {n for n, r in refs if r.expired()}


def _extent_bytes(v, stride, offset):
    """Bytes of storage a tensor shaped like V with STRIDE and storage
    OFFSET reaches, from the start of its storage (0 for an empty one)."""
    if v.numel() == 0:
        return 0
    last = offset + sum((n - 1) * s for n, s in zip(v.shape, stride, strict=True))
    return (last + 1) * v.element_size()


def _same_layout(v, stride):
    """Whether STRIDE is V's own stride (dimensions of size 1 aside)."""
    return all(n == 1 or s == t for n, s, t in zip(v.shape, stride, v.stride(), strict=True))


def _stand_in_outputs(gm, output_strides, inputs):
    """What the stand-in of graph GM returns when called on INPUTS:
    uninitialised tensors of the outputs' shapes, dtypes and OUTPUT_STRIDES
    (Inductor's), nothing computed.  Storage is shared as the compiled
    graph shares it, so that the bytes measured through the stand-ins
    (_entry_live) are the real run's: an output that is (a view of) an
    input is that input; outputs that are views of one buffer (a forward
    saves several views of one attention buffer for the backward, say) are
    views of one allocation of that buffer's size.  An output whose
    Inductor stride is not its traced one is a copy Inductor makes (a
    weight the forward saves channels-last), its own allocation.  Raises
    what torch raises."""
    import torch

    out = next(iter(gm.graph.find_nodes(op="output"))).args[0]
    owner = _input_storages(gm, inputs)
    vals = []  # (output, fake value or None, Inductor's stride, storage key, offset)
    need = {}  # storage key of an output not owned by an input -> bytes
    for i, o in enumerate(out):
        v = o.meta.get("val") if isinstance(o, torch.fx.Node) else None
        st, k, off = None, None, 0
        if isinstance(v, torch.Tensor):
            st = output_strides[i] if i < len(output_strides) else None
            st = tuple(int(x) for x in st) if st is not None else v.stride()
            size = 0
            if _same_layout(v, st):
                k, off, size = _storage_key(v), v.storage_offset(), v.untyped_storage().nbytes()
            else:
                k = ("copy", i)
            if k not in owner:
                need[k] = max(need.get(k, size), _extent_bytes(v, st, off))
        vals.append((o, v, st, k, off))
    res = []
    for o, v, st, k, off in vals:
        if not isinstance(v, torch.Tensor):
            res.append(v if not isinstance(o, torch.fx.Node) else None)
            continue
        if k not in owner:  # the first output of this buffer allocates it
            owner[k] = torch.empty(need[k], dtype=torch.uint8, device=v.device)
        base = owner[k]
        if base.dtype == v.dtype:
            res.append(base.as_strided(v.shape, st, off))
        else:
            t = torch.empty(0, dtype=v.dtype, device=v.device)
            res.append(t.set_(base.untyped_storage(), off, v.shape, st))
    return res


def _two_hop_pairs(pairs, pos):
    """The pairs (u, v), u before v in program order (POS: node name ->
    position), of nodes that share a buffer with a common third node
    (PAIRS: the pairs that share a buffer)."""
    near = {}
    for u, v in pairs:
        near.setdefault(u, set()).add(v)
        near.setdefault(v, set()).add(u)
    out = set()
    for ns in near.values():
        ns = sorted(ns, key=pos.get)
        for i, u in enumerate(ns):
            for v in ns[i + 1:]:
                out.add((u, v))
    return out


def _backend_verdict(sched, a, b):
    """The backend's own legality of putting A and B (A first in program
    order) in one kernel: can_fuse_vertical when B depends on A, else
    can_fuse_horizontal either way.  Inductor's heuristics are left out:
    A and B share no buffer, so its shared-data threshold would refuse any
    such pair."""
    backend = sched.get_backend(a.get_device())
    try:
        # iterate over A's few names, not B's ancestors (an OrderedSet's &
        # walks its right operand): O(1), not O(graph), per pair
        if b.ancestors & a.get_operation_names():
            return bool(backend.can_fuse_vertical(a, b))
        return bool(backend.can_fuse_horizontal(a, b) or backend.can_fuse_horizontal(b, a))
    except Exception:  # noqa: BLE001 (a backend that cannot judge the pair: no verdict)
        return True


def _candidate_verdicts(sched, cap):
    """Inductor's can_fuse on every pair of non-extern nodes that share a
    buffer (writer-reader and reader-reader pairs), and the backend's own
    legality (_backend_verdict) on every pair that shares a buffer with a
    common third node.  The second kind is what pairwise verdicts miss: the
    C++ backend fuses a reduction R with a consumer P of its output by
    outer-loop fusion (their outer loops must be equal) and P with a
    pointwise Q of other loop ranges by recomputing P's ranges to Q's; R,
    P, Q is then no kernel in any order, though each pair that shares a
    buffer is one (convnext's LayerNorm: docs/inductor.md)."""
    nodes = cap.graph["nodes"]
    pos = {nd["name"]: i for i, nd in enumerate(nodes)}
    writer = {}
    readers = {}
    for nd in nodes:
        for w in nd["writes"]:
            writer[w] = nd["name"]
        for r in nd["reads"]:
            b = r if isinstance(r, str) else r["buffer"]
            readers.setdefault(b, set()).add(nd["name"])
    kinds = {nd["name"]: nd["kind"] for nd in nodes}
    pairs = set()
    for b, rs in readers.items():
        group = sorted(x for x in rs if kinds[x] != "extern")
        w = writer.get(b)
        if w is not None and kinds[w] != "extern":
            group = sorted(set(group) | {w})
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                u, v = group[i], group[j]
                if pos[u] > pos[v]:
                    u, v = v, u
                pairs.add((u, v))
    verdict = {}
    sn = cap.sched_nodes
    for u, v in sorted(_two_hop_pairs(pairs, pos) - pairs, key=lambda p: (pos[p[0]], pos[p[1]])):
        verdict[(u, v)] = _backend_verdict(sched, sn[u], sn[v])
    for u, v in sorted(pairs, key=lambda p: (pos[p[0]], pos[p[1]])):
        a, b = sn[u], sn[v]
        ok = False
        try:
            ok = bool(sched.can_fuse(a, b, check_cycle=False))
            if not ok and not (b.ancestors & a.get_operation_names()):
                ok = bool(sched.can_fuse(b, a, check_cycle=False))
        except TypeError:
            ok = bool(sched.can_fuse(a, b))
        verdict[(u, v)] = ok
    return verdict


def _output_strides():
    """The graph's output strides as Inductor's compile_fx records them
    (strings of sympy expressions; None for non-tensors)."""
    from torch._inductor.ir import IRNode
    from torch._inductor.virtualized import V
    from torch.fx.experimental.symbolic_shapes import SymExprPrinter

    p = SymExprPrinter()
    out = []
    for o in V.graph.graph_outputs or []:
        if isinstance(o, IRNode) and o.has_tensor_output():
            out.append(tuple(p.doprint(s) for s in o.get_layout().stride))
        else:
            out.append(None)
    return out


def _capture_plan(cap, sched):
    """Inductor's final groups and its own peak-memory estimate."""
    from torch._inductor import memory as M
    from torch._inductor.utils import OrderedSet
    from torch._inductor.virtualized import V

    names = {nd["name"] for nd in cap.graph["nodes"]}
    groups = []
    for fn in sched.nodes:
        g = [s.get_name() for s in fn.get_nodes() if s.get_name() in names]
        if g:
            groups.append(g)
    cap.groups = groups
    cap.final_count = len(sched.nodes)

    graph_inputs = OrderedSet(V.graph.graph_inputs.keys())
    graph_outputs = OrderedSet(V.graph.get_output_names())
    peak, freeable = M.prepare_planning_info(
        sched.nodes, sched.name_to_buf, sched.name_to_fused_node, graph_inputs, graph_outputs
    )
    cap.meta["inductor_peak_bytes"] = int(peak)
    adj, counts = _adjusted_estimate(cap, sched, freeable, graph_outputs)
    cap.meta["inductor_peak_adjusted_bytes"] = adj
    cap.meta["inductor_adjustments"] = counts


def _adjusted_estimate(cap, sched, freeable, graph_outputs):
    """Inductor's own memory timeline (memory.py) for its plan, with the
    modelling differences of docs/exporter.md taken out one by one.  Each
    edit touches only the buffers it names; everything else (sizes, steps,
    lifetimes) is Inductor's.  Returns (peak, {edit: buffers touched})."""
    from torch._inductor import memory as M

    g = cap.graph
    fp_bytes = {b["name"]: b["bytes"] for b in g["buffers"]}
    fp_out = set(g["outputs"])
    readers = {}
    for nd in g["nodes"]:
        for r in nd["reads"]:
            readers.setdefault(r if isinstance(r, str) else r["buffer"], set()).add(nd["name"])
    step_of = {}
    for t, fn in enumerate(sched.nodes):
        for s in fn.get_nodes():
            step_of[s.get_name()] = t

    def fp_end(name, start):
        if name in fp_out:
            return -1
        steps = [step_of[r] for r in readers.get(name, ()) if r in step_of]
        return max(steps) if steps else start

    infos, _, _ = M.compute_memory_timeline(sched.nodes, freeable, graph_outputs)
    counts = {"kernel_local": 0, "freeable_input_size": 0, "mutation": 0, "concat": 0}
    retime = set(cap.mutations) | {t for t in cap.mutations.values() if t in fp_bytes}
    slices = set()
    for srcs in cap.concat.values():
        slices.update(srcs)
    for bi in infos:
        b = bi.buffer
        name = b.get_name()
        if isinstance(b, M.FreeableInputBuffer):
            # (c) memory.py sizes a freeable input by the last dependency it
            # saw, which may be a partial read; fuseplan holds the whole buffer
            full = fp_bytes.get(name, bi.size_alloc)
            if full != bi.size_alloc or full != bi.size_free:
                bi.size_alloc = bi.size_free = full
                counts["freeable_input_size"] += 1
            continue
        if name in cap.concat:
            # (e) a concatenation's output is the storage its producers write
            # into: fuseplan drops it and keeps the slices live instead
            bi.size_alloc = bi.size_free = 0
            counts["concat"] += 1
            continue
        if name in retime or name in slices:
            # (d) mutations are SSA versions in fuseplan; (e) slices live as
            # long as the concatenation's readers
            if name in cap.mutations:
                bi.size_alloc = bi.size_free = fp_bytes.get(name, 0)
                counts["mutation"] += 1
            bi.end_step = fp_end(name, bi.start_step)
            continue
        if (
            not b.mpi_buffer.succ_nodes
            and name not in graph_outputs
            and readers.get(name)
            and bi.size_alloc
        ):
            # (b) a buffer consumed only inside its own fused kernel: Inductor
            # counts it at its step, fuseplan does not materialize it
            bi.size_alloc = bi.size_free = 0
            counts["kernel_local"] += 1
    for name in sorted(cap.freed_inputs):
        # (d) a mutated input that memory.py never frees: fuseplan frees it
        # with its last reader of the old value
        infos.append(M.BufferInfo(None, fp_bytes[name], fp_bytes[name], 0, fp_end(name, 0)))
    counts["mutated_input_freed"] = len(cap.freed_inputs)
    cap.timeline = (infos, len(sched.nodes), fp_end)
    return _timeline_peak(cap, counts), counts


def _timeline_peak(cap, counts):
    """The adjusted estimate of CAP's edited timeline (cap.timeline):
    memory.py's peak over it plus (a), the inputs memory.py treats as never
    freed and leaves out of its figure, which fuseplan counts at every
    step; records their bytes in COUNTS."""
    from torch._inductor import memory as M

    infos, steps, _ = cap.timeline
    peak, _ = M.peak_memory_from_buf_info_list(infos, steps)
    g = cap.graph
    fp_out = set(g["outputs"])
    resident = sum(b["bytes"] for b in g["buffers"]
                   if b.get("input") and (not b.get("freeable") or b["name"] in fp_out))
    counts["resident_input_bytes"] = resident
    return int(peak) + resident


def _inputs_as_freed(cap, measured):
    """Makes the freeable flag of each read input of CAP's graph that is
    no output what the compiled graph really does (MEASURED: _freed_inputs'
    (inputs seen, inputs freed) at the graph's entry; None leaves the
    names' flags).  memory.py decides by name (`is_nonfreeable_buffers`:
    primals_*, tangents_*), but a backward's primals_* can be a copy the
    forward made (a channels-last input or weight) that only the saved
    tensors hold, and a tangent can be one that only the argument list
    holds: the compiled graph frees those after their last reader.  The
    adjusted estimate follows (edit (f)), so that it still equals
    fuseplan's peak.  Mutated inputs made freeable (d) keep their flag."""
    if measured is None:
        return
    from torch._inductor import memory as M

    seen, freed = measured
    g = cap.graph
    infos, _, fp_end = cap.timeline
    read = {r if isinstance(r, str) else r["buffer"] for nd in g["nodes"] for r in nd["reads"]}
    skip = set(g["outputs"]) | cap.freed_inputs
    flips = {True: 0, False: 0}
    for b in g["buffers"]:
        name = b["name"]
        want = name in freed
        if (not b.get("input") or name not in seen or name not in read or name in skip
                or bool(b.get("freeable")) == want):
            continue
        flips[want] += 1
        if want:
            b["freeable"] = True
            infos.append(M.BufferInfo(None, b["bytes"], b["bytes"], 0, fp_end(name, 0)))
            continue
        del b["freeable"]
        for bi in infos:
            if isinstance(bi.buffer, M.FreeableInputBuffer) and bi.buffer.get_name() == name:
                bi.size_alloc = bi.size_free = 0
    counts = cap.meta["inductor_adjustments"]
    counts["inputs_freed_measured"], counts["inputs_held_measured"] = flips[True], flips[False]
    if flips[True] or flips[False]:
        cap.meta["inductor_peak_adjusted_bytes"] = _timeline_peak(cap, counts)


# --------------------------------------------------------------------------
# legality of Inductor's plan under the fuseplan rules


def _compatible(a, b):
    if a["kind"] == "extern" or b["kind"] == "extern":
        return False
    ia, ib = a["iter"], b["iter"]
    if ia == ib:
        return loops.fuse(a, b)
    for p, q in ((a, b), (b, a)):
        if p["kind"] == "pointwise" and p["iter"][0] in (q["iter"][0] * q["iter"][1], q["iter"][0]):
            return loops.fuse(a, b)
    return False


def codegen_splits(groups: list[list[str]],
                   emitted: list[list[str]]) -> list[list[list[str]]]:
    """The scheduler groups that code generation emitted as several
    kernels, each as its list of emitted parts."""
    kernel_of = {}
    for k, members in enumerate(emitted):
        for n in members:
            kernel_of[n] = k
    splits = []
    for grp in groups:
        ks = sorted({kernel_of.get(n, -1) for n in grp})
        if len(ks) > 1:
            splits.append([[n for n in grp if kernel_of.get(n, -1) == k] for k in ks])
    return splits


def _group_ok(members):
    """Whether every pair of MEMBERS (graph nodes) is compatible."""
    return all(_compatible(p, q) for i, p in enumerate(members) for q in members[i + 1 :])


def _fused_loops(cap, members):
    """Gives MEMBERS, a group of Inductor's plan that the loop rule refuses,
    the loops Inductor's scheduler holds after fusing them (it recomputes a
    node's loops to fuse it, see loops.py); keeps them and returns True when
    that makes the group legal, else puts the loops back."""
    old = [m.get("loop") for m in members]
    for m in members:
        new = cap.fused_loops.get(m["name"])
        if "loop" in m and new is not None and new != m["loop"]:
            m.setdefault("inductor_loop", m["loop"])
            m["loop"] = new
    if _group_ok(members):
        changed = [m for m, lp in zip(members, old, strict=True) if m.get("loop") != lp]
        cap.loop_rewrites += len(changed)
        return True
    for m, lp in zip(members, old, strict=True):
        if lp is not None:
            m["loop"] = lp
    return False


def _final_rules(cap):
    """Puts the exported rules in CAP's graph once Inductor's plan is
    captured: iteration spaces rewritten where Inductor fused what the
    pairwise rule would not allow, the unfusible pairs, max_fusion_size.
    Returns the number of iteration spaces rewritten."""
    g = cap.graph
    byname = {nd["name"]: nd for nd in g["nodes"]}
    rewritten = 0
    plan = _plan_groups(cap)
    for grp in plan:
        if len(grp) < 2:
            continue
        members = [byname[x] for x in grp]
        if _group_ok(members) or _fused_loops(cap, members):
            continue
        # Inductor fused nodes the fuseplan pairwise rule would not allow
        # (e.g. CPU outer-loop fusion): export the iteration space as
        # Inductor's fused kernel sees it, see docs/exporter.md.
        reds = [m for m in members if m["kind"] == "reduction"]
        pool = reds or members
        rep = max(pool, key=lambda m: (m["iter"][0] * m["iter"][1], m["iter"][0]))
        n0, r0 = rep["iter"]
        for m in members:
            new = [n0, r0] if m["kind"] == "reduction" else [n0 * r0, 1]
            if m["iter"] != new:
                m.setdefault("inductor_iter", list(m["iter"]))
                m["iter"] = new
                rewritten += 1
        cap.loop_rewrites += loops.rewrite(members, rep)
    # unfusible: Inductor's can_fuse says no, the fuseplan rules would allow
    # it, and Inductor's plan does not put the pair together.
    same_group = {}
    for gi, grp in enumerate(plan):
        for x in grp:
            same_group[x] = gi
    unf = []
    for (u, v), ok in cap.candidate_verdicts.items():
        if ok or same_group[u] == same_group[v]:
            continue
        if _compatible(byname[u], byname[v]):
            unf.append([u, v])
    rules = oracle.Rules(g, _compatible, set())
    listed = {tuple(p) for p in unf}
    outer = [p for p in loops.independent_outer_pairs(g, rules.desc, rules.pos, same_group,
                                                     _compatible) if tuple(p) not in listed]
    cap.meta["loop_outer_unfusible"] = len(outer)
    g["unfusible"] = unf + outer
    g["max_fusion_size"] = max([64] + [len(x) for x in plan])
    return rewritten


def _linked_rules(cap, sched):
    """Puts the linked pairs of Inductor's plan in CAP's graph (``linked``,
    graph format 3; docs/exporter.md, "Linked pairs"): pairs of one of its
    groups that Inductor fuses only with a third member of that group
    (oracle.linked_pairs).  meta.linked_pairs counts them."""
    g = cap.graph
    pos = {nd["name"]: i for i, nd in enumerate(g["nodes"])}
    linked = oracle.linked_pairs(sched, _plan_groups(cap), cap.sched_nodes, cap.prefusion,
                                 pos, cap.candidate_verdicts or {})
    cap.meta["linked_pairs"] = len(linked)
    if linked:
        g["linked"] = linked
        g["version"] = max(3, g.get("version", 1))


def _plan_groups(cap):
    """The groups of Inductor's plan as exported: the kernels its code
    generation emits (docs/exporter.md, "Code generation splits"), that is
    the scheduler's groups with each one emitted as several kernels
    replaced by its parts, in emission order; the scheduler's groups when
    no code was generated.  Sets meta.inductor_codegen_splits."""
    if cap.emitted is None:
        return cap.groups
    splits = codegen_splits(cap.groups, cap.emitted)
    parts = {frozenset(sum(p, [])): p for p in splits}
    cap.meta["inductor_emitted_kernels"] = len(cap.emitted)
    cap.meta["inductor_codegen_splits"] = splits
    cap.meta["inductor_codegen_split_groups"] = len(splits)
    return [x for grp in cap.groups for x in parts.get(frozenset(grp), [grp])]


def _codegen_rules(cap):
    """Lists unfusible in CAP's graph, once _final_rules made its rules,
    the pairs that outer.py finds code generation would split
    (CAP.outer_splits) and the outer-loop pairs across the parts of a
    group it split, unless the plan puts them together or the rules
    refuse them already.
    Returns the plan's groups (_plan_groups)."""
    groups = _plan_groups(cap)
    if cap.emitted is None:
        return groups
    splits = cap.meta["inductor_codegen_splits"]
    kernel_of = {n: k for k, grp in enumerate(groups) for n in grp}
    g = cap.graph
    byname = {nd["name"]: nd for nd in g["nodes"]}
    pos = {nd["name"]: i for i, nd in enumerate(g["nodes"])}
    have = {frozenset(p) for p in g["unfusible"]}
    listed = set(have)  # before this function's pairs
    # of the pairs across a split group's parts, those that only outer-loop
    # fusion joins: two parts with equal loops (two reductions on either
    # side of their consumer) are one loop nest in another group
    cross = [(u, v) for p in splits for i, a in enumerate(p) for b in p[i + 1:]
             for u in a for v in b if loops.outer_only(byname[u], byname[v])]
    added = []
    for u, v in sorted(set(cap.outer_splits) | set(cross), key=lambda p: (pos[p[0]], pos[p[1]])):
        pair = frozenset((u, v))
        if kernel_of[u] == kernel_of[v] or pair in have or not _compatible(byname[u], byname[v]):
            continue
        have.add(pair)
        added.append(sorted((u, v), key=pos.get))
    cap.meta["codegen_outer_check"] = _outer_check(
        cap.outer_splits, splits, kernel_of,
        lambda u, v: frozenset((u, v)) in listed or not _compatible(byname[u], byname[v]))
    g["unfusible"] = g["unfusible"] + added
    cap.meta["codegen_split_unfusible"] = len(added)
    return groups


def _outer_check(pairs, splits, kernel_of, refused):
    """How the pairs outer.py found (PAIRS) agree with what code generation
    did to Inductor's own plan: of the groups it split (SPLITS, lists of
    parts), the ones with a found pair across two parts, and the ones kept
    from fuseplan by such a pair or by the rules alone (REFUSED(u, v):
    the pair is unfusible or incompatible); and the emitted kernels
    (KERNEL_OF: node -> kernel) that hold a found pair, which a member
    outside the pair made one loop nest."""
    found = set(pairs) | {(v, u) for u, v in pairs}
    predicted = kept = 0
    for parts in splits:
        cross = [(u, v) for i, a in enumerate(parts) for b in parts[i + 1:] for u in a for v in b]
        predicted += any(p in found for p in cross)
        kept += any(p in found or refused(*p) for p in cross)
    together = {kernel_of[u] for u, v in pairs if kernel_of[u] == kernel_of[v]}
    return {"pairs": len(pairs), "split_groups_found": predicted,
            "split_groups_refused": kept, "kernels_with_a_pair": len(together)}


def _finish(cap, name, model, batch, torch_version, extra):
    g = cap.graph
    g["name"] = f"{name}.{cap.which}"
    if cap.iter_rewrites is None:
        cap.iter_rewrites = _final_rules(cap)
    rewritten = cap.iter_rewrites
    groups = _codegen_rules(cap)
    if cap.oracle_probes is not None:
        cap.meta["oracle"] = oracle.summarize(g, cap.oracle_probes, _compatible)
    n_kinds = {}
    for nd in g["nodes"]:
        n_kinds[nd["kind"]] = n_kinds.get(nd["kind"], 0) + 1
    what = f"{cap.which} graph"
    if cap.which == "step":
        what = f"whole-step graph ({WHOLE_STEP_MODES[extra.get('whole_step', 'grad')]})"
    cap.meta.update(
        {
            "source": f"tools/export_inductor.py: torch.compile (inductor, CPU) of {model}, "
            f"batch {batch}, {what}, {extra['inductor_cpu_backend']} scheduling",
            "model": model,
            "batch": batch,
            "graph": cap.which,
            "dtype": "float32",
            "torch_version": torch_version,
            "inductor_prefusion_nodes": cap.pre_fusion_count,
            "inductor_fused_nodes": cap.final_count,
            "iter_rewrites": rewritten,
            "loop_rewrites": cap.loop_rewrites,
            "mutations": len(cap.mutations),
            "folded_nop_buffers": len(cap.concat),
            **extra,
        }
    )
    cap.meta["fingerprint"] = cap.fingerprint
    g["meta"] = cap.meta
    plan = {
        "format": "fuseplan.plan",
        "version": 1,
        "graph": g["name"],
        "fingerprint": cap.fingerprint,
        "groups": groups,
        "solver": {"method": "inductor", "status": "heuristic"},
    }
    return g, plan


class Exported:
    """One exported graph: its files and contents."""

    def __init__(self, which: str, graph: dict[str, Any], plan: dict[str, Any],
                 graph_path: str, plan_path: str) -> None:
        self.which = which
        self.graph = graph
        self.plan = plan
        self.graph_path = graph_path
        self.plan_path = plan_path


# --------------------------------------------------------------------------
# whole training steps

# --whole-step mode -> what the step graph holds
WHOLE_STEP_MODES = {"grad": "forward + backward", "sgd": "forward + backward + SGD update",
                    **optim.WHOLE_STEP_MODES}
SGD_LR = 1e-3


def whole_step_fn(model: torch.nn.Module, loss_fn: Callable[[Any], torch.Tensor],
                  mode: str = "grad") -> Callable[..., Any]:
    """A function step(params, buffers, *inputs) that runs MODEL's forward
    on INPUTS with the given parameter and buffer dicts, LOSS_FN and the
    backward (torch.func.grad_and_value), so that torch.compile traces the
    whole training step as one graph.  MODE "grad" returns (loss, {name:
    gradient}); "sgd" updates PARAMS in place (p -= SGD_LR * gradient, each
    gradient dead after its update, as an optimizer step frees them) and
    returns the loss; the adamw modes run optim.py's AdamW step on state
    created here (inputs of the graph that it mutates), after clipping the
    gradients by their global norm with "-clip", and return the loss.
    Raises ValueError on an unknown MODE."""
    import torch
    from torch.func import functional_call, grad_and_value

    if mode not in WHOLE_STEP_MODES:
        raise ValueError(f"whole-step mode '{mode}': expected one of {', '.join(WHOLE_STEP_MODES)}")

    opt = optim.state_for(mode, step_arguments(model)[0])

    def step(params, buffers, *inputs):
        weights = opt.weights(params) if opt is not None else params

        def loss_of(w):
            # the transform refuses in-place updates of tensors from outside
            # it (batch norm's running statistics): update copies, copy back
            bufs = {k: b.clone() for k, b in buffers.items()}
            p = opt.compute(w, params) if opt is not None else w
            return loss_fn(functional_call(model, {**p, **bufs}, inputs)), bufs

        grads, (loss, bufs) = grad_and_value(loss_of, has_aux=True)(weights)
        with torch.no_grad():
            for k, b in buffers.items():
                b.copy_(bufs[k])
            if mode == "grad":
                return loss, grads
            if opt is not None:
                if optim.clips(mode):
                    opt.clip(grads)
                opt.update(weights, grads)
                return loss
            for k, p in params.items():
                p.sub_(grads[k], alpha=SGD_LR)
        return loss

    return step


def fake_tensors() -> contextlib.AbstractContextManager[Any]:
    """A FakeTensorMode to build and export a model under: tensors carry
    shapes, strides and dtypes but no storage, so a step that would need
    more memory than the machine has exports in (nearly) none.  Tensors
    created outside it are still accepted (e.g. by Inductor's lowering)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode(allow_non_fake_inputs=True)


def _trace_step(model, inputs, loss_fn, backend, whole_step):
    """Runs one training step of MODEL through torch.compile with BACKEND:
    the model compiled and the backward run eagerly (AOTAutograd's forward
    and backward graphs) or, with WHOLE_STEP, one whole_step_fn graph.
    Returns the compiled callable."""
    import torch

    if not whole_step:
        f = torch.compile(model, backend=backend, dynamic=False)
        loss_fn(f(*inputs)).backward()
        return f
    params, buffers = step_arguments(model)
    f = torch.compile(whole_step_fn(model, loss_fn, whole_step), backend=backend,
                      dynamic=False, fullgraph=True)
    f(params, buffers, *inputs)
    return f


def export_model(model: torch.nn.Module, inputs: Sequence[Any],
                 loss_fn: Callable[[Any], torch.Tensor], *, name: str, model_label: str,
                 batch: int, out: str, ext: str = ".json.gz", cpu_backend: str = "cpp",
                 which: Sequence[str] = ("fwd", "bwd"),
                 extra: dict[str, Any] | None = None,
                 whole_step: str | None = None,
                 oracle_samples: int = 0, inplace_pairs: bool = True,
                 workspaces: bool = True) -> list[Exported]:
    """Captures one training step of MODEL (forward on INPUTS, LOSS_FN,
    backward) and writes OUT/NAME.<fwd|bwd>EXT and Inductor's plans next to
    them; with WHOLE_STEP (a WHOLE_STEP_MODES key) the step is one graph,
    OUT/NAME.stepEXT (WHICH is then ignored); with ORACLE_SAMPLES > 0, that
    many sampled groups are asked of Inductor (oracle.py) and recorded in
    each graph's meta.oracle; with INPLACE_PAIRS, each kernel node gets its
    in-place pairs (inplace.py; the graph is then version 3); with
    WORKSPACES, each extern node its measured workspace (workspace.py;
    version 4 when some is not 0), unless the model is fake.  Returns
    the list of Exported; raises RuntimeError when nothing was captured,
    ValueError on a bad WHOLE_STEP, and whatever torch raises."""
    import torch
    import torch._inductor.config as ic

    state = {"current": None, "captures": [], "label": "step" if whole_step else None,
             "oracle": oracle_samples, "inplace": inplace_pairs, "freed": {}}
    if whole_step:
        which = ("step",)
        extra = {**(extra or {}), "whole_step": whole_step}
    model.train()
    torch._dynamo.reset()
    with _capturing(state) as backend, ic.patch(cpu_backend=cpu_backend):
        f = _trace_step(model, inputs, loss_fn, backend, whole_step)
        # A whole step takes parameters and buffers as its arguments: what
        # the stand-ins would measure around it is not measured (yet).
        live = {} if whole_step else _entry_live(state, f, model, inputs, loss_fn)
    torch._dynamo.reset()
    model.zero_grad(set_to_none=True)
    if not state["captures"]:
        raise RuntimeError("no graph was captured")
    os.makedirs(out, exist_ok=True)
    done, seen, ws_cache = [], {}, {}
    why_not = "" if workspaces else "turned off (--no-workspaces)"
    if workspaces and _is_fake(model, inputs):
        why_not = "fake tensors: the extern kernels cannot run"
    for cap in state["captures"]:
        if cap.which not in which:
            continue
        k = seen.get(cap.which, 0)
        seen[cap.which] = k + 1
        base = name if k == 0 else f"{name}{k}"
        ex = {"inductor_cpu_backend": cpu_backend, **(extra or {})}
        g, plan = _finish(cap, base, model_label, batch, torch.__version__, ex)
        idx = str(state["captures"].index(cap))
        _inputs_as_freed(cap, state["freed"].get(idx))
        _set_outside(g, live.get(idx))
        if cap.inplace is not None:
            inplace.annotate(g, *cap.inplace[0], cap.inplace[1])
        workspace.annotate(g, cap.sched_nodes, ws_cache, not why_not, why_not)
        gp = os.path.join(out, f"{base}.{cap.which}{ext}")
        pp = os.path.join(out, f"{base}.{cap.which}.inductor.plan{ext}")
        dump(g, gp)
        dump(plan, pp)
        done.append(Exported(cap.which, g, plan, gp, pp))
    return done


def _is_fake(model, inputs):
    """Whether MODEL's parameters or INPUTS are fake tensors (--fake): then
    no extern kernel can run to measure its workspace."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensor

    ts = list(model.parameters()) + [x for x in inputs if isinstance(x, torch.Tensor)]
    return any(isinstance(t, FakeTensor) for t in ts)


def _entry_live(state, f, model, inputs, loss_fn):
    """The bytes live when each captured graph is entered, measured in a
    second step through the stand-ins (nothing is computed): {str(index in
    state["captures"]): bytes}; CPU only ({} for a model on another
    device).  A graph compiled again in that step is dropped."""
    if any(p.device.type != "cpu" for p in model.parameters()):
        return {}
    n = len(state["captures"])
    model.zero_grad(set_to_none=True)
    state["marking"] = True
    try:
        live = measure.entry_live_bytes(measure.make_step(f, model, inputs, loss_fn),
                                        model, inputs)
    finally:
        state["marking"] = False
        del state["captures"][n:]
    return live


def _set_outside(g, live):
    """Records in graph G the bytes live when it is entered that it neither
    reads nor frees (docs/exporter.md): LIVE (measured; None: not measured)
    less the input bytes fuseplan counts at step 0, the resident inputs and
    the freeable ones with a reader.  Inductor's adjusted estimate gains
    them too, so that fuseplan's peak still equals it."""
    if live is None:
        return
    outs = set(g.get("outputs", []))
    read = {r if isinstance(r, str) else r["buffer"] for nd in g["nodes"] for r in nd["reads"]}
    counted = sum(b["bytes"] for b in g["buffers"]
                  if b.get("input") and (not b.get("freeable") or b["name"] in outs
                                         or b["name"] in read))
    outside = max(0, live - counted)
    meta = g["meta"]
    meta["entry_live_bytes"] = live
    meta["entry_input_bytes"] = counted
    if outside:
        g["version"] = max(2, g["version"])
        g["outside_live_bytes"] = outside
        meta["inductor_peak_adjusted_bytes"] += outside
        meta["inductor_adjustments"]["outside_live_bytes"] = outside


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="export_inductor.py",
        description="Export Inductor's pre-fusion scheduler graphs and its own "
        "fusion plans (forward and backward of one training step) as fuseplan "
        "graph and plan files.  See docs/exporter.md.",
    )
    ap.add_argument("model", help="a timm model name (e.g. volo_d1_224, resnet50), "
                    "'gpt2' / 'gpt2-L<n>' (a GPT-2 style stack written with torch.nn), "
                    "'tiny' (a 6-layer test model), or module:callable (a function of "
                    "the batch size returning (model, example_inputs))")
    ap.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    ap.add_argument("--seq", type=int, default=512, help="sequence length for gpt2 (default 512)")
    ap.add_argument("--name", help="graph name prefix (default: the model name)")
    ap.add_argument("--out", default=".", help="output directory (default .)")
    ap.add_argument("--plain", action="store_true", help="write .json instead of .json.gz")
    ap.add_argument("--cpu-backend", default="cpp", choices=["cpp", "triton"],
                    help="Inductor's CPU backend, whose scheduling decides the fusions: "
                    "cpp (the default, C++/OpenMP kernels) or triton (the Triton "
                    "scheduling that GPUs use, run on the CPU graph; experimental in "
                    "Inductor, but nothing is compiled here)")
    ap.add_argument("--which", default="fwd,bwd", help="graphs to write: fwd, bwd or fwd,bwd")
    ap.add_argument("--whole-step", nargs="?", const="grad", choices=sorted(WHOLE_STEP_MODES),
                    help="export the whole training step as one graph, NAME.step: forward + "
                    "backward (grad, the default), or + an in-place SGD update (sgd) or AdamW "
                    "step (adamw[-master][-foreach][-clip]: optimizer state as graph inputs; "
                    "-clip: gradient clipping by global norm first)")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                    help="the model's parameters and floating-point inputs (default float32)")
    ap.add_argument("--fake", action="store_true",
                    help="build and export the model under fake tensors (shapes only, no "
                    "storage): a step larger than this machine's memory exports")
    ap.add_argument("--oracle", type=int, default=oracle.DEFAULT_SAMPLES, metavar="N",
                    help="ask Inductor about N random groups of 2-6 nodes that fuseplan's "
                    "rules call legal and record the disagreements in the graph's "
                    f"meta.oracle (default {oracle.DEFAULT_SAMPLES}; 0: off)")
    ap.add_argument("--inplace", action=argparse.BooleanOptionalAction, default=True,
                    help="write each kernel node's in-place pairs (node field inplace, "
                    "graph format version 3): the inputs whose storage Inductor may "
                    "write its output over, which the evaluator counts once "
                    "(default: on; --no-inplace writes none)")
    ap.add_argument("--workspaces", action=argparse.BooleanOptionalAction, default=True,
                    help="measure each extern node's workspace (node field workspace, graph "
                    "format version 4): the temporaries its aten call holds, run alone on "
                    "the CPU under the profiler (default: on; never under --fake)")
    args = ap.parse_args(argv)
    ctx = fake_tensors() if args.fake else contextlib.nullcontext()
    with ctx:
        return _export_main(args)


def _export_main(args):
    """main's body (under the fake mode with --fake)."""
    import torch

    try:
        check_torch()
        # built in the dtype (module.to() cannot swap fake parameters)
        default = torch.get_default_dtype()
        torch.set_default_dtype(getattr(torch, args.dtype))
        try:
            model, inputs, loss_fn = build_model(args.model, args.batch, args.seq)
        finally:
            torch.set_default_dtype(default)
    except (ModelError, RuntimeError) as e:
        print(f"export_inductor.py: {e}", file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    t0 = time.time()
    extra = {"seq": args.seq} if args.model.startswith(("gpt2", "llama-")) else {}
    if args.dtype != "float32":
        extra["dtype"] = args.dtype
    if args.fake:
        extra["fake_tensors"] = True
    try:
        done = export_model(model, inputs, loss_fn, name=args.name or args.model.replace(":", "."),
                            model_label=args.model, batch=args.batch, out=args.out,
                            ext=".json" if args.plain else ".json.gz",
                            cpu_backend=args.cpu_backend, which=set(args.which.split(",")),
                            extra=extra, whole_step=args.whole_step,
                            oracle_samples=max(0, args.oracle), inplace_pairs=args.inplace,
                            workspaces=args.workspaces)
    except RuntimeError as e:
        print(f"export_inductor.py: {e}", file=sys.stderr)
        return 1
    for ex in done:
        g, plan = ex.graph, ex.plan
        orc = g["meta"].get("oracle")
        if orc is not None:
            print(f"{ex.graph_path}: oracle: {orc['disagreements']} of {orc['samples']} "
                  f"sampled legal groups ({orc['connected']} connected) are no Inductor kernel")
        print(
            f"{ex.graph_path}: {len(g['nodes'])} nodes, {len(g['buffers'])} buffers, "
            f"{len(plan['groups'])} Inductor kernels, {len(g['unfusible'])} unfusible pairs, "
            f"Inductor peak estimate {g['meta']['inductor_peak_bytes']} "
            f"(adjusted {g['meta']['inductor_peak_adjusted_bytes']}), "
            f"{g['meta']['export_seconds']} s"
        )
    print(f"total {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
