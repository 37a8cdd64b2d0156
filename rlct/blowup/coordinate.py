"""λ and m of an ideal by the blow-up of a coordinate subspace whose every chart becomes, after
triangular changes of coordinates, a monomial ideal or an ideal on fewer variables whose least
value over the origin is at the chart's origin.

Setting: generators f_1..f_r ∈ Q[x_1..x_n], all zero on C = {x_i = 0, i ∈ S} (|S| = k ≥ 2, the
*centre*), under the prior Π|x_i|^(h_i). The blow-up π of C has k charts. Chart j ∈ S:
x_j = t, x_i = t·x_i' (i ∈ S∖{j}), the rest unchanged, |det π'| = |t|^(k−1), so the prior is
|t|^(k−1+Σ_S h)·Π_(S∖j)|x_i'|^(h_i)·Π_(rest)|x_i|^(h_i). There f∘π = x^e·g with x^e the
generators' common monomial factor.

Straightening (:mod:`rlct.blowup.straighten`): triangular changes v' = c·v + r of the whole chart
(c ∈ Q∖{0}, r free of v, r(0) = 0, h_v = 0, v not in x^e: |J| = |c|, the origin and the prior's
form kept), each making a generator a monomial or simpler, with the generators reduced by one
another between them (the same ideal). If every generator ends a monomial, the chart's ideal
is the monomial ideal x^e·⟨monomials⟩ in global coordinates of the chart. At a point of the
chart where some of those coordinates are non-zero its λ, m are those of the monomial ideal
with them dropped, never smaller in λ than at the origin (and never larger in m where λ is
equal); the origin lies over 0. So the chart's λ, m over π⁻¹(0) are the monomial ideal's at the origin (its Newton
polyhedron: exact), and λ = min over the k charts, m = max over those attaining (Watanabe 2009,
ch. 2: π is proper and an isomorphism off C).

A chart that does not end monomial can still be read where its ideal involves fewer variables
than the chart. The coordinates that vanish at every point over 0 are t, the variables outside
C, and a changed v' where v does and every term of r holds such a coordinate; call the others
*free*. If the ideal holds no free variable, every point over 0 has the local λ, m of the
ideal at its origin (a variable the ideal does not hold adds no pole whatever its prior). If
it holds free variables u but every generator is homogeneous for weights w with w_u ≥ 1 (an
exact linear programme, :func:`scaling_weights`), the scaling x_i ↦ s^(w_i)·x_i (s > 0) maps
the ideal and the prior's monomial to themselves up to constants, so λ, m are constant along
its orbits, and every point q over 0 has the chart's origin in the closure of its orbit. λ is
lower semicontinuous and m upper semicontinuous where λ is equal (a resolution over a
neighbourhood of a point p resolves the points q near it, and the divisors and crossings over
such q also lie over p), so (λ, m) at the origin is the least over 0. Either way the chart's
value is that ideal's at its origin, solved by the caller as an ideal (fewer variables: the
recursion ends). Otherwise the centre is declined: where the free variables enter unevenly
(Watanabe's tanh units, b·c·w(w² − 1)) points over 0 differ in a way this does not read.

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

from ..algebra.monomials import common_monomial, divide_monomial
from ..algebra.scaling import scaling_weights
from ..newton.analysis import ideal_step
from ..result import RLCT, Condition, Solve
from ..time_limit import check as check_time
from .straighten import monomial, straighten

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
    scaled: tuple[tuple[sp.Symbol, sp.Rational], ...] = ()  # free variables' scaling weights


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
            if chart.scaled:
                weights = ", ".join(f"{v}: {w}" for v, w in chart.scaled)
                how = (
                    f"each zero at every point over 0 but {', '.join(str(v) for v, _ in chart.scaled)}, "
                    f"and the ideal is homogeneous for the weights {{{weights}}} (the others "
                    f"as the linear programme chose): scaling those variables towards 0 keeps "
                    f"λ, m, and λ, m at a limit point are no larger (semicontinuity), so the "
                    f"least over 0 is at the origin"
                )
            else:
                how = "each zero at every point over 0, so each such point has the ideal's λ, m"
            head = Condition(
                f"{where}; primes dropped): the ideal involves fewer variables than the chart, "
                f"{how}: λ = {chart.lam}, m = {chart.mult} at its origin by "
                f"{chart.solved.method} (rlct.blowup.coordinate)",
                True,
            )
            return [
                head,
                *(Condition(f"[{t}] {c.statement}", c.status) for c in chart.solved.conditions),
            ]
        mono = ", ".join(str(monomial(x, m)) for m in chart.monomials)
        return [
            Condition(
                f"{where}; primes dropped): the ideal is ⟨{mono}⟩ under the prior exponents "
                f"{list(chart.h)}, a monomial ideal in global coordinates of the chart: "
                f"λ = {chart.lam}, m = {chart.mult} (rlct.blowup.coordinate)",
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
    neither a monomial ideal nor (with ``solve``) an exact ideal on fewer variables whose least
    value over 0 is at its origin, or a change grows past
    ``rlct.blowup.straighten.MAX_CHANGE_TERMS``."""
    found = []
    for j in centre:
        chart = _chart(polys, tuple(sp.Rational(a) for a in h), centre, j, solve)
        if chart is None:
            return None
        found.append(chart)
    charts = []
    for chart in found:  # the ideals last: none is solved where another chart declines
        if (chart := chart if isinstance(chart, Chart) else chart()) is None:
            return None
        charts.append(chart)
    return CoordinateBlowUp(tuple(polys[0].gens), centre, tuple(charts))


