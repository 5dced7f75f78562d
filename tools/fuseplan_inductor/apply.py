"""Apply fuseplan plans inside torch.compile (Inductor).

``with plans(PLAN_DIR): torch.compile(model)(x)...`` makes every graph that
Inductor compiles inside the block run the plan made for it:

1. ``config._pre_fusion_custom_pass``: the pre-fusion scheduler nodes are
   mapped to the fuseplan graph exactly as the exporter maps them
   (prefusion.capture) and fingerprinted; the plan with that fingerprint is
   looked up in PLAN_DIR.  No plan: an error naming the graph (or, with
   on_missing="inductor", a logged fallback to Inductor's own choice).
   Inductor's peak-memory reorder is turned off for that graph.
2. Fusion: an InductorChoices whose ``can_fuse`` refuses every pair of nodes
   that the plan puts in different groups; Inductor's own fusion pass runs
   with its own heuristics on the pairs that are left.
3. ``config._post_fusion_custom_pass``: a group Inductor did not (fully)
   form is completed with Inductor's own legality check
   (``Scheduler.can_fuse``, its heuristics off, and the cycle check) and
   ``Scheduler.fuse_two_nodes``; a group it refuses is an
   UnfusibleGroupError naming the nodes and Inductor's reason (every
   refused group of the graph is collected first: ``refused``).  The fused
   nodes are then put in the plan's order (the nodes the export folds away,
   nop and MultiOutput nodes, go as early as their inputs allow).
4. ``Scheduler.codegen``: the kernels Inductor emits are recorded (one C++
   loop nest, one Triton kernel, one extern call each) and compared with the
   plan: one kernel per group, same members, same order.
5. ``CppScheduling.ready_to_flush``: with ``flush_kernels`` (the default of
   ``plans()``) the C++ backend ends its function after every kernel, so
   that the wrapper allocates one kernel's outputs at a time and frees its
   dead inputs before the next kernel allocates, as fuseplan's model counts
   (docs/inductor.md, "C++ functions").
6. ``AllocateLine.should_reuse_buffer``: with ``adjacent_reuse`` (the default
   of ``plans()``) the wrapper's memory planning reuses a freed buffer only
   for an allocation of the next kernel, which counts the same bytes as a
   free and an allocation; a buffer held longer for a later kernel raises
   the real peak above the model's (docs/inductor.md, "Buffer reuse").

docs/inductor.md lists the private Inductor APIs this relies on.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
from collections.abc import Iterator

from . import prefusion, record
from .files import load
from .versions import check_torch

log = logging.getLogger("fuseplan_inductor")


class PlanError(RuntimeError):
    """A plan cannot be applied (the base of the errors below)."""


class PlanDirError(PlanError):
    """PLAN_DIR is unreadable, or holds a bad or ambiguous plan file."""


class NoPlanError(PlanError):
    """No plan in PLAN_DIR was made for a graph being compiled."""


class UnfusibleGroupError(PlanError):
    """Inductor refuses to fuse a group of the plan.  ``fingerprint``: the
    graph's; ``parts``: the first refused group as the parts Inductor left
    (lists of node names); ``refused``: the parts of every refused group of
    that graph."""


class KernelMismatchError(PlanError):
    """The kernels Inductor emitted differ from the plan's groups."""


class GraphReport:
    """What happened to one compiled graph."""

    def __init__(self, which: str, fingerprint: str, node_names: list[str]) -> None:
        self.which = which  # "fwd" or "bwd"
        self.fingerprint = fingerprint
        self.node_names = node_names  # the exported nodes, in order
        self.plan_name = None  # the applied plan's graph name, None: Inductor's own
        self.plan_path = None
        self.groups = None  # the applied plan's groups
        self.emitted = None  # the kernels Inductor emitted (exported node names)
        self.kernels_match_plan = None
        self.graph = None  # the fuseplan graph dict rebuilt at compile time

    def describe(self) -> str:
        return (f"the {self.which} graph ({len(self.node_names)} nodes, "
                f"fingerprint {self.fingerprint})")


class _Entry:
    def __init__(self, path, name, groups):
        self.path = path
        self.name = name
        self.groups = groups


