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

    baoab (underdamped Langevin, Leimkuhler–Matthews 2013), velocity v, friction ξ, h = √ε:
        v ← v − h·d;  w ← w + (h/2)·v;  v ← c·v + √(1 − c²)·σ·ξ_{t+1};  w ← w + (h/2)·v,
        c = exp(−ξh)

(the B A O A B splitting with the closing half-kick of one step and the opening half-kick of the
next merged, as both use the gradient at the same point; one gradient per step). Here w' =
w − (ε/2)(1 + c)·d + (h/2)((1 + c)·v + √(1 − c²)·σ·ξ_{t+1}); with c = 0 (ξ = ∞) that is the LM
step with v = ξ_t, so LM is BAOAB's infinite-friction limit, and ``SGLDState.noise`` holds v.
Like LM it is exact for Gaussian targets. What it changes is the slow directions: a direction of
curvature k relaxes at rate ≈ k/2 per unit of ε under LM, 2/(εk) steps, but with momentum and
ξ = 2√k (critical damping) in ≈ 1/(h·√k) = 1/√(εk) steps (``relaxation_steps``): where ε is set
by a stiffest curvature κ ≫ k, √(κ/k) instead of κ/k steps. Minibatch noise heats it more: the
velocity integrates the gradient noise over ≈ 1/(ξh) steps, so the temperature excess
ε·nβ²·Var(ĝ)/4 of LM is multiplied by 1 + 4c²/(1 − c²) (``noise_heating``).

Preconditioned (``preconditioner`` = S = M^{1/2}, a fixed symmetric positive-definite [D, D]
matrix, shared by the chains): with M = S·S,

    w' = w − (ε/2)·M·d + √ε·σ·S·η,   η = ξ_{t+1} (euler) or (ξ_t + ξ_{t+1})/2 (lm)

computed as w' = w + (−(ε/2)·S·d + √ε·σ·η)·S (two matmuls per step; S is symmetric). In
z = S⁻¹w this is exactly the unpreconditioned step for the potential z ↦ U(Sz), whose gradient is
S·∇U: the target is unchanged, and both integrators keep their properties in z (LM stays exact
for Gaussian targets). ``drift_sq``/``noise_sq`` are measured in z.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor

from numeric.hessian.lowrank import LowRankRoot
from numeric.options import Integrator


class GradientEval(NamedTuple):
    """What a gradient estimator returns at positions [C, D]."""

    loss: Tensor  # [C] minibatch loss L_B(w) of each chain
    ref_loss: Tensor  # [C] L_B(w*) on the same minibatch (0 when there is no data)
    grad: Tensor  # [C, D] unbiased estimate of ∇L(w)
    # [C] ℓ, the first-order minibatch noise of L_B(w) − L_B(w*) about the control variate's
    # centre (gradients.batch_noise), which λ̂'s observable regresses out; else None
    linear: Tensor | None = None


class SGLDState(NamedTuple):
    position: Tensor  # [C, D]
    # [C, D] the last standard-normal draw (LM), or the velocity v (BAOAB; for LM that draw is
    # the velocity of BAOAB's infinite-friction limit)
    noise: Tensor


class SGLDInfo(NamedTuple):
    loss: Tensor  # [C] L_B(w_t) at the position before the step
    ref_loss: Tensor  # [C] L_B(w*) on the same minibatch
    drift_sq: Tensor  # [C] ‖(ε/2)·d‖²
    noise_sq: Tensor  # [C] ‖noise increment‖²
    drift: Tensor  # [C, D] d = nβ·ĝ + γ(w − w*) + αw, the estimate of ∇U(w_t) the step used
    linear: Tensor | None = None  # [C] GradientEval.linear at w_t (None where not computed)


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

    Python-float terms that are 0 are skipped, and a γ of 1.0 is not multiplied (x·1 = x
    exactly); tensor coefficients are always applied. The sums are taken in place on the fresh
    nβ·ĝ: the same arithmetic in the same order, without a new [C, D] allocation per term (on
    the CPU each one above 32 MB is a fresh mapping whose pages fault in on the first pass).
    """
    d = grad * nbeta
    if isinstance(gamma, Tensor) or gamma != 0.0:
        pull = position - center
        if isinstance(gamma, Tensor) or gamma != 1.0:
            pull.mul_(gamma)
        d.add_(pull)
    if isinstance(prior_precision, Tensor) or prior_precision != 0.0:
        d.add_(prior_precision * position)
    return d


def velocity_decay(step_size: float | Tensor, friction: float | Tensor) -> float | Tensor:
    """c = exp(−ξ·√ε), the factor BAOAB's O-step keeps of the velocity (0 for ξ = ∞)."""
    if isinstance(step_size, Tensor) or isinstance(friction, Tensor):
        return torch.exp(-torch.as_tensor(friction) * torch.as_tensor(step_size).sqrt())
    return math.exp(-friction * math.sqrt(step_size)) if math.isfinite(friction) else 0.0


def noise_heating(step_size: float, integrator: Integrator, friction: float) -> float:
    """How many times LM's minibatch-noise temperature excess ε·nβ²·Var(ĝ)/4 an integrator has:
    1 for LM and Euler, 1 + 4c²/(1 − c²) for BAOAB (c = ``velocity_decay``)."""
    if integrator != "baoab":
        return 1.0
    c = float(velocity_decay(step_size, friction))
    return 1.0 + 4.0 * c * c / (1.0 - c * c) if c < 1.0 else math.inf


