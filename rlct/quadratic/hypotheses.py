"""The hypotheses of the paper's theorems, decided exactly at a point.

Conventions of :mod:`rlct.quadratic` (Q_k = Σ_j v_kj w_j w_jᵀ, Sym(d) in upper-triangular
coordinates, m = d(d+1)/2 of them). Each helper returns a bool or :class:`rlct.Condition` values
that :mod:`rlct.quadratic.theorems` attaches to a claim.
"""

from __future__ import annotations

import numpy as np

from ..algebra.ranks import rational_rank
from ..result import Condition
from .jacobians import rank_at
from .point import Point

__all__ = [
    "data_conditions",
    "orthogonal_injective",
    "rank_one_span",
    "sym_dim",
    "underparam_conditions",
    "units_ok",
]


def sym_dim(d: int) -> int:
    return d * (d + 1) // 2


def rank_one_span(W: np.ndarray) -> int:
    """rank of {w_j w_jᵀ} in Sym(d) (upper-triangular coordinates)."""
    ia, ib = np.triu_indices(W.shape[0])
    return rational_rank((W[ia, :] * W[ib, :]).T)


def _perp_basis(w: np.ndarray) -> list[np.ndarray]:
    """A rational basis of w^⊥ (w ≠ 0): w_a e_c − w_c e_a for c ≠ a, a the first nonzero index."""
    d = len(w)
    a = next(i for i in range(d) if w[i] != 0)
    out = []
    for c in range(d):
        if c != a:
            u = np.zeros(d, dtype=object)
            u[c] = w[a]
            u[a] = u[a] - w[c]
            out.append(u)
    return out


def orthogonal_injective(W: np.ndarray, V: np.ndarray) -> bool:
    """Hypothesis (3) of Theorems 4.2 / G.6: (u_j ⊥ w_j)_j ↦ (Σ_j v_kj(u_j w_jᵀ + w_j u_jᵀ))_k is
    injective. False if some w_j = 0 (then any u_j ≠ 0 is in the kernel)."""
    d, K = W.shape
    if any(all(x == 0 for x in W[:, j]) for j in range(K)):
        return False
    if d == 1:
        return True  # every w_j^⊥ is {0}
    ia, ib = np.triu_indices(d)
    cols = []
    for j in range(K):
        w = W[:, j]
        for u in _perp_basis(w):
            S = np.outer(u, w) + np.outer(w, u)
            cols.append(np.concatenate([V[k, j] * S[ia, ib] for k in range(V.shape[0])]))
    return rational_rank(np.array(cols, dtype=object)) == len(cols)


def data_conditions(pt: Point) -> list[Condition]:
    if pt.X is None:
        return []
    free = Point(pt.W, pt.V, None, pt.b, False)
    rx, rf = rank_at(pt), rank_at(free)
    return [
        Condition(
            f"(implicit) the data see every tangent direction: rank J_X(θ*) = {rx} equals rank "
            f"J_Φ(θ*) = {rf} (the paper states its theorems for the population loss)",
            rx == rf,
        )
    ]


def units_ok(W: np.ndarray, V: np.ndarray) -> bool:
    return all(
        any(x != 0 for x in W[:, j]) and any(x != 0 for x in V[:, j]) for j in range(W.shape[1])
    )


def underparam_conditions(W: np.ndarray, V: np.ndarray, label: str = "") -> list[Condition]:
    d, K = W.shape
    m = sym_dim(d)
    r1 = rank_one_span(W)
    return [
        Condition(f"{label}K < d(d+1)/2 (K = {K}, d(d+1)/2 = {m})", K < m),
        Condition(f"{label}(1) w_j ≠ 0 and v_:j ≠ 0 for every unit j", units_ok(W, V)),
        Condition(
            f"{label}(2) the w_j w_jᵀ are linearly independent in Sym(d) (rank {r1} of K = {K})",
            r1 == K,
        ),
        Condition(
            f"{label}(3) u_j ⊥ w_j with Σ_j v_kj(u_j w_jᵀ + w_j u_jᵀ) = 0 for all k forces u = 0",
            orthogonal_injective(W, V),
        ),
    ]
