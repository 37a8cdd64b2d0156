r"""The estimator's stages, public (layer 2): what ``estimate_llc`` does, one call per stage.

::

    from numeric import stages

    opts = stages.make_options(sampler=Sampler(num_chains=8), seed=0)
    problem = stages.setup_problem(loss_fn, params, data, opts)   # w*, L, its gradient, n, B
    plan = stages.make_plan(problem, opts)       # preconditioner, integrator, friction, anchors
    with stages.Run(problem, plan, opts) as run:  # the chains at w*, on the seed's stream
        warm = run.warm_up()                      # step size, friction, burn-in
        warm, drawn = run.draw(warm)              # draws until λ̂ is precise
        drawn = run.check_step(warm, drawn)       # the step-size check at ε/2
    est = stages.summarise(problem, run.plan, opts, warm, drawn, run.alive)

A staged run applies no re-run policy: where ``estimate_llc`` would restart after a divergence
(with a quarter of the step), restart with more friction after a heating, or switch to the full
batch, the stages raise ``DivergenceError`` or return the heated run's estimate, with the
finding that says so; ``numeric.run.estimate_llc._run_until_done`` applies the policies in turn. The
same options give the same numbers as ``estimate_llc`` wherever no policy fires.
"""

from __future__ import annotations

from typing import Any

from numeric.errors import InvalidInputError
from numeric.inputs.problem import Problem, setup_problem
from numeric.option_groups import (
    Budget,
    Checks,
    Runtime,
    Sampler,
    Target,
    apply_groups,
    llc_defaults,
)
from numeric.options import LLCOptions
from numeric.plan.llc_plan import LLCPlan, make_plan
from numeric.run.one_run import Run
from numeric.run.summarise import summarise

__all__ = ["LLCPlan", "Problem", "Run", "make_options", "make_plan", "setup_problem", "summarise"]


def make_options(
    *,
    target: Target | None = None,
    sampler: Sampler | None = None,
    budget: Budget | None = None,
    checks: Checks | None = None,
    runtime: Runtime | None = None,
    **keywords: Any,
) -> LLCOptions:
    """The validated options of a staged run from groups and ``estimate_llc``'s keywords (an
    unknown keyword, or one given twice, is an ``InvalidInputError``)."""
    defaults = llc_defaults()
    unknown = sorted(set(keywords) - set(defaults))
    if unknown:
        raise InvalidInputError(f"make_options has no setting {', '.join(unknown)}")
    groups = dict(target=target, sampler=sampler, budget=budget, checks=checks, runtime=runtime)
    return LLCOptions(**apply_groups({**defaults, **keywords}, groups, caller="make_options"))
