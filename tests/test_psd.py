"""rlct.algebra.psd: exact positive semi-definiteness and rank by symmetric elimination over Q,
checked against sympy's rank and principal minors; λ = rank/2 for PSD quadratic forms, including
those the Newton polyhedron leaves as bounds and Σ x_i² with too many faces for it."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import rlct
from rlct import NotNonNegativeError
from rlct.algebra.psd import form_matrix, psd_rank

R = sp.Rational


def _minors_say_psd(a: sp.Matrix) -> bool:
    """A ⪰ 0 iff every principal minor is ≥ 0 (the independent test)."""
    k = a.shape[0]
    return all(
        a.extract(list(s), list(s)).det() >= 0
        for n in range(1, k + 1)
        for s in combinations(range(k), n)
    )


small = st.integers(-3, 3)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.lists(st.lists(small, min_size=k, max_size=k), min_size=1, max_size=4),
            st.lists(small, min_size=k * k, max_size=k * k),
            st.booleans(),
        )
    )
)
def test_psd_rank_agrees_with_principal_minors_and_sympy_rank(case):
    k, rows, noise, gram = case
    if gram:  # BᵀB: PSD of rank rank(B)
        b = sp.Matrix(rows)
        a = b.T * b
    else:  # a symmetric matrix, PSD or not
        m = sp.Matrix(k, k, noise)
        a = m + m.T
    fr = [[Fraction(int(v)) for v in a.row(i)] for i in range(k)]
    got = psd_rank(fr)
    if _minors_say_psd(a):
        assert got == a.rank()
    else:
        assert got is None


def test_form_matrix_reads_the_cross_terms_as_halves():
    x, y = sp.symbols("x y")
    assert form_matrix(sp.Poly(x**2 - 3 * x * y + 2 * y**2, x, y)) == [
        [1, Fraction(-3, 2)],
        [Fraction(-3, 2), 2],
    ]
    assert form_matrix(sp.Poly(x**2 + y**3, x, y)) is None


@pytest.mark.parametrize(
    ("K", "lam"),
    [
        ("(x - y)**2 + (y - z)**2", R(1)),  # rank 2 in 3 variables: the Newton step gave bounds
        ("x**2 + y**2 + z**2 - x*y - y*z - z*x", R(1)),  # ½‖x − mean‖²·…, rank 2
        ("(x + y + z)**2", R(1, 2)),
        ("x**2 + 2*y**2 + 3*z**2 + 2*x*y", R(3, 2)),  # definite
    ],
)
def test_degenerate_psd_forms_are_exact_by_their_rank(K, lam):
    x, y, z = sp.symbols("x y z")
    r = rlct.from_polynomial(K, (x, y, z))
    assert (r.exact, r.lam, r.mult) == (True, lam, 1)


def test_a_regular_model_in_many_variables_is_exact():
    """Σ x_i² in 12 and 40 variables (λ = d/2, REFERENCE §2): the Newton polyhedron has more than
    1,024 compact faces there (TooLargeError before); a chain of 30 differences has rank 30."""
    for d in (12, 40):
        xs = sp.symbols(f"w0:{d}")
        r = rlct.from_polynomial(sum(v**2 for v in xs), xs)
        assert (r.exact, r.lam, r.mult) == (True, R(d, 2), 1)
    xs = sp.symbols("w0:31")
    r = rlct.from_polynomial(sp.expand(sum((xs[i] - xs[i + 1]) ** 2 for i in range(30))), xs)
    assert (r.exact, r.lam) == (True, R(30, 2))


def test_a_prior_on_the_forms_variables_is_not_moved_by_the_change():
    """With h ≠ 0 on a variable of the form the linear change does not apply: (x − y)² + z²
    with |z|¹ is the sum of blocks 1/2 + (1 + 1)/2 = 3/2, not rank/2 = 1."""
    x, y, z = sp.symbols("x y z")
    r = rlct.from_polynomial((x - y) ** 2 + z**2, (x, y, z), prior_exponents=(0, 0, 1))
    assert r.exact and r.method != "positive semi-definite quadratic form"
    assert r.lam == R(3, 2)


def test_an_indefinite_form_is_rejected():
    x, y, z = sp.symbols("x y z")
    with pytest.raises(NotNonNegativeError):
        rlct.from_polynomial(x**2 + y**2 - 3 * x * y + z**2, (x, y, z))


def test_flint_factorisations_have_sympys_contract():
    """rlct.algebra.factor (FLINT) against the product it must equal, on random products of powers
    in three variables: c·Π f_i^(e_i) = K with primitive integer f_i; sqf parts square-free and
    pairwise coprime; the factors irreducible where sympy can tell (one factor of exponent 1)."""
    import random

    from rlct.algebra.factor import factor_list, sqf_list

    x, y, z = sp.symbols("x y z")
    rng = random.Random(0)

    def rnd():
        return sum(
            rng.randint(-3, 3)
            * x ** rng.randint(0, 3)
            * y ** rng.randint(0, 3)
            * z ** rng.randint(0, 2)
            for _ in range(3)
        )

    checked = 0
    for _ in range(40):
        K = sp.expand(R(rng.randint(1, 5), rng.randint(1, 4)) * rnd() ** rng.randint(1, 3) * rnd())
        if K == 0 or K.is_number:
            continue
        p = sp.Poly(K, x, y, z)
        for c, fs in (factor_list(p), sqf_list(p)):
            assert sp.expand(c * sp.Mul(*(f.as_expr() ** e for f, e in fs)) - K) == 0
            assert all(f.domain == sp.ZZ and f.primitive()[0] == 1 for f, _ in fs)
        for f, _ in factor_list(p)[1]:
            assert len(f.factor_list()[1]) == 1 and f.factor_list()[1][0][1] == 1
        parts = [f.as_expr() for f, _ in sqf_list(p)[1]]
        for i, f in enumerate(parts):
            assert all(sp.gcd(f, sp.diff(f, v)).is_number for v in (x, y, z) if sp.degree(f, v) > 0)
            assert all(sp.gcd(f, g).is_number for g in parts[i + 1 :])
        checked += 1
    assert checked >= 30


def test_a_high_power_of_a_line_is_resolved_quickly():
    """(x − y)^400 (λ = 1/400, m = 1): sympy's sqf_list and factor_list took minutes here."""
    x, y = sp.symbols("x y")
    r = rlct.from_polynomial(sp.expand((x - y) ** 400), (x, y))
    assert (r.exact, r.lam, r.mult) == (True, R(1, 400), 1)
