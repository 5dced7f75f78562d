"""The models the exporter and the loop know by name.

A MODEL is a timm model name, ``gpt2`` / ``gpt2-L<n>`` (a GPT-2 style stack
written with torch.nn), ``llama-...`` (a Llama-style language model whose
forward returns its cross-entropy loss, knobs in the name: see
``parse_llama``), ``tiny`` (a conv + batch-norm + linear + layer-norm
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


# knob letter in a llama name -> (knob, what it is)
_LLAMA_KNOBS = {"d": "depth", "w": "width", "h": "heads", "v": "vocab", "f": "ffn"}
LLAMA_TINY = "llama-d2-w64-h4-v512"


def _llama_int(text):
    """An integer knob value: digits with an optional k (x1000) or m (x10^6)."""
    mult = {"k": 1000, "m": 1000000}.get(text[-1:].lower(), 1)
    digits = text[:-1] if mult > 1 else text
    if not digits.isdigit() or int(digits) == 0:
        raise ValueError(text)
    return int(digits) * mult


def parse_llama(name: str) -> dict[str, Any]:
    """The knobs of a llama model name: ``llama-d<depth>-w<width>-v<vocab>``
    with optional ``-h<heads>`` (default width / 128, at least 1),
    ``-f<ffn hidden>`` (default 8/3 width rounded up to 256) and ``-learned``
    (learned positions instead of rotary ones); ``llama-tiny`` is
    LLAMA_TINY.  Values take a k (x1000) or m suffix: v256k is 256000.
    Raises ModelError on an unknown or missing knob."""
    if name == "llama-tiny":
        name = LLAMA_TINY
    knobs = {"rope": True}
    for part in name.split("-")[1:]:
        if part == "learned":
            knobs["rope"] = False
            continue
        key = _LLAMA_KNOBS.get(part[:1])
        try:
            if key is None:
                raise ValueError(part)
            knobs[key] = _llama_int(part[1:])
        except ValueError:
            raise ModelError(f"model '{name}': bad knob '{part}' (expected "
                             f"llama-d<depth>-w<width>-v<vocab>[-h<heads>][-f<ffn>]"
                             f"[-learned])") from None
    missing = [k for k in ("depth", "width", "vocab") if k not in knobs]
    if missing:
        raise ModelError(f"model '{name}': missing {', '.join(missing)} "
                         f"(expected llama-d<depth>-w<width>-v<vocab>)")
    knobs.setdefault("heads", max(1, knobs["width"] // 128))
    knobs.setdefault("ffn", -(-8 * knobs["width"] // 3 // 256) * 256)
    if knobs["width"] % knobs["heads"] or (knobs["width"] // knobs["heads"]) % 2:
        raise ModelError(f"model '{name}': width {knobs['width']} is not heads "
                         f"{knobs['heads']} x an even head size")
    return knobs


def _rotary(x, seq):
    """Rotary positions on x (batch, heads, seq, head size): pairs of
    channels turned by position-dependent angles."""
    import torch

    hd = x.shape[-1]
    inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, device=x.device).float() / hd))
    ang = torch.arange(seq, device=x.device).float()[:, None] * inv[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


def _llama(depth, width, heads, vocab, ffn, rope, seq):
    """A Llama-style decoder (RMSNorm, causal attention with rotary or
    learned positions, SwiGLU MLP, untied head) whose forward(idx,
    targets) returns the mean cross-entropy of next-token prediction."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    hd = width // heads

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1 = nn.RMSNorm(width)
            self.qkv = nn.Linear(width, 3 * width, bias=False)
            self.o = nn.Linear(width, width, bias=False)
            self.n2 = nn.RMSNorm(width)
            self.gate_up = nn.Linear(width, 2 * ffn, bias=False)
            self.down = nn.Linear(ffn, width, bias=False)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = (z.view(b, t, heads, hd).transpose(1, 2)
                       for z in self.qkv(self.n1(x)).split(width, dim=2))
            if rope:
                q, k = _rotary(q, t), _rotary(k, t)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.o(y.transpose(1, 2).reshape(b, t, width))
            g, u = self.gate_up(self.n2(x)).chunk(2, dim=-1)
            return x + self.down(F.silu(g) * u)

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, width)
            self.pos = None if rope else nn.Embedding(seq, width)
            self.blocks = nn.ModuleList([Block() for _ in range(depth)])
            self.norm = nn.RMSNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)

        def forward(self, idx, targets):
            x = self.emb(idx)
            if self.pos is not None:
                x = x + self.pos(torch.arange(idx.shape[1], device=idx.device))
            for blk in self.blocks:
                x = blk(x)
            logits = self.head(self.norm(x))
            return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())

    return Llama()


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
    if name.startswith("llama-"):
        k = parse_llama(name)
        m = _llama(k["depth"], k["width"], k["heads"], k["vocab"], k["ffn"], k["rope"], seq)
        idx = torch.randint(0, k["vocab"], (batch, seq))
        return m, (idx, torch.roll(idx, -1, dims=1)), lambda loss: loss
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
        raise ModelError(f"model '{name}': not tiny, gpt2, llama-... or module:callable, and "
                         f"timm is not installed ({e})") from e
    try:
        m = timm.create_model(name, pretrained=False)
    except RuntimeError as e:  # timm: "Unknown model (...)"
        raise ModelError(f"model '{name}': {e}") from e
    cfg = m.pretrained_cfg.get("input_size", (3, 224, 224))
    return m, (torch.randn(batch, *cfg),), _default_loss


def step_arguments(model: torch.nn.Module) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (parameters, buffers) dicts a whole_step_fn step takes: MODEL's
    own tensors, detached (same storage, no autograd history)."""
    return ({k: v.detach() for k, v in model.named_parameters()},
            {k: v for k, v in model.named_buffers()})
