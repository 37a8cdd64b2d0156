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


class NonFiniteError(RLCTError):
    """An input contains NaN or ±inf."""


class UndecidedError(RLCTError):
    """An exact computation met a question it could not decide within its limits (the sign of an
    algebraic number, a resolution deeper than allowed). Callers turn it into an undecided
    condition and bounds; it never becomes a guess."""
