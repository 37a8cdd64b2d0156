r"""SGLD as a pure ``init`` / ``step`` pair over a state whose tensors have a leading chain axis.

Target (REFERENCE §6): p(w) ∝ exp(−U(w)) with

    U(w) = nβ·L(w) + (γ/2)‖w − w*‖² + (α/2)‖w‖²

(γ: localisation around w*, α: precision of an optional Gaussian prior N(0, α⁻¹I)). With ĝ an
unbiased estimate of ∇L(w) and drift d = nβ·ĝ + γ(w − w*) + αw, one step of size ε is

    euler (Lau et al., devinterp):   w' = w − (ε/2)·d + √ε·σ·ξ_{t+1}
    lm (Leimkuhler–Matthews 2013):   w' = w − (ε/2)·d + √ε·σ·(ξ_t + ξ_{t+1})/2

with ξ ~ N(0, I) independent per chain and σ = ``noise_scale`` (1 for sampling; σ = 0 gives a
plain gradient step). Both are first-order SDE discretisations; the LM scheme reuses the previous
draw, costs nothing extra, has O(ε²) rather than O(ε) bias in the invariant measure, and is exact
for Gaussian targets (variance 1/k instead of 1/(k(1 − εk/4)) for curvature k).

Preconditioned (``preconditioner`` = S = M^{1/2}, a fixed symmetric positive-definite [D, D]
matrix, shared by the chains): with M = S·S,

    w' = w − (ε/2)·M·d + √ε·σ·S·η,   η = ξ_{t+1} (euler) or (ξ_t + ξ_{t+1})/2 (lm)

computed as w' = w + (−(ε/2)·S·d + √ε·σ·η)·S (two matmuls per step; S is symmetric). In
z = S⁻¹w this is exactly the unpreconditioned step for the potential z ↦ U(Sz), whose gradient is
S·∇U: the target is unchanged, and both integrators keep their properties in z (LM stays exact
for Gaussian targets). ``drift_sq``/``noise_sq`` are measured in z.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, NamedTuple

import torch
from torch import Tensor

Integrator = Literal["euler", "lm"]


class GradientEval(NamedTuple):
    """What a gradient estimator returns at positions [C, D]."""

    loss: Tensor  # [C] minibatch loss L_B(w) of each chain
    ref_loss: Tensor  # [C] L_B(w*) on the same minibatch (0 when there is no data)
    grad: Tensor  # [C, D] unbiased estimate of ∇L(w)


class SGLDState(NamedTuple):
    position: Tensor  # [C, D]
    noise: Tensor  # [C, D] last standard-normal draw (used by the LM integrator)


class SGLDInfo(NamedTuple):
    loss: Tensor  # [C] L_B(w_t) at the position before the step
    ref_loss: Tensor  # [C] L_B(w*) on the same minibatch
    drift_sq: Tensor  # [C] ‖(ε/2)·d‖²
    noise_sq: Tensor  # [C] ‖noise increment‖²
    drift: Tensor  # [C, D] d = nβ·ĝ + γ(w − w*) + αw, the estimate of ∇U(w_t) the step used


GradientFn = Callable[[Tensor, torch.Generator], GradientEval]


def init(position: Tensor, generator: torch.Generator) -> SGLDState:
    """Initial state at ``position`` [C, D] with a fresh noise draw."""
    noise = torch.randn(
        position.shape, generator=generator, device=position.device, dtype=position.dtype
    )
    return SGLDState(position.detach().clone(), noise)


def drift(
    position: Tensor,
    grad: Tensor,
    *,
    nbeta: float | Tensor,
    gamma: float | Tensor,
    center: Tensor,
    prior_precision: float | Tensor,
) -> Tensor:
    """d = nβ·ĝ + γ(w − w*) + αw (the gradient of U with ĝ in place of ∇L).

    Python-float terms that are 0 are skipped; tensor coefficients are always applied.
    """
    d = grad * nbeta
    if isinstance(gamma, Tensor) or gamma != 0.0:
        d = d + gamma * (position - center)
    if isinstance(prior_precision, Tensor) or prior_precision != 0.0:
        d = d + prior_precision * position
    return d


def update(
    state: SGLDState,
    ev: GradientEval,
    xi: Tensor,
    *,
    step_size: float | Tensor,
    nbeta: float | Tensor,
    gamma: float | Tensor,
    center: Tensor,
    prior_precision: float | Tensor = 0.0,
    integrator: Integrator = "lm",
    noise_scale: float = 1.0,
    preconditioner: Tensor | None = None,
    with_norms: bool = False,
) -> tuple[SGLDState, SGLDInfo]:
    """The SGLD update given the gradient estimate ``ev`` at ``state`` and a fresh draw ``xi``.

    Pure (no random numbers drawn here): ``step`` draws them, ``numeric.kernel`` pre-draws a
    block of them. Scalars may be Python floats or 0-d tensors (the compiled kernel passes
    tensors so that new values do not recompile).
    """
    w = state.position
    with torch.no_grad():
        d = drift(
            w, ev.grad, nbeta=nbeta, gamma=gamma, center=center, prior_precision=prior_precision
        )
        scale = (step_size**0.5) * noise_scale
        if integrator == "lm":
            inc = (state.noise + xi) * (0.5 * scale)
        elif integrator == "euler":
            inc = xi * scale
        else:
            raise ValueError(f"unknown integrator {integrator!r}")
        if preconditioner is None:
            move = d * (-0.5 * step_size)
            new = w + move + inc
        else:
            move = (d @ preconditioner) * (-0.5 * step_size)
            new = w + (move + inc) @ preconditioner
        if with_norms:
            drift_sq, noise_sq = move.square().sum(-1), inc.square().sum(-1)
        else:
            drift_sq = noise_sq = ev.loss.new_zeros(())
    return SGLDState(new, xi), SGLDInfo(ev.loss, ev.ref_loss, drift_sq, noise_sq, d)


def step(
    state: SGLDState,
    generator: torch.Generator,
    gradient_fn: GradientFn,
    *,
    step_size: float,
    nbeta: float,
    gamma: float,
    center: Tensor,
    prior_precision: float = 0.0,
    integrator: Integrator = "lm",
    noise_scale: float = 1.0,
    preconditioner: Tensor | None = None,
    with_norms: bool = False,
) -> tuple[SGLDState, SGLDInfo]:
    """One SGLD step for all chains: ĝ from ``gradient_fn``, ξ from ``generator``, then ``update``.

    ``preconditioner`` is S = M^{1/2} [D, D] (module docstring); None means M = I.
    ``drift_sq``/``noise_sq`` are computed only when ``with_norms`` (they cost two reductions).
    """
    w = state.position
    ev = gradient_fn(w, generator)
    xi = torch.randn(w.shape, generator=generator, device=w.device, dtype=w.dtype)
    return update(
        state,
        ev,
        xi,
        step_size=step_size,
        nbeta=nbeta,
        gamma=gamma,
        center=center,
        prior_precision=prior_precision,
        integrator=integrator,
        noise_scale=noise_scale,
        preconditioner=preconditioner,
        with_norms=with_norms,
    )
