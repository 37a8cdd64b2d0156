"""rlct.algebra.groebner: the bounded Buchberger against sympy's Gröbner bases, and its limits."""

from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy.polys.orderings import grevlex, lex
from sympy.polys.rings import ring

import rlct.algebra.groebner
from rlct.algebra.groebner import _lead, _Remainder, bounded_groebner, in_ideal, is_zero_dimensional
from rlct.algebra.projective_zeros import affine_zeros
from rlct.algebra.realzeros import has_real_torus_zero
from rlct.blowup.families import ELIMINATE_FIRST, _quotient

X, Y, Z = sp.symbols("x y z")

monomials = st.tuples(*[st.integers(0, 2)] * 3)
polynomials = st.dictionaries(monomials, st.integers(-4, 4).filter(bool), min_size=1, max_size=3)
orders = st.sampled_from([lex, grevlex, ELIMINATE_FIRST])


@settings(max_examples=30, deadline=None)
@given(st.lists(polynomials, min_size=1, max_size=3), orders)
def test_the_basis_is_sympys_reduced_basis(terms, order) -> None:
    """One to three small generators in three variables, three orders: within the limits, the reduced
    basis sympy gives, in its order of listing (some such pairs pass ``MAX_REDUCTIONS`` in lex:
    then None, which the callers read as declined)."""
    exprs = [sp.Poly.from_dict(t, X, Y, Z).as_expr() for t in terms]
    basis = bounded_groebner(exprs, [X, Y, Z], order)
    if basis is None:
        return
    reference = sp.groebner(exprs, X, Y, Z, order=order, domain=sp.QQ)
    assert [sp.expand(b) for b in basis] == [sp.expand(q) for q in reference.exprs]


@settings(max_examples=60, deadline=None)
@given(polynomials, st.lists(polynomials, min_size=1, max_size=3), orders)
def test_the_remainder_is_sympys_term_for_term(f, divisors, order) -> None:
    """The heap of terms gives the remainder ``PolyElement.rem`` gives (the same division: the
    leading term by the first divisor whose leading monomial divides it), coefficient for
    coefficient, in three orders."""
    r, *_ = ring([X, Y, Z], sp.QQ, order=order)
    f_r, gs = r.from_dict(f), [r.from_dict(g) for g in divisors]
    got = _Remainder(r.order)(f_r, [_lead(g) for g in gs])
    assert dict(got) == dict(f_r.rem(gs))


def test_past_the_work_limit_it_declines(monkeypatch) -> None:
    """⟨x²y − z³ + 1, xy² − 2z, xz² − y³⟩ (lex) needs thousands of divisor terms subtracted in its
    reductions: sympy's basis within ``MAX_WORK``, None where the limit is a hundred."""
    system = [X**2 * Y - Z**3 + 1, X * Y**2 - 2 * Z, Z**2 * X - Y**3]
    reference = sp.groebner(system, X, Y, Z, order=lex, domain=sp.QQ).exprs
    assert [sp.expand(b) for b in bounded_groebner(system, [X, Y, Z], lex)] == reference
    monkeypatch.setattr(rlct.algebra.groebner, "MAX_WORK", 100)
    assert bounded_groebner(system, [X, Y, Z], lex) is None


def test_rational_coefficients_and_the_first_generator_eliminated() -> None:
    """⟨x − y/2, y² − 3⟩ in lex x > y: the basis x − y/2, y² − 3, whose element free of x
    generates the elimination ideal."""
    basis = bounded_groebner([X - Y / 2, Y**2 - 3], [X, Y], lex)
    assert basis == [X - Y / 2, Y**2 - 3]


def test_over_the_limits_it_declines() -> None:
    """The cyclic-6 system's lex basis is beyond the limits: None, not minutes of work."""
    x = sp.symbols("x0:6")
    system = [
        sp.Add(*[sp.Mul(*[x[(i + j) % 6] for j in range(k)]) for i in range(6)])
        for k in range(1, 6)
    ] + [sp.Mul(*x) - 1]
    assert bounded_groebner(system, x, lex) is None


def test_the_quotient_of_a_monomial_ideal() -> None:
    """⟨x²y, xz⟩ : x = ⟨xy, z⟩ through the bounded basis."""
    got = _quotient([X**2 * Y, X * Z], X, [X, Y, Z])
    assert got is not None
    assert sp.groebner(got, X, Y, Z, order="grevlex").exprs == [X * Y, Z]


