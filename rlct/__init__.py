"""Exact learning coefficients (RLCTs) with sympy: no floats, no torch.

Every function returns an :class:`RLCT`: λ as a sympy ``Rational``, its multiplicity m, and the
conditions the value rests on. When a condition cannot be decided the result says so
(``exact=False`` with rigorous bounds) instead of guessing.

The folders, in import order: each imports only from those above it (tests/test_rlct_structure.py
holds the order), so reading down follows the exact layer from its tools to its answers.

- top level: ``result`` (the :class:`RLCT` type), ``errors``, ``parsing`` and ``expressions`` (the
  user's K read without evaluating code, its size bounded), ``time_limit``, ``_validate``.
- ``algebra/``: exact tools: factorisations over Q, bounded Gröbner bases, ranks, linear
  programmes, real algebraic numbers, real zeros, quadratic forms by their rank, monomial factors.
- ``newton/``: Newton polyhedra; λ = 1/t when K (or an ideal) is non-degenerate, also along a line.
- ``shapes/``: K of a recognised shape, solved at once (smooth crossings, quadric powers,
  hyperplane arrangements, powers of a non-degenerate hypersurface).
- ``reductions/``: the same λ from a simpler problem (fewer variables, blocks, eliminations,
  linear and triangular changes of coordinates, simpler generators).
- ``plane/``: two variables: the embedded resolution by toric charts (and along a line of zeros).
- ``blowup/``: blow-ups of the origin (plain and weighted), of coordinate subspaces and lines.
- ``cascade.py``: :func:`from_polynomial` and :func:`from_ideal`, the order of attempts over the
  folders above.
- ``local/``: :func:`local_llc`, λ and m at any point of the zero set (K translated there, then
  the cascade).
- ``closed_forms/``: normal crossings and the literature's values (regular models, RRR, DLNs),
  and the local λ of linear networks at any factorisation of the true map.
- ``quadratic/``: two-layer quadratic networks: Jacobian ranks, λ at a point, the paper's theorems.
"""

from .cascade import from_ideal, from_polynomial
from .closed_forms.literature import (
    deep_linear_network,
    dln_active_set,
    reduced_rank_regression,
    regular_value,
)
from .closed_forms.local_linear import dln_local_lambda, rrr_local_lambda
from .closed_forms.normal_crossing import normal_crossing
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
from .local import local_ideal_llc, local_llc
from .newton.analysis import ideal_analysis, newton_analysis
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
    "__version__",
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
    "dln_local_lambda",
    "from_ideal",
    "from_polynomial",
    "generic_rank",
    "generic_rank_certificate",
    "ideal_analysis",
    "jacobian",
    "jacobian_rank",
    "local_ideal_llc",
    "local_llc",
    "modular_addition_data",
    "newton_analysis",
    "normal_crossing",
    "quadratic_llc",
    "reduced_rank_regression",
    "regular_value",
    "rrr_local_lambda",
]


def _version() -> str:
    """The installed distribution's version (``slt-check``); "unknown" run from a bare tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("slt-check")
    except PackageNotFoundError:
        return "unknown"


__version__ = _version()
