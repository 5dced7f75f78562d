"""What Inductor emits: one entry per kernel, in emission order.

A kernel is one C++ loop nest (CppScheduling: KernelGroup.finalize_kernel,
several of which may share one C++ function), one Triton kernel
(TritonScheduling.define_kernel) or one extern call
(Scheduler.codegen_extern_call).  Inside ``hooks()``, every
``with kernels() as rec:`` block collects (kind, [scheduler node names])
for the code generated in it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator
from typing import Any

# one recorded kernel: (kind, scheduler node names)
Kernel = tuple[str, list[str]]

_RECORDING = []


def _record(kind, nodes):
    if _RECORDING:
        _RECORDING[-1].append((kind, [n.get_name() for n in nodes if hasattr(n, "get_name")]))


@contextlib.contextmanager
def kernels() -> Iterator[list[Kernel]]:
    """Collects the kernels emitted inside the block into the yielded list."""
    rec = []
    _RECORDING.append(rec)
    try:
        yield rec
    finally:
        _RECORDING.pop()


@contextlib.contextmanager
def patched(obj: Any, name: str, wrap: Callable[[Any], Any]) -> Iterator[None]:
    """Replaces OBJ.NAME by wrap(OBJ.NAME) for the duration of the block."""
    orig = getattr(obj, name)
    setattr(obj, name, wrap(orig))
    try:
        yield
    finally:
        setattr(obj, name, orig)


def _wrap_finalize(orig):
    def finalize_kernel(self, new_kernel, nodes):
        _record("kernel", nodes)
        return orig(self, new_kernel, nodes)

    return finalize_kernel


def _wrap_extern(orig):
    def codegen_extern_call(self, scheduler_node):
        _record("extern", [scheduler_node])
        return orig(self, scheduler_node)

    return codegen_extern_call


def _wrap_define_kernel(orig):
    def define_kernel(self, src_code, node_schedule, kernel):
        _record("kernel", node_schedule)
        return orig(self, src_code, node_schedule, kernel)

    return define_kernel


@contextlib.contextmanager
def hooks() -> Iterator[None]:
    """Installs the recording wrappers for the duration of the block."""
    from torch._inductor import scheduler as S
    from torch._inductor.codegen import cpp

    with contextlib.ExitStack() as st:
        st.enter_context(patched(S.Scheduler, "codegen_extern_call", _wrap_extern))
        st.enter_context(patched(cpp.KernelGroup, "finalize_kernel", _wrap_finalize))
        try:
            from torch._inductor.codegen.triton import TritonScheduling
        except ImportError:  # no triton: nothing to record there
            TritonScheduling = None
        if TritonScheduling is not None:
            st.enter_context(patched(TritonScheduling, "define_kernel", _wrap_define_kernel))
        yield


def exported(rec: list[Kernel], names: Collection[str]) -> list[list[str]]:
    """The recorded kernels as lists of the exported node names NAMES
    (folded nop and MultiOutput nodes left out, empty kernels dropped)."""
    out = []
    for _, members in rec:
        m = [n for n in members if n in names]
        if m:
            out.append(m)
    return out
