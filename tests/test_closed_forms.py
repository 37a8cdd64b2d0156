"""Tests of rlct.closed_forms.literature: reduced rank regression and deep linear networks.

Hand values are derived in the comments from first principles (normal crossing after polar
coordinates, submersions), never copied from the code's output. The brute-force reference below
re-implements Aoyagi's set S from the definition in REFERENCE §4 (search over all subsets).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from rlct.closed_forms.literature import (
    deep_linear_network,
    dln_active_set,
    reduced_rank_regression,
    regular_value,
)
from rlct.errors import InvalidShapeError
from rlct.result import RLCT

R = sp.Rational


# --------------------------------------------------------------------------- references


def brute_force_sets(widths: list[int], r: int) -> list[tuple[int, ...]]:
    """Every S (|S| = ℓ+1 ≥ 2) meeting the three conditions of REFERENCE §4, by enumeration."""
    ms = [h - r for h in widths]
    found = []
    for size in range(2, len(ms) + 1):
        ell = size - 1
        for S in itertools.combinations(range(len(ms)), size):
            sub = [ms[s] for s in S]
            rest = [ms[s] for s in range(len(ms)) if s not in S]
            inf = float("inf")
            lo = min(rest) if rest else inf
            if max(sub) < lo and sum(sub) >= ell * max(sub) and sum(sub) < ell * lo:
                found.append(S)
    return found


def aoyagi_general(widths: list[int], r: int, S: tuple[int, ...]) -> tuple[sp.Rational, int]:
    """The general formula of REFERENCE §4 for a given S (no special case for M_s = 0)."""
    ms = [h - r for h in widths]
    ell = len(S) - 1
    tot = sum(ms[s] for s in S)
    mbar = sp.ceiling(R(tot, ell))
    a = tot - (mbar - 1) * ell
    lam = (
        R(-(r**2) + r * (widths[0] + widths[-1]), 2)
        + R(a * (ell - a), 4 * ell)
        - R(ell * (ell - 1), 4) * R(tot, ell) ** 2
        + R(1, 2) * sum(ms[i] * ms[j] for i, j in itertools.combinations(S, 2))
    )
    return lam, int(a * (ell - a) + 1)


def n_params(widths: list[int]) -> int:
    return sum(a * b for a, b in itertools.pairwise(widths))


@st.composite
def rrr_shapes(draw: st.DrawFn, max_size: int = 12) -> tuple[int, int, int, int]:
    M, N, H = (draw(st.integers(1, max_size)) for _ in range(3))
    return M, N, H, draw(st.integers(0, min(M, N, H)))


@st.composite
def dln_shapes(draw: st.DrawFn, max_len: int = 7, max_width: int = 10) -> tuple[list[int], int]:
    widths = draw(st.lists(st.integers(1, max_width), min_size=2, max_size=max_len))
    return widths, draw(st.integers(0, min(widths)))


# --------------------------------------------------------------------------- RRR hand values


@pytest.mark.parametrize(
    ("M", "N", "H", "r", "lam", "mult"),
    [
        # M=N=H=1, r=0: K = (ab)², normal crossing with k = (1,1): λ = 1/2, m = 2.
        (1, 1, 1, 0, R(1, 2), 2),
        # M=N=1, r=0: K = (Σ_h a_h b_h)² = q², q a non-degenerate quadratic form in 2H ≥ 4
        # variables; a smooth point of {q = 0} gives λ ≤ 1/2, and blowing up the origin gives
        # the exceptional ratio 2H/4 > 1/2, so λ = 1/2, m = 1.
        (1, 1, 2, 0, R(1, 2), 1),
        (1, 1, 3, 0, R(1, 2), 1),
        (1, 1, 7, 0, R(1, 2), 1),
        # H=1, r=0: K = |b|²|a|² (a ∈ R^M, b ∈ R^N); polar coordinates a = ρ_a u, b = ρ_b v give
        # K = ρ_a² ρ_b² with prior ρ_a^(M−1) ρ_b^(N−1): λ = min(M, N)/2, m = 2 iff M = N.
        (3, 3, 1, 0, R(3, 2), 2),
        (2, 5, 1, 0, R(1), 1),
        (6, 4, 1, 0, R(2), 1),
        # M=1, r=0: K = |B a|²; with a = ρu the N entries of B u are independent linear coordinates,
        # so K = ρ² |y|² with prior ρ^(H−1): λ = min(H, N)/2, m = 2 iff H = N.
        (1, 4, 4, 0, R(2), 2),
        (1, 5, 3, 0, R(3, 2), 1),
        (1, 3, 5, 0, R(3, 2), 1),
        # full rank r = min(M, N, H): submersion onto the rank-r matrices, dim r(M+N−r).
        (4, 6, 3, 3, R(3 * 7, 2), 1),
        (2, 5, 4, 2, R(10, 2), 1),
        # M=N=H=2, r=1: splitting off the regular rank-1 part (r(M+N−r) = 3 coordinates)
        # leaves K = (ab)² from the 1×1×1 problem: λ = 3/2 + 1/2 = 2, m = 2.
        (2, 2, 2, 1, R(2), 2),
    ],
)
def test_rrr_hand_values(M: int, N: int, H: int, r: int, lam: sp.Rational, mult: int) -> None:
    res = reduced_rank_regression(M, N, H, r)
    assert res.exact
    assert (res.lam, res.mult) == (lam, mult)
    assert isinstance(res.lam, sp.Rational)
    assert type(res.mult) is int


@pytest.mark.parametrize(
    ("args", "case"),
    [
        ((2, 2, 2, 0), "case 1 (M+N+H+r even)"),
        ((3, 4, 2, 0), "case 1 (M+N+H+r odd)"),
        ((2, 7, 3, 1), "case 2 (M+H < N+r)"),
        ((7, 2, 3, 1), "case 3 (N+H < M+r)"),
        ((2, 3, 6, 1), "case 4 (M+N < H+r)"),
    ],
)
def test_rrr_each_case(args: tuple[int, int, int, int], case: str) -> None:
    res = reduced_rank_regression(*args)
    assert res.method.endswith(case)
    assert res.conditions
    assert all(c.status is True for c in res.conditions)
    assert res.mult == (2 if "odd" in case else 1)


def test_rrr_exactly_one_case_on_grid() -> None:
    """On all M, N, H ≤ 7 the four case conditions partition the valid shapes."""
    for M, N, H in itertools.product(range(1, 8), repeat=3):
        for r in range(min(M, N, H) + 1):
            c1 = N + r <= M + H and M + r <= N + H and H + r <= M + N
            hits = [c1, M + H < N + r, N + H < M + r, M + N < H + r]
            assert sum(hits) == 1, (M, N, H, r)
            res = reduced_rank_regression(M, N, H, r)
            assert f"case {hits.index(True) + 1} " in res.method


def test_rrr_full_rank_is_regular_on_grid() -> None:
    # r = min(M, N, H): (A, B) ↦ BA is a submersion onto the rank-r matrices (dim r(M+N−r)).
    for M, N, H in itertools.product(range(1, 8), repeat=3):
        r = min(M, N, H)
        res = reduced_rank_regression(M, N, H, r)
        assert (res.lam, res.mult) == (R(r * (M + N - r), 2), 1), (M, N, H)


# --------------------------------------------------------------------------- RRR properties


@given(rrr_shapes())
def test_rrr_symmetric_in_M_N(shape: tuple[int, int, int, int]) -> None:
    # K is invariant under transposing (A, B) ↦ (Bᵀ, Aᵀ), which swaps M and N.
    M, N, H, r = shape
    a, b = reduced_rank_regression(M, N, H, r), reduced_rank_regression(N, M, H, r)
    assert (a.lam, a.mult) == (b.lam, b.mult)


@given(rrr_shapes())
def test_rrr_at_most_half_the_parameters(shape: tuple[int, int, int, int]) -> None:
    M, N, H, r = shape
    res = reduced_rank_regression(M, N, H, r)
    assert 0 < res.lam <= R(H * (M + N), 2)
    assert res.mult in (1, 2)


@given(rrr_shapes())
def test_rrr_splits_off_the_true_rank(shape: tuple[int, int, int, int]) -> None:
    # At the true point A = B = diag(I_r, 0) the regular rank-r part (r(M+N−r) coordinates)
    # splits off and leaves the r = 0 problem of size (M−r, N−r, H−r): that proves "≤";
    # Aoyagi–Watanabe's lemma (every true point splits this way) gives "=".
    M, N, H, r = shape
    if r == min(M, N, H):
        return
    full, reduced = (
        reduced_rank_regression(M, N, H, r),
        reduced_rank_regression(M - r, N - r, H - r, 0),
    )
    assert full.lam == R(r * (M + N - r), 2) + reduced.lam
    assert full.mult == reduced.mult


# --------------------------------------------------------------------------- DLN


def test_dln_equals_rrr_on_grid() -> None:
    """Two layers (widths [M, H, N], input first) = reduced rank regression, all M, N, H ≤ 7."""
    for M, N, H in itertools.product(range(1, 8), repeat=3):
        for r in range(min(M, N, H) + 1):
            a, b = deep_linear_network([M, H, N], r), reduced_rank_regression(M, N, H, r)
            assert (a.lam, a.mult) == (b.lam, b.mult), (M, N, H, r)


@given(rrr_shapes(max_size=40))
def test_dln_equals_rrr_hypothesis(shape: tuple[int, int, int, int]) -> None:
    M, N, H, r = shape
    a, b = deep_linear_network([M, H, N], r), reduced_rank_regression(M, N, H, r)
    assert (a.lam, a.mult) == (b.lam, b.mult)


@pytest.mark.parametrize("L", [2, 3, 4, 6])
def test_dln_all_widths_one(L: int) -> None:
    # widths all 1: K = (w_1 ⋯ w_L)², normal crossing with k = (1, …, 1): λ = 1/2, m = L.
    res = deep_linear_network([1] * (L + 1), 0)
    assert (res.lam, res.mult) == (R(1, 2), L)


@pytest.mark.parametrize(
    ("widths", "lam", "mult"),
    [
        # Hourglass (M, 1, …, 1, N), r = 0: W_1 = aᵀ, W_L = c, the L−2 interior weights are
        # scalars b_i, so K = |c|² Π b_i² |a|². Polar coordinates: K = ρ_c² Π b_i² ρ_a², prior
        # ρ_a^(M−1) ρ_c^(N−1): λ = min(1/2 [if L ≥ 3], M/2, N/2), m = number attaining it.
        ([3, 1, 1, 4], R(1, 2), 1),
        ([1, 1, 1, 4], R(1, 2), 2),
        ([1, 1, 1, 1, 1], R(1, 2), 4),
        ([2, 1, 1, 1, 3], R(1, 2), 2),
        ([1, 1, 1, 1, 2], R(1, 2), 3),
        ([3, 1, 3], R(3, 2), 2),
        # L = 1: y = W x is regular, λ = MN/2.
        ([3, 5], R(15, 2), 1),
        ([4, 4], R(8), 1),
    ],
)
def test_dln_hand_values(widths: list[int], lam: sp.Rational, mult: int) -> None:
    res = deep_linear_network(widths, 0)
    assert (res.lam, res.mult) == (lam, mult)


@pytest.mark.parametrize(
    "widths", [[5, 2, 7], [4, 3, 2, 6], [2, 2, 2, 2], [6, 5, 2, 4, 3], [2, 9], [3, 2, 2, 8]]
)
def test_dln_a_layer_of_width_r(widths: list[int]) -> None:
    # r = min(widths), so some M_s = 0: every true parameter factors through a full-rank
    # r-dimensional layer, the map to the product is a submersion onto the rank-r matrices,
    # and λ = r(M+N−r)/2 with m = 1.
    r = min(widths)
    M, N = widths[0], widths[-1]
    res = deep_linear_network(widths, r)
    assert (res.lam, res.mult) == (R(r * (M + N - r), 2), 1)
    assert "M_s = 0" in res.method


@pytest.mark.parametrize(
    ("widths", "r", "ell"),
    [
        ([5, 3, 9], 1, 1),  # M_s = (4, 2, 8): 4 + 2 < 8, S = {0, 1}
        ([3, 4, 5], 0, 2),  # (3, 4, 5): triangle, S = all
        ([1, 5, 5, 1], 0, 1),  # (1, 5, 5, 1): S = the two 1s
        ([2, 2, 3, 9], 0, 2),  # (2, 2, 3, 9): 7 ≥ 2·3 and 7 < 2·9
        ([3, 3, 3, 3], 1, 3),  # all equal: S = all, ℓ = 3
        ([5, 6, 5, 12, 5], 2, 3),  # (3, 4, 3, 10, 3): 13 ≥ 3·4 and 13 < 3·10
        ([2, 2, 2, 2, 2], 0, 4),  # a = 2, m = a(ℓ−a)+1 = 5
    ],
)
def test_dln_cases_l2_l3_l4(widths: list[int], r: int, ell: int) -> None:
    S = dln_active_set(widths, r)
    assert len(S) == ell + 1
    assert brute_force_sets(widths, r) == [S]
    res = deep_linear_network(widths, r)
    assert f"ℓ = {ell}, S = {list(S)}" in res.method
    assert (res.lam, res.mult) == aoyagi_general(widths, r, S)
    assert all(c.status is True for c in res.conditions)


def test_dln_constructive_rule_matches_brute_force_exhaustively() -> None:
    """All widths in 1..5 with 3, 4 or 5 entries and every valid r: the set S is unique and
    the constructive rule finds it; the M_s = 0 branch agrees with the general formula."""
    for n in (3, 4, 5):
        for widths in itertools.product(range(1, 6), repeat=n):
            for r in range(min(widths) + 1):
                sets = brute_force_sets(list(widths), r)
                assert sets == [dln_active_set(widths, r)], (widths, r)
                res = deep_linear_network(widths, r)
                assert (res.lam, res.mult) == aoyagi_general(list(widths), r, sets[0])


@given(dln_shapes(max_len=8, max_width=30))
def test_dln_constructive_rule_hypothesis(shape: tuple[list[int], int]) -> None:
    widths, r = shape
    sets = brute_force_sets(widths, r)
    assert sets == [dln_active_set(widths, r)]
    res = deep_linear_network(widths, r)
    assert (res.lam, res.mult) == aoyagi_general(widths, r, sets[0])


@given(dln_shapes())
def test_dln_invariant_under_reversal(shape: tuple[list[int], int]) -> None:
    # Transposing every W_i maps the network with widths h to the one with reversed widths and
    # keeps ‖W_L ⋯ W_1 − T‖ (T ↦ Tᵀ has the same rank): a linear isomorphism preserving K.
    widths, r = shape
    a, b = deep_linear_network(widths, r), deep_linear_network(widths[::-1], r)
    assert (a.lam, a.mult) == (b.lam, b.mult)


@given(dln_shapes())
def test_dln_bounds(shape: tuple[list[int], int]) -> None:
    # λ ≤ d/2 holds for every model. λ ≥ r(M+N−r)/2: the formula's excess over it is
    # a(ℓ−a)/(4ℓ) + (Σ²/ℓ − Σ_S M_s²)/4 ≥ 0, because Σ_S M_s² ≤ max_S M·Σ ≤ Σ²/ℓ when Σ ≥ ℓ·max_S M.
    widths, r = shape
    res = deep_linear_network(widths, r)
    assert res.exact
    assert 0 < res.lam <= R(n_params(widths), 2)
    assert res.lam >= R(r * (widths[0] + widths[-1] - r), 2)
    assert res.mult >= 1
    assert isinstance(res.lam, sp.Rational)


def test_numpy_and_sympy_integers_accepted() -> None:
    a = reduced_rank_regression(np.int64(3), np.int32(4), np.uint8(2), np.int16(1))
    assert a == reduced_rank_regression(3, 4, 2, 1)
    b = deep_linear_network(np.array([3, 2, 4]), sp.Integer(1))
    assert b == deep_linear_network([3, 2, 4], 1)


def test_regular_value() -> None:
    res = regular_value(7)
    assert isinstance(res, RLCT)
    assert (res.lam, res.mult) == (R(7, 2), 1)
    with pytest.raises(InvalidShapeError, match="num_params"):
        regular_value(0)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0, 2, 2, 0), r"M must be a positive integer, got 0"),
        ((2, -1, 2, 0), r"N must be a positive integer, got -1"),
        ((2, 2, 2.0, 0), r"H must be an integer, got 2\.0"),
        ((True, 2, 2, 0), r"M must be an integer, got True"),
        ((2, 3, 4, 3), r"true rank r = 3 exceeds .* 2 \(M = 2, N = 3, H = 4\)"),
        ((2, 3, 4, -1), r"r \(true rank\) must be a non-negative integer, got -1"),
        ((2, 3, 4, "1"), r"r \(true rank\) must be an integer"),
    ],
)
def test_rrr_bad_input(args: tuple[object, ...], match: str) -> None:
    with pytest.raises(InvalidShapeError, match=match):
        reduced_rank_regression(*args)


@pytest.mark.parametrize(
    ("widths", "r", "match"),
    [
        ([3], 0, r"at least an input and an output width, got 1"),
        ([], 0, r"got 0"),
        ([3, -2, 4], 0, r"widths\[1\] must be a positive integer, got -2"),
        ([3, 0, 4], 0, r"widths\[1\] must be a positive integer, got 0"),
        ([3, 2.5, 4], 0, r"widths\[1\] must be an integer, got 2\.5"),
        ([3, 2, False], 0, r"widths\[2\] must be an integer, got False"),
        ([3, 2, 4], 3, r"true rank r = 3 exceeds .* 2 \(widths = \[3, 2, 4\]\)"),
        ([3, 2, 4], 1.0, r"r \(true rank\) must be an integer"),
        (5, 0, r"widths must be a sequence"),
    ],
)
def test_dln_bad_input(widths: object, r: object, match: str) -> None:
    with pytest.raises(InvalidShapeError, match=match):
        deep_linear_network(widths, r)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=match):  # InvalidShapeError is a ValueError
        dln_active_set(widths, r)  # type: ignore[arg-type]
