"""The public strategies produce valid cases whose constructed answers the exact layer reproduces."""

import pytest
import sympy as sp
from hypothesis import given, settings

import rlct
from verification import strategies as vs


@given(vs.normal_crossing_cases())
def test_normal_crossing_cases_match_both_exact_routes(case):
    a = rlct.normal_crossing(
        [sp.Poly(case.K, *case.variables).degree(v) // 2 for v in case.variables], case.prior
    )
    b = case.exact()
    assert (a.lam, a.mult) == (case.expected_lam, case.expected_mult)
    assert b.exact
    assert (b.lam, b.mult) == (case.expected_lam, case.expected_mult)


@settings(max_examples=30)
@given(vs.newton_polynomials(depth=3, max_dim=5))
def test_newton_polynomials_have_the_constructed_answer(case):
    r = case.exact()
    assert r.exact, str(r)
    assert (r.lam, r.mult) == (case.expected_lam, case.expected_mult)
    assert r.lam <= sp.Rational(case.dim, 2)


@settings(max_examples=20)
@given(vs.degenerate_polynomials())
def test_degenerate_polynomials_have_the_constructed_answer(case):
    newton = rlct.newton_analysis(case.K, case.variables, case.prior).result
    assert not newton.exact
    assert newton.upper == case.newton_upper
    assert any(c.status is False for c in newton.conditions)
    r = case.exact()
    assert r.exact, str(r)
    assert (r.lam, r.mult) == (case.expected_lam, case.expected_mult)


@settings(max_examples=40, deadline=None)
@given(vs.diffeomorphic_polynomials(dim=2))
def test_diffeomorphic_plane_polynomials_are_exact_with_the_constructed_answer(case):
    r = case.exact()
    assert r.exact, str(r)
    assert (r.lam, r.mult) == (case.expected_lam, case.expected_mult)
    assert sp.Poly(case.K, *case.variables).total_degree() <= 12


@settings(max_examples=8, deadline=None)
@given(vs.diffeomorphic_polynomials(dim=3, max_degree=8))
def test_diffeomorphic_polynomials_in_three_variables_are_never_wrong(case):
    r = case.exact()
    if r.exact:
        assert (r.lam, r.mult) == (case.expected_lam, case.expected_mult)
    else:
        assert r.lower <= case.expected_lam <= r.upper


@given(vs.rrr_cases())
def test_rrr_cases_are_valid(case):
    r = case.exact()
    params = case.H * (case.M + case.N)
    assert r.exact
    assert 0 < r.lam <= sp.Rational(params, 2)


@given(vs.dln_cases())
def test_dln_cases_are_valid(case):
    r = case.exact()
    params = sum(a * b for a, b in zip(case.widths, case.widths[1:]))
    assert r.exact
    assert 0 < r.lam <= sp.Rational(params, 2)


@given(vs.bad_inputs())
def test_bad_inputs_raise_their_documented_error(bad):
    with pytest.raises(bad.error, match=bad.match):
        bad.call()


@settings(max_examples=30)
@given(vs.quadratic_cases())
def test_quadratic_cases_rank_at_most_generic(case):
    """The rank at any point is ≤ the generic rank; generic points attain it (exact λ = rank/2)."""
    d, p, K = case.shape
    rank = rlct.jacobian_rank(case.W, case.V, case.X)
    generic = rlct.generic_rank(d, p, K, case.X)
    assert rank <= generic
    r = case.exact(search_seconds=2)
    assert r.lower >= sp.Rational(rank, 2)
    params = K * (d + p)
    assert r.upper <= sp.Rational(params - K, 2)  # the K unit scalings are flat directions
    if case.kind == "generic" and rank == generic:
        assert r.exact
        assert r.lam == sp.Rational(rank, 2)


@settings(max_examples=20)
@given(vs.quadratic_cases(data=False))
def test_special_points_never_exceed_the_generic_point(case):
    if case.kind == "generic":
        return
    d, p, K = case.shape
    assert rlct.jacobian_rank(case.W, case.V) <= rlct.generic_rank(d, p, K)
    if case.kind == "inactive unit":
        # v_:1 = 0: unit 1 contributes nothing, and its w_1 is free: rank ≤ that of K − 1 units + p.
        smaller = rlct.generic_rank(d, p, K - 1) if K > 1 else 0
        assert rlct.jacobian_rank(case.W, case.V) <= smaller + p


@settings(max_examples=60, deadline=None)
@given(vs.quadratic_cases(max_d=32, max_p=32, max_K=32))
def test_quadratic_cases_at_the_largest_bounds_can_all_be_computed(case):
    """K is drawn at most as wide as the exact Jacobian rlct builds allows (d = 30, p = 13,
    K = 24 without data needed 6.2·10⁶ entries against 4·10⁶)."""
    from rlct.quadratic.point import MAX_JACOBIAN_ENTRIES, jacobian_shape

    d, p, K = case.shape
    rows, cols = jacobian_shape(d, p, K, None if case.X is None else len(case.X), False)
    assert rows * cols <= MAX_JACOBIAN_ENTRIES
