"""λ of K whose zero set near 0 is smooth hypersurfaces crossing normally, found by factoring K.

Factor K = c·u·Π f_i^(e_i) over Q (:mod:`rlct.algebra.factor`), u the product of the factors with
u(0) ≠ 0. Suppose every e_i is even, c·u(0) > 0, and the linear parts ∇f_i(0) of the factors
vanishing at 0 are linearly independent together with the coordinates x_j that carry a prior
exponent h_j ≠ 0 (a factor equal to x_j is that coordinate). Then by the inverse function
theorem they are part of an analytic coordinate system y near 0 (fixing 0, Jacobian a non-zero
constant at 0), in which

    K = unit·Π y_i^(e_i),   prior = unit·Π |y_j|^(h_j),

a normal crossing: λ = min over the factors of (h_i + 1)/e_i (h_i the prior exponent of the
coordinate a factor is, else 0), and m the number of factors that attain it (REFERENCE §2).
This is exact for any degree and cheap (one factorisation and one rank over Q), where the Newton
polyhedron of K as written is degenerate: (x − y)²(x + y + z)² (λ = 1/2, m = 2), (x + y + z)^60
(λ = 1/60, which took 132 s), (y − x²)²(z − x³)⁴ (λ = 1/4).

The same argument reads an ideal ⟨f_1..f_r⟩ whose gradients at 0 (with the prior's coordinates)
are independent: the f_i are coordinates, the ideal is ⟨y_1..y_r⟩, λ = r/2 and m = 1
(:func:`regular_ideal_rlct`; the Newton polyhedron of ten such generators can have 2¹¹ faces).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction

import sympy as sp

from ..algebra.factor import LocalFactors, linear_part, local_factors
from ..algebra.ranks import rank_of
from ..result import RLCT, Condition

__all__ = ["coordinate_index", "regular_ideal_rlct", "smooth_crossing_rlct"]

METHOD = "smooth normal crossing: factors of K with independent gradients at 0"


def coordinate_index(f: sp.Poly) -> int | None:
    """j when f is the coordinate x_j (a primitive factor, so with coefficient 1), else None."""
    if len(f.terms()) != 1 or f.total_degree() != 1:
        return None
    return next(j for j, e in enumerate(f.monoms()[0]) if e)


def independent_with_coordinates(
    rows: Sequence[Sequence[Fraction]], coordinates: Iterable[int], n: int
) -> bool:
    """The gradients ``rows`` together with those of the coordinates x_j (j in ``coordinates``,
    n variables) are linearly independent over Q (exact rank,
    :func:`rlct.algebra.ranks.rank_of`)."""
    rows = [*rows, *([Fraction(int(i == j)) for i in range(n)] for j in coordinates)]
    return rank_of(rows) == len(rows)


def smooth_crossing_rlct(
    K: sp.Poly, h: tuple[sp.Rational, ...], local: LocalFactors | None = None
) -> RLCT | None:
    """λ and m of K when its vanishing factors and the prior's coordinates cross normally at 0
    (module docstring); None when K is not of that form, or when every vanishing factor is a
    coordinate (a monomial times a unit: the Newton polyhedron's case). ``local``: K's factors,
    when the caller has them."""
    unit_at_0, vanishing = local or local_factors(K)
    if not vanishing or all(coordinate_index(f) is not None for f, _ in vanishing):
        return None
    if unit_at_0 <= 0 or any(e % 2 for _, e in vanishing):
        return None  # K changes sign or is ≤ 0 near 0: not a K ≥ 0 of this form
    prior = {j: hj for j, hj in enumerate(h) if hj != 0}
    rows, ratios = [], []
    for f, e in vanishing:
        j = coordinate_index(f)
        hj = prior.pop(j, sp.Integer(0)) if j is not None else sp.Integer(0)
        rows.append(linear_part(f))
        ratios.append((hj + 1) / sp.Integer(e))
    if not independent_with_coordinates(rows, prior, len(h)):
        return None  # the hypersurfaces do not cross normally at 0
    lam = min(ratios)
    named = ", ".join(f"({f.as_expr()})^{e}" for f, e in vanishing)
    cond = Condition(
        f"K = unit·{named} with the unit {unit_at_0} > 0 at 0 and even exponents; the factors' "
        f"gradients at 0{' and the prior coordinates' if prior else ''} are linearly "
        f"independent over Q (rank {len(rows) + len(prior)}), so they are coordinates near 0 in "
        "which K and the prior are a normal crossing",
        True,
    )
    return RLCT.exact_value(lam, ratios.count(lam), METHOD, (cond,))


def regular_ideal_rlct(polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...]) -> RLCT | None:
    """λ = r/2, m = 1 for ⟨f_1..f_r⟩ whose gradients at 0, together with the coordinates x_j
    that carry a prior exponent, are linearly independent over Q: by the inverse function
    theorem the f_i and those x_j are part of a coordinate system near 0, in which the ideal is
    ⟨y_1..y_r⟩ and the prior unit·Π|x_j|^(h_j) is free of the y_i, so K = Σ y_i² gives r/2 with
    m = 1 (any number of generators, where the Newton polyhedron may have too many faces to
    check). None otherwise."""
    prior = [j for j, hj in enumerate(h) if hj != 0]
    rows = [linear_part(p) for p in polys]
    if not polys or not independent_with_coordinates(rows, prior, len(h)):
        return None
    cond = Condition(
        f"the {len(polys)} generators' gradients at 0"
        f"{' and the prior coordinates' if prior else ''} are linearly independent over Q "
        f"(rank {len(rows) + len(prior)}), so the generators are coordinates near 0 and the "
        "ideal is theirs",
        True,
    )
    return RLCT.exact_value(
        sp.Rational(len(polys), 2),
        1,
        "regular ideal: generators with independent gradients",
        (cond,),
    )
