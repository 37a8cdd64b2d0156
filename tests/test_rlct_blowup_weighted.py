"""rlct.blowup.weighted: the weighted blow-up of the origin for ideals whose generators are all
quasi-homogeneous for one weight. A hand value (⟨x²z − y³, yz − x³⟩, derived below), the orbit
test that merges one point seen in several charts, declines, and forced weighted blow-ups
against Newton's exact values on random quasi-homogeneous ideals it solves on its own."""

from __future__ import annotations

from fractions import Fraction

import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rlct
from rlct.blowup.weighted import blow_up_weighted, integer_weights, same_orbit
from rlct.cascade import _solve_ideal
from rlct.newton.analysis import ideal_step

x, y, z, t = X = sp.symbols("x y z t")
ZERO3 = (sp.Integer(0),) * 3


def _polys(exprs, gens=(x, y, z)):
    return [sp.Poly(e, *gens, domain=sp.QQ) for e in exprs]


def test_a_curve_of_zeros_with_weights_4_5_7() -> None:
    """⟨x²z − y³, yz − x³⟩, zeros the z-axis and the curve (t⁴, t⁵, t⁷): both generators are
    quasi-homogeneous for w = (4, 5, 7), of degrees 15 and 12, so λ_E = |w|/(2·12) = 2/3.

    Chart x (x = u⁴, y = u⁵y', z = u⁷z', |J| = 4|u|¹⁵): u¹²·⟨y'z' − 1, u³(z' − y'³)⟩. On the curve
    y'z' = 1 off z' = y'³ the ideal is u¹²·⟨v, u³⟩ (v = y'z' − 1): K = u²⁴(v² + u⁶) under |u|¹⁵,
    the ray t·(16, 1) meets conv{(24, 2), (30, 0)} at t = 30/19 (weights 15/19, 4/19), an edge:
    λ = 19/30, m = 1. Where also z' = y'³ (y' = z' = ±1, one point [1 : 1 : 1] of the weighted
    plane), v and w = z' − y'³ are coordinates (Jacobian det 4), u¹²·⟨v, u³w⟩: the ray meets the
    face through (24, 2, 0), (30, 0, 2) in its interior at the same t (m = 1). Chart x = −u⁴:
    y'z' = −1 and z' = y'³ have no real common zero. Chart z (z = u⁷): at x' = y' = 0 (the z-axis)
    the ideal is u¹²·⟨y' − x'³, u³(x'² − y'³)⟩ ≍ u¹²·⟨y'', u³x'²⟩; the ray t·(16, 1, 1) meets
    conv{(24, 0, 2), (30, 4, 0)} + R³ at t = 30/19 again, with the x' coordinate slack: m = 1.
    So λ = 19/30, m = 1 (Newton's bound was 1/4 ≤ λ ≤ 19/30 at best)."""
    gens = [x**2 * z - y**3, y * z - x**3]
    got = rlct.from_ideal(gens, (x, y, z))
    assert got.exact and (got.lam, got.mult) == (sp.Rational(19, 30), 1)
    assert "weighted blow-up of the origin" in got.method
    blown = blow_up_weighted(_polys(gens), ZERO3)
    assert blown is not None and blown.weights == (4, 5, 7) and blown.order == 12
    assert blown.generic == sp.Rational(2, 3)
    # [1 : 1 : 1] is seen four times (chart x twice: u and −u give it), and merged into one
    labels = [p.label for p in blown.points]
    assert len(labels) == 5 and len(set(blown.classes)) == 2
    # K given as the sum of squares (as written: an expanded K does not get the blow-ups)
    square = rlct.from_polynomial(gens[0] ** 2 + gens[1] ** 2, (x, y, z))
    assert square.exact and (square.lam, square.mult) == (sp.Rational(19, 30), 1)


def test_the_value_survives_sign_changes_and_a_permutation() -> None:
    """x ↦ ±x, y ↦ ±y, z ↦ ±z change which charts carry the curve (x = −u⁴ where x's sign
    flips) but not λ, m; nor does renaming the variables. Under the prior |x| the chart
    exponent is 4·2 + 5 + 7 − 1 = 19 and the curve's u¹²·⟨v, u³⟩ meets t·(20, 1) at t = 30/23."""
    base = [x**2 * z - y**3, y * z - x**3]
    for signs in [(-1, 1, 1), (1, -1, -1), (-1, -1, 1)]:
        flip = dict(zip((x, y, z), (s * v for s, v in zip(signs, (x, y, z)))))
        gens = [f.xreplace(flip) for f in base]
        got = rlct.from_ideal(gens, (x, y, z))
        assert got.exact and (got.lam, got.mult) == (sp.Rational(19, 30), 1)
    renamed = [f.xreplace({x: y, y: z, z: x}) for f in base]
    got = rlct.from_ideal(renamed, (x, y, z))
    assert got.exact and (got.lam, got.mult) == (sp.Rational(19, 30), 1)
    prior = rlct.from_ideal(base, (x, y, z), (1, 0, 0))
    assert prior.exact and (prior.lam, prior.mult) == (sp.Rational(23, 30), 1)


