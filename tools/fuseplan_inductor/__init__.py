"""fuseplan_inductor: export PyTorch Inductor's graphs for fuseplan, apply
fuseplan's plans inside torch.compile, and measure them.

    import fuseplan_inductor
    with fuseplan_inductor.plans("plans/"):
        loss_fn(torch.compile(model)(x)).backward()

Setting FUSEPLAN_PLANS=DIR (and FUSEPLAN_ON_MISSING=inductor) applies DIR
to every torch.compile of a process that imports this package, and to
``torch.compile(model, backend="fuseplan")`` without the import.  See
docs/inductor.md.
"""

import os

from .apply import (
    GraphReport,
    KernelMismatchError,
    NoPlanError,
    PlanDirError,
    PlanError,
    UnfusibleGroupError,
    observe,
    plan_error,
    plans,
)
from .versions import TESTED_TIMM, TESTED_TORCH, UnsupportedTorchError, check_torch

__version__ = "0.1.0"
__all__ = [
    "GraphReport", "KernelMismatchError", "NoPlanError", "PlanDirError", "PlanError",
    "UnfusibleGroupError", "UnsupportedTorchError", "check_torch", "observe", "plan_error",
    "plans", "TESTED_TORCH", "TESTED_TIMM",
]

_from_env = None
if os.environ.get("FUSEPLAN_PLANS"):
    # scripts: the plans stay active for the whole process
    _from_env = plans(os.environ["FUSEPLAN_PLANS"],
                      on_missing=os.environ.get("FUSEPLAN_ON_MISSING", "error"))
    _from_env.__enter__()
