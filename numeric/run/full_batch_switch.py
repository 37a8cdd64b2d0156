r"""Whether the full batch would mix faster than minibatches heated by their noise
(``check_batch_heating``).

BAOAB's default friction is raised until the minibatch heating of λ̂'s directions is at most
1 + ``warmup.friction.HEAT_TOL`` (``raise_friction``). The heating is ≈ 2/(ξ·√ε)·ε·nβ²·Var(ĝ)/4
and Var(ĝ) ∝ 1/B with replacement, so the friction it needs falls as 1/B while a step costs
∝ B: a slow direction of curvature κ, overdamped (relaxation ≈ ξ/(κ·√ε) steps), costs the same
per relaxation time at any B. The full batch (B = n, exact gradients: ``data.draw_indices``)
has no noise at all: ξ stays at critical damping ξ₀ = 2√κ (``plan.llc_plan.critical_friction``) and
the direction relaxes in ≈ 1/√(ε·κ) steps. Its steps cost n/B times as much (n/(2B) against the
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

**The switch** (``full_batch_switch``): where the batch size was the default and the run's
lengths automatic, the run starts again from w* on the full batch once the warm-up has raised
the friction so far that the full batch gains at least ``GAIN`` in computation per relaxation
time *and* its projected run, r·(burn-in + draws) at its own relaxation time, costs at most
``SWITCH_COST`` times the burn-in and draws the minibatch run has left at its relaxation time
(``projected_steps``: 5 relaxation times of burn-in less the steps already run, draws for
``MIN_LOSS_ESS`` effective samples of λ̂'s trace at an autocorrelation time of 2t, each within
the estimator's caps). The second condition keeps a run whose draws would be capped anyway from
becoming r times longer (the 10⁵-parameter network above: G ≈ 31, but 19.5 × 40,000 steps
against 40,000: no switch). Both sides count their burn-in: counted on the full batch's side
alone, the comparison had kept reduced-rank regression rrr(4,4,3,1) (24 parameters, n = 10⁴) on
minibatches at 3 of 12 seeds, each through a 20,000-step burn-in (the cap) at ξ = 48 where the
full batch relaxes in 225 steps: 23–24 s against a median of 13.5 s once all 12 switch
(``benchmarks/RESULTS.md``). r counts a step's fixed cost as well as its arithmetic
(``inputs.problem.step_cost``): on small models a step costs mostly its dispatch, and the full
batch's steps cost far less than n/2B minibatch steps (the noisy saddle y = x·w1·w2, n = 2,000, 8
chains: n/2B = 3.9, the full-batch run took 10.9 s where the minibatch run took 33.9 s).
Where the full-batch run diverges, its projection (made at the minibatch run's ε, at critical
damping) no longer holds, so it is not restarted with a smaller ε: the estimate is the
minibatch run's, and ``full_batch_diverged`` says so. (A checkpoint off its minimum, y = x·a·b
at a = 0.2, b = 0.1, n = 2,000: the switched run diverged, restarted under LM at a quarter of ε
and ended with a ``slow_mixing`` error at 20 times its projected cost, where the minibatch run
had none.)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from numeric.draws.sample import MIN_DRAWS
from numeric.errors import DivergenceError, InvalidInputError
from numeric.inputs.problem import Problem, step_cost
from numeric.options import LLCOptions
from numeric.plan.llc_plan import LLCPlan, critical_friction, slowest_curvature
from numeric.run.attempt import Attempt
from numeric.sampler import sgld
from numeric.types import MAX_DRAWS, MIN_LOSS_ESS, Finding, Tuning
from numeric.warmup.burn_in import MAX_BURNIN_STEPS, SLOWEST_RELAXATIONS

GAIN = 2.0  # the full batch's gain in computation per relaxation time that is reported / switched
SWITCH_COST = 2.0  # the full-batch run's projected cost, at most this many times the draws left


@dataclass(frozen=True)
class FullBatchCase:
    """The slowest direction under the run's heated minibatches against the full batch."""

    friction: float  # ξ, raised by the minibatch heating
    critical_friction: float  # ξ₀ = 2√κ, the full batch's
    relaxation_steps: float  # t(ξ) at the run's ε
    full_batch_relaxation_steps: float  # t(ξ₀)
    cost_per_step: float  # r = n/(B·passes)
    gain: float  # G = t(ξ)/(t(ξ₀)·r)
    minibatch_steps: float = math.nan  # projected burn-in and draws left to the minibatch run
    full_batch_steps: float = math.nan  # projected full-batch run, in minibatch steps

    def heating_numbers(self) -> dict[str, float]:
        """The ``batch_heating`` finding's numbers."""
        return {
            "friction": self.friction,
            "critical_friction": self.critical_friction,
            "relaxation_steps": self.relaxation_steps,
            "full_batch_relaxation_steps": self.full_batch_relaxation_steps,
            "cost_per_step": self.cost_per_step,
            "gain": self.gain,
        }

    def switch_numbers(self) -> dict[str, float]:
        """The ``full_batch_switch`` finding's numbers: the heating's and the projections."""
        return {
            **self.heating_numbers(),
            "minibatch_steps": self.minibatch_steps,
            "full_batch_steps": self.full_batch_steps,
        }


