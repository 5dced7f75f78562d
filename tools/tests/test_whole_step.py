"""Whole-step export (export_model(..., whole_step=...), --whole-step):
one graph holds the forward, the loss and the backward (and, with "sgd"
or "adamw...", the parameter update and the optimizer state); the
Llama-style models parse their knobs from the name; and a fake-tensor
export (--fake) equals the real export node for node.  Run by
tests/tools/test_inductor.sh; needs torch."""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from fuseplan_inductor import optim  # noqa: E402
from fuseplan_inductor.export import export_model, fake_tensors  # noqa: E402
from fuseplan_inductor.export import main as export_main  # noqa: E402
from fuseplan_inductor.files import load  # noqa: E402
from fuseplan_inductor.models import ModelError, build_model, parse_llama  # noqa: E402

torch.set_num_threads(1)
TINY = ("llama-tiny", 2, 16)  # model, batch, sequence


def _export(out, model_name=TINY[0], batch=TINY[1], seq=TINY[2], mode="grad", fake=False,
            dtype=torch.float32, inplace=True):
    """The Exported list of one whole-step export into OUT, the model built
    in DTYPE."""
    ctx = fake_tensors() if fake else contextlib.nullcontext()
    default = torch.get_default_dtype()
    with ctx:
        torch.set_default_dtype(dtype)
        try:
            model, inputs, loss_fn = build_model(model_name, batch, seq)
        finally:
            torch.set_default_dtype(default)
        return export_model(model, inputs, loss_fn, name=model_name, model_label=model_name,
                            batch=batch, out=out, ext=".json", whole_step=mode,
                            inplace_pairs=inplace)


