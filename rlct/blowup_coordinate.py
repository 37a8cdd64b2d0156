"""λ and m of an ideal by the blow-up of a coordinate subspace whose every chart becomes a
monomial ideal after triangular changes of coordinates.

Setting: generators f_1..f_r ∈ Q[x_1..x_n], all zero on C = {x_i = 0, i ∈ S} (|S| = k ≥ 2, the
*centre*), under the prior Π|x_i|^(h_i). The blow-up π of C has k charts. Chart j ∈ S:
x_j = t, x_i = t·x_i' (i ∈ S∖{j}), the rest unchanged, |det π'| = |t|^(k−1), so the prior is
|t|^(k−1+Σ_S h)·Π_(S∖j)|x_i'|^(h_i)·Π_(rest)|x_i|^(h_i). There f∘π = x^e·g with x^e the
generators' common monomial factor.

Straightening: while some generator is g = x^μ·(c·v + r) with c ∈ Q∖{0}, r free of v and
r(0) = 0, h_v = 0 and v in neither x^e nor x^μ, v' = c·v + r is a triangular change of the whole
chart (|J| = |c|, the origin and the prior's form kept) that makes g the monomial x^μ·v'; and
every term of a generator that a monomial generator divides is removed (the same ideal). If
every generator ends a monomial, the chart's ideal is the monomial ideal
x^e·⟨monomials⟩ in global coordinates of the chart. At a point of the chart where some of those
coordinates are non-zero its λ, m are those of the monomial ideal with them dropped, never
smaller in λ than at the origin (and never larger in m where λ is equal); the origin lies over
0. So the chart's λ, m over π⁻¹(0) are the monomial ideal's at the origin (its Newton
polyhedron: exact), and λ = min over the k charts, m = max over those attaining (Watanabe 2009,
ch. 2: π is proper and an isomorphism off C). A chart that does not end monomial declines the
centre.

The deep linear network 2-2-2 at rank 0 (P = BA, the ideal of P's four entries, eight
parameters): centre A = 0. Chart a₀₀: P's first column is t·(b_i0 + b_i1·a₁₀'), so b_i0' is a
change; the second column reduces to t·b_i1·(a₁₁' − a₀₁'a₁₀'), and a₁₁'' = a₁₁' − a₀₁'a₁₀' is
another: t·⟨b₀₀', b₁₀', b₀₁a₁₁'', b₁₁a₁₁''⟩ under |t|³. Its Newton polyhedron gives λ = 3/2,
m = 1 (t: 4/2; b₀₀', b₁₀': 1/2 each; ⟨a₁₁''·b₀₁, a₁₁''·b₁₁⟩: 1/2), and the other charts the same by
symmetry: Aoyagi's value.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from .blowup import common_monomial, divide_monomial
from .newton import ideal_step
from .result import RLCT, Condition

__all__ = [
    "MAX_CENTRES",
    "MAX_COORDINATE_VARIABLES",
    "CoordinateBlowUp",
    "blow_up_coordinates",
    "first_coordinate_blowup",
    "monomial_centres",
]

MAX_COORDINATE_VARIABLES = 12  # centres are searched among the 2^n coordinate subspaces
MAX_CENTRES = 64  # centres tried per ideal
MAX_CHANGE_TERMS = 2_000  # terms of one generator after a chart's changes


@dataclass(frozen=True)
class Chart:
    """Chart ``j`` of the blow-up: its changes (v, g: v' = g, in the order made), the monomial
    ideal's exponents (common factor included), its prior exponents, and its λ and m."""

    j: int
    changes: tuple[tuple[sp.Symbol, sp.Expr], ...]
    monomials: tuple[tuple[int, ...], ...]
    h: tuple[sp.Rational, ...]
    lam: sp.Rational
    mult: int


@dataclass(frozen=True)
class CoordinateBlowUp:
    """The blow-up of {x_i = 0, i ∈ ``centre``} with every chart a monomial ideal."""

    gens: tuple[sp.Symbol, ...]
    centre: tuple[int, ...]
    charts: tuple[Chart, ...]

    def result(self) -> RLCT:
        """λ = min over the charts, m = max over those attaining (module docstring)."""
        lam = min(c.lam for c in self.charts)
        mult = max(c.mult for c in self.charts if c.lam == lam)
        names = ", ".join(str(self.gens[i]) for i in self.centre)
        method = f"blow-up of the coordinate subspace {names} = 0, every chart a monomial ideal"
        return RLCT.exact_value(lam, mult, method, tuple(self._condition(c) for c in self.charts))

    def _condition(self, chart: Chart) -> Condition:
        x = self.gens
        t = x[chart.j]
        rest = ", ".join(f"{x[i]} = {t}·{x[i]}'" for i in self.centre if i != chart.j)
        changes = "".join(f", then {v}' = {g}" for v, g in chart.changes)
        mono = ", ".join(str(sp.Mul(*(v**a for v, a in zip(x, m)))) for m in chart.monomials)
        return Condition(
            f"chart {t} ({rest}{changes}; primes dropped): the ideal is ⟨{mono}⟩ under the prior "
            f"exponents {list(chart.h)}, a monomial ideal in global coordinates of the chart: "
            f"λ = {chart.lam}, m = {chart.mult} (rlct.blowup_coordinate)",
            True,
        )


def monomial_centres(polys: Sequence[sp.Poly]) -> list[tuple[int, ...]]:
    """The coordinate subspaces {x_S = 0} of codimension ≥ 2 in the zeros of every generator
    that are minimal (no smaller S is), smallest first, at most ``MAX_CENTRES``; none past
    ``MAX_COORDINATE_VARIABLES`` variables."""
    n = len(polys[0].gens)
    if n > MAX_COORDINATE_VARIABLES:
        return []
    supports = [frozenset(k for k, a in enumerate(m) if a) for p in polys for m in p.monoms()]
    found: list[tuple[int, ...]] = []
    for size in range(1, n + 1):
        for centre in itertools.combinations(range(n), size):
            s = set(centre)
            if any(not (m & s) for m in supports) or any(set(c) <= s for c in found):
                continue
            found.append(centre)
    return [c for c in found if len(c) >= 2][:MAX_CENTRES]


def blow_up_coordinates(
    polys: Sequence[sp.Poly], h: Sequence[sp.Rational], centre: tuple[int, ...]
) -> CoordinateBlowUp | None:
    """The blow-up of {x_i = 0, i ∈ ``centre``} (module docstring); None where a chart does not
    end a monomial ideal or a change grows past ``MAX_CHANGE_TERMS``."""
    charts = []
    for j in centre:
        chart = _chart(polys, tuple(sp.Rational(a) for a in h), centre, j)
        if chart is None:
            return None
        charts.append(chart)
    return CoordinateBlowUp(tuple(polys[0].gens), centre, tuple(charts))


def first_coordinate_blowup(polys: Sequence[sp.Poly], h: Sequence[sp.Rational]) -> RLCT | None:
    """The value of the first centre (:func:`monomial_centres`) whose every chart straightens
    into a monomial ideal, or None (substitutions only: no search, no Gröbner basis)."""
    for centre in monomial_centres(polys):
        if (blown := blow_up_coordinates(polys, h, centre)) is not None:
            return blown.result()
    return None


def _chart(
    polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...], centre: tuple[int, ...], j: int
) -> Chart | None:
    gens = polys[0].gens
    t = gens[j]
    image = {gens[i]: t * gens[i] for i in centre if i != j}
    pulled = [sp.Poly(sp.expand(p.as_expr().xreplace(image)), *gens, domain=sp.QQ) for p in polys]
    pulled = [p for p in pulled if not p.is_zero]
    e = common_monomial(pulled)
    prior = [*h]
    prior[j] = sum((h[i] for i in centre), sp.Integer(len(centre) - 1))
    straightened = _straighten([divide_monomial(p, e) for p in pulled], prior, e)
    if straightened is None:
        return None
    strict, changes = straightened
    if any(len(p.terms()) != 1 for p in strict):
        return None
    monomials = tuple(sorted({tuple(a + b for a, b in zip(p.monoms()[0], e)) for p in strict}))
    ideal = [sp.Poly(_monomial(gens, m), *gens, domain=sp.QQ) for m in monomials]
    value = ideal_step(ideal, tuple(prior)).result
    if not value.exact:  # a monomial ideal is never degenerate; kept as a guard
        return None
    return Chart(j, changes, monomials, tuple(prior), value.lam, value.mult)


