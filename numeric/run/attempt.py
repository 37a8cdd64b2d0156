r"""One attempt at the estimate (``Attempt``), the state of ``estimate_llc``'s loop of runs.

``estimate_llc`` runs the chains from w* until an outcome asks for no other run
(``numeric.run.estimate_llc._run_until_done``). Each run is an ``Attempt`` (the problem, the
options, the plan and what the attempts before it said) and ends in one outcome
(``numeric.run.one_run.Outcome``); one policy, each in the module of its rule, maps an outcome
to the next attempt or to none:

===================  ===================================  ========================================
outcome              what happened                        policy (module): the next attempt
===================  ===================================  ========================================
``Completed``        the draws were made (the time        ``heating_restart``: where the draws ran
                     budget or Ctrl-C may have cut them:  hotter than the warm-up measured, again
                     ``Draws.stopped``)                   with more friction, once; else none
``Diverged``         a chain diverged                     ``divergence_restart``: again with a
                                                          quarter of ε (automatic ε, at most three
                                                          times); ``full_batch_switch``: a
                                                          switched run falls back to its
                                                          minibatches; else the error
``FullBatchBetter``  the warm-up made the case for the    ``full_batch_switch``: again on the
                     full batch                           full batch (or the minibatches, where it
                                                          does not fit)
===================  ===================================  ========================================
"""

from __future__ import annotations

from dataclasses import dataclass

from numeric.inputs.problem import Problem
from numeric.options import LLCOptions
from numeric.plan.llc_plan import LLCPlan
from numeric.types import Finding


@dataclass(frozen=True)
class Attempt:
    """A run to make: on ``problem`` with ``opts`` and ``plan`` (None: made from them when the
    attempt starts), and what was said before it, in the order the estimate lists it:
    ``before`` (by the attempt it replaces: the switch, or the switched run's fallback), the
    divergence ``restarts`` and the heating restart (``cooled``, at most one)."""

    problem: Problem
    opts: LLCOptions
    plan: LLCPlan | None = None
    switchable: bool = False  # the warm-up may make the case for the full batch
    restartable: bool = True  # a divergence may restart it with a smaller ε
    before: tuple[Finding, ...] = ()
    restarts: tuple[Finding, ...] = ()
    cooled: tuple[Finding, ...] = ()
    fallback: Attempt | None = None  # where this (switched) run diverges: the minibatch attempt

    @property
    def said(self) -> tuple[Finding, ...]:
        """The findings of the attempts that led here."""
        return (*self.before, *self.restarts, *self.cooled)
