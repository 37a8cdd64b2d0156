"""Exact learning coefficients (RLCTs) with sympy: no floats, no torch.

Every function returns an :class:`RLCT`: λ as a sympy ``Rational``, its multiplicity m, and the
conditions the value rests on. When a condition cannot be decided the result says so
(``exact=False`` with rigorous bounds) instead of guessing.
"""

from .closed_forms import (
    deep_linear_network,
    dln_active_set,
    reduced_rank_regression,
    regular_value,
)
from .errors import (
    InvalidExponentError,
    InvalidPriorError,
    InvalidShapeError,
    NonFiniteError,
    NotNonNegativeError,
    NotPolynomialError,
    RLCTError,
)
from .newton import from_ideal, from_polynomial, ideal_analysis, newton_analysis
from .normal_crossing import normal_crossing
from .result import RLCT, Condition

__all__ = [
    "RLCT",
    "Condition",
    "InvalidExponentError",
    "InvalidPriorError",
    "InvalidShapeError",
    "NonFiniteError",
    "NotNonNegativeError",
    "NotPolynomialError",
    "RLCTError",
    "deep_linear_network",
    "dln_active_set",
    "from_ideal",
    "from_polynomial",
    "ideal_analysis",
    "newton_analysis",
    "normal_crossing",
    "reduced_rank_regression",
    "regular_value",
]
