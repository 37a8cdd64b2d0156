"""rlct.reductions.ideal_blocks: an ideal x^e·J whose monomial factor's variables J does not hold is
a product of blocks, solved as a monomial ideal and J (an ideal, keeping its generators)."""

from __future__ import annotations

import pytest
import sympy as sp

import rlct
from rlct.reductions.ideal_blocks import monomial_factor_split

a, b, c, d, e_, x, y, z = sp.symbols("a b c d e x y z")


@pytest.mark.parametrize(
    ("hx", "lam", "mult"),
    [
        # K = x⁴·((b + ca)² + (d + ea)²): after b' = b + ca, d' = d + ea, x⁴(b'² + d'²); the
        # x block gives (h_x + 1)/4 and the other 1/2 + 1/2 = 1
        (0, sp.Rational(1, 4), 1),
        (1, sp.Rational(1, 2), 1),
        (3, sp.Integer(1), 2),  # both blocks attain 1: m = 1 + 1
        (5, sp.Integer(1), 1),
    ],
)
def test_a_monomial_factor_on_its_own_variables(hx: int, lam: sp.Rational, mult: int) -> None:
    gens = [x**2 * (b + c * a), x**2 * (d + e_ * a)]
    got = rlct.from_ideal(gens, (x, a, b, c, d, e_), (hx, 0, 0, 0, 0, 0))
    assert got.exact and (got.lam, got.mult) == (lam, mult)


def test_a_blow_up_chart_point_of_reduced_rank_regression() -> None:
    """a₂·⟨b₁₁a₁ + b₁₂, b₂₁a₁ + b₂₂, b₃₁a₁ + b₃₂⟩ under |a₂| (the chart a₁ = a₂·a₁' of the
    blow-up of a₁ = a₂ = 0 for BA with A: 2×1, B: 3×2): min(2/2, 3·1/2) = 1, m = 1."""
    b11, b12, b21, b22, b31, b32, a1, a2 = sp.symbols("b11 b12 b21 b22 b31 b32 a1 a2")
    gens = [a2 * (b11 * a1 + b12), a2 * (b21 * a1 + b22), a2 * (b31 * a1 + b32)]
    got = rlct.from_ideal(gens, (a1, a2, b11, b12, b21, b22, b31, b32), (0, 1, 0, 0, 0, 0, 0, 0))
    assert got.exact and (got.lam, got.mult) == (1, 1)


def test_the_split_itself() -> None:
    polys = [sp.Poly(f, x, y, z) for f in (x * y * (1 + z), x * y * z**2)]
    assert monomial_factor_split(polys) == ((1, 1, 0), [])  # the unit ideal times xy
    polys = [sp.Poly(f, x, y, z) for f in (x**2 * z, x**2 * y**2)]
    e, rest = monomial_factor_split(polys)
    assert e == (2, 0, 0)
    assert [p.as_expr() for p in rest] == [z, y**2] and rest[0].gens == (y, z)


def test_no_split_where_the_factor_s_variable_is_inside() -> None:
    polys = [sp.Poly(f, x, y) for f in (x * (x + y), x * y**2)]
    assert monomial_factor_split(polys) is None
    polys = [sp.Poly(f, x, y) for f in (x + y, y**2)]
    assert monomial_factor_split(polys) is None


def test_blocks_answer_where_the_newton_polyhedron_has_too_many_faces() -> None:
    """⟨x0², …, x9², x10³ + x0·x10²⟩: eleven vertices in eleven variables, more faces than the
    Newton step checks (TooLargeError before). By blocks: nine ⟨x_i²⟩, 1/4 each, and
    ⟨x0², x10²(x10 + x0)⟩, whose K has the Newton face x0⁴ + x10⁶ (no real zero off the axes):
    λ = 1/t with t·(1/4 + 1/6) = 1, 5/12. λ = 9/4 + 5/12 = 8/3, m = 1."""
    xs = sp.symbols("x0:11")
    got = rlct.from_ideal([x**2 for x in xs[:-1]] + [xs[10] ** 3 + xs[0] * xs[10] ** 2], xs)
    assert got.exact and (got.lam, got.mult) == (sp.Rational(8, 3), 1)
    assert rlct.from_ideal([x**2 for x in xs], xs).lam == sp.Rational(11, 4)


