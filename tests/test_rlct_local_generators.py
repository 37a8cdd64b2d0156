"""Simpler generators of the same ideal near 0 (:mod:`rlct.reductions.local_generators`)."""

from __future__ import annotations

import sympy as sp

import rlct
from rlct.reductions.local_generators import (
    local_generators,
    reduce_by_generators,
    reduce_by_monomials,
    strip_units,
)

x0, x1, x2, x3 = X = sp.symbols("x0:4")


def _polys(*exprs):
    return [sp.Poly(sp.expand(e), *X, domain=sp.QQ) for e in exprs]


def _exprs(polys):
    return [p.as_expr() for p in polys]


def test_a_monomial_times_a_unit_becomes_the_monomial() -> None:
    got = strip_units(_polys(x3 * (1 + 3 * x3**2 - x2 * x3**2), x1 * x2 + x2**2, x0 - x1))
    assert _exprs(got) == [x3, x1 * x2 + x2**2, x0 - x1]  # only the first is x^μ·unit


def test_terms_and_generators_a_monomial_divides_go() -> None:
    got = reduce_by_monomials(_polys(x3, x0 * x2**2 * x3, x1**2 + x1 * x3, x3, x2 * x3 + x2**3))
    assert _exprs(got) == [x3, x1**2, x2**3]
    # and again once a generator has become a monomial: x1² then removes x1²·x2
    assert _exprs(reduce_by_monomials(_polys(x3, x1**2 + x3, x1**2 * x2 + x2**5))) == [
        x3,
        x1**2,
        x2**5,
    ]


def test_an_ideal_that_splits_only_after_both() -> None:
    """⟨x3(1 + 3x3² − x2x3²), 3x2 + x1x2³ − 2x1², x0x2²x3⟩ (a fuzz draw that took 61 s to end
    as bounds 1/2 ≤ λ ≤ 35/34): locally ⟨x3, 3x2 + x1x2³ − 2x1²⟩, two blocks. ⟨x3⟩ gives 1/2, and
    in (x1, x2) the generator is x2·(3 + x1x2²) − 2x1², so x2' = x2 − (2/3)x1²·unit makes it x2'·unit:
    1/2. λ = 1, m = 1 (x0 is free)."""
    gens = [x3 * (1 + 3 * x3**2 - x2 * x3**2), 3 * x2 + x1 * x2**3 - 2 * x1**2, x0 * x2**2 * x3]
    assert _exprs(local_generators(_polys(*gens))) == [x3, -2 * x1**2 + x1 * x2**3 + 3 * x2]
    got = rlct.from_ideal([sp.expand(g) for g in gens], X)
    assert got.exact and (got.lam, got.mult) == (1, 1)


def test_remainders_with_fewer_terms_replace_generators_and_keep_the_ideal() -> None:
    """x²y + x·z² + z³ = x·(xy + z²) + z³: the remainder z³ replaces it; the reduced Gröbner
    bases (an independent test of equal ideals) agree, and a generator that nothing shortens
    stays."""
    f, g = x0 * x1 + x2**2, x0**2 * x1 + x0 * x2**2 + x2**3
    got = reduce_by_generators(_polys(f, g, x3**2 + x1))
    assert _exprs(got) == [f, x2**3, x3**2 + x1]
    assert sp.groebner(_exprs(got), *X) == sp.groebner([f, g, x3**2 + x1], *X)
    # a multiple of another generator goes altogether
    assert _exprs(reduce_by_generators(_polys(f, (x0 - x3) * f))) == [f]
