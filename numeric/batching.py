r"""Whether the full batch would mix faster than minibatches heated by their noise
(``check_batch_heating``).

BAOAB's default friction is raised until the minibatch heating of λ̂'s directions is at most
1 + ``warmup.HEAT_TOL`` (``warmup.raise_friction``). The heating is ≈ 2/(ξ·√ε)·ε·nβ²·Var(ĝ)/4
and Var(ĝ) ∝ 1/B with replacement, so the friction it needs falls as 1/B while a step costs
∝ B: a slow direction of curvature κ, overdamped (relaxation ≈ ξ/(κ·√ε) steps), costs the same
per relaxation time at any B. The full batch (B = n, exact gradients: ``data.draw_indices``)
has no noise at all: ξ stays at critical damping ξ₀ = 2√κ (``plan.critical_friction``) and the
direction relaxes in ≈ 1/√(ε·κ) steps. Its steps cost n/B times as much (n/(2B) against the
control variate's two passes, at w and at its centre), so it gains

    G = t(ξ)/(t(ξ₀)·r),   t = ``sgld.relaxation_steps`` at the run's ε,  r = n/(B·passes),

in computation per relaxation time of the slowest direction. Where G ≥ ``GAIN``
``batch_heating`` (info) says so, with the numbers. On the deep linear network
228-180-118-180-175 (D = 115,020, n = 10⁴, B = 256) the heating raised ξ from 2 to 613 at
ε = 2·10⁻⁸: its flat directions relaxed in 4.3·10⁶ steps, 10²–10³ times the run (λ̂ −26%), where
the full batch would take ≈ 7,100 steps at 19.5 times the cost: G ≈ 31.

The gain is in mixing, not a promise of a better estimate: the friction also held the chains
back from where the posterior goes. On 15-18-11-26-18-23 (D = 1,636, n = 10⁴, γ = 1) the
minibatch run (ξ = 69, ε = 1.3·10⁻⁸ after two divergence restarts) read −28% with a
``slow_mixing`` error, and the full batch at ξ = 2 reached regions so steep that it diverged
after three restarts, with the error that asks for a larger γ: at that γ the chains leave the
region where w* is what they sample.
"""

from __future__ import annotations

import math

from numeric import sgld
from numeric.findings import Finding
from numeric.plan import LLCPlan, critical_friction, slowest_curvature
from numeric.types import Tuning

GAIN = 2.0  # the full batch's gain in computation per relaxation time that is reported


def check_batch_heating(plan: LLCPlan, tuning: Tuning, n: int, batch: int) -> tuple[Finding, ...]:
    """``batch_heating`` where the full batch would relax the slowest direction at least
    ``GAIN`` times cheaper than the run's heated minibatches (module docstring)."""
    if not (plan.raises_friction and batch < n and math.isfinite(tuning.step_size)):
        return ()
    kappa = slowest_curvature(plan.kappa_min, plan.kappa_flat, plan.track_positions)
    xi0 = critical_friction(plan.kappa_min, plan.kappa_flat, plan.track_positions)
    if not (kappa > 0 and tuning.friction > xi0):
        return ()
    t_now = sgld.relaxation_steps(tuning.step_size, kappa, tuning.friction)
    t_full = sgld.relaxation_steps(tuning.step_size, kappa, xi0)
    cost = n / (batch * (2 if plan.kernel_spec.control_variate else 1))
    gain = t_now / (t_full * cost)
    if not (math.isfinite(gain) and gain >= GAIN):
        return ()
    return (
        Finding(
            "batch_heating",
            "info",
            f"minibatch noise raised BAOAB's friction to ξ = {tuning.friction:.3g} (critical "
            f"damping {xi0:.3g}) at ε = {tuning.step_size:.3g}: the slowest direction relaxes in "
            f"≈ {t_now:.3g} steps instead of {t_full:.3g}. A larger minibatch does not help (the "
            f"friction needed falls as 1/batch_size, the cost per step rises with it); the full "
            f"batch, batch_size = {n}, has no minibatch noise and would relax it with ≈ "
            f"{gain:.3g} times less computation ({cost:.3g} times the cost per step)",
            {
                "friction": tuning.friction,
                "critical_friction": xi0,
                "relaxation_steps": t_now,
                "full_batch_relaxation_steps": t_full,
                "cost_per_step": cost,
                "gain": gain,
            },
        ),
    )