def _read_dir(plan_dir):
    """Indexes the graph and plan files of PLAN_DIR.  Returns
    ({fingerprint: _Entry}, {graph name: (fingerprint, node names)});
    raises PlanDirError."""
    if not os.path.isdir(plan_dir):
        raise PlanDirError(f"{plan_dir}: not a directory of fuseplan plans")
    graphs, plans = {}, []
    for path in sorted(glob.glob(os.path.join(plan_dir, "*.json")) +
                       glob.glob(os.path.join(plan_dir, "*.json.gz"))):
        try:
            doc = load(path)
        except (OSError, ValueError, EOFError) as e:
            raise PlanDirError(f"{path}: cannot read: {e}") from e
        fmt = doc.get("format") if isinstance(doc, dict) else None
        if fmt == "fuseplan.graph":
            meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}
            graphs[doc.get("name", "")] = (meta.get("fingerprint"),
                                           [n.get("name") for n in doc.get("nodes", [])])
        elif fmt == "fuseplan.plan":
            plans.append((path, doc))
    index = {}
    for path, doc in plans:
        name = doc.get("graph", "")
        fp = doc.get("fingerprint") or graphs.get(name, (None,))[0]
        if not fp:
            raise PlanDirError(f"{path}: the plan has no fingerprint and {plan_dir} has no "
                               f"graph file named '{name}' with one (export the graph with "
                               f"fuseplan_inductor, or add the plan's \"fingerprint\")")
        groups = doc.get("groups")
        if not isinstance(groups, list) or not all(isinstance(g, list) for g in groups):
            raise PlanDirError(f"{path}: groups: missing or not an array of arrays")
        if fp in index:
            raise PlanDirError(f"{path}: a second plan for graph '{name}' (fingerprint {fp}); "
                               f"{index[fp].path} is one too: keep one plan per graph")
        index[fp] = _Entry(path, name, groups)
    return index, graphs


class _GraphPlan:
    """The plan being applied to one graph, attached to its scheduler."""

    def __init__(self, entry, report):
        self.entry = entry
        self.report = report
        self.group_of = {}
        known = set(report.node_names)
        for gi, grp in enumerate(entry.groups):
            if not grp:
                raise PlanError(f"{entry.path}: groups[{gi}] is empty")
            for n in grp:
                if n not in known:
                    raise PlanError(f"{entry.path}: groups[{gi}]: node '{n}' is not in "
                                    f"{report.describe()}")
                if n in self.group_of:
                    raise PlanError(f"{entry.path}: groups[{gi}]: node '{n}' is already "
                                    f"in group {self.group_of[n]}")
                self.group_of[n] = gi
        missing = [n for n in report.node_names if n not in self.group_of]
        if missing:
            raise PlanError(f"{entry.path}: node '{missing[0]}' is in no group "
                            f"({len(missing)} nodes missing)")
        self.forcing = False  # True while groups are completed: Inductor's heuristics off

    def groups_of(self, node):
        return {self.group_of.get(s.get_name()) for s in node.get_nodes()}

    def same_group(self, a, b):
        ga, gb = self.groups_of(a), self.groups_of(b)
        return len(ga) == 1 and ga == gb and None not in ga


class PlanSet:
    """The plans of one directory, and the reports of the graphs compiled
    while they were active."""

    def __init__(self, plan_dir: str, on_missing: str = "error", verify: str = "error",
                 flush_kernels: bool = True, adjacent_reuse: bool = True) -> None:
        if on_missing not in ("error", "inductor"):
            raise ValueError(f"on_missing must be 'error' or 'inductor', not {on_missing!r}")
        if verify not in ("error", "report"):
            raise ValueError(f"verify must be 'error' or 'report', not {verify!r}")
        self.plan_dir = plan_dir
        self.on_missing = on_missing
        self.verify = verify
        self.flush_kernels = flush_kernels  # one C++ function per kernel (_wrap_ready)
        self.adjacent_reuse = adjacent_reuse  # no freed buffer held (_wrap_reuse)
        self.index, self.graphs = _read_dir(plan_dir)
        self.reports = []

    def lookup(self, report: GraphReport) -> _Entry | None:
        """The entry for REPORT's graph; None for a logged fallback; raises
        NoPlanError."""
        entry = self.index.get(report.fingerprint)
        if entry is not None:
            return entry
        why = f"{self.plan_dir} has no plan for {report.describe()}"
        stale = [n for n, (fp, names) in self.graphs.items() if names == report.node_names]
        if stale:
            why += (f"; graph '{stale[0]}' there has the same nodes but a different "
                    f"fingerprint: the plan is stale (model, batch size, dtype or torch "
                    f"changed); export and solve again")
        elif self.index:
            names = sorted(e.name for e in self.index.values())
            why += f" (it has plans for: {', '.join(names[:6])}{' ...' if len(names) > 6 else ''})"
        if self.on_missing == "inductor":
            log.warning("fuseplan_inductor: %s: using Inductor's own fusion", why)
            return None
        raise NoPlanError(why)


