"""Measure a training step: outputs and gradients against eager, peak
memory, and step time.

A step is: every gradient set to None, the forward on the example inputs,
the loss, the backward.  No optimizer runs, so every step starts from the
same weights.

Peak memory (docs/inductor.md, "Measuring"):
- CPU: torch.profiler with profile_memory=True records every allocation and
  free of the CPU allocator during one step.  The live bytes at each moment
  are the bytes alive before the step (the parameters, buffers and inputs)
  plus the running sum of the recorded sizes; the peak is their maximum.
  For a compiled step the same running sum is read inside each compiled
  graph's call (the profiler's "## Call CompiledFxGraph" ranges), giving
  one measured peak per graph.
- CUDA: torch.cuda.max_memory_allocated after reset_peak_memory_stats,
  minus what was allocated before the step, plus the same baseline; one
  figure per step.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

Step = Callable[[], tuple[Any, "torch.Tensor"]]
# (outputs, {parameter name: gradient}) of a finished step
Snapshot = tuple[list["torch.Tensor"], dict[str, "torch.Tensor | None"]]

# torch.allclose tolerances for outputs and gradients against eager (float32):
# Inductor reorders reductions and fuses pointwise chains, so results differ
# in the last bits; a wrong plan (a missing or misplaced kernel) differs by
# far more.
RTOL = 1e-3
ATOL = 1e-4


def _storage_bytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        st = t.untyped_storage()
        key = (st.data_ptr(), st.device)
        if key not in seen:
            seen.add(key)
            total += st.nbytes()
    return total


def baseline_bytes(model: torch.nn.Module, inputs: Sequence[Any]) -> int:
    """Bytes alive before a step: parameters, buffers, tensor inputs."""
    import torch

    ts = list(model.parameters()) + list(model.buffers())
    ts += [x for x in inputs if isinstance(x, torch.Tensor)]
    return _storage_bytes(ts)


def make_step(fn: Callable[..., Any], model: torch.nn.Module, inputs: Sequence[Any],
              loss_fn: Callable[[Any], torch.Tensor]) -> Step:
    """A training step of FN (the model or its compiled form); returns
    (output, loss) of the step."""

    def step():
        for p in model.parameters():
            p.grad = None
        y = fn(*inputs)
        loss = loss_fn(y)
        loss.backward()
        return y, loss

    return step


def make_whole_step(fn: Callable[..., Any], model: torch.nn.Module,
                    inputs: Sequence[Any]) -> Step:
    """A training step of FN, a whole_step_fn of MODEL (grad mode) or its
    compiled form: FN's gradients become the parameters' .grad, so that
    snapshot reads them as after a backward.  Returns (loss, loss): a
    whole step has no other output."""
    from .models import step_arguments

    def step():
        params, buffers = step_arguments(model)
        loss, grads = fn(params, buffers, *inputs)
        for n, p in model.named_parameters():
            p.grad = grads[n]
        return loss, loss

    return step


@contextlib.contextmanager
def _clean_window(model):
    """Frees, before the profiled window, what a step would free of memory
    allocated outside it (MODEL's gradients, garbage of earlier steps), and
    keeps the garbage collector off inside the window.

    Why: the CPU allocator's profiler reporter remembers the size of every
    block allocated while a profiler runs and forgets it only when the block
    is freed while a profiler runs.  A block freed between two windows stays
    in its table; a later block at the same address, allocated outside any
    window (the gradients of an unprofiled step), is then reported as a
    free of the old size when a later window frees it.  Those frees lowered
    the measured peaks by up to 9.4 MiB per graph, by an amount that
    depended on what ran before (docs/inductor.md, "Measuring")."""
    for p in model.parameters():
        p.grad = None
    gc.collect()
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _cpu_profile(step, model):
    """Runs STEP of MODEL under the profiler (_clean_window); returns
    (result, peak delta of the step, [peak delta inside each compiled graph
    call])."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with _clean_window(model), profile(activities=[ProfilerActivity.CPU],
                                       profile_memory=True) as prof:
        result = step()
    evs = prof.profiler.kineto_results.events()
    mem = sorted((e.start_ns(), e.nbytes()) for e in evs
                 if e.name() == "[memory]" and e.device_type() == DeviceType.CPU)
    calls = sorted((e.start_ns(), e.end_ns()) for e in evs if e.name().startswith(CALL_MARK))
    trace, peak = _running_live(mem)
    graph_peaks = []
    for s, e in calls:
        inside = [v for t, v in trace if s <= t <= e]
        graph_peaks.append(max([_live_before(trace, s)] + inside))
    return result, peak, graph_peaks


