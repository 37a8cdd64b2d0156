"""rlct.blowup.origin and rlct.algebra.projective_zeros: one blow-up of the origin, against hand
values, against Newton's exact values on ideals it solves on its own, under linear changes of
coordinates, and (forced, in two variables) against the plane resolution."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp
from _ideals import monomial
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rlct
from rlct.algebra.projective_zeros import real_projective_zeros
from rlct.blowup.origin import blow_up_origin, combine_points
from rlct.cascade import _solve_ideal

x, y, z = X = sp.symbols("x y z")
ZERO_PRIOR = (sp.Integer(0),) * 3


def _polys(*exprs: sp.Expr) -> list[sp.Poly]:
    return [sp.Poly(e, *X) for e in exprs]


def _forced(polys: list[sp.Poly], h: tuple[sp.Integer, ...]) -> rlct.RLCT | None:
    """The blow-up route alone: the origin blown up, each zero point solved as an ideal."""
    blowup = blow_up_origin(polys, h)
    if blowup is None:
        return None
    return combine_points(blowup, [_solve_ideal(p.generators, p.h, 2) for p in blowup.points])


def _point(*coords: int) -> tuple[Fraction, ...]:
    return tuple(Fraction(c) for c in coords)


def test_projective_zeros_of_two_quadrics() -> None:
    # x² = yz, y² = xz: x = y = 0 (any z), or x = 1 and y³ = 1, so y = z = 1
    zeros = real_projective_zeros(_polys(x**2 - y * z, y**2 - x * z), X)
    assert zeros == (_point(0, 0, 1), _point(1, 1, 1))


def test_projective_zeros_decline_what_they_cannot_list() -> None:
    assert real_projective_zeros(_polys(x**2 - 2 * y**2, z), X) is None  # [√2 : 1 : 0]
    assert real_projective_zeros(_polys(x * z, y * z), X) is None  # the line z = 0
    assert real_projective_zeros(_polys(x * y**8 - z**9), X) is None  # over the degree limit
    assert real_projective_zeros(_polys(sp.Integer(0) * x), X) is None  # everything


def test_projective_zeros_skip_complex_points_and_use_semidefinite_forms() -> None:
    assert real_projective_zeros(_polys(x**2 + y**2, z), X) == ()  # [±i : 1 : 0] only
    # x² + y² alone has a complex curve of zeros; being ≥ 0, its real zeros are ∇ = 0: [0 : 0 : 1]
    assert real_projective_zeros(_polys(x**2 + y**2), X) == (_point(0, 0, 1),)


def test_hand_values() -> None:
    # ⟨x², xy − z²⟩: in the chart of [0 : 1 : 0] the ideal is u²·⟨x², x − z²⟩ ≍ u⁴(x'² + z⁸):
    # min(3/4, 1/2 + 1/8) = 5/8 against 3/4 on the rest of the exceptional divisor
    for r in (
        rlct.from_ideal([x**2, x * y - z**2], X),
        rlct.from_polynomial(x**4 + (x * y - z**2) ** 2, X),
    ):
        assert r.exact and (r.lam, r.mult) == (sp.Rational(5, 8), 1)
        assert "blow-up of the origin" in r.method
    # two lines of zeros through 0, each transversal: 3/4 everywhere on the divisor
    r = rlct.from_polynomial((x**2 - y * z) ** 2 + (y**2 - x * z) ** 2, X)
    assert r.exact and (r.lam, r.mult) == (sp.Rational(3, 4), 1)
    assert r.conditions[0].statement.count("[") >= 2  # the two zero points named


@pytest.mark.parametrize(
    ("generators", "prior", "lam", "mult"),
    [
        # x²·⟨x, y, z⟩: K = x⁴(x² + y² + z²), the stratum x = 0 of the divisor: 1/4 by x
        ((x**3, x**2 * y, x**2 * z), (0, 0, 0), sp.Rational(1, 4), 1),
        # xy·⟨x, y, z⟩: the point [0 : 0 : 1] of the divisor has three factors, each 1/2
        ((x**2 * y, x * y**2, x * y * z), (0, 0, 0), sp.Rational(1, 2), 3),
        # the same with a prior |z|: the divisor's ratio (3 + 1)/6 = 2/3 > 1/2, two factors
        ((x**2 * y, x * y**2, x * y * z), (0, 0, 1), sp.Rational(1, 2), 2),
    ],
)
def test_monomial_factor_strata(generators, prior, lam, mult) -> None:
    h = tuple(map(sp.Integer, prior))
    forced = _forced(_polys(*generators), h)
    newton = _solve_ideal(_polys(*generators), h, 0)
    assert newton.exact and (newton.lam, newton.mult) == (lam, mult)
    assert forced is not None and forced.exact and (forced.lam, forced.mult) == (lam, mult)


@st.composite
def ideals(draw: st.DrawFn) -> list[sp.Expr]:
    """Two order-2 generators (one or two terms, plus higher ones) and maybe a third of order
    3–5, times a common monomial factor now and then."""
    coefficient = st.sampled_from((-2, -1, 1, 2))
    gens = []
    for _ in range(2):
        f = sum(draw(coefficient) * monomial(draw, 2) for _ in range(draw(st.integers(1, 2))))
        f += sum(monomial(draw, draw(st.integers(3, 5))) for _ in range(draw(st.integers(0, 1))))
        gens.append(f)
    if draw(st.booleans()):
        gens.append(monomial(draw, draw(st.integers(3, 5))))
    factor = draw(st.sampled_from((1, 1, x, z, y * z)))
    return [sp.expand(factor * g) for g in gens]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ideals(), st.tuples(*(st.sampled_from((0, 0, 1, 2)),) * 3))
def test_blowup_agrees_with_newton_where_newton_is_exact(generators, prior) -> None:
    polys = [p for p in _polys(*generators) if not p.is_zero]
    assume(polys)  # 2x² − 2x² draws as 0: an ideal of zeros has no λ (from_ideal refuses it)
    h = tuple(map(sp.Integer, prior))
    newton = _solve_ideal(polys, h, 0)
    forced = _forced(polys, h)
    assume(newton.exact and forced is not None)  # else nothing to compare (counts: RESULTS.md)
    if forced.exact:
        assert (forced.lam, forced.mult) == (newton.lam, newton.mult)
    else:
        assert forced.lower <= newton.lam <= forced.upper


CHANGES = [
    sp.Matrix([[1, 1, 0], [0, 1, 1], [1, 0, 1]]),
    sp.Matrix([[1, 0, 1], [1, 1, 0], [0, 0, 1]]),
    sp.Matrix([[1, 2, 0], [0, 1, -1], [1, 0, 1]]),
]


def _changed(generators: list[sp.Expr], matrix: sp.Matrix) -> list[sp.Poly]:
    image = dict(zip(X, matrix * sp.Matrix(X)))
    return _polys(*(sp.expand(g.xreplace(image)) for g in generators))


@pytest.mark.parametrize("matrix", CHANGES)
def test_linear_change_that_only_the_blowup_undoes(matrix) -> None:
    # ⟨x² + y², z³⟩ is Newton non-degenerate, K ≍ (x² + y²)² + z⁶: λ = 2/4 + 1/6 = 2/3. After
    # the change the only zero of the semi-definite initial form is one rational point
    ref = _solve_ideal(_polys(x**2 + y**2, z**3), ZERO_PRIOR, 0)
    assert ref.exact and (ref.lam, ref.mult) == (sp.Rational(2, 3), 1)
    changed = _changed([x**2 + y**2, z**3], matrix)
    assert not _solve_ideal(changed, ZERO_PRIOR, 0).exact  # bounds without the blow-up
    after = _solve_ideal(changed, ZERO_PRIOR)
    assert after.exact and (after.lam, after.mult) == (ref.lam, ref.mult)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ideals(), st.sampled_from(CHANGES))
def test_values_survive_a_linear_change(generators, matrix) -> None:
    polys = [p for p in _polys(*generators) if not p.is_zero]
    assume(polys)  # generators that all cancel: no ideal to solve
    ref = _solve_ideal(polys, ZERO_PRIOR, 0)
    assume(ref.exact)
    after = _solve_ideal(_changed([p.as_expr() for p in polys], matrix), ZERO_PRIOR)
    if after.exact:
        assert (after.lam, after.mult) == (ref.lam, ref.mult)
    else:
        assert after.lower <= ref.lam <= after.upper


u, v = PLANE = sp.symbols("u v")


@st.composite
def plane_ideals(draw: st.DrawFn) -> list[sp.Poly]:
    """One or two generators in (u, v) of order 1–3 with higher terms, times a monomial."""
    order = draw(st.integers(1, 3))

    def monomial(degree: int) -> sp.Expr:
        a = draw(st.integers(0, degree))
        return u**a * v ** (degree - a)

    coefficient = st.sampled_from((-2, -1, 1, 2))
    gens = []
    for _ in range(draw(st.integers(1, 2))):
        f = sum(draw(coefficient) * monomial(order) for _ in range(draw(st.integers(1, 2))))
        for _ in range(draw(st.integers(0, 2))):
            f += draw(coefficient) * monomial(draw(st.integers(order + 1, order + 4)))
        gens.append(f)
    factor = draw(st.sampled_from((1, 1, u, v, u * v, u**2)))
    return [sp.Poly(sp.expand(factor * g), *PLANE) for g in gens]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plane_ideals(), st.tuples(*(st.sampled_from((0, 0, 1, 2, sp.Rational(1, 2))),) * 2))
def test_blowup_agrees_with_the_plane_resolution(polys, prior) -> None:
    # in two variables the pipeline never blows up; forced here, its combination of the divisor's
    # strata and points must reproduce the plane resolution (an independent exact method)
    polys = [p for p in polys if not p.is_zero]
    assume(polys)
    h = tuple(sp.Rational(e) for e in prior)
    plane = _solve_ideal(polys, h, 0)
    forced = _forced(polys, h)
    assume(forced is not None)
    assert plane.exact and forced.exact
    assert (forced.lam, forced.mult) == (plane.lam, plane.mult)
