"""rlct.blowup.families: the blow-up of the origin where the initial forms vanish on a curve.
Hand values, the kinds of good points and their special points, declines, and agreement with
independent exact values (Newton's on ideals it solves on its own, and the ideal's own value
after a linear change of coordinates)."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp
from _ideals import ZEROS_ON_CURVES, check_forced_blowup
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rlct
from rlct.blowup.families import chart_families
from rlct.blowup.origin import blow_up_origin, combine_points
from rlct.blowup.walls import wall_line
from rlct.cascade import _solve_ideal

x, y, z = X = sp.symbols("x y z")
ZERO = (sp.Integer(0),) * 3


def _polys(*exprs: sp.Expr) -> list[sp.Poly]:
    return [sp.Poly(e, *X) for e in exprs]


def _point(*coords: int) -> tuple[Fraction, ...]:
    return tuple(Fraction(c) for c in coords)


def test_hand_value_of_a_line_and_a_point() -> None:
    # ⟨xz, yz − x³⟩: the order-2 forms xz, yz vanish on the line z = 0 and at [0 : 0 : 1].
    # Chart x = u (y = ub, z = uc): ⟨u²c, u²(bc − u)⟩ = u²·⟨c, u⟩, so along the line
    # K ≍ u⁴(u² + c²) under |u|²: the edge (6, 0)–(4, 2) meets t·(3, 1) at t = 3/2, λ = 2/3.
    # At [0 : 1 : 0] (chart y = u, x = ua, z = uc, c' = c − ua³): u²·⟨ua⁴, c'⟩ under |u|²,
    # t·(3, 1, 1) meets conv{(6, 8, 0), (4, 0, 2)} + R³₊ at t = 8/5: λ = 5/8, on a 2-face, m = 1.
    # At [0 : 0 : 1]: u²·⟨a, b⟩, 3/4; off the zeros 3/4. So λ = 5/8, m = 1 (Newton: 1/4 ≤ λ ≤ 2/3)
    r = rlct.from_ideal([x * z, y * z - x**3], X)
    assert r.exact and (r.lam, r.mult) == (sp.Rational(5, 8), 1)
    statement = r.conditions[0].statement
    assert "vanish on a curve" in statement and "[0 : 1 : 0]" in statement
    # K written as the sum of squares gets the same step; expanded, it does not (bounds only)
    squares = rlct.from_polynomial(x**2 * z**2 + (y * z - x**3) ** 2, X)
    assert squares.exact and (squares.lam, squares.mult) == (sp.Rational(5, 8), 1)
    expanded = rlct.from_polynomial(sp.expand(x**2 * z**2 + (y * z - x**3) ** 2), X)
    assert not expanded.exact and expanded.lower <= sp.Rational(5, 8) <= expanded.upper


def test_hand_value_with_special_points_on_the_line() -> None:
    # ⟨xy − z³, xz − y³⟩: the forms xy, xz vanish on the line x = 0 and at [1 : 0 : 0]. Chart
    # y = u: u²·⟨a − uc³, ac − u⟩, a smooth curve through u = a = 0 with u in the ideal where
    # c⁴ ≠ 1 (u(1 − c⁴) ∈ J̃): u²·⟨u, a⟩, λ = 2/3. At c = ±1 the rank drops; there
    # J̃ = ⟨a', u·w⟩ (a' = ac − u, c = ±1 + w): ⟨u²a', u³w⟩ under |u|², t·(3, 1, 1) meets
    # conv{(4, 2, 0), (6, 0, 2)} + R³₊ at t = 3/2: 2/3 again, m = 1. [1 : 0 : 0]: u²⟨b, c⟩, 3/4.
    r = rlct.from_ideal([x * y - z**3, x * z - y**3], X)
    assert r.exact and (r.lam, r.mult) == (sp.Rational(2, 3), 1)
    statement = r.conditions[0].statement
    assert "[0 : 1 : -1]" in statement and "[0 : 1 : 1]" in statement


def test_hand_value_with_a_power_of_u() -> None:
    # ⟨z², xz − y⁴⟩: the forms z², xz vanish on the line z = 0. Chart x = u (y = ub, z = uc):
    # u²·⟨c², c − u²b⁴⟩ = u²·⟨c', u⁴b⁸⟩ (c' = c − u²b⁴), so where b ≠ 0 the strict transform is
    # ⟨c', u⁴⟩: K ≍ u⁴c'² + u¹² under |u|², t·(3, 1) meets the edge (4, 2)–(12, 0) at t = 12/7,
    # λ = 7/12. At [1 : 0 : 0] (b = 0): t·(3, 1, 1) meets conv{(4, 2, 0), (12, 0, 16)} + R³₊ at
    # t = 16/9, on a 2-face: λ = 9/16, m = 1, the least (Newton alone: 1/4 ≤ λ ≤ 5/8)
    r = rlct.from_ideal([z**2, x * z - y**4], X)
    assert r.exact and (r.lam, r.mult) == (sp.Rational(9, 16), 1)
    strict = _polys(z**2, z - x**2 * y**4)  # chart x, u = x, after dividing by u²
    families, special = chart_families(strict, 0, (0, 0, 0), 2, ZERO)
    assert [(f.smooth, f.power, f.lam) for f in families] == [(1, 4, sp.Rational(7, 12))]
    assert special == (_point(1, 0, 0),)


def test_generator_blocks_keep_their_ideal() -> None:
    # ⟨xz, yz − x³⟩ + ⟨w²⟩ on disjoint variables: λ = 5/8 + 1/4, m = 1 + 1 − 1. Squared and
    # summed, the (x, y, z) block reached the blow-up only expanded, and gave bounds (1/2..11/12)
    w = sp.Symbol("w")
    r = rlct.from_ideal([x * z, y * z - x**3, w**2], (*X, w))
    assert r.exact and (r.lam, r.mult) == (sp.Rational(7, 8), 1)
    r = rlct.from_ideal([x * z, y * z - x**3, w**3], (*X, w))  # 5/8 + 1/6
    assert r.exact and (r.lam, r.mult) == (sp.Rational(19, 24), 1)
    r = rlct.from_polynomial(x**2 * z**2 + (y * z - x**3) ** 2 + w**4, (*X, w))
    assert r.exact and (r.lam, r.mult) == (sp.Rational(7, 8), 1)


def test_kinds_and_special_points_of_the_charts() -> None:
    # ⟨xz, yz − x³⟩ in chart x (u = x): J̃ = ⟨z, yz − x⟩ ∋ x, every point of the line good
    families, special = chart_families(_polys(z, y * z - x), 0, (0, 0, 0), 2, ZERO)
    assert special == ()
    ((family,),) = (families,)
    assert (family.smooth, family.power, family.lam, family.mult) == (1, 1, 2 / sp.S(3), 1)
    assert family.witness is not None and family.witness[0] == 1 and family.witness[2] == 0
    # in chart y (u = y): J̃ = ⟨xz, z − yx³⟩, whose rank drops at x = 0: [0 : 1 : 0] is special
    families, special = chart_families(_polys(x * z, z - y * x**3), 1, (0, 0, 0), 2, ZERO)
    assert special == (_point(0, 1, 0),)
    assert [(f.smooth, f.power) for f in families] == [(1, 1)]


def test_transversal_kind_and_walls() -> None:
    # xy + z³ in chart x: J̃ = ⟨y + x·z³⟩, a smooth surface crossing u = 0 along y = 0:
    # u²·⟨v⟩ under |u|², λ = min(3/4, 1/2) = 1/2, m = 1
    families, special = chart_families(_polys(y + x * z**3), 0, (0, 0, 0), 2, ZERO)
    assert special == ()
    assert [(f.smooth, f.power, f.lam, f.mult) for f in families] == [
        (1, None, sp.Rational(1, 2), 1)
    ]
    # a prior |z| makes the wall z = 0 special: the point [1 : 0 : 0]
    h = (sp.Integer(0), sp.Integer(0), sp.Integer(1))
    families, special = chart_families(_polys(y + x * z**3), 0, (0, 0, 0), 2, h)
    assert special == (_point(1, 0, 0),)
    assert families[0].lam == sp.Rational(1, 2) and families[0].witness is not None


def test_two_lines_of_zeros_each_with_its_own_kind() -> None:
    """⟨x²z, yz − x³⟩: in chart x (y = ub, z = uc) J∘π = u²·⟨uc, bc − u⟩ and Z = {bc = 0}, two
    lines of different kinds, found one factor of Z at a time (u² ∈ J̃ as u(u − bc) + b·uc):
    * c = 0, b ≠ 0: c ≡ u/b, so J̃ = ⟨u − bc, u²⟩; u²·⟨v, u²⟩ under |u|²: K ~ u⁴v² + u⁸ and
      t·(3, 1) ≥ α(4, 2) + (1 − α)(8, 0) first at α = 4/5, t = 8/5: λ = 5/8;
    * b = 0, c ≠ 0: uc ∈ J̃ gives u, then b: J̃ = ⟨b, u⟩; K ~ u⁴v² + u⁶, α = 3/4, t = 3/2: λ = 2/3;
    the same lines seen from charts y and z, and the three points where the lines meet or leave
    the charts are special. At [0 : 1 : 0] (y = u, x = ua, z = uc) K = u⁶a⁴c² + u⁴(c − ua³)²,
    after c ↦ c + ua³ a Newton polyhedron with the face (10, 8, 0)–(0, 4, 2) in (a, u, c):
    t·(1, 3, 1) on it at α = 1/6, t = 5/3, λ = 3/5 < 5/8. [1 : 0 : 0] (its strict transform
    meets the prior's wall along a whole line) is 5/8 > 3/5 (the next test), so λ = 3/5, m = 1."""
    blowup = blow_up_origin(_polys(x**2 * z, y * z - x**3), ZERO)
    assert blowup is not None and blowup.generic == (sp.Rational(3, 4), 1)
    kinds = {(f.chart, f.smooth, f.power, f.lam, f.mult) for f in blowup.families}
    assert (0, 1, 2, sp.Rational(5, 8), 1) in kinds and (0, 1, 1, sp.Rational(2, 3), 1) in kinds
    assert all(f.witness is not None for f in blowup.families)
    assert {p.point for p in blowup.points} == {_point(1, 0, 0), _point(0, 1, 0), _point(0, 0, 1)}
    r = rlct.from_ideal([x**2 * z, y * z - x**3], X)
    assert r.exact and (r.lam, r.mult) == (sp.Rational(3, 5), 1)


def test_a_point_solved_by_the_blowup_of_a_line() -> None:
    """⟨x²z, yz − x³⟩'s point [1 : 0 : 0]: x²·⟨xz, yz − x⟩ under |x|² (= x²·⟨x − yz, yz²⟩). By
    hand, blow up the line x = z = 0. Chart z (x = z·a): z³a²·⟨za, y − a⟩ under |z|³|a|²; at a ≠ 0
    on the fibre y = z = 0, y − a is a unit: K ≍ z⁶, λ = 4/6 = 2/3. At a = 0, with y' = y − a
    (y carries no weight): K ≍ z⁶a⁴(z²a² + y'²), whose Newton polyhedron conv{(6, 0, 8),
    (4, 2, 6)} + R³₊ in (a, y', z) meets t·(3, 1, 4) first at t = 8/5 (α = 1/5 of the way from
    the second vertex, the y' and z inequalities tight): λ = 5/8, one facet, m = 1. Chart x
    (z = x·c): x³·⟨xc, yc − 1⟩ ≍ x³ at c = 0 under |x|³: 2/3. So λ = 5/8, m = 1. The code takes
    another road (the blow-up of the origin, then of lines at its special points)."""
    polys = _polys(x**3 * z, x**2 * y * z - x**3)
    r = _solve_ideal(polys, (sp.Integer(2), sp.Integer(0), sp.Integer(0)), 2)
    assert r.exact and (r.lam, r.mult) == (sp.Rational(5, 8), 1)
    assert "blow-up of a line" in r.method


CHANGES = [
    sp.Matrix([[1, 1, 0], [0, 1, 1], [1, 0, 1]]),
    sp.Matrix([[1, 0, 1], [1, 1, 0], [0, 0, 1]]),
]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(ZEROS_ON_CURVES, st.tuples(*(st.sampled_from((0, 0, 1, 2)),) * 3))
def test_forced_blowup_agrees_with_newton(generators, prior) -> None:
    polys = [p for p in _polys(*generators) if not p.is_zero]
    assume(len(polys) == 2 and polys[0] != polys[1])
    h = tuple(map(sp.Integer, prior))
    check_forced_blowup(polys, h, blow_up_origin, combine_points, 2)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ZEROS_ON_CURVES, st.sampled_from(CHANGES))
