"""rlct.newton.along_line and rlct.blowup.subspace: the Newton polyhedron along a line of zeros with
coefficients in Q[w], and the blow-up of a codimension-2 coordinate subspace in four variables
that uses it. Hand values (Watanabe's two-unit tanh network, derived in the module docstring by
one centre and checked by the others), declines, and forced blow-ups against Newton's exact
values on ideals it solves on its own."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
import sympy as sp
from _ideals import check_forced_blowup
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rlct
from rlct.blowup.line import combine_line
from rlct.blowup.subspace import blow_up_subspace
from rlct.cascade import _solve_ideal
from rlct.newton.along_line import AlgebraicPoints, newton_along_line

a, b, c, d = A = sp.symbols("a b c d")
x, y, w = sp.symbols("x y w")
ZERO = sp.Integer(0)
TANH = [a * b + c * d, a * b**3 + c * d**3]  # a·tanh(bx) + c·tanh(dx): its odd moments


def _along(gens, h=(0, 0)):
    return newton_along_line(gens, (x, y), w, tuple(map(sp.Integer, h)))


def test_a_vertex_coefficient_names_the_special_values() -> None:
    """⟨x, (w² − 1)·y³⟩ (the module docstring): λ = 1/2 + 1/6, m = 1 off w = ±1."""
    line = _along([x, (w**2 - 1) * y**3])
    assert (line.lam, line.mult) == (sp.Rational(2, 3), 1)
    assert line.special == {Fraction(-1), Fraction(1)}
    assert line.witness == 2


def test_a_monomial_with_a_coefficient_and_a_prior() -> None:
    """⟨(w − 2)·x·y⟩: λ = 1/2, m = 2 off w = 2; under |x|, λ = min(2, 1)/2 = 1/2 with m = 1."""
    line = _along([(w - 2) * x * y])
    assert (line.lam, line.mult, line.special, line.witness) == (sp.Rational(1, 2), 2, {2}, 1)
    line = _along([(w - 2) * x * y], (1, 0))
    assert (line.lam, line.mult) == (sp.Rational(1, 2), 1)


def test_a_face_degenerate_at_every_w_is_declined() -> None:
    """⟨x − w·y⟩ has the torus zero x = w·y on its edge for every w ≠ 0: no Newton reading."""
    assert _along([x - w * y]) is None


def test_irrational_special_values_are_read_in_the_coordinate_q_of_w() -> None:
    """⟨x, (w² − 2)·y³⟩: at w = ±√2, with v = w² − 2, the ideal is ⟨x, y³·v⟩ up to units, whose
    polyhedron meets t·(1, 1, 1) at t = 3/4 on the edge: λ = 2/3, m = 1, as elsewhere."""
    line = _along([x, (w**2 - 2) * y**3])
    assert (line.lam, line.mult, line.special) == (sp.Rational(2, 3), 1, frozenset())
    assert line.algebraic == (AlgebraicPoints(w**2 - 2, sp.Rational(2, 3), 1),)


def test_irrational_points_without_a_monomial_face_part_are_declined() -> None:
    """⟨x² + (w² − 2)·xy + y²⟩: at w = ±√2 the edge (2, 0, 0)–(0, 2, 0) holds two points of the
    one generator, so the certificate (a monomial face part) does not apply: declined."""
    assert _along([x**2 + (w**2 - 2) * x * y + y**2]) is None


def test_a_face_system_degenerate_at_finitely_many_w() -> None:
    """⟨x² − (w − 3)·y², x·y⟩: the edge's system has no torus zero at any w (x·y ≠ 0 there);
    only the vertex y²'s coefficient vanishes, at w = 3. Elsewhere K ≍ (x² + y²)²: λ = 1/2, m = 1."""
    line = _along([x**2 - (w - 3) * y**2, x * y])
    assert (line.lam, line.mult) == (sp.Rational(1, 2), 1)
    assert Fraction(3) in line.special


def test_two_unit_tanh_network() -> None:
    """⟨ab + cd, ab³ + cd³⟩: λ = 2/3, m = 1 (the module docstring derives it; Aoyagi's formula
    for two units, as recalled, agrees), and the same with the next moment ab⁵ + cd⁵ added (it
    lies in the ideal)."""
    got = rlct.from_ideal(TANH, A)
    assert got.exact and (got.lam, got.mult) == (sp.Rational(2, 3), 1)
    more = rlct.from_ideal([*TANH, a * b**5 + c * d**5], A)
    assert more.exact and (more.lam, more.mult) == (sp.Rational(2, 3), 1)
    basis = sp.groebner(TANH, *A, order="grevlex")
    assert basis.reduce(a * b**5 + c * d**5)[1] == 0


