"""Extern kernels' workspaces: the temporaries a library call allocates and
frees inside itself (docs/exporter.md, "Workspaces"; docs/cost-model.md,
"Workspaces").

Inductor runs extern nodes (matmuls, convolutions, fallback aten ops such as
convolution_backward) as calls into ATen, outside its own kernels.  Such a
call may hold far more than its outputs while it runs: a channels-last
depthwise convolution_backward on (2, 768, 7, 7) holds 38,688,768 bytes of
temporaries.  ``annotate`` measures each extern node of an exported graph:
it calls the node's aten op alone, on the CPU, on fresh tensors of the
shapes, strides and dtypes its FX node recorded (Inductor constrains a
fallback's inputs to those strides), once to warm up and once under
torch.profiler with profile_memory, as measure.py measures peaks; the
workspace is the peak the allocator reaches during that call less the bytes
of the outputs it allocated.  Calls are cached by (op, tensors, other
arguments).  Under fake tensors nothing can run: the graph's meta then says
that no workspace was measured.
"""

from __future__ import annotations

import time
from typing import Any

# Failures recorded per graph (meta.workspaces.failed), at most.
MAX_FAILED = 20


class Unmeasurable(Exception):
    """An extern node whose call cannot be rebuilt or run alone."""


def _tensor_spec(val):
    """(shape, stride, dtype, storage offset) of a tensor (a fake one)."""
    return (
        tuple(int(s) for s in val.shape),
        tuple(int(s) for s in val.stride()),
        val.dtype,
        int(val.storage_offset()),
    )


def _arg_spec(a):
    """A call argument as a hashable spec: a tensor's ("T", spec), a list's
    ("L", items), other values as they are.  Raises Unmeasurable."""
    import torch
    import torch.fx

    if isinstance(a, torch.fx.Node):
        val = a.meta.get("val")
        if isinstance(val, torch.Tensor):
            return ("T", _tensor_spec(val))
        if isinstance(val, (int, float, bool)):
            return ("V", val)
        raise Unmeasurable(f"argument {a.name} has no tensor value")
    if isinstance(a, (list, tuple)):
        return ("L", type(a).__name__, tuple(_arg_spec(x) for x in a))
    if isinstance(a, torch.SymInt):
        return ("V", int(a))
    return ("V", a)


def call_spec(kernel: Any) -> tuple[Any, ...]:
    """(op, args spec, kwargs spec) of the aten call an extern IR node makes:
    its FX node's target and arguments.  Raises Unmeasurable."""
    import torch

    fx = getattr(kernel, "fx_node", None)
    if fx is None or not isinstance(fx.target, torch._ops.OpOverload):
        raise Unmeasurable("no aten op")
    args = tuple(_arg_spec(a) for a in fx.args)
    kwargs = tuple(sorted((k, _arg_spec(v)) for k, v in fx.kwargs.items()))
    return fx.target, args, kwargs


def _make(spec, gen):
    """A real argument from its spec: tensors filled with normal values
    (floating point) or zeros (integers and booleans, valid indices)."""
    import torch

    tag = spec[0]
    if tag == "T":
        shape, stride, dtype, offset = spec[1]
        extent = (
            offset + 1 + sum((s - 1) * st for s, st in zip(shape, stride, strict=True))
            if all(shape)
            else 0
        )
        base = torch.empty(max(extent, 1), dtype=dtype)
        if dtype.is_floating_point:
            base.normal_(generator=gen)
        else:
            base.zero_()
        return base.as_strided(shape, stride, offset)
    if tag == "L":
        items = [_make(x, gen) for x in spec[2]]
        return tuple(items) if spec[1] == "tuple" else items
    return spec[1]


def _storages(x, out):
    """The distinct storages of the tensors in X (nested lists), into OUT:
    {data_ptr: nbytes}."""
    import torch

    if isinstance(x, torch.Tensor):
        st = x.untyped_storage()
        out[st.data_ptr()] = st.nbytes()
    elif isinstance(x, (list, tuple)):
        for y in x:
            _storages(y, out)
    return out


def measure_call(spec: tuple[Any, ...]) -> int:
    """The workspace of one call: the op of SPEC (call_spec) run on fresh
    tensors, warmed up once, then run under the profiler; the allocator's
    peak during the call less the bytes of the output storages it
    allocated (never below 0).  Raises Unmeasurable when the op fails."""
    import torch

    from . import measure

    op, aspec, kspec = spec
    gen = torch.Generator().manual_seed(0)
    args = [_make(a, gen) for a in aspec]
    kwargs = {k: _make(v, gen) for k, v in kspec}
    try:
        with torch.no_grad():
            op(*args, **kwargs)  # warm-up: one-time caches are no workspace
            out, peak = measure.call_peak(lambda: op(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 (any op's error: recorded, not fatal)
        raise Unmeasurable(f"{type(e).__name__}: {str(e)[:80]}") from e
    inputs = _storages(args, {})
    _storages(list(kwargs.values()), inputs)
    made = sum(n for p, n in _storages(out, {}).items() if p not in inputs)
    return max(0, peak - made)


def annotate(
    graph: dict[str, Any],
    sched_nodes: dict[str, Any],
    cache: dict[Any, int],
    measured: bool = True,
    why_not: str = "",
) -> None:
    """Gives every extern node of GRAPH (a fuseplan graph dict, whose
    scheduler nodes by name are SCHED_NODES) its measured workspace (node
    field `workspace`, only when not 0; the graph becomes version 4) and
    records in meta.workspaces what was done: the time it took, the calls
    run and reused from CACHE (shared by the graphs of one export), the
    nodes that could not be measured and why.  With MEASURED false nothing
    runs and the meta says why (WHY_NOT: fake tensors, or turned off)."""
    meta = graph.setdefault("meta", {})
    if not measured:
        meta["workspaces"] = {"measured": False, "why": why_not}
        return
    t0 = time.perf_counter()
    ran = hits = nonzero = 0
    failed = {}
    for nd in graph["nodes"]:
        if nd["kind"] != "extern" or nd["name"] not in sched_nodes:
            continue
        try:
            spec = call_spec(getattr(sched_nodes[nd["name"]], "node", None))
            hit = spec in cache
            if not hit:
                cache[spec] = measure_call(spec)
            ran, hits = ran + (not hit), hits + hit
            ws = cache[spec]
        except (Unmeasurable, TypeError) as e:  # TypeError: an unhashable argument
            if len(failed) < MAX_FAILED:
                failed[nd["name"]] = str(e)[:120]
            continue
        if ws:
            nd["workspace"] = ws
            nonzero += 1
    if nonzero:
        graph["version"] = max(4, graph.get("version", 1))
    meta["workspaces"] = {
        "measured": True,
        "seconds": round(time.perf_counter() - t0, 2),
        "calls_run": ran,
        "calls_cached": hits,
        "nonzero": nonzero,
        "total_bytes": sum(nd.get("workspace", 0) for nd in graph["nodes"]),
        "failed": failed,
    }