def _straighten(
    strict: list[sp.Poly], h: list[sp.Rational], e: tuple[int, ...]
) -> tuple[list[sp.Poly], tuple[tuple[sp.Symbol, sp.Expr], ...]] | None:
    """The changes v' = g̃ of the module docstring (g = x^μ·g̃ a generator, which becomes the
    monomial x^μ·v'; v' keeps v's name), the generators reduced by their monomials before and
    after each (:func:`_reduced`): the generators after them and the changes made; None past the
    size limit."""
    gens = strict[0].gens
    done: list[tuple[sp.Symbol, sp.Expr]] = []
    fixed: set[int] = set()
    strict = _reduced(strict)
    while (found := _affine(strict, h, e, fixed)) is not None:
        a, k, mu = found
        v, g = gens[k], divide_monomial(strict[a], mu)
        c = g.coeff_monomial(v)
        inverse = (v - (g.as_expr() - c * v)) / c  # old v in terms of v' (named v)
        rewritten = []
        for b, p in enumerate(strict):
            if b == a:
                rewritten.append(sp.Poly(v * _monomial(gens, mu), *gens, domain=sp.QQ))
                continue
            q = sp.Poly(sp.expand(p.as_expr().xreplace({v: inverse})), *gens, domain=sp.QQ)
            if len(q.terms()) > MAX_CHANGE_TERMS:
                return None
            rewritten.append(q)
        strict = _reduced(rewritten)
        fixed.add(k)
        done.append((v, g.as_expr()))
    return strict, tuple(done)


