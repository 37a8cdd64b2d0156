"""Exact Jacobian ranks and λ of quadratic networks (rlct.quadratic).

Conventions: f(x) = V σ(Wᵀx), σ = t², Q_k = Σ_j v_kj w_j w_jᵀ in upper-triangular coordinates
(a ≤ b), so for d = 2 a symmetric matrix is the vector (Q11, Q12, Q22). Every asserted value is
derived by hand in the comment next to it.
"""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given
from hypothesis import strategies as st

from rlct import normal_crossing
from rlct.algebra.ranks import (
    exact_rank,
    random_prime,
    rank_mod_prime,
    rational_rank,
    sample_generic_rank,
)
from rlct.errors import InvalidShapeError, NonFiniteError
from rlct.quadratic import (
    generic_rank,
    generic_rank_certificate,
    jacobian,
    jacobian_rank,
    llc,
    modular_addition_data,
    num_parameters,
)

R = sp.Rational

# --------------------------------------------------------------------------------------------
# Backends
# --------------------------------------------------------------------------------------------


def test_exact_rank_backends():
    # [[1, 2], [2, 4]] has rank 1 over Q; [[q, 0], [0, 1]] has rank 2 over Q but rank 1 mod q.
    assert exact_rank([[1, 2], [2, 4]]) == 1
    q = (1 << 61) - 1
    assert rank_mod_prime([[q, 0], [0, 1]]) == 1
    assert exact_rank([[q, 0], [0, 1]]) == 2  # the modular shortcut does not decide this one
    assert rational_rank([[Fraction(1, 3), Fraction(2, 3)], [1, 2]]) == 1
    assert exact_rank([]) == 0
    # wide and tall orientations agree
    A = [[1, 0, 1, 2], [0, 1, 1, 3]]
    assert exact_rank(A) == exact_rank(np.array(A).T) == 2


def test_sample_generic_rank():
    # J(θ) = [[θ1, θ2], [2θ1, 2θ2]] has generic rank 1 (row 2 = 2·row 1) below the bound 2: only a
    # probabilistic certificate. Content: entries have ‖·‖₁ ≤ 2, so L = 2 bits per row suffices.
    def dependent(rng, q):
        t1, t2 = (int(x) for x in rng.integers(0, q, size=2))
        return [[t1, t2], [2 * t1, 2 * t2]]

    cert = sample_generic_rank(dependent, 2, 1, lambda: 4, seed=3)
    assert (cert.rank, cert.certified) == (1, False)
    assert 0 < cert.failure_probability <= Fraction(1, 10**30)

    # diag(θ1, θ2) has generic rank 2 = the bound: certified at the first point (unless θ_i ≡ 0).
    def diagonal(rng, q):
        t1, t2 = (int(x) for x in rng.integers(0, q, size=2))
        return [[t1, 0], [0, t2]]

    cert = sample_generic_rank(diagonal, 2, 1, lambda: 4)
    assert (cert.rank, cert.certified, cert.failure_probability) == (2, True, 0)
    rng = np.random.default_rng(0)
    q = random_prime(rng)
    assert 2**60 <= q < 2**61 and sp.isprime(q)


# --------------------------------------------------------------------------------------------
# Jacobian entries and ranks at hand-checked points
# --------------------------------------------------------------------------------------------


def test_jacobian_entries_single_unit():
    # d = p = K = 1: Φ = v w², J = (∂/∂w, ∂/∂v) = (2vw, w²) = (30, 9) at w = 3, v = 5.
    assert jacobian([[3]], [[5]]).tolist() == [[30, 9]]
    # With data X = (1, 2)ᵀ: f(x_i) = v w² x_i², rows x_i²·(30, 9).
    assert jacobian([[3]], [[5]], [[1], [2]]).tolist() == [[30, 9], [120, 36]]
    # Centred: subtract the mean row (75, 45/2).
    Jc = jacobian([[3]], [[5]], [[1], [2]], centered=True)
    assert Jc.tolist() == [[-45, Fraction(-27, 2)], [45, Fraction(27, 2)]]


