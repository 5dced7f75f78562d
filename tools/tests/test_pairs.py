"""The exporter's pair checks at scale (export.py, _two_hop_pairs,
_scaled_pairs, _far_refused): the two-hop pairs are those of the plain
definition (every pair of a node's neighbours, less the pairs that share
a buffer) on random graphs; the pairs dropped are exactly those whose
every path runs through an extern node; and on a whole step with gradient
clipping (the clipping coefficient read by every parameter's update,
tens of positions apart) every pair _far_refused answers for is one that
Inductor's own can_fuse refuses in both orders.  Run by
tests/tools/test_inductor.sh; needs torch."""

import contextlib
import os
import random
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from fuseplan_inductor import export  # noqa: E402
from fuseplan_inductor.models import build_model  # noqa: E402

torch.set_num_threads(1)


def _random_graph(rng, n):
    """N nodes in dependency order, about a quarter extern, each reading
    one to three earlier buffers (or an input) and writing one."""
    nodes = []
    for i in range(n):
        srcs = [
            f"b{rng.randrange(i)}" if i and rng.random() < 0.8 else f"in{rng.randrange(3)}"
            for _ in range(rng.randint(1, 3))
        ]
        kind = "extern" if rng.random() < 0.25 else "pointwise"
        nodes.append(
            {"name": f"n{i}", "kind": kind, "reads": sorted(set(srcs)), "writes": [f"b{i}"]}
        )
    return nodes


def _share_pairs(nodes, pos):
    """{(u, v): buffers}: the non-extern pairs that share a buffer, as
    _candidate_verdicts lists them."""
    members = {}
    for nd in nodes:
        if nd["kind"] == "extern":
            continue
        for b in nd["reads"] + nd["writes"]:
            members.setdefault(b, set()).add(nd["name"])
    pairs = {}
    for b, ms in members.items():
        ms = sorted(ms, key=pos.get)
        for i, u in enumerate(ms):
            for v in ms[i + 1 :]:
                pairs.setdefault((u, v), []).append(b)
    return pairs


def _plain_two_hop(pairs, pos):
    """Every pair of two neighbours of one node, less PAIRS."""
    near = {}
    for u, v in pairs:
        near.setdefault(u, set()).add(v)
        near.setdefault(v, set()).add(u)
    out = set()
    for ns in near.values():
        ns = sorted(ns, key=pos.get)
        for i, u in enumerate(ns):
            for v in ns[i + 1 :]:
                out.add((u, v))
    return out - set(pairs)


def _reaches(nodes, u, v, through_extern):
    """Whether a path leads from node U to node V, through extern inner
    nodes too when THROUGH_EXTERN."""
    writer = {w: nd["name"] for nd in nodes for w in nd["writes"]}
    kind = {nd["name"]: nd["kind"] for nd in nodes}
    kids = {}
    for nd in nodes:
        for b in nd["reads"]:
            if b in writer:
                kids.setdefault(writer[b], set()).add(nd["name"])
    todo, seen = [u], set()
    while todo:
        for c in kids.get(todo.pop(), ()):
            if c == v:
                return True
            if c not in seen and (through_extern or kind[c] != "extern"):
                seen.add(c)
                todo.append(c)
    return False


class ScaledPairs(unittest.TestCase):
    def test_two_hop_and_extern_separated(self):
        dropped = 0
        for seed in range(60):
            rng = random.Random(seed)
            nodes = _random_graph(rng, rng.randint(4, 24))
            pos = {nd["name"]: i for i, nd in enumerate(nodes)}
            pairs = _share_pairs(nodes, pos)
            two = export._two_hop_pairs(pairs, pos)
            self.assertEqual(two, _plain_two_hop(pairs, pos), seed)
            kept, kept2, n = export._scaled_pairs(nodes, pairs, two, pos)
            self.assertEqual(n, len(pairs) - len(kept) + len(two) - len(kept2))
            for p in list(pairs) + list(two):
                sep = _reaches(nodes, p[0], p[1], True) and not _reaches(nodes, p[0], p[1], False)
                self.assertEqual(p not in kept and p not in kept2, sep, (seed, p))
                dropped += sep
        self.assertGreater(dropped, 0)

    def test_out_of_order_graph_keeps_everything(self):
        nodes = [
            {"name": "a", "kind": "pointwise", "reads": ["b1"], "writes": ["b0"]},
            {"name": "b", "kind": "extern", "reads": ["in"], "writes": ["b1"]},
        ]
        pos = {"a": 0, "b": 1}
        pairs = {("a", "b"): ["b1"]}
        self.assertEqual(export._scaled_pairs(nodes, pairs, set(), pos), (pairs, set(), 0))


class FarRefused(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fi-test.")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_agrees_with_can_fuse(self):
        orig = export._far_refused
        answers = []  # (far, Inductor fuses in some order) per pair asked

        def check(sched, a, b):
            far = orig(sched, a, b)
            if far:
                with contextlib.suppress(TypeError):
                    answers.append(
                        bool(sched.can_fuse(a, b, check_cycle=False))
                        or bool(sched.can_fuse(b, a, check_cycle=False))
                    )
            return far

        export._far_refused = check
        try:
            with export.fake_tensors():
                model, inputs, loss_fn = build_model("llama-d4-w64-h4-v512", 1, 16)
                exs = export.export_model(
                    model,
                    inputs,
                    loss_fn,
                    name="t",
                    model_label="t",
                    batch=1,
                    out=self.tmp,
                    ext=".json",
                    whole_step="adamw-master-foreach-clip",
                )
        finally:
            export._far_refused = orig
        self.assertEqual(len(exs), 1)
        self.assertGreater(len(answers), 100)  # the coefficient's readers
        self.assertFalse(any(answers))
        self.assertEqual(exs[0].graph["meta"]["pairs_far_refused"], len(answers))
        self.assertGreater(exs[0].graph["meta"]["pairs_skipped_extern"], 0)


if __name__ == "__main__":
    unittest.main()
