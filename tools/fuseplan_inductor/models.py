"""The models the exporter and the loop know by name.

A MODEL is a timm model name, ``gpt2`` / ``gpt2-L<n>`` (a GPT-2 style stack
written with torch.nn), ``tiny`` (a conv + batch-norm + linear + layer-norm
test model), or ``module:callable``: a function that takes the batch size
and returns ``(model, example_inputs)``, or ``(model, example_inputs,
loss_fn)``.  ``build_model`` returns the module, a tuple of inputs and the
loss that turns the model's output into the scalar of a training step.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


class ModelError(Exception):
    """A MODEL that cannot be built (unknown name, bad module:callable)."""


def _gpt2_stack(layers=12, d=768, heads=12, seq=512, vocab=50257):
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d)
            self.out = nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q = q.view(b, t, heads, d // heads).transpose(1, 2)
            k = k.view(b, t, heads, d // heads).transpose(1, 2)
            v = v.view(b, t, heads, d // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // heads))
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.out(nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(seq, d)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.lnf = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.lnf(x))

    return GPT2()


def _tiny():
    import torch.nn as nn

    return nn.Sequential(
        nn.Conv2d(3, 8, 3),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(8 * 6 * 6, 10),
        nn.LayerNorm(10),
    )


def _default_loss(y):
    """Scalar of a step: a logsumexp over the last dimension (cheap, and
    every output element gets a gradient)."""
    if isinstance(y, (tuple, list)):
        y = y[0]
    return y.float().logsumexp(-1).mean()


def _from_callable(spec, batch):
    mod_name, _, fn_name = spec.partition(":")
    try:
        fn = getattr(importlib.import_module(mod_name), fn_name)
    except (ImportError, AttributeError) as e:
        raise ModelError(
            f"model '{spec}': cannot load {fn_name} from module {mod_name}: {e}"
        ) from e
    got = fn(batch)
    if not isinstance(got, tuple) or len(got) not in (2, 3):
        raise ModelError(
            f"model '{spec}': {fn_name}(batch) must return (model, example_inputs) "
            f"or (model, example_inputs, loss_fn), got {type(got).__name__}"
        )
    model, inputs = got[0], got[1]
    loss = got[2] if len(got) == 3 else _default_loss
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    return model, tuple(inputs), loss


def build_model(name: str, batch: int, seq: int = 512
                ) -> tuple[torch.nn.Module, tuple[Any, ...], Callable[[Any], torch.Tensor]]:
    """Returns (module, tuple of example inputs, loss function), seeded so
    that two calls give the same weights and inputs.  Raises ModelError."""
    import torch

    torch.manual_seed(0)
    if ":" in name:
        return _from_callable(name, batch)
    if name == "tiny":
        return _tiny(), (torch.randn(batch, 3, 8, 8),), lambda y: y.sum()
    if name.startswith("gpt2"):
        # gpt2 (12 layers), gpt2-L<n> for n layers
        try:
            layers = int(name.split("-L")[1]) if "-L" in name else 12
        except ValueError:
            raise ModelError(f"model '{name}': expected gpt2 or gpt2-L<layers>") from None
        m = _gpt2_stack(layers=layers, seq=seq)
        idx = torch.randint(0, 50257, (batch, seq))
        return m, (idx,), _default_loss
    try:
        import timm
    except ImportError as e:
        raise ModelError(f"model '{name}': not tiny, gpt2 or module:callable, and timm is "
                         f"not installed ({e})") from e
    try:
        m = timm.create_model(name, pretrained=False)
    except RuntimeError as e:  # timm: "Unknown model (...)"
        raise ModelError(f"model '{name}': {e}") from e
    cfg = m.pretrained_cfg.get("input_size", (3, 224, 224))
    return m, (torch.randn(batch, *cfg),), _default_loss