def test_single_unit_ranks():
    # J = (2vw, w²): rank 1 unless w = 0.
    assert jacobian_rank([[3]], [[5]]) == 1
    assert jacobian_rank([[0]], [[5]]) == 0  # w = 0: both entries vanish
    assert jacobian_rank([[3]], [[0]]) == 1  # inactive unit: w² ≠ 0 remains
    assert jacobian_rank([[0]], [[0]]) == 0


def test_issue_example_rank_five():
    # p = 1, K = 2, d = 3: Q = v1 w1w1ᵀ + v2 w2w2ᵀ has rank ≤ 2, so Φ maps into the hypersurface
    # det Q = 0 of Sym(3) (dimension 5): rank ≤ 5. At w1 = e1, w2 = e1 + e2, v = (1, 1) the
    # columns ∂/∂v1 = E11, ∂/∂v2 = w2w2ᵀ, ∂/∂w1[2] = E12+E21, ∂/∂w1[3] = E13+E31 and
    # ∂/∂w2[3] = e3w2ᵀ + w2e3ᵀ are independent (coordinates 11,12,13,22,23,33:
    # (1,0,0,0,0,0), (1,1,0,1,0,0), (0,1,0,0,0,0), (0,0,1,0,0,0), (0,0,1,0,1,0)): rank = 5.
    W = [[1, 1], [0, 1], [0, 0]]
    assert jacobian_rank(W, [[1, 1]]) == 5
    assert generic_rank(3, 1, 2) == 5


def test_inactive_unit():
    # d = 2, p = 1, K = 2, w1 = e1, w2 = e2, v = (1, 0). ∂/∂w1[c] = 2E11 or E12+E21 → (2,0,0),
    # (0,1,0); ∂/∂w2 = 0 (v2 = 0); ∂/∂v1 = E11 = (1,0,0); ∂/∂v2 = E22 = (0,0,1). Rank 3 = all
    # of Sym(2), which is also the generic rank (so λ = 3/2 exactly).
    W, V = [[1, 0], [0, 1]], [[1, 0]]
    assert jacobian_rank(W, V) == 3
    assert generic_rank(2, 1, 2) == 3
    r = llc(W, V)
    assert r.exact and r.lam == R(3, 2) and r.mult == 1


def test_parallel_features():
    # w1 = (1,1), w2 = (2,2) = 2 w1, v = (1, 1). ∂/∂v1 = (1,1,1), ∂/∂v2 = (4,4,4);
    # ∂/∂w1[1] = [[2,1],[1,0]] = (2,1,0), ∂/∂w1[2] = (0,1,2); ∂/∂w2 = 2× those. Since
    # (2,1,0) + (0,1,2) = 2·(1,1,1), the span is 2-dimensional: rank 2 < generic 3.
    W, V = [[1, 2], [1, 2]], [[1, 1]]
    assert jacobian_rank(W, V) == 2
    r = llc(W, V, search_seconds=0)
    # λ ≥ rank/2 = 1; λ ≤ (N − k)/2 with N = 6 and k = 2 (one scaling per active unit).
    assert not r.exact
    assert (r.lower, r.upper) == (1, 2)
    assert any(c.status is False and "drops" in c.statement for c in r.conditions)
    # The map's ideal decides it. In the basis e = (1,1)/√2, f = (1,−1)/√2 with f-components
    # a_f, b_f of the two units' perturbations: Q_ee and Q_ef ≈ √2(a_f + 2b_f) are coordinates,
    # and on them a_f ≈ −2b_f makes Q_ff = (1 + s)a_f² + (1 + t)b_f² ≍ b_f². K ≍ y1² + y2² + b_f⁴:
    # λ = 1/2 + 1/2 + 1/4 = 5/4, m = 1, inside the bounds.
    e = llc(W, V)
    assert e.exact and (e.lam, e.mult) == (R(5, 4), 1)


