r"""The heating restart: BAOAB run again with more friction where the draws ran hotter than the
warm-up measured.

BAOAB's velocity integrates the minibatch noise, so its chains run hotter than LM's by
``sgld.noise_heating`` (≈ 2/(ξ·√ε)); the warm-up raises the friction ξ until the heating of λ̂'s
directions where the chains are is at most 1 + ``warmup.friction.HEAT_TOL`` (``raise_friction``,
``minibatch_heating``). But the warm-up ends before the chains have spread: with the
control variate centred at w* the noise grows with ‖w − w*‖, and along flat directions the
chains go on spreading through the draws. On a 339-parameter deep linear network at its true
parameter (7-7-13-7-9-5, n = 10⁴, γ = 1, BAOAB) the warm-up measured under 1% and kept ξ = 2,
the heating where the draws ended was 1.9% (4.8% in a run with another ε), and λ̂ read
15.3–16.5 against 13.80 by Metropolis-adjusted HMC on the same L_n: far more than the heating
itself predicts. With ξ = 5 λ̂ was 13.5, and full-batch gradients at ξ = 2 gave 13.5; with the
restart (to ξ = 3.85) 13.31 ± 0.14 (``benchmarks/RESULTS.md``).

So where the heating at the end of the draws exceeds 1 + ``RESTART_TOL`` and the friction was
the rule's (BAOAB, ``friction`` not given), the run starts again from w* (same seed) with the
least friction ``min_friction`` that keeps that heating within ``HEAT_TOL``
(``sgld.friction_for_heating``; ∞, BAOAB's LM limit, when even LM heats more), once. The
``heating_restart`` finding says so. The warm-up may raise ξ further.
"""

from __future__ import annotations

import dataclasses
import math

from numeric.budget import Clock
from numeric.options import LLCOptions
from numeric.plan.llc_plan import LLCPlan, rule_friction
from numeric.run.attempt import Attempt
from numeric.run.one_run import Completed
from numeric.sampler import sgld
from numeric.types import Draws, Finding, Warmup
from numeric.warmup.friction import HEAT_TOL

RESTART_TOL = HEAT_TOL  # heating at the end of the draws that restarts the run: the warm-up's own


def cooled(attempt: Attempt, ran: Completed, clock: Clock) -> Attempt | None:
    """The policy after completed draws (``numeric.run.attempt``): the attempt again from w* with
    the friction their heating asks for (``cooler_options``), once, where Ctrl-C did not end them
    and at least half of a time budget is left (``Clock.can_rerun``); None otherwise."""
    if attempt.cooled or ran.asked_to_stop or not clock.can_rerun():
        return None
    cooler = cooler_options(attempt.opts, ran.plan, ran.warm, ran.drawn)
    if cooler is None:
        return None
    assert attempt.plan is not None  # a run was made: its attempt was planned
    return dataclasses.replace(
        attempt,
        opts=cooler,
        plan=cooled_plan(attempt.plan, cooler),
        cooled=(heating_finding(ran.warm, ran.drawn, cooler),),
    )


def cooler_options(
    opts: LLCOptions, plan: LLCPlan, warm: Warmup, drawn: Draws
) -> LLCOptions | None:
    """The options of a run with the friction the heating at the end of ``drawn`` asks for, or
    None when no restart is due (module docstring)."""
    heat, t = drawn.inflation, warm.tuning
    if not (plan.raises_friction and math.isfinite(heat) and heat > 1.0 + RESTART_TOL):
        return None
    factor = sgld.noise_heating(t.step_size, "baoab", t.friction)
    if not (math.isfinite(factor) and factor > 0):
        return None
    need = sgld.friction_for_heating((heat - 1.0) / factor, t.step_size, HEAT_TOL)
    if not need > t.friction:
        return None
    return dataclasses.replace(opts, min_friction=max(opts.min_friction, need))


def cooled_plan(plan: LLCPlan, opts: LLCOptions) -> LLCPlan:
    """``plan`` with BAOAB's friction at least ``opts.min_friction`` (an LM plan is switched to
    BAOAB later, by ``numeric.plan.integrator_switch``, which reads the options itself)."""
    if plan.integrator != "baoab" or plan.friction_fixed:
        return plan
    return dataclasses.replace(plan, friction=rule_friction(plan.friction, opts))


def heating_finding(warm: Warmup, drawn: Draws, after: LLCOptions) -> Finding:
    """What the heating restart says: the heating found, the friction that had it, the new one."""
    t = warm.tuning
    return Finding(
        "heating_restart",
        "info",
        f"minibatch noise heated λ̂'s directions by {100 * (drawn.inflation - 1):.1f}% where the "
        f"draws ended (BAOAB, friction ξ = {t.friction:.3g}, ε = {t.step_size:.3g}; the warm-up "
        f"had measured it before the chains spread), which biases λ̂ upwards; the run was "
        f"restarted from w* with ξ ≥ {after.min_friction:.3g}",
        {
            "inflation": drawn.inflation,
            "friction": t.friction,
            "step_size": t.step_size,
            "min_friction": after.min_friction,
        },
    )