# --------------------------------------------------------------------------
# the hooks


_ACTIVE = []  # PlanSet stack: the innermost applies
_WHY = []  # per fusion attempt: Inductor's WhyNoFuse reasons


def _pre_fusion(nodes):
    import torch._inductor.config as ic
    from torch._inductor.virtualized import V

    if not _ACTIVE:
        return nodes
    ps = _ACTIVE[-1]
    sched = V.graph.scheduler
    pf = prefusion.capture(sched, nodes)
    report = GraphReport("bwd" if V.graph.is_backward else "fwd", pf.fingerprint,
                         [n["name"] for n in pf.graph["nodes"]])
    report.graph = pf.graph
    ps.reports.append(report)
    sched._fuseplan_report = report
    entry = ps.lookup(report)
    if entry is None:
        return nodes
    sched._fuseplan = _GraphPlan(entry, report)
    sched._fuseplan_verify = ps.verify
    report.plan_name, report.plan_path, report.groups = entry.name, entry.path, entry.groups
    # the plan's order is final: Inductor's peak-memory reorder is off for
    # this graph (Scheduler._init restores the setting, see _hooks)
    ic.reorder_for_peak_memory = False
    return nodes


def _loops(part):
    """A part's loop ranges as Inductor's backend compares them."""
    try:
        sizes, rsizes = part.group[1]
    except (AttributeError, TypeError, ValueError):
        return "extern"
    return f"{tuple(sizes)}x{tuple(rsizes)}" if rsizes else str(tuple(sizes))


def _refusal(gp, gi, parts, reasons):
    """The UnfusibleGroupError for group GI stuck at PARTS.  "node1 must go
    before node2" is only the reverse orientation of a pair; when nothing
    else was said, the backend refused the data-order orientation silently
    (the C++ backend does when the parts share no outer loop), so the
    parts' loop ranges are named."""
    names = [s.get_name() for p in parts for s in p.get_nodes()]
    useful = [r for r in reasons if "must go before" not in r]
    why = "; ".join(dict.fromkeys(useful)) or (
        "Scheduler.can_fuse said no without giving a reason (the backend's "
        "can_fuse_vertical / can_fuse_horizontal; the parts' loops: " +
        ", ".join(f"{'+'.join(s.get_name() for s in p.get_nodes())} {_loops(p)}"
                  for p in parts) + ")")
    err = UnfusibleGroupError(
        f"{gp.entry.path}: groups[{gi}] of {gp.report.describe()}: Inductor cannot "
        f"fuse {', '.join(names)} into one kernel: {why}")
    err.fingerprint = gp.report.fingerprint
    err.parts = [[s.get_name() for s in p.get_nodes()] for p in parts]
    err.refused = [err.parts]
    return err


def _fuse_group(sched, gp, gi, parts, fused_set):
    """Fuses PARTS (scheduler nodes, all of group GI) into one with
    Inductor's own checks and fuse_two_nodes.  Raises UnfusibleGroupError
    with Inductor's reasons when no pair of the remaining parts fuses."""
    while len(parts) > 1:
        reasons = []
        for a in parts:
            for b in parts:
                if a is b:
                    continue
                _WHY.append([])
                try:
                    ok = sched.can_fuse(a, b) and not sched.will_fusion_create_cycle(a, b)
                finally:
                    reasons.extend(_WHY.pop())
                if ok:
                    new = sched.fuse_two_nodes(a, b, fused_set)
                    parts = [p for p in parts if p is not a and p is not b] + [new]
                    break
            else:
                continue
            break
        else:
            raise _refusal(gp, gi, parts, reasons)
    return parts[0]