def test_zero_input_weight():
    # w2 = 0: all of unit 2's columns vanish. Unit 1 alone (w1 = e1, v1 = 1): ∂/∂w1 gives
    # (2,0,0), (0,1,0) and ∂/∂v1 = (1,0,0): rank 2.
    assert jacobian_rank([[1, 0], [0, 0]], [[1, 1]]) == 2


def test_theorem_4_1_point_rank():
    # d = 2, K = 3 = d(d+1)/2, w = e1, e2, e1+e2: w w ᵀ = (1,0,0), (0,0,1), (1,1,1) span Sym(2),
    # so the V-columns alone (block-diagonal, one block per output) have rank p·3 = 6 = rows.
    W = [[1, 0, 1], [0, 1, 1]]
    assert jacobian_rank(W, [[1, 2, 3], [4, 5, 6]]) == 6


def test_generic_rank_overparametrised():
    # K ≥ d(d+1)/2: generic points have w_j w_jᵀ spanning Sym(d), so rank = p·d(d+1)/2.
    assert generic_rank(2, 3, 3) == 9
    assert generic_rank(3, 2, 7) == 12


@pytest.mark.parametrize("d", [1, 2, 3, 4])
@pytest.mark.parametrize("K", [1, 2, 3, 4, 5])
def test_generic_rank_single_output(d, K):
    # p = 1: the image is {symmetric matrices of rank ≤ K}, of dimension Kd − K(K−1)/2 for
    # K ≤ d (choose a K-dim column space, d·K − K², and a symmetric K×K form, K(K+1)/2), and all
    # of Sym(d) for K ≥ d.
    expected = K * d - K * (K - 1) // 2 if K <= d else d * (d + 1) // 2
    assert generic_rank(d, 1, K) == expected


@pytest.mark.parametrize(("d", "K"), [(1, 1), (2, 2), (2, 3), (3, 1), (3, 2), (4, 3)])
def test_generic_rank_biased_single_output(d, K):
    # f = Σ v_j (w_jᵀx + b_j)² + c. K ≥ d: (Q, r, s) is onto Sym(d) × R^d × R (the proof of
    # Thm G.1 is correct), rank d(d+1)/2 + d + 1. K < d: the (d+2)K + 1 parameters carry K
    # scalings and the K(K−1)/2-dimensional group W → WA, b → Aᵀb with A diag(v) Aᵀ = diag(v),
    # leaving K(2d−K+1)/2 + K + 1 = D(K) of Thm G.2.
    m = d * (d + 1) // 2
    expected = m + d + 1 if K >= d else K * (2 * d - K + 1) // 2 + K + 1
    assert generic_rank(d, 1, K, bias=True) == expected


def test_generic_rank_performance_and_certificate():
    # d = 8, p = 5, K = 40: rows 5·36 = 180 ≤ N − K = 480, so a rank of 180 is certified.
    t0 = time.perf_counter()
    cert = generic_rank_certificate(8, 5, 40)
    elapsed = time.perf_counter() - t0
    assert (cert.rank, cert.upper_bound, cert.certified) == (180, 180, True)
    assert cert.failure_probability == 0
    assert elapsed < 5.0  # typically ≈ 0.1 s; the bound only guards against regressions
    # A rank-deficient class (p = 1, d = 3, K = 2: 5 < min(6, N − K = 6)) is only certified
    # probabilistically, with δ ≤ 10^−30.
    cert = generic_rank_certificate(3, 1, 2)
    assert (cert.rank, cert.certified) == (5, False)
    assert 0 < cert.failure_probability <= Fraction(1, 10**30)
    assert "Schwartz–Zippel" in cert.describe()


