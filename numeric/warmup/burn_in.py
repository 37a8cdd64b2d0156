r"""The burn-in of the data estimator, after the step size's adaptation
(``numeric.warmup.step_size``): how many steps before the draws. ``numeric.warmup.warm_up`` runs
it; each rule is recorded in ``LLCEstimate.config``:

* **Slowest direction**: after adaptation, up to 5 relaxation times t = ``relax(κ_min)`` of the
  slowest relevant Hessian direction (``steps_to_relax_slowest``; at most ``MAX_BURNIN_STEPS``),
  with BAOAB's friction raised first (``numeric.plan.integrator_switch``), and again after the
  stationarity blocks if the friction rose meanwhile (a higher friction overdamps the slowest
  direction: on a 2,091-parameter deep linear network ξ went from 2 to 32 and t from 274 to 8,860
  steps after a burn-in sized for the first).
* **Flat directions** (``plan.track_positions``): 2 relaxation times t_flat of the directions
  held by γ + α alone, over which the chains' spread from w* reaches 1 − e⁻⁴ = 98% of its
  stationary variance, in chunks (``next_flat_chunk``: LM doubling from 256; BAOAB half of
  t_flat, at most doubling) with κ re-measured after each (the spread reaches regions of higher
  curvature: quartic losses), at most ``MAX_BURNIN_STEPS`` in all (``flat_burn_in_target``).
* **Stationarity**: then blocks of ``BLOCK`` steps until two consecutive blocks agree (|z| < 2 on
  nβ·ΔL and on ‖w − w*‖², ESS-based errors), at most ``MAX_BURNIN_BLOCKS`` blocks
  (``burn_in_blocks``).

After each phase BAOAB's default friction is raised for the heating where the chains now are
(``numeric.warmup.friction``), and where the draws still spread from w* they are made burn-in and
drawn again (``numeric.draws.burn_in_extension``).

With ``num_burnin`` given, the adaptation (at most that many steps) and then steps up to
``num_burnin`` in doubling chunks, κ re-measured after each on a stream of its own and ε shrunk
where it grew by half (``fixed_burn_in``); with ``step_size`` given, no adaptation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from torch import Tensor

from numeric.options import SamplerOptions
from numeric.plan.llc_plan import LLCPlan
from numeric.sampler import sgld
from numeric.sampler.chains import Chains
from numeric.stats.diagnostics import ess
from numeric.types import Trace, Tuning
from numeric.warmup.friction import raise_friction
from numeric.warmup.step_size import Measure, shrink_if_stiffer

MAX_BURNIN_STEPS = 20_000
SLOWEST_RELAXATIONS = 5  # relaxation times of the slowest relevant direction in the burn-in
BLOCK = 100  # burn-in block length for the stationarity test
MAX_BURNIN_BLOCKS = 40


def relax(tuning: Tuning, kappa: float) -> float:
    """e-folding steps of a direction of curvature κ at ``tuning``'s ε and friction; nan when
    κ is not positive (there is no such direction)."""
    if not kappa > 0:
        return math.nan
    return sgld.relaxation_steps(tuning.step_size, kappa, tuning.friction)


def steps_to_relax_slowest(plan: LLCPlan, tuning: Tuning, done: int) -> int:
    """Steps that take the run to ``SLOWEST_RELAXATIONS`` relaxation times of the slowest
    relevant direction (at most ``MAX_BURNIN_STEPS``); 0 when there is no such direction or
    ``done`` already covers it."""
    t = relax(tuning, plan.kappa_min)
    if not (math.isfinite(t) and SLOWEST_RELAXATIONS * t > done):
        return 0
    return max(min(math.ceil(SLOWEST_RELAXATIONS * t), MAX_BURNIN_STEPS) - done, 0)


def flat_burn_in_target(plan: LLCPlan, tuning: Tuning) -> float | None:
    """Steps the run needs for 2 relaxation times of the flat directions (at most
    ``MAX_BURNIN_STEPS``); None when they are not tracked or have no relaxation time
    (κ_flat = γ + α = 0 without a preconditioner)."""
    if not plan.track_positions:
        return None
    t = relax(tuning, plan.kappa_flat)
    return None if math.isnan(t) else min(2 * t, MAX_BURNIN_STEPS)


def next_flat_chunk(last: int, integrator: str, t_flat: float) -> int:
    """Steps in the next flat-direction chunk: BAOAB half a relaxation time (longer as ξ rises),
    at most doubling from the last; LM doubling from 256."""
    if integrator == "baoab":
        half = max(32, math.ceil(t_flat / 2))
        return min(2 * last, max(last, half)) if last else half
    return 2 * last if last else 256


def stationary(prev: Trace, cur: Trace, nbeta: float) -> bool:
    """Two consecutive burn-in blocks agree (|z| < 2 on nβ·ΔL and on ‖w − w*‖²)."""
    for a, b in ((prev.loss - prev.ref, cur.loss - cur.ref), (prev.dist, cur.dist)):
        x = a.double().cpu().numpy() * nbeta
        y = b.double().cpu().numpy() * nbeta
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            return False
        ex, ey = ess(x), ess(y)
        vx, vy = x.var(ddof=1), y.var(ddof=1)
        if not (ex > 1 and ey > 1):
            return False
        se = math.sqrt(vx / ex + vy / ey)
        if se == 0:
            continue
        if abs(x.mean() - y.mean()) / se > 2.0:
            return False
    return True


def burn_in_blocks(chains: Chains, tuning: Tuning, max_blocks: int = MAX_BURNIN_BLOCKS) -> Trace:
    """Blocks of ``BLOCK`` steps until two consecutive blocks agree (at least 2 blocks); the
    last two."""
    prev = chains.advance(BLOCK, tuning, track_dist=True)
    blocks = 1
    while blocks < max_blocks:
        cur = chains.advance(BLOCK, tuning, track_dist=True)
        blocks += 1
        if stationary(prev, cur, chains.nbeta):
            return Trace.join([prev, cur])
        prev = cur
    return Trace.join([prev, prev])


def burn_in_until_mixed(
    chains: Chains,
    plan: LLCPlan,
    opts: SamplerOptions,
    tuning: Tuning,
    v: Tensor,
    *,
    measure,
    heating,
    on_raise: Callable[[Tuning], None] | None = None,
) -> tuple[Tuning, Trace]:
    """The automatic burn-in after adaptation (module docstring): slowest direction, flat
    directions, stationarity, and a last check of κ and the heating. ``on_raise(tuning)`` is
    told each friction the heating rule sets (the full-batch switch, ``numeric.run.one_run``, ends
    the run from there by raising)."""
    adapt = opts.step_size is None

    def raised(t: Tuning) -> Tuning:
        t = raise_friction(plan, t, heating)
        if on_raise is not None:
            on_raise(t)
        return t

    if plan.raises_friction and math.isfinite(plan.kappa_min):  # BAOAB near a minimum: the
        # friction first, so that the slowest direction's burn-in is sized with it
        tuning = raised(tuning)
    if (extra := steps_to_relax_slowest(plan, tuning, chains.steps_done)) > 0:
        chains.advance(extra, tuning)
    tuning = raised(tuning)
    chunk = 0
    while (target := flat_burn_in_target(plan, tuning)) is not None and chains.steps_done < target:
        chunk = next_flat_chunk(chunk, plan.integrator, relax(tuning, plan.kappa_flat))
        chains.advance(min(chunk, MAX_BURNIN_STEPS - chains.steps_done), tuning)
        if adapt:
            tuning, v, _ = shrink_if_stiffer(
                measure, tuning, v, opts.step_scale, opts.max_step_size
            )
        tuning = raised(tuning)
    tail = burn_in_blocks(chains, tuning)
    tuning = raised(tuning)
    if (extra := steps_to_relax_slowest(plan, tuning, chains.steps_done)) > 0:
        # the friction rose as the chains spread: the slowest direction relaxes more slowly
        chains.advance(extra, tuning)
        tail = burn_in_blocks(chains, tuning)
    if adapt:
        tuning, v, shrunk = shrink_if_stiffer(
            measure, tuning, v, opts.step_scale, opts.max_step_size
        )
        if shrunk:
            tail = chains.advance(2 * BLOCK, tuning)
    return tuning, tail


def fixed_burn_in(
    chains: Chains, opts: SamplerOptions, tuning: Tuning, v: Tensor, check: Measure | None
) -> tuple[Tuning, Trace]:
    """The steps after adaptation up to a given ``num_burnin``, and the last chunk's trace. With
    ε adaptive and a ``check``, in chunks that double the steps done, κ re-measured after each
    (the last included) and ε shrunk where it grew by half (``shrink_if_stiffer``): the chains
    spread, and where the flat directions lead to steeper regions (a deep linear network's
    GL(h) orbits, held only by γ) ε = c/κ of the adaptation becomes too large there
    (``numeric.findings.stiffer_in_draws`` has the measurements)."""
    if opts.step_size is not None or check is None:
        return tuning, chains.advance(opts.num_burnin - chains.steps_done, tuning)
    while True:
        left = opts.num_burnin - chains.steps_done
        tail = chains.advance(min(max(chains.steps_done, BLOCK), left), tuning)
        tuning, v, _ = shrink_if_stiffer(check, tuning, v, opts.step_scale, opts.max_step_size)
        if chains.steps_done >= opts.num_burnin:
            return tuning, tail
