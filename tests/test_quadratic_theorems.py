"""The paper's closed forms (Cullen et al. 2026) against exact ranks (rlct.quadratic.theorems).

Each test builds a point where a theorem's hypotheses are decided by hand, and compares the claim
with the exact λ. Disagreements are asserted as disagreements: the exact side is not adjusted.
"""

from __future__ import annotations

import json

import pytest
import sympy as sp

from rlct import quadratic as q
from rlct.errors import InvalidShapeError
from rlct.quadratic import jacobian_rank, llc, modular_addition_data

R = sp.Rational


def test_theorem_4_1_holds_and_agrees():
    # d = 2, K = 3 = d(d+1)/2, w = e1, e2, e1 + e2 (w wᵀ = E11, E22, all-ones: a basis of Sym(2)),
    # p = 2. Claim λ = p·d(d+1)/4 = 3. Exact: the V-columns alone give rank p·3 = 6 = rows.
    W, V = [[1, 0, 1], [0, 1, 1]], [[1, 2, 3], [4, 5, 6]]
    for fn, name in ((q.theorem_4_1, "Theorem 4.1"), (q.theorem_G_5, "Theorem G.5")):
        tv = fn(W, V)
        assert tv.theorem == name and tv.hypotheses_hold is True and tv.lam == 3
    assert llc(W, V).lam == 3


def test_theorem_4_1_spanning_fails():
    # K = 3 but w3 = w1: the w wᵀ span only 2 dimensions of Sym(2).
    tv = q.theorem_4_1([[1, 0, 1], [0, 1, 0]], [[1, 1, 1]])
    assert tv.hypotheses_hold is False
    assert [c.status for c in tv.hypotheses] == [True, False]


def test_theorem_4_2_fails_under_its_hypotheses():
    # p = 1, d = 3, K = 2, w1 = e1, w2 = e1 + e2, v = (1, 1).
    # (1) w_j, v_j ≠ 0. (2) E11 and w2w2ᵀ are independent. (3) u1 = (0, a, b) ⊥ w1,
    # u2 = (c, −c, e) ⊥ w2; Σ u_j w_jᵀ + w_j u_jᵀ = [[2c, a, b+e], [a, −2c, e], [b+e, e, 0]] = 0
    # forces a = b = c = e = 0. So every hypothesis holds, and the claim is K(d+p−1)/2 = 3.
    # But the exact rank is 5 (test_quadratic.test_issue_example_rank_five), so λ = 5/2.
    W, V = [[1, 1], [0, 1], [0, 0]], [[1, 1]]
    for fn in (q.theorem_4_2, q.theorem_G_6):
        tv = fn(W, V)
        assert tv.hypotheses_hold is True
        assert tv.lam == 3
    r = llc(W, V)
    assert r.exact and r.lam == R(5, 2)


def test_theorem_4_2_condition_three_fails_for_orthogonal_features():
    # w1 = e1, w2 = e2, v = (1, 1): u1 = (0, 1, 0) ⊥ w1, u2 = (−1, 0, 0) ⊥ w2 give
    # u1w1ᵀ + w1u1ᵀ + u2w2ᵀ + w2u2ᵀ = (E21 + E12) − (E12 + E21) = 0: (3) fails.
    tv = q.theorem_4_2([[1, 0], [0, 1], [0, 0]], [[1, 1]])
    assert [c.status for c in tv.hypotheses] == [True, True, True, False]


def test_theorem_4_2_agrees_with_two_outputs():
    # p = 2, d = 3, K = 2: the claim K(d+p−1)/2 = 4 needs rank 8 = N − K = 10 − 2, the largest
    # rank any point can have (one scaling per unit is always in the kernel); the exact rank at
    # this point attains it, which proves λ = 4.
    W, V = [[1, 1], [0, 1], [0, 0]], [[1, 2], [3, 1]]
    tv = q.theorem_4_2(W, V)
    assert tv.hypotheses_hold is True and tv.lam == 4
    assert jacobian_rank(W, V) == 8
    assert llc(W, V).lam == 4


def test_theorem_4_2_exceeds_the_dimension():
    # d = 3, p = 2, K = 5 < 6: the claim K(d+p−1)/2 = 10 exceeds p·d(d+1)/4 = 6, the dimension
    # bound of (Q_1, Q_2) ∈ Sym(3)², so it cannot be right wherever it applies.
    rec = {c.theorem: c for c in q.check_theorems(3, 2, 5)}["Theorem 4.2"]
    assert rec.formula_lam == 10 and rec.exact_lam is not None and rec.exact_lam <= 6
    assert rec.agree is False


