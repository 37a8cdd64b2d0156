"""A line of zeros on the exceptional divisor that lies inside a wall.

Setting as in :mod:`rlct.blowup.families`, three variables: in a chart (u, y, w) of the blow-up
the ideal is u^e·y^b·w^c·J̃ under the prior |u|^(h_u)·|y|^(h_y)·|w|^(h_w), and the zeros of J̃ on
E contain the line L = {u = y = 0} of a *wall* y (b > 0 or h_y ≠ 0). There (u, y) carry the
monomial factor and the prior, so the points of L are never of the kinds
⟨v_1..v_s, u^j⟩ that :mod:`rlct.blowup.families` recognises. Read the generators F_k instead as
polynomials in (u, y) with coefficients in Q[w] and Γ as the Newton polygon of their supports:
where the ideal is Newton non-degenerate along L off finitely many rational values of w
(:mod:`rlct.newton.along_line`), λ and m there are Γ's under the weights (h_u + 1, h_y + 1, 1);
those values and w = 0 (when w is a wall too) are the special points, solved one by one by the
caller, except the irrational roots of a coefficient on a compact face, which
:mod:`rlct.newton.along_line` reads itself. Where Γ's faces are degenerate all along L, K = Σ F_k²
goes to the plane resolution with w as a parameter (:mod:`rlct.plane.along_line`).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import sympy as sp

from ..newton.along_line import AlongLine, newton_along_line
from ..plane.along_line import LineResolution, resolve_along_line

__all__ = ["wall_line"]

Point = tuple[Fraction, ...]


def wall_line(
    total: Sequence[sp.Expr],
    u: sp.Symbol,
    wall: sp.Symbol,
    other: sp.Symbol,
    h: tuple[sp.Rational, sp.Rational],
    other_is_wall: bool,
) -> AlongLine | LineResolution | None:
    """λ, m at the generic points of L = {u = ``wall`` = 0}, a witness w₀, the rational special
    values of ``other`` and the irrational points read on their own (``algebraic``; module
    docstring), for the chart's whole ideal ``total`` (monomial factor included) under the prior
    exponents ``h`` = (h_u, h_wall); None when a condition fails. Where Γ's faces are degenerate
    along L, the plane resolution with a parameter (:mod:`rlct.plane.along_line`) on K = Σ F_k²
    takes over."""
    known = frozenset({Fraction(0)} if other_is_wall else ())  # w = 0 is a wall itself
    found = newton_along_line(total, (u, wall), other, h, known)
    if found is not None:
        return found
    K = sp.Poly(sp.expand(sum((f**2 for f in total), sp.S.Zero)), u, wall, other)
    return resolve_along_line(K, h, known)