def test_values_survive_a_linear_change(generators, matrix) -> None:
    polys = [p for p in _polys(*generators) if not p.is_zero]
    assume(len(polys) == 2)
    ref = _solve_ideal(polys, ZERO, 0)
    assume(ref.exact)
    image = dict(zip(X, matrix * sp.Matrix(X)))
    after = _solve_ideal(_polys(*(sp.expand(p.as_expr().xreplace(image)) for p in polys)), ZERO)
    if after.exact:
        assert (after.lam, after.mult) == (ref.lam, ref.mult)
    else:
        assert after.lower <= ref.lam <= after.upper


def test_a_line_inside_a_wall_by_its_newton_polygon() -> None:
    """⟨2x²z, −x²z² − xz³⟩ = xz·⟨2x, −xz − z²⟩ under |z|: in chart z (x = ua, y = ub) the ideal is
    u³·a·⟨2a, −u(a + 1)⟩ under |u|³, and its zeros on E are the line a = 0, inside the wall of the
    factor x. The generators 2u³a², −u⁴a² − u⁴a have the Newton polygon with vertices (3, 2),
    (4, 1) in (u, a) (its coefficients do not involve b: no special value of b), and on its edge
    each generator has one monomial (no zero in the torus). Under the weights (4, 1) the diagonal
    t·(4, 1) of 2Γ meets the vertex (8, 2) at t = 2: λ = 1/2, and a vertex gives m = 2."""
    polys = _polys(2 * x**2 * z, -(x**2) * z**2 - x * z**3)
    h = (sp.Integer(0), sp.Integer(0), sp.Integer(1))
    blowup = blow_up_origin(polys, h)
    assert blowup is not None
    walls = {(f.chart, f.wall, f.lam, f.mult) for f in blowup.families if f.wall is not None}
    assert (2, "x", sp.Rational(1, 2), 2) in walls
    assert all(f.witness is not None and f.witness[0] == 0 for f in blowup.families if f.wall)
    got = combine_points(blowup, [_solve_ideal(p.generators, p.h, 2) for p in blowup.points])
    newton = _solve_ideal(polys, h, 0)
    assert newton.exact and got.exact and (got.lam, got.mult) == (newton.lam, newton.mult)


