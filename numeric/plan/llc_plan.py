r"""Everything ``estimate_llc`` decides before its first step (pure: no draws from the run's
generator). H(w*) and the preconditioner M come first (``numeric.plan.preconditioner``); the other
rules, each recorded in ``LLCEstimate.config``:

* **Slowest relevant direction** (when w* is a minimum): the eigenvector of H (above 2048
  parameters, the Ritz vector) with the smallest nβ·h ≥ γ + α; its preconditioned curvature κ_min
  (1 with the dense preconditioner or where the low-rank one whitens it, (nβ·h + γ + α)/κ_r where
  it does not, nβ·h + γ + α without) sets the relaxation time t (``sgld.relaxation_steps``:
  2/(ε·κ_min) steps under LM). Where a trained network's spectrum is a continuum across the
  threshold, that Ritz value stands for a cluster: a fair estimate of the softest relevant
  curvature, its vector a slow observable. The ``NUM_SLOW`` slowest relevant directions, scaled to unit
  variance, are the ``probe`` on which the drift is projected (the slow-mixing diagnostic).
* **Flat directions**: where no direction has a Hessian rule (w* is not a minimum, or every nβ·h
  is below γ + α, as at a singular w* whose Hessian is 0) the chains spread from w* along
  directions held only by the localisation, (preconditioned) curvature κ_flat = γ + α (1 with the
  preconditioner); the positions ‖w − w*‖² are then tracked (``track_positions``). λ̂ depends on
  that spread: on RRR M = N = H = 2 at the noisy origin runs of ~700 LM steps gave 0.87–1.50, an
  exact sampler 1.11.
* **Integrator** ``"auto"``: ``"lm"`` (Leimkuhler–Matthews; exact for Gaussian directions) near a
  minimum with a Hessian rule, switched to BAOAB after adaptation where ε turns out to outpace the
  slowest relevant direction by 16× or more (``numeric.plan.integrator_switch``); ``"baoab"``
  (underdamped Langevin) where the chains spread along flat directions, with friction ξ = 2√κ_flat
  (critical damping of the directions held by γ alone): there ε is set by the stiffest curvature the
  chains reach and the flat directions relax in ≈ 1/√(ε·κ_flat) steps instead of 2/(ε·κ_flat). The
  friction is raised during warm-up (``warmup.friction.raise_friction``). Measured: on y = x·w1·w2
  at the noisy saddle (n = 2000) standard errors 2.5× smaller in the same time with z-scores against
  quadrature of sd 0.94 (LM: 7 of 8 runs with ‖w − w*‖² unmixed); on RRR M = N = H = 2 at the origin
  with y = 0 (n = 10⁴) ξ rose to 11.7 (relaxation ≈ 1,700 steps instead of 41,000) and the same 50 s
  gave 1.447 ± 0.013 with ‖w − w*‖² at ESS 105 instead of 1.449 ± 0.033 at ESS 10. With noisy
  responses (RRR at the noisy origin) the gradient noise keeps ξ near LM's limit and both are slow.
* **Anchors** (``anchor_every``, ``gradients``): on by default only where the chains spread far
  from w* (flat directions, control-variate gradient): every ⌈n/B⌉ steps (an epoch, rounded up to
  a multiple of 8; with BAOAB every ⌈n/3B⌉, as often as the full-data gradient costs no more than
  the steps' own minibatch work, back to an epoch if ξ reaches ∞) each chain's position becomes
  its anchor. Near a minimum with a Hessian rule the centre stays at w*: as good there, and
  cheaper (+45% time on a quadratic network in the report, with no gain).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torch import Tensor

from numeric.backend.torch_limits import raise_if_limitation
from numeric.hessian.dense import HessianInfo
from numeric.hessian.lowrank import LowRankRoot
from numeric.hessian.spectrum import NUM_SLOW, SpectrumInfo
from numeric.inputs.problem import Problem
from numeric.options import Integrator, LLCOptions
from numeric.plan.preconditioner import (
    flat_curvature,
    hessian_rule,
    lowest_eigenvalue,
    slowest_relevant_curvature,
)
from numeric.types import KernelSpec

STACKED_NUMBERS = 2**22  # C·D·B up to which w and w* go through one vmapped call (eager)


@dataclass(frozen=True)
class LLCPlan:
    """The decisions of the module docstring, for one problem and its options."""

    hessian: HessianInfo | SpectrumInfo  # H(w*): dense eigh (D ≤ 2048), else its Ritz pairs
    pre_m: Tensor | LowRankRoot | None  # M, or None
    pre_s: Tensor | LowRankRoot | None  # M^{1/2}, or None
    probe: Tensor  # [D, j] the slowest relevant directions / √curvature (j may be 0)
    kappa_min: float  # (preconditioned) curvature of the slowest relevant one; nan: none
    kappa_flat: float  # (preconditioned) curvature of the directions held by γ + α alone
    track_positions: bool  # no Hessian rule: the chains spread; ‖w − w*‖² measures their mixing
    integrator: Integrator
    friction: float  # ξ₀ (∞ unless BAOAB)
    friction_fixed: bool  # given by the user: never raised
    anchor_every: int  # 0: the control variate stays centred at w*
    anchors_auto: bool  # chosen by the rule (may fall back to an epoch when ξ reaches ∞)
    epoch: int  # ⌈n/B⌉ steps, rounded up to a multiple of 8
    kernel_spec: KernelSpec
    preconditioner: str = "none"  # "hessian" (dense), "lowrank" or "none"

    def describe_preconditioner(self) -> str:
        """The preconditioner in the step-size rule's words: none, hessian, or the low-rank one
        with how many directions it whitens and the scale of the rest."""
        if self.preconditioner != "lowrank" or not isinstance(self.pre_s, LowRankRoot):
            return self.preconditioner
        info = self.hessian
        steps = info.products if isinstance(info, SpectrumInfo) else 0
        return (
            f"lowrank: {self.pre_s.rank} Hessian directions whitened (Lanczos, {steps} "
            "Hessian-vector products at w*), the rest scaled by 1/κ_r, "
            f"κ_r = {info.rest_curvature():.4g}"
        )

    def downhill_at_w_star(self) -> float:
        """nβ·h_min where w* is not a minimum (nβ·h_min < −(γ + α): the localised potential
        curves down at w*), nan otherwise."""
        curvature = self.hessian.nbeta * lowest_eigenvalue(self.hessian)
        return curvature if curvature < -self.hessian.floor else math.nan

    def stiffest_at_w_star(self) -> float:
        """The largest (preconditioned) curvature of the potential at w*: 1 with a
        preconditioner (it whitens the stiffest directions), nβ·h_max + c without."""
        return 1.0 if self.pre_s is not None else self.stiffest_curvature()

    def stiffest_curvature(self) -> float:
        """nβ·h_max + c, the potential's largest curvature at w* (no preconditioner applied)."""
        info = self.hessian
        h_max = info.highest if isinstance(info, SpectrumInfo) else float(info.eigvals.max())
        return info.nbeta * max(h_max, 0.0) + info.floor

    @property
    def raises_friction(self) -> bool:
        """BAOAB with the default friction: raised during burn-in while the heating is high."""
        return self.integrator == "baoab" and not self.friction_fixed


