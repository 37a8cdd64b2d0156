"""Natural-gradient descent with a damped empirical Fisher (Saghir et al., seed 003).

One step on a minibatch B of size b with per-sample gradients g_i = ∇ℓ_i(w) and g = mean_i g_i:

    F = (1/b)·Σ_i g_i g_iᵀ,   κ = (α/D)·max(tr F, ε),   w ← w − η·(F + κI)⁻¹·g,

D the number of parameters (the smoothing of the paper's Eqs 6–7). F has rank ≤ b, so the solve
uses the Woodbury identity with G = [g_1 … g_b]ᵀ (b × D):

    (κI + GᵀG/b)⁻¹·g = (g − Gᵀ(bκI + GGᵀ)⁻¹G·g)/κ,

a b × b system: exact (the full empirical Fisher of the batch, no approximation) at O(b²D) cost,
so the same code serves small and full mode. As κ → ∞ the step tends to SGD with rate η/κ.

Per-sample gradients need the batch itself: ``train`` calls ``observe_batch(model, loss, x, y)``
before each step (``torch.func.vmap`` over ``torch.func.grad`` of ``loss`` on one sample).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.func import functional_call, grad, vmap
from torch.optim import Optimizer

from .records import Record

LossFn = Callable[[Tensor, Tensor], Tensor]


def per_sample_gradients(model: nn.Module, loss: LossFn, x: Tensor, y: Tensor) -> Tensor:
    """[b, D]: the gradient of ``loss`` on each row of the batch, parameters flattened in
    ``model.parameters()`` order."""
    params = {k: v.detach() for k, v in model.named_parameters()}

    def one(p: dict[str, Tensor], xi: Tensor, yi: Tensor) -> Tensor:
        return loss(functional_call(model, p, (xi[None],)), yi[None])

    gs = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)
    return torch.cat([gs[k].reshape(x.shape[0], -1) for k in params], dim=1)


def damped_fisher_solve(G: Tensor, g: Tensor, alpha: float, eps: float) -> tuple[Tensor, float]:
    """(F + κI)⁻¹·g with F = GᵀG/b and κ = (α/D)·max(tr F, ε); returns the direction and κ."""
    b, D = G.shape
    trace = float(G.square().sum()) / b
    kappa = alpha / D * max(trace, eps)
    small = b * kappa * torch.eye(b, dtype=G.dtype, device=G.device) + G @ G.T
    return (g - G.T @ torch.linalg.solve(small, G @ g)) / kappa, kappa


class NGD(Optimizer):
    """w ← w − lr·(F + κI)⁻¹·∇L_B (module docstring); ``observe_batch`` must precede each step."""

    def __init__(
        self, params: Iterable[Tensor], lr: float, *, alpha: float = 0.01, eps: float = 1e-10
    ) -> None:
        if not (alpha > 0 and eps > 0):
            raise ValueError(f"alpha and eps must be positive, got {alpha}, {eps}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps))
        self._G: Tensor | None = None
        self.last_kappa = math.nan

    def observe_batch(self, model: nn.Module, loss: LossFn, x: Tensor, y: Tensor) -> None:
        """Store the batch's per-sample gradients (the model's parameters must be ours)."""
        ours = {id(p) for g in self.param_groups for p in g["params"]}
        if {id(p) for p in model.parameters()} != ours:
            raise ValueError("NGD.observe_batch: the model's parameters are not this optimizer's")
        self._G = per_sample_gradients(model, loss, x, y)

    @torch.no_grad()
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor:  # type: ignore[override]
        if closure is None:
            raise ValueError("NGD.step needs a closure that computes the batch loss and backprops")
        with torch.enable_grad():
            loss = closure()
        if self._G is None:
            raise RuntimeError("NGD.step without observe_batch: call it with the step's batch")
        params = [p for g in self.param_groups for p in g["params"]]
        g = torch.cat([p.grad.reshape(-1) for p in params])
        group = self.param_groups[0]
        direction, self.last_kappa = damped_fisher_solve(
            self._G.to(g.dtype), g, group["alpha"], group["eps"]
        )
        offset = 0
        for p in params:
            k = p.numel()
            p.add_(direction[offset : offset + k].view_as(p), alpha=-group["lr"])
            offset += k
        self._G = None
        return loss


@dataclass(frozen=True)
class NGDSpec(Record):
    """NGD's settings; ``build`` makes the optimizer (``train`` takes it like an OptimizerSpec)."""

    lr: float
    alpha: float = 0.01
    eps: float = 1e-10
    kind: str = "ngd"

    def __post_init__(self) -> None:
        if not self.lr > 0:
            raise ValueError(f"learning rate must be positive, not {self.lr}")

    @property
    def label(self) -> str:
        return f"NGD(α={self.alpha:g})"

    def build(self, params: Iterable[Tensor], generator: torch.Generator) -> NGD:
        return NGD(params, self.lr, alpha=self.alpha, eps=self.eps)


def ngd(lr: float, alpha: float = 0.01, eps: float = 1e-10) -> NGDSpec:
    """Natural-gradient descent with Fisher smoothing α (and floor ε on tr F)."""
    return NGDSpec(lr, alpha, eps)
