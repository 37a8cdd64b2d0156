"""λ of K = unit·q^e for a quadratic form q that is non-degenerate in the d variables it involves.

Factor K = c·u·q^e over Q (:mod:`rlct.algebra.factor`, u(0) ≠ 0) with q = xᵀAx, det A ≠ 0 on its d
variables, and a uniform prior on them. One blow-up of the origin resolves q^e: in the chart
x_1 = t, x_i = t·v_i, K = t^(2e)·q(1, v)^e·unit with Jacobian t^(d−1), so the exceptional divisor
gives the ratio d/(2e); the strict transform {q(1, v) = 0} is smooth (A is non-singular) and
crosses t = 0 normally, with the ratio 1/e, and it has real points exactly when q is indefinite.
Hence

* q definite (K ≥ 0 when c·u(0)·(sign q)^e > 0): λ = d/(2e), m = 1;
* q indefinite (K ≥ 0 only for even e and c·u(0) > 0): λ = min(d/(2e), 1/e), with m = 2 when
  the two are equal (d = 2: q is a product of two real lines, e.g. x² − 2y², irreducible over Q)
  and m = 1 when d ≥ 3 (the cone: (xy − z²)² has λ = 1/2, m = 1).

Definiteness and det A ≠ 0 are decided exactly (:func:`rlct.algebra.psd.psd_rank`).
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..algebra.factor import LocalFactors, local_factors
from ..algebra.psd import psd_rank, uniform_form
from ..algebra.ranks import rank_of
from ..result import RLCT, Condition

__all__ = ["quadric_power_rlct"]

METHOD = "power of a non-degenerate quadratic form: one blow-up of the origin"


def quadric_power_rlct(
    K: sp.Poly, h: tuple[sp.Rational, ...], local: LocalFactors | None = None
) -> RLCT | None:
    """λ and m of K = c·u·q^e (module docstring); None when K is not of that form, K < 0 near 0,
    or a prior exponent of a variable of q is not 0. ``local``: K's factors, when the caller has
    them."""
    unit_at_0, vanishing = local or local_factors(K)
    if len(vanishing) != 1:
        return None
    q, e = vanishing[0]
    a = uniform_form(q, h)
    if a is None:
        return None
    d = len(a)
    positive, negative = psd_rank(a), psd_rank([[-v for v in row] for row in a])
    if positive == d or negative == d:  # definite
        sign = 1 if positive == d else (-1) ** e
        if unit_at_0 * sign <= 0:
            return None
        lam, mult, kind = sp.Rational(d, 2 * e), 1, "a definite"
    else:
        if e % 2 or unit_at_0 <= 0 or not _non_singular(a):
            return None
        lam = min(sp.Rational(d, 2 * e), sp.Rational(1, e))
        mult, kind = (2 if d == 2 else 1), "an indefinite"
    cond = Condition(
        f"K = unit·({q.as_expr()})^{e}, the unit {unit_at_0} at 0, with {kind} quadratic form "
        f"non-degenerate in its {d} variables (decided over Q) and a uniform prior on them: one "
        "blow-up of the origin resolves it",
        True,
    )
    return RLCT.exact_value(lam, mult, METHOD, (cond,))


def _non_singular(a: list[list[Fraction]]) -> bool:
    return rank_of(a) == len(a)
