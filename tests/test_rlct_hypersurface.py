"""K = unit·x^b·f^e for a hypersurface f that is Newton non-degenerate itself
(rlct.shapes.hypersurface)."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import rlct
from rlct.plane.resolve import resolve_plane
from rlct.shapes.hypersurface import METHOD, hypersurface_power_rlct

x, y, z, w = sp.symbols("x y z w")
R = sp.Rational
ZERO = sp.Integer(0)


def _step(K: sp.Expr, gens: tuple[sp.Symbol, ...], h: tuple[int, ...] | None = None):
    prior = tuple(map(sp.Integer, h or (0,) * len(gens)))
    return hypersurface_power_rlct(sp.Poly(K, *gens), prior)


@pytest.mark.parametrize(
    ("K", "gens", "lam", "mult"),
    [
        # xy = z³ (an A₂ surface): the diagonal meets the edge (1,1,0)–(0,0,3) at t = 3/4, so
        # λ_N = 4/3 > 1; f has real torus zeros, whose smooth points give 1: λ = 1/2, m = 1.
        ((x * y - z**3) ** 2, (x, y, z), R(1, 2), 1),
        ((x * y - z**3) ** 4, (x, y, z), R(1, 4), 1),
        ((x * y * z - w**2) ** 2, (x, y, z, w), R(1, 2), 1),  # λ_N = 3/2
        # E₈, x² + y³ + z⁵: weights sum to 31/30 > 1, real zeros (y < 0): λ = 1/2.
        ((x**2 + y**3 + z**5) ** 2, (x, y, z), R(1, 2), 1),
        # λ_N = 1/2 + 1/4 + 1/6 = 11/12 < 1: Varchenko's 1/t, whatever the real zeros.
        ((x**2 - y**4 - z**6) ** 2, (x, y, z), R(11, 24), 1),
        # f = x⁴ − y⁴z⁴: t·(1,1,1) = (2,2,2) is the midpoint of the compact edge (4,0,0)–(0,4,4),
        # so λ_N = 1/2 with m = 3 − 1 = 2; three factors over Q, one exponent.
        ((x**4 - y**4 * z**4) ** 2, (x, y, z), R(1, 4), 2),
        # A monomial beside f: P(K) = (2, 6, 0) + 2·conv{(3, 1, 0), (0, 0, 4)} has vertices
        # (8, 8, 0) and (2, 6, 8); the diagonal meets (2 + 6a, 6 + 2a, 8 − 8a) + R₊e_x at a = 1/5,
        # t = 32/5, on a face of dimension 2: λ_N = 5/32 < 1/2, m = 1.
        (x**2 * y**6 * (x**3 * y - z**4) ** 2, (x, y, z), R(5, 32), 1),
        # f > 0 off 0 (x⁴ + y⁴ − x²y² ≥ (x⁴ + y⁴)/2): no real zeros, λ = λ_N/2 = 3/8 with
        # f ≍ x⁴ + y⁴ + z⁴. K's own face condition is undecided, f's is not.
        ((x**4 + y**4 + z**4 - x**2 * y**2) ** 2, (x, y, z), R(3, 8), 1),
    ],
)
def test_hand_values(K: sp.Expr, gens: tuple[sp.Symbol, ...], lam: sp.Rational, mult: int) -> None:
    r = _step(K, gens)
    assert r is not None and (r.exact, r.lam, r.mult) == (True, lam, mult)
    assert r.method == METHOD
    full = rlct.from_polynomial(K, gens)
    assert (full.exact, full.lam, full.mult) == (True, lam, mult)


def test_a_prior_enters_through_the_newton_distance() -> None:
    # (x² − y⁴ − z⁶)² under |z|: τ = (1, 1, 2), the facet x/2 + y/4 + z/6 = 1 gives λ_N =
    # 1/2 + 1/4 + 2/6 = 13/12 > 1, and f has real torus zeros: λ = 1/2.
    r = _step((x**2 - y**4 - z**6) ** 2, (x, y, z), (0, 0, 1))
    assert r is not None and (r.lam, r.mult) == (R(1, 2), 1)
    # under |x|^(−1/2): τ = (1/2, 1, 1), λ_N = 1/4 + 1/4 + 1/6 = 2/3 < 1, so λ = 1/3
    r = hypersurface_power_rlct(sp.Poly((x**2 - y**4 - z**6) ** 2, x, y, z), (R(-1, 2), ZERO, ZERO))
    assert r is not None and (r.lam, r.mult) == (R(2, 3) / 2, 1)


@pytest.mark.parametrize(
    "K",
    [
        ((x - y) ** 2 - z**3) ** 2,  # the edge polynomial (x − y)² has singular zeros at x = y
        (x**2 - y**2) ** 2,  # (x − y)(x + y): λ_N = 1/2 ties with the strict transform's 1/2
        x**2 * y**4 * (1 + x + y**2) ** 4,  # a monomial times a unit: the Newton step's case
        (x * y - z**3) ** 3,  # odd power
        (x * y - z**3) ** 2 * (x - z) ** 4,  # two exponents
        -((x * y - z**3) ** 2),  # K ≤ 0
    ],
)
def test_declines(K: sp.Expr) -> None:
    assert _step(K, (x, y, z)) is None


_monomial = st.tuples(st.integers(0, 6), st.integers(0, 6), st.sampled_from([-3, -2, -1, 1, 2, 3]))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_monomial, min_size=2, max_size=5),
    st.sampled_from([2, 4]),
    st.tuples(*[st.sampled_from([ZERO, ZERO, sp.Integer(1), R(1, 3), R(-1, 2)])] * 2),
)
def test_two_variables_agree_with_the_plane_resolution(terms, e, h) -> None:
    """Wherever the step answers in two variables, the plane resolution (an independent exact
    method, toric charts followed at real algebraic roots) gives the same λ and m."""
    f = sp.expand(sum((c * x**i * y**j for i, j, c in terms if i + j > 0), ZERO))
    assume(f != 0)
    K = sp.Poly(f**e, x, y)
    r = hypersurface_power_rlct(K, h)
    assume(r is not None)
    plane = resolve_plane(K, h)
    assert (r.lam, r.mult) == (plane.lam, plane.mult)
