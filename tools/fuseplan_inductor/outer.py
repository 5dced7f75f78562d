"""Code generation's splits of C++ outer-loop fusion, known at export time.

The C++ scheduling fuses a reduction with a node whose loops share its
outer loops (``OuterLoopFusedSchedulerNode``), but code generation emits
such a group as one loop nest only when Inductor's own check passes
(``check_outer_fusion_loop_level_attr`` in torch/_inductor/codegen/cpp.py):
the fused outer loops of its members must have the same variable, size,
offset and step (vectorisation along an outer loop changes the step), and
no member's first inner loop may be more than 300 times the outer loops'
product.  Otherwise ``codegen_outer_loop_node`` falls back to one loop
nest per member: the scheduler's group is several kernels.

``Probe`` builds each node's loop nest alone with the backend's own kernel
proxy (nothing is emitted) and asks that check about pairs, so the
exporter lists the pairs code generation would split as ``unfusible``
(docs/exporter.md, "Code generation splits").
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def _trial() -> Iterator[None]:
    """For the block: SchedulerNode.mark_run and decide_inplace_update are
    no-ops (a trial loop nest must not allocate buffers or decide in-place
    updates), no buffer counts as removed (the real code generation, done
    before, removed the buffers local to its kernels, which a node alone
    still reads), and the scheduler's log of a failed node is silent."""
    import logging

    from torch._inductor import scheduler as S
    from torch._inductor.utils import OrderedSet
    from torch._inductor.virtualized import V

    saved = (S.SchedulerNode.mark_run, S.SchedulerNode.decide_inplace_update)
    removed = (V.graph.removed_buffers, V.graph.inplaced_to_remove)
    log = logging.getLogger(S.__name__)
    disabled = log.disabled
    S.SchedulerNode.mark_run = lambda self: None
    S.SchedulerNode.decide_inplace_update = lambda self: None
    V.graph.removed_buffers, V.graph.inplaced_to_remove = OrderedSet(), OrderedSet()
    log.disabled = True
    try:
        yield
    finally:
        S.SchedulerNode.mark_run, S.SchedulerNode.decide_inplace_update = saved
        V.graph.removed_buffers, V.graph.inplaced_to_remove = removed
        log.disabled = disabled


class Probe:
    """Loop nests of single scheduler nodes as the C++ backend would
    generate them, and Inductor's outer-loop check on pairs of them."""

    def __init__(self, sched: Any) -> None:
        self.sched = sched
        self.proxies: dict[str, Any] = {}  # node name -> kernel proxy, None: none

    def _proxy(self, snode: Any) -> Any:
        """SNODE's kernel proxy alone (cached), or None when its backend is
        not the C++ one or the trial fails."""
        name = snode.get_name()
        if name in self.proxies:
            return self.proxies[name]
        from torch._inductor import metrics
        from torch._inductor.codegen import cpp

        proxy = None
        backend = self.sched.get_backend(snode.get_device())
        if isinstance(backend, cpp.CppScheduling):
            count = metrics.generated_cpp_vec_kernel_count
            try:
                with _trial():
                    proxy = backend.kernel_proxy_cls(cpp.KernelGroup())
                    proxy.codegen_nodes([snode])
                if proxy.loop_nest is None or not proxy.loop_nest.loops:
                    proxy = None
            except Exception:  # noqa: BLE001 (no verdict: the pair is left offered)
                proxy = None
            metrics.generated_cpp_vec_kernel_count = count
        self.proxies[name] = proxy
        return proxy

    def splits(self, a: Any, b: Any) -> bool:
        """Whether code generation would emit scheduler nodes A and B, fused
        by their shared outer loops, as two loop nests: Inductor's
        check_outer_fusion_loop_level_attr at their outer-loop fusion depth
        (the common prefix of their loop sizes) refuses them.  False when
        they share no outer loop or either has no C++ loop nest."""
        from torch._inductor.codegen import cpp

        va, vb = a.group[1][0], b.group[1][0]
        depth = min(len(va), len(vb))
        if depth < 1 or tuple(va[:depth]) != tuple(vb[:depth]):
            return False
        pa, pb = self._proxy(a), self._proxy(b)
        if pa is None or pb is None:
            return False
        if any(len(p.loop_nest.loops) < depth for p in (pa, pb)):
            return True  # loops merged below the fusion depth: no common outer nest
        check = cpp.OuterLoopFusedSchedulerNode.check_outer_fusion_loop_level_attr
        try:
            return not check(None, [pa, pb], depth)
        except Exception:  # noqa: BLE001 (Inductor's assertions: no merged nest)
            return True


def _outer_only(a: Any, b: Any) -> bool:
    """Whether scheduler nodes A and B, one of them a reduction, share
    outer loops but fuse by no other rule of the C++ scheduling (equal
    loops, or a pointwise node over a reduction's loops and reduction
    sizes): the pairs only outer-loop fusion puts together."""
    (va, ra), (vb, rb) = a.group[1], b.group[1]
    if not (ra or rb) or (va, ra) == (vb, rb):
        return False
    if (not ra and tuple(va) == tuple(vb) + tuple(rb)) or \
            (not rb and tuple(vb) == tuple(va) + tuple(ra)):
        return False
    d = min(len(va), len(vb))
    return d >= 1 and tuple(va[:d]) == tuple(vb[:d])


def split_pairs(sched: Any, sched_nodes: dict[str, Any]) -> list[tuple[str, str]]:
    """The pairs of SCHED_NODES (exported node name -> pre-fusion scheduler
    node, with its pre-fusion loops), in the order of SCHED_NODES, that
    only outer-loop fusion puts together and that code generation would
    split (Probe.splits)."""
    probe = Probe(sched)
    buckets: dict[Any, list[tuple[str, Any]]] = {}
    for name, sn in sched_nodes.items():
        group = getattr(sn, "group", None)
        if group is not None and not sn.is_extern() and group[1][0]:
            buckets.setdefault(group[1][0][0], []).append((name, sn))
    out = []
    for nodes in buckets.values():
        for i, (u, a) in enumerate(nodes):
            for v, b in nodes[i + 1:]:
                if _outer_only(a, b) and probe.splits(a, b):
                    out.append((u, v))
    return out
