"""fuseplan_inductor: export PyTorch Inductor's graphs for fuseplan, apply
fuseplan's plans inside torch.compile, and measure them.

    import fuseplan_inductor
    with fuseplan_inductor.plans("plans/"):
        loss_fn(torch.compile(model)(x)).backward()

Importing the package changes nothing.  A script run with FUSEPLAN_PLANS=DIR
(and FUSEPLAN_ON_MISSING=inductor) applies DIR to every torch.compile of
the process by calling ``fuseplan_inductor.plans_from_env()`` once;
``torch.compile(model, backend="fuseplan")`` reads the same variables
without it.  See docs/inductor.md.
"""

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
    plans_from_env,
)
from .versions import TESTED_TIMM, TESTED_TORCH, UnsupportedTorchError, check_torch

# The package's one version: pyproject.toml reads it (tool.setuptools.dynamic).
__version__ = "0.1.0"
__all__ = [
    "GraphReport", "KernelMismatchError", "NoPlanError", "PlanDirError", "PlanError",
    "UnfusibleGroupError", "UnsupportedTorchError", "check_torch", "observe", "plan_error",
    "plans", "plans_from_env", "TESTED_TORCH", "TESTED_TIMM",
]
