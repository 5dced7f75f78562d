"""python -m fuseplan_inductor run MODEL --batch B [--whole-step]: the whole loop.

export (the pre-fusion graphs and Inductor's plans of one training step) ->
fuseplan solve (auto, under the budget) -> compile with the plans -> measure
eager, Inductor's own plan and fuseplan's plan side by side.

Exit codes: 0 done, every check passed; 1 done, but outputs differ from
eager or the kernels differ from a plan; 2 usage or environment (bad
MODEL, unsupported torch, no fuseplan binary, a failed solve); 3 a plan
cannot be applied (foreign or stale plan, a group Inductor refuses).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from typing import Any, TextIO

from . import measure
from .apply import GraphReport, PlanError, PlanSet, UnfusibleGroupError, observe, plan_error, plans
from .export import Exported, codegen_splits, export_model, whole_step_fn
from .files import dump, load
from .models import ModelError, build_model
from .versions import UnsupportedTorchError, check_torch


class LoopError(RuntimeError):
    """An environment or tool failure of the loop (exit code 2)."""


def find_fuseplan(path: str | None = None) -> str:
    """The fuseplan binary: PATH, else $FUSEPLAN, else `fuseplan` on the
    PATH, else the repository's build/fuseplan.  Raises LoopError."""
    here = os.path.dirname(os.path.abspath(__file__))
    cands = [path] if path else [os.environ.get("FUSEPLAN"), shutil.which("fuseplan"),
                                 os.path.join(here, "..", "..", "build", "fuseplan")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise LoopError(f"fuseplan binary not found ({path or 'FUSEPLAN, PATH, build/fuseplan'}): "
                    f"build it (./dev.sh build) or pass --fuseplan PATH")


def _fp(fuseplan, *args):
    p = subprocess.run([fuseplan, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise LoopError(f"fuseplan {' '.join(args)}: exit {p.returncode}: "
                        f"{p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''}")
    return p.stdout


def _evaluate(fuseplan, graph_path, plan_path):
    return json.loads(_fp(fuseplan, "eval", "--json", graph_path, plan_path))


def solve(fuseplan: str, ex: Exported, plan_dir: str, budget: str | None, time_limit: float,
          refused: Iterable[Iterable[str]] = ()) -> tuple[str, str]:
    """Solves one exported graph into PLAN_DIR.  The pairs of a group that
    Inductor's code generation split (meta.inductor_codegen_splits) are added
    to the graph's unfusible pairs first, so that the plan does not ask for a
    kernel Inductor would not emit.  Returns (graph path, plan path)."""
    g = copy.deepcopy(ex.graph)
    extra = []
    for parts in g["meta"].get("inductor_codegen_splits", []):
        for i, a in enumerate(parts):
            for b in parts[i + 1:]:
                extra += [[u, v] for u in a for v in b]
    g["unfusible"] = g["unfusible"] + extra + [list(p) for p in refused]
    gp = os.path.join(plan_dir, f"{g['name']}.json")
    pp = os.path.join(plan_dir, f"{g['name']}.plan.json")
    dump(g, gp)
    args = ["solve", gp, "--method", "auto", "--time-limit", str(time_limit), "-o", pp]
    if budget:
        args += ["--peak-limit", budget]
    _fp(fuseplan, *args)
    plan = load(pp)
    plan["fingerprint"] = g["meta"]["fingerprint"]
    dump(plan, pp)
    return gp, pp


def emitted_plan(ex: Exported) -> list[list[str]]:
    """Inductor's plan as its code generation emits it: the scheduler's
    groups, with each group that code generation split
    (meta.inductor_codegen_splits) replaced by its parts."""
    parts = {frozenset(sum(p, [])): p for p in ex.graph["meta"].get("inductor_codegen_splits", [])}
    groups = []
    for g in ex.plan["groups"]:
        groups.extend(parts.get(frozenset(g), [g]))
    return dict(ex.plan, groups=groups)


def _groups_key(groups):
    return [frozenset(x) for x in groups]


def _measure_method(method, model0, inputs, loss_fn, device, steps, ctx, whole_step=None):
    """Compiles (unless eager) a fresh copy of MODEL0, or with WHOLE_STEP its
    whole_step_fn, and measures it.  Returns (snapshot, step seconds, step
    peak, graph peaks, reports)."""
    import torch

    model = copy.deepcopy(model0).to(device)
    model.train()
    torch._dynamo.reset()
    if whole_step:
        fn = whole_step_fn(model, loss_fn, whole_step)
        if method != "eager":
            fn = torch.compile(fn, dynamic=False, fullgraph=True)
        step = measure.make_whole_step(fn, model, inputs)
    else:
        fn = model if method == "eager" else torch.compile(model, dynamic=False)
        step = measure.make_step(fn, model, inputs, loss_fn)
    with ctx() as ps:
        snap = measure.snapshot(model, step())  # compiles both graphs
        seconds = measure.time_step(step, device, steps=steps)
        peak, graph_peaks = measure.measure_peak(step, model, inputs, device)
    return snap, seconds, peak, graph_peaks, (ps.reports if ps is not None else [])


def _null_ctx():
    import contextlib

    return contextlib.nullcontext()


class _Graph:
    """One exported graph through the loop: its files and predicted figures."""

    def __init__(self, ex, graph_path, plan_path, inductor_groups):
        self.ex, self.graph_path, self.plan_path = ex, graph_path, plan_path
        self.fingerprint = ex.graph["meta"]["fingerprint"]
        self.inductor_groups = inductor_groups  # Inductor's plan as emitted
        self.figures = {}  # method -> fuseplan eval figures


def _plan_graphs(fuseplan, exported, exp_dir, plan_dir, args, given):
    """Solves every exported graph (or takes the plan of GIVEN, a dict
    fingerprint -> plan path) and evaluates the three methods' plans;
    returns the list of _Graph."""
    graphs = []
    for ex in exported:
        if given:
            gp, pp = ex.graph_path, given[ex.graph["meta"]["fingerprint"]]
        else:
            gp, pp = solve(fuseplan, ex, plan_dir, args.budget, args.time_limit)
        ip = os.path.join(exp_dir, f"{ex.graph['name']}.inductor-emitted.plan.json")
        dump(emitted_plan(ex), ip)
        g = _Graph(ex, gp, pp, load(ip)["groups"])
        e = _evaluate(fuseplan, gp, ip)
        g.figures = {"eager": e["eager"], "inductor": e, "fuseplan": _evaluate(fuseplan, gp, pp)}
        graphs.append(g)
    return graphs


def _check_given(plan_dir, exported):
    """{fingerprint: plan path} of PLAN_DIR for the exported graphs;
    raises NoPlanError before anything is compiled when one has no plan."""
    given = PlanSet(plan_dir)
    out = {}
    for ex in exported:
        fp = ex.graph["meta"]["fingerprint"]
        names = [n["name"] for n in ex.graph["nodes"]]
        out[fp] = given.lookup(GraphReport(ex.which, fp, names)).path
    return out


def _kernels_match(method, graphs, reports):
    if method == "eager":
        return None
    if not reports:
        return False
    if method == "fuseplan":
        return all(r.kernels_match_plan for r in reports)
    want = {g.fingerprint: _groups_key(g.inductor_groups) for g in graphs}
    return all(r.emitted is not None and _groups_key(r.emitted) == want.get(r.fingerprint)
               for r in reports)


def _row(args, method, graphs, measured, ref):
    """The JSON object of one method."""
    snap, seconds, peak, graph_peaks, reports = measured
    ok, diff = measure.compare(ref, snap)
    figs = [g.figures[method] for g in graphs]
    row = {
        "model": args.model, "batch": args.batch, "device": args.device, "method": method,
        "cpp_functions": args.cpp_functions, "buffer_reuse": args.buffer_reuse,
        "workspaces": args.workspaces,
        "kernels": (sum(f["kernels"] for f in figs) if method == "eager"
                    else sum(len(r.emitted or []) for r in reports)),
        "kernels_match_plan": _kernels_match(method, graphs, reports),
        "outputs_match": ok,
        "max_abs_diff" if ok else "outputs_diff": diff,
        "predicted_traffic_bytes": sum(f["traffic_bytes"] for f in figs),
        "predicted_peak_bytes": max(f["peak_bytes"] for f in figs),
        "measured_peak_bytes": peak,
        "step_time_s": seconds,
        "graphs": [],
    }
    for i, (g, f) in enumerate(zip(graphs, figs, strict=True)):
        gr = {"graph": g.ex.graph["name"], "predicted_peak_bytes": f["peak_bytes"],
              "predicted_traffic_bytes": f["traffic_bytes"], "planned_kernels": f["kernels"]}
        if method != "eager" and i < len(reports):
            r = reports[i]
            gr["kernels"] = len(r.emitted or [])
            if r.groups is not None and r.emitted is not None:
                # groups of the applied plan that code generation split
                gr["split_groups"] = len(codegen_splits(r.groups, r.emitted))
            if i < len(graph_peaks):
                gr["measured_peak_bytes"] = graph_peaks[i]
        row["graphs"].append(gr)
    if method == "fuseplan":
        row["groups_not_in_inductor_plan"] = sum(
            1 for g in graphs for grp in _groups_key(load(g.plan_path)["groups"])
            if grp not in set(_groups_key(g.inductor_groups)))
    return row


def _split_groups(reports):
    """{fingerprint: (refused parts, why)} of the graphs whose plan's groups
    Inductor's code generation emitted as several kernels (C++ outer-loop
    fusion falls back to one loop nest per member when it cannot merge the
    loops): the scheduler formed them, the kernels do not."""
    out = {}
    for r in reports:
        if r.kernels_match_plan is not False or r.groups is None or r.emitted is None:
            continue
        splits = codegen_splits(r.groups, r.emitted)
        if splits:
            out[r.fingerprint] = (splits, f"Inductor's code generation split {len(splits)} "
                                  f"groups of {r.describe()} (the first: {splits[0]})")
    return out


def _measure_replanning(args, method, model, inputs, loss_fn, ctx, graphs, fuseplan,
                        exp_dir, plan_dir, given):
    """_measure_method; for fuseplan's own plans, the groups Inductor refuses
    (UnfusibleGroupError.refused: all of one graph) or its code generation
    splits (_split_groups) make their cross pairs unfusible, those graphs
    are solved again and the method measured again, up to --replan times."""
    refused = {}
    replanning = method == "fuseplan" and not given
    for attempt in range(args.replan + 1):
        last = attempt == args.replan
        try:
            measured = _measure_method(method, model, inputs, loss_fn, args.device, args.steps, ctx,
                                       args.whole_step)
        except Exception as e:  # noqa: BLE001 (torch wraps what the plans raise)
            pe = plan_error(e)
            if not replanning or last or not isinstance(pe, UnfusibleGroupError):
                raise
            found = {pe.fingerprint: (pe.refused, str(pe))}
        else:
            found = _split_groups(measured[4]) if replanning and not last else {}
            if not found:
                return measured
        for fingerprint, (refused_parts, why) in found.items():
            g = next(g for g in graphs if g.fingerprint == fingerprint)
            pairs = refused.setdefault(fingerprint, [])
            pairs += [[u, v] for parts in refused_parts for i, a in enumerate(parts)
                      for b in parts[i + 1:] for u in a for v in b]
            print(f"fuseplan_inductor: {why}; solving {g.ex.graph['name']} again with "
                  f"{len(pairs)} refused pairs unfusible", file=sys.stderr)
            gp, pp = solve(fuseplan, g.ex, plan_dir, args.budget, args.time_limit, pairs)
            g.figures["fuseplan"] = _evaluate(fuseplan, gp, pp)


def loop(args: argparse.Namespace) -> tuple[list[dict[str, Any]], int]:
    """Runs the loop; returns (rows, exit code).  Raises LoopError,
    ModelError, UnsupportedTorchError, PlanError (and torch's errors, a
    PlanError inside)."""
    import torch

    check_torch()
    fuseplan = find_fuseplan(args.fuseplan)
    model, inputs, loss_fn = build_model(args.model, args.batch, args.seq)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise LoopError("--device cuda: no CUDA device")
    work = args.work or tempfile.mkdtemp(prefix="fuseplan-loop.")
    exp_dir, plan_dir = os.path.join(work, "export"), os.path.join(work, "plans")
    os.makedirs(plan_dir, exist_ok=True)
    inputs = tuple(x.to(args.device) if isinstance(x, torch.Tensor) else x for x in inputs)
    model = model.to(args.device)
    exported = export_model(copy.deepcopy(model), inputs, loss_fn,
                            name=args.model.replace(":", ".").replace("/", "."),
                            model_label=args.model, batch=args.batch, out=exp_dir, ext=".json",
                            whole_step=args.whole_step, workspaces=args.workspaces)
    given = _check_given(args.plans, exported) if args.plans else None
    graphs = _plan_graphs(fuseplan, exported, exp_dir, plan_dir, args, given)
    # both plans compiled alike: as the model counts, or as Inductor does
    mem = {"flush_kernels": args.cpp_functions == "kernel",
           "adjacent_reuse": args.buffer_reuse == "adjacent"}
    contexts = {"eager": _null_ctx, "inductor": lambda: observe(**mem),
                "fuseplan": lambda: plans(args.plans or plan_dir, verify="report", **mem)}
    rows, ref = [], None
    for method, ctx in contexts.items():
        measured = _measure_replanning(args, method, model, inputs, loss_fn, ctx, graphs,
                                       fuseplan, exp_dir, plan_dir, given)
        ref = ref or measured[0]
        rows.append(_row(args, method, graphs, measured, ref))
    code = 0 if all(r["outputs_match"] and r["kernels_match_plan"] is not False
                    for r in rows) else 1
    return rows, code


def _mib(b):
    return f"{b / 2**20:.2f}"


def print_table(rows: list[dict[str, Any]], out: TextIO = sys.stdout) -> None:
    eager_t = rows[0]["step_time_s"]
    print(f"{rows[0]['model']}, batch {rows[0]['batch']}, {rows[0]['device']} "
          f"(bytes in MiB; peak ratio = measured / predicted)", file=out)
    print(f"{'method':<9} {'kernels':>7} {'match':>5} {'outputs':>7} {'traffic':>9} "
          f"{'pred.peak':>9} {'meas.peak':>9} {'ratio':>5} {'step s':>8} {'vs eager':>8}", file=out)
    for r in rows:
        m = {None: "-", True: "yes", False: "NO"}[r["kernels_match_plan"]]
        print(f"{r['method']:<9} {r['kernels']:>7} {m:>5} "
              f"{'ok' if r['outputs_match'] else 'DIFF':>7} "
              f"{_mib(r['predicted_traffic_bytes']):>9} {_mib(r['predicted_peak_bytes']):>9} "
              f"{_mib(r['measured_peak_bytes']):>9} "
              f"{r['measured_peak_bytes'] / max(1, r['predicted_peak_bytes']):>5.2f} "
              f"{r['step_time_s']:>8.4f} {r['step_time_s'] / eager_t:>8.2f}", file=out)
    f = rows[-1]
    print(f"fuseplan's plans: {f['groups_not_in_inductor_plan']} groups not in Inductor's plans",
          file=out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m fuseplan_inductor",
        description="Export a model's Inductor graphs, plan them with fuseplan, compile "
        "the model with the plans and measure it against eager and Inductor's own plans. "
        "See docs/inductor.md.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="the whole loop on one model")
    r.add_argument("model", help="a timm model name, gpt2 / gpt2-L<n>, llama-..., tiny, or "
                   "module:callable (a function of the batch size returning "
                   "(model, example_inputs[, loss_fn]))")
    r.add_argument("--batch", type=int, required=True, help="batch size")
    r.add_argument("--seq", type=int, default=512, help="sequence length for gpt2 (default 512)")
    r.add_argument("--budget", help="fuseplan's peak limit: eager (the default of "
                   "fuseplan solve), N%% of the eager peak, or BYTES")
    r.add_argument("--time-limit", type=float, default=10.0,
                   help="seconds for each fuseplan solve (default 10)")
    r.add_argument("--fuseplan", help="the fuseplan binary (default: $FUSEPLAN, PATH, "
                   "build/fuseplan)")
    r.add_argument("--plans", help="apply the plans of this directory instead of solving")
    r.add_argument("--replan", type=int, default=3,
                   help="when Inductor refuses groups of fuseplan's plan, or its code "
                   "generation splits them, make their pairs unfusible and solve that graph "
                   "again, up to this many times (default 3)")
    r.add_argument("--whole-step", action="store_const", const="grad",
                   help="the training step as one graph (forward + backward, "
                   "torch.func.grad_and_value compiled whole) instead of AOTAutograd's "
                   "forward and backward graphs")
    r.add_argument("--cpp-functions", default="kernel", choices=["kernel", "backend"],
                   help="C++ functions of both compiled plans: one per kernel (default: "
                   "the wrapper allocates one kernel's outputs at a time, as fuseplan's "
                   "model counts) or the C++ backend's own (every kernel between two "
                   "extern calls in one function)")
    r.add_argument("--buffer-reuse", default="adjacent", choices=["adjacent", "inductor"],
                   help="the wrapper's reuse of freed buffers in both compiled plans: only "
                   "by the next kernel (default: peak-neutral, as fuseplan's model counts) or "
                   "also later when Inductor's own peak estimate allows")
    r.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    r.add_argument("--steps", type=int, default=5, help="timed steps per method (default 5)")
    r.add_argument("--threads", type=int, default=1,
                   help="torch threads (default 1: on a shared machine, eager's many small "
                   "parallel regions stall on descheduled threads)")
    r.add_argument("--work", help="keep the exported graphs and plans in this directory")
    r.add_argument("--json", action="store_true", help="one JSON object per method, one a line")
    r.add_argument("--workspaces", action=argparse.BooleanOptionalAction, default=True,
                   help="measure the extern kernels' workspaces when exporting (default: on)")
    e = sub.add_parser("export", help="the exporter (same as tools/export_inductor.py)",
                       add_help=False)
    e.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.cmd == "export":
        from .export import main as export_main

        return export_main(args.rest)
    try:
        import torch

        torch.set_num_threads(max(1, args.threads))
        rows, code = loop(args)
    except (LoopError, ModelError, UnsupportedTorchError) as e:
        print(f"fuseplan_inductor: {e}", file=sys.stderr)
        return 2
    except PlanError as e:
        print(f"fuseplan_inductor: {type(e).__name__}: {e}", file=sys.stderr)
        return 3
    except Exception as e:  # noqa: BLE001 (torch wraps what the plans raise)
        pe = plan_error(e)
        if pe is None:
            raise
        print(f"fuseplan_inductor: {type(pe).__name__}: {pe}", file=sys.stderr)
        return 3
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        print_table(rows)
    return code


__all__ = ["main", "loop", "find_fuseplan", "LoopError", "PlanError"]