def projected_draws(t: float, num_chains: int) -> float:
    """Draws for ``MIN_LOSS_ESS`` effective samples of λ̂'s trace where its autocorrelation
    time is that of the slowest direction, ≈ 2t, within [``MIN_DRAWS``, ``MAX_DRAWS``]: what the
    sequential stopping rule (``draws.stopping_rule.draws_until_precise``) asks for at least."""
    return min(max(MIN_LOSS_ESS * 2 * t / num_chains, MIN_DRAWS), MAX_DRAWS)


def projected_steps(t: float, num_chains: int, done: int = 0) -> float:
    """Burn-in (``warmup.burn_in.SLOWEST_RELAXATIONS``·t, at most ``MAX_BURNIN_STEPS``, less the
    ``done`` steps it has had) and draws of a run whose slowest direction relaxes in t steps."""
    burn_in = max(min(SLOWEST_RELAXATIONS * t, MAX_BURNIN_STEPS) - done, 0)
    return burn_in + projected_draws(t, num_chains)


def full_batch_case(
    plan: LLCPlan,
    tuning: Tuning,
    n: int,
    batch: int,
    num_chains: int | None = None,
    dim: int | None = None,
    steps_done: int = 0,
) -> FullBatchCase | None:
    """The comparison of the module docstring (the projected runs for ``num_chains`` chains, the
    minibatch run ``steps_done`` steps into its burn-in; nan without); None where the friction
    is not the heating rule's, the batch is the full data, or the friction was not raised. With
    ``num_chains`` and ``dim`` the cost per step r counts a step's fixed cost too
    (``inputs.problem.step_cost``), as the default batch size does."""
    if not (plan.raises_friction and batch < n and math.isfinite(tuning.step_size)):
        return None
    kappa = slowest_curvature(plan.kappa_min, plan.kappa_flat, plan.track_positions)
    xi0 = critical_friction(plan.kappa_min, plan.kappa_flat, plan.track_positions)
    if not (kappa > 0 and tuning.friction > xi0):
        return None
    t_now = sgld.relaxation_steps(tuning.step_size, kappa, tuning.friction)
    t_full = sgld.relaxation_steps(tuning.step_size, kappa, xi0)
    passes = 2 if plan.kernel_spec.control_variate else 1
    if num_chains is not None and dim is not None:
        c = num_chains
        cost = step_cost((c + 1) * n, dim) / step_cost(passes * c * batch, dim)
    else:
        cost = n / (batch * passes)
    gain = t_now / (t_full * cost)
    if not math.isfinite(gain):
        return None
    case = FullBatchCase(tuning.friction, xi0, t_now, t_full, cost, gain)
    if num_chains is None:
        return case
    return dataclasses.replace(
        case,
        minibatch_steps=projected_steps(t_now, num_chains, steps_done),
        full_batch_steps=cost * projected_steps(t_full, num_chains),
    )


def switch_to_full_batch(
    plan: LLCPlan,
    tuning: Tuning,
    n: int,
    batch: int,
    num_chains: int,
    dim: int | None = None,
    steps_done: int = 0,
) -> FullBatchCase | None:
    """The case for restarting on the full batch (module docstring), or None."""
    case = full_batch_case(plan, tuning, n, batch, num_chains, dim, steps_done)
    if (
        case is None
        or case.gain < GAIN
        or case.full_batch_steps > SWITCH_COST * case.minibatch_steps
    ):
        return None
    return case


