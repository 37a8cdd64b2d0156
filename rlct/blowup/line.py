"""λ and m of an ideal in three variables by the blow-up of a coordinate line through 0.

Setting as in :mod:`rlct.blowup.origin`: ζ(z) = ∫_U K^z Π|x_j|^(h_j) dx near 0, K = Σ f_k², here in
three variables (x_i, x_j, x_k). Blow up the line C = {x_i = x_j = 0} (the x_k-axis). Chart j:
x_i = x_j·x_i' (x_j, x_k unchanged), with |det π'| = |x_j|, so the prior becomes
|x_i'|^(h_i)·|x_j|^(h_i+h_j+1)·|x_k|^(h_k); chart i: x_j = x_i·x_j', prior
|x_i|^(h_i+h_j+1)·|x_j'|^(h_j)·|x_k|^(h_k). π is proper and an isomorphism off C, and the
points over the origin form the fibre π⁻¹(0) ≅ RP¹: in chart j the line F = {x_j = x_k = 0}
(coordinate w = x_i'), and the one point x_j' = 0 of chart i. As for the blow-up of a point
(Watanabe 2009, ch. 2 and 4), ζ near 0 is a finite sum of integrals with integrands ≥ 0 over
small neighbourhoods of the points of π⁻¹(0), whose leading poles add and never cancel:

    λ = min over the points P of the fibre of λ_P,   m = max{m_P : λ_P = λ}.

The generic points of F are read by the plane resolution with the parameter w
(:mod:`rlct.plane.along_line`, in the transverse coordinates (x_j, x_k)), which also names F's
finitely many special values; each special point w = s, and chart i's point, is an ideal again (with
w' = w − s; the prior on w is a unit where s ≠ 0), solved by the caller.

Where it helps. After the blow-up of the origin a point can repeat its kind (⟨x²z, yz − x³⟩'s
point [1 : 0 : 0] has x²z³·⟨xz, yz − x⟩ at the next level's special point): there the line
x = z = 0 lies in the zeros, and in chart z the ideal is z⁶x'²·⟨zx', y − x'⟩, whose point
x' = 0 is a monomial ideal after y' = y − x'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar, Protocol

import sympy as sp

from ..newton.along_line import AlongLine
from ..plane.along_line import LineResolution, resolve_along_line
from ..result import RLCT, Condition
from .origin import least_over

__all__ = [
    "FibreBlowUp",
    "LineBlowUp",
    "LinePoint",
    "blow_up_line",
    "combine_line",
    "fibre_points",
    "times_into",
]

MAX_LINE_TERMS = 400  # terms of K = Σ f_k² handed to the plane resolution along the fibre


@dataclass(frozen=True)
class LinePoint:
    """A point of the fibre still to be solved: its ``label``, the pulled-back generators in
    coordinates centred there (the old names) and their prior exponents ``h``."""

    label: str
    generators: tuple[sp.Poly, ...]
    h: tuple[sp.Rational, ...]


@dataclass(frozen=True)
class LineBlowUp:
    """The blow-up of {x_i = x_j = 0}: the fibre's generic value and the points to solve."""

    name: ClassVar[str] = "blow-up of a line"
    gens: tuple[sp.Symbol, ...]
    line: tuple[int, int]  # (i, j): chart j carries the fibre line
    fibre: LineResolution
    points: tuple[LinePoint, ...]

    @property
    def condition(self) -> Condition:
        x = self.gens
        i, j = self.line
        (k,) = {0, 1, 2} - {i, j}
        special = ", ".join(str(s) for s in sorted(self.fibre.special)) or "none"
        return Condition(
            f"blow-up of the line {x[i]} = {x[j]} = 0 (chart {x[i]} = {x[j]}·{x[i]}'): along the "
            f"fibre {x[j]} = {x[k]} = 0 over the origin, the plane resolution in ({x[j]}, {x[k]}) "
            f"with {x[i]}' as a parameter over Q({x[i]}') gives λ = {self.fibre.lam}, m = "
            f"{self.fibre.mult} off the special values {x[i]}' ∈ {{{special}}} (witness "
            f"{x[i]}' = {self.fibre.witness}; rlct.plane.along_line); the special points and the "
            f"chart {x[j]} = {x[i]}·{x[j]}' point are solved as ideals; λ = min over the points, "
            f"m = max over those attaining",
            True,
        )


