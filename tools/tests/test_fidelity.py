"""The exporter's fidelity fields on the tiny model: the bytes live when
each graph is entered (meta.entry_live_bytes, measured through the
stand-ins) are what the really compiled step has live when torch enters
that graph; with inplace_pairs, every kernel node's in-place pairs name a
buffer it reads and one it writes, of equal sizes, and contain every
in-place update Inductor's code generation made for its own plan.  Run by
tests/tools/test_inductor.sh (python -m unittest); needs torch."""

import copy
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from fuseplan_inductor import measure  # noqa: E402
from fuseplan_inductor.export import export_model  # noqa: E402
from fuseplan_inductor.models import build_model  # noqa: E402

torch.set_num_threads(1)
BATCH = 4


def _really_freed(model, inputs, loss):
    """Per compiled graph of a real torch.compile step of MODEL, in call
    order: the names of its inputs whose storage died during its call."""
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner
    from torch._inductor.output_code import CompiledFxGraph
    from torch.multiprocessing.reductions import StorageWeakRef

    freed = []

    def inner(gm, example_inputs, **kwargs):
        out = compile_fx_inner(gm, example_inputs, **kwargs)
        out.fp_names = [ph.target for ph in gm.graph.find_nodes(op="placeholder")]
        return out

    orig = CompiledFxGraph.__call__

    def call(self, args):
        refs = [(n, StorageWeakRef(x.untyped_storage()))
                for n, x in zip(self.fp_names, args, strict=True)
                if isinstance(x, torch.Tensor)]
        out = orig(self, args)
        freed.append({n for n, r in refs if r.expired()})
        return out

    model.train()
    torch._dynamo.reset()
    f = torch.compile(model, dynamic=False,
                      backend=lambda gm, ex: compile_fx(gm, ex, inner_compile=inner))
    CompiledFxGraph.__call__ = call
    try:
        # a cached graph would skip INNER
        with torch._inductor.config.patch(fx_graph_cache=False), \
                torch._functorch.config.patch(enable_autograd_cache=False):
            measure.make_step(f, model, inputs, loss)()
    finally:
        CompiledFxGraph.__call__ = orig
        torch._dynamo.reset()
    return freed


class TinyFidelity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fi-fidelity.")
        cls.model, cls.inputs, loss = build_model("tiny", BATCH)
        cls.loss = staticmethod(loss)
        cls.exported = {ex.which: ex for ex in export_model(
            copy.deepcopy(cls.model), cls.inputs, cls.loss, name="tiny", model_label="tiny",
            batch=BATCH, out=cls.tmp, ext=".json", inplace_pairs=True)}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_entry_live_is_the_compiled_steps(self):
        # The forward saves channels-last copies of a weight and of the
        # input for the backward: a stand-in that returned the inputs
        # themselves measured the backward's entry 3936 bytes short.
        model = copy.deepcopy(self.model)
        model.train()
        torch._dynamo.reset()
        f = torch.compile(model, dynamic=False)
        step = measure.make_step(f, model, self.inputs, self.loss)
        step()
        model.zero_grad(set_to_none=True)
        real = [b for _, b in measure.live_at_ranges(step, model, self.inputs,
                                                     measure.CALL_MARK)]
        torch._dynamo.reset()
        exported = [self.exported[w].graph["meta"]["entry_live_bytes"] for w in ("fwd", "bwd")]
        self.assertEqual(exported, real)

    def test_freeable_inputs_are_those_the_compiled_graph_frees(self):
        # memory.py keeps primals_* and tangents_* by name; tiny's backward
        # frees three of them (the channels-last copies of the input and
        # the conv weight that the forward saves, and the tangent), and the
        # exporter used to mark them resident.
        # (The forward's mutated batch-norm statistics are freeable by the
        # mutation rule, as one storage with their new version: not here.)
        fwd, bwd = _really_freed(copy.deepcopy(self.model), self.inputs, self.loss)
        self.assertEqual(fwd, set())
        g = self.exported["bwd"].graph
        read = {r if isinstance(r, str) else r["buffer"] for nd in g["nodes"] for r in nd["reads"]}
        cand = {b["name"]: b.get("freeable", False) for b in g["buffers"]
                if b.get("input") and b["name"] in read and b["name"] not in g["outputs"]}
        self.assertEqual({n for n, f in cand.items() if f}, bwd & set(cand))
        self.assertLessEqual({"primals_1", "primals_3", "tangents_1"}, bwd)

    def test_a_returned_mutated_buffer_is_its_new_version(self):
        # An embedding's gradient is a zero-filled buffer that the backward
        # accumulates into (a mutation) and returns by the buffer's real
        # name.  The old version used to stay an output, so the evaluator
        # held both versions (gpt2's backward: 154 MB predicted too much).
        model = torch.nn.Sequential(torch.nn.Embedding(64, 8), torch.nn.Flatten(),
                                    torch.nn.Linear(32, 3))
        inputs = (torch.randint(0, 64, (2, 4)),)
        bwd = next(ex.graph for ex in export_model(
            model, inputs, lambda y: y.sum(), name="emb", model_label="emb", batch=2,
            out=self.tmp, ext=".json") if ex.which == "bwd")
        writer = {w: nd for nd in bwd["nodes"] for w in nd["writes"]}
        zeros = [(old, new) for nd in bwd["nodes"] for old, new in nd.get("inplace", [])
                 if old in writer and not writer[old]["reads"]]
        self.assertEqual(len(zeros), 1, zeros)
        old, new = zeros[0]
        self.assertNotIn(old, bwd["outputs"])
        self.assertIn(new, bwd["outputs"])

    def test_inplace_pairs_are_reads_and_writes_of_equal_size(self):
        n = 0
        for which, ex in self.exported.items():
            g = ex.graph
            size = {b["name"]: b["bytes"] for b in g["buffers"]}
            for nd in g["nodes"]:
                reads = {r if isinstance(r, str) else r["buffer"] for r in nd["reads"]}
                for r, w in nd.get("inplace", []):
                    n += 1
                    self.assertNotEqual(nd["kind"], "extern", (which, nd["name"]))
                    self.assertIn(r, reads, (which, nd["name"]))
                    self.assertIn(w, nd["writes"], (which, nd["name"]))
                    self.assertEqual(size[r], size[w], (which, nd["name"], r, w))
            self.assertIn(g["version"], (3, 4), which)  # 4: with workspaces
            self.assertEqual(g["meta"]["inplace_pairs"],
                             sum(len(nd.get("inplace", [])) for nd in g["nodes"]))
        self.assertGreater(n, 0, "no in-place pair on tiny")

    def test_inductors_inplace_updates_are_exported_pairs(self):
        for which, ex in self.exported.items():
            meta = ex.graph["meta"]
            decided = meta["inductor_inplace"]
            self.assertGreater(len(decided), 0, which)
            pairs = {tuple(p) for nd in ex.graph["nodes"] for p in nd.get("inplace", [])}
            self.assertLessEqual({tuple(p) for p in decided}, pairs, which)
            self.assertEqual(meta["inductor_inplace_exported"], len(decided), which)


if __name__ == "__main__":
    unittest.main()