def full_batch_attempt(
    first: Attempt, case: FullBatchCase, setup: Callable[[LLCOptions], Problem]
) -> Attempt:
    """The policy where a warm-up made the ``case`` (``numeric.run.attempt``): the estimate's
    ``first`` attempt again on the full batch (``setup`` with batch_size = n), not restarted
    after a divergence and falling back to ``first``'s minibatches without the switch; where the
    full batch's set-up is refused (it does not fit in memory), those minibatches at once."""
    minibatch = dataclasses.replace(first, plan=None, switchable=False)
    n, batch = first.problem.n, first.problem.batch_size
    full_opts = dataclasses.replace(first.opts, batch_size=n)
    try:
        full = setup(full_opts)
    except InvalidInputError:
        return minibatch
    said = (switch_finding(case, n, batch),)
    return Attempt(full, full_opts, restartable=False, before=said, fallback=minibatch)


def fallen_back(attempt: Attempt, err: DivergenceError) -> Attempt | None:
    """The policy where a switched run diverged: its minibatch attempt without the switch, with
    ``full_batch_diverged`` (the projection, made at the minibatch run's ε, no longer holds: no
    restart); None for an attempt that is not a switched run."""
    back = attempt.fallback
    if back is None:
        return None
    said = f"chain {err.chain} at step {err.step}, ε = {err.step_size:.3g}"
    return dataclasses.replace(
        back, before=(diverged_finding(said, back.problem.n, back.problem.batch_size),)
    )


def switch_finding(case: FullBatchCase, n: int, batch: int) -> Finding:
    """What the switch says (``full_batch_switch``, info)."""
    return Finding(
        "full_batch_switch",
        "info",
        f"minibatch noise (batch_size = {batch}) raised BAOAB's friction to "
        f"{_friction(case.friction)} (critical damping {case.critical_friction:.3g}): the "
        f"slowest direction relaxed in ≈ {case.relaxation_steps:.3g} steps, and would in "
        f"{case.full_batch_relaxation_steps:.3g} on the full batch at {case.cost_per_step:.3g} "
        f"times the cost per step ({case.gain:.3g} times less computation per relaxation time; "
        f"its run projected at {case.full_batch_steps:.3g} minibatch steps' worth, against "
        f"{case.minibatch_steps:.3g} steps of burn-in and draws left to the minibatch run), so "
        f"the run was restarted from w* on the full batch, batch_size = {n} (exact gradients). "
        "Pass batch_size to choose it yourself",
        case.switch_numbers(),
    )


def _friction(xi: float) -> str:
    """ξ in words: its value, or LM's limit where the heating drove it to ∞."""
    return f"ξ = {xi:.3g}" if math.isfinite(xi) else "its limit ξ = ∞ (overdamped: LM)"


def diverged_finding(message: str, n: int, batch: int) -> Finding:
    """The full-batch run of a switch diverged: the estimate is the minibatch run's."""
    return Finding(
        "full_batch_diverged",
        "info",
        f"the run switched to the full batch (batch_size = {n}: minibatch noise had raised the "
        f"friction) diverged ({message}), so the projection that made the case for it did not "
        f"hold; the estimate is from minibatches of {batch}, as without the switch",
        {"batch_size": float(batch)},
    )


def check_batch_heating(
    plan: LLCPlan,
    tuning: Tuning,
    n: int,
    batch: int,
    num_chains: int | None = None,
    dim: int | None = None,
) -> tuple[Finding, ...]:
    """``batch_heating`` where the full batch would relax the slowest direction at least
    ``GAIN`` times cheaper than the run's heated minibatches (module docstring)."""
    case = full_batch_case(plan, tuning, n, batch, num_chains, dim)
    if case is None or case.gain < GAIN:
        return ()
    return (
        Finding(
            "batch_heating",
            "info",
            f"minibatch noise raised BAOAB's friction to {_friction(tuning.friction)} (critical "
            f"damping {case.critical_friction:.3g}) at ε = {tuning.step_size:.3g}: the slowest "
            f"direction relaxes in ≈ {case.relaxation_steps:.3g} steps instead of "
            f"{case.full_batch_relaxation_steps:.3g}. A larger minibatch does not help (the "
            f"friction needed falls as 1/batch_size, the cost per step rises with it); the full "
            f"batch, batch_size = {n}, has no minibatch noise and would relax it with ≈ "
            f"{case.gain:.3g} times less computation ({case.cost_per_step:.3g} times the cost "
            "per step)",
            case.heating_numbers(),
        ),
    )