def _producers(sched, node):
    """Operation names NODE reads from (directly), not its own."""
    own = node.get_operation_names()
    out = set()
    for s in node.get_nodes():
        for d in s.unmet_dependencies:
            buf = sched.name_to_buf.get(d.name)
            if buf is not None:
                op = buf.defining_op_name()
                if op not in own:
                    out.add(op)
    return out


def _order(sched, gp, nodes, by_group):
    """NODES in the plan's order; nodes outside every group (folded nop
    and MultiOutput nodes) as early as their producers allow.  Raises
    PlanError when the plan's order puts a group before its input."""
    groups = gp.entry.groups
    extras = [n for n in nodes if not any(s.get_name() in gp.group_of for s in n.get_nodes())]
    done, out = set(), []
    preds = {id(n): _producers(sched, n) for n in nodes}

    def flush():
        progress = True
        while progress and extras:
            progress = False
            for n in list(extras):
                if preds[id(n)] <= done:
                    out.append(n)
                    done.update(n.get_operation_names())
                    extras.remove(n)
                    progress = True

    for gi in range(len(groups)):
        flush()
        n = by_group[gi]
        missing = preds[id(n)] - done
        if missing:
            raise PlanError(f"{gp.entry.path}: groups[{gi}] of {gp.report.describe()} runs "
                            f"before {sorted(missing)[0]}, whose output it reads: the plan's "
                            f"order is not a program order (fuseplan verify says more)")
        out.append(n)
        done.update(n.get_operation_names())
    flush()
    if extras:
        raise PlanError(f"{gp.entry.path}: {extras[0].get_name()} cannot be scheduled in "
                        f"the plan's order of {gp.report.describe()}")
    return out


def _post_fusion(nodes):
    from torch._inductor.utils import OrderedSet
    from torch._inductor.virtualized import V

    sched = V.graph.scheduler
    gp = getattr(sched, "_fuseplan", None)
    if gp is None:
        return nodes
    parts = {}
    for n in nodes:
        gs = gp.groups_of(n) - {None}
        if len(gs) > 1:  # the choices class makes this impossible
            raise PlanError(f"{gp.entry.path}: Inductor fused nodes of groups {sorted(gs)}")
        if gs:
            parts.setdefault(gs.pop(), []).append(n)
    fused_set = OrderedSet(nodes)
    gp.forcing = True
    by_group, refused = {}, []
    try:
        for gi, ps in parts.items():
            try:
                by_group[gi] = _fuse_group(sched, gp, gi, ps, fused_set)
            except UnfusibleGroupError as e:
                refused.append(e)  # the other groups are still tried: all refusals at once
    finally:
        gp.forcing = False
    if refused:
        err = refused[0]
        if len(refused) > 1:
            err.args = (f"{err} (and {len(refused) - 1} more groups of that graph)",)
        err.refused = [e.parts for e in refused]
        raise err
    return _order(sched, gp, list(fused_set), by_group)


def _compare(gp, emitted):
    """None when EMITTED (lists of node names) is the plan's groups in
    order; else what differs first."""
    want = gp.entry.groups
    for i, (e, w) in enumerate(zip(emitted, want, strict=False)):  # lengths: below
        if set(e) != set(w):
            return f"kernel {i} holds {sorted(e)}, the plan's group {i} is {sorted(w)}"
    if len(emitted) != len(want):
        return f"{len(emitted)} kernels were emitted for the plan's {len(want)} groups"
    return None


def _check_emitted(sched, rec):
    report = getattr(sched, "_fuseplan_report", None)
    if report is None:
        return
    report.emitted = record.exported(rec, set(report.node_names))
    gp = getattr(sched, "_fuseplan", None)
    if gp is None:
        return
    diff = _compare(gp, report.emitted)
    report.kernels_match_plan = diff is None
    if diff is not None and sched._fuseplan_verify == "error":
        raise KernelMismatchError(f"{gp.entry.path}: Inductor's kernels for "
                                  f"{report.describe()} differ from the plan: {diff}")