def test_num_parameters():
    assert num_parameters(3, 2, 4) == 20
    assert num_parameters(3, 2, 4, bias=True) == 20 + 4 + 2


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def test_modular_addition_data():
    X, Y = modular_addition_data(3)
    assert X.shape == (9, 6) and Y.shape == (9, 3)
    # row a·p + b: a = 1, b = 2 is row 5, input e_1 ⊕ e_2, target e_{(1+2) mod 3} = e_0
    assert X[5].tolist() == [0, 1, 0, 0, 0, 1]
    assert Y[5].tolist() == [1, 0, 0]
    assert (X.sum(axis=1) == 2).all() and (Y.sum(axis=1) == 1).all()
    # rank 2p − 1: both halves sum to the all-ones column, and nothing else is lost
    for p in (2, 3, 5):
        assert rational_rank(modular_addition_data(p)[0]) == 2 * p - 1
    for bad in (1, 0, -3, 2.5, True, "3"):
        with pytest.raises(InvalidShapeError):
            modular_addition_data(bad)


def test_data_ranks_one_dimensional():
    # d = p = K = 1, X = (1, 2)ᵀ: rows x_i²(2vw, w²) are proportional: rank 1. Centred: the rows
    # become ±(3/2)(2vw, w²): still rank 1. With X = (1, −1)ᵀ both x_i² = 1 and centring kills
    # everything: rank 0.
    assert jacobian_rank([[3]], [[5]], [[1], [2]]) == 1
    assert jacobian_rank([[3]], [[5]], [[1], [2]], centered=True) == 1
    assert jacobian_rank([[3]], [[5]], [[1], [-1]]) == 1
    assert jacobian_rank([[3]], [[5]], [[1], [-1]], centered=True) == 0


def test_data_rank_identity_inputs():
    # d = 2, X = I (two samples e1, e2), W = I, v = (1, 1): f(x_i) = Σ_j v_j (w_jᵀx_i)² and
    # ∂f(x_i)/∂v_j = (w_jᵀ x_i)² = δ_ij: rank 2 = p·n, the maximum.
    assert jacobian_rank([[1, 0], [0, 1]], [[1, 1]], [[1, 0], [0, 1]]) == 2


# Columns chosen so that F = σ(XW) is invertible on the p = 2 modular-addition inputs: with
# x_(a,b) = e_a + e_{2+b}, wᵀx = w_a + w_{2+b}; w1 = e1, w2 = e3, w3 = e1 − e3, w4 = e2 give rows
# (1,1,0,0), (1,0,1,0), (0,1,1,1), (0,0,0,1) for (a,b) = 00, 01, 10, 11: det = −2 ≠ 0.
W_MOD2 = [[1, 0, 1, 0], [0, 0, 0, 1], [0, 1, -1, 0], [0, 0, 0, 0]]


def test_modular_addition_ranks():
    X, _ = modular_addition_data(2)
    V = [[1, 2, 3, 4], [5, 6, 7, 9]]
    # ∂f_k(x_i)/∂v_kj = F_ij: the V-columns alone are I_2 ⊗ F, of rank 2·4 = 8 = p·n (the maximum).
    assert jacobian_rank(W_MOD2, V, X) == 8
    # Centred: P⊥F has rank n − 1 = 3, so the V-columns give 2·3 = 6 = p(n − 1), the maximum.
    assert jacobian_rank(W_MOD2, V, X, centered=True) == 6
    r = llc(W_MOD2, V, X, centered=True)
    assert r.exact and r.lam == 3


# --------------------------------------------------------------------------------------------
# llc
# --------------------------------------------------------------------------------------------


