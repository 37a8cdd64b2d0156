r"""The attempts the full-batch switch starts (``numeric.run.full_batch_switch`` makes the case):
the estimate again on the full batch, and back on its minibatches where that run diverges or its
set-up is refused (``numeric.run.attempt`` lists every outcome's policy).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from numeric.errors import DivergenceError, InvalidInputError
from numeric.inputs.problem import Problem
from numeric.options import LLCOptions
from numeric.run.attempt import Attempt
from numeric.run.full_batch_switch import FullBatchCase, diverged_finding, switch_finding


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
