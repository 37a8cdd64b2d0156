"""Exceptions raised by :mod:`rlct`.

One narrow hierarchy: every error the package raises on bad input is an :class:`RLCTError`
(which is also a :class:`ValueError`, so generic handlers keep working).
"""

from __future__ import annotations


class RLCTError(ValueError):
    """Base class for every error raised by :mod:`rlct` on bad input."""


class InvalidExponentError(RLCTError):
    """An exponent vector is negative, non-integer, all zero, or of the wrong length."""


class InvalidPriorError(RLCTError):
    """A prior exponent h_j is ≤ −1 (the prior is then not integrable) or of the wrong length."""


class NotNonNegativeError(RLCTError):
    """K is visibly not ≥ 0 near the origin (odd or negative leading terms), or K(0) ≠ 0."""


class NotPolynomialError(RLCTError):
    """An expression is not a polynomial in the given variables."""


class InvalidShapeError(RLCTError):
    """Matrix shapes or layer widths do not fit together, or a rank exceeds what the shapes allow."""


class InvalidSeedError(RLCTError):
    """A seed is not a non-negative integer (a negative number, a float, a bool or a string)."""


class NonFiniteError(RLCTError):
    """An input contains NaN or ±inf."""


class InvalidTypeError(RLCTError, TypeError):
    """An argument has the wrong type: a bool where an integer is needed, a float where an exact
    number is needed, a complex or irrational number, or an object that is not a number at all.
    (Also a :class:`TypeError`, which is what such a mistake raises elsewhere in Python.)"""


class InvalidResultError(RLCTError):
    """A result or a claim was built with inconsistent fields (lower > upper, an exact value
    resting on unproven conditions, a 'value' claim with lower ≠ upper)."""


class TooLargeError(RLCTError):
    """An input would need more time or memory than the exact computation allows (a size, a
    degree, an exponent or a string length over its limit); the message says what it would need."""


class UndecidedError(RLCTError):
    """An exact computation met a question it could not decide within its limits (the sign of an
    algebraic number, a resolution deeper than allowed). Callers turn it into an undecided
    condition and bounds; it never becomes a guess."""
