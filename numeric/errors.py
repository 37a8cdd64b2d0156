"""Exceptions raised by :mod:`numeric`: one narrow hierarchy instead of bare ``ValueError``."""

from __future__ import annotations

import math


class NumericError(ValueError):
    """Base class of every error raised by :mod:`numeric`."""


class InvalidInputError(NumericError):
    """An argument is malformed: wrong shape, empty data, non-finite w*, nβ ≤ 0, ε ≤ 0, ..."""


class ConvergenceError(NumericError, ArithmeticError):
    """An iteration ran out of its budget before its result could be trusted (a Ritz value
    whose residual is still above the tolerance): raised instead of returning it."""


class DivergenceError(NumericError, ArithmeticError):
    """A chain produced a non-finite or exploding loss.

    Attributes name the first offending chain and step, the step size ε of the run (nan where
    none applies) and the likely cause, so a caller can act (usually: a smaller ε for this nβ).
    """

    def __init__(
        self, message: str, *, chain: int, step: int, cause: str, step_size: float = math.nan
    ) -> None:
        super().__init__(f"{message} (chain {chain}, step {step}): {cause}")
        self.chain = chain
        self.step = step
        self.cause = cause
        self.step_size = step_size
