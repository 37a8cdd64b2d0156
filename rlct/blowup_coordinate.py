"""λ and m of an ideal by the blow-up of a coordinate subspace whose every chart becomes, after
triangular changes of coordinates, a monomial ideal or an ideal on fewer variables that all
vanish over the origin.

Setting: generators f_1..f_r ∈ Q[x_1..x_n], all zero on C = {x_i = 0, i ∈ S} (|S| = k ≥ 2, the
*centre*), under the prior Π|x_i|^(h_i). The blow-up π of C has k charts. Chart j ∈ S:
x_j = t, x_i = t·x_i' (i ∈ S∖{j}), the rest unchanged, |det π'| = |t|^(k−1), so the prior is
|t|^(k−1+Σ_S h)·Π_(S∖j)|x_i'|^(h_i)·Π_(rest)|x_i|^(h_i). There f∘π = x^e·g with x^e the
generators' common monomial factor.

Straightening: while some generator is g = x^μ·(c·v + r) with c ∈ Q∖{0}, r free of v and
r(0) = 0, h_v = 0 and v in neither x^e nor x^μ, v' = c·v + r is a triangular change of the whole
chart (|J| = |c|, the origin and the prior's form kept) that makes g the monomial x^μ·v'; else
one inside a generator f = c·x^α·v + x^α·r + (terms x^α does not divide), v' = v + r/c (any such
change is valid; this choice makes v enter f through v' wherever x^α does); and every term of a
generator that a monomial generator divides is removed (the same ideal). If
every generator ends a monomial, the chart's ideal is the monomial ideal
x^e·⟨monomials⟩ in global coordinates of the chart. At a point of the chart where some of those
coordinates are non-zero its λ, m are those of the monomial ideal with them dropped, never
smaller in λ than at the origin (and never larger in m where λ is equal); the origin lies over
0. So the chart's λ, m over π⁻¹(0) are the monomial ideal's at the origin (its Newton
polyhedron: exact), and λ = min over the k charts, m = max over those attaining (Watanabe 2009,
ch. 2: π is proper and an isomorphism off C).

A chart that does not end monomial can still be read: where its ideal involves fewer variables
than the chart and only coordinates that vanish at every point over 0 (t, the variables outside
C, and a changed v' where v does and every term of r holds such a coordinate), every point over 0
has the local λ, m of that ideal at its origin (the other coordinates are free there, and a
variable the ideal does not hold adds no pole whatever its prior), so the chart's value is that
ideal's, solved by the caller as an ideal (fewer variables: the recursion ends). Otherwise the
centre is declined.

The deep linear network 2-2-2 at rank 0 (P = BA, the ideal of P's four entries, eight
parameters): centre A = 0. Chart a₀₀: P's first column is t·(b_i0 + b_i1·a₁₀'), so b_i0' is a
change; the second column reduces to t·b_i1·(a₁₁' − a₀₁'a₁₀'), and a₁₁'' = a₁₁' − a₀₁'a₁₀' is
another: t·⟨b₀₀', b₁₀', b₀₁a₁₁'', b₁₁a₁₁''⟩ under |t|³. Its Newton polyhedron gives λ = 3/2,
m = 1 (t: 4/2; b₀₀', b₁₀': 1/2 each; ⟨a₁₁''·b₀₁, a₁₁''·b₁₁⟩: 1/2), and the other charts the same by
symmetry: Aoyagi's value.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy as sp

from .blowup import common_monomial, divide_monomial
from .local_generators import reduce_by_monomials
from .newton import ideal_step
from .result import RLCT, Condition

Solve = Callable[[list[sp.Poly], tuple[sp.Rational, ...]], RLCT]

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
    solved: RLCT | None = None  # not monomial: its ideal on fewer variables, solved


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
        method = f"blow-up of the coordinate subspace {names} = 0, every chart straightened"
        conditions = [c for chart in self.charts for c in self._conditions(chart)]
        return RLCT.exact_value(lam, mult, method, tuple(conditions))

    def _conditions(self, chart: Chart) -> list[Condition]:
        x = self.gens
        t = x[chart.j]
        rest = ", ".join(f"{x[i]} = {t}·{x[i]}'" for i in self.centre if i != chart.j)
        where = f"chart {t} ({rest}" + "".join(f", then {v}' = {g}" for v, g in chart.changes)
        if chart.solved is not None:
            head = Condition(
                f"{where}; primes dropped): the ideal involves fewer variables than the chart, "
                f"each zero at every point over 0, so each such point has the ideal's λ, m at its "
                f"origin: λ = {chart.lam}, m = {chart.mult} by {chart.solved.method} "
                f"(rlct.blowup_coordinate)",
                True,
            )
            return [
                head,
                *(Condition(f"[{t}] {c.statement}", c.status) for c in chart.solved.conditions),
            ]
        mono = ", ".join(str(_monomial(x, m)) for m in chart.monomials)
        return [
            Condition(
                f"{where}; primes dropped): the ideal is ⟨{mono}⟩ under the prior exponents "
                f"{list(chart.h)}, a monomial ideal in global coordinates of the chart: "
                f"λ = {chart.lam}, m = {chart.mult} (rlct.blowup_coordinate)",
                True,
            )
        ]


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
    polys: Sequence[sp.Poly],
    h: Sequence[sp.Rational],
    centre: tuple[int, ...],
    solve: Solve | None = None,
) -> CoordinateBlowUp | None:
    """The blow-up of {x_i = 0, i ∈ ``centre``} (module docstring); None where a chart ends
    neither a monomial ideal nor (with ``solve``) an exact ideal on fewer variables that all
    vanish over 0, or a change grows past ``MAX_CHANGE_TERMS``."""
    charts = []
    for j in centre:
        chart = _chart(polys, tuple(sp.Rational(a) for a in h), centre, j, solve)
        if chart is None:
            return None
        charts.append(chart)
    return CoordinateBlowUp(tuple(polys[0].gens), centre, tuple(charts))


def first_coordinate_blowup(
    polys: Sequence[sp.Poly], h: Sequence[sp.Rational], solve: Solve | None = None
) -> RLCT | None:
    """The value of the first centre (:func:`monomial_centres`) whose every chart straightens
    into a monomial ideal, or into an ideal on fewer variables that all vanish over 0, solved by
    ``solve`` (module docstring); None when no centre does."""
    for centre in monomial_centres(polys):
        if (blown := blow_up_coordinates(polys, h, centre, solve)) is not None:
            return blown.result()
    return None


def _chart(
    polys: Sequence[sp.Poly],
    h: tuple[sp.Rational, ...],
    centre: tuple[int, ...],
    j: int,
    solve: Solve | None,
) -> Chart | None:
    gens = polys[0].gens
    t = gens[j]
    image = {gens[i]: t * gens[i] for i in centre if i != j}
    pulled = [sp.Poly(sp.expand(p.as_expr().xreplace(image)), *gens, domain=sp.QQ) for p in polys]
    pulled = [p for p in pulled if not p.is_zero]
    e = common_monomial(pulled)
    prior = [*h]
    prior[j] = sum((h[i] for i in centre), sp.Integer(len(centre) - 1))
    over_zero = [k == j or k not in centre for k in range(len(gens))]  # coordinates 0 over 0
    straightened = _straighten([divide_monomial(p, e) for p in pulled], prior, e, over_zero)
    if straightened is None:
        return None
    strict, changes = straightened
    if any(len(p.terms()) != 1 for p in strict):
        return _solved_chart(strict, e, prior, over_zero, j, changes, solve)
    monomials = tuple(sorted({tuple(a + b for a, b in zip(p.monoms()[0], e)) for p in strict}))
    ideal = [sp.Poly(_monomial(gens, m), *gens, domain=sp.QQ) for m in monomials]
    value = ideal_step(ideal, tuple(prior)).result
    if not value.exact:  # a monomial ideal is never degenerate; kept as a guard
        return None
    return Chart(j, changes, monomials, tuple(prior), value.lam, value.mult)


def _solved_chart(
    strict: list[sp.Poly],
    e: tuple[int, ...],
    prior: list[sp.Rational],
    over_zero: list[bool],
    j: int,
    changes: tuple[tuple[sp.Symbol, sp.Expr], ...],
    solve: Solve | None,
) -> Chart | None:
    """A chart that is not monomial: where the ideal x^e·⟨strict⟩ involves fewer variables than
    the chart and only coordinates that vanish at every point over 0, each such point has the
    local λ, m of that ideal at its origin (the others are free there), solved by ``solve``."""
    gens = strict[0].gens
    involved = [
        k for k in range(len(gens)) if e[k] or any(m[k] for p in strict for m in p.monoms())
    ]
    if solve is None or len(involved) >= len(gens) or not all(over_zero[k] for k in involved):
        return None
    names = [gens[k] for k in involved]
    ideal = [sp.Poly(_monomial(gens, e) * p.as_expr(), *names, domain=sp.QQ) for p in strict]
    value = solve(ideal, tuple(prior[k] for k in involved))
    if not value.exact:
        return None
    return Chart(j, changes, (), tuple(prior), value.lam, value.mult, value)


def _straighten(
    strict: list[sp.Poly], h: list[sp.Rational], e: tuple[int, ...], over_zero: list[bool]
) -> tuple[list[sp.Poly], tuple[tuple[sp.Symbol, sp.Expr], ...]] | None:
    """The changes v' = g of the module docstring (g = c·v + r; a generator x^μ·g becomes the
    monomial x^μ·v'; v' keeps v's name), the generators reduced by their monomials before and
    after each (:func:`rlct.local_generators.reduce_by_monomials`): the generators after them
    and the changes made; None past the size limit. ``over_zero[k]`` (updated in place) says
    whether coordinate k is known to vanish at every point over 0: a new v' does where v does
    and every term of r holds one that does."""
    gens = strict[0].gens
    done: list[tuple[sp.Symbol, sp.Expr]] = []
    fixed: set[int] = set()
    strict = reduce_by_monomials(strict)
    while (found := _change(strict, h, e, fixed)) is not None:
        k, g, a, mu = found
        v = gens[k]
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
        strict = reduce_by_monomials(rewritten)
        fixed.add(k)
        rest = [m for m, _ in g.terms() if m[k] == 0]
        over_zero[k] = over_zero[k] and all(
            any(a and over_zero[i] for i, a in enumerate(m)) for m in rest
        )
        done.append((v, g.as_expr()))
    return strict, tuple(done)


Change = tuple[int, sp.Poly, int | None, tuple[int, ...]]


def _change(
    strict: list[sp.Poly], h: list[sp.Rational], e: tuple[int, ...], fixed: set[int]
) -> Change | None:
    """The first change the module docstring allows: (variable index k, g = c·v + r, the index
    of the generator x^μ·g that becomes a monomial or None, μ). v is not yet changed, free of
    prior and of x^e, and not in a generator that is a monomial already (the change would undo
    it). First a generator's own factor g; else a g inside a generator f = c·x^α·v + x^α·r +
    (terms that x^α does not divide), with x^α a monomial (v then enters f only through g
    wherever x^α does)."""
    gens = strict[0].gens
    in_monomials = {
        k for p in strict if len(p.terms()) == 1 for k, a in enumerate(p.monoms()[0]) if a
    }

    def allowed(k: int) -> bool:
        return k not in fixed and k not in in_monomials and h[k] == 0 and e[k] == 0

    for a, p in enumerate(strict):
        mu = common_monomial([p])
        g = divide_monomial(p, mu)
        if len(g.terms()) < 2 or g.coeff_monomial(1) != 0:
            continue  # a monomial, or x^μ times a unit at the origin
        for k, v in enumerate(gens):
            if allowed(k) and mu[k] == 0 and g.degree(v) == 1 and g.diff(v).is_ground:
                return k, g, a, mu
    for p in strict:
        for k, v in enumerate(gens):
            if allowed(k) and p.degree(v) == 1 and len((slope := p.diff(v)).terms()) == 1:
                if (inner := _inside(p, k, slope)) is not None:
                    return k, inner, None, (0,) * len(gens)
    return None


def _inside(p: sp.Poly, k: int, slope: sp.Poly) -> sp.Poly | None:
    """g = v + r with c·x^α·g the terms of p that x^α = ``slope``/c divides (r free of v,
    r(0) = 0, r ≠ 0), or None."""
    (alpha,), (c,) = slope.monoms(), slope.coeffs()
    inner = {}
    for m, d in p.terms():
        if m[k] == 0 and all(a >= b for a, b in zip(m, alpha)):
            inner[tuple(a - b for a, b in zip(m, alpha))] = d / c
    if not inner or (0,) * len(alpha) in inner:
        return None
    unit = tuple(1 if i == k else 0 for i in range(len(alpha)))
    return sp.Poly.from_dict({unit: 1, **inner}, *p.gens, domain=sp.QQ)


def _monomial(gens: Sequence[sp.Symbol], exponents: Sequence[int]) -> sp.Expr:
    return sp.Mul(*(v**a for v, a in zip(gens, exponents)))
