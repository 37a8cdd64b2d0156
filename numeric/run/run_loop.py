r"""The one loop of ``estimate_llc``'s runs: an attempt, its outcome, the next attempt.

    attempt = first
    while True:
        outcome = one_run(attempt)                       # Completed | Diverged | FullBatchBetter
        attempt = policy(attempt, outcome) or estimate   # each policy in its own module

The outcomes and the policy for each are listed in ``numeric.run.attempt``. Each run plans
within what is left of the estimate's clock (``numeric.budget``); the state of the loop is the
``Attempt`` alone (options, plan and what was said), so no policy mutates another's.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import NoReturn

from numeric.budget import Clock, budget_findings
from numeric.errors import DivergenceError
from numeric.inputs.problem import Problem
from numeric.options import LLCOptions
from numeric.plan.llc_plan import make_plan
from numeric.result.llc_estimate import LLCEstimate
from numeric.run.attempt import Attempt, Completed, Diverged
from numeric.run.divergence_restart import divergence_error, restarted
from numeric.run.full_batch_attempts import fallen_back, full_batch_attempt
from numeric.run.heating_restart import cooled
from numeric.run.one_run import one_run
from numeric.run.summarise import summarise

__all__ = ["run_until_done"]

_LOG = logging.getLogger("numeric")


def run_until_done(
    first: Attempt, clock: Clock, setup: Callable[[LLCOptions], Problem]
) -> LLCEstimate:
    """Runs from ``first`` until an outcome asks for no other (module docstring): the estimate of
    the last completed run, or the error of a divergence no policy answers. ``setup(opts)`` makes
    the problem of other options (the full batch's)."""
    attempt = first
    while True:
        attempt = planned(attempt)
        assert attempt.plan is not None
        outcome = one_run(
            attempt.problem, attempt.plan, attempt.opts, attempt.switchable, clock.rest()
        )
        if isinstance(outcome, Completed):
            after = cooled(attempt, outcome, clock)
            if after is None:
                return finish(attempt, outcome)
        elif isinstance(outcome, Diverged):
            after = restarted(attempt, outcome.error, clock) or fallen_back(attempt, outcome.error)
            if after is None:
                _raise(divergence_error(attempt, outcome.error), outcome.error)
        else:
            after = full_batch_attempt(first, outcome.case, setup)
        attempt = after


def planned(attempt: Attempt) -> Attempt:
    """``attempt`` with its plan (``numeric.plan.llc_plan.make_plan``), made where it has none."""
    if attempt.plan is not None:
        return attempt
    started = time.monotonic()
    plan = make_plan(attempt.problem, attempt.opts)
    _LOG.info("plan: %s, %s preconditioner in %.2f s", plan.integrator, plan.preconditioner,
              time.monotonic() - started)  # fmt: skip
    return dataclasses.replace(attempt, plan=plan)


def finish(attempt: Attempt, ran: Completed) -> LLCEstimate:
    """The estimate from the completed run, with what its attempts said and what the clock or
    Ctrl-C cut first."""
    said = (*attempt.said, *budget_findings(ran.warm, ran.drawn, attempt.opts.time_budget))
    return summarise(attempt.problem, ran.plan, attempt.opts, ran.warm, ran.drawn, ran.alive, said)


def _raise(final: DivergenceError, err: DivergenceError) -> NoReturn:
    """The divergence as the chains raised it, or reworded (``final``) from it."""
    if final is err:
        raise err
    raise final from err