def test_theorem_G_1():
    # d = K = 2, W = I, v = (1, 1), b = (1, 2): Q = I has rank d; the proof (solve for ΔW, then
    # Δb, then Δc) is right, rank d(d+1)/2 + d + 1 = 6, λ = (d+1)(d+2)/4 = 3.
    tv = q.theorem_G_1([[1, 0], [0, 1]], [1, 1], [1, 2])
    assert tv.hypotheses_hold is True and tv.lam == 3
    assert llc([[1, 0], [0, 1]], [1, 1], b=[1, 2]).lam == 3
    # K < d: the hypothesis K ≥ d fails.
    assert q.theorem_G_1([[1], [0]], [1], [1]).hypotheses_hold is False


def test_theorem_G_2():
    # d = 3, K = 2, w = e1, e2, v = (1, 2), b = (1, 1): D(K) = K(2d−K+1)/2 + K + 1 = 8, λ = 4;
    # exact: N = dK + 2K + 1 = 11 minus K = 2 scalings minus the 1-dim group W → WA, b → Aᵀb
    # preserving diag(v): rank 8.
    W = [[1, 0], [0, 1], [0, 0]]
    tv = q.theorem_G_2(W, [1, 2], [1, 1])
    assert tv.hypotheses_hold is True and tv.lam == 4
    assert llc(W, [1, 2], b=[1, 1]).lam == 4
    # v1 + v2 = 0 violates a hypothesis (the proof divides by v_i + v_j).
    tv = q.theorem_G_2(W, [1, -1], [1, 1])
    assert tv.hypotheses_hold is False


def test_theorem_5_1_ntk_vs_network_at_a_rank_drop():
    # d = p = K = 1 at θ0 = 0: J = (2vw, w²) = 0, so the NTK model has λ = 0; the network has
    # K = v²w⁴, λ = 1/4 (normal crossing), which the exact side brackets in [0, 1/2].
    tv = q.theorem_5_1([[0]], [[0]])
    assert tv.lam == 0 and tv.hypotheses_hold is True
    r = llc([[0]], [[0]], search_seconds=0)
    assert not r.exact and r.lower <= R(1, 4) <= r.upper and R(1, 4) != tv.lam
    # The map's ideal ⟨v·w²⟩ gives the network's value itself.
    e = llc([[0]], [[0]])
    assert e.exact and e.lam == R(1, 4) != tv.lam


def test_theorem_5_2_misses_the_input_weights():
    # d = 2, p = K = 1, X = I (two samples), W = (1, 1)ᵀ, v = 1. σ(XW) = (w1², w2²)ᵀ = (1, 1)ᵀ has
    # rank 1 = min(l, K) with l = rank{x xᵀ} = 2: the hypotheses hold and the claim is
    # p·min(l, K)/2 = 1/2. But f(x_i) = v w_i², J rows (2vw1, 0, w1²), (0, 2vw2, w2²): rank
    # 2 = p·n, the maximum, so λ = 1.
    W, V, X = [[1], [1]], [[1]], [[1, 0], [0, 1]]
    tv = q.theorem_5_2(W, V, X)
    assert tv.hypotheses_hold is True and tv.lam == R(1, 2)
    r = llc(W, V, X)
    assert r.exact and r.lam == 1


W_MOD2 = [
    [1, 0, 1, 0],
    [0, 0, 0, 1],
    [0, 1, -1, 0],
    [0, 0, 0, 0],
]  # σ(XW) invertible, see test_quadratic


def test_corollary_5_3_modular_addition():
    X, _ = modular_addition_data(2)
    V = [[1, 2, 3, 4], [5, 6, 7, 9]]
    # p = 2, K = 4: bounds p·min(3, 4)/2 = 3 ≤ λ ≤ p·min(6, 4)/2 = 4. Uncentred the V-columns give
    # rank p·n = 8 (the maximum): λ = 4, inside the bounds.
    tv = q.corollary_5_3(W_MOD2, V)
    assert tv.kind == "bounds" and (tv.lower, tv.upper) == (3, 4) and tv.hypotheses_hold is True
    assert llc(W_MOD2, V, X).lam == 4
    # Centred, rank P⊥σ(XW) = 3 ≠ min(l, K) = 4: Thm 5.2's almost-sure event fails.
    assert q.corollary_5_3(W_MOD2, V, X, centered=True).hypotheses_hold is False
    # K = 3: the bounds collapse to p·3/2 = 3. With w1 = (1,0,0,1), w2 = (0,1,1,0),
    # w3 = (1,0,−1,2), σ(XW) has columns (1,4,0,1), (1,0,4,1), (0,9,1,4) (wᵀx = w_a + w_{2+b}),
    # of rank 3 = min(l, K): the hypotheses hold. Yet the exact rank is 8 = p·n, the maximum (so
    # it is certified): λ = 4 > 3. The W-directions, which the proof freezes, carry the excess.
    W3, V3 = [[1, 0, 1], [0, 1, 0], [0, 1, -1], [1, 0, 2]], [[1, 2, 3], [5, 6, 7]]
    tv = q.corollary_5_3(W3, V3)
    assert (tv.lower, tv.upper) == (3, 3) and tv.hypotheses_hold is True
    assert jacobian_rank(W3, V3, X) == 8
    assert llc(W3, V3, X).lam == 4


