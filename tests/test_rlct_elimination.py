"""A generator affine in one variable eliminated from an ideal (rlct.reductions.elimination)."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import rlct
from rlct.plane.resolve import resolve_plane
from rlct.reductions.elimination import eliminate_affine_generator, square_generators

x, y, z, w = sp.symbols("x y z w")
R = sp.Rational
ZERO = sp.Integer(0)


def test_a_sum_of_two_squares_in_three_variables() -> None:
    # y' = y − z² leaves ⟨y', x² − z⁶⟩: λ = 1/2 + λ((x² − z⁶)²) = 1/2 + 1/3 (the plane
    # resolution of x² − z⁶ = (x − z³)(x + z³): two smooth branches of contact 3), m = 1.
    K = (x**2 - y**3) ** 2 + (y - z**2) ** 2
    for r in (
        rlct.from_polynomial(K, [x, y, z]),
        rlct.from_polynomial(str(K), [x, y, z]),
        rlct.from_ideal([x**2 - y**3, y - z**2], [x, y, z]),
    ):
        assert (r.exact, r.lam, r.mult) == (True, R(5, 6), 1)
        assert "y eliminated" in r.method
    # The same K expanded shows no squares: the other steps give bounds around 5/6.
    r = rlct.from_polynomial(sp.expand(K), [x, y, z])
    assert r.lower <= R(5, 6) <= r.upper


def test_eliminations_chain_and_the_last_one_leaves_nothing() -> None:
    # ⟨x − y², y − z³, xy − z⁵⟩: x = y² leaves ⟨y − z³, y³ − z⁵⟩, y = z³ leaves ⟨z⁹ − z⁵⟩ =
    # ⟨z⁵·unit⟩: λ = 1/2 + 1/2 + 1/10, m = 1.
    r = rlct.from_ideal([x - y**2, y - z**3, x * y - z**5], [x, y, z])
    assert (r.exact, r.lam, r.mult) == (True, R(11, 10), 1)
    # Without the third generator nothing is left after y: λ = 1/2 + 1/2 (z is free).
    r = rlct.from_ideal([x - y**2, y - z**3], [x, y, z])
    assert (r.exact, r.lam, r.mult) == (True, R(1), 1)


def test_the_eliminated_variable_may_not_carry_a_prior() -> None:
    polys = [sp.Poly(f, x, y) for f in (y - x**2, x * y)]
    elim = eliminate_affine_generator(polys, (ZERO, ZERO))
    assert elim is not None and elim.variable == y
    assert elim.rest == (sp.Poly(x**3, x),) and elim.h == (ZERO,)
    # With a prior on y: y − x² is not affine in x, and x·y has the coefficient y in x.
    assert eliminate_affine_generator(polys, (ZERO, sp.Integer(1))) is None


def test_a_coefficient_that_vanishes_at_0_is_not_eliminated() -> None:
    polys = [sp.Poly(f, x, y, z) for f in (x * y - z**2, x**2)]
    assert eliminate_affine_generator(polys, (ZERO,) * 3) is None


def test_square_generators_reads_the_written_form() -> None:
    gens = square_generators(2 * (x - y) ** 2 * (x + y) ** 4 + x**2 + R(1, 3) * y**6, [x, y])
    assert gens is not None
    assert {g.as_expr() for g in gens} == {sp.expand((x - y) * (x + y) ** 2), x, y**3}
    assert square_generators(x**2 - y**2, [x, y]) is None  # a negative coefficient
    assert square_generators(x**2 + y**3, [x, y]) is None  # an odd power
    assert square_generators(x**2 * y + y**2, [x, y]) is None


def test_a_substitution_that_grows_too_large_is_declined() -> None:
    # z = r, a form of degree 7 in x, y, w: z³⁰ becomes a form of degree 210 in three
    # variables, 22,366 terms, past MAX_CHANGED_TERMS = 20,000.
    r = sum(x**i * y**j * w ** (7 - i - j) for i in range(8) for j in range(8 - i))
    polys = [sp.Poly(z - r, x, y, z, w), sp.Poly(z**30 + x**2, x, y, z, w)]
    assert eliminate_affine_generator(polys, (ZERO,) * 4) is None


_coefficient = st.sampled_from([-3, -2, -1, 1, 2, 3])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 4), _coefficient), min_size=1, max_size=2),
    st.sampled_from([1, 2, -3]),
    st.sampled_from([0, 0, 1, -2]),
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), _coefficient), min_size=1, max_size=3),
    st.sampled_from([ZERO, ZERO, sp.Integer(1), R(1, 2)]),
)
def test_two_variables_agree_with_the_plane_resolution(r_terms, c, a, g_terms, hx) -> None:
    """⟨(c + a·x)·y + r(x), g(x, y)⟩ under |x|^h (the coefficient of y a unit near 0): λ and m
    equal the plane resolution's for K = f² + g² (an independent exact method)."""
    f = (c + a * x) * y + sum(b * x**k for k, b in r_terms)
    g = sp.expand(sum((b * x**i * y**j for i, j, b in g_terms if i + j > 0), ZERO))
    assume(g != 0)
    r = rlct.from_ideal([f, g], [x, y], [hx, 0])
    plane = resolve_plane(sp.Poly(sp.expand(f**2 + g**2), x, y), (hx, ZERO))
    assert (r.exact, r.lam, r.mult) == (True, plane.lam, plane.mult)


def test_a_unit_coefficient_is_eliminated_through_its_power() -> None:
    # f = (1 + x)·y − x², g = y²: v = x²/(1 + x), and (1 + x)²·g(v) = x⁴.
    polys = [sp.Poly(f, x, y) for f in ((1 + x) * y - x**2, y**2)]
    elim = eliminate_affine_generator(polys, (ZERO, ZERO))
    assert elim is not None and elim.rest == (sp.Poly(x**4, x),)
    r = rlct.from_ideal([(1 + x) * y - x**2, y**2], [x, y])
    assert (r.exact, r.lam, r.mult) == (True, R(1, 2) + R(1, 8), 1)


@pytest.mark.parametrize("h", [(0, 0, 0), (1, 0, 0)])
def test_three_variables_agree_with_the_plane_resolution_of_the_rest(h) -> None:
    # ⟨z − x y, x² − y³ + z²⟩: z eliminated leaves x² − y³ + x²y², whose λ in the plane (with
    # the prior on x) plus 1/2 is the answer.
    r = rlct.from_ideal([z - x * y, x**2 - y**3 + z**2], [x, y, z], h)
    rest = resolve_plane(sp.Poly((x**2 - y**3 + x**2 * y**2) ** 2, x, y), tuple(map(R, h[:2])))
    assert (r.exact, r.lam, r.mult) == (True, R(1, 2) + rest.lam, rest.mult)