def call_peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    """Runs FN once on the CPU under the profiler, with the garbage
    collector off; returns (its result, the peak of the running sum of the
    allocator's events during the call: bytes above what was live before
    it).  workspace.py measures extern kernels' temporaries with it."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    was_on = gc.isenabled()
    gc.disable()
    try:
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            result = fn()
    finally:
        if was_on:
            gc.enable()
    evs = prof.profiler.kineto_results.events()
    mem = sorted((e.start_ns(), e.nbytes()) for e in evs
                 if e.name() == "[memory]" and e.device_type() == DeviceType.CPU)
    return result, _running_live(mem)[1]


def _running_live(mem):
    """([(time, live delta after the event)], peak delta) of the sorted
    (time, nbytes) memory events MEM."""
    live, peak, trace = 0, 0, []
    for t, nb in mem:
        live += nb
        peak = max(peak, live)
        trace.append((t, live))
    return trace, peak


def _live_before(trace, s):
    """The live delta of TRACE just before time S (0 before any event)."""
    before = [v for t, v in trace if t < s]
    return before[-1] if before else 0


# The profiler range torch opens around each call of a compiled graph.
CALL_MARK = "## Call CompiledFxGraph"

# A profiler range the exporter's stand-in opens when a compiled graph is
# entered (export.py); the text after it names the graph.
ENTRY_MARK = "## fuseplan graph entry "


def live_at_ranges(step: Step, model: torch.nn.Module, inputs: Sequence[Any],
                   prefix: str) -> list[tuple[str, int]]:
    """Runs STEP once on the CPU under the profiler and returns, for each
    profiler range whose name starts with PREFIX, in the order they opened,
    (the rest of its name, the bytes live when it opened): the baseline
    (parameters, buffers, inputs) plus the running sum of the allocator's
    events before it, as measure_peak counts them.  MODEL's gradients are
    set to None first (_clean_window)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    base = baseline_bytes(model, inputs)
    with _clean_window(model), profile(activities=[ProfilerActivity.CPU],
                                       profile_memory=True) as prof:
        step()
    evs = prof.profiler.kineto_results.events()
    mem = sorted((e.start_ns(), e.nbytes()) for e in evs
                 if e.name() == "[memory]" and e.device_type() == DeviceType.CPU)
    marks = sorted((e.start_ns(), e.name()[len(prefix):]) for e in evs
                   if e.name().startswith(prefix))
    trace, _ = _running_live(mem)
    return [(name, base + _live_before(trace, s)) for s, name in marks]


def entry_live_bytes(step: Step, model: torch.nn.Module,
                     inputs: Sequence[Any]) -> dict[str, int]:
    """live_at_ranges of the ENTRY_MARK ranges opened in one run of STEP,
    by name (the first of each name)."""
    out = {}
    for name, live in live_at_ranges(step, model, inputs, ENTRY_MARK):
        out.setdefault(name, live)
    return out


def measure_peak(step: Step, model: torch.nn.Module, inputs: Sequence[Any],
                 device: str) -> tuple[int, list[int]]:
    """Measured peak bytes of one step: (step peak, [peak per compiled
    graph]), both absolute (the baseline included); the per-graph list is
    empty on CUDA and for eager."""
    import torch

    base = baseline_bytes(model, inputs)
    if device == "cuda":
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        return base + torch.cuda.max_memory_allocated() - before, []
    _, peak, graphs = _cpu_profile(step, model)
    return base + peak, [base + g for g in graphs]


def time_step(step: Step, device: str, steps: int = 5, warmup: int = 1) -> float:
    """Median seconds of STEPS steps after WARMUP more."""
    import torch

    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def snapshot(model: torch.nn.Module, result: tuple[Any, torch.Tensor]) -> Snapshot:
    """Output and gradients of a finished step, detached copies."""
    y = result[0]
    ys = list(y) if isinstance(y, (tuple, list)) else [y]
    outs = [t.detach().clone() for t in ys]
    grads = {n: (p.grad.detach().clone() if p.grad is not None else None)
             for n, p in model.named_parameters()}
    return outs, grads


def compare(ref: Snapshot, got: Snapshot) -> tuple[bool, float | str]:
    """(True, max abs difference) when every output and gradient of GOT is
    allclose (RTOL, ATOL) to REF; else (False, what differs first)."""
    import torch

    (ro, rg), (go, gg) = ref, got
    worst = 0.0
    pairs = [(f"output {i}", a, b) for i, (a, b) in enumerate(zip(ro, go, strict=False))]
    pairs += [(f"grad {n}", rg[n], gg.get(n)) for n in rg]
    if len(ro) != len(go):
        return False, f"{len(go)} outputs, eager has {len(ro)}"
    for what, a, b in pairs:
        if a is None or b is None:
            if (a is None) != (b is None):
                return False, f"{what}: missing"
            continue
        b = b.to(a.device)
        if a.shape != b.shape:
            return False, f"{what}: shape {tuple(b.shape)}, eager {tuple(a.shape)}"
        d = (a.float() - b.float()).abs().max().item() if a.numel() else 0.0
        worst = max(worst, d)
        if not torch.allclose(a.float(), b.float(), rtol=RTOL, atol=ATOL):
            return False, f"{what}: max abs difference {d:.3g}"
    return True, worst
