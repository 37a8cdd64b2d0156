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
    InvalidResultError,
    InvalidSeedError,
    InvalidShapeError,
    InvalidTypeError,
    NonFiniteError,
    NotNonNegativeError,
    NotPolynomialError,
    RLCTError,
    TooLargeError,
)
from .monomial import normal_crossing
from .newton import ideal_analysis, newton_analysis
from .polynomial import from_ideal, from_polynomial
from .quadratic import (
    GenericRank,
    TheoremCheck,
    check_theorems,
    generic_rank,
    generic_rank_certificate,
    jacobian,
    jacobian_rank,
    modular_addition_data,
)
from .quadratic import llc as quadratic_llc
from .quadratic import theorems as _theorems
from .quadratic.theorems import *  # noqa: F403 (TheoremValue and theorem_*: named in its __all__)
from .result import RLCT, Condition

__all__ = [
    *_theorems.__all__,
    "RLCT",
    "Condition",
    "GenericRank",
    "InvalidExponentError",
    "InvalidPriorError",
    "InvalidResultError",
    "InvalidSeedError",
    "InvalidShapeError",
    "InvalidTypeError",
    "NonFiniteError",
    "NotNonNegativeError",
    "NotPolynomialError",
    "RLCTError",
    "TheoremCheck",
    "TooLargeError",
    "check_theorems",
    "deep_linear_network",
    "dln_active_set",
    "from_ideal",
    "from_polynomial",
    "generic_rank",
    "generic_rank_certificate",
    "ideal_analysis",
    "jacobian",
    "jacobian_rank",
    "modular_addition_data",
    "newton_analysis",
    "normal_crossing",
    "quadratic_llc",
    "reduced_rank_regression",
    "regular_value",
]