def test_a_wall_line_degenerate_everywhere_by_the_plane_resolution() -> None:
    """In chart b of ⟨x²z, yz − x³⟩'s point [1 : 0 : 0] the line b = u = 0 lies in the wall of u
    and the edge polynomial b³u²(cb − u) has the torus zero u = cb for every c: Γ cannot read
    it. By hand, K = b⁶u⁴(b²c²u² + (bc − u)²) under |b|⁴|u|² (τ = (5, 3)): the edge (8, 4)–(6, 6)
    of normal (1, 1) gives (5 + 3)/12 = 2/3, the axes 5/6 and 3/4. In its chart b = s, u = s·v
    (prior |s|⁷|v|²) K = s¹²v⁴(s²c²v² + (c − v)²), and at the root v = c ≠ 0, with v' = v − c,
    K ≍ s¹²(c⁴s² + v'²): the edge (14, 0)–(12, 2) under τ = (8, 1) gives 9/14, the s-axis 8/12.
    So λ = 9/14, m = 1 at every c ≠ 0; c = 0 is special."""
    u, b, c = sp.symbols("u b c")
    total = [b**3 * u**2 * (b * c * u), b**3 * u**2 * (b * c - u)]
    found = wall_line(total, b, u, c, (sp.Integer(4), sp.Integer(2)), False)
    assert found is not None
    assert (found.lam, found.mult) == (sp.Rational(9, 14), 1)
    assert found.special == {Fraction(0)} and found.witness != 0 and found.algebraic == ()


