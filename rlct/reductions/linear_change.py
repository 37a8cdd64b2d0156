"""An ideal whose generators are products of independent linear forms: a monomial ideal after a
linear change of coordinates.

Factor each generator f_i over Q. Suppose every factor that vanishes at 0 is a linear form ℓ
and the distinct forms ℓ_1..ℓ_k (up to scale), together with the coordinates x_j that carry a
prior exponent h_j ≠ 0 and are not among them, are linearly independent. Complete them with
coordinates to a basis: u = A·w with A invertible over Q. In u the prior is Π |u|^h (each x_j
with h_j ≠ 0 is a u-coordinate, up to scale), dw = |det A|⁻¹ du, and each f_i is a non-zero
constant times a unit times the monomial Π_k u_k^(a_ik). Units do not change the ideal near 0,
so λ and m are those of the monomial ideal ⟨u^(a_i)⟩, which its Newton polyhedron gives exactly
(:func:`rlct.newton.analysis.ideal_step`). (x + y + z)⁴ + (x − y)²z² is ⟨u², v·z⟩:
λ = 1/4 + 1/2 = 3/4.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..algebra.factor import constant_term, factor_list, linear_part
from ..algebra.ranks import rank_of
from ..result import Condition

__all__ = ["LinearChange", "monomial_after_linear_change"]


@dataclass(frozen=True)
class LinearChange:
    """The monomial generators in u = A·w (``names``: the forms u_k as text) and their prior
    exponents ``h``."""

    generators: tuple[sp.Poly, ...]
    h: tuple[sp.Rational, ...]
    names: tuple[str, ...]

    @property
    def condition(self) -> Condition:
        forms = ", ".join(f"{u} = {n}" for u, n in zip(self.generators[0].gens, self.names))
        return Condition(
            f"every generator is a unit times a product of the linear forms {forms}, independent "
            "with the prior coordinates: in these coordinates (a linear change, constant "
            "Jacobian) the ideal is monomial",
            True,
        )


def monomial_after_linear_change(
    polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...]
) -> LinearChange | None:
    """The monomial ideal in u = A·w (module docstring); None when a vanishing factor is not a
    linear form or the forms and prior coordinates are dependent."""
    gens, d = polys[0].gens, len(polys[0].gens)
    rows: list[list[Fraction]] = []
    exponents: list[dict[int, int]] = []
    for p in polys:
        found: dict[int, int] = {}
        for f, e in factor_list(p)[1]:
            if constant_term(f) != 0:
                continue  # a unit near 0
            if not f.is_homogeneous or f.total_degree() != 1:
                return None
            row = _normalised(linear_part(f))
            if row not in rows:
                rows.append(row)
            k = rows.index(row)
            found[k] = found.get(k, 0) + e
        exponents.append(found)
    new_h = [sp.Integer(0)] * len(rows)
    for j in [j for j in range(d) if h[j] != 0] + [j for j in range(d) if h[j] == 0]:
        axis = [Fraction(int(i == j)) for i in range(d)]
        if axis in rows:
            new_h[rows.index(axis)] = h[j]
        elif h[j] != 0 or rank_of([*rows, axis]) > len(rows):
            rows.append(axis)
            new_h.append(h[j])
    if len(rows) != d or rank_of(rows) < d:
        return None  # dependent forms (or a prior coordinate in their span)
    us = sp.symbols(f"u_0:{d}")
    monomials = tuple(
        sp.Poly.from_dict({tuple(a.get(k, 0) for k in range(d)): 1}, *us) for a in exponents
    )
    names = tuple(str(sum((c * x for c, x in zip(row, gens)), sp.Integer(0))) for row in rows)
    return LinearChange(monomials, tuple(new_h), names)


def _normalised(row: list[Fraction]) -> list[Fraction]:
    """The form scaled so that its first non-zero coefficient is 1 (ℓ and c·ℓ are one form)."""
    lead = next(c for c in row if c != 0)
    return [c / lead for c in row]