def first_coordinate_blowup(
    polys: Sequence[sp.Poly], h: Sequence[sp.Rational], solve: Solve | None = None
) -> RLCT | None:
    """The value of the first centre (:func:`monomial_centres`) whose every chart straightens
    into a monomial ideal, or into an ideal on fewer variables whose least value over 0 is at
    its origin, solved by ``solve`` (module docstring); None when no centre does."""
    for centre in monomial_centres(polys):
        if (blown := blow_up_coordinates(polys, h, centre, solve)) is not None:
            return blown.result()
    return None


def _pull_back(p: sp.Poly, centre: tuple[int, ...], j: int) -> sp.Poly:
    """p(x_i ↦ x_j·x_i for i ∈ centre, i ≠ j) over Q, term by term: the monomial x^m goes to
    x^m' with m'_j = m_j + Σ_{i ∈ centre, i ≠ j} m_i (a one-to-one map of monomials, so nothing
    is collected; expanding the substituted expression took most of a chart's time)."""
    check_time()
    moved = [i for i in centre if i != j]
    terms = {}
    for m, c in p.terms():
        m2 = list(m)
        m2[j] += sum(m[i] for i in moved)
        terms[tuple(m2)] = c
    return sp.Poly.from_dict(terms, *p.gens, domain=sp.QQ)


def _chart(
    polys: Sequence[sp.Poly],
    h: tuple[sp.Rational, ...],
    centre: tuple[int, ...],
    j: int,
    solve: Solve | None,
) -> Chart | Callable[[], Chart | None] | None:
    """Chart ``j`` straightened: a monomial chart, one to solve as an ideal (deferred), or
    None."""
    gens = polys[0].gens
    pulled = [q for p in polys if not (q := _pull_back(p, centre, j)).is_zero]
    e = common_monomial(pulled)
    prior = [*h]
    prior[j] = sum((h[i] for i in centre), sp.Integer(len(centre) - 1))
    over_zero = [k == j or k not in centre for k in range(len(gens))]  # coordinates 0 over 0
    straightened = straighten([divide_monomial(p, e) for p in pulled], prior, e, over_zero)
    if straightened is None:
        return None
    strict, changes, over_zero = straightened
    if any(len(p.terms()) != 1 for p in strict):
        return _solved_chart(strict, e, prior, over_zero, j, changes, solve)
    monomials = tuple(sorted({tuple(a + b for a, b in zip(p.monoms()[0], e)) for p in strict}))
    ideal = [sp.Poly(monomial(gens, m), *gens, domain=sp.QQ) for m in monomials]
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
) -> Callable[[], Chart | None] | None:
    """A chart that is not monomial: where the ideal x^e·⟨strict⟩ involves fewer variables than
    the chart, and the free coordinates it holds (not known to vanish over 0) can be scaled to 0
    (:func:`scaling_weights`), the least λ, m over 0 is that ideal's at its origin (module
    docstring): its solve by ``solve``, deferred (None when it is not exact)."""
    gens = strict[0].gens
    involved = [
        k for k in range(len(gens)) if e[k] or any(m[k] for p in strict for m in p.monoms())
    ]
    if solve is None or len(involved) >= len(gens):
        return None
    names = [gens[k] for k in involved]
    ideal = [sp.Poly(monomial(gens, e) * p.as_expr(), *names, domain=sp.QQ) for p in strict]
    free = [i for i, k in enumerate(involved) if not over_zero[k]]
    weights = scaling_weights(ideal, free) if free else ()
    if weights is None:
        return None
    scaled = tuple((names[i], weights[i]) for i in free)

    def solved() -> Chart | None:
        value = solve(ideal, tuple(prior[k] for k in involved))
        if not value.exact:
            return None
        return Chart(j, changes, (), tuple(prior), value.lam, value.mult, value, scaled)

    return solved
