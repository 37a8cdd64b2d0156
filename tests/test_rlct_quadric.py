"""rlct.shapes.quadric: K = unit·q^e for a non-degenerate quadratic form q, against hand values and,
in two variables, against the plane resolution (an independent method)."""

from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import rlct
from rlct.plane.resolve import resolve_plane
from rlct.shapes.quadric import METHOD, quadric_power_rlct

x, y, z, w = sp.symbols("x y z w")
R = sp.Rational


def _quadric(K: sp.Expr, gens, h=None):
    return quadric_power_rlct(sp.Poly(K, *gens), tuple(map(sp.Integer, h or (0,) * len(gens))))


def test_the_cone_and_other_indefinite_forms_in_three_or_more_variables() -> None:
    # the cone xy = z²: its smooth points give 1/e, the origin's blow-up d/(2e) = 3/4 (was
    # reported as 1/4 ≤ λ ≤ 3/4)
    r = rlct.from_polynomial((x * y - z**2) ** 2, [x, y, z])
    assert (r.exact, r.lam, r.mult, r.method) == (True, R(1, 2), 1, METHOD)
    r = rlct.from_polynomial((x * y - z**2) ** 4 * (1 + x), [x, y, z])
    assert (r.lam, r.mult) == (R(1, 4), 1)
    r = rlct.from_polynomial((x**2 + y**2 - z**2 - w**2) ** 2, [x, y, z, w])
    assert (r.lam, r.mult) == (R(1, 2), 1)


def test_definite_forms_give_d_over_2e() -> None:
    # in polar coordinates K = ρ^(2e), dw = ρ^(d−1)dρ: λ = d/(2e)
    r = _quadric((x**2 + y**2 + 2 * z**2) ** 3, (x, y, z))
    assert (r.lam, r.mult) == (R(1, 2), 1)
    r = _quadric(-((-(x**2) - x * y - y**2) ** 3), (x, y))  # a negative-definite q, odd e
    assert (r.lam, r.mult) == (R(1, 3), 1)


def test_two_real_lines_irreducible_over_q() -> None:
    # x² − 2y² = (x − √2y)(x + √2y): two lines crossing normally, λ = 1/e with m = 2
    r = rlct.from_polynomial((x**2 - 2 * y**2) ** 2, [x, y])
    assert (r.exact, r.lam, r.mult) == (True, R(1, 2), 2)


def test_what_is_not_such_a_power_is_declined() -> None:
    assert _quadric((x * y - z**2) ** 3, (x, y, z)) is None  # odd e: K changes sign
    assert _quadric((x * y - z**2) ** 2 * (x - 1), (x, y, z)) is None  # K ≤ 0 near 0
    assert _quadric((x * y - z**2) ** 2, (x, y, z), (1, 0, 0)) is None  # a prior on x
    assert _quadric((x**2 - y**2 + x * z) ** 2 * x**2, (x, y, z)) is None  # two vanishing factors
    assert _quadric((x * y - z**3) ** 2, (x, y, z)) is None  # not a quadratic form
    # (x − y)² − z² factors over Q into two planes crossing normally: rlct.shapes.smooth's case
    crossing = (x**2 - 2 * x * y + y**2 - z**2) ** 2
    assert _quadric(crossing, (x, y, z)) is None
    assert (
        rlct.from_polynomial(crossing, [x, y, z]).lam,
        rlct.from_polynomial(crossing, [x, y, z]).mult,
    ) == (R(1, 2), 2)


@settings(max_examples=30, deadline=None)
@given(st.integers(-4, 4), st.integers(-4, 4), st.integers(-4, 4), st.integers(1, 4))
def test_binary_forms_agree_with_the_plane_resolution(a, b, c, e) -> None:
    """q = ax² + bxy + cy² with b² ≠ 4ac, K = q^e (times −1 where that makes K ≥ 0)."""
    if b * b == 4 * a * c:
        return  # degenerate: a square of a line, or zero
    K = sp.Poly((a * x**2 + b * x * y + c * y**2) ** e, x, y)
    if K.LC() < 0 and (b * b < 4 * a * c):
        K = -K  # a negative-definite q with e odd
    mine = quadric_power_rlct(K, (R(0), R(0)))
    disc = b * b - 4 * a * c
    if mine is None:  # declined: an indefinite q with e odd (K < 0 somewhere), or q = two lines
        assert disc > 0 and (e % 2 == 1 or sp.sqrt(disc).is_integer)
        return
    plane = resolve_plane(K, (R(0), R(0)))
    assert (mine.lam, mine.mult) == (plane.lam, plane.mult)
