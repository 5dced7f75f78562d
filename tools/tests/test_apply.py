"""fuseplan_inductor.plans() on the tiny model: Inductor's own plan
reproduces Inductor's kernels; a plan compiles to one C++ function per
kernel and reuses a freed buffer only in the next kernel; a foreign, a stale, an unfusible plan, an
unsupported torch and a missing plan directory each give their one error;
on_missing="inductor" falls back; importing the package with FUSEPLAN_PLANS
set activates nothing, plans_from_env() does.  Run by tests/tools/test_inductor.sh
(python -m unittest); needs torch."""

import contextlib
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

import fuseplan_inductor as fi  # noqa: E402
from fuseplan_inductor import measure  # noqa: E402
from fuseplan_inductor.export import _compatible, export_model  # noqa: E402
from fuseplan_inductor.files import dump, load  # noqa: E402
from fuseplan_inductor.models import build_model  # noqa: E402

torch.set_num_threads(1)


def _loop_refused(graph):
    """The pairs of nodes sharing a buffer whose sizes fuseplan's rules
    allow and whose loop nests they refuse."""
    def bufs(n):
        return {r if isinstance(r, str) else r["buffer"] for r in n["reads"]} | set(n["writes"])

    def sizes(n):
        return {k: x for k, x in n.items() if k != "loop"}

    nodes = [n for n in graph["nodes"] if n["kind"] != "extern"]
    return [(a["name"], b["name"]) for i, a in enumerate(nodes) for b in nodes[i + 1:]
            if bufs(a) & bufs(b) and _compatible(sizes(a), sizes(b)) and not _compatible(a, b)]


@contextlib.contextmanager
def _cpp_functions():
    """Yields a list that gets, for each C++ function the C++ backend
    generates inside the block, how many loop nests (kernels) it runs."""
    from torch._inductor.codegen import cpp

    out, nests = [], [0]
    finalize, flush = cpp.KernelGroup.finalize_kernel, cpp.CppScheduling.flush

    def counting_finalize(self, *args):
        nests[0] += 1
        return finalize(self, *args)

    def counting_flush(self):
        if nests[0]:
            out.append(nests[0])
        nests[0] = 0
        return flush(self)

    cpp.KernelGroup.finalize_kernel, cpp.CppScheduling.flush = counting_finalize, counting_flush
    try:
        yield out
    finally:
        cpp.KernelGroup.finalize_kernel, cpp.CppScheduling.flush = finalize, flush


@contextlib.contextmanager
def _reuses():
    """Yields a list that gets (index of the freeing node, index of the
    allocating node) for each reuse of a freed buffer the wrapper's memory
    planning makes inside the block."""
    from torch._inductor.codegen import wrapper

    out, orig = [], wrapper.AllocateLine.should_reuse_buffer

    def recording(self, free_line, size):
        ok = orig(self, free_line, size)
        if ok:
            out.append((free_line.scheduler_node_index, self.scheduler_node_index))
        return ok

    wrapper.AllocateLine.should_reuse_buffer = recording
    try:
        yield out
    finally:
        wrapper.AllocateLine.should_reuse_buffer = orig


def _step(model, inputs, loss_fn):
    torch._dynamo.reset()
    f = torch.compile(model, dynamic=False)
    loss_fn(f(*inputs)).backward()


