"""The exporter's two-hop verdicts on timm's test_convnext (its LayerNorm
is convnext_tiny's): a reduction R, a consumer P of its output and a
consumer Q of P's output with other loop ranges are no kernel in any
order in Inductor's C++ backend, though R, P and P, Q are.  The exporter
must mark R, Q unfusible (they share no buffer, so a verdict on the pairs
that share one misses it) unless their loop nests already refuse them
(graph format 3), and a plan that groups R, P, Q must be refused with the
parts' loops named.  Run by tests/tools/test_inductor.sh; needs
torch and timm."""

import copy
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

import fuseplan_inductor as fi  # noqa: E402
from fuseplan_inductor.export import _compatible, export_model  # noqa: E402
from fuseplan_inductor.files import dump  # noqa: E402
from fuseplan_inductor.models import build_model  # noqa: E402

torch.set_num_threads(1)


def _buffers(node):
    return {r if isinstance(r, str) else r["buffer"] for r in node["reads"]} | set(node["writes"])


def _topological(graph, groups):
    """GROUPS (a partition of GRAPH's nodes) in an order that runs every
    group after the writers of what it reads."""
    writer = {w: nd["name"] for nd in graph["nodes"] for w in nd["writes"]}
    group_of = {n: gi for gi, grp in enumerate(groups) for n in grp}
    byname = {nd["name"]: nd for nd in graph["nodes"]}
    needs = []
    for gi, grp in enumerate(groups):
        reads = {b for n in grp for b in _buffers(byname[n]) - set(byname[n]["writes"])}
        deps = {group_of[writer[b]] for b in reads if b in writer}
        needs.append(deps - {gi})
    out, done = [], set()
    while len(out) < len(groups):
        gi = next(i for i in range(len(groups)) if i not in done and needs[i] <= done)
        out.append(groups[gi])
        done.add(gi)
    return out


class TwoHop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fi-test.")
        cls.model, cls.inputs, loss = build_model("test_convnext", 2)
        cls.loss = staticmethod(loss)
        cls.ex = {ex.which: ex for ex in export_model(
            copy.deepcopy(cls.model), cls.inputs, cls.loss, name="test_convnext",
            model_label="test_convnext", batch=2, out=os.path.join(cls.tmp, "b2"), ext=".json")}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_refused_triple(self):
        g = self.ex["fwd"].graph
        byname = {nd["name"]: nd for nd in g["nodes"]}
        triples = []
        nodes = g["nodes"]
        # pairs the loop rule refuses need no unfusible entry
        refused = [[a["name"], b["name"]] for i, a in enumerate(nodes) for b in nodes[i + 1:]
                   if a["kind"] == "reduction" and b["kind"] == "pointwise"
                   and not _compatible(a, b)]
        for u, v in g["unfusible"] + refused:
            a, b = byname[u], byname[v]
            if _buffers(a) & _buffers(b) or a["kind"] != "reduction" or b["kind"] != "pointwise":
                continue
            mids = [nd["name"] for nd in g["nodes"] if nd["kind"] == "pointwise" and
                    set(a["writes"]) & _buffers(nd) and set(nd["writes"]) & _buffers(b)]
            triples += [(u, m, v) for m in mids]
        self.assertTrue(triples, "no reduction -> pointwise -> pointwise pair marked unfusible")
        r, p, q = triples[0]

        d = os.path.join(self.tmp, "triple")
        os.makedirs(d)
        for which, ex in self.ex.items():
            shutil.copy(ex.graph_path, d)
            groups = ex.plan["groups"]
            if which == "fwd":
                groups = [[x for x in grp if x not in (r, p, q)] for grp in groups]
                groups = _topological(g, [grp for grp in groups if grp] + [[r, p, q]])
            dump(dict(ex.plan, groups=groups), os.path.join(d, f"test_convnext.{which}.plan.json"))
        with self.assertRaises(Exception) as cm:
            with fi.plans(d):
                torch._dynamo.reset()
                self.loss(torch.compile(copy.deepcopy(self.model), dynamic=False)(*self.inputs))
        err = fi.plan_error(cm.exception)
        self.assertIsInstance(err, fi.UnfusibleGroupError, repr(cm.exception))
        self.assertIn("the parts' loops", str(err))
        self.assertEqual(sorted(sum(err.parts, [])), sorted([r, p, q]))


if __name__ == "__main__":
    unittest.main()
