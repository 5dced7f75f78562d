"""workspace.py (docs/exporter.md, "Workspaces"): an extern kernel's
temporaries, measured by running its aten call alone under the profiler.

A channels-last depthwise convolution_backward holds temporaries beyond
its outputs (38,688,768 bytes on (2, 768, 7, 7) with a 7x7 kernel, the
convnext_tiny residue of BENCHMARKS.md); a matmul holds none.  Exported
with workspaces on, the backward graph of a small depthwise conv net
carries that workspace on its convolution_backward node (version 4, meta
says what was measured); with them off, or under fake tensors, no node
has one and the meta says why.  Run by tests/tools/test_inductor.sh
(python -m unittest); needs torch."""

import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from fuseplan_inductor import workspace  # noqa: E402
from fuseplan_inductor.export import export_model, fake_tensors  # noqa: E402

torch.set_num_threads(1)
aten = torch.ops.aten


def _t(shape, stride):
    return ("T", (tuple(shape), tuple(stride), torch.float32, 0))


def _ints(*xs):
    return ("L", "list", tuple(("V", x) for x in xs))


def _conv_bwd(c, hw, k):
    """The spec of a channels-last depthwise convolution_backward on
    (2, c, hw, hw) with a k x k kernel (stride 1, same padding)."""
    cl = (c * hw * hw, 1, hw * c, c)
    go, x = _t((2, c, hw, hw), cl), _t((2, c, hw, hw), cl)
    w = _t((c, 1, k, k), (k * k, 1, k, 1))
    args = (
        go,
        x,
        w,
        _ints(c),
        _ints(1, 1),
        _ints(k // 2, k // 2),
        _ints(1, 1),
        ("V", False),
        _ints(0, 0),
        ("V", c),
        ("L", "list", (("V", True),) * 3),
    )
    return aten.convolution_backward.default, args, ()


class DepthwiseNet(torch.nn.Module):
    """A depthwise 7x7 convolution (channels-last input) and a linear map."""

    def __init__(self, c=96):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.fc = torch.nn.Linear(c, c)

    def forward(self, x):
        y = self.conv(x).relu()
        return self.fc(y.mean((2, 3)))


def _export(out, **kw):
    model = DepthwiseNet()
    x = torch.randn(2, 96, 7, 7).to(memory_format=torch.channels_last)
    done = export_model(
        model,
        (x,),
        lambda y: y.sum(),
        name="dw",
        model_label="dw",
        batch=2,
        out=out,
        ext=".json",
        **kw,
    )
    return {ex.which: ex.graph for ex in done}


class Workspace(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fp-ws-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_conv_backward_has_a_workspace(self):
        # the figure BENCHMARKS.md measured inside convnext_tiny's backward
        self.assertEqual(workspace.measure_call(_conv_bwd(768, 7, 7)), 38688768)

    def test_matmul_has_none(self):
        spec = (aten.mm.default, (_t((64, 128), (128, 1)), _t((128, 32), (32, 1))), ())
        self.assertEqual(workspace.measure_call(spec), 0)

    def test_failed_call_is_unmeasurable(self):
        spec = (aten.mm.default, (_t((4, 5), (5, 1)), _t((6, 2), (2, 1))), ())
        with self.assertRaises(workspace.Unmeasurable):
            workspace.measure_call(spec)

    def test_exported_on_the_extern_node(self):
        g = _export(os.path.join(self.tmp, "on"))["bwd"]
        ws = {nd["name"]: nd["workspace"] for nd in g["nodes"] if "workspace" in nd}
        meta = g["meta"]["workspaces"]
        self.assertTrue(meta["measured"], meta)
        self.assertEqual(g["version"], 4)
        self.assertTrue(ws, meta)
        self.assertTrue(all(g_["kind"] == "extern" for g_ in g["nodes"] if g_["name"] in ws))
        self.assertEqual(meta["nonzero"], len(ws))
        self.assertEqual(meta["total_bytes"], sum(ws.values()))
        self.assertGreater(meta["calls_run"], 0)
        self.assertEqual(meta["failed"], {})

    def test_off_and_fake_record_why(self):
        g = _export(os.path.join(self.tmp, "off"), workspaces=False)["bwd"]
        self.assertFalse(any("workspace" in nd for nd in g["nodes"]))
        self.assertEqual(
            g["meta"]["workspaces"], {"measured": False, "why": "turned off (--no-workspaces)"}
        )
        with fake_tensors():
            g = _export(os.path.join(self.tmp, "fake"))["bwd"]
        self.assertFalse(any("workspace" in nd for nd in g["nodes"]))
        self.assertFalse(g["meta"]["workspaces"]["measured"])
        self.assertIn("fake", g["meta"]["workspaces"]["why"])


if __name__ == "__main__":
    unittest.main()
