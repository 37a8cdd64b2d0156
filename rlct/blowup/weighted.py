"""λ and m of an ideal whose generators are all quasi-homogeneous for one weight: the weighted
blow-up of the origin.

Setting as in :mod:`rlct.blowup.origin`: ζ(z) = ∫_U K^z Π|x_j|^(h_j) dx near 0, K = Σ f_k², here
with every f_k w-homogeneous of degree d_k for one w ∈ Z^n, w_j ≥ 1 (f_k(t^w·x) = t^(d_k)·f_k(x);
the weights from :func:`rlct.algebra.scaling.scaling_weights`), w ≠ (1, …, 1), and no monomial
dividing every generator. Chart (i, s), s = 1, and also s = −1 where w_i is even:

    x_i = s·u^(w_i),   x_j = u^(w_j)·y_j (j ≠ i),   f_k∘π = u^(d_k)·g_k(y),  g_k = f_k(y, y_i = s),

exactly (no higher powers of u: that is what quasi-homogeneity buys). |det π'| = w_i·|u|^(|w|−1)
and the prior becomes |u|^(Σ_j w_j·h_j)·Π_(j≠i)|y_j|^(h_j). Off u = 0 each chart map is a local
diffeomorphism at most 2-to-1, and the charts' images of {|y| ≤ 1} cover a punctured
neighbourhood of 0 (at x ≠ 0 take i maximising |x_i|^(1/w_i)). So vol{K < ε} near 0 lies within
constant factors of the sum over the charts of the pulled-back volumes near u = 0, and, as for
the blow-up of a point (Watanabe 2009, ch. 2 and 4), λ = min over the points P of the charts'
divisors {u = 0}, m = max over those attaining.

With o = min d_k the chart's ideal is u^o·⟨u^(d_k − o)·g_k⟩. Where a g_k with d_k = o is non-zero
at P it is a unit, K∘π = u^(2o)·unit and λ_P = Σ_j w_j(h_j + 1)/(2o), m_P = 1 (a coordinate y_j
with a prior but absent from K adds no pole). The zeros Z of those g_k in the chart are finitely
many rational points, solved one by one by the caller as ideals, or curves whose good points are
read by :mod:`rlct.blowup.families` with the chart's exponents (e, hu) = (o, |w| − 1 + Σ w_j h_j).

⟨x²z − y³, yz − x³⟩ (zeros: the z-axis and the curve (t⁴, t⁵, t⁷)) under the uniform prior:
w = (4, 5, 7), d = (15, 12), o = 12, λ_E = 16/24 = 2/3. In chart x (s = 1) Z = {yz = 1}, where
the ideal is u¹²·⟨yz − 1, u³(z − y³)⟩ = u¹²·⟨v, u³⟩ off z = y³: Newton's polygon of
u²⁴·(v² + u⁶) under |u|¹⁵ is met at t = 30/19, λ = 19/30, m = 1. Its special points y = z = ±1
and those of the other charts give the same or more (derived in the tests): λ = 19/30, m = 1.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import sympy as sp

from ..algebra.monomials import common_monomial
from ..algebra.projective_zeros import MAX_FORM_DEGREE, MAX_FORM_TERMS, affine_zeros, too_costly
from ..algebra.scaling import scaling_weights
from ..result import RLCT, Condition, Solve
from .families import Family, chart_families
from .line import LinePoint
from .origin import MAX_PULLED_TERMS, family_parts, least_over

__all__ = [
    "MAX_WEIGHT",
    "MAX_WEIGHTED_VARIABLES",
    "WeightedBlowUp",
    "blow_up_weighted",
    "integer_weights",
    "same_orbit",
]

MAX_WEIGHTED_VARIABLES = 6  # charts are 2n at most; the curves' reading stops at four
MAX_WEIGHT = 10_000  # larger weights are declined (exponents of u grow with them)


@dataclass(frozen=True)
class WeightedBlowUp:
    """The weighted blow-up of the origin for weights ``weights``: the least degree ``order``,
    the divisor's generic value, the curves' kinds of good points, and the points to solve."""

    name: ClassVar[str] = "weighted blow-up of the origin"
    gens: tuple[sp.Symbol, ...]
    weights: tuple[int, ...]
    order: int
    generic: sp.Rational
    families: tuple[Family, ...]
    points: tuple[LinePoint, ...]
    classes: tuple[int, ...]  # per point: its point of the weighted projective space

    @property
    def condition(self) -> Condition:
        names = ", ".join(map(str, self.gens))
        kinds = "; ".join(f"{f.label}: λ = {f.lam}, m = {f.mult}" for f in self.families)
        curves = f"; along curves of zeros: {kinds} (rlct.blowup.families)" if kinds else ""
        points = ", ".join(p.label for p in self.points) or "none"
        return Condition(
            f"weighted blow-up of the origin in ({names}) with weights {list(self.weights)} "
            f"(x_i = ±u^(w_i), x_j = u^(w_j)·y_j; every generator is quasi-homogeneous for "
            f"them, least degree {self.order}): off the zeros of the least-degree generators "
            f"on the divisor λ = {self.generic}, m = 1{curves}; special points solved as ideals: "
            f"{points}; λ = min over the points, m = max over those attaining",
            True,
        )

    def solve_points(self, solve: Solve) -> RLCT:
        """λ = min over the divisor's parts and its points, m = max over those attaining
        (:func:`rlct.blowup.origin.least_over`), each point solved by ``solve`` in one chart after
        another until one is exact (:func:`_one_germ`). Where a point stays bounds that reach
        down to the least exact λ so far, the result cannot be exact: the points not yet
        solved are left, and only the upper bound found is returned (with lower bound 0)."""
        fixed = [
            RLCT.exact_value(self.generic, 1, "the weighted divisor's generic points"),
            *(part for f in self.families for part in family_parts(f, self.generic)),
        ]
        least = min(r.lam for r in fixed if r.exact)
        labelled = []
        for c in sorted(set(self.classes)):
            tried = []
            for p in (p for p, k in zip(self.points, self.classes) if k == c):
                tried.append((p, solve(p.generators, p.h)))
                if tried[-1][1].exact:
                    break
            labelled.append(_one_germ(tried))
            got = labelled[-1][1]
            if not got.exact and got.lower <= least:
                upper = min(r.upper for r in [*fixed, *(r for _, r in labelled)])
                text = f"{self.name} (at {labelled[-1][0]}: {got.method}; not exact)"
                return RLCT.bounds(0, upper, text, (self.condition, *got.conditions))
            least = min(least, got.lam) if got.exact else least
        return least_over(self.condition, fixed, labelled, self.name)


def _signed(family: Family, i: int, s: int) -> Family:
    """A chart x_i = −u^(w_i)'s family with its witness's coordinate i set to −1 (the families
    module writes it as 1)."""
    if s > 0 or family.witness is None:
        return family
    witness = tuple(Fraction(s) if j == i else c for j, c in enumerate(family.witness))
    return dataclasses.replace(family, witness=witness)


def _one_germ(same: Sequence[tuple[LinePoint, RLCT]]) -> tuple[str, RLCT]:
    """One point of the divisor seen in several charts: the charts are related there by a real
    analytic change of coordinates (u' = u·(s'·y_k)^(1/w_k), y'_j = y_j·(s'·y_k)^(−w_j/w_k)) that
    carries one pulled-back integrand to the other, so every chart has the same λ and m: the
    first exact value, else the intersection of the bounds."""
    label = " = ".join(p.label for p, _ in same)
    exact = [r for _, r in same if r.exact]
    if exact:
        return label, exact[0]
    lower = max(r.lower for _, r in same)
    upper = min(r.upper for _, r in same)
    conditions = tuple(c for _, r in same for c in r.conditions)
    methods = "; ".join(r.method for _, r in same)
    return label, RLCT.bounds(lower, upper, methods, conditions)


def same_orbit(x: Sequence[Fraction], y: Sequence[Fraction], w: Sequence[int]) -> bool:
    """Whether y_j = t^(w_j)·x_j for all j with one real t ≠ 0 (one point of the weighted
    projective space): the same support, r_j = y_j/x_j with r_j^(w_k) = r_k^(w_j), positive
    where w_j is even, and of one sign where w_j is odd; exact rational arithmetic."""
    if any((a == 0) != (b == 0) for a, b in zip(x, y)):
        return False
    r = [(b / a, e) for a, b, e in zip(x, y, w) if a != 0]
    if any(q < 0 for q, e in r if e % 2 == 0) or len({q > 0 for q, e in r if e % 2}) > 1:
        return False
    return all(q**f == p**e for q, e in r for p, f in r)


def integer_weights(polys: Sequence[sp.Poly]) -> tuple[int, ...] | None:
    """The least positive integer weights (primitive vector) for which every generator is
    quasi-homogeneous, from :func:`rlct.algebra.scaling.scaling_weights`; None where none exist."""
    n = len(polys[0].gens)
    found = scaling_weights(list(polys), list(range(n)))
    if found is None:
        return None
    scale = math.lcm(*(int(sp.Rational(w).q) for w in found))
    ints = [int(sp.Rational(w) * scale) for w in found]
    g = math.gcd(*ints)
    return tuple(k // g for k in ints)


def blow_up_weighted(polys: Sequence[sp.Poly], h: Sequence[sp.Rational]) -> WeightedBlowUp | None:
    """The weighted blow-up of the origin (module docstring) for ⟨polys⟩ under the prior
    Π|x_j|^(h_j); None where the generators are not all quasi-homogeneous for one weight other
    than (1, …, 1), share a monomial factor, or where a chart's zeros on the divisor are neither
    finitely many rational points nor curves that :mod:`rlct.blowup.families` reads."""
    polys = [p for p in polys if not p.is_zero]
    if not polys:
        return None
    gens = tuple(polys[0].gens)
    n = len(gens)
    if not 2 <= n <= MAX_WEIGHTED_VARIABLES or any(common_monomial(polys)):
        return None
    w = integer_weights(polys)
    if w is None or len(set(w)) == 1 or max(w) > MAX_WEIGHT:
        return None
    h = tuple(sp.Rational(e) for e in h)
    degrees = [sum(a * b for a, b in zip(w, p.monoms()[0])) for p in polys]
    o = min(degrees)
    hu = sum((wj * (hj + 1) for wj, hj in zip(w, h)), sp.Integer(-1))
    families: list[Family] = []
    points: list[tuple[LinePoint, tuple[Fraction, ...]]] = []
    for i in range(n):
        for s in (1,) if w[i] % 2 else (1, -1):
            chart = _chart(polys, degrees, o, h, w, i, s, hu)
            if chart is None:
                return None
            families += chart[0]
            points += chart[1]
    classes: list[int] = []
    for k, (_, x) in enumerate(points):
        first = next(c for c in range(k + 1) if c == k or same_orbit(points[c][1], x, w))
        classes.append(classes[first] if first < k else max(classes, default=-1) + 1)
    generic = (hu + 1) / sp.Integer(2 * o)
    solved = tuple(p for p, _ in points)
    return WeightedBlowUp(gens, w, o, generic, tuple(families), solved, tuple(classes))


def _chart(
    polys: Sequence[sp.Poly],
    degrees: Sequence[int],
    o: int,
    h: tuple[sp.Rational, ...],
    w: tuple[int, ...],
    i: int,
    s: int,
    hu: sp.Rational,
) -> tuple[list[Family], list[tuple[LinePoint, tuple[Fraction, ...]]]] | None:
    """Chart (i, s): its curves' kinds and its special points with their pulled-back generators
    u^(d_k)·g_k(P + v) (u named x_i, v_j named x_j) and priors; None where it declines."""
    gens = tuple(polys[0].gens)
    u = gens[i]
    ys = [x for j, x in enumerate(gens) if j != i]
    g = [sp.expand(p.as_expr().xreplace({u: s})) for p in polys]
    on_e = [q for q, d in zip(g, degrees) if d == o]
    families: list[Family] = []
    nonzero = [sp.Poly(q, *ys, domain=sp.QQ) for q in on_e if q != 0]
    if sum(len(q.terms()) for q in nonzero) > MAX_FORM_TERMS:
        return None
    degrees_e = [q.total_degree() for q in nonzero]
    zeros = None  # fewer equations than unknowns: a curve or more, for the families
    if len(degrees_e) >= len(ys):
        if max(degrees_e) > MAX_FORM_DEGREE or too_costly(degrees_e, len(ys) + 1):
            return None  # sized as rlct.algebra.projective_zeros sizes its systems
        zeros = affine_zeros(on_e, ys)
    if zeros is None:
        strict = [sp.Poly(u ** (d - o) * q, *gens, domain=sp.QQ) for q, d in zip(g, degrees)]
        found = chart_families(strict, i, (0,) * len(gens), o, h, (o, hu))
        if found is None:
            return None
        families = [_signed(f, i, s) for f in found[0]]
        zeros = [tuple(c for j, c in enumerate(p) if j != i) for p in found[1]]
    where = f"{u} = {'−' if s < 0 else ''}u^{w[i]}"
    points = []
    for point in zeros:
        shift = {y: y + sp.Rational(c.numerator, c.denominator) for y, c in zip(ys, point)}
        moved = []
        for q, d in zip(g, degrees):
            poly = sp.Poly(u**d * sp.expand(q.xreplace(shift)), *gens, domain=sp.QQ)
            if len(poly.terms()) > MAX_PULLED_TERMS:
                return None
            moved.append(poly)
        at = dict(zip(ys, point))
        prior = tuple(
            hu if j == i else (h[j] if at[x] == 0 else sp.Integer(0)) for j, x in enumerate(gens)
        )
        label = f"chart {where}, ({', '.join(map(str, ys))}) = ({', '.join(map(str, point))})"
        whole = (*point[:i], Fraction(s), *point[i:])  # the point of the weighted space
        points.append((LinePoint(label, tuple(moved), prior), whole))
    return families, points
