"""λ and m of an ideal in four or more variables by the blow-up of a coordinate subspace of
codimension two.

Setting as in :mod:`rlct.blowup.line`, now in n ≥ 4 variables: blow up C = {x_i = x_j = 0}.
Chart j: x_i = x_j·w (the other coordinates unchanged), |det π'| = |x_j|, so the prior becomes
|w|^(h_i)·|x_j|^(h_i+h_j+1)·Π_(k≠i,j)|x_k|^(h_k); chart i: x_j = x_i·x_j'. The points over the
origin form the fibre π⁻¹(0) ≅ RP¹: the line F = {x_j = 0, x_k = 0 (k ≠ i, j)} of chart j, with
coordinate w, and the point x_j' = 0 of chart i. λ = min over these points, m = max over those
attaining (Watanabe 2009, ch. 2 and 4, as for any proper map that is an isomorphism off C).

Along F. The chart's generators are x^e·g_k, x^e their common monomial factor. Where some g_k is
u·v + r with u a non-zero rational, v free of prior and of x^e, not w or x_j, and r zero on F
(each term of r holds a coordinate other than w), v' = g_k is a polynomial change of the whole
chart with constant Jacobian 1/u that maps F onto itself and leaves the prior alone; the other
g's are rewritten in v' (repeated while there is such a generator). (Not the changes of
:mod:`rlct.blowup.straighten` restricted to those keeping F in place: whether the Newton polyhedron
along F decides depends on the generators, and that module's simplifications, its guard against
undoing a monomial generator and its changes inside a generator declined 2 of the 236 forced
blow-ups of ``benchmarks/bench_rlct_subspace.py`` that this rule reads, and decided none more.)
F's generic points are then
read by the Newton polyhedron whose coefficients are polynomials in w
(:mod:`rlct.newton.along_line`), which names finitely many special values; each special point w = s
and chart i's point is an ideal again, solved by the caller (:func:`rlct.blowup.line.fibre_points`).

Watanabe's tanh network with two hidden units, a·tanh(bx) + c·tanh(dx) against the zero function,
has the ideal ⟨ab + cd, ab³ + cd³⟩ (the higher odd moments lie in it). Blow up b = d = 0: in
chart b (d = b·w) the ideal is b·⟨a + cw, b²(a + cw³)⟩, and after a' = a + cw it is b·⟨a', b²·c·w(w² − 1)⟩. In (a', b, c) under the weights (1, 2, 1) its Newton
polyhedron conv{(1, 1, 0), (0, 3, 1)} + R³≥0 is reached at t = 3/4, on the segment's point with
weight 3/4 on (1, 1, 0): λ = 1/(2t) = 2/3, m = 1, off w ∈ {−1, 0, 1}, where the ideal is monomial
after w' = w − s and gives the same; chart d's point (b = d·b') is the same by symmetry. So
λ = 2/3, m = 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import sympy as sp

from ..algebra.monomials import common_monomial, divide_monomial
from ..newton.along_line import AlongLine, newton_along_line
from ..result import Condition
from .line import LinePoint, fibre_points, times_into
from .straighten import change_coordinates

__all__ = ["SubspaceBlowUp", "blow_up_subspace"]


@dataclass(frozen=True)
class SubspaceBlowUp:
    """The blow-up of {x_i = x_j = 0} in n ≥ 4 variables: the chart's changes of coordinates
    (v, g: v' = g), the fibre's generic value and the points to solve."""

    name: ClassVar[str] = "blow-up of a codimension-2 subspace"
    gens: tuple[sp.Symbol, ...]
    center: tuple[int, int]  # (i, j): chart j carries the fibre line, coordinate w = x_i'
    changes: tuple[tuple[sp.Symbol, sp.Expr], ...]
    fibre: AlongLine
    points: tuple[LinePoint, ...]

    @property
    def condition(self) -> Condition:
        x = self.gens
        i, j = self.center
        w = x[i]
        primed = {w: sp.Symbol(f"{w}'")}  # the chart's coordinate w = x_i' in the changes
        changes = "".join(f", then {v}' = {g.xreplace(primed)}" for v, g in self.changes)
        special = ", ".join(str(s) for s in sorted(self.fibre.special)) or "none"
        roots = "".join(f"; {a.text}" for a in self.fibre.algebraic)
        transverse = ", ".join(str(v) for k, v in enumerate(x) if k != i)
        return Condition(
            f"blow-up of {x[i]} = {x[j]} = 0 (chart {x[i]} = {x[j]}·{w}'{changes}): along the "
            f"fibre over the origin ({transverse} = 0), the Newton polyhedron in ({transverse}) "
            f"with coefficients in Q[{w}'] has vertices {list(self.fibre.vertices)} and is "
            f"non-degenerate off {w}' ∈ {{{special}}}, with λ = {self.fibre.lam}, m = "
            f"{self.fibre.mult} (witness {w}' = {self.fibre.witness}; rlct.newton.along_line)"
            f"{roots}; the special points and the chart {x[j]} = {x[i]}·{x[j]}' point are solved "
            f"as ideals; λ = min over the points, m = max over those attaining",
            True,
        )


def blow_up_subspace(
    polys: Sequence[sp.Poly], h: Sequence[sp.Rational], i: int, j: int
) -> SubspaceBlowUp | None:
    """The blow-up of {x_i = x_j = 0} for ⟨polys⟩ in n ≥ 4 variables, all zero there (module
    docstring); None where the Newton polyhedron along the fibre does not decide it or a change
    grows past ``rlct.blowup.straighten.MAX_CHANGE_TERMS``."""
    gens = tuple(polys[0].gens)
    n = len(gens)
    if n < 4:
        return None
    h = tuple(sp.Rational(e) for e in h)
    lifted = [*h]
    lifted[j] = h[i] + h[j] + 1
    chart = [times_into(p, i, j) for p in polys]
    e = common_monomial(chart)
    factor = sp.Mul(*(x**a for x, a in zip(gens, e)))
    strict = [divide_monomial(p, e) for p in chart]
    changed = _changes(strict, lifted, e, i, j)
    if changed is None:
        return None
    strict, changes = changed
    total = [factor * g.as_expr() for g in strict]
    transverse = [x for k, x in enumerate(gens) if k != i]
    known = frozenset({Fraction(0)} if h[i] else ())
    h_transverse = [a for k, a in enumerate(lifted) if k != i]
    fibre = newton_along_line(total, transverse, gens[i], h_transverse, known)
    if fibre is None:
        return None
    chart_j = [p for p in (sp.Poly(sp.expand(f), *gens, domain=sp.QQ) for f in total) if p]
    points = fibre_points(polys, chart_j, h, i, j, fibre.special)
    return SubspaceBlowUp(gens, (i, j), changes, fibre, points)


def _changes(
    strict: list[sp.Poly], h: list[sp.Rational], e: tuple[int, ...], i: int, j: int
) -> tuple[list[sp.Poly], tuple[tuple[sp.Symbol, sp.Expr], ...]] | None:
    """The changes v' = g_k of the module docstring, made while one applies: the generators in
    the new coordinates (v' keeps v's name) and the changes made; None past the size limit."""
    gens = strict[0].gens
    done: list[tuple[sp.Symbol, sp.Expr]] = []
    while (found := _affine(strict, h, e, i, j, {v for v, _ in done})) is not None:
        a, k = found
        g = strict[a]
        rewritten = change_coordinates(strict, k, g, a, (0,) * len(gens))
        if rewritten is None:
            return None
        strict = rewritten
        done.append((gens[k], g.as_expr()))
    return strict, tuple(done)


def _affine(
    strict: list[sp.Poly],
    h: list[sp.Rational],
    e: tuple[int, ...],
    i: int,
    j: int,
    done: set[sp.Symbol],
) -> tuple[int, int] | None:
    """(generator index, variable index) of the first g = u·v + r that the module docstring
    allows as a change, or None."""
    gens = strict[0].gens
    for a, g in enumerate(strict):
        if g.is_zero or g.as_expr() in done:
            continue
        for k, v in enumerate(gens):
            if k in (i, j) or h[k] != 0 or e[k] != 0 or v in done or g.degree(v) != 1:
                continue
            if not g.diff(v).is_ground:
                continue  # the coefficient of v is not a constant
            rest = [m for m, _ in g.terms() if m[k] == 0]
            if all(any(m[c] for c in range(len(gens)) if c != i) for m in rest):
                return a, k
    return None
