"""RLCT of a monomial K in normal-crossing form.

K(w) = Π_j w_j^(2 k_j) with prior φ(w) = Π_j |w_j|^(h_j) (times a positive bounded factor):
λ = min over j with k_j > 0 of (h_j + 1) / (2 k_j), and m = the number of j attaining the minimum.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from .._validate import exponent_vector, prior_vector
from ..result import RLCT, Condition

__all__ = ["normal_crossing"]


def normal_crossing(k: Sequence[int], h: Sequence[object] | None = None) -> RLCT:
    """λ and m of K = Π w_j^(2 k_j) under the prior Π |w_j|^(h_j) (h = 0 when omitted)."""
    kk = exponent_vector(k, "k")
    hh = prior_vector(h, len(kk), "h")
    ratios = [sp.Rational(hj + 1) / (2 * kj) for kj, hj in zip(kk, hh) if kj > 0]
    lam = min(ratios)
    mult = sum(1 for r in ratios if r == lam)
    return RLCT.exact_value(
        lam,
        mult,
        "normal crossing: λ = min_j (h_j+1)/(2k_j)",
        (Condition("K = Π w_j^(2k_j) is in normal-crossing form at the origin", True),),
    )
