"""Closed-form learning coefficients from the literature, in exact arithmetic.

Symbols. A linear network maps x ∈ R^M to y ∈ R^N; the true map is a fixed matrix of rank r, and
K(w) = E_x ‖f_w(x) − T x‖² (any positive-definite input covariance gives the same λ). Each value
is the *global* λ: the RLCT of K near the whole set of true parameters, attained at the most
singular true parameter (the local λ elsewhere can be larger).

* Reduced rank regression (Aoyagi & Watanabe 2005, Neural Networks 18(7)): f = B A x with
  A: H×M, B: N×H.
* Deep linear network (Aoyagi 2024, Neural Networks 172): f = W_L ⋯ W_1 x, widths
  h_0 = M (input), h_1, …, h_L = N (output); with M_s = h_s − r the answer depends only on the
  multiset {M_s} and on M + N.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from .._validate import count, items
from ..errors import InvalidShapeError
from ..result import RLCT, Condition

__all__ = ["deep_linear_network", "dln_active_set", "reduced_rank_regression", "regular_value"]

_AW = "Aoyagi–Watanabe 2005 reduced rank regression"
_AO = "Aoyagi 2024 deep linear network"


def _rank(r: object, bound: int, shapes: str) -> int:
    rr = count(r, "r (true rank)", 0)
    if rr > bound:
        raise InvalidShapeError(
            f"true rank r = {rr} exceeds the largest possible rank {bound} ({shapes})"
        )
    return rr


def regular_value(num_params: int) -> RLCT:
    """λ = d/2, m = 1: a regular model with d identifiable parameters (or a submersion onto d)."""
    d = count(num_params, "num_params", 1)
    return RLCT.exact_value(
        sp.Rational(d, 2), 1, "regular model: λ = d/2", (Condition(f"d = {d} parameters", True),)
    )


def reduced_rank_regression(M: int, N: int, H: int, r: int) -> RLCT:
    """λ, m of y = B A x (A: H×M, B: N×H) at a true matrix of rank r ≤ min(H, M, N).

    Exactly one case holds (Aoyagi & Watanabe 2005, Theorem 1):

    1. N+r ≤ M+H, M+r ≤ N+H, H+r ≤ M+N: λ = [2(H+r)(M+N) − (M−N)² − (H+r)² + δ]/8, m = 1 + δ,
       where δ = 0 if M+N+H+r is even and δ = 1 if it is odd;
    2. M+H < N+r: λ = (HM − Hr + Nr)/2;  3. N+H < M+r: λ = (HN − Hr + Mr)/2;
    4. M+N < H+r: λ = MN/2;  m = 1 in cases 2–4.
    """
    M, N, H = (count(v, n, 1) for v, n in ((M, "M"), (N, "N"), (H, "H")))
    r = _rank(r, min(M, N, H), f"M = {M}, N = {N}, H = {H}")
    if M + H < N + r:
        case, lam, mult = "2 (M+H < N+r)", sp.Rational(H * M - H * r + N * r, 2), 1
        conds = [f"M+H = {M + H} < N+r = {N + r}"]
    elif N + H < M + r:
        case, lam, mult = "3 (N+H < M+r)", sp.Rational(H * N - H * r + M * r, 2), 1
        conds = [f"N+H = {N + H} < M+r = {M + r}"]
    elif M + N < H + r:
        case, lam, mult = "4 (M+N < H+r)", sp.Rational(M * N, 2), 1
        conds = [f"M+N = {M + N} < H+r = {H + r}"]
    else:
        odd = (M + N + H + r) % 2
        bracket = 2 * (H + r) * (M + N) - (M - N) ** 2 - (H + r) ** 2 + odd
        case = f"1 (M+N+H+r {'odd' if odd else 'even'})"
        lam, mult = sp.Rational(bracket, 8), 1 + odd
        conds = [
            f"N+r = {N + r} ≤ M+H = {M + H}",
            f"M+r = {M + r} ≤ N+H = {N + H}",
            f"H+r = {H + r} ≤ M+N = {M + N}",
            f"M+N+H+r = {M + N + H + r} is {'odd' if odd else 'even'}",
        ]
    conditions = [Condition(f"0 ≤ r = {r} ≤ min(M, N, H) = {min(M, N, H)}", True)]
    conditions += [Condition(c, True) for c in conds]
    return RLCT.exact_value(lam, mult, f"{_AW}, case {case}", tuple(conditions))


def _widths(widths: Sequence[int], r: object) -> tuple[tuple[int, ...], int]:
    entries = items(widths, "widths", InvalidShapeError, "positive integers")
    if len(entries) < 2:
        raise InvalidShapeError(
            f"widths must list at least an input and an output width, got {len(entries)}: "
            f"{entries!r}"
        )
    hs = tuple(count(h, f"widths[{i}]", 1) for i, h in enumerate(entries))
    return hs, _rank(r, min(hs), f"widths = {list(hs)}")


def dln_active_set(widths: Sequence[int], r: int) -> tuple[int, ...]:
    """Aoyagi's set S (indices into ``widths``), |S| = ℓ + 1 with ℓ ≥ 1.

    S is the unique set with max_S M_s < min_{s∉S} M_s, Σ_S M_s ≥ ℓ·max_S M_s and
    Σ_S M_s < ℓ·min_{s∉S} M_s. Constructive rule: sort M_(1) ≤ … ≤ M_(L+1) and let
    g(ℓ) = Σ_{i ≤ ℓ+1} M_(i) − ℓ·M_(ℓ+1). Then g(1) = M_(1) ≥ 0 and g(ℓ+1) − g(ℓ) =
    ℓ(M_(ℓ+1) − M_(ℓ+2)) ≤ 0, and the conditions on the first ℓ+1 read g(ℓ) ≥ 0 > g(ℓ+1) (the gap
    M_(ℓ+1) < M_(ℓ+2) follows from g strictly dropping). So ℓ is the largest ℓ ≤ L with g(ℓ) ≥ 0;
    the first condition forces any valid S to be such a prefix, hence S is unique.
    """
    hs, r = _widths(widths, r)
    order = sorted(range(len(hs)), key=lambda s: (hs[s] - r, s))
    m = [hs[s] - r for s in order]
    ell, prefix = 1, m[0]  # ℓ = 1 always qualifies: g(1) = M_(1) ≥ 0
    for k in range(1, len(m)):
        prefix += m[k]  # Σ_{i ≤ k} M_(i), so g(k) ≥ 0 reads prefix ≥ k·M_(k+1)
        if prefix >= k * m[k]:
            ell = k
    return tuple(sorted(order[: ell + 1]))


def deep_linear_network(widths: Sequence[int], r: int) -> RLCT:
    """λ, m of y = W_L ⋯ W_1 x (widths listed input → output) at a true matrix of rank r.

    With M_s = h_s − r and S, ℓ from :func:`dln_active_set`, Σ = Σ_S M_s, M̄ = ⌈Σ/ℓ⌉ and
    a = Σ − (M̄ − 1)ℓ ∈ {1, …, ℓ} (Aoyagi 2024, Theorem 1):

        λ = r(M + N − r)/2 + a(ℓ − a)/(4ℓ) − ℓ(ℓ − 1)/4·(Σ/ℓ)² + ½ Σ_{i<j ∈ S} M_i M_j,
        m = a(ℓ − a) + 1.

    If some M_s = 0 (a layer of width r): λ = r(M + N − r)/2, m = 1 (the product map is then a
    submersion onto the rank-r matrices). With L = 2 this is :func:`reduced_rank_regression`.
    """
    hs, r = _widths(widths, r)
    M, N = hs[0], hs[-1]
    ms = [h - r for h in hs]
    base = sp.Rational(r * (M + N - r), 2)
    rank_cond = Condition(f"0 ≤ r = {r} ≤ min(widths) = {min(hs)}", True)
    if 0 in ms:
        zeros = [s for s, v in enumerate(ms) if v == 0]
        method = f"{_AO}, case M_s = 0 (widths[s] = r for s in {zeros}): λ = r(M+N−r)/2"
        cond = Condition(f"M_s = widths[s] − r = 0 for s in {zeros}", True)
        return RLCT.exact_value(base, 1, method, (rank_cond, cond))
    S = dln_active_set(hs, r)
    ell = len(S) - 1
    sub = [ms[s] for s in S]
    in_S = set(S)
    rest = [ms[s] for s in range(len(hs)) if s not in in_S]
    total = sum(sub)
    mbar = -(-total // ell)  # ⌈Σ/ℓ⌉ in integer arithmetic
    a = total - (mbar - 1) * ell
    pairs = (total * total - sum(v * v for v in sub)) // 2  # Σ_{i<j} M_i M_j
    lam = (
        base
        + sp.Rational(a * (ell - a), 4 * ell)
        - sp.Rational(ell - 1, 4 * ell) * total**2
        + sp.Rational(pairs, 2)
    )
    conds = [rank_cond, Condition(f"Σ_S M_s = {total} ≥ ℓ·max_S M_s = {ell * max(sub)}", True)]
    if rest:
        conds += [
            Condition(f"max_S M_s = {max(sub)} < min_(s∉S) M_s = {min(rest)}", True),
            Condition(f"Σ_S M_s = {total} < ℓ·min_(s∉S) M_s = {ell * min(rest)}", True),
        ]
    method = f"{_AO}, ℓ = {ell}, S = {list(S)} (indices into widths, input first), a = {a}"
    return RLCT.exact_value(lam, a * (ell - a) + 1, method, tuple(conds))
