r"""The potential estimator's target and transitions (exact gradients).

``PotentialTarget``: U(w) = nβ·(K(w) − K(w*)) + (γ/2)‖w − w*‖² + (α/2)‖w‖² − Σ_j h_j·log|w_j − w*_j|
(the last term for a prior Π|w_j − w*_j|^(h_j), when given) with its gradient, the
Hessian of K as an HVP (the curvature rule) and ∇²U by differences (the metric). The
transitions are per-step functions ``(state, ε) -> (state, K(w), K(w*))`` for
``chains.stepwise_block``:

* ``MalaTransition``: one MALA step (``numeric.sampler.mala``);
* ``MetricTransition``: a MALA step followed by a position-dependent one (``numeric.sampler.mmala``:
  metric |∇²U(w)| floored at γ + α) with ε' drawn per chain log-uniformly from
  ``METRIC_STEP_RANGE`` (near the crossing the Hessian under-states how fast U rises, and no single
  ε' fits both there and far out). Both steps leave the target invariant, so their composition
  does. The MALA proposal's ∇²U is kept for the metric at the new point.
* ``UnadjustedTransition``: unadjusted Langevin (``numeric.sampler.sgld``), the step norms recorded
  every 10th step while ``recording``.

``AcceptanceMeter`` keeps the last acceptance (dual averaging reads it) and, while ``recording``,
the sums over the draws.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from numeric.options import Integrator
from numeric.sampler import mala, mmala, sgld
from numeric.sampler.chains import StepNorms

Potential = Callable[[Tensor], Tensor]
METRIC_STEP_RANGE = (0.02, 2.0)  # ε' of the position-dependent step, drawn log-uniformly


@dataclass(frozen=True)
class PotentialTarget:
    """exp(−U) for an analytic K (module docstring); ``floor`` = γ + α."""

    K: Potential
    w_star: Tensor  # [D]
    k_star: Tensor  # K(w*), 0-d
    nbeta: float
    gamma: float
    alpha: float
    prior: Tensor | None = None  # [D] exponents h of φ(w) = Π |w_j − w*_j|^(h_j); None: flat

    @property
    def floor(self) -> float:
        return self.gamma + self.alpha

    def u_and_grad(self, w: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """(U, ∇U, K) at positions [C, D]."""
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            k = self.K(ww)
            u = self.nbeta * (k - self.k_star)
            if self.gamma:
                u = u + 0.5 * self.gamma * (ww - self.w_star).square().sum(-1)
            if self.alpha:
                u = u + 0.5 * self.alpha * ww.square().sum(-1)
            if self.prior is not None:  # −log φ(w); +∞ at w_j = w*_j where h_j > 0
                u = u - (self.prior * (ww - self.w_star).abs().log()).sum(-1)
            (g,) = torch.autograd.grad(u.sum(), ww)
        return u.detach(), g, k.detach()

    @property
    def u_grad_hessian(self) -> mmala.PotentialFn:
        """(U, ∇U, K, ∇²U) at positions [C, D] (∇²U by central differences of ∇U)."""
        return mmala.with_difference_hessian(self.u_and_grad)

    def hvp_at(self, w: Tensor, difference: bool = False) -> Callable[[Tensor], Tensor]:
        """v ↦ ∇²K(w)·v at positions [C, D] (zero where K does not depend on w); by central
        differences of ∇K along v with ``difference``."""
        if difference:
            scale = torch.finfo(w.dtype).eps ** (1 / 3) * (1 + w.abs().amax(-1, keepdim=True))

            def diff(v: Tensor) -> Tensor:
                h = scale / v.norm(dim=-1, keepdim=True).clamp_min(1e-30)
                return (self._grad_k(w + h * v) - self._grad_k(w - h * v)) / (2 * h)

            return diff
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.K(ww).sum(), ww, create_graph=True)

        def hvp(v: Tensor) -> Tensor:
            if not g.requires_grad:  # ∇K does not depend on w: a zero Hessian
                return torch.zeros_like(v)
            with torch.enable_grad():
                (hv,) = torch.autograd.grad(
                    g, ww, grad_outputs=v, retain_graph=True, allow_unused=True
                )
            return torch.zeros_like(v) if hv is None else hv.detach()

        return hvp

    def _grad_k(self, w: Tensor) -> Tensor:
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.K(ww).sum(), ww, allow_unused=True)
        return torch.zeros_like(w) if g is None else g

    def gradient(self, w: Tensor, gen: torch.Generator) -> sgld.GradientEval:
        """∇K exactly, as the gradient estimate of ``sgld.step`` (``gen`` unused)."""
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            k = self.K(ww)
            (gr,) = torch.autograd.grad(k.sum(), ww)
        return sgld.GradientEval(k.detach(), self.k_star.expand(w.shape[0]), gr)


@dataclass
class AcceptanceMeter:
    """The last MALA acceptance [C], and (while ``recording``) its sums over the steps and the
    position-dependent steps' sums."""

    total: Tensor  # [C]
    metric_total: Tensor  # [C]
    nonfinite: Tensor  # [C] proposals rejected for a NaN or inf U (or ∇U)
    last: Tensor | None = None
    count: int = 0
    recording: bool = False

    @staticmethod
    def zeros(like: Tensor) -> AcceptanceMeter:
        c = like.shape[0]
        return AcceptanceMeter(like.new_zeros(c), like.new_zeros(c), like.new_zeros(c))

    def note_nonfinite(self, info: Any) -> None:
        if self.recording and info.nonfinite is not None:
            self.nonfinite += info.nonfinite

    def nonfinite_fraction(self, alive: Tensor, per_step: int) -> float:
        """The share of recorded proposals (``per_step`` a step) that were not finite."""
        steps = max(self.count, 1) * per_step
        return float(self.nonfinite[alive].sum()) / (steps * max(int(alive.sum()), 1))

    def rates(self, alive: Tensor) -> tuple[float, float]:
        """Mean acceptance over the recorded steps and live chains: (MALA, position-dependent)."""
        n = max(self.count, 1)
        return (
            float(self.total[alive].mean()) / n,
            float(self.metric_total[alive].mean()) / n,
        )