def test_llc_generic_point():
    # The rank 5 of test_issue_example_rank_five equals the generic rank: λ = 5/2, m = 1.
    r = llc([[1, 1], [0, 1], [0, 0]], [[1, 1]])
    assert r.exact and (r.lam, r.mult) == (R(5, 2), 1)
    # Strict mode: the generic rank 5 is below the structural bound 6, so it is only certified
    # with probability; refusing that leaves bounds rank/2 = 5/2 ≤ λ ≤ (N − k)/2 = (8 − 2)/2.
    s = llc([[1, 1], [0, 1], [0, 0]], [[1, 1]], allow_probabilistic=False, search_seconds=0)
    assert not s.exact and (s.lower, s.upper) == (R(5, 2), 3)
    assert any(c.status is None for c in s.conditions)
    # The map's ideal (8 parameters) then decides λ = 5/2 without the probabilistic certificate.
    t = llc([[1, 1], [0, 1], [0, 0]], [[1, 1]], allow_probabilistic=False)
    assert t.exact and (t.lam, t.mult) == (R(5, 2), 1)


def test_llc_sandwich_inactive_unit():
    # d = 2, p = K = 1, w = e1, v = 0: K(θ) = v²‖wwᵀ‖² ≍ v² near θ*, so λ = 1/2. The rank 1
    # (from ∂/∂v = E11) is below the generic rank 2, but λ ≥ 1/2 and λ ≤ (N − k)/2 = (3 − 2)/2
    # (w is free when v = 0) meet.
    r = llc([[1], [0]], [[0]])
    assert r.exact and (r.lam, r.mult) == (R(1, 2), 1)


def test_llc_rank_drop_gives_bounds():
    # θ* = (w, v) = (0, 1), d = p = K = 1: K = v²w⁴ ≍ w⁴, λ = 1/4. J = (2vw, w²) = 0 there, so
    # only 0 ≤ λ ≤ (N − k)/2 = (2 − 1)/2 is proven by the ranks (v is free when w = 0); with the
    # ideal's search off (search_seconds=0) those bounds are the answer.
    r = llc([[0]], [[1]], search_seconds=0)
    assert not r.exact and (r.lower, r.upper) == (0, R(1, 2))
    truth = normal_crossing([1, 2]).lam  # K = v²w⁴ at the origin; near v = 1 only w⁴ matters
    assert truth == R(1, 4) and r.lower <= truth <= r.upper
    # θ* = 0: K = v²w⁴ exactly, λ = 1/4, again inside the bounds [0, 1/2].
    r0 = llc([[0]], [[0]], search_seconds=0)
    assert not r0.exact and r0.lower <= R(1, 4) <= r0.upper


def test_llc_float_and_rational_inputs():
    # 0.5 and 1/2 are the same exact point; scaling W by 1/2 and V by 3 rescales column blocks.
    a = llc([[1, 1], [0, 1], [0, 0]], [[1, 1]])
    b = llc(np.array([[0.5, 0.5], [0.0, 0.5], [0.0, 0.0]]), [[3.0, 3.0]])
    c = llc([[Fraction(1, 2), R(1, 2)], [0, Fraction(1, 2)], [0, 0]], [[3, 3]])
    assert a.lam == b.lam == c.lam == R(5, 2)


def test_llc_biased():
    # Thm G.1's point: d = K = 2, W = I, v = (1, 1), b = (1, 2): rank = d(d+1)/2 + d + 1 = 6
    # (all of (Q, r, s)), so λ = 3.
    r = llc([[1, 0], [0, 1]], [1, 1], b=[1, 2])
    assert r.exact and r.lam == 3


# --------------------------------------------------------------------------------------------
# Bad inputs
# --------------------------------------------------------------------------------------------