def test_the_zero_ideal_and_the_unit_ideal() -> None:
    assert bounded_groebner([sp.Integer(0)], [X, Y], lex) == []
    assert bounded_groebner([X * Y - 1, X], [X, Y], lex) == [1]


def test_membership_and_zero_dimension_read_off_the_basis() -> None:
    """⟨x² − y, y² − 1⟩ (grevlex): finitely many zeros, x⁴ − 1 in the ideal, x − 1 not; ⟨xy⟩
    has a curve of zeros; the unit ideal is not counted, as in sympy."""
    basis = bounded_groebner([X**2 - Y, Y**2 - 1], [X, Y], grevlex)
    assert is_zero_dimensional(basis, [X, Y], grevlex)
    assert in_ideal(X**4 - 1, basis, [X, Y], grevlex)
    assert not in_ideal(X - 1, basis, [X, Y], grevlex)
    assert not is_zero_dimensional(bounded_groebner([X * Y], [X, Y], grevlex), [X, Y], grevlex)
    assert not is_zero_dimensional([sp.Integer(1)], [X, Y], grevlex)


def test_a_saturated_system_that_plain_buchberger_gave_up_on() -> None:
    """⟨−3x³y⁶ + 2x²y⁸ + y⁸, 2x³y⁶ − y¹² − 3, zxy − 1⟩ (grevlex, z first), the torus-zero
    question of ``rlct.algebra.realzeros`` for a face in two variables: the first version (pairs
    kept until selected) passed 500 reductions; with Gebauer and Möller's criteria it is sympy's
    basis of ten elements."""
    z = sp.Symbol("z0")
    system = [
        -3 * X**3 * Y**6 + 2 * X**2 * Y**8 + Y**8,
        2 * X**3 * Y**6 - Y**12 - 3,
        z * X * Y - 1,
    ]
    basis = bounded_groebner(system, [z, X, Y], grevlex)
    reference = sp.groebner(system, z, X, Y, order="grevlex", domain=sp.QQ).exprs
    assert basis is not None and len(basis) == 10
    assert [sp.expand(b) for b in basis] == [sp.expand(q) for q in reference]


def test_large_input_coefficients_are_not_a_reason_to_decline() -> None:
    """The bit limit counts growth beyond the inputs: (10²⁰⁰x − y)² + 1 with the saturation
    has coefficients of about 1,330 bits from the start, which the first version (1,024 bits in
    all) refused. Its basis is sympy's (not the unit ideal: the zeros are complex)."""
    z = sp.Symbol("z0")
    big = sp.Integer(10) ** 200
    system = [sp.expand((big * X - Y) ** 2 + 1), z * X * Y - 1]
    basis = bounded_groebner(system, [z, X, Y], grevlex)
    reference = sp.groebner(system, z, X, Y, order="grevlex", domain=sp.QQ).exprs
    assert basis is not None
    assert [sp.expand(b) for b in basis] == [sp.expand(q) for q in reference]


def test_callers_leave_a_basis_past_the_limits_undecided() -> None:
    """The cyclic-6 system: ``affine_zeros`` (which had called sympy's unbounded lex basis)
    returns None, "not decided", instead of computing for minutes."""
    x = sp.symbols("x0:6")
    system = [
        sp.Add(*[sp.Mul(*[x[(i + j) % 6] for j in range(k)]) for i in range(6)])
        for k in range(1, 6)
    ] + [sp.Mul(*x) - 1]
    assert affine_zeros(system, list(x)) is None


def test_a_declined_basis_leaves_the_torus_question_undecided(monkeypatch) -> None:
    """xy + x² − z² = xy + x² − 2z² = 0 forces z = 0: no zero on the torus (the saturated basis
    is [1], so False). With the basis over the limits (none allowed) the answer is None,
    "undecided", never False."""
    system = [X * Y - Z**2 + X**2, X * Y - 2 * Z**2 + X**2]
    face = [(1, 1, 0), (0, 0, 2), (2, 0, 0)]
    assert has_real_torus_zero(system, [X, Y, Z], face, False) is False
    monkeypatch.setattr(rlct.algebra.groebner, "MAX_REDUCTIONS", 0)
    assert has_real_torus_zero(system, [X, Y, Z], face, False) is None
