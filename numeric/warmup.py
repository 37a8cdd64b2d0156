r"""Warm-up of the data estimator: step size, friction and burn-in (BlackJAX's ``adaptation``).

``warm_up`` runs the phases below on the chains and returns a ``Warmup`` (the final ``Tuning``,
the last burn-in steps for the draw rule, the steps done). Each rule, recorded in
``LLCEstimate.config``:

* **Step size** ε = ``step_scale``/κ with κ the largest curvature of the potential where the
  chains are and where one step of size ε takes them (``measure.consistent_curvature``; power
  iteration with Hessian-vector products). κ is measured at w* and again after 1, 2, 4, …, 64 of
  the ``ADAPT_STEPS`` adaptation steps (``adapt_checkpoints``); ε uses the largest of the last
  three measurements. During the flat-direction burn-in and after burn-in κ is measured again and
  ε shrunk if it grew by more than half (``shrink_if_stiffer``; after burn-in with two more
  burn-in blocks).
* **Slowest direction**: after adaptation, up to 5 relaxation times t = ``relax(κ_min)`` of the
  slowest relevant Hessian direction (``steps_to_relax_slowest``; at most ``MAX_BURNIN_STEPS``),
  with BAOAB's friction raised first (``numeric.momentum``), and again after the stationarity
  blocks if the friction rose meanwhile (a higher friction overdamps the slowest direction: on a
  2,091-parameter deep linear network ξ went from 2 to 32 and t from 274 to 8,860 steps after a
  burn-in sized for the first).
* **Flat directions** (``plan.track_positions``): 2 relaxation times t_flat of the directions
  held by γ + α alone, over which the chains' spread from w* reaches 1 − e⁻⁴ = 98% of its
  stationary variance, in chunks (``next_flat_chunk``: LM doubling from 256; BAOAB half of
  t_flat, at most doubling) with κ re-measured after each (the spread reaches regions of higher
  curvature: quartic losses), at most ``MAX_BURNIN_STEPS`` in all (``flat_burn_in_target``).
* **Friction** (BAOAB with the default friction, ``raise_friction``): the velocity integrates the
  gradient noise, heating the chains by 1 + ε·nβ²·Var(ĝ)/4 times ``sgld.noise_heating``; as the
  chains spread the control variate's variance grows with ‖w − a‖², so after each phase ξ is
  raised (never lowered) until the heating measured where the chains are is at most
  1 + ``HEAT_TOL`` (``sgld.friction_for_heating``; ∞, i.e. LM, when even LM heats more), and the
  anchors go back to every epoch when ξ reaches ∞. Without this rule the first BAOAB version was
  badly wrong: noisy RRR came out at 2.0–2.6 against an exact 1.12–1.24.
* **Stationarity**: then blocks of ``BLOCK`` steps until two consecutive blocks agree (|z| < 2 on
  nβ·ΔL and on ‖w − w*‖², ESS-based errors), at most ``MAX_BURNIN_BLOCKS`` blocks
  (``burn_in_blocks``).

Restarts after a divergence: ``numeric.restarts``.

With ``num_burnin`` given, the adaptation (at most that many steps) and then steps up to
``num_burnin`` in doubling chunks, κ re-measured after each on a stream of its own and ε shrunk
where it grew by half (``fixed_burn_in``); with ``step_size`` given, no adaptation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from numeric import sgld
from numeric.budget import WARMUP_SHARE, Stopped
from numeric.chains import Chains
from numeric.diagnostics import ess
from numeric.errors import InvalidInputError
from numeric.options import SamplerOptions
from numeric.plan import LLCPlan
from numeric.types import Trace, Tuning, Warmup

ADAPT_STEPS = 128
MAX_BURNIN_STEPS = 20_000
SLOWEST_RELAXATIONS = 5  # relaxation times of the slowest relevant direction in the burn-in
BLOCK = 100  # burn-in block length for the stationarity test
MAX_BURNIN_BLOCKS = 40
HEAT_TOL = 0.01  # BAOAB's default friction keeps the minibatch heating at most 1 + this
KAPPA_FLOOR = 1e-12  # a curvature at most this (only possible with γ + α = 0) chooses no ε

# measure(v, iters) -> (κ, v): the curvature where the chains are, power iteration warm-started
# at v [C, D]
Measure = Callable[[Tensor, int], tuple[float, Tensor]]
# heating(tuning, factor) -> the heating factor where the chains are (``measure.minibatch_heating``)
Heating = Callable[[Tuning, float], float]


def relax(tuning: Tuning, kappa: float) -> float:
    """e-folding steps of a direction of curvature κ at ``tuning``'s ε and friction; nan when
    κ is not positive (there is no such direction)."""
    if not kappa > 0:
        return math.nan
    return sgld.relaxation_steps(tuning.step_size, kappa, tuning.friction)


def automatic_step(kappa: float, step_scale: float, max_step: float = math.inf) -> float:
    """ε = min(step_scale/κ, ``max_step``): the automatic step at curvature κ, under the cap a
    restart set (``restarts.restart_options``)."""
    return min(step_scale / kappa, max_step)


def adapt_checkpoints(steps: int) -> list[int]:
    """Geometric checkpoints 0, 1, 2, 4, ... < steps at which the curvature is re-measured."""
    out, k = [0], 1
    while k < steps:
        out.append(k)
        k *= 2
    return out


def adapt_step_size(
    chains: Chains,
    measure: Measure,
    tuning: Tuning,
    v: Tensor,
    steps: int,
    step_scale: float,
    max_step: float = math.inf,
) -> tuple[Tuning, Tensor]:
    """ε = ``automatic_step(κ, step_scale, max_step)`` with κ re-measured at the checkpoints of
    ``adapt_checkpoints`` while the chains run ``steps`` steps; κ is the largest of the last
    three measurements. Returns the tuning (ε, κ) and the power-iteration vectors."""
    cps = adapt_checkpoints(max(steps, 1))
    history: list[float] = []
    for i, cp in enumerate(cps):
        k_now, v = measure(v, 20 if i == 0 else 8)
        history.append(k_now)
        if not max(history[-3:]) > KAPPA_FLOOR:
            raise InvalidInputError(
                f"the step size cannot be chosen: the curvature κ of the potential is "
                f"{max(history[-3:]):.3g} where the chains are and where a step lands, so ε = "
                f"{step_scale:g}/κ is unbounded. With γ + α = 0 nothing holds the chains in the "
                "directions where L_n is flat, and the local posterior may be improper: pass "
                "gamma > 0 (the localisation; the default is 1), or a step_size"
            )
        kappa = max(max(history[-3:]), KAPPA_FLOOR)
        tuning = tuning._replace(step_size=automatic_step(kappa, step_scale, max_step), kappa=kappa)
        nxt = cps[i + 1] if i + 1 < len(cps) else steps
        if nxt > cp:
            chains.advance(nxt - cp, tuning)
    return tuning, v


def shrink_if_stiffer(
    measure: Measure, tuning: Tuning, v: Tensor, step_scale: float, max_step: float = math.inf
) -> tuple[Tuning, Tensor, bool]:
    """Re-measure κ where the chains are; if it grew by more than half,
    ε = ``automatic_step(κ, step_scale, max_step)``."""
    k_now, v = measure(v, 8)
    if not k_now > 1.5 * tuning.kappa:
        return tuning, v, False
    step = automatic_step(k_now, step_scale, max_step)
    return tuning._replace(step_size=step, kappa=k_now), v, True


def raise_friction(plan: LLCPlan, tuning: Tuning, heating: Heating) -> Tuning:
    """BAOAB with the default friction: ξ raised (never lowered) until the heating where the
    chains are is at most 1 + ``HEAT_TOL``; anchors back to every epoch once ξ = ∞."""
    if not plan.raises_friction:
        return tuning
    excess = heating(tuning, 1.0) - 1.0
    if math.isnan(excess):
        return tuning
    need = sgld.friction_for_heating(excess, tuning.step_size, HEAT_TOL)
    if need > tuning.friction:
        tuning = tuning._replace(friction=need)
    if plan.anchors_auto and math.isinf(tuning.friction):
        tuning = tuning._replace(anchor_every=plan.epoch)  # LM's limit: frequent anchors do not pay
    return tuning


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


def curvature_rule(step_scale: float, *, preconditioned: bool | str) -> str:
    """How ε was chosen, as ``LLCConfig.step_size_rule`` says it (``preconditioned``: True or
    "hessian" for the dense preconditioner, "lowrank: …" for the low-rank one)."""
    if isinstance(preconditioned, str) and preconditioned.startswith("lowrank"):
        return (
            f"ε = {step_scale:g}/κ, κ = λ_max(M^½·∇²U_B·M^½) (low-rank preconditioner M: "
            f"{preconditioned.removeprefix('lowrank: ')}) measured by power iteration where the "
            "chains were during adaptation"
        )
    if preconditioned and preconditioned != "none":
        return (
            f"ε = {step_scale:g}/κ, κ = λ_max(M^½·∇²U_B·M^½) (Hessian preconditioner M) "
            "measured by power iteration where the chains were during adaptation"
        )
    return (
        f"ε = {step_scale:g}/κ, κ = nβ·|λ_max(∇²L_B)| + γ + α measured by power "
        "iteration where the chains were during adaptation"
    )


def _burn_in_until_mixed(
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
    told each friction the heating rule sets (the full-batch switch, ``numeric.run``, ends the
    run from there by raising)."""
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
    (``numeric.stiffness`` has the measurements)."""
    if opts.step_size is not None or check is None:
        return tuning, chains.advance(opts.num_burnin - chains.steps_done, tuning)
    while True:
        left = opts.num_burnin - chains.steps_done
        tail = chains.advance(min(max(chains.steps_done, BLOCK), left), tuning)
        tuning, v, _ = shrink_if_stiffer(check, tuning, v, opts.step_scale, opts.max_step_size)
        if chains.steps_done >= opts.num_burnin:
            return tuning, tail


def warm_up(
    chains: Chains,
    plan: LLCPlan,
    opts: SamplerOptions,
    gen: torch.Generator,
    *,
    measure: Measure,
    heating: Heating,
    switch: Callable[[Tuning], LLCPlan | None] | None = None,
    check: Measure | None = None,
    on_raise: Callable[[Tuning], None] | None = None,
) -> Warmup:
    """Step size, friction and burn-in (module docstring), starting from ``plan``'s friction and
    anchors. Draws v [C, D] from ``gen`` first, also when ε is given (it keeps the stream).
    ``switch(tuning)``, called once ε is adapted, may return a new plan (``numeric.momentum``:
    BAOAB instead of LM) that the rest of warm-up follows; ``check`` measures κ for a given
    ``num_burnin`` (``fixed_burn_in``), on a stream of its own; ``on_raise`` is told each friction
    the automatic burn-in sets (``_burn_in_until_mixed``)."""
    w = chains.position
    v = torch.randn(w.shape, generator=gen, device=w.device, dtype=w.dtype)
    tuning = Tuning(math.nan, math.nan, plan.friction, plan.anchor_every)
    if opts.step_size is None:
        steps = ADAPT_STEPS if opts.num_burnin is None else min(ADAPT_STEPS, opts.num_burnin)
        chains.phase("warm-up: step size", steps)
        tuning, v = adapt_step_size(
            chains, measure, tuning, v, steps, opts.step_scale, opts.max_step_size
        )
        rule = curvature_rule(opts.step_scale, preconditioned=plan.describe_preconditioner())
        if math.isfinite(opts.max_step_size):
            rule += f", at most {opts.max_step_size:.3g} (a quarter of a diverged run's ε)"
        if switch is not None and (new := switch(tuning)) is not None:
            plan, tuning = new, tuning._replace(friction=new.friction)
    else:
        tuning, rule = tuning._replace(step_size=float(opts.step_size)), "given"
    fixed = None if opts.num_burnin is None else opts.num_burnin - chains.steps_done
    chains.phase("burn-in", fixed)
    chains.deadline = chains.clock.deadline(WARMUP_SHARE)
    cut = False
    try:
        if opts.num_burnin is None:
            tuning, tail = _burn_in_until_mixed(
                chains, plan, opts, tuning, v, measure=measure, heating=heating, on_raise=on_raise
            )
        elif opts.num_burnin > chains.steps_done:
            tuning, tail = fixed_burn_in(chains, opts, tuning, v, check)
            tuning = raise_friction(plan, tuning, heating)
        else:
            tail = None
    except Stopped as stop:  # the time budget's share for the burn-in is spent: draws from here
        tuning = tuning if chains.tuning is None else chains.tuning
        tail, cut = stop.trace, True
    finally:
        chains.deadline = math.inf
    return Warmup(tuning, tail, chains.steps_done, rule, cut=cut)
