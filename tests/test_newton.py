"""Newton polyhedra: hand-checked λ, m; the Newton step never claims degenerate cases exact
(REFERENCE §3; what rlct.from_polynomial does next is tested in test_degenerate.py)."""

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

import rlct
from rlct import NotNonNegativeError, NotPolynomialError
from rlct.algebra.realzeros import negative_point
from rlct.newton.analysis import as_generators, ideal_step, newton_analysis
from rlct.newton.polyhedron import NewtonPolyhedron

x, y, z = sp.symbols("x y z")
R = sp.Rational


@pytest.mark.parametrize(
    ("K", "variables", "prior", "lam", "m"),
    [
        # Regular: x² + y² + z² is a nondegenerate quadratic form, λ = d/2.
        (x**2 + y**2, (x, y), None, R(1), 1),
        (x**2 + y**2 + z**2, (x, y, z), None, R(3, 2), 1),
        # Monomial = normal crossing x²y⁴: min(1/2, 1/4); t·τ = (4, 4) is on the non-compact
        # facet y ≥ 4 only, so the face is non-compact of codimension 1.
        (x**2 * y**4, (x, y), None, R(1, 4), 1),
        # Quasi-homogeneous x⁴ + y⁶: t·τ lies inside the edge, λ = 1/4 + 1/6 = 5/12.
        (x**4 + y**6, (x, y), None, R(5, 12), 1),
        # x⁴ + x²y² + y⁶: both edges meet at the vertex (2, 2) = t·τ, so m = 2, λ = 1/2.
        (x**4 + x**2 * y**2 + y**6, (x, y), None, R(1, 2), 2),
        # x²y⁴ + x⁶ = x²(y⁴ + x⁴): the blow-up y = x·y' gives x⁶(y'⁴+1)·|x|: λ = 2/6 = 1/3.
        (x**2 * y**4 + x**6, (x, y), None, R(1, 3), 1),
        # Prior |x|²: ∫ (x²+y²)^z x² dx dy = ∫ r^(2z+3) dr …, pole at z = −2.
        (x**2 + y**2, (x, y), (2, 0), R(2), 1),
        # Prior |x| on x²y²: normal crossing min((1+1)/2, 1/2) = 1/2 from y alone, m = 1.
        (x**2 * y**2, (x, y), (1, 0), R(1, 2), 1),
        # A variable K does not depend on still counts in d but not in λ.
        (x**2, (x, y), None, R(1, 2), 1),
    ],
)
def test_nondegenerate_polynomials(K, variables, prior, lam, m):
    r = rlct.from_polynomial(K, variables, prior)
    assert r.exact, str(r)
    assert (r.lam, r.mult) == (lam, m)
    assert all(c.status is True for c in r.conditions)


@pytest.mark.parametrize(
    ("K", "newton_value", "true_lam"),
    [
        ((x - y) ** 2, R(1), R(1, 2)),  # a smooth curve of zeros: λ = 1/2
        ((y - x**2) ** 2, R(3, 4), R(1, 2)),  # a smooth curve again
        ((x**2 - y**2) ** 2, R(1, 2), R(1, 2)),  # right λ, but m = 2 — still not claimed exact
    ],
)
def test_degenerate_polynomials_are_bounds_only(K, newton_value, true_lam):
    r = newton_analysis(sp.expand(K), (x, y)).result
    assert not r.exact and r.lam is None and r.mult is None
    assert r.upper == newton_value
    assert r.lower <= true_lam <= r.upper
    assert any(c.status is False for c in r.conditions)
    assert "degenerate" in r.method


