r"""Draws made burn-in while the chains still spread away from w* (``draw_until_settled``).

The automatic burn-in sizes itself from the slowest relevant direction at w* and the flat
directions held by γ + α (``numeric.warmup``). Where the directions flat at w* lead to regions
of another curvature (a deep linear network's GL(h) orbits) the chains go on spreading through
the draws long after that, and λ̂ averages a transient (``numeric.findings.spreading``). On the deep
linear network 22-19-22 (rank 19, D = 836, n = 10⁴, γ = 1) the defaults stopped at 2,473 burn-in
steps and 20,000 draws, the chains' ‖w − w*‖² grew by 18% through the draws, and λ̂ = 214.9 ± 0.8
lay 3.4% (z = −7.9) below the HMC value 222.5 ± 0.5 of the same posterior; 100,000 burn-in steps
at the same ε and friction read 225.0 ± 1.0 with no finding.

So where the burn-in is automatic and the draws' spread grew (``spreading.still_spreading``,
the ``spreading`` finding's own test: growth over 10% at z > 3), the draws are counted as
burn-in and drawn again, the friction re-raised for the heating where the chains now are and ε
shrunk where κ grew by half (as after the burn-in's own phases), at most ``MAX_ROUNDS`` times.
The rule reads the chains' positions only, never λ̂. The ``settling`` finding (info) lists each
round; where the last draws still spread, ``spreading`` says so as before.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from numeric.findings.spreading import still_spreading
from numeric.options import SamplerOptions
from numeric.plan.llc_plan import LLCPlan
from numeric.types import Draws, Finding, Tuning, Warmup
from numeric.warmup.friction import Heating, raise_friction
from numeric.warmup.step_size import Measure, shrink_if_stiffer

MAX_ROUNDS = 4  # times the draws are made burn-in at most

Round = tuple[int, float, float]  # (draws per chain made burn-in, growth G, its z)


def draw_until_settled(
    draw: Callable[[Warmup, bool], Draws],
    warm: Warmup,
    *,
    automatic: bool,
    alive: Callable[[], np.ndarray],
    steps_done: Callable[[], int],
    retune: Callable[[Tuning], Tuning],
) -> tuple[Warmup, Draws]:
    """``draw(warm, settling)``, and with an ``automatic`` burn-in again after ``retune`` while
    the draws still spread (module docstring); the warm-up the last draws followed (its burn-in
    counts the draws made burn-in) and those draws, with ``Draws.settled`` the rounds.
    ``settling`` is true while another round may follow: the draws then stop at their first
    measurement that shows the spread growing, not at λ̂'s precision (``numeric.draws.sample``;
    on a 1,444-parameter network each round had paid for a precise λ̂ then thrown away)."""
    drawn = draw(warm, automatic)
    rounds: list[Round] = []
    while automatic and len(rounds) < MAX_ROUNDS and drawn.stopped is None:
        found = still_spreading(drawn.spread, alive())
        if found is None:
            break
        rounds.append((int(drawn.num_draws), *found[:2]))
        warm = warm._replace(tuning=retune(warm.tuning), num_burnin=steps_done())
        drawn = draw(warm, len(rounds) < MAX_ROUNDS)
    return warm, drawn._replace(settled=tuple(rounds))


def retuner(
    plan: LLCPlan, opts: SamplerOptions, heating: Heating, check: Measure
) -> Callable[[Tuning], Tuning]:
    """What a round of draws made burn-in changes before the next: the friction raised for the
    heating where the chains are, and ε shrunk where κ (``check``, on the checks' own stream)
    grew by half, as after the burn-in's phases (``numeric.warmup``); ε only where automatic."""

    def retune(tuning: Tuning) -> Tuning:
        tuning = raise_friction(plan, tuning, heating)
        if opts.step_size is None:
            tuning, _, _ = shrink_if_stiffer(
                check, tuning, None, opts.step_scale, opts.max_step_size
            )
        return raise_friction(plan, tuning, heating)

    return retune


def settling_finding(rounds: tuple[Round, ...], num_burnin: int) -> tuple[Finding, ...]:
    """The ``settling`` finding (info) where draws were made burn-in (module docstring)."""
    if not rounds:
        return ()
    trail = "; ".join(
        f"{d:,} draws, ‖w − w*‖² up {100 * g:.0f}% (z = {z:.1f})" for d, g, z in rounds
    )
    return (
        Finding(
            "settling",
            "info",
            f"the chains were still spreading away from w* through the draws ({trail}), so those "
            f"draws were counted as burn-in and the chains drawn again, {len(rounds)} time"
            f"{'s' if len(rounds) > 1 else ''}: the burn-in came to {num_burnin:,} steps"
            + (
                f" (the most rounds made; where the last draws still spread, `spreading` says "
                f"so: pass num_burnin of several times {num_burnin:,} to go on)"
                if len(rounds) >= MAX_ROUNDS
                else ""
            ),
            {"rounds": float(len(rounds)), "num_burnin": float(num_burnin)},
        ),
    )
