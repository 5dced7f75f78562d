"""``torch.compile(model, backend="fuseplan")``: Inductor with the plans of
$FUSEPLAN_PLANS (registered as a torch_dynamo_backends entry point by
pip install ./tools)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


def fuseplan_backend(gm: torch.fx.GraphModule,
                     example_inputs: Sequence[Any]) -> Callable[..., Any]:
    """Inductor's compile_fx with every inner compilation (forward and,
    later, backward) run under plans($FUSEPLAN_PLANS)."""
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    from .apply import plans

    def inner(*args, **kwargs):
        with plans(os.environ.get("FUSEPLAN_PLANS"),
                   on_missing=os.environ.get("FUSEPLAN_ON_MISSING", "error")):
            return compile_fx_inner(*args, **kwargs)

    return compile_fx(gm, example_inputs, inner_compile=inner)
