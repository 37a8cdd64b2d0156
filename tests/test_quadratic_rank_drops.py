"""Quadratic networks where the Jacobian's rank drops: λ from the ideal of the identifiable map
(`rlct.quadratic.ideal`), against values derived by hand and against the rank bounds.

Hand values use K(θ) ≍ Σ (coordinates of Φ(θ) − Φ(θ*))² near θ*: independent linear parts
are local coordinates (λ 1/2 each, m unchanged), and what is left is read as a normal crossing.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from rlct.errors import InvalidTypeError, RLCTError
from rlct.quadratic import llc, num_parameters
from rlct.quadratic.jacobians import fibre_dimension, rank_at
from rlct.quadratic.point import parse_point
from rlct.result import RLCT


def _exact(res: RLCT, lam: tuple[int, int], mult: int) -> None:
    assert res.exact, str(res)
    assert (res.lam.p, res.lam.q, res.mult) == (*lam, mult), str(res)


def test_one_unit_at_zero_input_weight():
    # (w, v) = (0, 1): Φ = v·w², K ≍ w⁴ near v = 1: λ = 1/4, m = 1 (the ranks prove [0, 1/2]).
    _exact(llc([[0]], [[1]]), (1, 4), 1)
    # θ* = 0: K = v²w⁴, the normal crossing min(1/2, 1/4) = 1/4, m = 1.
    _exact(llc([[0]], [[0]]), (1, 4), 1)


def test_a_dead_unit_beside_a_live_one():
    # d = 2, K = 2, p = 1, unit 1 = (e1, 1), unit 2 = (0, 0). With u = e1 + a, v1 = 1 + s, and
    # unit 2's (b, t): Q11 = (1 + s)(1 + a1)² + t·b1², Q12 = (1 + s)(1 + a1)a2 + t·b1b2 are two
    # coordinates (linear parts s + 2a1 and a2), and on them Q22 = (1 + s)a2² + t·b2² ≍ t·b2²
    # (a2 = −t·b1b2/(…)). K ≍ y1² + y2² + t²b2⁴: λ = 1/2 + 1/2 + min(1/2, 1/4) = 5/4, m = 1.
    _exact(llc([[1, 0], [0, 0]], [[1, 0]]), (5, 4), 1)
    bounds = llc([[1, 0], [0, 0]], [[1, 0]], search_seconds=0)
    assert not bounds.exact and (bounds.lower, bounds.upper) == (1, sp.Rational(3, 2))


def test_two_units_that_cancel():
    # d = 2, v = (1, −1), both units e1: Q = 0. Q11 and Q12 have independent linear parts
    # (s + t + 2a1 − 2b1 and a2 − b2), and Q22 vanishes on their common zeros (Q11 = Q12 = 0
    # makes Q of rank one with a zero (1, 1) entry, so Q = 0): K ≍ y1² + y2², λ = 1, m = 1.
    _exact(llc([[1, 1], [0, 0]], [[1, -1]]), (1, 1), 1)


def test_a_biased_unit_at_zero_input_weight():
    # w = 0, v = 1, b = 1: Φ = (v·w², 2v·b·w, v·b² + c). (v, b) are free with c = c* − v·b² + 1
    # (a fibre of dimension 2 = p + 1), and ∂(2vbw)/∂w = 2, ∂s/∂c = 1 give rank 2 = N − k:
    # λ = 1 from the ranks alone (the fibre count once saw dimension 1 and proved only [1, 3/2]).
    res = llc([[0]], [[1]], b=[1], search_seconds=0)
    _exact(res, (1, 1), 1)
    pt = parse_point([[0]], [[1]], b=[1])
    assert fibre_dimension(pt) == 2 and rank_at(pt) == 2


def test_with_data_and_centred():
    # One unit at w = 0, v = 1 on x ∈ {1, 2}: outputs v·w²·(1, 4), one generator (1 + v)w² up to
    # the span: λ = 1/4, m = 1; centring keeps the span (the outputs minus their mean
    # v·w²·(−3/2, 3/2)).
    _exact(llc([[0]], [[1]], [[1], [2]]), (1, 4), 1)
    _exact(llc([[0]], [[1]], [[1], [2]], True), (1, 4), 1)


def test_search_out_of_time_says_so():
    # A 12-parameter point whose ideal the exact layer does not resolve in a few seconds: with a
    # tiny limit the rank bounds come back, and a condition says the search ran out of time.
    W, V = [[-1, 0, -1], [1, 0, 1]], [[1, 0, 1], [1, 1, 0]]
    res = llc(W, V, search_seconds=0.01)
    assert not res.exact and (res.lower, res.upper) == (2, 4)
    undecided = [c for c in res.conditions if c.status is None]
    assert any("search_seconds = 0.01" in c.statement for c in undecided), str(res)


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf")])
def test_bad_search_seconds(bad):
    with pytest.raises(RLCTError, match="search_seconds"):
        llc([[0]], [[1]], search_seconds=bad)


@pytest.mark.parametrize("bad", ["10", True, None])
def test_search_seconds_of_the_wrong_type(bad):
    with pytest.raises(InvalidTypeError, match="search_seconds"):
        llc([[0]], [[1]], search_seconds=bad)


@st.composite
def small_points(draw):
    """Integer points of at most 8 parameters with entries in {−1, 0, 1} (rank drops common),
    sometimes with biases or data."""
    d, p, K = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    bias = draw(st.booleans()) and num_parameters(d, p, K, True) <= 8
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    W = rng.integers(-1, 1, size=(d, K), endpoint=True)
    V = rng.integers(-1, 1, size=(p, K), endpoint=True)
    b = rng.integers(-1, 1, size=K, endpoint=True) if bias else None
    X = rng.integers(-2, 2, size=(int(rng.integers(1, 4)), d), endpoint=True)
    X = X if draw(st.booleans()) else None
    return W, V, X, b


@settings(max_examples=40, deadline=None)
@given(small_points(), st.randoms(use_true_random=False))
def test_ideal_value_lies_in_the_rank_bounds_and_ignores_unit_order(pt, rnd):
    W, V, X, b = pt
    res = llc(W, V, X, b=b)
    ranks = llc(W, V, X, b=b, search_seconds=0)
    lo, hi = (res.lam, res.lam) if res.exact else (res.lower, res.upper)
    assert ranks.lower <= lo <= hi <= ranks.upper, (str(res), str(ranks))
    # Permuting the hidden units and rescaling a unit (w, b) → 2(w, b), v → v/4 keep the map,
    # hence λ and m.
    perm = list(range(W.shape[1]))
    rnd.shuffle(perm)
    W2, V2 = W[:, perm] * 1, V[:, perm].astype(object)
    b2 = None if b is None else b[perm] * 1
    W2 = W2.astype(object)
    W2[:, 0] = W2[:, 0] * 2
    V2[:, 0] = V2[:, 0] * sp.Rational(1, 4)
    if b2 is not None:
        b2 = b2.astype(object)
        b2[0] = b2[0] * 2
    moved = llc(W2, V2, X, b=b2)
    # the search may find one form within its time and not the other; what each proves agrees
    if res.exact and moved.exact:
        assert (moved.lam, moved.mult) == (res.lam, res.mult)
    else:
        assert max(res.lower, moved.lower) <= min(res.upper, moved.upper)


def test_huge_entries_are_rescaled_before_the_search():
    # (W, b) and V are each divided by the gcd of their entries (θ ↦ (αW, βV) is a linear change
    # that scales every output by α²β): this point is W = [[1, 0], [0, 0]], V = [[1, 1]] in
    # disguise. There Q11 ≈ s + 2a1 + …, Q12 ≈ a2 + … are coordinates and Q22 = (1 + t)c2² + …
    # leaves c2⁴ (c the dead unit's input weight along e2): λ = 1/2 + 1/2 + 1/4 = 5/4, m = 1.
    # Before, printing a 1,200-digit coefficient raised a bare ValueError.
    big = 10**600
    _exact(llc([[big, 0], [0, 0]], [[big, big]]), (5, 4), 1)


def test_search_seconds_beyond_the_floats():
    with pytest.raises(RLCTError, match="search_seconds"):
        llc([[0]], [[1]], search_seconds=10**400)