class MalaTransition:
    """One MALA step per call (module docstring)."""

    def __init__(self, target: PotentialTarget, gen: torch.Generator, meter: AcceptanceMeter):
        self.target, self.gen, self.meter = target, gen, meter
        self.ref = target.k_star.expand(meter.total.shape[0])

    def mala(self, state: mala.MALAState, eps: float, fn: mala.PotentialFn) -> tuple:
        new, info = mala.step(state, self.gen, fn, step_size=eps)
        meter = self.meter
        meter.last = info.acceptance
        if meter.recording:
            meter.total += info.acceptance
            meter.count += 1
        meter.note_nonfinite(info)
        return new, info

    def __call__(self, state: Any, eps: float) -> tuple[Any, Tensor, Tensor]:
        new, _ = self.mala(state, eps, self.target.u_and_grad)
        return new, new.loss, self.ref


class MetricTransition(MalaTransition):
    """A MALA step, then a position-dependent one; the state carries the metric at w."""

    def __call__(self, state: Any, eps: float) -> tuple[Any, Tensor, Tensor]:
        target, floor = self.target, self.target.floor
        if not isinstance(state, mmala.MMALAState):
            state = mmala.init(state.position, target.u_grad_hessian, floor)
        new, info = self.mala(mala.MALAState(*state[:4]), eps, target.u_grad_hessian)
        vecs, vals = mmala.softabs_metric(info.proposal_extra[0], floor)
        acc = info.accepted
        ms = mmala.MMALAState(
            *new,
            torch.where(acc[:, None, None], vecs, state.vecs),
            torch.where(acc[:, None], vals, state.vals),
        )
        w = new.position
        lo, hi = METRIC_STEP_RANGE
        eps_m = lo * (hi / lo) ** torch.rand(
            w.shape[0], generator=self.gen, device=w.device, dtype=w.dtype
        )
        ms, m_info = mmala.step(ms, self.gen, target.u_grad_hessian, step_size=eps_m, floor=floor)
        if self.meter.recording:
            self.meter.metric_total += m_info.acceptance
        self.meter.note_nonfinite(m_info)
        return ms, ms.loss, self.ref


@dataclass
class UnadjustedTransition:
    """One unadjusted Langevin step per call; step norms every ``every``-th step (counted from
    the first) while ``recording``."""

    target: PotentialTarget
    gen: torch.Generator
    integrator: Integrator
    norms: StepNorms
    every: int = 10
    count: int = 0
    recording: bool = False
    _center: Tensor = field(init=False)

    def __post_init__(self) -> None:
        self._center = self.target.w_star

    def __call__(self, state: sgld.SGLDState, eps: float) -> tuple[Any, Tensor, Tensor]:
        self.count += 1
        with_norms = self.recording and self.count % self.every == 0
        t = self.target
        new, info = sgld.step(
            state,
            self.gen,
            t.gradient,
            step_size=eps,
            nbeta=t.nbeta,
            gamma=t.gamma,
            center=self._center,
            prior_precision=t.alpha,
            integrator=self.integrator,
            with_norms=with_norms,
        )
        if with_norms:
            self.norms.add(info.drift_sq, info.noise_sq, 1)
        return new, info.loss, info.ref_loss
