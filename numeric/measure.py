r"""Measurements of the target where the chains are: curvature and minibatch heating.

* ``Curvature``: κ = the largest curvature of the potential U at the chains' positions, by power
  iteration on Hessian-vector products (a fresh minibatch per measurement for data models). Without
  a preconditioner κ = nβ·|λ_max(∇²L_B(w))| + γ + α; with the Hessian preconditioner M the whole
  κ = λ_max(M^{1/2}·∇²U_B·M^{1/2}) (the γ + α part is not a multiple of I there).
* ``consistent_curvature``: κ such that ε = c/κ is consistent with the curvature where a step of
  size ε lands (singular w*: curvature 0 at w*, large one step away).
* ``minibatch_heating``: 1 + h·ε·nβ²·mean_i Var((M^{1/2}ĝ)_i)/4, the factor by which the
  gradient noise heats the chains (h = ``sgld.noise_heating``: 1 for LM, more for BAOAB).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from numeric import sgld
from numeric.errors import InvalidInputError

INFLATION_CHAINS = 16  # chains the minibatch-noise inflation is measured on

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
    eps = step_scale / max(k0, 1e-12)
    xi = torch.randn(w0.shape, generator=gen, device=w0.device, dtype=w0.dtype)
    if sqrt_m is not None:
        xi = xi @ sqrt_m
    for _ in range(rounds):
        k1, v = curvature(w0 + math.sqrt(eps) * xi, alive, v, iters)
        new = math.sqrt(eps * step_scale / max(k0, k1, 1e-12))
        done = abs(math.log(new / eps)) < 0.1
        eps = min(eps, new) if done else new
        if done:
            break
    return step_scale / eps, v


def minibatch_heating(
    gradient_fn: Callable[[Tensor], sgld.GradientFn],
    position: Tensor,
    alive: Tensor,
    gen: torch.Generator,
    step_size: float,
    nbeta: float,
    sqrt_m: Tensor | None = None,
    heating: float = 1.0,
    samples: int = 8,
) -> float:
    """1 + h·ε·nβ²·mean_i Var((M^{1/2}ĝ)_i)/4 at the positions of up to ``INFLATION_CHAINS``
    live chains (Welford over ``samples`` minibatches; the variance in the coordinates
    z = M^{-1/2}w where the noise is isotropic; h = ``heating``); nan with no live chain.
    ``gradient_fn(chains)`` is ĝ for the chains of that index tensor, as the steps compute it."""
    chosen = alive.nonzero().squeeze(1)[:INFLATION_CHAINS]
    if chosen.numel() == 0:
        return math.nan
    grad = gradient_fn(chosen)
    w = position[chosen]
    mean = torch.zeros_like(w)
    m2 = torch.zeros_like(w)
    for k in range(1, samples + 1):
        g = grad(w, gen).grad
        if sqrt_m is not None:
            g = g @ sqrt_m
        delta = g - mean
        mean += delta / k
        m2 += delta * (g - mean)
    var = m2 / (samples - 1)
    ok = torch.isfinite(var).all(dim=-1)
    if not bool(ok.any()):
        return float("nan")
    return 1.0 + heating * step_size * nbeta**2 * float(var[ok].mean()) / 4.0
