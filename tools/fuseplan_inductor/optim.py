"""The AdamW step of a whole-step graph (``--whole-step=adamw...``).

A whole-step trainer compiles the optimizer step into the step's graph, so
the optimizer state (first and second moments, a step count per parameter
and, for low-precision parameters, float32 master weights) is part of the
graph: inputs that the step mutates in place.  ``AdamWState`` holds that
state for one model's parameters; ``update`` runs torch.optim.AdamW's
update (decoupled weight decay, bias correction from a step tensor, as
its ``capturable`` form does) either one parameter at a time
(``foreach=False``) or through the ``torch._foreach_*`` ops that
``foreach=True`` uses, which is what Inductor then sees.

With ``master=True`` the state keeps a float32 copy of every parameter
that is not float32, as torchtitan's default mixed precision does (float32
parameters, bfloat16 compute): the forward and backward run on casts of the
masters to the parameters' dtype, the gradients come back in float32, and
the moments and the update are float32.  The model's own low-precision
parameters are then not read by the step (torchtitan has none).

A ``-clip`` mode clips the gradients by their global norm before the
update, as ``torch.nn.utils.clip_grad_norm_`` does inside a trainer's step
(torchtitan's default max norm 1.0): one norm per gradient, the norm of
those norms, and every gradient scaled in place by the clamped
coefficient, through the foreach ops with a foreach update.

The state is created from the parameters under whatever mode is active,
so under fake tensors (``--fake``) it has shapes and no storage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

# torchtitan's AdamW defaults (lr 8e-4, betas (0.9, 0.95), eps 1e-8, weight
# decay 0.1); the values do not change the graph's shape, only its constants
LR, BETAS, EPS, WEIGHT_DECAY = 8e-4, (0.9, 0.95), 1e-8, 0.1
# torchtitan's max_norm for gradient clipping (-clip modes)
MAX_NORM = 1.0


class AdamWState:
    """AdamW's state for the parameters PARAMS (name -> tensor): per name
    exp_avg, exp_avg_sq and a float32 step count (zeros), and with MASTER
    a float32 master copy of each non-float32 parameter (moments then in
    float32 too).  FOREACH picks the foreach form of the update."""

    def __init__(self, params: dict[str, torch.Tensor], *, master: bool, foreach: bool):
        import torch

        self.foreach = foreach
        self.master = {k: p.detach().float() for k, p in params.items()
                       if master and p.dtype != torch.float32}
        like = {k: self.master.get(k, p.detach()) for k, p in params.items()}
        self.exp_avg = {k: torch.zeros_like(p) for k, p in like.items()}
        self.exp_avg_sq = {k: torch.zeros_like(p) for k, p in like.items()}
        self.step = {k: torch.zeros((), dtype=torch.float32, device=p.device)
                     for k, p in like.items()}

    def weights(self, params: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The tensors the gradient is taken with respect to: the master
        copy where there is one, else the parameter of PARAMS."""
        return {k: self.master.get(k, p) for k, p in params.items()}

    def compute(self, weights: dict[str, torch.Tensor],
                params: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """WEIGHTS (from ``weights``) in the dtype of PARAMS: the casts of
        the masters that the forward runs on (the others unchanged)."""
        return {k: w.to(params[k].dtype) if k in self.master else w for k, w in weights.items()}

    def clip(self, grads: dict[str, torch.Tensor]) -> None:
        """Scales GRADS (name -> gradient) in place so that their global
        2-norm is at most MAX_NORM, as clip_grad_norm_ does (its foreach
        form with a foreach update).  Call under torch.no_grad()."""
        import torch

        gs = list(grads.values())
        norms = torch._foreach_norm(gs) if self.foreach else [torch.linalg.vector_norm(g)
                                                              for g in gs]
        total = torch.linalg.vector_norm(torch.stack([n.float() for n in norms]))
        coef = torch.clamp(MAX_NORM / (total + 1e-6), max=1.0)
        if self.foreach:
            torch._foreach_mul_(gs, coef)
            return
        for g in gs:
            g.mul_(coef.to(g.dtype))

    def update(self, weights: dict[str, torch.Tensor], grads: dict[str, torch.Tensor]) -> None:
        """One AdamW step in place on WEIGHTS (from ``weights``) and the
        state, with GRADS (name -> gradient, WEIGHTS' dtype).  Call under
        torch.no_grad()."""
        names = list(weights)
        if self.foreach:
            _foreach_adamw([weights[k] for k in names], [grads[k] for k in names],
                           [self.exp_avg[k] for k in names], [self.exp_avg_sq[k] for k in names],
                           [self.step[k] for k in names])
            return
        for k in names:
            _single_adamw(weights[k], grads[k], self.exp_avg[k], self.exp_avg_sq[k], self.step[k])


def _single_adamw(p: Any, g: Any, m: Any, v: Any, t: Any) -> None:
    """AdamW on one parameter P with gradient G, moments M, V and step
    tensor T (all updated in place)."""
    b1, b2 = BETAS
    t += 1
    p.mul_(1 - LR * WEIGHT_DECAY)
    m.lerp_(g, 1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    # bias corrections from the step tensor, as the capturable form does
    step_size = LR / (1 - b1 ** t)
    denom = (v.sqrt() / (1 - b2 ** t).sqrt()).add_(EPS)
    p.sub_(step_size * m / denom)


def _foreach_adamw(ps: list[Any], gs: list[Any], ms: list[Any], vs: list[Any],
                   ts: list[Any]) -> None:
    """AdamW on the lists PS, GS, MS, VS, TS through the torch._foreach_*
    ops (foreach=True's form): one op per stage over all parameters."""
    import torch

    b1, b2 = BETAS
    torch._foreach_add_(ts, 1)
    torch._foreach_mul_(ps, 1 - LR * WEIGHT_DECAY)
    torch._foreach_lerp_(ms, gs, 1 - b1)
    torch._foreach_mul_(vs, b2)
    torch._foreach_addcmul_(vs, gs, gs, 1 - b2)
    bc1 = [1 - b1 ** t for t in ts]
    bc2 = [(1 - b2 ** t).sqrt() for t in ts]
    denom = torch._foreach_div(torch._foreach_sqrt(vs), bc2)
    torch._foreach_add_(denom, EPS)
    steps = [LR / c for c in bc1]
    torch._foreach_sub_(ps, torch._foreach_div(torch._foreach_mul(ms, steps), denom))


# --whole-step modes with an AdamW step -> what the step graph holds
_ADAMW_MODES = {
    "adamw": "forward + backward + AdamW update",
    "adamw-foreach": "forward + backward + AdamW update (foreach)",
    "adamw-master": "forward + backward + AdamW update (float32 master weights)",
    "adamw-master-foreach": "forward + backward + AdamW update (float32 master weights, foreach)",
}
# each also with "-clip": gradient clipping by global norm before the update
WHOLE_STEP_MODES = {**_ADAMW_MODES,
                    **{f"{k}-clip": v.replace("AdamW", "gradient clipping + AdamW")
                       for k, v in _ADAMW_MODES.items()}}


def clips(mode: str) -> bool:
    """Whether whole-step MODE clips the gradients before the update."""
    return mode.endswith("-clip")


def state_for(mode: str, params: dict[str, torch.Tensor]) -> AdamWState | None:
    """The AdamWState of whole-step MODE (a WHOLE_STEP_MODES key) for
    PARAMS, or None for a mode without AdamW."""
    if mode not in WHOLE_STEP_MODES:
        return None
    base = mode.removesuffix("-clip")
    return AdamWState(params, master="master" in base, foreach=base.endswith("foreach"))
