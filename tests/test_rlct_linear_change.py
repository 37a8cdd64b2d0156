"""Generators that are products of independent linear forms: a monomial ideal after a linear
change of coordinates (rlct.reductions.linear_change)."""

from __future__ import annotations

import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import rlct
from rlct.plane.resolve import resolve_plane
from rlct.reductions.linear_change import monomial_after_linear_change

x, y, z = sp.symbols("x y z")
R = sp.Rational
ZERO = sp.Integer(0)


def _polys(*fs: sp.Expr) -> list[sp.Poly]:
    return [sp.Poly(f, x, y, z) for f in fs]


def test_a_sum_of_squares_of_linear_products() -> None:
    # u = x + y + z, v = x − y: K = u⁴ + v²z², blocks u⁴ (1/4) and v²z² (1/2, m = 2).
    K = (x + y + z) ** 4 + (x - y) ** 2 * z**2
    r = rlct.from_polynomial(K, [x, y, z])
    assert (r.exact, r.lam, r.mult) == (True, R(3, 4), 2)
    assert "linear change" in r.method
    r = rlct.from_ideal([(x + y) * z, (x - y) ** 2], [x, y, z])  # ⟨u·z, v²⟩: 1/2 + 1/4, m = 2
    assert (r.exact, r.lam, r.mult) == (True, R(3, 4), 2)


def test_the_change_keeps_prior_coordinates() -> None:
    change = monomial_after_linear_change(_polys((x + y) * z, z**2), (ZERO, ZERO, sp.Integer(2)))
    assert change is not None
    assert dict(zip(change.names, change.h)) == {"x + y": 0, "z": 2, "x": 0}  # x completes
    # A prior on x, which lies in the span of x + y and x − y: no such change.
    polys = _polys((x + y) * z, (x - y) ** 2)
    assert monomial_after_linear_change(polys, (sp.Integer(1), ZERO, ZERO)) is None


def test_declines() -> None:
    h = (ZERO,) * 3
    assert monomial_after_linear_change(_polys(x * y, (x + y) * z), h) is None  # x, y, x + y
    assert monomial_after_linear_change(_polys(x * y - z**2), h) is None  # not linear factors


_form = st.tuples(st.integers(-2, 2), st.integers(-2, 2))


@settings(max_examples=60, deadline=None)
@given(
    _form,
    _form,
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=3),
)
def test_two_variables_agree_with_the_plane_resolution(a, b, powers) -> None:
    """⟨ℓ₁^i ℓ₂^j⟩ for two independent forms: λ and m equal the plane resolution's of Σ g²."""
    l1, l2 = a[0] * x + a[1] * y, b[0] * x + b[1] * y
    assume(a[0] * b[1] - a[1] * b[0] != 0)
    gens = [l1**i * l2**j for i, j in powers if i + j > 0]
    assume(gens)
    r = rlct.from_ideal(gens, [x, y])
    plane = resolve_plane(sp.Poly(sp.expand(sum(g**2 for g in gens)), x, y), (ZERO, ZERO))
    assert (r.exact, r.lam, r.mult) == (True, plane.lam, plane.mult)