def test_shape_errors_name_the_shapes():
    with pytest.raises(InvalidShapeError, match=r"\(1, 3\).*\(2, 2\)"):
        jacobian_rank([[1, 2], [3, 4]], [[1, 2, 3]])
    with pytest.raises(InvalidShapeError, match="X has shape"):
        jacobian_rank([[1, 2], [3, 4]], [[1, 2]], X=[[1, 2, 3]])
    with pytest.raises(InvalidShapeError, match="b has shape"):
        jacobian_rank([[1, 2], [3, 4]], [[1, 2]], b=[1, 2, 3])
    with pytest.raises(InvalidShapeError):
        jacobian_rank([1, 2], [[1, 2]])  # W must be 2-D
    with pytest.raises(InvalidShapeError):
        jacobian_rank(np.zeros((2, 0)), np.zeros((1, 0)))
    with pytest.raises(InvalidShapeError):
        jacobian_rank([[1, 2], [3]], [[1, 2]])  # ragged
    with pytest.raises(InvalidShapeError, match="centered"):
        jacobian_rank([[1]], [[1]], centered=True)
    for args in [(0, 1, 1), (1, 0, 1), (1, 1, 0), (1.0, 1, 1), (True, 1, 1)]:
        with pytest.raises(InvalidShapeError):
            generic_rank(*args)
    with pytest.raises(InvalidShapeError):
        generic_rank(2, 1, 1, X=[[1, 2, 3]])


def test_non_finite_and_non_numbers():
    with pytest.raises(NonFiniteError, match=r"W\[0, 1\]"):
        jacobian_rank(np.array([[1.0, np.nan]]), [[1, 1]])
    with pytest.raises(NonFiniteError):
        jacobian_rank([[1.0]], [[float("inf")]])
    with pytest.raises(NonFiniteError):
        jacobian_rank([[1]], [[1]], X=[[1.0], [-np.inf]])
    with pytest.raises(NonFiniteError):
        jacobian_rank([[sp.oo]], [[1]])
    with pytest.raises(NonFiniteError):
        llc([[1]], [[1]], b=[float("nan")])
    with pytest.raises(TypeError):
        jacobian_rank([["a"]], [[1]])
    with pytest.raises(TypeError):
        jacobian_rank([[sp.sqrt(2)]], [[1]])
    with pytest.raises(TypeError):
        jacobian_rank([[1 + 2j]], [[1]])


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


@st.composite
def points(draw, max_d=3, max_p=3, max_K=4, data=False, bias=False, entries=3):
    """A small random integer point (entries in [−entries, entries]); zeros and repeats are
    common, so rank drops are exercised. Optionally data X (n × d) and biases b."""
    d = draw(st.integers(1, max_d))
    p = draw(st.integers(1, max_p))
    K = draw(st.integers(1, max_K))
    seed = draw(st.integers(min_value=0, max_value=2**32 - 1))
    rng = np.random.default_rng(seed)
    W = rng.integers(-entries, entries, size=(d, K), endpoint=True)
    V = rng.integers(-entries, entries, size=(p, K), endpoint=True)
    X = (
        rng.integers(-entries, entries, size=(draw(st.integers(1, 5)), d), endpoint=True)
        if data
        else None
    )
    b = rng.integers(-entries, entries, size=K, endpoint=True) if bias else None
    return W, V, X, b


@given(points(data=False), st.booleans())
def test_exact_rank_matches_float_rank_when_well_conditioned(pt, bias):
    W, V, _, _ = pt
    b = np.arange(W.shape[1]) - 1 if bias else None
    r = jacobian_rank(W, V, b=b)
    J = np.array(jacobian(W, V, b=b), dtype=float)
    s = np.linalg.svd(J, compute_uv=False)
    top = s[0] if s.size and s[0] > 0 else 1.0
    # well-conditioned: no singular value in the ambiguous band (1e-9, 1e-5]·σ_max
    assume(not np.any((s > 1e-9 * top) & (s <= 1e-5 * top)))
    assert int(np.sum(s > 1e-7 * top)) == r


