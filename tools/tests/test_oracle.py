"""The exporter's oracle check (oracle.py, docs/exporter.md "The oracle
check").  Inductor's own fused groups must be judged one kernel (the
oracle is not stricter than Inductor), and on timm's test_convnext (its
LayerNorm is convnext_tiny's) the oracle must find the reduction R ->
pointwise P -> pointwise Q triples that are no kernel in any order when
the exporter's two-hop verdicts, the loop rule (graph format 3) and the
pairs code generation splits are left out: pairwise verdicts on sizes alone call them legal.  Run by
tests/tools/test_inductor.sh; needs torch and timm."""

import copy
import os
import shutil
import sys
import tempfile
import types
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from fuseplan_inductor import export as E  # noqa: E402
from fuseplan_inductor import oracle  # noqa: E402
from fuseplan_inductor.models import build_model  # noqa: E402

torch.set_num_threads(1)


def _export(name, batch, out, **kw):
    model, inputs, loss = build_model(name, batch)
    done = E.export_model(copy.deepcopy(model), inputs, loss, name=name, model_label=name,
                          batch=batch, out=out, ext=".json", **kw)
    return {ex.which: ex for ex in done}


def _triples(graph, groups):
    """The groups [R, P, Q]: R a reduction, P reads R's output, Q reads P's."""
    byname = {nd["name"]: nd for nd in graph["nodes"]}

    def reads(nd):
        return {r if isinstance(r, str) else r["buffer"] for r in nd["reads"]}

    out = []
    for g in groups:
        if len(g) != 3:
            continue
        r, p, q = (byname[x] for x in g)
        if (r["kind"] == "reduction" and set(r["writes"]) & reads(p)
                and set(p["writes"]) & reads(q)):
            out.append(g)
    return out


class Oracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fi-oracle.")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_inductor_groups_fuse(self):
        first = _export("tiny", 4, os.path.join(self.tmp, "t1"), oracle_samples=0)
        own = {w: [g for g in ex.plan["groups"] if 2 <= len(g) <= 6]
               for w, ex in first.items()}
        names = {w: {nd["name"] for nd in ex.graph["nodes"]} for w, ex in first.items()}
        self.assertTrue(own["fwd"], "Inductor fused nothing in tiny's forward graph")
        asked = []

        def inductor_groups(rules, count, seed=0):
            which = next(w for w in names if names[w] == set(rules.byname))
            asked.append(which)
            return own[which]

        # Inductor's own groups, asked of the oracle: every one is a kernel
        with mock.patch.object(oracle, "sample_groups", inductor_groups):
            again = _export("tiny", 4, os.path.join(self.tmp, "t2"), oracle_samples=1)
        self.assertTrue(asked)
        for w, ex in again.items():
            rec = ex.graph["meta"]["oracle"]
            self.assertEqual(rec["samples"], len(own[w]), w)
            self.assertEqual(rec["disagreements"], 0, (w, rec["refused_groups"]))
            self.assertEqual(ex.plan["groups"], first[w].plan["groups"])

    def test_linked_pairs_need_a_linker(self):
        # graph format 3's linked pairs: a group with the pair and none of
        # its linkers is illegal, with a linker or apart it is legal, and
        # sampling draws no group the rule forbids
        nodes = [{"name": n, "kind": "pointwise", "iter": [4, 1], "reads": ["x"],
                  "writes": [n + ".out"]} for n in ("a", "b", "c", "d")]
        graph = {"nodes": nodes, "linked": [["a", "b", ["c"]]]}
        rules = oracle.Rules(graph, lambda p, q: True, set())
        self.assertFalse(rules.legal(["a", "b"]))
        self.assertFalse(rules.legal(["a", "b", "d"]))
        self.assertTrue(rules.legal(["a", "b", "c"]))
        self.assertTrue(rules.legal(["a", "d"]))
        groups = oracle.sample_groups(rules, 100)
        self.assertTrue(groups)
        self.assertTrue(all(rules.legal(g) for g in groups), groups)
        self.assertIn(["a", "b", "c"], groups)

    def test_linker_set(self):
        # a pair that no single member links needs the first two members
        # that link it together, else all of them (one rule each)
        def fuses(names):
            return {"c", "e"} <= set(names) or {"d", "e"} <= set(names)

        self.assertEqual(oracle._linker_set(fuses, "u", "v", ["c", "d", "e"]), ["c", "e"])
        self.assertEqual(oracle._linker_set(lambda n: False, "u", "v", ["c", "d"]), ["c", "d"])
        many = [f"m{i}" for i in range(oracle.MAX_LINKER_SEARCH + 1)]
        self.assertEqual(oracle._linker_set(fuses, "u", "v", many), many)
        rules = oracle.Rules({"nodes": [], "linked": [["u", "v", ["c"]], ["u", "v", ["e"]]]},
                             lambda p, q: True, set())
        self.assertFalse(rules.linked_ok(["u", "v", "c"]))
        self.assertTrue(rules.linked_ok(["u", "v", "c", "e"]))

    def test_cross_candidates(self):
        # the pairs asked across Inductor's groups: compatible by the rules,
        # of different native spaces, in no group of the plan, not judged
        class Node:
            def __init__(self, space):
                self.group = ("cpu", space)

        def node(n, it, kind="pointwise"):
            return {"name": n, "kind": kind, "iter": it, "reads": [], "writes": [n + ".o"]}

        graph = {"nodes": [node("r", [4, 8], "reduction"), node("p", [32, 1]),
                           node("q", [32, 1]), node("s", [32, 1]), node("t", [32, 1]),
                           node("x", [32, 1], "extern")]}
        sched = {"r": Node((4, 8)), "p": Node((4, 1)), "q": Node((32, 1)),
                 "s": Node((32, 1)), "t": Node((32, 1)), "x": Node((32, 1))}
        groups = [["r", "p"], ["q"], ["s"], ["t"], ["x"]]
        got = oracle.cross_candidates(graph, groups, sched, E._compatible, {("p", "t")})
        # r, p: one group; q, s, t: one native space; p, t: judged; x: extern
        self.assertEqual(got, [("r", "q"), ("r", "s"), ("r", "t"), ("p", "q"), ("p", "s")])

    def test_cross_pairs_listed(self):
        # a refused cross pair is unfusible; with a rewritten node it is
        # linked through the members of its groups that Inductor fuses it
        # with, unfusible when there is none; an accepted pair is not listed
        class Node:
            def __init__(self, space):
                self.group = ("cpu", space)

        def node(n, it, kind="pointwise", native=None):
            nd = {"name": n, "kind": kind, "iter": it, "reads": [], "writes": [n + ".o"]}
            if native:
                nd["inductor_iter"] = native
            return nd

        graph = {"nodes": [node("r", [4, 8], "reduction"), node("p", [32, 1], native=[4, 1]),
                           node("q", [32, 1]), node("s", [32, 1]), node("t", [32, 1])]}
        sched = types.SimpleNamespace(name_to_fused_node={}, _fusion_memory_state=None)
        snodes = {"r": Node((4, 8)), "p": Node((4, 1)), "q": Node((32, 1)),
                  "s": Node((32, 1)), "t": Node((32, 2))}
        groups = [["r", "p"], ["q"], ["s"], ["t"]]
        refused = {("p", "q"), ("p", "s"), ("r", "t")}

        def verdict(_, a, b):
            return (names[a], names[b]) not in refused

        def fuses(_, nodes):
            return tuple(names[n] for n in nodes) == ("r", "p", "q")

        names = {v: k for k, v in snodes.items()}
        with mock.patch.object(oracle, "inductor_fuses", fuses):
            unf, linked = oracle.cross_pairs(sched, graph, groups, snodes,
                                             {"loops": [], "fused": {}}, E._compatible, set(),
                                             verdict)
        self.assertEqual(linked, [["p", "q", ["r"]]])
        self.assertEqual(unf, [["r", "t"], ["p", "s"]])
        self.assertEqual(sched.name_to_fused_node, {})

    def test_two_hop_triples_found(self):
        full = _export("test_convnext", 2, os.path.join(self.tmp, "c1"), which=("fwd",),
                       oracle_samples=500)
        # without the two-hop verdicts, the loop rule, the pairs code
        # generation splits (outer-loop pairs) and the cross-group pairs,
        # R, Q is allowed: pairwise verdicts call R, P, Q legal and the
        # oracle must say no
        with mock.patch.object(E, "_two_hop_pairs", lambda pairs, pos: set()), \
                mock.patch.object(E.oracle, "cross_pairs", lambda *a: ([], [])), \
                mock.patch.object(E.loops, "fuse", lambda a, b: True), \
                mock.patch.object(E.loops, "outer_only", lambda a, b: False), \
                mock.patch.object(E.outer, "split_pairs", lambda sched, nodes: []):
            pairwise = _export("test_convnext", 2, os.path.join(self.tmp, "c2"),
                               which=("fwd",), oracle_samples=500)
        g = pairwise["fwd"].graph
        found = _triples(g, g["meta"]["oracle"]["refused_groups"])
        self.assertTrue(found, "the oracle found no refused R, P, Q triple")
        fg = full["fwd"].graph
        self.assertLess(len(_triples(fg, fg["meta"]["oracle"]["refused_groups"])), len(found))
        unf = {tuple(p) for p in fg["unfusible"]}
        byname = {nd["name"]: nd for nd in fg["nodes"]}
        self.assertTrue([t for t in found if (t[0], t[2]) in unf
                         or not E._compatible(byname[t[0]], byname[t[2]])],
                        "the two-hop verdicts and the loop rule refuse none of the "
                        "triples' R, Q")


if __name__ == "__main__":
    unittest.main()