@pytest.mark.parametrize(("widths", "r"), [([2, 3, 2], 1), ([3, 2, 3], 2), ([2, 2, 2, 2], 1)])
def test_elimination_answers_where_the_newton_polyhedron_has_too_many_faces(widths, r) -> None:
    """Deep linear networks of twelve parameters at rank ≥ 1: over 1,024 compact faces
    (TooLargeError before), but generators affine in a variable go one by one
    (rlct.reductions.elimination) with no Newton verdict needed. λ, m are Aoyagi's (independent)."""
    from verification.closed_forms import dln_ideal

    got = rlct.from_ideal(*dln_ideal(widths, r))
    formula = rlct.deep_linear_network(widths, r)
    assert got.exact and (got.lam, got.mult) == (formula.lam, formula.mult)
    assert "eliminated" in got.method


def test_a_sum_of_squares_with_too_many_faces_is_solved_by_its_blocks() -> None:
    """Σ_{i<40} w_i⁴ has 2⁴⁰ − 1 compact faces and Σ_{i<6} (w_{2i}² − w_{2i+1}³)² more than
    1,024: from_polynomial once refused both, while from_ideal solved them by blocks on
    disjoint variables. Each w⁴ has λ = 1/4 and each cusp (x² − y³)² λ = 5/12 (1/2·(1/2 + 1/3)),
    all m = 1, so λ = 40/4 = 10 and 6·5/12 = 5/2, m = 1 (the block rule)."""
    w = sp.symbols("w0:40")
    quartics = rlct.from_polynomial(sum(v**4 for v in w), w)
    assert quartics.exact and (quartics.lam, quartics.mult) == (10, 1)
    cusps = rlct.from_polynomial(
        sum((w[2 * i] ** 2 - w[2 * i + 1] ** 3) ** 2 for i in range(6)), w[:12]
    )
    assert cusps.exact and (cusps.lam, cusps.mult) == (sp.Rational(5, 2), 1)
    assert (cusps.lam, cusps.mult) == (
        rlct.from_ideal([w[2 * i] ** 2 - w[2 * i + 1] ** 3 for i in range(6)], w[:12]).lam,
        1,
    )


def test_a_newton_case_in_sixteen_variables_is_solved_in_seconds() -> None:
    """A positive sum of even monomials: every face polynomial is positive on the torus, so no
    sign enumeration is needed (this 26-term K from newton_polynomials(max_dim=16) ran past
    120 s in it). By hand, with λ of a sum over disjoint variables the sum (m: Σ m − (k − 1))
    and of a product the min (m: Σ m where equal): L = w1⁴w2⁴ + w3²/2 has 1/4 + 1/2 = 3/4,
    m = 2; D = w5⁴ + w6²/2 and E = w8⁴ + w9² have 3/4, so D·E has 3/4, m = 2, and
    B = 2w10⁴ + w11² + 2DE has 1/4 + 1/2 + 3/4 = 3/2, m = 2; C = 2w13⁴ + (4/3)w14²w15⁴ has
    1/4 + 1/4 = 1/2; A = 2w4⁴ + B·C has 1/4 + 1/2 = 3/4, m = 1; K = 9·L·A: 3/4, m = 3."""
    w = sp.symbols("w0:16")
    left = w[1] ** 4 * w[2] ** 4
    right = w[3] ** 2
    a = 2 * w[4] ** 4 + (
        2 * w[10] ** 4 + w[11] ** 2 + 2 * (w[5] ** 4 + w[6] ** 2 / 2) * (w[8] ** 4 + w[9] ** 2)
    ) * (2 * w[13] ** 4 + 4 * w[14] ** 2 * w[15] ** 4 / 3)
    K = sp.expand(9 * (left + right / 2) * a)
    assert len(sp.Poly(K, *w).terms()) == 26
    r = rlct.from_polynomial(K, w)
    assert r.exact and (r.lam, r.mult) == (sp.Rational(3, 4), 3)
