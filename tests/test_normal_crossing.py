"""Normal crossing: λ = min_j (h_j+1)/(2k_j), m = number of minimisers (REFERENCE §2)."""

from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import rlct
from rlct import InvalidExponentError, InvalidPriorError


@pytest.mark.parametrize(
    ("k", "h", "lam", "m"),
    [
        ((1,), None, sp.Rational(1, 2), 1),  # K = w², regular in one dimension
        ((1, 1), None, sp.Rational(1, 2), 2),  # K = w1² w2²: both coordinates tie
        ((1, 2), None, sp.Rational(1, 4), 1),  # min(1/2, 1/4)
        ((0, 3), (5, 1), sp.Rational(1, 3), 1),  # only j = 2 vanishes: (1+1)/6
        ((1, 2), (0, 1), sp.Rational(1, 2), 2),  # (0+1)/2 = (1+1)/4
        ((1,), (Fraction(-1, 2),), sp.Rational(1, 4), 1),  # (1/2)/2
        ((3, 3, 3), None, sp.Rational(1, 6), 3),
    ],
)
def test_hand_checked_values(k, h, lam, m):
    r = rlct.normal_crossing(k, h)
    assert r.exact
    assert r.lam == lam
    assert isinstance(r.lam, sp.Rational)
    assert r.mult == m
    assert r.lower == r.upper == lam


@pytest.mark.parametrize(
    ("k", "h", "error", "message"),
    [
        ((1, -1), None, InvalidExponentError, "negative"),
        ((0, 0), None, InvalidExponentError, "all zero"),
        ((), None, InvalidExponentError, "empty"),
        ((1.5,), None, InvalidExponentError, "not an integer"),
        ((True,), None, InvalidExponentError, "not an integer"),
        ((1, 1), (0,), InvalidPriorError, "length 1"),
        ((1,), (-1,), InvalidPriorError, "not integrable"),
        ((1,), (0.5,), InvalidPriorError, "float"),
    ],
)
def test_bad_input_raises_clear_error(k, h, error, message):
    with pytest.raises(error, match=message):
        rlct.normal_crossing(k, h)


exponents = st.lists(st.integers(0, 6), min_size=1, max_size=6).filter(any)


@given(exponents, st.randoms(use_true_random=False))
def test_invariant_under_permutation(k, rnd):
    h = [rnd.randint(0, 4) for _ in k]
    order = list(range(len(k)))
    rnd.shuffle(order)
    a = rlct.normal_crossing(k, h)
    b = rlct.normal_crossing([k[i] for i in order], [h[i] for i in order])
    assert (a.lam, a.mult) == (b.lam, b.mult)


@given(exponents)
def test_at_most_half_the_dimension(k):
    r = rlct.normal_crossing(k)
    assert 0 < r.lam <= sp.Rational(len(k), 2)
    assert 1 <= r.mult <= sum(1 for x in k if x > 0)