def test_ideals():
    # ⟨xy⟩: K = x²y², λ = 1/2, m = 2.
    r = rlct.from_ideal([x * y], (x, y))
    assert (r.exact, r.lam, r.mult) == (True, R(1, 2), 2)
    # ⟨x, y⟩: K = x² + y², regular.
    assert rlct.from_ideal([x, y], (x, y)).lam == 1
    # ⟨xy, yz⟩: K = y²(x² + z²): the y² factor wins, λ = 1/2, m = 1.
    r = rlct.from_ideal([x * y, y * z], (x, y, z))
    assert (r.exact, r.lam, r.mult) == (True, R(1, 2), 1)
    # ⟨x² + y² + z²⟩: RLCT of the form is 3/2, so λ(f²) = 3/4.
    r = rlct.from_ideal([x**2 + y**2 + z**2], (x, y, z))
    assert (r.exact, r.lam, r.mult) == (True, R(3, 4), 1)
    # ⟨x − y⟩ is degenerate: the face system x − y = 0 meets the torus, so the Newton step gives
    # bounds only (from_ideal then resolves it: λ = 1/2).
    r = rlct.ideal_analysis([x - y], (x, y)).result
    assert not r.exact and r.upper == 1 and r.lower <= R(1, 2)


def test_definite_quadratic_face_is_decided():
    # f = x² + y² + z² − xy is a positive definite form (leading minors 1, 3/4, 3/4): no real
    # zero, so ⟨f⟩ is non-degenerate and λ(f²) = RLCT(f)/2 = (3/2)/2.
    r = rlct.from_ideal([x**2 + y**2 + z**2 - x * y], (x, y, z))
    assert (r.exact, r.lam, r.mult) == (True, R(3, 4), 1)


def test_undecided_condition_is_reported_not_guessed():
    # f = x⁴ + y⁴ + z⁴ − x²y² ≥ (x⁴ + y⁴)/2 + z⁴ has no real zero but x²y² (odd sign, not a square
    # form) defeats every certificate the decision procedure has: the result must say
    # "undecided", not guess. True λ(f²) = RLCT(f)/2 = (3/4)/2 = 3/8 = the Newton value.
    f = x**4 + y**4 + z**4 - x**2 * y**2
    r = rlct.ideal_analysis([f], (x, y, z)).result
    assert not r.exact
    assert any(c.status is None for c in r.conditions)
    assert r.lower <= R(3, 8) <= r.upper
    assert r.upper == R(3, 8)
    # f's own conditions (no singular zero, no real zero on the torus) are decided: from_ideal
    # reaches 3/8 exactly through rlct.shapes.hypersurface.
    full = rlct.from_ideal([f], (x, y, z))
    assert (full.exact, full.lam, full.mult) == (True, R(3, 8), 1)


# A quadratic form negative only on a thin cone around (3, 17, 29): K(3, 17, 29) = −1139/10⁶.
_THIN = 1 - R(1, 10**6)
_THIN_CONE = sp.expand(_THIN * (x**2 + y**2 + z**2) - (3 * x + 17 * y + 29 * z) ** 2 / 1139)


def test_a_quadratic_face_negative_on_a_thin_cone_is_rejected_with_an_exact_point():
    """Random sampling misses the cone; the form's least eigenvector finds it, and K there is
    checked negative exactly. (Before: λ = 3/2 exact, with '[holds] K_γ has no zero'.)"""
    with pytest.raises(NotNonNegativeError, match=r"negative at x = 3/29, y = 17/29, z = 1"):
        rlct.from_polynomial(_THIN_CONE, (x, y, z))


def test_a_face_not_proven_nonnegative_is_never_claimed_zero_free():
    """K_γ = (thin-cone form)·(x² + y² + z²): negative on the cone, so it has regular real zeros
    that ∇K_γ (added only where K_γ ≥ 0 is proven) would hide. The result is an error or
    bounds, never an exact value resting on '[holds] K_γ has no zero'."""
    K = sp.expand(_THIN_CONE * (x**2 + y**2 + z**2))
    try:
        r = rlct.from_polynomial(K, (x, y, z))
    except NotNonNegativeError:
        return
    assert not r.exact


@pytest.mark.parametrize(
    ("g", "proven"),
    [
        ((x - y) ** 2, True),
        (x**2 - 2 * x * y + y**2 + 1, True),  # (x − y)² + 1: its homogenisation is PSD
        ((x - y) ** 2 * (x**2 + y**2), True),
        (3 * (x * y - 1) ** 2 * (x**4 + y**2), True),
        (x**2 - y**2, False),
        (x * y, False),
        (-((x - y) ** 2), False),
        (x**4 + y**4 - x**2 * y**2, False),  # ≥ 0, but no certificate: not proven, not negative
    ],
)
def test_certified_nonnegative(g, proven):
    from rlct.algebra.realzeros import certified_nonnegative

    assert certified_nonnegative(sp.expand(g), [x, y]) is proven


