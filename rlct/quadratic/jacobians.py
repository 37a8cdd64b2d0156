"""The exact Jacobian of a quadratic network, its rank, and the structural bounds on that rank.

Parameters are ordered W (row-major), V (row-major), then b and c; rows are ordered output-major
(see :mod:`rlct.quadratic`). Ranks are exact over Q: the point is first made integral
(:func:`rlct.quadratic.point.integer_point`), then ranked by :func:`rlct.algebra.ranks.exact_rank`.

Symbols: N = number of parameters; u = a proven upper bound on the rank; k = the dimension of a
smooth submanifold of the fibre Φ⁻¹(Φ(θ*)) through θ* that we can exhibit (the per-unit scalings
w_j → αw_j, v_:j → v_:j/α², and whole free blocks for inactive or zero units).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import numpy as np

from .._validate import count, flag
from ..algebra.ranks import exact_rank, rational_rank
from .point import Point, integer_point, parse_point

__all__ = [
    "build_jacobian",
    "feature_matrix",
    "feature_rank",
    "fibre_dimension",
    "jacobian",
    "jacobian_rank",
    "num_parameters",
    "rank_at",
    "shape_bound",
]


def build_jacobian(
    W: np.ndarray, V: np.ndarray, X: np.ndarray | None, b: np.ndarray | None, centered: bool
) -> np.ndarray:
    """The Jacobian (object array) at a point whose entries are ints or Fractions.

    With ``centered`` the rows are n·J_i − Σ_l J_l, i.e. n times the centred Jacobian, so integer
    points give integer matrices.
    """
    d, K = W.shape
    p = V.shape[0]
    if X is None:
        ia, ib = np.triu_indices(d)
        m = len(ia)
        # ∂Q_k[a,b]/∂W[c,j] = v_kj (δ_ac w_j[b] + w_j[a] δ_bc)
        T = np.zeros((m, d, K), dtype=object)
        for t, (a, bb) in enumerate(zip(ia, ib)):
            T[t, a, :] = T[t, a, :] + W[bb, :]
            T[t, bb, :] = T[t, bb, :] + W[a, :]
        DW = V[:, None, None, :] * T[None, :, :, :]
        # ∂Q_k[a,b]/∂V[k',j] = δ_kk' w_j[a] w_j[b]
        G = W[ia, :] * W[ib, :]
        DV = np.zeros((p, m, p, K), dtype=object)
        for k in range(p):
            DV[k, :, k, :] = G
        Q_rows = [DW.reshape(p * m, d * K), DV.reshape(p * m, p * K)]
        if b is None:
            return np.concatenate(Q_rows, axis=1)
        Q_rows += [np.zeros((p * m, K), dtype=object), np.zeros((p * m, p), dtype=object)]
        # r_k[a] = 2 Σ_j v_kj b_j w_j[a]
        DWr = np.zeros((p, d, d, K), dtype=object)
        for a in range(d):
            DWr[:, a, a, :] = 2 * V * b[None, :]
        DVr = np.zeros((p, d, p, K), dtype=object)
        for k in range(p):
            DVr[k, :, k, :] = 2 * W * b[None, :]
        Dbr = 2 * V[:, None, :] * W[None, :, :]
        r_rows = [
            DWr.reshape(p * d, d * K),
            DVr.reshape(p * d, p * K),
            Dbr.reshape(p * d, K),
            np.zeros((p * d, p), dtype=object),
        ]
        # s_k = Σ_j v_kj b_j² + c_k
        DVs = np.zeros((p, p, K), dtype=object)
        for k in range(p):
            DVs[k, k, :] = b * b
        Dcs = np.zeros((p, p), dtype=object)
        for k in range(p):
            Dcs[k, k] = 1
        s_rows = [
            np.zeros((p, d * K), dtype=object),
            DVs.reshape(p, p * K),
            2 * V * b[None, :],
            Dcs,
        ]
        return np.concatenate([np.concatenate(r, axis=1) for r in (Q_rows, r_rows, s_rows)], axis=0)
    n = X.shape[0]
    Z = X.dot(W)
    if b is not None:
        Z = Z + b[None, :]
    # ∂f_k(x_i)/∂W[c,j] = 2 v_kj (w_jᵀx_i + b_j) x_i[c];  ∂/∂V[k',j] = δ_kk' (w_jᵀx_i + b_j)²
    DW = 2 * V[:, None, None, :] * Z[None, :, None, :] * X[None, :, :, None]
    DV = np.zeros((p, n, p, K), dtype=object)
    for k in range(p):
        DV[k, :, k, :] = Z * Z
    blocks = [DW.reshape(p * n, d * K), DV.reshape(p * n, p * K)]
    if b is not None:
        Dc = np.zeros((p, n, p), dtype=object)
        for k in range(p):
            Dc[k, :, k] = 1
        blocks += [(2 * V[:, None, :] * Z[None, :, :]).reshape(p * n, K), Dc.reshape(p * n, p)]
    J = np.concatenate(blocks, axis=1)
    if centered:
        J3 = J.reshape(p, n, J.shape[1])
        J = (n * J3 - J3.sum(axis=1, keepdims=True)).reshape(p * n, J.shape[1])
    return J


def jacobian(
    W: object, V: object, X: object = None, centered: bool = False, *, b: object = None
) -> np.ndarray:
    """The exact Jacobian at the point, as an object array of ``Fraction``.

    Rows: (k, a ≤ b) for Q_k, then (k, a) for r_k and k for s_k when biased (data-free), or
    (k, i) over outputs k and samples i (with data; centred by P⊥ when ``centered``). Columns:
    W (row-major), V (row-major), then b and c when biased.
    """
    pt = parse_point(W, V, X, centered, b)
    J = build_jacobian(pt.W, pt.V, pt.X, pt.b, pt.centered)
    scale = Fraction(1, pt.n) if pt.centered else Fraction(1)  # the builder returns n·(centred J)
    out = np.empty(J.shape, dtype=object)
    for idx in np.ndindex(J.shape):
        out[idx] = J[idx] * scale
    return out


def num_parameters(d: int, p: int, K: int, bias: bool = False) -> int:
    """N = (d + p)K, plus K hidden biases and p output biases when ``bias``."""
    d, p, K = count(d, "d"), count(p, "p"), count(K, "K")
    return (d + p) * K + ((K + p) if flag(bias, "bias") else 0)


def _rows(d: int, p: int, n: int | None, bias: bool) -> int:
    if n is not None:
        return p * n
    return p * (d * (d + 1) // 2 + ((d + 1) if bias else 0))


def feature_matrix(X: np.ndarray, bias: bool, centered: bool) -> np.ndarray:
    """Ψ(X): rows (x_a x_b)_{a ≤ b} (then x and 1 when biased); centred rows are n·Ψ_i − Σ Ψ_l."""
    n, d = X.shape
    ia, ib = np.triu_indices(d)
    cols = [X[:, ia] * X[:, ib]]
    if bias:
        cols += [X, np.ones((n, 1), dtype=int).astype(object)]
    F = np.concatenate(cols, axis=1)
    if centered:
        F = n * F - F.sum(axis=0, keepdims=True)
    return F


def feature_rank(X: np.ndarray, bias: bool, centered: bool) -> int:
    """rank P·Ψ(X): every output sees Q (and r, s) only through these features."""
    return rational_rank(feature_matrix(X, bias, centered))


def shape_bound(d: int, p: int, K: int, X: np.ndarray | None, centered: bool, bias: bool) -> int:
    """A proven upper bound on the rank at *every* point of this shape.

    rank ≤ rows; rank ≤ N − K (each unit's scaling direction, or its whole block of columns, lies
    in the kernel); with centred data and biases the c-columns vanish (−p more); with data the map
    factors through Q (and r, s), so rank ≤ p · rank P·Ψ(X).
    """
    n = None if X is None else X.shape[0]
    N = num_parameters(d, p, K, bias)
    u = min(_rows(d, p, n, bias), N - K - (p if (bias and centered) else 0))
    if X is not None:
        u = min(u, p * feature_rank(X, bias, centered))
    return u


def fibre_dimension(pt: Point) -> int:
    """k: the dimension of a smooth submanifold of the fibre through the point that we exhibit.

    Per unit j (w = [w_j ≠ 0], v = [v_:j ≠ 0]; d_in = d, or d + 1 with biases):
    w and v: the scaling curve (w_j, b_j) → t(w_j, b_j), v_:j → v_:j/t², 1; v = 0: the unit's
    input weights (w_j, b_j) are free, d_in. Where w_j = 0 the unit adds only the constant
    v_:j b_j² to each output, which the output bias c absorbs (c → c − v_:j b_j² + v*_:j b*_j²):
    with biases (v_:j, b_j) are free, p + 1, and without them v_:j is free, p. A unit with
    w_j = 0 and v_:j = 0 takes the larger of its two families. With biases and centred data the
    output bias c is free as well (p).
    """
    din = pt.d + (1 if pt.bias else 0)
    out_family = pt.p + (1 if pt.bias else 0)
    k = 0
    for j in range(pt.K):
        w = any(x != 0 for x in pt.W[:, j])
        v = any(x != 0 for x in pt.V[:, j])
        if w:
            k += 1 if v else din
        else:
            k += out_family if v else max(din, out_family)
    if pt.bias and pt.centered:
        k += pt.p
    return k


def _key(a: np.ndarray | None) -> tuple | None:
    return None if a is None else (a.shape, tuple(int(x) for x in a.flat))


def _unkey(k: tuple | None) -> np.ndarray | None:
    if k is None:
        return None
    shape, vals = k
    out = np.empty(len(vals), dtype=object)
    out[:] = list(vals)
    return out.reshape(shape)


@lru_cache(maxsize=256)
def _cached_rank(w: tuple, v: tuple, x: tuple | None, b: tuple | None, centered: bool) -> int:
    ip = Point(_unkey(w), _unkey(v), _unkey(x), _unkey(b), centered)
    J = build_jacobian(ip.W, ip.V, ip.X, ip.b, ip.centered)
    # two proven upper bounds: N − k (the fibre), and the shape's (rows, p·rank PΨ(X) with data);
    # where the modular rank reaches the smaller, no exact integer rank is needed
    bound = min(
        J.shape[1] - fibre_dimension(ip),
        shape_bound(ip.d, ip.p, ip.K, ip.X, ip.centered, ip.b is not None),
    )
    return exact_rank(J, bound)


def rank_at(pt: Point) -> int:
    """Exact rank at a point (cached: theorem checks rank the same point several times)."""
    ip = integer_point(pt)
    return _cached_rank(_key(ip.W), _key(ip.V), _key(ip.X), _key(ip.b), ip.centered)


def jacobian_rank(
    W: object, V: object, X: object = None, centered: bool = False, *, b: object = None
) -> int:
    """Exact rank of the Jacobian of θ ↦ Φ(θ) (or of θ ↦ P·F_X(θ) with data) at the given point.

    Args:
        W: d × K input weights (ints, Fractions, sympy Rationals or floats; floats are taken at
            their exact binary value).
        V: p × K output weights (a length-K vector means p = 1).
        X: optional n × d data matrix; then the map is θ ↦ (f_θ(x_i)_k)_{k,i}.
        centered: apply P⊥ = I − 11ᵀ/n across samples (needs X).
        b: optional length-K hidden biases; then the model has biases (and output biases c).

    The rank is exact over Q (see :mod:`rlct.algebra.ranks`): never a floating-point estimate.
    Raises InvalidShapeError (shapes), NonFiniteError (NaN / inf), TypeError (non-numbers).
    """
    return rank_at(parse_point(W, V, X, centered, b))