@pytest.mark.parametrize("p", range(2, 8))
def test_two_units_with_the_p_th_power(p: int) -> None:
    """⟨ab + cd, ab^p + cd^p⟩ by the module docstring's road: after a' = a + cw the fibre reads
    b·⟨a', b^(p−1)·c·w(w^(p−1) − 1)⟩, Γ = conv{(1, 1, 0), (0, p, 1)} under the weights (1, 2, 1),
    reached at t = p/(p + 1) (t ≥ θ, 2t ≥ θ + p(1 − θ)): λ = (p + 1)/(2p), m = 1 (p = 3: 2/3)."""
    got = rlct.from_ideal([a * b + c * d, a * b**p + c * d**p], A)
    assert got.exact and (got.lam, got.mult) == (sp.Rational(p + 1, 2 * p), 1)


def test_irrational_special_values_on_the_fibre() -> None:
    """⟨ab + cd, ab³ + 2cd³⟩: in chart b the fibre's vertex coefficient is c·w(2w² − 1), zero at
    w = ±1/√2; there, with v = w² − 1/2, the vertex is b³·c·v: the same polyhedron as at w = ±1
    for the tanh ideal, so λ = 2/3, m = 1 at those points and in all."""
    polys = [sp.Poly(f, *A) for f in (a * b + c * d, a * b**3 + 2 * c * d**3)]
    blown = blow_up_subspace(polys, (ZERO,) * 4, 3, 1)
    assert blown is not None and blown.fibre.special == {Fraction(0)}
    assert blown.fibre.algebraic == (
        AlgebraicPoints(d**2 - sp.Rational(1, 2), sp.Rational(2, 3), 1),
    )
    results = [_solve_ideal(p.generators, p.h, 0) for p in blown.points]
    total = combine_line(blown, results)
    assert total.exact and (total.lam, total.mult) == (sp.Rational(2, 3), 1)


def test_the_docstring_centre_and_its_charts() -> None:
    """The module docstring's route, centre b = d = 0 with chart b (d = b·w): after a' = a + c·w
    the fibre reads Γ = conv{(1, 1, 0), (0, 3, 1)} in (a', b, c), λ = 2/3, m = 1 off w ∈ {−1, 0,
    1}; every special point and chart d's point give 2/3 too."""
    polys = [sp.Poly(f, *A) for f in TANH]
    blown = blow_up_subspace(polys, (ZERO,) * 4, 3, 1)
    assert blown is not None
    assert [str(v) for v, _ in blown.changes] == ["a"]
    assert (blown.fibre.lam, blown.fibre.mult) == (sp.Rational(2, 3), 1)
    assert blown.fibre.special == {Fraction(-1), Fraction(0), Fraction(1)}
    results = [_solve_ideal(p.generators, p.h, 0) for p in blown.points]
    assert [(r.lam, r.mult) for r in results] == [(sp.Rational(2, 3), 1)] * 4
    total = combine_line(blown, results)
    assert (total.lam, total.mult) == (sp.Rational(2, 3), 1)


def test_every_centre_that_decides_gives_the_same_value() -> None:
    """The tanh ideal's centres a = c = 0 and b = d = 0, each in both charts, are decided point
    by point (the other two in the zeros, a = d and b = c, are declined), and all four roads give
    2/3, m = 1."""
    polys = [sp.Poly(f, *A) for f in TANH]
    decided = []
    for i, j in itertools.permutations(range(4), 2):
        if any(m[i] + m[j] == 0 for p in polys for m in p.monoms()):
            continue
        blown = blow_up_subspace(polys, (ZERO,) * 4, i, j)
        if blown is None:
            continue
        results = [_solve_ideal(p.generators, p.h, 1) for p in blown.points]
        got = combine_line(blown, results)
        if got.exact:
            decided.append(((i, j), got.lam, got.mult))
    assert len(decided) >= 4
    assert {(lam, mult) for _, lam, mult in decided} == {(sp.Rational(2, 3), 1)}


def test_tanh_with_a_prior_on_an_inner_weight() -> None:
    """Under |b|: chart b's prior is |b|², the weights (1, 3, 1) on (a', b, c), and Γ is reached
    at t = 3/5 on the point with weight 3/5 on (1, 1, 0): λ = 5/6, m = 1 (chart d's point, with
    w = b' carrying |b'|, gives 5/6 too)."""
    got = rlct.from_ideal(TANH, A, [0, 1, 0, 0])
    assert got.exact and (got.lam, got.mult) == (sp.Rational(5, 6), 1)


def test_three_variables_are_not_its_case() -> None:
    x3 = sp.symbols("x y z")
    polys = [sp.Poly(x3[0] * x3[1], *x3)]
    assert blow_up_subspace(polys, (ZERO,) * 3, 0, 1) is None


def _monomial(draw: st.DrawFn, degree: int) -> sp.Expr:
    exponents = [0, 0, 0, 0]
    for k in draw(st.lists(st.integers(0, 3), min_size=degree, max_size=degree)):
        exponents[k] += 1
    return sp.Mul(*(v**e for v, e in zip(A, exponents)))


