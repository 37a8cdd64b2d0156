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
from .newton import ideal_analysis, newton_analysis
from .normal_crossing import normal_crossing
from .polynomial import from_ideal, from_polynomial
from .quadratic import (
    GenericRank,
    generic_rank,
    generic_rank_certificate,
    jacobian,
    jacobian_rank,
    modular_addition_data,
)
from .quadratic import llc as quadratic_llc
from .quadratic_theorems import (
    TheoremCheck,
    TheoremValue,
    check_theorems,
    corollary_5_3,
    theorem_4_1,
    theorem_4_2,
    theorem_5_1,
    theorem_5_2,
    theorem_5_5,
    theorem_G_1,
    theorem_G_2,
    theorem_G_5,
    theorem_G_6,
)
from .result import RLCT, Condition

__all__ = [
    "RLCT",
    "Condition",
    "GenericRank",
    "InvalidExponentError",
    "InvalidPriorError",
    "InvalidShapeError",
    "NonFiniteError",
    "NotNonNegativeError",
    "NotPolynomialError",
    "RLCTError",
    "TheoremCheck",
    "TheoremValue",
    "check_theorems",
    "corollary_5_3",
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
    "theorem_4_1",
    "theorem_4_2",
    "theorem_5_1",
    "theorem_5_2",
    "theorem_5_5",
    "theorem_G_1",
    "theorem_G_2",
    "theorem_G_5",
    "theorem_G_6",
]
