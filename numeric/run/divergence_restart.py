r"""Restarts of the data estimator after a divergence, and the error when they run out.

* **Restarts** (``can_restart``): where a chain diverges although ε was chosen automatically (the
  curvature measured where the chains were is not the largest they reach: products of powers at
  points on coordinate hyperplanes, y = x·w1·w2³ at the origin), the run starts again from w*
  with ``step_scale`` multiplied by ``RESTART_FACTOR`` and ε at most ``RESTART_FACTOR`` times
  the diverged run's (``restart_options``), at most ``MAX_RESTARTS`` times; the
  ``divergence_restart`` finding says so. The cap matters: κ is measured along a step of the size
  it sets (``warmup.curvature.consistent_curvature``), so where the curvature grows away from w* a
  smaller ``step_scale`` also measures a smaller κ, and on a 334-parameter deep linear network at
  γ = 1 three restarts had cut ε 8× instead of 64× and all diverged (BAOAB, whose momentum carries
  the chains along the quartic flat directions). A given ``step_size`` is never changed.
* **The final error** (``final_divergence``): when the last restart diverges too, the error says
  that the step was already cut and names the remedy that works where the chains reach steep
  regions far from w* (deep linear networks at γ = 1: a larger γ; ``restarts_exhausted``). Where
  w* is not a minimum (nβ·h_min < −(γ + α), h_min the lowest eigenvalue of H = ∇²L_n(w*), a
  Ritz value above 2,048 parameters, which is never below the true one) the localised potential
  curves down at w* and the chains run away from it whatever the step: the error says that
  first, with nβ·h_min, instead of blaming the step (measured: L = mean (xᵀw − y)² − 10‖w‖² at
  w = 0 ran 4 × 20,000 steps and ended with advice about rescaling directions).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TypeVar

import torch

from numeric.budget import Clock
from numeric.errors import DivergenceError
from numeric.options import SamplerOptions
from numeric.plan.llc_plan import LLCPlan
from numeric.run.attempt import Attempt
from numeric.types import Finding

NARROW_RANGE = 1e-2  # (nβh_max + c)/c times ε_mach from which the dtype is named in the error
MAX_RESTARTS = 3  # runs restarted with a smaller step after a divergence (automatic ε only)
RESTART_FACTOR = 0.25  # step_scale (so ε) multiplied by this on each restart

O = TypeVar("O", bound=SamplerOptions)


def restarted(attempt: Attempt, err: DivergenceError, clock: Clock) -> Attempt | None:
    """The policy after a divergence (``numeric.run.attempt``): the attempt again from w* with
    the smaller ε of ``restart_options``, its plan kept, where the attempt is ``restartable``,
    ``can_restart`` allows it and time is left; None otherwise."""
    opts = attempt.opts
    if not (attempt.restartable and can_restart(opts, attempt.restarts) and clock.left() > 0):
        return None
    after = restart_options(opts, err)
    restarts = (*attempt.restarts, restart_finding(err, opts, after))
    return dataclasses.replace(attempt, opts=after, restarts=restarts)


def divergence_error(attempt: Attempt, err: DivergenceError) -> DivergenceError:
    """The error that ends the estimate where no attempt follows a divergence
    (``final_divergence`` with the attempt's restarts, γ and plan)."""
    assert attempt.plan is not None  # a run was made: its attempt was planned
    dtype = attempt.problem.w_star.dtype
    return final_divergence(err, attempt.restarts, attempt.opts.gamma, attempt.plan, dtype)


def can_restart(opts: SamplerOptions, restarts: Sequence[Finding]) -> bool:
    """A diverged run is restarted when ε was chosen automatically, the chains were to be
    checked (``on_divergence="raise"``), and fewer than ``MAX_RESTARTS`` restarts were made."""
    return opts.step_size is None and opts.on_divergence == "raise" and len(restarts) < MAX_RESTARTS


def restart_options(opts: O, err: DivergenceError) -> O:
    """The options of the run after ``err``: ``step_scale`` and the cap on ε both
    ``RESTART_FACTOR`` times the diverged run's (the cap only where that ε is known)."""
    cap = RESTART_FACTOR * err.step_size if math.isfinite(err.step_size) else math.inf
    return dataclasses.replace(
        opts,
        step_scale=opts.step_scale * RESTART_FACTOR,
        max_step_size=min(opts.max_step_size, cap),
    )


def restart_finding(err: DivergenceError, before: SamplerOptions, after: SamplerOptions) -> Finding:
    """What a restart says: which chain diverged where at which ε, and the smaller step that
    followed (``after``, from ``restart_options``)."""
    known = math.isfinite(err.step_size)
    eps = f"ε = {err.step_size:.3g}" if known else "ε = step_scale/κ"
    cap = f" and ε ≤ {after.max_step_size:.3g}" if math.isfinite(after.max_step_size) else ""
    return Finding(
        "divergence_restart",
        "info",
        f"chain {err.chain} diverged at step {err.step} with {eps} (step_scale = "
        f"{before.step_scale:g}; the curvature where the chains went exceeded the one measured); "
        f"the run was restarted from w* with step_scale = {after.step_scale:g}{cap}",
        {
            "chain": float(err.chain),
            "step": float(err.step),
            "step_scale": before.step_scale,
            "step_size": err.step_size,
        },
    )


def restarts_exhausted(
    err: DivergenceError, restarts: Sequence[Finding], gamma: float
) -> DivergenceError:
    """The error after the last restart diverged as well: the automatic step was already cut, so
    "reduce step_size" is not the advice; a larger γ keeps the chains out of the steep regions."""
    first = restarts[0].values.get("step_size", math.nan) if restarts else math.nan
    if math.isfinite(first) and math.isfinite(err.step_size):
        cut = f"cut from ε = {first:.3g} to {err.step_size:.3g} ({first / err.step_size:.3g}×)"
    else:
        cut = f"cut {(1 / RESTART_FACTOR) ** len(restarts):g}×"
    return _reworded(
        err,
        f"diverged after {len(restarts)} restarts from w*",
        f"the automatic step was {cut} and the chains still reached regions where the "
        f"loss is far steeper than at w* (as along the rescaling directions of deep networks, "
        f"which a weak localisation lets them follow); raise gamma (now {gamma:g}), e.g. "
        f"gamma={10 * gamma:g}, to keep them nearer w*, or pass a smaller step_scale (the "
        f"last run: {str(err).removesuffix(': ' + err.cause)})",
    )


def _reworded(err: DivergenceError, what: str, cause: str) -> DivergenceError:
    """``err`` (its chain, step and ε) with another head ``what`` and ``cause``."""
    return DivergenceError(
        what, chain=err.chain, step=err.step, step_size=err.step_size, cause=cause
    )


def final_divergence(
    err: DivergenceError,
    restarts: Sequence[Finding],
    gamma: float,
    plan: LLCPlan,
    dtype: torch.dtype = torch.float64,
) -> DivergenceError:
    """The error a divergence ends the estimate with (no restart left, or none allowed): after
    restarts ``restarts_exhausted``, else ``err``; where w* is not a minimum (``plan``) the cause
    says so first; in a dtype narrower than float64 whose digits the curvatures' range exceeds
    (``NARROW_RANGE``), the cause ends by naming float64 (a float32 regression with features
    from 10⁻³ to 10³ at nβ = 10⁸ diverged after three restarts, and ran in float64)."""
    final = restarts_exhausted(err, restarts, gamma) if restarts else err
    spread = plan.stiffest_curvature() / plan.hessian.floor  # against the localisation's
    if dtype != torch.float64 and spread * torch.finfo(dtype).eps >= NARROW_RANGE:
        final = _reworded(
            final,
            str(final).removesuffix(f" (chain {final.chain}, step {final.step}): {final.cause}"),
            f"{final.cause}. The curvatures at w* span {spread:.3g}× the localisation, beyond "
            f"what {str(dtype).removeprefix('torch.')} resolves (ε_mach = "
            f"{torch.finfo(dtype).eps:.2g}): the rounding of the loss can itself drive the chains "
            "off; run in float64 (dtype=torch.float64)",
        )
    downhill = plan.downhill_at_w_star()
    if math.isnan(downhill):
        return final
    h_min = downhill / plan.hessian.nbeta
    return _reworded(
        final,
        str(final).removesuffix(f" (chain {final.chain}, step {final.step}): {final.cause}"),
        f"w* is not a minimum of L_n: the Hessian at w* has an eigenvalue {h_min:.3g}, so the "
        f"localised potential curves down at w* (nβ·h_min = {downhill:.3g} against γ + α = "
        f"{plan.hessian.floor:.3g}) and the chains run away from it whatever the step. Train "
        f"further (or check w*); to measure this point on purpose, raise gamma above "
        f"{-downhill:.3g} (λ̂ then depends on γ). " + final.cause[:1].upper() + final.cause[1:],
    )
