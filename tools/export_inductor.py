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

import argparse
import gzip
import json
import math
import os
import sys
import time


class _Abort(Exception):
    """Raised in Scheduler.codegen once the plan is captured."""


# --------------------------------------------------------------------------
# models


def _gpt2_stack(layers=12, d=768, heads=12, seq=512, vocab=50257):
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d)
            self.out = nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q = q.view(b, t, heads, d // heads).transpose(1, 2)
            k = k.view(b, t, heads, d // heads).transpose(1, 2)
            v = v.view(b, t, heads, d // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // heads))
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.out(nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(seq, d)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.lnf = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.lnf(x))

    return GPT2()


def _tiny():
    import torch.nn as nn

    return nn.Sequential(
        nn.Conv2d(3, 8, 3),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(8 * 6 * 6, 10),
        nn.LayerNorm(10),
    )


def build_model(name, batch, seq):
    """Returns (module, example input, loss function)."""
    import torch

    torch.manual_seed(0)
    if name == "tiny":
        return _tiny(), torch.randn(batch, 3, 8, 8), lambda y: y.sum()
    if name.startswith("gpt2"):
        # gpt2 (12 layers), gpt2-L<n> for n layers
        layers = int(name.split("-L")[1]) if "-L" in name else 12
        m = _gpt2_stack(layers=layers, seq=seq)
        idx = torch.randint(0, 50257, (batch, seq))
        return m, idx, lambda y: y.float().logsumexp(-1).mean()
    import timm

    m = timm.create_model(name, pretrained=False)
    cfg = m.pretrained_cfg.get("input_size", (3, 224, 224))
    return m, torch.randn(batch, *cfg), lambda y: y.float().logsumexp(-1).mean()


# --------------------------------------------------------------------------
# capture


def _prod(xs):
    """Product of a size tuple (CPU groups); a number passes through (Triton
    groups are already products)."""
    if not isinstance(xs, (tuple, list)):
        return int(xs)
    p = 1
    for x in xs:
        p *= int(x)
    return p


class Capture:
    """Scheduler state of one compiled graph."""

    def __init__(self, which):
        self.which = which  # "fwd" or "bwd"
        self.graph = None  # fuseplan graph dict
        self.groups = None  # Inductor's plan, exported node names
        self.candidate_verdicts = None
        self.meta = {}
        self.t0 = time.time()


def _install(state):
    """Installs the hooks; returns the backend to hand to torch.compile."""
    import torch
    import torch._inductor.config as ic
    from torch._inductor import scheduler as S
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner
    from torch._inductor.output_code import OutputCode
    from torch._inductor.virtualized import V

    ic.fx_graph_cache = False
    ic.autotune_local_cache = False
    ic.reorder_for_peak_memory = True
    try:
        ic.fx_graph_remote_cache = False
        ic.autotune_remote_cache = False
    except Exception:  # noqa: BLE001 (older versions lack them)
        pass

    def pre_fusion(nodes):
        cap = state["current"]
        _capture_pre_fusion(cap, V.graph.scheduler, nodes)
        return nodes

    ic._pre_fusion_custom_pass = pre_fusion

    orig_fuse_nodes = S.Scheduler.fuse_nodes

    def fuse_nodes(self, nodes):
        # the scheduler is fully set up here (streams, mempools), still pre-fusion
        cap = state["current"]
        if cap is not None and cap.graph is not None and cap.candidate_verdicts is None:
            cap.candidate_verdicts = _candidate_verdicts(self, cap)
        return orig_fuse_nodes(self, nodes)

    S.Scheduler.fuse_nodes = fuse_nodes

    def codegen(self):
        cap = state["current"]
        _capture_plan(cap, self)
        raise _Abort()

    S.Scheduler.codegen = codegen

    class ShapeOnly(OutputCode):
        """Stand-in for the compiled graph: uninitialised outputs of the right
        shapes and strides, so the training step proceeds without compute."""

        def __init__(self, gm):
            self.gm = gm
            self._boxed_call = True

        def post_compile(self, *args, **kwargs):
            pass

        def set_triton_bundle(self, *args, **kwargs):
            pass

        def __call__(self, inputs):
            out = next(iter(self.gm.graph.find_nodes(op="output"))).args[0]
            res = []
            for o in out:
                v = o.meta.get("val") if isinstance(o, torch.fx.Node) else None
                if isinstance(v, torch.Tensor):
                    res.append(torch.empty_strided(v.shape, v.stride(), dtype=v.dtype))
                else:
                    res.append(v if not isinstance(o, torch.fx.Node) else None)
            return res

    def inner(gm, example_inputs, **kwargs):
        cap = Capture("bwd" if kwargs.get("is_backward") else "fwd")
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
        return ShapeOnly(gm)

    def backend(gm, example_inputs):
        return compile_fx(gm, example_inputs, inner_compile=inner)

    return backend


def _buf_bytes(node):
    """numel x dtype size, as memory.py computes a buffer's size."""
    from torch._inductor.utils import get_dtype_size
    from torch._inductor.virtualized import V

    return int(V.graph.sizevars.optimization_hint(node.get_numel(), fallback=0)) * get_dtype_size(
        node.get_dtype()
    )


def _capture_pre_fusion(cap, sched, nodes):
    """Builds the fuseplan graph from the pre-fusion scheduler nodes."""
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
        else:
            kind, it = "extern", None
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
                    cap.meta.setdefault("dropped_reads", []).append([name, r])
                    continue
                full = buffers[r]["bytes"]
                rb = full if nb is None or len(resolve(d.name)) > 1 else min(nb, full)
                reads[r] = max(reads.get(r, 0), rb)
        writes = [b.get_name() for b in n.get_outputs()]
        for bn, src in writer_override.items():
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
        node["reads"] = [
            r if rb == buffers[r]["bytes"] else {"buffer": r, "bytes": rb} for r, rb in reads.items()
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
    used = written | {r if isinstance(r, str) else r["buffer"] for nd in fp_nodes for r in nd["reads"]}
    used |= set(out_set)
    bufs = [buffers[b] for b in order if b in used or buffers[b].get("input")]

    cap.graph = {
        "format": "fuseplan.graph",
        "version": 1,
        "name": None,
        "max_fusion_size": 64,
        "buffers": bufs,
        "nodes": fp_nodes,
        "outputs": out_set,
        "unfusible": [],
    }
    cap.sched_nodes = {n.get_name(): n for n in nodes if n.get_name() not in dropped}
    cap.nonfreeable = nonfreeable_names
    cap.mutations = mutation_info
    cap.concat = {k: v for k, v in alias.items()}
    cap.pre_fusion_count = len(nodes)


def _candidate_verdicts(sched, cap):
    """Inductor's can_fuse on every pair of non-extern nodes that share a
    buffer (writer-reader and reader-reader pairs)."""
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
    for c, srcs in cap.concat.items():
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
    peak, _ = M.peak_memory_from_buf_info_list(infos, len(sched.nodes))
    # (a) inputs memory.py treats as never freed are left out of its figure;
    # fuseplan counts them at every step
    resident = 0
    for b in g["buffers"]:
        if b.get("input") and (not b.get("freeable") or b["name"] in fp_out):
            resident += b["bytes"]
    counts["resident_input_bytes"] = resident
    return int(peak) + resident, counts


# --------------------------------------------------------------------------
# legality of Inductor's plan under the fuseplan rules


def _compatible(a, b):
    if a["kind"] == "extern" or b["kind"] == "extern":
        return False
    ia, ib = a["iter"], b["iter"]
    if ia == ib:
        return True
    for p, q in ((a, b), (b, a)):
        if p["kind"] == "pointwise" and p["iter"][0] in (q["iter"][0] * q["iter"][1], q["iter"][0]):
            return True
    return False


def _finish(cap, name, model, batch, torch_version, extra):
    g = cap.graph
    g["name"] = f"{name}.{cap.which}"
    byname = {nd["name"]: nd for nd in g["nodes"]}
    rewritten = 0
    for grp in cap.groups:
        if len(grp) < 2:
            continue
        members = [byname[x] for x in grp]
        if all(_compatible(p, q) for i, p in enumerate(members) for q in members[i + 1 :]):
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
    # unfusible: Inductor's can_fuse says no, the fuseplan rules would allow
    # it, and Inductor's plan does not put the pair together.
    same_group = {}
    for gi, grp in enumerate(cap.groups):
        for x in grp:
            same_group[x] = gi
    unf = []
    for (u, v), ok in cap.candidate_verdicts.items():
        if ok or same_group[u] == same_group[v]:
            continue
        if _compatible(byname[u], byname[v]):
            unf.append([u, v])
    g["unfusible"] = unf
    g["max_fusion_size"] = max([64] + [len(x) for x in cap.groups])
    n_kinds = {}
    for nd in g["nodes"]:
        n_kinds[nd["kind"]] = n_kinds.get(nd["kind"], 0) + 1
    cap.meta.update(
        {
            "source": f"tools/export_inductor.py: torch.compile (inductor, CPU) of {model}, "
            f"batch {batch}, {cap.which} graph, {extra['inductor_cpu_backend']} scheduling",
            "model": model,
            "batch": batch,
            "graph": cap.which,
            "dtype": "float32",
            "torch_version": torch_version,
            "inductor_prefusion_nodes": cap.pre_fusion_count,
            "inductor_fused_nodes": cap.final_count,
            "iter_rewrites": rewritten,
            "mutations": len(cap.mutations),
            "folded_nop_buffers": len(cap.concat),
            **extra,
        }
    )
    g["meta"] = cap.meta
    plan = {
        "format": "fuseplan.plan",
        "version": 1,
        "graph": g["name"],
        "groups": cap.groups,
        "solver": {"method": "inductor", "status": "heuristic"},
    }
    return g, plan


def _dump(obj, path):
    text = json.dumps(obj, separators=(",", ":"))
    if path.endswith(".gz"):
        with gzip.GzipFile(path, "wb", mtime=0) as f:
            f.write(text.encode())
    else:
        with open(path, "w") as f:
            f.write(text)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Export Inductor's pre-fusion scheduler graphs and its own "
        "fusion plans (forward and backward of one training step) as fuseplan "
        "graph and plan files.  See docs/exporter.md.",
    )
    ap.add_argument("model", help="a timm model name (e.g. volo_d1_224, resnet50), "
                    "'gpt2' / 'gpt2-L<n>' (a GPT-2 style stack written with torch.nn), "
                    "or 'tiny' (a 6-layer test model)")
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
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    state = {"current": None, "captures": []}
    backend = _install(state)
    import torch._inductor.config as ic

    ic.cpu_backend = args.cpu_backend
    model, x, loss_fn = build_model(args.model, args.batch, args.seq)
    model.train()
    t0 = time.time()
    f = torch.compile(model, backend=backend, dynamic=False)
    loss_fn(f(x)).backward()
    total = time.time() - t0
    name = args.name or args.model
    want = set(args.which.split(","))
    os.makedirs(args.out, exist_ok=True)
    ext = ".json" if args.plain else ".json.gz"
    seen = {}
    for cap in state["captures"]:
        if cap.which not in want:
            continue
        k = seen.get(cap.which, 0)
        seen[cap.which] = k + 1
        base = name if k == 0 else f"{name}{k}"
        extra = {"inductor_cpu_backend": args.cpu_backend}
        if args.model.startswith("gpt2"):
            extra["seq"] = args.seq
        g, plan = _finish(cap, base, args.model, args.batch, torch.__version__, extra)
        gp = os.path.join(args.out, f"{base}.{cap.which}{ext}")
        pp = os.path.join(args.out, f"{base}.{cap.which}.inductor.plan{ext}")
        _dump(g, gp)
        _dump(plan, pp)
        print(
            f"{gp}: {len(g['nodes'])} nodes, {len(g['buffers'])} buffers, "
            f"{len(plan['groups'])} Inductor kernels, {len(g['unfusible'])} unfusible pairs, "
            f"Inductor peak estimate {g['meta']['inductor_peak_bytes']} "
            f"(adjusted {g['meta']['inductor_peak_adjusted_bytes']}), "
            f"{cap.meta['export_seconds']} s"
        )
    print(f"total {total:.1f} s")
    if not state["captures"]:
        print("no graph was captured", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