class TinyPlans(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fi-test.")
        cls.model, cls.inputs, loss = build_model("tiny", 2)
        cls.loss = staticmethod(loss)
        cls.exported = {ex.which: ex for ex in export_model(
            copy.deepcopy(cls.model), cls.inputs, cls.loss, name="tiny", model_label="tiny",
            batch=2, out=os.path.join(cls.tmp, "b2"), ext=".json")}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def plan_dir(self, name, groups_of):
        """A directory with the two graphs and a plan for each:
        groups_of(which, exported) gives the groups."""
        d = os.path.join(self.tmp, name)
        os.makedirs(d)
        for which, ex in self.exported.items():
            shutil.copy(ex.graph_path, d)
            plan = dict(ex.plan, groups=groups_of(which, ex))
            plan.pop("fingerprint")  # found through the graph file's meta.fingerprint
            dump(plan, os.path.join(d, f"tiny.{which}.plan.json"))
        return d

    def compile_error(self, plan_dir, **kw):
        with self.assertRaises(Exception) as cm:
            with fi.plans(plan_dir, **kw):
                _step(copy.deepcopy(self.model), self.inputs, self.loss)
        err = fi.plan_error(cm.exception)
        self.assertIsNotNone(err, f"not a PlanError: {cm.exception!r}")
        return err

    def test_fingerprint_in_files(self):
        for ex in self.exported.values():
            self.assertTrue(ex.graph["meta"]["fingerprint"].startswith("sha256:"))
            self.assertEqual(ex.plan["fingerprint"], ex.graph["meta"]["fingerprint"])
        self.assertNotEqual(self.exported["fwd"].plan["fingerprint"],
                            self.exported["bwd"].plan["fingerprint"])

    def test_inductor_plan_reproduces_inductor(self):
        # Inductor's own (scheduler) plan, with the groups its C++ code
        # generation splits given as the split parts
        def split(which, ex):
            parts = {frozenset(sum(p, [])): p for p in ex.graph["meta"]["inductor_codegen_splits"]}
            out = []
            for g in ex.plan["groups"]:
                out.extend(parts.get(frozenset(g), [g]))
            return out

        d = self.plan_dir("inductor", split)
        with fi.observe() as obs:
            _step(copy.deepcopy(self.model), self.inputs, self.loss)
        with fi.plans(d) as ps:
            _step(copy.deepcopy(self.model), self.inputs, self.loss)
        self.assertEqual([r.which for r in ps.reports], ["fwd", "bwd"])
        for r, o in zip(ps.reports, obs.reports, strict=True):
            self.assertTrue(r.kernels_match_plan, r.which)
            self.assertEqual(r.fingerprint, o.fingerprint)
            self.assertEqual(r.emitted, o.emitted, f"{r.which}: not Inductor's own kernels")

    def test_eager_plan_applies(self):
        # every node alone, in program order: as many kernels as nodes
        d = self.plan_dir("eager", lambda w, ex: [[n["name"]] for n in ex.graph["nodes"]])
        with fi.plans(d) as ps:
            _step(copy.deepcopy(self.model), self.inputs, self.loss)
        for r in ps.reports:
            self.assertTrue(r.kernels_match_plan)
            self.assertEqual(len(r.emitted), len(r.node_names))

    def test_compiled_as_modelled(self):
        # the eager plan (every node alone): by default every C++ function
        # runs one kernel, so the wrapper allocates one kernel's outputs at
        # a time, and a freed buffer is reused only by the next kernel; the
        # C++ backend's own functions run several
        d = self.plan_dir("flush", lambda w, ex: [[n["name"]] for n in ex.graph["nodes"]])
        peaks = {}
        for flush in (True, False):
            model = copy.deepcopy(self.model)
            with _cpp_functions() as funcs, _reuses() as reuses, \
                    fi.plans(d, flush_kernels=flush, adjacent_reuse=flush) as ps:
                torch._dynamo.reset()
                step = measure.make_step(torch.compile(model, dynamic=False), model,
                                            self.inputs, self.loss)
                step()
                peaks[flush] = measure.measure_peak(step, model, self.inputs, "cpu")[1]
            kernels = sum(1 for r in ps.reports for n in r.emitted
                          if self.node(r, n[0])["kind"] != "extern")
            if flush:
                self.assertEqual(funcs, [1] * kernels)
                self.assertEqual([(a, a + 1) for a, _ in reuses], reuses)
            else:
                self.assertGreater(max(funcs), 1, "the backend's functions are one kernel each")
        # one kernel's outputs at a time never holds more than the backend's
        # functions (on tiny the two peaks are equal: no function there
        # allocates more than it frees)
        for a, b in zip(peaks[True], peaks[False], strict=True):
            self.assertLessEqual(a, b)

    def node(self, report, name):
        ex = self.exported[report.which]
        return next(n for n in ex.graph["nodes"] if n["name"] == name)

    def test_foreign_plan(self):
        # plans made for batch 3 are stale for batch 2: same nodes, other sizes
        other = export_model(copy.deepcopy(build_model("tiny", 3)[0]), (torch.randn(3, 3, 8, 8),),
                             self.loss, name="tiny3", model_label="tiny", batch=3,
                             out=os.path.join(self.tmp, "b3"), ext=".json")
        self.assertEqual(len(other), 2)
        err = self.compile_error(os.path.join(self.tmp, "b3"))
        self.assertIsInstance(err, fi.NoPlanError)
        self.assertIn("has no plan for the fwd graph", str(err))
        self.assertIn("stale", str(err))
        self.assertIn(self.exported["fwd"].graph["meta"]["fingerprint"], str(err))

    def test_on_missing_inductor_falls_back(self):
        d = os.path.join(self.tmp, "empty")
        os.makedirs(d, exist_ok=True)
        with self.assertLogs("fuseplan_inductor", "WARNING") as logs:
            with fi.plans(d, on_missing="inductor") as ps:
                _step(copy.deepcopy(self.model), self.inputs, self.loss)
        self.assertEqual(len(ps.reports), 2)
        self.assertTrue(all(r.plan_name is None for r in ps.reports))
        self.assertIn("using Inductor's own fusion", logs.output[0])
        err = self.compile_error(d)
        self.assertIn("has no plan for the fwd graph", str(err))

    def test_unfusible_plan(self):
        # the first pair the exporter found Inductor refuses, put in one
        # group: listed unfusible, or refused by the loop nests alone (a
        # batch-norm mean (8) x (144) and its normalization (4, 8, 36))
        g = self.exported["fwd"].graph
        # not the pairs of a group code generation split: the scheduler
        # fuses those, and the kernels then differ from the plan
        split = [set(sum(parts, [])) for parts in g["meta"]["inductor_codegen_splits"]]
        pairs = [tuple(p) for p in g["unfusible"]
                 if not any(set(p) <= s for s in split)] + _loop_refused(g)
        self.assertTrue(pairs, "tiny.fwd has no pair Inductor refuses")
        u, v = pairs[0]

        def merged(which, ex):
            if which != "fwd":
                return ex.plan["groups"]
            groups = [[x for x in grp if x not in (u, v)] for grp in ex.plan["groups"]]
            at = next(i for i, grp in enumerate(ex.plan["groups"]) if u in grp or v in grp)
            groups.insert(at, [u, v])
            return [grp for grp in groups if grp]

        err = self.compile_error(self.plan_dir("unfusible", merged))
        self.assertIsInstance(err, fi.UnfusibleGroupError)
        msg = str(err)
        self.assertIn(f"Inductor cannot fuse {u}, {v}", msg.replace(f"{v}, {u}", f"{u}, {v}"))
        self.assertRegex(msg, r"into one kernel: \S")  # Inductor's reason follows

    def test_extern_group(self):
        # an extern kernel (the convolution) with its consumer
        g = self.exported["fwd"].graph
        ext = next(n["name"] for n in g["nodes"] if n["kind"] == "extern")

        def merged(which, ex):
            if which != "fwd":
                return ex.plan["groups"]
            groups = [list(x) for x in ex.plan["groups"]]
            i = next(k for k, grp in enumerate(groups) if ext in grp)
            return groups[:i] + [groups[i] + groups[i + 1]] + groups[i + 2:]

        err = self.compile_error(self.plan_dir("extern", merged))
        self.assertIsInstance(err, fi.UnfusibleGroupError)
        self.assertIn("extern", str(err))

    def test_bad_plan_dirs(self):
        with self.assertRaises(fi.PlanDirError) as cm:
            fi.plans(os.path.join(self.tmp, "nonexistent")).__enter__()
        self.assertIn("not a directory", str(cm.exception))
        d = self.plan_dir("twice", lambda w, ex: ex.plan["groups"])
        dump(load(os.path.join(d, "tiny.fwd.plan.json")), os.path.join(d, "again.plan.json"))
        with self.assertRaises(fi.PlanDirError) as cm:
            fi.plans(d).__enter__()
        self.assertIn("a second plan for graph 'tiny.fwd'", str(cm.exception))

    def test_unsupported_torch(self):
        with self.assertRaises(fi.UnsupportedTorchError) as cm:
            fi.check_torch("2.3.1+cpu")
        self.assertIn("torch 2.3.1+cpu is not supported", str(cm.exception))
        fi.check_torch("2.15.0+cu132")  # the local part does not matter
        saved = torch.__version__
        torch.__version__ = "2.99.0"
        try:
            with self.assertRaises(fi.UnsupportedTorchError):
                fi.plans(os.path.join(self.tmp, "b2")).__enter__()
        finally:
            torch.__version__ = saved


class FromEnv(unittest.TestCase):
    """FUSEPLAN_PLANS takes effect through plans_from_env(), not the import."""

    def _python(self, code, plans_dir):
        env = {k: v for k, v in os.environ.items() if k != "FUSEPLAN_PLANS"}
        if plans_dir is not None:
            env["FUSEPLAN_PLANS"] = plans_dir
        env["PYTHONPATH"] = os.pathsep.join(sys.path)
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=300)

    def test_import_has_no_side_effect(self):
        # the old import entered plans($FUSEPLAN_PLANS): a bad directory raised
        p = self._python("import fuseplan_inductor.apply as a; print(len(a._ACTIVE))",
                         "/nonexistent/fuseplan-plans")
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "0"), p.stderr)

    def test_plans_from_env(self):
        d = tempfile.mkdtemp(prefix="fi-env.")
        self.addCleanup(shutil.rmtree, d)
        code = ("import fuseplan_inductor as f, fuseplan_inductor.apply as a\n"
                "ps = f.plans_from_env()\n"
                "assert ps is f.plans_from_env() and a._ACTIVE == [ps], a._ACTIVE\n"
                "print(ps.plan_dir)")
        p = self._python(code, d)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, d), p.stderr)
        p = self._python("import fuseplan_inductor as f; print(f.plans_from_env())", None)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "None"), p.stderr)


if __name__ == "__main__":
    unittest.main()