def _fuseplan():
    """The fuseplan binary ($FUSEPLAN, else the build tree's), or None."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.environ.get("FUSEPLAN") or os.path.join(top, "build", "fuseplan")
    return path if os.access(path, os.X_OK) else None


def _peak(ex, pairs=True, eager=False):
    """fuseplan eval's peak of Inductor's plan (with EAGER: of the eager
    plan) on the Exported EX, with the graph's in-place pairs or without
    them (and then without workspaces: Inductor's estimate has neither)."""
    g = json.loads(json.dumps(ex.graph))
    if not pairs:
        for nd in g["nodes"]:
            nd.pop("inplace", None)
            nd.pop("workspace", None)
    path = ex.graph_path + ".eval.json"
    with open(path, "w") as f:
        json.dump(g, f)
    out = subprocess.run([_fuseplan(), "eval", "--json", path, ex.plan_path],
                         check=True, capture_output=True, text=True).stdout
    ev = json.loads(out)
    return ev["eager"]["peak_bytes"] if eager else ev["peak_bytes"]


def _mutated_inputs(g):
    """{input: new version} of graph G's inputs that a node updates in
    place: the node's in-place pair [input, output of the graph]."""
    ins = {b["name"] for b in g["buffers"] if b.get("input")}
    return {i: o for nd in g["nodes"] for i, o in nd.get("inplace", [])
            if i in ins and o in g["outputs"]}


class LlamaNames(unittest.TestCase):
    def test_knobs(self):
        k = parse_llama("llama-d14-w3584-v256k")
        self.assertEqual((k["depth"], k["width"], k["vocab"]), (14, 3584, 256000))
        self.assertEqual((k["heads"], k["rope"]), (28, True))
        self.assertEqual(k["ffn"] % 256, 0)
        self.assertGreaterEqual(k["ffn"], 8 * 3584 // 3)
        k = parse_llama("llama-d2-w64-h4-v512-f96-learned")
        self.assertEqual((k["heads"], k["ffn"], k["rope"]), (4, 96, False))
        self.assertEqual(parse_llama("llama-tiny")["width"], 64)

    def test_bad_names(self):
        for bad in ("llama-d2-w64", "llama-d2-w64-v1x", "llama-d2-w64-v512-q3",
                    "llama-d2-w66-h4-v512", "llama-d0-w64-v512"):
            with self.assertRaises(ModelError, msg=bad):
                parse_llama(bad)


class WholeStep(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fuseplan-whole.")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_one_graph_forward_and_backward(self):
        done = _export(self.tmp)
        self.assertEqual([ex.which for ex in done], ["step"])
        g = done[0].graph
        self.assertEqual(g["name"], "llama-tiny.step")
        self.assertIn("whole-step graph (forward + backward)", g["meta"]["source"])
        # outputs: the loss and one gradient per parameter (2 blocks x 6 + 3)
        self.assertEqual(len(g["outputs"]), 1 + 2 * 6 + 3)
        names = {nd["name"] for nd in g["nodes"]}
        self.assertEqual({n for grp in done[0].plan["groups"] for n in grp}, names)

    def test_sgd_updates_in_place(self):
        grad = _export(os.path.join(self.tmp, "g"))[0].graph
        sgd = _export(os.path.join(self.tmp, "s"), mode="sgd")[0].graph
        self.assertIn("forward + backward + SGD update", sgd["meta"]["source"])
        # the 15 parameters are updated in place (their new versions are
        # the outputs); the gradients are intermediates
        self.assertGreaterEqual(sgd["meta"]["mutations"] - grad["meta"]["mutations"], 15)
        self.assertEqual(len(sgd["outputs"]), len(grad["outputs"]))

    def test_batch_norm_buffers(self):
        # running statistics are updated in the step (copied back), in
        # place: each is freeable and its update's pair takes its storage
        g = _export(self.tmp, model_name="tiny", batch=2)[0].graph
        self.assertGreaterEqual(g["meta"]["mutations"], 3)
        bufs = {b["name"]: b for b in g["buffers"]}
        mut = _mutated_inputs(g)
        self.assertGreaterEqual(len(mut), 3)
        for i, o in mut.items():
            self.assertTrue(bufs[i].get("freeable"), i)
            self.assertEqual(bufs[i]["bytes"], bufs[o]["bytes"], i)

    def test_adamw_mutations_are_one_storage(self):
        # every parameter and its AdamW state (exp_avg, exp_avg_sq, step)
        # is updated in place: the input is freeable, its update lists the
        # pair [input, new version]; with --no-inplace the old SSA meaning
        # (the input resident, its new version a second storage)
        ex = _export(os.path.join(self.tmp, "a"), mode="adamw")[0]
        old = _export(os.path.join(self.tmp, "o"), mode="adamw", inplace=False)[0]
        g, n_params = ex.graph, 2 * 6 + 3
        bufs = {b["name"]: b for b in g["buffers"]}
        mut = _mutated_inputs(g)
        self.assertEqual(len(mut), 4 * n_params)
        self.assertEqual(g["meta"]["inductor_adjustments"]["mutated_input_freed"], len(mut))
        for i in mut:
            self.assertTrue(bufs[i].get("freeable"), i)
        self.assertEqual(g["outputs"], old.graph["outputs"])
        self.assertEqual(old.graph["nodes"], [{k: v for k, v in nd.items() if k != "inplace"}
                                              for nd in g["nodes"]])
        self.assertFalse(_mutated_inputs(old.graph))
        self.assertFalse(any(b.get("freeable") for b in old.graph["buffers"] if b["name"] in mut))
        if _fuseplan() is None:
            self.skipTest("no fuseplan binary")
        # Inductor's estimate = fuseplan's peak of its plan without the
        # pairs, and the pairs only lower it.  Inductor fuses each update
        # with the update's other readers of the old value, which the
        # evaluator's rule takes as the mutation's ancestors there
        # (docs/cost-model.md, "In-place kernels"); the eager order runs
        # them apart.  Either way the state is no longer held twice to the
        # end, as in the SSA graph.
        with_pairs, without = _peak(ex), _peak(ex, pairs=False)
        self.assertEqual(without, g["meta"]["inductor_peak_adjusted_bytes"])
        self.assertLessEqual(with_pairs, without)
        eager, eager_ssa = _peak(ex, eager=True), _peak(ex, pairs=False, eager=True)
        self.assertGreater(eager_ssa - eager, 0)
        self.assertLessEqual(eager_ssa - eager, sum(bufs[i]["bytes"] for i in mut))
        ssa = _peak(old)
        self.assertEqual(ssa, old.graph["meta"]["inductor_peak_adjusted_bytes"])
        self.assertLess(with_pairs, ssa)
        self.assertLess(eager, _peak(old, eager=True))

    def _fake_equals_real(self, **kw):
        real = _export(os.path.join(self.tmp, "r"), **kw)[0]
        fake = _export(os.path.join(self.tmp, "f"), fake=True, **kw)[0]
        # the real export measures workspaces, the fake one cannot
        for nd in real.graph["nodes"]:
            nd.pop("workspace", None)
        for key in ("nodes", "buffers", "outputs", "unfusible"):
            self.assertEqual(real.graph[key], fake.graph[key], key)
        self.assertFalse(fake.graph["meta"]["workspaces"]["measured"])
        self.assertEqual(real.plan, fake.plan)
        self.assertEqual(real.graph["meta"]["inductor_peak_adjusted_bytes"],
                         fake.graph["meta"]["inductor_peak_adjusted_bytes"])
        return real.graph

    def test_fake_equals_real(self):
        self._fake_equals_real()

    def test_adamw_state_is_mutated_input(self):
        # per parameter: exp_avg, exp_avg_sq and the step count are graph
        # inputs, and the step writes new versions of them and of the weight
        grad = _export(os.path.join(self.tmp, "g"))[0].graph
        g = _export(os.path.join(self.tmp, "a"), mode="adamw")[0].graph
        self.assertIn("forward + backward + AdamW update", g["meta"]["source"])
        n_params = 2 * 6 + 3
        inputs = [b for b in g["buffers"] if b.get("input")]
        grad_inputs = [b for b in grad["buffers"] if b.get("input")]
        self.assertEqual(len(inputs) - len(grad_inputs), 3 * n_params)
        self.assertGreaterEqual(g["meta"]["mutations"] - grad["meta"]["mutations"], 4 * n_params)
        self.assertGreater(len(g["nodes"]), len(grad["nodes"]) + 2 * n_params)

    def test_adamw_fake_equals_real(self):
        # per-parameter AdamW on bfloat16 weights
        self._fake_equals_real(mode="adamw", dtype=torch.bfloat16)

    def test_adamw_master_foreach_fake_equals_real(self):
        # foreach AdamW on float32 masters of bfloat16 weights: the masters
        # replace the weights as inputs (4 bytes a weight, not 2)
        g = self._fake_equals_real(mode="adamw-master-foreach", dtype=torch.bfloat16)
        self.assertIn("float32 master weights, foreach", g["meta"]["source"])
        ins = sum(b["bytes"] for b in g["buffers"] if b.get("input"))
        # inputs: master, exp_avg, exp_avg_sq in float32 (12 bytes a
        # weight), 15 float32 step counts and the int64 tokens and targets;
        # no bfloat16 weight
        weights = sum(p.numel() for p in build_model(*TINY)[0].parameters())
        self.assertEqual(ins, 12 * weights + 15 * 4 + 2 * TINY[1] * TINY[2] * 8)

    def test_adamw_clip_fake_equals_real(self):
        # gradient clipping before a per-parameter update: at least one
        # norm and one scaling node per parameter more than without it
        g = self._fake_equals_real(mode="adamw-master-clip", dtype=torch.bfloat16)
        self.assertIn("gradient clipping + AdamW", g["meta"]["source"])
        plain = _export(os.path.join(self.tmp, "p"), mode="adamw-master", dtype=torch.bfloat16)
        self.assertGreaterEqual(len(g["nodes"]), len(plain[0].graph["nodes"]) + 15)

    def test_clip_scales_to_max_norm(self):
        # both forms scale a global norm of 5 down to MAX_NORM, and leave
        # gradients already under it unchanged
        for foreach in (False, True):
            params = {"a": torch.zeros(3), "b": torch.zeros(2, 2)}
            opt = optim.AdamWState(params, master=False, foreach=foreach)
            grads = {"a": torch.tensor([3.0, 0.0, 0.0]), "b": torch.tensor([[0.0, 4.0], [0, 0]])}
            opt.clip(grads)
            norm = torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads.values()]))
            self.assertAlmostEqual(norm.item(), optim.MAX_NORM, places=5)
            small = {"a": torch.full((3,), 0.1)}
            opt.clip(small)
            self.assertTrue(torch.equal(small["a"], torch.full((3,), 0.1)))

    def test_fake_cli_allocates_nothing_big(self):
        # a step of ~1.2 GB of parameters (d4 w1024 v128k) under --fake: no
        # tensor storage is allocated, so the process grows far less
        import resource

        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rc = export_main(["llama-d4-w1024-v128k", "--batch", "1", "--seq", "64", "--whole-step",
                          "--fake", "--plain", "--out", self.tmp])
        self.assertEqual(rc, 0)
        g = load(os.path.join(self.tmp, "llama-d4-w1024-v128k.step.json"))
        self.assertTrue(g["meta"]["fake_tensors"])
        params = sum(b["bytes"] for b in g["buffers"] if b.get("input"))
        self.assertGreater(params, 2**30)
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
        self.assertLess(grown, params // 2)


if __name__ == "__main__":
    unittest.main()
