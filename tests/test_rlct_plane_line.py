"""rlct.plane.along_line and rlct.blowup.line: the plane resolution with a parameter along a line of
zeros, and the blow-up of a coordinate line that uses it. Families whose value is known at every
w from an independent route (a coordinate change that depends on w, then Newton's polygon), the
special values, the declines, and forced line blow-ups against Newton's exact values."""

from __future__ import annotations

from fractions import Fraction

import sympy as sp
from _ideals import ZEROS_ON_CURVES, X, check_forced_blowup
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rlct
from rlct.blowup.line import blow_up_line, combine_line
from rlct.plane.along_line import resolve_along_line

x, y, w = sp.symbols("x y w")
ZERO = sp.Integer(0)


def _line(K: sp.Expr, hx: int = 0, hy: int = 0):
    return resolve_along_line(sp.Poly(sp.expand(K), x, y, w), (sp.Integer(hx), sp.Integer(hy)))


@st.composite
def sheared_families(draw: st.DrawFn) -> tuple[sp.Expr, sp.Expr, int]:
    """K = x^(2a)·((y − c(w)·x^k)^(2q) + x^(2p)) with c ≢ 0 a polynomial in w with rational roots
    (where c vanishes the chart tower changes: a special value), and its straightened
    form G = x^(2a)·(y^(2q) + x^(2p)): y' = y − c(w)x^k has Jacobian 1 and keeps |x|^h, so at
    every w the value of K under |x|^h is G's, which Newton's polygon gives (G is non-degenerate)."""
    a, p, q = draw(st.integers(0, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    k, h = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    roots = draw(st.lists(st.integers(-2, 2), max_size=2))  # rational: the special values are
    c = draw(st.sampled_from([-2, -1, 1, 3])) * sp.Mul(*(w - r for r in roots))
    G = x ** (2 * a) * (y ** (2 * q) + x ** (2 * p))
    K = x ** (2 * a) * ((y - c * x**k) ** (2 * q) + x ** (2 * p))
    return K, G, h


@settings(max_examples=25, deadline=None)
@given(sheared_families())
def test_sheared_families_take_the_straightened_value(family) -> None:
    K, G, h = family
    found = _line(K, hx=h)
    assert found is not None
    expected = rlct.from_polynomial(G, (x, y), [h, 0])
    assert expected.exact and (found.lam, found.mult) == (expected.lam, expected.mult)
    assert found.witness not in found.special


def test_a_root_that_moves_with_w() -> None:
    """K = (y − w·x)² + x⁴ under the uniform prior: the edge's face polynomial (v − w)² has its
    root at v = w, and after y' = y − w·x, K = y'² + x⁴: λ = 1/2 + 1/4 = 3/4, m = 1 at every w.
    The run at w = 0 sees a different chart tower (no root on the torus), so 0 is special."""
    found = _line((y - w * x) ** 2 + x**4)
    assert found is not None
    assert (found.lam, found.mult) == (sp.Rational(3, 4), 1)
    assert found.special == {Fraction(0)}


def test_special_values_where_the_coefficients_vanish() -> None:
    """K = (w² − 1)²·x² + y⁴: at w ≠ ±1 a unit times x² plus y⁴, λ = 1/2 + 1/4 = 3/4, m = 1;
    at w = ±1 the vertex x² disappears (K = y⁴ vanishes on the whole plane y = 0), so ±1 are
    special and nothing else is."""
    found = _line((w**2 - 1) ** 2 * x**2 + y**4)
    assert found is not None
    assert (found.lam, found.mult) == (sp.Rational(3, 4), 1)
    assert found.special == {Fraction(1), Fraction(-1)}


def test_roots_outside_q_of_w_are_declined() -> None:
    """(y² − w·x²)² has the real roots y = ±√w·x for w > 0: not in Q(w), so the line is declined
    rather than read at one witness."""
    assert _line((y**2 - w * x**2) ** 2) is None


def test_irrational_special_values_are_declined() -> None:
    """(w² − 2)²x² + y²: the vertex x² vanishes at w = ±√2, points the caller could not solve:
    declined."""
    assert _line((w**2 - 2) ** 2 * x**2 + y**2) is None


def test_no_real_roots_on_the_torus_is_a_newton_case() -> None:
    """K = x² + (1 + w²)·y²: the face polynomial 1 + (1 + w²)v² has no real root for any w (its
    discriminant −4(1 + w²) and leading coefficient never vanish): λ = 1, m = 1, no special value."""
    found = _line(x**2 + (1 + w**2) * y**2)
    assert found is not None
    assert (found.lam, found.mult) == (sp.Integer(1), 1) and found.special == frozenset()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    ZEROS_ON_CURVES,
    st.tuples(*(st.sampled_from((0, 0, 1, 2)),) * 3),
    st.sampled_from([(0, 1), (0, 2), (1, 2), (1, 0), (2, 0), (2, 1)]),
)
def test_forced_line_blowup_agrees_with_newton(generators, prior, line) -> None:
    """The blow-up of a coordinate line in the zeros, forced on ideals that Newton's polyhedron
    solves on its own (an independent exact value): where every point is exact the value is
    Newton's, and otherwise Newton's λ lies inside the bounds."""
    polys = [sp.Poly(g, *X) for g in generators]
    polys = [p for p in polys if not p.is_zero]
    i, j = line
    assume(len(polys) == 2 and all(m[i] + m[j] > 0 for p in polys for m in p.monoms()))
    h = tuple(map(sp.Integer, prior))
    check_forced_blowup(polys, h, lambda p, h: blow_up_line(p, h, i, j), combine_line, 1)


def test_a_witness_where_two_roots_meet_is_not_trusted() -> None:
    """K = (y − x)²·(y − w·x)² + x⁶: the face polynomial (v − 1)²(v − w)² of the edge (4, 0)–(0, 4)
    has its roots meet at w = 1, the first witness tried. At w ≠ 0, 1 the edge gives 2/4 = 1/2,
    and at v = 1 (x = u, y = u(1 + v')) K ≍ u⁴(v'² + u²) under |u|: the u-axis 2/4 and the edge
    (6, 0)–(4, 2) 3/6 tie at the vertex (4, 2), so λ = 1/2, m = 2 (v = w the same). At w = 1,
    K = (y − x)⁴ + x⁶ has 1/4 + 1/6 = 5/12: 1 must be special, not covered by its own run. The
    plane resolution over Q at fixed w (rlct.from_polynomial) checks both."""
    found = _line((y - x) ** 2 * (y - w * x) ** 2 + x**6)
    assert found is not None
    assert Fraction(1) in found.special
    for w0 in (2, -1, 3):
        at = rlct.from_polynomial(((y - x) ** 2 * (y - w0 * x) ** 2 + x**6), (x, y))
        assert at.exact and (found.lam, found.mult) == (at.lam, at.mult)
    at_one = rlct.from_polynomial((y - x) ** 4 + x**6, (x, y))
    assert at_one.exact and at_one.lam == sp.Rational(5, 12)