def _make_choices(base):
    from torch._inductor.choices import InductorChoices
    from torch._inductor.scheduler import WhyNoFuse

    class FuseplanChoices(InductorChoices):
        def can_fuse(self, scheduler, node1, node2, shared_data_score):
            gp = getattr(scheduler, "_fuseplan", None)
            if gp is not None:
                if not gp.same_group(node1, node2):
                    WhyNoFuse(node1, node2)("not in one group of the fuseplan plan")
                    return False
                if gp.forcing:
                    return True
            return base.can_fuse(scheduler, node1, node2, shared_data_score)

        def _forced(self, scheduler, node1, node2):
            gp = getattr(scheduler, "_fuseplan", None)
            return gp is not None and gp.forcing and gp.same_group(node1, node2)

        # while a plan's group is completed, Inductor's heuristics (shared
        # data below score_fusion_memory_threshold, distant nodes) are off;
        # the backend's legality checks still run after these
        def can_fuse_vertical(self, scheduler, node1, node2, shared_data_score):
            return (self._forced(scheduler, node1, node2) or
                    base.can_fuse_vertical(scheduler, node1, node2, shared_data_score))

        def can_fuse_horizontal(self, scheduler, node1, node2, shared_data_score):
            return (self._forced(scheduler, node1, node2) or
                    base.can_fuse_horizontal(scheduler, node1, node2, shared_data_score))

        def score_fusion(self, scheduler, node1, node2):
            return base.score_fusion(scheduler, node1, node2)

    return FuseplanChoices()


def _wrap_init(orig):
    def _init(self, *args, **kwargs):
        import torch._inductor.config as ic

        saved = ic.reorder_for_peak_memory
        try:
            return orig(self, *args, **kwargs)
        finally:
            ic.reorder_for_peak_memory = saved

    return _init


def _wrap_codegen(orig):
    def codegen(self):
        with record.kernels() as rec:
            result = orig(self)
        _check_emitted(self, rec)
        return result

    return codegen


def _wrap_ready(orig):
    """CppScheduling.ready_to_flush: true after every kernel while the
    innermost PlanSet has flush_kernels.  Why: the C++ backend otherwise
    collects every kernel up to the next extern call into one function
    (KernelGroup), and the wrapper allocates all their outputs before that
    function runs and frees their dead inputs after it returns; the
    scheduler's codegen loop asks this after each node and flushes."""

    def ready_to_flush(self):
        return bool(_ACTIVE and _ACTIVE[-1].flush_kernels) or orig(self)

    return ready_to_flush


def _wrap_reuse(orig):
    """AllocateLine.should_reuse_buffer: while the innermost PlanSet has
    adjacent_reuse, a freed buffer is reused only by the kernel right after
    the one that freed it.  Why: Inductor also reuses one further away when
    its own peak estimate (memory.py, without in-place updates, graph
    inputs never freed) says the hold stays under its estimated peak; that
    estimate is higher than fuseplan's, so the hold can raise the real
    peak of a plan fuseplan made lower."""

    def should_reuse_buffer(self, free_line, size):
        if (_ACTIVE and _ACTIVE[-1].adjacent_reuse and not self.comm_buffer
                and free_line.scheduler_node_index + 1 != self.scheduler_node_index):
            return False
        return orig(self, free_line, size)

    return should_reuse_buffer


def _wrap_why(orig):
    def __call__(self, reason, *args):
        if _WHY:
            _WHY[-1].append(reason % args if args else reason)
        return orig(self, reason, *args)

    return __call__


@contextlib.contextmanager
def _hooks():
    """Installs the hooks for the duration of the block (once, however
    deeply plans() nests)."""
    import torch
    import torch._inductor.config as ic
    from torch._inductor import scheduler as S
    from torch._inductor.codegen import cpp, wrapper
    from torch._inductor.virtualized import V

    with contextlib.ExitStack() as st:
        if ic._pre_fusion_custom_pass is not None or ic._post_fusion_custom_pass is not None:
            raise PlanError("config._pre_fusion_custom_pass or _post_fusion_custom_pass is "
                            "already set: fuseplan_inductor needs both")
        # the FX graph and AOTAutograd caches would skip the scheduler
        st.enter_context(ic.patch({
            "fx_graph_cache": False,
            "fx_graph_remote_cache": False,
            "_pre_fusion_custom_pass": _pre_fusion,
            "_post_fusion_custom_pass": _post_fusion,
        }))
        st.enter_context(torch._functorch.config.patch(enable_autograd_cache=False))
        st.enter_context(V.set_choices_handler(_make_choices(V.choices)))
        st.enter_context(record.patched(S.Scheduler, "_init", _wrap_init))
        st.enter_context(record.patched(S.Scheduler, "codegen", _wrap_codegen))
        st.enter_context(record.patched(S.WhyNoFuse, "__call__", _wrap_why))
        st.enter_context(record.patched(cpp.CppScheduling, "ready_to_flush", _wrap_ready))
        st.enter_context(record.patched(wrapper.AllocateLine, "should_reuse_buffer", _wrap_reuse))
        st.enter_context(record.hooks())
        yield