def test_analysis_exposes_the_polyhedron():
    a = newton_analysis(x**4 + x**2 * y**2 + y**6, (x, y))
    assert a.distance == 2
    assert set(a.polyhedron.vertices) == {(4, 0), (2, 2), (0, 6)}
    assert a.face.points == ((2, 2),) and a.face.dim == 0
    assert len(a.polyhedron.compact_faces) == 5  # three vertices, two edges


@pytest.mark.parametrize(
    ("K", "message"),
    [
        (x**3 + y**2, "leading term x\\*\\*3"),
        (-(x**2) - y**2, "negative values"),
        (x**2 + y**2 + 1, "K\\(0\\) = 1"),
        (x**2 - 3 * x * y + y**2, "face polynomial"),
        (sp.Integer(0), "identically zero"),
    ],
)
def test_visibly_negative_or_nonvanishing_k_is_rejected(K, message):
    with pytest.raises(NotNonNegativeError, match=message):
        rlct.from_polynomial(K, (x, y))


@pytest.mark.parametrize(
    ("K", "variables", "message"),
    [
        (x**2 + z**2, (x, y), "not in the variables"),
        (sp.sin(x) ** 2, (x,), "not a polynomial"),
        (0.5 * x**2, (x,), "floating-point"),
        (x**2, (x, x), "distinct"),
        (x**2, (), "no variables"),
    ],
)
def test_bad_expressions(K, variables, message):
    with pytest.raises(NotPolynomialError, match=message):
        rlct.from_polynomial(K, variables)


# --- properties -------------------------------------------------------------------------------

syms = sp.symbols("w0:4")


@st.composite
def even_positive_polynomials(draw):
    """Sums of even monomials with positive coefficients: always non-degenerate, so exact."""
    d = draw(st.integers(1, 4))
    n = draw(st.integers(1, 6))
    monos = draw(
        st.lists(
            st.lists(st.integers(0, 3), min_size=d, max_size=d).filter(any), min_size=n, max_size=n
        )
    )
    coeffs = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    K = sum(c * sp.Mul(*(v ** (2 * e) for v, e in zip(syms, m))) for c, m in zip(coeffs, monos))
    return K, syms[:d], monos


@given(even_positive_polynomials())
def test_even_positive_sums_are_exact_and_at_most_half_dimension(case):
    K, variables, _ = case
    r = rlct.from_polynomial(K, variables)
    assert r.exact
    assert 0 < r.lam <= sp.Rational(len(variables), 2)
    assert 1 <= r.mult <= len(variables)


@given(even_positive_polynomials())
def test_distance_agrees_with_a_floating_point_lp(case):
    """t = min{s : s·1 ∈ conv(A) + R^d_{≥0}}: min s s.t. Σ c_a a ≤ s·1, Σ c_a = 1, c ≥ 0."""
    K, variables, _ = case
    exps = [m for m, _ in sp.Poly(K, *variables).terms()]
    A = np.array(exps, dtype=float).T  # d × n
    d, n = A.shape
    cost = np.r_[np.zeros(n), 1.0]
    a_ub = np.c_[A, -np.ones(d)]
    a_eq = np.r_[np.ones(n), 0.0][None, :]
    lp = linprog(cost, A_ub=a_ub, b_ub=np.zeros(d), A_eq=a_eq, b_eq=[1.0], bounds=(0, None))
    t = NewtonPolyhedron(exps).distance([1] * d)
    assert lp.status == 0
    assert abs(float(t) - lp.fun) < 1e-9


@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=4).filter(any),
    st.lists(
        st.fractions(min_value=Fraction(-1, 2), max_value=3, max_denominator=4),
        min_size=4,
        max_size=4,
    ),
)
def test_newton_equals_normal_crossing_on_monomials(k, h):
    h = h[: len(k)]
    monomial = sp.Mul(*(v ** (2 * e) for v, e in zip(syms, k)))
    a = rlct.from_polynomial(monomial, syms[: len(k)], h)
    b = rlct.normal_crossing(k, h)
    assert a.exact and b.exact
    assert (a.lam, a.mult) == (b.lam, b.mult)