def blow_up_line(
    polys: Sequence[sp.Poly], h: Sequence[sp.Rational], i: int, j: int
) -> LineBlowUp | None:
    """The blow-up of {x_i = x_j = 0} for ⟨polys⟩ in three variables (module docstring); None
    where the plane resolution along the fibre declines or K is over the size limit."""
    gens = tuple(polys[0].gens)
    (k,) = {0, 1, 2} - {i, j}
    xi, xj, xk = gens[i], gens[j], gens[k]
    h = tuple(sp.Rational(e) for e in h)
    chart_j = [times_into(p, i, j) for p in polys]
    K = sum((q**2 for q in chart_j[1:]), chart_j[0] ** 2).reorder(xj, xk, xi)
    if len(K.terms()) > MAX_LINE_TERMS:
        return None
    fibre = resolve_along_line(K, (h[i] + h[j] + 1, h[k]), frozenset({Fraction(0)} if h[i] else ()))
    if fibre is None:
        return None
    points = fibre_points(polys, chart_j, h, i, j, fibre.special)
    return LineBlowUp(gens, (i, j), fibre, points)


def fibre_points(
    polys: Sequence[sp.Poly],
    chart_j: Sequence[sp.Poly],
    h: tuple[sp.Rational, ...],
    i: int,
    j: int,
    special: frozenset[Fraction],
) -> tuple[LinePoint, ...]:
    """The points of the fibre over 0 still to solve after the blow-up of {x_i = x_j = 0}: each
    special value s of x_i' in ``chart_j`` (its generators, in coordinates where the fibre is
    the x_i-axis; w' = x_i' − s, whose prior |x_i'|^(h_i) is a unit where s ≠ 0), and the point
    x_j' = 0 of chart i, from the original generators ``polys`` under the prior ``h``."""
    gens = tuple(polys[0].gens)
    xi, xj = gens[i], gens[j]
    lifted = h[i] + h[j] + 1
    hj = _with(h, {j: lifted})
    points = []
    for s in sorted(special):
        shift = sp.Rational(s.numerator, s.denominator)
        moved = tuple(_poly(q.as_expr().xreplace({xi: xi + shift}), gens) for q in chart_j)
        prior = hj if s == 0 else _with(hj, {i: sp.Integer(0)})
        points.append(LinePoint(f"{xi}' = {s} on the fibre", moved, prior))
    chart_i = tuple(times_into(p, j, i) for p in polys)
    points.append(LinePoint(f"{xj}' = 0 in chart {xi}", chart_i, _with(h, {i: lifted})))
    return tuple(points)


class FibreBlowUp(Protocol):
    """What :func:`combine_line` reads of a blow-up whose fibre over 0 is a line and points."""

    name: ClassVar[str]

    @property
    def condition(self) -> Condition: ...

    @property
    def fibre(self) -> LineResolution | AlongLine: ...

    @property
    def points(self) -> tuple[LinePoint, ...]: ...


def combine_line(line: FibreBlowUp, results: Sequence[RLCT]) -> RLCT:
    """λ = min over the fibre's generic points and ``line.points`` (solved: ``results``), m = max
    over those attaining (:func:`rlct.blowup.origin.least_over`)."""
    fibre = RLCT.exact_value(line.fibre.lam, line.fibre.mult, "the fibre's generic points")
    roots = [a.part("the fibre's points") for a in line.fibre.algebraic]
    points = [(p.label, r) for p, r in zip(line.points, results)]
    return least_over(line.condition, [fibre, *roots], points, line.name)


def times_into(p: sp.Poly, i: int, j: int) -> sp.Poly:
    """p after x_i ↦ x_j·x_i: each exponent of x_i is added to that of x_j."""
    terms = {}
    for m, c in p.terms():
        e = list(m)
        e[j] += e[i]
        terms[tuple(e)] = c
    return sp.Poly.from_dict(terms, *p.gens, domain=sp.QQ)


def _poly(expr: sp.Expr, gens: tuple[sp.Symbol, ...]) -> sp.Poly:
    return sp.Poly(sp.expand(expr), *gens, domain=sp.QQ)


def _with(h: tuple[sp.Rational, ...], changes: dict[int, sp.Rational]) -> tuple[sp.Rational, ...]:
    return tuple(changes.get(n, e) for n, e in enumerate(h))