def test_points_of_one_orbit_are_recognised_exactly() -> None:
    F = Fraction
    w = (4, 5, 7)
    assert same_orbit((F(1), F(1), F(1)), (F(1), F(-1), F(-1)), w)  # t = −1
    assert same_orbit((F(1), F(1), F(1)), (F(16), F(32), F(128)), w)  # t = 2
    assert not same_orbit((F(1), F(1), F(1)), (F(1), F(1), F(-1)), w)
    assert not same_orbit((F(1), F(1), F(1)), (F(-1), F(1), F(1)), w)  # t⁴ > 0
    assert not same_orbit((F(1), F(0), F(1)), (F(1), F(1), F(1)), w)  # supports differ
    assert not same_orbit((F(1), F(2), F(1)), (F(16), F(32), F(128)), w)


def test_weights_are_the_primitive_integer_vector() -> None:
    assert integer_weights(_polys([x**2 * z - y**3, y * z - x**3])) == (4, 5, 7)
    w = integer_weights(_polys([x**3 - y**2]))  # z is free: any weight ≥ 1 of it
    assert w is not None and 3 * w[0] == 2 * w[1] and min(w) >= 1
    assert integer_weights(_polys([x**3 - y**2 + y])) is None


def test_declines_where_the_step_does_not_apply() -> None:
    assert blow_up_weighted(_polys([x**2 - y + y**2, z]), ZERO3) is None  # not quasi-homogeneous
    assert blow_up_weighted(_polys([x * y, x * z]), ZERO3) is None  # x divides both
    assert blow_up_weighted(_polys([x**2 - y * z, y**2 - x * z]), ZERO3) is None  # w = (1, 1, 1)


def _monomials(w: tuple[int, ...], d: int) -> list[tuple[int, ...]]:
    """Exponent vectors α ≠ 0 with ⟨w, α⟩ = d."""
    if len(w) == 1:
        return [(d // w[0],)] if d % w[0] == 0 and d else []
    out = []
    for a in range(d // w[0] + 1):
        rest = d - a * w[0]
        out += [(a, *m) for m in _monomials(w[1:], rest)] if rest else [(a, *(0,) * (len(w) - 1))]
    return [m for m in out if any(m)]


@st.composite
def quasi_homogeneous_ideals(draw):
    """1–3 generators, each 1–3 terms of one w-degree, w ∈ {1..4}^n not all equal, n = 3 or 4,
    coefficients ±1..3, prior exponents 0 or 1."""
    n = draw(st.sampled_from([3, 3, 4]))
    w = tuple(draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)))
    assume(len(set(w)) > 1)
    gens = X[:n]
    polys = []
    for _ in range(draw(st.integers(1, 3))):
        ms = _monomials(w, draw(st.integers(max(w), 3 * max(w))))
        assume(ms)
        chosen = draw(st.lists(st.sampled_from(ms), min_size=1, max_size=3, unique=True))
        coeffs = draw(st.lists(st.sampled_from([-3, -2, -1, 1, 2, 3]), min_size=3, max_size=3))
        f = sum(c * sp.Mul(*(v**e for v, e in zip(gens, m))) for c, m in zip(coeffs, chosen))
        polys.append(sp.Poly(f, *gens, domain=sp.QQ))
    h = tuple(
        sp.Integer(e) for e in draw(st.lists(st.sampled_from([0, 0, 1]), min_size=n, max_size=n))
    )
    return polys, h


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(quasi_homogeneous_ideals())
def test_forced_weighted_blowups_agree_with_newton(case) -> None:
    """Where Newton's polyhedron alone is exact, the weighted blow-up, forced, must give the same
    λ and m where it is exact, and bounds holding Newton's λ otherwise."""
    polys, h = case
    newton = ideal_step(polys, h).result
    assume(newton.exact)
    blown = blow_up_weighted(polys, h)
    assume(blown is not None)
    got = blown.solve_points(lambda q, hq: _solve_ideal(q, hq, 0))
    if got.exact:
        assert (got.lam, got.mult) == (newton.lam, newton.mult)
    else:
        assert got.lower <= newton.lam <= got.upper
