"""rlct.shapes.smooth: K = unit·Π f_i^(e_i) with factors crossing normally at 0, against hand values
and against the plane resolution (an independent method) in two variables."""

from __future__ import annotations

import time

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import rlct
from rlct.plane.resolve import resolve_plane
from rlct.shapes.smooth import METHOD, smooth_crossing_rlct

x, y, z = sp.symbols("x y z")


def _smooth(K: sp.Expr, gens=(x, y, z), h=None):
    return smooth_crossing_rlct(sp.Poly(K, *gens), tuple(map(sp.Integer, h or (0,) * len(gens))))


def test_products_of_independent_linear_forms() -> None:
    # u = x − y, v = x + y + z, w = z: K = u²v², λ = 1/2 with m = 2 (it was 1/4 ≤ λ ≤ 1/2)
    r = rlct.from_polynomial((x - y) ** 2 * (x + y + z) ** 2, [x, y, z])
    assert (r.exact, r.lam, r.mult, r.method) == (True, sp.Rational(1, 2), 2, METHOD)
    r = rlct.from_polynomial((x - y) ** 2 * (x + 2 * y - z) ** 6 * (2 + x), [x, y, z])
    assert (r.lam, r.mult) == (sp.Rational(1, 6), 1)


def test_a_high_power_of_a_linear_form_is_immediate() -> None:
    t0 = time.perf_counter()
    r = rlct.from_polynomial((x + y + z) ** 60, [x, y, z])  # took 132 s through Gröbner bases
    assert (r.exact, r.lam, r.mult) == (True, sp.Rational(1, 60), 1)
    assert time.perf_counter() - t0 < 20  # a factorisation, not a degenerate-face search


def test_curved_factors_with_independent_gradients() -> None:
    # y − x² and z − x³ have gradients (0, 1, 0) and (0, 0, 1) at 0: λ = min(1/2, 1/4)
    r = rlct.from_polynomial((y - x**2) ** 2 * (z - x**3) ** 4, [x, y, z])
    assert (r.exact, r.lam, r.mult) == (True, sp.Rational(1, 4), 1)


def test_the_prior_coordinates_take_part() -> None:
    # K = x²(x + y)², prior |x|: in u = x, v = x + y, λ = min((1 + 1)/2, 1/2) = 1/2, m = 1
    r = rlct.from_polynomial(x**2 * (x + y) ** 2, [x, y], [1, 0])
    assert (r.lam, r.mult) == (sp.Rational(1, 2), 1)
    # three lines in a plane (x − y, x + y and the prior's x = 0) cannot all be coordinates
    assert _smooth((x - y) ** 2 * (x + y) ** 2, (x, y), (3, 0)) is None
    # the prior |x|³ with K = (y − x)², transversal to x = 0: λ is (y − x)²'s, 1/2
    r = _smooth((y - x) ** 2, (x, y), (3, 0))
    assert (r.lam, r.mult) == (sp.Rational(1, 2), 1)
    # prior |x|^(−1/2) with K = x²(x + y)²: λ = min((1/2)/2, 1/2) = 1/4
    r = rlct.from_polynomial(x**2 * (x + y) ** 2, [x, y], [sp.Rational(-1, 2), 0])
    assert (r.lam, r.mult) == (sp.Rational(1, 4), 1)


def test_tangent_factors_are_left_to_the_other_methods() -> None:
    # y ∓ x² share the gradient (0, 1): not a normal crossing. Blowing up y = x²·y₁ gives
    # K = x⁸(y₁ − 1)²(y₁ + 1)² with Jacobian |x|², so λ = min(3/8, 1/2) = 3/8, m = 1
    K = (y - x**2) ** 2 * (y + x**2) ** 2
    assert _smooth(K, (x, y)) is None
    r = rlct.from_polynomial(K, [x, y])
    assert (r.exact, r.lam, r.mult) == (True, sp.Rational(3, 8), 1) and r.method != METHOD