@given(
    st.lists(
        st.lists(st.integers(0, 3), min_size=3, max_size=3).filter(any), min_size=1, max_size=4
    )
)
def test_monomial_ideal_matches_its_sum_of_squares(monos):
    gens = [sp.Mul(*(v**e for v, e in zip(syms, m))) for m in monos]
    a = rlct.from_ideal(gens, syms[:3])
    b = rlct.from_polynomial(sum(g**2 for g in gens), syms[:3])
    assert a.exact and b.exact
    assert (a.lam, a.mult) == (b.lam, b.mult)


def test_a_generator_that_expands_to_zero_is_skipped_like_a_written_zero():
    zero = (x + 1) ** 2 - x**2 - 2 * x - 1  # not structurally 0
    a = rlct.from_ideal([x, zero], [x])
    b = rlct.from_ideal([x, sp.Integer(0)], [x])
    assert (a.exact, a.lam, a.mult) == (b.exact, b.lam, b.mult) == (True, R(1, 2), 1)
    with pytest.raises(NotNonNegativeError, match="every generator is zero"):
        rlct.from_ideal([zero], [x])


def test_the_pipeline_stops_at_a_degenerate_face_and_the_analysis_does_not():
    # reduced rank regression's ideal for 2×2 matrices B·A (H = 2): degenerate, with 91 faces
    a = sp.Matrix(2, 2, sp.symbols("a:4"))
    b = sp.Matrix(2, 2, sp.symbols("b:4"))
    gens, variables = list(b * a), list(a) + list(b)
    full = rlct.ideal_analysis(gens, variables)
    decided = sum(c.status is not None for _, c in full.face_conditions)
    assert sum(c.status is False for _, c in full.face_conditions) > 1  # several degenerate
    quick = ideal_step(as_generators(gens, variables), (R(0),) * 8, stop_at_degenerate=True)
    statuses = [c.status for _, c in quick.face_conditions]
    first = statuses.index(False)
    assert all(s is None for s in statuses[first + 1 :]) and len(statuses) > first + 1
    assert sum(s is not None for s in statuses) == first + 1 < decided
    assert (quick.result.lower, quick.result.upper) == (full.result.lower, full.result.upper)


def test_negative_points_are_found_past_six_variables():
    ws = sp.symbols("w:8")
    g = sp.Mul(*ws)  # negative wherever an odd number of coordinates is
    point = negative_point(g, ws)
    assert point is not None and g.subs(point) < 0
    assert negative_point(sum(w**2 for w in ws), ws) is None


def test_a_costly_torus_zero_question_is_left_undecided() -> None:
    """⟨x₀x₂⁸ − 3x₁³x₂⁶ + 2x₁²x₂⁸, −3x₀³ + 2x₁³x₂⁶ − x₂¹²⟩ under |x₁| (a random quasi-homogeneous
    draw): every monomial lies on the facet 4a + 2b + c = 12, whose torus-zero question sent
    sympy's unbounded lex Gröbner basis past a minute. It is now asked within
    rlct.algebra.groebner's limits and left undecided there, so the step claims no exact value; the
    ray t·(1, 2, 1) leaves the polyhedron on the edge conv{(3, 0, 0), (0, 3, 6)} at t = 2 ((2, 1, 2)
    = ⅔(3, 0, 0) + ⅓(0, 3, 6) ≤ (2, 4, 2)), so λ ≤ 1/(2t) = 1/4."""
    x0, x1, x2 = gens = sp.symbols("x0:3")
    polys = [
        sp.Poly(x0 * x2**8 - 3 * x1**3 * x2**6 + 2 * x1**2 * x2**8, *gens),
        sp.Poly(-3 * x0**3 + 2 * x1**3 * x2**6 - x2**12, *gens),
    ]
    got = ideal_step(polys, (sp.Integer(0), sp.Integer(1), sp.Integer(0))).result
    assert not got.exact and got.upper == sp.Rational(1, 4)
    facet = [
        c for c in got.conditions if "(0, 0, 12), (0, 2, 8), (0, 3, 6), (1, 0, 8)" in c.statement
    ]
    assert len(facet) == 1 and facet[0].status is None
