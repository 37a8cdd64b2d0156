"""rlct.shapes.arrangement: products of linear forms, against hand values in three and four
variables and against the plane resolution (an independent method) for lines in the plane."""

from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import rlct
from rlct.plane.resolve import resolve_plane
from rlct.shapes.arrangement import METHOD, arrangement_rlct

x, y, z, w = sp.symbols("x y z w")
R = sp.Rational


def _lines(K: sp.Expr, gens, h=None):
    return arrangement_rlct(sp.Poly(K, *gens), tuple(map(sp.Integer, h or (0,) * len(gens))))


def test_three_planes_through_a_line() -> None:
    # x + y + z = (x + 2y) − (y − z): the planes share a line, whose blow-up has ratio 2/6
    r = rlct.from_polynomial((x + 2 * y) ** 2 * (y - z) ** 2 * (x + y + z) ** 2, [x, y, z])
    assert (r.exact, r.lam, r.mult, r.method) == (True, R(1, 3), 1, METHOD)


def test_four_general_planes_meet_only_at_the_origin() -> None:
    # the lines (two planes each) are not dense; the origin is, with ratio 3/8
    r = _lines(x**2 * y**2 * z**2 * (x + y + z) ** 2, (x, y, z))
    assert (r.lam, r.mult) == (R(3, 8), 1)


def test_a_pencil_and_a_transversal_plane_tie_through_the_prior() -> None:
    # (xy(x − y))²·z⁶ under |z|: the z-axis has ratio 2/6 and the plane z = 0 (1 + 1)/6; they
    # are incomparable and meet at the origin, which is not dense: m = 2 (as the product of the
    # two blocks, λ = min(1/3, 1/3))
    r = _lines((x * y * (x - y)) ** 2 * z**6, (x, y, z), (0, 0, 1))
    assert (r.lam, r.mult) == (R(1, 3), 2)


def test_coordinate_hyperplanes_give_the_normal_crossing_values() -> None:
    r = _lines(x**2 * y**2 * z**4, (x, y, z), (1, 0, 0))
    assert (r.lam, r.mult) == (R(1, 4), 1)  # min((1 + 1)/2, 1/2, 1/4)
    r = _lines(x**2 * y**2 * (z + w) ** 2, (x, y, z, w))
    assert (r.lam, r.mult) == (R(1, 2), 3)


def test_what_is_not_a_non_negative_product_of_linear_forms_is_declined() -> None:
    assert _lines((x + y) ** 2 * (x - y**2) ** 2, (x, y)) is None  # a curved factor
    assert _lines((x + y) ** 3 * (x - y) ** 3, (x, y)) is None  # odd exponents
    assert _lines(-((x + y) ** 2), (x, y)) is None  # K ≤ 0
    many = sp.Mul(*((x + k * y + k * k * z) ** 2 for k in range(1, 14)))
    assert _lines(many, (x, y, z)) is None  # 13 hyperplanes: over MAX_HYPERPLANES


_direction = st.tuples(st.integers(-3, 3), st.integers(-3, 3)).filter(lambda v: v != (0, 0))


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(_direction, st.integers(1, 3)), min_size=1, max_size=4),
    st.integers(0, 2),
)
def test_lines_in_the_plane_agree_with_the_plane_resolution(lines, hx) -> None:
    """K = Π (a_i x + b_i y)^(2k_i) (parallel lines merged), prior |x|^h."""
    K = sp.Poly(sp.Mul(*((a * x + b * y) ** (2 * k) for (a, b), k in lines)), x, y)
    h = (sp.Integer(hx), sp.Integer(0))
    mine = arrangement_rlct(K, h)
    plane = resolve_plane(K, h)
    assert mine is not None
    assert (mine.lam, mine.mult) == (plane.lam, plane.mult)
