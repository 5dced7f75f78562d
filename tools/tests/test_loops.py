"""The exporter's copy of fuseplan's loop-nest rule (fuseplan_inductor.loops)
against the rows of docs/cost-model.md ("Loop nests"), which
tests/model/test_graph.c checks on the C side, the loops kept when
Inductor's groups are rewritten, and the independent outer-loop pairs the
exporter lists unfusible.  Run by tests/tools/test_inductor.sh; needs no
torch."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fuseplan_inductor import loops  # noqa: E402


def node(name, kind, sizes, rsizes=()):
    n, r = 1, 1
    for x in sizes:
        n *= x
    for x in rsizes:
        r *= x
    return {"name": name, "kind": kind, "iter": [n, r], "loop": [list(sizes), list(rsizes)]}


R = node("R", "reduction", [6272], [96])
P = node("P", "pointwise", [6272])
Q = node("Q", "pointwise", [2, 56, 56, 96])
N = node("N", "pointwise", [6272, 96])
F = node("F", "pointwise", [602112])
C = node("C", "reduction", [96], [6272])
R2 = node("R2", "reduction", [6272], [4, 24])
Q2 = node("Q2", "pointwise", [2, 3136, 96])
S = node("S", "pointwise", [6272, 4, 24])


class LoopRule(unittest.TestCase):
    def test_table(self):
        rows = [(R, P, True), (R, N, True), (R, Q, False), (R, F, False), (Q, F, True),
                (N, F, True), (Q, Q2, False), (Q, N, False), (C, Q, False), (R, R2, True),
                (N, R2, True), (S, R, True), (S, R2, True), (S, N, False)]
        for a, b, ok in rows:
            self.assertEqual(loops.fuse(a, b), ok, (a["name"], b["name"]))
            self.assertEqual(loops.fuse(b, a), ok, (b["name"], a["name"]))
        no_loop = dict(R)
        del no_loop["loop"]
        self.assertTrue(loops.fuse(no_loop, Q))

    def test_outer_only(self):
        self.assertTrue(loops.outer_only(R, P))
        self.assertTrue(loops.outer_only(R, R2))
        self.assertFalse(loops.outer_only(R, N))  # input space: horizontal too
        self.assertFalse(loops.outer_only(Q, F))
        self.assertFalse(loops.outer_only(R, dict(R)))

    def test_rewrite(self):
        members = [dict(R), dict(P), dict(F)]
        self.assertEqual(loops.rewrite(members, members[0]), 2)
        self.assertEqual([m["loop"] for m in members],
                         [[[6272], [96]], [[6272, 96], []], [[6272, 96], []]])
        self.assertEqual(members[1]["inductor_loop"], [[6272], []])
        pw = [dict(P), dict(F)]
        del pw[0]["loop"]
        self.assertEqual(loops.rewrite(pw, pw[0]), 1)  # no loop on the rep
        self.assertNotIn("loop", pw[1])

    def test_independent_outer_pairs(self):
        # R -> P depend; R2 and P2 (a pointwise over R2's loop) do not
        # depend on R; R2 is in R's group in Inductor's plan
        p2 = node("P2", "pointwise", [6272])
        g = {"nodes": [R, P, R2, p2]}
        pos = {"R": 0, "P": 1, "R2": 2, "P2": 3}
        desc = {"R": 1 << 1, "P": 0, "R2": 0, "P2": 0}
        same = {"R": 0, "P": 1, "R2": 0, "P2": 2}
        out = loops.independent_outer_pairs(g, desc, pos, same, lambda a, b: True)
        self.assertEqual(out, [["R", "P2"], ["P", "R2"], ["R2", "P2"]])


if __name__ == "__main__":
    unittest.main()