@st.composite
def four_variable_ideals(draw: st.DrawFn) -> list[sp.Expr]:
    """One to three generators of one to three terms of degree 1–4 (affine terms included, so
    that the chart's changes are exercised), times a monomial now and then."""
    factor = draw(st.sampled_from((1, 1, a, b * c, d**2)))
    gens = []
    for _ in range(draw(st.integers(1, 3))):
        terms = draw(st.integers(1, 3))
        f = sum(
            draw(st.sampled_from((-2, -1, 1, 2, 3))) * _monomial(draw, draw(st.integers(1, 4)))
            for _ in range(terms)
        )
        gens.append(sp.expand(factor * f))
    return gens


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    four_variable_ideals(),
    st.tuples(*(st.sampled_from((0, 0, 1, 2)),) * 4),
    st.permutations(range(4)),
)
def test_forced_subspace_blowup_agrees_with_newton(generators, prior, order) -> None:
    """The blow-up of {x_i = x_j = 0}, forced on ideals that Newton's polyhedron solves on its
    own (an independent exact value): where every point is exact the value is Newton's, and
    otherwise Newton's λ lies inside the bounds."""
    polys = [p for p in (sp.Poly(g, *A) for g in generators) if not p.is_zero]
    i, j = order[:2]
    assume(polys and all(m[i] + m[j] > 0 for p in polys for m in p.monoms()))
    h = tuple(map(sp.Integer, prior))
    check_forced_blowup(polys, h, lambda p, h: blow_up_subspace(p, h, i, j), combine_line, 1)


@pytest.mark.parametrize("widths", [[1, 2, 3], [3, 2, 1], [1, 1, 2, 2]])
def test_deep_linear_networks_of_eight_parameters_at_the_origin(widths: list[int]) -> None:
    """The ideal of the product's entries at w* = 0 in seven or eight variables, exact through
    the subspace blow-up (and, for [1, 2, 3], a chart point that is a monomial factor times an
    ideal on other variables): Aoyagi's closed form, an independent value."""
    layers = [
        sp.Matrix(b_, a_, lambda i, j, k=k: sp.Symbol(f"w{k}_{i}{j}"))
        for k, (a_, b_) in enumerate(itertools.pairwise(widths))
    ]
    product = sp.eye(widths[0])
    for layer in layers:
        product = layer * product
    names = [v for layer in layers for v in layer]
    got = rlct.from_ideal([sp.expand(e) for e in product], names)
    closed = rlct.deep_linear_network(widths, 0)
    assert got.exact and (got.lam, got.mult) == (closed.lam, closed.mult)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 5),
    st.sampled_from((1, -1, 2, -2, 3, 4, -8)),
    st.sampled_from((1, -1, 2, 4, -4, 9)),
)
def test_two_units_with_other_output_weights(p: int, s: int, t: int) -> None:
    """⟨ab + s·cd, ab^p + t·cd^p⟩: after a' = a + s·c·w the fibre of chart b reads
    b·⟨a', b^(p−1)·c·w(t·w^(p−1) − s)⟩, the polyhedron of s = t = 1, and each real special value
    is a simple root (rational, or irrational and read in v = q(w)); so λ = (p + 1)/(2p), m = 1
    wherever the result is exact, and bounds must hold it."""
    got = rlct.from_ideal([a * b + s * c * d, a * b**p + t * c * d**p], A)
    want = sp.Rational(p + 1, 2 * p)
    if got.exact:
        assert (got.lam, got.mult) == (want, 1)
    else:
        assert got.lower <= want <= got.upper


def test_forced_blowup_of_a_smooth_generator_keeps_its_value() -> None:
    """⟨−2a²bd − 2ad − 2b⟩ under the uniform prior: the generator's linear term −2b makes it
    smooth at 0, so λ = 1/2, m = 1 (Newton agrees). Hypothesis drew it: the blow-up of
    {a = b = 0} had claimed exact 1 (m = 2), through chart a's point a·⟨a²bd + b + d⟩, whose
    blow-up of {b = d = 0} took a³b²d ~ abd ~ ab for homogeneous under w_d = 1 (a wrong linear
    programme, rlct.algebra.scaling), so that d' = −1, where a²bd' + 1 + d' vanishes, went
    unread."""
    polys = [sp.Poly(-2 * a**2 * b * d - 2 * a * d - 2 * b, *A)]
    h = (ZERO,) * 4
    newton = _solve_ideal(polys, h, 0)
    assert newton.exact and (newton.lam, newton.mult) == (sp.Rational(1, 2), 1)
    blown = blow_up_subspace(polys, h, 0, 1)
    got = combine_line(blown, [_solve_ideal(p.generators, p.h, 1) for p in blown.points])
    assert not got.exact or (got.lam, got.mult) == (newton.lam, newton.mult)
