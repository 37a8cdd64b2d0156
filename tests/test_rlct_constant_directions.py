"""K constant along some directions: λ and m from K on fewer variables
(rlct.reductions.constant_directions)."""

from __future__ import annotations

import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import rlct
from rlct.plane.resolve import resolve_plane
from rlct.reductions.constant_directions import drop_constant_directions

x, y, z, w = sp.symbols("x y z w")
s, t = sp.symbols("s t")
ZERO = sp.Integer(0)


def test_two_sixth_powers_of_linear_forms_in_three_variables() -> None:
    # K = u⁶ + v⁶ with u = x + y − z, v = 2x − y: the Newton polyhedron is one degenerate face whose
    # polynomial has no linear factor over Q (no coordinate change), so this was a bound. In the
    # coordinates (u, v, ·) it is s⁶ + t⁶ in two variables: λ = 1/6 + 1/6 = 1/3, m = 1.
    # (Written as a sum of sixth powers, rlct.reductions.linear_change reads it first; expanded, it
    # is this step's.)
    K = sp.expand((x + y - z) ** 6 + (2 * x - y) ** 6)
    r = rlct.from_polynomial(K, [x, y, z])
    assert (r.exact, r.lam, r.mult) == (True, sp.Rational(1, 3), 1)
    assert "constant along (1, 2, 3)" in str(r.conditions[0])


def test_the_reduction_keeps_the_prior_coordinates() -> None:
    # K = x⁴ + (y + z)² under the prior |x|: constant along (0, 1, −1), which leaves x alone.
    # On (x, y): x⁴ + y² with |x|, λ = (1 + 1)/4 + 1/2 = 1, m = 1.
    K = sp.Poly(x**4 + (y + z) ** 2, x, y, z)
    h = (sp.Integer(1), ZERO, ZERO)
    red = drop_constant_directions(K, h)
    assert red is not None
    assert (red.kept, red.h) == ((0, 1), (sp.Integer(1), ZERO))
    assert red.K == sp.Poly(x**4 + y**2, x, y)
    r = rlct.from_polynomial(K.as_expr(), [x, y, z], [1, 0, 0])
    assert (r.exact, r.lam, r.mult) == (True, sp.Integer(1), 1)


def test_directions_that_move_a_prior_coordinate_are_not_used() -> None:
    # (x + y)² is constant along (1, −1), but that direction moves x, which carries |x|.
    K = sp.Poly((x + y) ** 2, x, y)
    assert drop_constant_directions(K, (sp.Integer(1), ZERO)) is None
    assert drop_constant_directions(K, (ZERO, ZERO)) is not None


def test_no_constant_direction_is_no_reduction() -> None:
    assert (
        drop_constant_directions(sp.Poly(x**2 + y**4 + z**2 * w**2, x, y, z, w), (ZERO,) * 4)
        is None
    )
    # A variable K does not involve is not a direction to reduce (the other steps skip it).
    assert drop_constant_directions(sp.Poly(x**2 + y**4, x, y, z), (ZERO,) * 3) is None


def test_the_space_of_directions_has_the_right_dimension() -> None:
    # (x + y − z + w)² depends on one linear form of four variables: three directions, one kept.
    red = drop_constant_directions(sp.Poly((x + y - z + w) ** 2, x, y, z, w), (ZERO,) * 4)
    assert red is not None and len(red.kept) == 1


_coefficient = st.integers(-2, 2)
_binary = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), _coefficient), max_size=4)


def _plane_polynomial(terms: list[tuple[int, int, int]]) -> sp.Expr:
    return sum((c * s**i * t**j for i, j, c in terms if 0 < i + j <= 3), ZERO)


@settings(max_examples=40, deadline=None)
@given(
    _binary,
    _binary,
    st.lists(st.lists(_coefficient, min_size=4, max_size=4), min_size=2, max_size=2),
    st.sampled_from([3, 4]),
    st.integers(0, 2),
)
def test_a_plane_polynomial_of_two_linear_forms_agrees_with_the_plane_resolution(
    f1, f2, rows, d, hx
) -> None:
    """K(w) = f(u(w), v(w)) for f = f₁² + f₂² in (s, t) and two independent linear forms u, v of
    d variables; with a prior |w_1|^h where u = w_1 (so the directions avoid w_1): the same λ and
    m as f under |s|^h by the plane resolution, an independent exact method."""
    f = sp.expand(_plane_polynomial(f1) ** 2 + _plane_polynomial(f2) ** 2)
    assume(f != 0)
    V = [x, y, z, w][:d]
    u = V[0] if hx else sum(c * v for c, v in zip(rows[0], V))
    v = sum(c * v for c, v in zip(rows[1], V[1:] if hx else V))
    assume(sp.Matrix([[sp.diff(e, q) for q in V] for e in (u, v)]).rank() == 2)
    plane = resolve_plane(sp.Poly(f, s, t), (sp.Integer(hx), ZERO))
    K = sp.expand(f.subs({s: u, t: v}, simultaneous=True))
    r = rlct.from_polynomial(K, V, [hx] + [0] * (d - 1))
    assert (r.exact, r.lam, r.mult) == (True, plane.lam, plane.mult)