def slowest_curvature(kappa_min: float, kappa_flat: float, track_positions: bool) -> float:
    """The curvature BAOAB's default friction damps critically: the slowest relevant direction's,
    or the flat directions' where the positions are tracked (or no direction is relevant)."""
    return kappa_min if kappa_min > 0 and not track_positions else kappa_flat


def critical_friction(kappa_min: float, kappa_flat: float, track_positions: bool) -> float:
    """ξ₀ = 2√κ of ``slowest_curvature`` (2 where that is not positive)."""
    slowest = slowest_curvature(kappa_min, kappa_flat, track_positions)
    return 2.0 * math.sqrt(slowest) if slowest > 0 else 2.0


def rule_friction(critical: float, opts: LLCOptions) -> float:
    """BAOAB's friction: the given one, else ``critical`` damping raised to the heating
    restart's least friction (``opts.min_friction``, ``numeric.run.heating_restart``)."""
    if opts.friction is not None:
        return float(opts.friction)
    return max(critical, opts.min_friction)


def make_plan(problem: Problem, opts: LLCOptions) -> LLCPlan:
    """The plan for ``problem`` under ``opts`` (module docstring)."""
    d, c, bsz = problem.dim, opts.num_chains, problem.batch_size
    try:
        hinfo, slow_info, kind = hessian_rule(problem, opts)
    except RuntimeError as exc:  # a torch operation without a second derivative, named
        raise_if_limitation(exc)
        raise
    pre_m, pre_s = hinfo.preconditioner() if kind != "none" else (None, None)
    slow_u, slow_k = slow_info.slow_directions(NUM_SLOW) if slow_info else (None, None)
    if slow_u is not None and slow_u.shape[1] > 0:
        probe = slow_u * slow_k.rsqrt()  # u_j/√(nβh_j + c): unit variance if U is quadratic
        kappa_min = slowest_relevant_curvature(hinfo, kind, slow_k)
    else:
        probe = problem.w_star.new_zeros(d, 0)
        kappa_min = math.nan
    # no direction has a Hessian rule (w* not a minimum, or every nβ·h < c): the chains spread
    track_positions = probe.shape[1] == 0
    kappa_flat = flat_curvature(hinfo, kind, opts.gamma + opts.prior_precision)
    integrator = opts.integrator
    if integrator == "auto":  # momentum where the slow directions are held by γ alone (and
        # where the step outpaces the slowest relevant direction:
        # ``numeric.plan.integrator_switch``)
        integrator = "baoab" if track_positions else "lm"
    friction = math.inf  # LM is BAOAB's ξ = ∞
    if integrator == "baoab":  # default: critical damping of the slowest directions
        friction = rule_friction(critical_friction(kappa_min, kappa_flat, track_positions), opts)
    # full batch: ĝ = ∇L_n(w) exactly, which the control variate would compute twice
    cv = opts.gradient == "control_variate" and not problem.full_batch
    epoch = 8 * math.ceil(problem.n / bsz / 8)
    anchors_auto = opts.anchor_every is None and cv and track_positions
    anchor_every = opts.anchor_every
    if anchor_every is None:
        often = 8 * math.ceil(problem.n / (3 * bsz) / 8)
        anchor_every = (often if integrator == "baoab" else epoch) if anchors_auto else 0
    kspec = KernelSpec(
        control_variate=cv,
        integrator=integrator,
        stacked=c * d * bsz <= STACKED_NUMBERS,  # small models are dispatch-bound: one call
        anchored=anchor_every > 0,
        full_batch=problem.full_batch,
        chain_block=opts.chain_block,
    )
    return LLCPlan(
        hinfo,
        pre_m,
        pre_s,
        probe,
        kappa_min,
        kappa_flat,
        track_positions,
        integrator,
        friction,
        opts.friction is not None,
        anchor_every,
        anchors_auto,
        epoch,
        kspec,
        kind,
    )
