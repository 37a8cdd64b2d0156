r"""The curvature of the target where the chains are, which sets the step size
(``numeric.warmup.step_size``; the minibatch heating, which sets the friction:
``numeric.warmup.friction``).

* ``Curvature``: κ = the largest curvature of the potential U at the chains' positions, by power
  iteration on Hessian-vector products (a fresh minibatch per measurement for data models). Without
  a preconditioner κ = nβ·|λ_max(∇²L_B(w))| + γ + α; with the Hessian preconditioner M the whole
  κ = λ_max(M^{1/2}·∇²U_B·M^{1/2}) (the γ + α part is not a multiple of I there).
* ``consistent_curvature``: κ such that ε = c/κ is consistent with the curvature where a step of
  size ε lands (singular w*: curvature 0 at w*, large one step away).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import torch
from torch import Tensor

from numeric.errors import DivergenceError, InvalidInputError

# hvp_at(positions [C, D], difference) -> (v [C, D] -> H·v); ``difference``: by central
# differences of the gradient (where autograd's second derivative is not finite)
HvpAt = Callable[[Tensor, bool], Callable[[Tensor], Tensor]]


def power_iteration(
    hvp: Callable[[Tensor], Tensor], v0: Tensor, iters: int
) -> tuple[Tensor, Tensor]:
    """Largest-|eigenvalue| of each chain's Hessian by power iteration; v0 [C, D] warm start."""
    v = v0 / v0.norm(dim=-1, keepdim=True).clamp_min(1e-30)
    lam = v.new_zeros(v.shape[0])
    for _ in range(iters):
        hv = hvp(v)
        lam = (hv * v).sum(-1)
        nrm = hv.norm(dim=-1, keepdim=True)
        v = torch.where(nrm > 0, hv / nrm.clamp_min(1e-30), v)
    return lam.abs(), v


class Curvature:
    """κ at positions [C, D] (module docstring): ``curvature(w, alive, v, iters) -> (κ, v)``, the
    largest over the live chains with a finite value (0 when there is none)."""

    def __init__(
        self,
        hvp_at: HvpAt,
        nbeta: float,
        gamma: float,
        alpha: float,
        sqrt_m: Tensor | None = None,
        m: Tensor | None = None,
        *,
        add_separately: bool = False,
    ) -> None:
        """``hvp_at(w)``: the Hessian of the loss (L_B or K) at w as an HVP; ``sqrt_m``, ``m``:
        the preconditioner M^{1/2} and M, or None. Without a preconditioner κ = nβ·top + (γ + α),
        or, ``add_separately``, (nβ·top + γ) + α (the potential estimator's rounding)."""
        self.hvp_at, self.nbeta, self.sqrt_m, self.m = hvp_at, nbeta, sqrt_m, m
        self.floor = gamma + alpha
        self.shifts = (gamma, alpha) if add_separately else (self.floor,)

    def __call__(self, w: Tensor, alive: Tensor, v: Tensor, iters: int) -> tuple[float, Tensor]:
        lam, v_new = self._top(w, v, iters, difference=False)
        finite = alive & torch.isfinite(lam)
        if bool(alive.any()) and not bool(finite.any()):  # NaN second derivatives: differences
            lam, v_new = self._top(w, v, iters, difference=True)
            finite = alive & torch.isfinite(lam)
            if not bool(finite.any()):
                raise InvalidInputError(
                    "the curvature of the loss where the chains are is not finite (Hessian-"
                    "vector products by autograd and by differences of the gradient are NaN or "
                    "inf): the loss is not twice differentiable there"
                )
        lam = lam[finite]
        kappa = self.scale * (float(lam.max()) if lam.numel() else 0.0)
        for shift in self.shifts if self.sqrt_m is None else (0.0,):
            kappa = kappa + shift
        return kappa, v_new

    @property
    def scale(self) -> float:
        return self.nbeta if self.sqrt_m is None else 1.0

    def _top(self, w: Tensor, v: Tensor, iters: int, *, difference: bool) -> tuple[Tensor, Tensor]:
        """Each chain's largest |eigenvalue| of the (preconditioned) curvature operator."""
        hvp = self.hvp_at(w, difference)
        if self.sqrt_m is None:
            return power_iteration(hvp, v, iters)
        s, m = self.sqrt_m, self.m

        def op(u: Tensor) -> Tensor:
            return self.nbeta * (hvp(u @ s) @ s) + self.floor * (u @ m)

        return power_iteration(op, v, iters)


def consistent_curvature(
    curvature: Curvature,
    w0: Tensor,
    alive: Tensor,
    v: Tensor,
    step_scale: float,
    gen: torch.Generator,
    iters: int,
    sqrt_m: Tensor | None = None,
    rounds: int = 8,
) -> tuple[float, Tensor]:
    """κ such that ε = c/κ is consistent with the curvature where a step of size ε lands.

    κ = max(κ(w), κ(w + √ε·ξ)) at the chains' positions w: at a singular w* the curvature can
    be 0 while one step of size c/κ(w*) lands where it is huge. The damped iteration
    ε ← √(ε·c/κ) from ε = c/κ(w) converges to the fixed point (ε ∝ (nβ·D)^(-1/2) for a loss
    quartic at w*, as for reduced rank regression at the origin). With a preconditioner the step
    is √ε·M^{1/2}·ξ. Draws ξ [C, D] from ``gen`` once.
    """
    k0, v = curvature(w0, alive, v, iters)
    _finite_curvature(k0, w0)
    eps = step_scale / max(k0, 1e-12)
    xi = torch.randn(w0.shape, generator=gen, device=w0.device, dtype=w0.dtype)
    if sqrt_m is not None:
        xi = xi @ sqrt_m
    for _ in range(rounds):
        k1, v = curvature(w0 + math.sqrt(eps) * xi, alive, v, iters)
        _finite_curvature(k1, w0)
        kappa = max(k0, k1, 1e-12)
        product = eps * step_scale / kappa
        # where ε·c/κ underflows (nβ near the dtype's limit), √ε·√(c/κ) does not
        new = (
            math.sqrt(product)
            if product >= sys.float_info.min
            else math.sqrt(eps) * math.sqrt(step_scale / kappa)
        )
        done = abs(math.log(new / eps)) < 0.1
        eps = min(eps, new) if done else new
        if done:
            break
    return step_scale / eps, v


def _finite_curvature(kappa: float, like: Tensor) -> None:
    """Refuse a curvature that overflowed (nβ·∇²L beyond the dtype's range): no ε follows."""
    if not math.isfinite(kappa):
        raise DivergenceError(
            "the curvature of the tempered loss is not finite",
            chain=0,
            step=0,
            cause=f"nβ·∇²L_n overflows {like.dtype} (κ = {kappa}); lower nbeta",
        )