@contextlib.contextmanager
def _active(ps):
    """Makes PS the innermost active PlanSet; the hooks are installed by
    the outermost one."""
    outer = bool(_ACTIVE)
    _ACTIVE.append(ps)
    try:
        if outer:
            yield ps
        else:
            with _hooks():
                yield ps
    finally:
        _ACTIVE.remove(ps)


@contextlib.contextmanager
def plans(plan_dir: str | None = None, *, on_missing: str = "error",
          verify: str = "error", flush_kernels: bool = True,
          adjacent_reuse: bool = True) -> Iterator[PlanSet]:
    """Applies the plans in PLAN_DIR (default: $FUSEPLAN_PLANS) to every
    graph Inductor compiles inside the block; yields the PlanSet, whose
    ``reports`` say what happened to each graph.  Run the whole training
    step (forward and backward) inside the block: AOTAutograd compiles the
    backward graph at the first backward.

    on_missing: "error" (a graph without a plan raises NoPlanError) or
    "inductor" (logged, Inductor fuses that graph as usual).  verify:
    "error" (kernels that differ from the plan raise KernelMismatchError) or
    "report" (GraphReport.kernels_match_plan says so).  flush_kernels:
    one C++ function per kernel (True), or the C++ backend's own functions
    that run every kernel between two extern calls (False).  Raises
    UnsupportedTorchError, PlanDirError; the errors of compilation reach the
    caller wrapped by torch (torch._dynamo.exc.BackendCompilerFailed), see
    ``plan_error``."""
    check_torch()
    if plan_dir is None:
        plan_dir = os.environ.get("FUSEPLAN_PLANS")
        if not plan_dir:
            raise PlanDirError("no plan directory: pass one or set FUSEPLAN_PLANS")
    with _active(PlanSet(plan_dir, on_missing, verify, flush_kernels, adjacent_reuse)) as ps:
        yield ps


# plans_from_env's context manager and PlanSet, kept open until exit
_FROM_ENV: list[tuple[contextlib.AbstractContextManager, PlanSet]] = []


def plans_from_env() -> PlanSet | None:
    """Applies $FUSEPLAN_PLANS (with $FUSEPLAN_ON_MISSING, default "error")
    to every graph Inductor compiles for the rest of the process, as if
    the whole script ran inside ``plans()``; returns that PlanSet, or None
    when FUSEPLAN_PLANS is unset or empty.  Importing the package does not
    do this: a script calls it once (a second call returns the same
    PlanSet).  Raises what ``plans()`` raises."""
    if not os.environ.get("FUSEPLAN_PLANS"):
        return None
    if not _FROM_ENV:
        cm = plans(os.environ["FUSEPLAN_PLANS"],
                   on_missing=os.environ.get("FUSEPLAN_ON_MISSING", "error"))
        _FROM_ENV.append((cm, cm.__enter__()))
    return _FROM_ENV[0][1]


@contextlib.contextmanager
def observe(flush_kernels: bool = False, adjacent_reuse: bool = False) -> Iterator[PlanSet]:
    """Records the kernels Inductor emits for every graph compiled inside
    the block; yields an object whose ``reports`` list one GraphReport per
    graph (fingerprint, emitted).  Inductor's plan is left as it is; with
    FLUSH_KERNELS its C++ kernels are one function each, with
    ADJACENT_REUSE no freed buffer is held for a later kernel (as in
    plans())."""

    class _Observer(PlanSet):
        def __init__(self):
            self.plan_dir, self.on_missing, self.verify = None, "inductor", "report"
            self.flush_kernels, self.adjacent_reuse = flush_kernels, adjacent_reuse
            self.index, self.graphs, self.reports = {}, {}, []

        def lookup(self, report):
            return None

    check_torch()
    with _active(_Observer()) as ps:
        yield ps


def plan_error(exc: BaseException | None) -> PlanError | None:
    """The PlanError inside EXC (torch wraps errors raised during
    compilation), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, PlanError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None