def friction_for_heating(excess: float, step_size: float, tol: float) -> float:
    """The least friction ξ whose BAOAB heating ``excess``·``noise_heating`` stays ≤ ``tol``,
    given LM's excess ε·nβ²·Var(ĝ)/4: 0 when the noise is negligible, ∞ (LM itself) when even LM
    exceeds ``tol``. From 4c²/(1 − c²) ≤ F = tol/excess − 1: c ≤ √(F/(F + 4)), ξ = −ln c/√ε."""
    if not (excess > 0 and math.isfinite(excess)):
        return 0.0 if excess == 0 else math.inf
    if excess >= tol:
        return math.inf
    f = tol / excess - 1.0
    return -0.5 * math.log(f / (f + 4.0)) / math.sqrt(step_size)


def relaxation_steps(step_size: float, kappa_min: float, friction: float = math.inf) -> float:
    """e-folding time in steps of the mean along a direction of (preconditioned) curvature κ.

    LM (ξ = ∞): 2/(ε·κ). BAOAB (``numeric.sampler.sgld``), c = exp(−ξ√ε): on U = κz²/2 the mean of
    (z, v) is multiplied each step by [[1 − (ε/2)(1 + c)κ, (√ε/2)(1 + c)], [−c√εκ, c]], whose
    determinant is c and trace (1 + c)(1 − εκ/2); the time is −1/ln|μ| for its larger
    eigenvalue μ (≈ 1/√(εκ) at critical damping ξ = 2√κ, and 2/(εκ) again at c = 0).
    """
    if not (step_size > 0 and kappa_min > 0):
        return math.inf
    if not math.isfinite(friction):
        return 2.0 / (step_size * kappa_min)
    c = math.exp(-friction * math.sqrt(step_size))
    trace = (1.0 + c) * (1.0 - 0.5 * step_size * kappa_min)
    disc = 0.25 * trace * trace - c
    mu = 0.5 * abs(trace) + math.sqrt(disc) if disc >= 0 else math.sqrt(c)
    return math.inf if mu >= 1.0 else -1.0 / math.log(mu)


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
    friction: float | Tensor = math.inf,
    noise_scale: float = 1.0,
    preconditioner: Tensor | LowRankRoot | None = None,
    with_norms: bool = False,
) -> tuple[SGLDState, SGLDInfo]:
    """The SGLD update given the gradient estimate ``ev`` at ``state`` and a fresh draw ``xi``.

    Pure (no random numbers drawn here): ``step`` draws them, ``numeric.sampler.kernel`` pre-draws a
    block of them. Scalars may be Python floats or 0-d tensors (the compiled kernel passes
    tensors so that new values do not recompile). ``friction`` ξ is used by BAOAB only.
    """
    w = state.position
    with torch.no_grad():
        d = drift(
            w, ev.grad, nbeta=nbeta, gamma=gamma, center=center, prior_precision=prior_precision
        )
        scale = (step_size**0.5) * noise_scale
        new_noise = xi
        c: float | Tensor = 0.0  # the velocity BAOAB keeps; LM and Euler keep none
        # temporaries are updated in place (``drift``): the same arithmetic, fewer allocations
        if integrator == "lm":
            inc = (state.noise + xi).mul_(0.5 * scale)
        elif integrator == "euler":
            inc = xi * scale
        elif integrator == "baoab":
            h = step_size**0.5
            c = velocity_decay(step_size, friction)
            kick = xi * ((1.0 - c * c) ** 0.5 * noise_scale)  # √(1 − c²)·σ·ξ, used twice
            inc = (state.noise * (1.0 + c)).add_(kick).mul_(0.5 * h)
        else:
            raise ValueError(f"unknown integrator {integrator!r}")
        # −(ε/2)·d, plus BAOAB's second half-step along the kicked velocity, −c·(ε/2)·d
        k = -0.5 * step_size * (1.0 + c)
        # dz = S·d, the gradient in z; the step (k·dz + inc)·S
        if isinstance(preconditioner, LowRankRoot):  # both products at once
            dz, step_w = preconditioner.drift_and_step(d, inc, k)
            new, move = w + step_w, dz * k
        elif preconditioner is None:
            dz = d
            move = dz * k
            new = (w + move).add_(inc)
        else:
            dz = d @ preconditioner
            move = dz * k
            new = w + (move + inc) @ preconditioner
        if integrator == "baoab":
            new_noise = (state.noise - dz * h).mul_(c).add_(kick)
        if with_norms:  # move and inc are not needed after this
            drift_sq, noise_sq = move.square_().sum(-1), inc.square_().sum(-1)
        else:
            drift_sq = noise_sq = ev.loss.new_zeros(())
    return SGLDState(new, new_noise), SGLDInfo(
        ev.loss, ev.ref_loss, drift_sq, noise_sq, d, ev.linear
    )


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
    friction: float = math.inf,
    noise_scale: float = 1.0,
    preconditioner: Tensor | LowRankRoot | None = None,
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
        friction=friction,
        noise_scale=noise_scale,
        preconditioner=preconditioner,
        with_norms=with_norms,
    )