def test_what_is_not_a_non_negative_crossing_is_declined() -> None:
    assert _smooth((x + y) ** 3 * (x - y)) is None  # odd exponents: K changes sign
    assert _smooth((x + y) ** 2 * (x - 2)) is None  # the unit is −2 at 0
    assert _smooth(x**2 * y**4) is None  # coordinates only: the Newton polyhedron's case
    assert _smooth((x**2 + y**2) * (x + z) ** 2) is None  # x² + y² is singular at 0
    r = _smooth((x + y) ** 2 * (3 + x))
    assert (r.lam, r.mult) == (sp.Rational(1, 2), 1)


_forms = st.tuples(st.integers(-3, 3), st.integers(-3, 3)).filter(lambda ab: ab != (0, 0))


@settings(max_examples=25, deadline=None)
@given(_forms, _forms, st.integers(1, 3), st.integers(1, 3), st.integers(0, 2))
def test_two_lines_agree_with_the_plane_resolution(f, g, k1, k2, hx) -> None:
    """Two lines through 0 with independent directions, K = f^(2k₁)·g^(2k₂), prior |x|^h."""
    a, b = f
    c, d = g
    if a * d - b * c == 0:
        return  # parallel lines: one factor, not a crossing of two
    K = sp.Poly((a * x + b * y) ** (2 * k1) * (c * x + d * y) ** (2 * k2), x, y)
    h = (sp.Integer(hx), sp.Integer(0))
    mine = smooth_crossing_rlct(K, h)
    if mine is None:  # declined: a monomial (Newton's case), or x carries a prior on a line x = 0
        assert len(K.terms()) == 1 or hx > 0
        return
    plane = resolve_plane(K, h)
    assert (mine.lam, mine.mult) == (plane.lam, plane.mult)


def test_a_regular_ideal_of_many_generators_is_half_their_number() -> None:
    """The deep linear network 1-1-10 at rank 1: ⟨w0 + w1_0 + w0·w1_0, w1_i·(1 + w0)⟩ (i = 1..9)
    has a Newton polyhedron of 2^11 faces (TooLargeError before); its ten gradients at 0 are
    independent, so λ = 10/2 (Aoyagi: r(M + N − r)/2 = 5, m = 1)."""
    from rlct.cascade import from_ideal
    from verification.closed_forms import dln_ideal

    gens, names = dln_ideal([1, 1, 10], 1)
    got = from_ideal(gens, names)
    formula = rlct.deep_linear_network([1, 1, 10], 1)
    assert got.exact and (got.lam, got.mult) == (formula.lam, formula.mult) == (5, 1)
    assert got.method.startswith("regular ideal")


def test_a_regular_ideal_needs_independent_gradients_and_prior_coordinates() -> None:
    from rlct.shapes.smooth import regular_ideal_rlct

    x, y, z = sp.symbols("x y z")
    polys = [sp.Poly(e, x, y, z, domain=sp.QQ) for e in (x + y**2, y + x * z)]
    got = regular_ideal_rlct(polys, (0, 0, 0))
    assert got is not None and (got.lam, got.mult) == (1, 1)
    assert regular_ideal_rlct(polys, (0, 0, 2)) is not None  # z is free of the gradients
    assert regular_ideal_rlct(polys, (2, 0, 0)) is None  # |x|² on the generator x + y²
    dependent = [sp.Poly(e, x, y, z, domain=sp.QQ) for e in (x + y**2, x + z**2)]
    assert regular_ideal_rlct(dependent, (0, 0, 0)) is None
    # with |x|² the value differs, so declining matters: x = u − v² + … in the coordinates
    # u = x + y², v = y + xz, so K ~ u'² + v² under |u'|² (u' = x): λ = 3/2 + 1/2 = 2, m = 1
    got = rlct.from_ideal([x + y**2, y + x * z], [x, y, z], [2, 0, 0])
    assert got.exact and (got.lam, got.mult) == (2, 1)