@pytest.mark.parametrize("c", [2, 3, sp.Rational(1, 2)])
def test_irrational_points_of_a_wall_line_are_read_on_their_own(c) -> None:
    """xz·⟨2x, y² − c·z²⟩ under |z|: in chart z (x = ua, y = ub) the ideal is u³·a·⟨2a,
    u(b² − c)⟩, whose zeros on E hold the line a = 0 inside the wall of x; the vertex u⁴·a of
    its Newton polygon in (u, a) has the coefficient b² − c, zero at b = ±√c (irrational). They
    are read in the coordinate v = b² − c (rlct.newton.along_line) instead of declining the line.
    The real change y ↦ √c·y keeps the prior and gives xz·⟨2x, c(y² − z²)⟩, so λ and m must be
    those of c = 1, whose special points b = ±1 are rational."""
    polys = _polys(2 * x**2 * z, sp.expand(x * z * (y**2 - c * z**2)))
    h = (sp.Integer(0), sp.Integer(0), sp.Integer(1))
    blowup = blow_up_origin(polys, h)
    assert blowup is not None
    roots = [a for f in blowup.families for a in f.roots]
    assert roots and all(sp.Poly(a.q, a.q.free_symbols.pop()).degree() == 2 for a in roots)
    got = combine_points(blowup, [_solve_ideal(p.generators, p.h, 2) for p in blowup.points])
    rational = _solve_ideal(_polys(2 * x**2 * z, sp.expand(x * z * (y**2 - z**2))), h)
    assert rational.exact and got.exact and (got.lam, got.mult) == (rational.lam, rational.mult)
    assert rlct.from_ideal([p.as_expr() for p in polys], (x, y, z), h).lam == rational.lam
