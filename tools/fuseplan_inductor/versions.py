"""The torch versions fuseplan_inductor was tested with.

It relies on private Inductor APIs (docs/inductor.md lists them), which
change between releases; an untested torch is refused with one clear
error unless FUSEPLAN_INDUCTOR_ANY_TORCH=1 is set.
"""

from __future__ import annotations

import os

TESTED_TORCH = ("2.15.0",)
TESTED_TIMM = ("1.0.31",)


class UnsupportedTorchError(RuntimeError):
    """The installed torch is not one fuseplan_inductor was tested with."""


def check_torch(version: str | None = None) -> None:
    """Raises UnsupportedTorchError unless torch's version (or VERSION) is
    a tested one; the local part (+cpu, +cu132) is ignored."""
    if version is None:
        import torch

        version = torch.__version__
    base = str(version).split("+")[0]
    if base in TESTED_TORCH or os.environ.get("FUSEPLAN_INDUCTOR_ANY_TORCH") == "1":
        return
    raise UnsupportedTorchError(
        f"torch {version} is not supported: fuseplan_inductor relies on private Inductor "
        f"APIs and was tested with torch {', '.join(TESTED_TORCH)} "
        f"(pip install ./tools[torch]; FUSEPLAN_INDUCTOR_ANY_TORCH=1 tries anyway)"
    )
