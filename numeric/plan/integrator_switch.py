r"""Momentum near a minimum: the switch from LM to BAOAB after the step size is known.

``integrator="auto"`` starts near a minimum with the Leimkuhler–Matthews integrator (``llc_plan``).
After adaptation (``warmup.step_size.adapt_step_size``) ε = step_scale/κ is known, κ the stiffest
(preconditioned) curvature where the chains went. The slowest relevant direction, of
(preconditioned) curvature κ_min, relaxes in 2/(ε·κ_min) = 2κ/(step_scale·κ_min) LM steps, but
in ≈ 1/√(ε·κ_min) BAOAB steps at critical damping ξ = 2√κ_min (``sgld.relaxation_steps``). When
κ ≥ ``MOMENTUM_RATIO``·κ_min, so that BAOAB is at least 4× faster (with step_scale = 0.25), the
rest of the run uses BAOAB with that friction, raised during burn-in until the minibatch heating
is at most 1% (``warmup.friction.raise_friction``; LM's limit ξ = ∞ when even that is too much).

That happens where no fixed metric fits: without a preconditioner when the Hessian at w* is
ill-conditioned (a 2,100-parameter quadratic with curvatures over two decades: relaxation 314
LM steps, 12.5 BAOAB steps; 4 s instead of 17 s with the slowest direction mixed), and with one
where the chains go where the curvature is far from the Hessian at w* (a deep linear network at
its true parameter, whose flat directions are quartic: the preconditioned curvature was 720 where
it is 1 at w*). Where κ/κ_min is small (a well-conditioned or well-preconditioned minimum) LM
stays: it is exact for Gaussian directions and heats less with minibatch noise.
"""

from __future__ import annotations

import dataclasses
import math

from numeric.options import LLCOptions
from numeric.plan.llc_plan import LLCPlan, rule_friction
from numeric.types import Tuning

MOMENTUM_RATIO = 16.0


def momentum_plan(plan: LLCPlan, tuning: Tuning, opts: LLCOptions) -> LLCPlan | None:
    """The plan with BAOAB at critical damping of the slowest relevant direction when the rule
    of the module docstring applies (``integrator="auto"``, LM chosen, a slowest relevant
    direction, ε chosen automatically, κ ≥ ``MOMENTUM_RATIO``·κ_min); None otherwise."""
    kappa_min = plan.kappa_min
    if not (
        opts.integrator == "auto"
        and plan.integrator == "lm"
        and opts.step_size is None
        and kappa_min > 0
        and math.isfinite(tuning.kappa)
        and tuning.kappa >= MOMENTUM_RATIO * kappa_min
    ):
        return None
    friction = rule_friction(2.0 * math.sqrt(kappa_min), opts)
    spec = dataclasses.replace(plan.kernel_spec, integrator="baoab")
    return dataclasses.replace(plan, integrator="baoab", friction=friction, kernel_spec=spec)