def _affine(
    strict: list[sp.Poly], h: list[sp.Rational], e: tuple[int, ...], fixed: set[int]
) -> tuple[int, int, tuple[int, ...]] | None:
    """(generator index, variable index, the generator's monomial content μ) of the first
    g = x^μ·(c·v + r) the module docstring allows as a change, or None. v is not yet changed
    and not in a generator that is a monomial already (the change would undo it)."""
    gens = strict[0].gens
    in_monomials = {
        k for p in strict if len(p.terms()) == 1 for k, a in enumerate(p.monoms()[0]) if a
    }
    for a, p in enumerate(strict):
        mu = common_monomial([p])
        g = divide_monomial(p, mu)
        if len(g.terms()) < 2 or g.coeff_monomial(1) != 0:
            continue  # a monomial, or x^μ times a unit at the origin
        for k, v in enumerate(gens):
            if k in fixed or k in in_monomials or h[k] != 0 or e[k] != 0 or mu[k] != 0:
                continue
            if g.degree(v) == 1 and g.diff(v).is_ground:  # c·v + r with r free of v
                return a, k, mu
    return None


def _monomial(gens: Sequence[sp.Symbol], exponents: Sequence[int]) -> sp.Expr:
    return sp.Mul(*(v**a for v, a in zip(gens, exponents)))


def _reduced(polys: list[sp.Poly]) -> list[sp.Poly]:
    """The same ideal with every term that a monomial generator divides removed from the other
    generators (f − c·x^α ∈ ⟨x^β, f⟩ when x^β divides x^α), until none is left; zeros dropped."""
    polys = [p for p in polys if not p.is_zero]
    while True:
        monomials = {p.monoms()[0] for p in polys if len(p.terms()) == 1}
        changed = False
        out = []
        for p in polys:
            if len(p.terms()) == 1:
                out.append(p)
                continue
            kept = {
                m: c
                for m, c in p.terms()
                if not any(all(a >= b for a, b in zip(m, mono)) for mono in monomials)
            }
            if len(kept) < len(p.terms()):
                changed = True
                if not kept:
                    continue
                p = sp.Poly.from_dict(kept, *p.gens, domain=sp.QQ)
            out.append(p)
        polys = out
        if not changed:
            return polys