@given(points(), st.booleans())
def test_rank_bounds(pt, bias):
    W, V, _, _ = pt
    d, K = W.shape
    p = V.shape[0]
    b = np.ones(K, dtype=int) if bias else None
    r = jacobian_rank(W, V, b=b)
    rows = p * (d * (d + 1) // 2 + ((d + 1) if bias else 0))
    N = num_parameters(d, p, K, bias)
    assert r <= min(rows, N)
    assert r <= N - K  # one scaling symmetry per unit (or a whole zero block)


@given(points(data=True), st.booleans())
def test_data_rank_bounded_by_data_free(pt, centered):
    W, V, X, _ = pt
    n, p = X.shape[0], V.shape[0]
    r_free = jacobian_rank(W, V)
    r_data = jacobian_rank(W, V, X, centered=centered)
    assert r_data <= r_free
    assert r_data <= p * (n - 1 if centered else n)


@given(points(data=True), st.booleans(), st.booleans(), st.randoms(use_true_random=False))
def test_permuting_hidden_units(pt, with_data, bias, rnd):
    W, V, X, _ = pt
    K = W.shape[1]
    b = np.arange(K) - 2 if bias else None
    X = X if with_data else None
    perm = list(range(K))
    rnd.shuffle(perm)
    bp = None if b is None else b[perm]
    assert jacobian_rank(W, V, X, b=b) == jacobian_rank(W[:, perm], V[:, perm], X, b=bp)


@given(
    points(data=True),
    st.fractions(min_value=-5, max_value=5, max_denominator=7).filter(lambda f: f != 0),
    st.fractions(min_value=-5, max_value=5, max_denominator=7).filter(lambda f: f != 0),
    st.booleans(),
)
def test_rescaling_blocks_keeps_rank(pt, alpha, beta, with_data):
    # Column blocks are homogeneous in W and in V, so W → αW, V → βV rescales whole blocks.
    W, V, X, _ = pt
    X = X if with_data else None
    Wf = np.array([[alpha * int(x) for x in row] for row in W], dtype=object)
    Vf = np.array([[beta * int(x) for x in row] for row in V], dtype=object)
    assert jacobian_rank(Wf, Vf, X) == jacobian_rank(W, V, X)
    # floats with exact binary values are the same points
    assert jacobian_rank(W.astype(float) / 4, V.astype(float) * 0.5, X) == jacobian_rank(W, V, X)


@given(points(max_d=3, max_p=2, max_K=3, data=True), st.booleans())
def test_point_rank_never_exceeds_generic_rank(pt, with_data):
    W, V, X, _ = pt
    X = X if with_data else None
    d, K = W.shape
    assert jacobian_rank(W, V, X) <= generic_rank(d, V.shape[0], K, X)


@given(
    st.integers(1, 4),
    st.integers(1, 2),
    st.integers(1, 6),
    st.integers(1, 12),
    st.booleans(),
    st.integers(0, 2**31),
)
def test_the_shape_bound_only_shortens_the_rank_never_changes_it(d, p, K, n, centered, seed):
    """rank_at stops at the smaller of N − k and the shape's bound (p·rank PΨ(X) with data: a
    400 × 10 data set with K = 100 took 30 s in FLINT's integer rank, now 0.4 s); the rank is the
    one sympy computes over Q from the same Jacobian, with no bound at all."""
    from rlct.quadratic.jacobians import build_jacobian
    from rlct.quadratic.point import integer_point, parse_point

    rng = np.random.default_rng(seed)
    W, V = rng.integers(-3, 4, (d, K)), rng.integers(-3, 4, (p, K))
    X = rng.integers(-3, 4, (n, d))
    assume(not centered or n >= 2)
    ip = integer_point(parse_point(W, V, X, centered))
    J = build_jacobian(ip.W, ip.V, ip.X, ip.b, ip.centered)
    assert jacobian_rank(W, V, X, centered) == sp.Matrix(J.tolist()).rank()


def test_a_generic_rank_certificate_is_plain_json() -> None:
    import json
    from fractions import Fraction

    from rlct.quadratic.generic import generic_rank_certificate

    cert = generic_rank_certificate(2, 1, 2)
    d = json.loads(json.dumps(cert.to_dict()))
    assert d["rank"] == cert.rank == 3 and d["certified"] is True  # Sym(2) has dimension 3
    assert Fraction(d["failure_probability"]) == cert.failure_probability == 0
    assert d["description"].startswith("certified: the rank 3")
