r"""Warm-up of the data estimator: step size, friction and burn-in (BlackJAX's ``adaptation``).

``warm_up`` runs the phases on the chains and returns a ``Warmup`` (the final ``Tuning``, the last
burn-in steps for the draw rule, the steps done), each rule in the module named for it:

* the step size ε (``numeric.warmup.step_size``), from the curvature where the chains are
  (``numeric.warmup.curvature``); then, where ε outpaces the slowest relevant direction, LM
  becomes BAOAB (``numeric.plan.integrator_switch``);
* BAOAB's friction, raised for the minibatch heating after each phase
  (``numeric.warmup.friction``);
* the burn-in: the slowest direction, the flat directions, stationarity
  (``numeric.warmup.burn_in``), within the time budget's share (``numeric.budget``).

Restarts after a divergence: ``numeric.run.divergence_restart``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from numeric.budget import WARMUP_SHARE, Stopped
from numeric.options import SamplerOptions
from numeric.plan.llc_plan import LLCPlan
from numeric.sampler.chains import Chains
from numeric.types import Tuning, Warmup
from numeric.warmup.burn_in import burn_in_until_mixed, fixed_burn_in
from numeric.warmup.friction import Heating, raise_friction
from numeric.warmup.step_size import ADAPT_STEPS, Measure, adapt_step_size, curvature_rule


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
    ``switch(tuning)``, called once ε is adapted, may return a new plan
    (``numeric.plan.integrator_switch``: BAOAB instead of LM) that the rest of warm-up follows;
    ``check`` measures κ for a given ``num_burnin`` (``fixed_burn_in``), on a stream of its own;
    ``on_raise`` is told each friction the automatic burn-in sets (``burn_in_until_mixed``)."""
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
    cut = False
    try:
        with chains.stoppable(WARMUP_SHARE, interruptible=False):
            if opts.num_burnin is None:
                tuning, tail = burn_in_until_mixed(
                    chains, plan, opts, tuning, v, measure=measure, heating=heating,
                    on_raise=on_raise,
                )  # fmt: skip
            elif opts.num_burnin > chains.steps_done:
                tuning, tail = fixed_burn_in(chains, opts, tuning, v, check)
                tuning = raise_friction(plan, tuning, heating)
            else:
                tail = None
    except Stopped as stop:  # the time budget's share for the burn-in is spent: draws from here
        tuning = tuning if chains.tuning is None else chains.tuning
        tail, cut = stop.trace, True
    return Warmup(tuning, tail, chains.steps_done, rule, cut=cut)