def test_theorem_5_5_counts_the_inactive_unit():
    # d = 3, p = 1, w1 = e1, w2 = e2, v = (1, 0): K_eff = 1, claim K_eff(d+p−1)/2 = 3/2; the active
    # subnetwork (one unit) satisfies G.6's (1)–(3). Exact: columns E11 (∂/∂v1), 2E11,
    # E12+E21, E13+E31 (∂/∂w1) and E22 (∂/∂v2 of the inactive unit): rank 4. N = 8, and the fibre
    # contains unit 1's scaling (1) and unit 2's free w2 (3): k = 4, so λ = 4/2 = 2 ≠ 3/2.
    W, V = [[1, 0], [0, 1], [0, 0]], [[1, 0]]
    tv = q.theorem_5_5(W, V)
    assert tv.hypotheses_hold is True and tv.lam == R(3, 2)
    r = llc(W, V)
    assert r.exact and r.lam == 2


def test_check_theorems_records():
    recs = {c.theorem: c for c in q.check_theorems(3, 1, 2)}
    assert set(recs) == {
        "Theorem 4.1", "Theorem 4.2", "Theorem G.5", "Theorem G.6", "Theorem 5.1",
        "Theorem 5.5", "Theorem G.1", "Theorem G.2",
    }  # fmt: skip
    # generic rank 5 (hand-derived in test_quadratic): Thm 4.2's hypotheses hold generically and
    # its claim 3 ≠ 5/2.
    r42 = recs["Theorem 4.2"]
    assert (r42.formula_lam, r42.exact_lam, r42.hypotheses_hold, r42.agree) == (
        3,
        R(5, 2),
        True,
        False,
    )
    # K = 2 < d(d+1)/2: 4.1's hypotheses fail (and its value 3 is wrong here too).
    assert recs["Theorem 4.1"].hypotheses_hold is False
    # G.2 (K < d, biases) is right: D(2) = 8, λ = 4.
    assert (recs["Theorem G.2"].exact_lam, recs["Theorem G.2"].agree) == (4, True)
    with_data = {c.theorem for c in q.check_theorems(4, 2, 3, modular_addition_data(2)[0])}
    assert {"Theorem 5.2", "Corollary 5.3"} <= with_data


def test_theorem_records_are_plain_json():
    tv = q.theorem_4_2([[1, 1], [0, 1], [0, 0]], [[1, 1]])  # as in the test above: claims 3
    d = json.loads(json.dumps(tv.to_dict()))
    assert (d["theorem"], d["kind"], d["lam"], d["lower"], d["upper"]) == (
        "Theorem 4.2", "value", "3", "3", "3"
    )  # fmt: skip
    assert d["hypotheses_hold"] is True and len(d["hypotheses"]) == len(tv.hypotheses) == 4
    assert {h["status"] for h in d["hypotheses"]} == {"holds"}
    recs = {c.theorem: c for c in q.check_theorems(3, 1, 2)}
    r42 = json.loads(json.dumps(recs["Theorem 4.2"].to_dict()))
    assert (r42["formula_lam"], r42["exact_lam"], r42["agree"], r42["d"]) == ("3", "5/2", False, 3)
    assert json.loads(json.dumps([c.to_dict() for c in recs.values()]))  # every record


def test_theorem_value_type():
    tv = q.TheoremValue("T", "λ = 1", "value", 1, 1, ())
    assert tv.lam == 1 and tv.hypotheses_hold is True
    with pytest.raises(ValueError, match="lower == upper"):
        q.TheoremValue("T", "λ = 1", "value", 1, 2, ())
    assert "T: λ = 1" in str(tv)


def test_bad_inputs():
    with pytest.raises(InvalidShapeError):
        q.theorem_5_2([[1]], [[1]], None)
    with pytest.raises(InvalidShapeError, match="biases"):
        q.theorem_G_1([[1]], [1], None)
    with pytest.raises(InvalidShapeError, match="single output"):
        q.theorem_G_2([[1], [0]], [[1], [1]], [1])
    with pytest.raises(InvalidShapeError):
        q.corollary_5_3([[1, 2]], [[1, 2], [1, 1]])  # X defaults to p = 2 data: d must be 4
    with pytest.raises(InvalidShapeError):
        q.check_theorems(0, 1, 1)
    with pytest.raises(InvalidShapeError):
        q.check_theorems(2, 1, 1, X=[[1, 2, 3]])
    with pytest.raises(InvalidShapeError):
        q.check_theorems(2, 1, 1, centered=True)
