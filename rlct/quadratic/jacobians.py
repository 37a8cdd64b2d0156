"""Exact Jacobian ranks and learning coefficients of two-layer quadratic networks.

Model (Cullen et al. 2026, seed paper 002): f_θ(x) = V σ(Wᵀx), σ(t) = t², W ∈ R^{d×K} (columns
w_j), V ∈ R^{p×K}. Output k is xᵀQ_k x with Q_k = Σ_j v_kj w_j w_jᵀ, and the identifiable
coordinates are Φ(W, V) = (Q_1, …, Q_p), each Q_k stored by its d(d+1)/2 upper-triangular entries.
With biases (``b`` given): f_k(x) = Σ_j v_kj (w_jᵀx + b_j)² + c_k = xᵀQ_k x + r_kᵀx + s_k with
r_k = 2 Σ_j v_kj b_j w_j and s_k = Σ_j v_kj b_j² + c_k; the output bias c ∈ R^p is always a
parameter, but the Jacobian does not depend on its value, so it is not an argument.

With a data matrix X (n × d) the relevant map is θ ↦ (f_θ(x_i)_k)_{k,i}; with ``centered=True``
the centring projection P⊥ = I − 11ᵀ/n is applied across samples (what a centred squared loss
sees). Parameters are ordered W (row-major), V (row-major), then b and c; rows are ordered
output-major. Orderings do not affect ranks.

Exactness. Inputs are converted to exact rationals (floats exactly, via ``Fraction``). Every
column block of the Jacobian is homogeneous in (W, b), V and X, so scaling W and b by α, V by β
and X by γ (b by αγ) only rescales whole column blocks: the rank at a rational point equals the
rank of an integer Jacobian, which :mod:`rlct.jacobian` ranks exactly (FLINT).

Symbols used below: N = number of parameters; u = a proven upper bound on the rank; k = the
dimension of a smooth submanifold of the fibre Φ⁻¹(Φ(θ*)) through θ* that we can exhibit (the
per-unit scalings w_j → αw_j, v_:j → v_:j/α², and whole free blocks for inactive or zero units).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from math import lcm
from numbers import Integral, Rational
from typing import NamedTuple

import flint
import numpy as np
import sympy as sp

from .errors import InvalidShapeError, NonFiniteError
from .jacobian import (
    TARGET_FAILURE,
    GenericRank,
    exact_rank,
    rational_rank,
    sample_generic_rank,
)
from .result import RLCT, Condition

__all__ = [
    "GenericRank",
    "generic_rank",
    "generic_rank_certificate",
    "jacobian",
    "jacobian_rank",
    "llc",
    "modular_addition_data",
    "num_parameters",
]

# --------------------------------------------------------------------------------------------
# Validation and exact conversion
# --------------------------------------------------------------------------------------------


def _fraction(x: object, where: str) -> Fraction:
    """One entry as an exact Fraction; NaN / ±inf raise NonFiniteError, other types TypeError."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{where} is a boolean ({x!r}); give a number")
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (Integral, np.integer)):
        return Fraction(int(x))
    if isinstance(x, (float, np.floating)):
        xf = float(x)
        if not math.isfinite(xf):
            raise NonFiniteError(f"{where} = {xf!r} is not finite")
        return Fraction(xf)
    if isinstance(x, flint.fmpz):
        return Fraction(int(x))
    if isinstance(x, flint.fmpq):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, sp.Basic):
        if x.has(sp.nan, sp.oo, -sp.oo, sp.zoo):
            raise NonFiniteError(f"{where} = {x} is not finite")
        if isinstance(x, sp.Rational):
            return Fraction(int(x.p), int(x.q))
        if isinstance(x, sp.Float):
            r = sp.Rational(x)
            return Fraction(int(r.p), int(r.q))
        raise TypeError(f"{where} = {x} is not a rational number")
    if isinstance(x, Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    raise TypeError(f"{where} = {x!r} ({type(x).__name__}) is not a real rational number")


def _array(value: object, name: str) -> np.ndarray:
    """An object array of exact numbers (Python ints where integral, else Fractions); shape
    problems raise InvalidShapeError."""
    if value is None:
        raise InvalidShapeError(f"{name} is required")
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        bad = ~np.isfinite(value)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise NonFiniteError(f"{name}{list(idx)} = {value[idx]!r} is not finite")
    try:
        arr = np.array(value, dtype=object)
    except ValueError as exc:  # ragged nested lists
        raise InvalidShapeError(f"{name} is not a rectangular array: {exc}") from None
    out = np.empty(arr.shape, dtype=object)
    for idx in np.ndindex(arr.shape):
        x = arr[idx]
        if isinstance(x, (list, tuple, np.ndarray)):
            raise InvalidShapeError(f"{name} is not a rectangular array (ragged rows)")
        f = _fraction(x, f"{name}{list(idx)}")
        out[idx] = int(f) if f.denominator == 1 else f
    return out


class Point(NamedTuple):
    """A validated point: exact arrays (object dtype of ints / Fractions) and the shape."""

    W: np.ndarray  # d × K
    V: np.ndarray  # p × K
    X: np.ndarray | None  # n × d
    b: np.ndarray | None  # K
    centered: bool

    @property
    def d(self) -> int:
        return self.W.shape[0]

    @property
    def K(self) -> int:
        return self.W.shape[1]

    @property
    def p(self) -> int:
        return self.V.shape[0]

    @property
    def n(self) -> int | None:
        return None if self.X is None else self.X.shape[0]

    @property
    def bias(self) -> bool:
        return self.b is not None


def parse_point(
    W: object, V: object, X: object = None, centered: bool = False, b: object = None
) -> Point:
    """Validate shapes and convert every entry exactly (see the module docstring)."""
    Wa = _array(W, "W")
    if Wa.ndim != 2 or 0 in Wa.shape:
        raise InvalidShapeError(f"W must be a non-empty d × K matrix, got shape {Wa.shape}")
    d, K = Wa.shape
    Va = _array(V, "V")
    if Va.ndim == 1:
        Va = Va.reshape(1, -1)
    if Va.ndim != 2 or Va.shape[0] == 0 or Va.shape[1] != K:
        raise InvalidShapeError(
            f"V has shape {Va.shape} but W has shape {Wa.shape}: V must be p × K with K = {K} "
            "(one column per hidden unit) and p ≥ 1"
        )
    Xa = None
    if X is not None:
        Xa = _array(X, "X")
        if Xa.ndim != 2 or Xa.shape[0] == 0 or Xa.shape[1] != d:
            raise InvalidShapeError(
                f"X has shape {Xa.shape} but W has shape {Wa.shape}: X must be n × d with d = {d} "
                "(one row per sample) and n ≥ 1"
            )
    ba = None
    if b is not None:
        ba = _array(b, "b")
        if ba.shape != (K,):
            raise InvalidShapeError(
                f"b has shape {ba.shape} but W has shape {Wa.shape}: b must have shape ({K},)"
            )
    if not isinstance(centered, (bool, np.bool_)):
        raise TypeError(f"centered must be a bool, got {centered!r}")
    if centered and Xa is None:
        raise InvalidShapeError(
            "centered=True needs a data matrix X (centring acts across samples)"
        )
    return Point(Wa, Va, Xa, ba, bool(centered))


def _dim(value: object, name: str, minimum: int = 1) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        raise InvalidShapeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise InvalidShapeError(f"{name} must be ≥ {minimum}, got {value}")
    return int(value)


def _data(X: object, d: int, centered: bool) -> np.ndarray | None:
    if X is None:
        if centered:
            raise InvalidShapeError("centered=True needs a data matrix X")
        return None
    Xa = _array(X, "X")
    if Xa.ndim != 2 or Xa.shape[0] == 0 or Xa.shape[1] != d:
        raise InvalidShapeError(f"X has shape {Xa.shape}: it must be n × d with d = {d} and n ≥ 1")
    return Xa


# --------------------------------------------------------------------------------------------
# Jacobians
# --------------------------------------------------------------------------------------------


def _build(
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


def _den_lcm(*arrays: np.ndarray | None) -> int:
    dens = [f.denominator for a in arrays if a is not None for f in a.flat]
    return lcm(*dens) if dens else 1


def integer_point(pt: Point) -> Point:
    """A point with integer entries whose Jacobian has the same rank (blockwise rescaling)."""
    gamma = _den_lcm(pt.X)
    b1 = None if pt.b is None else pt.b * gamma
    alpha = _den_lcm(pt.W, b1)
    beta = _den_lcm(pt.V)

    def as_int(a: np.ndarray | None, s: int) -> np.ndarray | None:
        if a is None:
            return None
        out = np.empty(a.shape, dtype=object)
        for idx in np.ndindex(a.shape):
            v = a[idx] * s
            assert v.denominator == 1
            out[idx] = int(v)
        return out

    return Point(
        as_int(pt.W, alpha),
        as_int(pt.V, beta),
        as_int(pt.X, gamma),
        as_int(b1, alpha),
        pt.centered,
    )


def jacobian(
    W: object, V: object, X: object = None, centered: bool = False, *, b: object = None
) -> np.ndarray:
    """The exact Jacobian at the point, as an object array of ``Fraction``.

    Rows: (k, a ≤ b) for Q_k, then (k, a) for r_k and k for s_k when biased (data-free), or
    (k, i) over outputs k and samples i (with data; centred by P⊥ when ``centered``). Columns:
    W (row-major), V (row-major), then b and c when biased.
    """
    pt = parse_point(W, V, X, centered, b)
    J = _build(pt.W, pt.V, pt.X, pt.b, pt.centered)
    scale = Fraction(1, pt.n) if pt.centered else Fraction(1)  # the builder returns n·(centred J)
    out = np.empty(J.shape, dtype=object)
    for idx in np.ndindex(J.shape):
        out[idx] = J[idx] * scale
    return out


def num_parameters(d: int, p: int, K: int, bias: bool = False) -> int:
    """N = (d + p)K, plus K hidden biases and p output biases when ``bias``."""
    d, p, K = _dim(d, "d"), _dim(p, "p"), _dim(K, "K")
    return (d + p) * K + ((K + p) if bias else 0)


def _rows(d: int, p: int, n: int | None, bias: bool) -> int:
    if n is not None:
        return p * n
    return p * (d * (d + 1) // 2 + ((d + 1) if bias else 0))


def _feature_matrix(X: np.ndarray, bias: bool, centered: bool) -> np.ndarray:
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
    return rational_rank(_feature_matrix(X, bias, centered))


def _shape_bound(d: int, p: int, K: int, X: np.ndarray | None, centered: bool, bias: bool) -> int:
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

    Per unit j (with a = [w_j ≠ 0] (or (w_j, b_j) ≠ 0 when biased) and v = [v_:j ≠ 0]):
    a and v: the scaling curve, 1; a only: the unit's input weights are free (d, or d + 1);
    v only: its output weights are free (p); neither: the larger of the two, max(d(+1), p).
    With biases and centred data the output bias c is free as well (p).
    """
    din = pt.d + (1 if pt.bias else 0)
    k = 0
    for j in range(pt.K):
        a = any(x != 0 for x in pt.W[:, j]) or (pt.bias and pt.b[j] != 0)
        v = any(x != 0 for x in pt.V[:, j])
        k += 1 if (a and v) else din if a else pt.p if v else max(din, pt.p)
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
    J = _build(ip.W, ip.V, ip.X, ip.b, ip.centered)
    return exact_rank(J, J.shape[1] - fibre_dimension(ip))


def _int_rank(pt: Point) -> int:
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

    The rank is exact over Q (see :mod:`rlct.jacobian`): never a floating-point estimate.
    Raises InvalidShapeError (shapes), NonFiniteError (NaN / inf), TypeError (non-numbers).
    """
    return _int_rank(parse_point(W, V, X, centered, b))


# --------------------------------------------------------------------------------------------
# Generic rank
# --------------------------------------------------------------------------------------------


def _uniform(rng: np.random.Generator, q: int, shape: tuple[int, ...]) -> np.ndarray:
    vals = rng.integers(0, q, size=shape)
    out = np.empty(vals.size, dtype=object)
    out[:] = [int(v) for v in vals.flat]
    return out.reshape(shape)


def _content_bits(
    d: int, p: int, K: int, X: np.ndarray | None, centered: bool, bias: bool, u: int
) -> int:
    """L with log2 |c(M)| ≤ L for the content c(M) of any nonzero minor M of size ≤ u.

    ‖·‖₁ (sum of |coefficients|) is submultiplicative and the determinant expands into products
    of one entry per row, so ‖M‖₁ ≤ Π_rows Σ_j ‖J_ij‖₁. Each ‖J_ij‖₁ is J_ij evaluated at θ = 1
    with X replaced by |X| (all coefficients are then added with positive sign); a centred row
    n·J_i − Σ_l J_l has ‖·‖₁ ≤ n‖J_i‖₁ + Σ_l ‖J_l‖₁. We sum the bit lengths of the u largest
    row bounds.
    """
    bone = np.full(K, 1, dtype=object) if bias else None
    Xabs = None if X is None else np.vectorize(abs, otypes=[object])(X)
    J = _build(
        np.full((d, K), 1, dtype=object), np.full((p, K), 1, dtype=object), Xabs, bone, False
    )
    sums = [sum(int(x) for x in row) for row in J.tolist()]
    if centered:
        n = X.shape[0]
        for k in range(p):
            block = sums[k * n : (k + 1) * n]
            tot = sum(block)
            sums[k * n : (k + 1) * n] = [n * s + tot for s in block]
    sums.sort(reverse=True)
    return sum(max(s, 1).bit_length() for s in sums[:u])


def generic_rank_certificate(
    d: int,
    p: int,
    K: int,
    X: object = None,
    centered: bool = False,
    seed: int = 0,
    *,
    bias: bool = False,
) -> GenericRank:
    """The generic rank of the Jacobian for shape (d, p, K) (and data X), with its certificate.

    The generic rank r_gen is the rank of J over the field Q(θ), i.e. the maximum of rank J(θ)
    over real points. Rational data X is first scaled to integers (this rescales whole column
    blocks after the bijective change θ → (αW, βV, αγb), so r_gen is unchanged).

    Algorithm (:func:`rlct.jacobian.sample_generic_rank`): ranks of J(θ) modulo uniformly random
    primes q ∈ [2^60, 2^61) at points θ uniform in F_q^N. The result is always a proven lower
    bound on r_gen; it is certified equal to r_gen when it reaches the proven upper bound u of
    ``_shape_bound``. Otherwise it can be too small only if every trial hit (i) a prime dividing
    the content of a fixed nonzero r_gen-minor M (log2|content| ≤ L of ``_content_bits``, so at
    most L/60 of the > 2^60/59 primes) or (ii) a zero of M mod q (deg M ≤ 2u since every entry of
    J has degree ≤ 2 in θ; Schwartz–Zippel: probability ≤ 2u/2^60). Trials are added until
    δ = (L/(60·⌊2^60/59⌋) + 2u/2^60)^t ≤ 10^−30.
    """
    d, p, K = _dim(d, "d"), _dim(p, "p"), _dim(K, "K")
    seed = _dim(seed, "seed", 0)
    Xa = _data(X, d, centered)
    centered, bias = bool(centered), bool(bias)
    u = _shape_bound(d, p, K, Xa, centered, bias)
    Xi = None
    if Xa is not None:
        gamma = _den_lcm(Xa)
        Xi = np.vectorize(lambda x: int(x * gamma), otypes=[object])(Xa)

    def sample(rng: np.random.Generator, q: int) -> np.ndarray:
        W, V = _uniform(rng, q, (d, K)), _uniform(rng, q, (p, K))
        b = _uniform(rng, q, (K,)) if bias else None
        return _build(W, V, Xi, b, centered)

    return sample_generic_rank(
        sample, u, 2, lambda: _content_bits(d, p, K, Xi, centered, bias, u), seed
    )


def generic_rank(
    d: int,
    p: int,
    K: int,
    X: object = None,
    centered: bool = False,
    seed: int = 0,
    *,
    bias: bool = False,
) -> int:
    """The rank of the Jacobian at generic parameters of shape (d, p, K) (and data X).

    Computed from ranks modulo random 61-bit primes at random points: the value is always a proven
    lower bound on the generic rank; it is proven equal when it reaches the structural upper bound,
    and otherwise equals it except with probability ≤ 10^−30 (Schwartz–Zippel over F_q plus a
    bound on how many such primes can divide the content of a minor). See
    :func:`generic_rank_certificate` for the argument and the certificate itself.
    """
    return generic_rank_certificate(d, p, K, X, centered, seed, bias=bias).rank


# --------------------------------------------------------------------------------------------
# Learning coefficient at a point
# --------------------------------------------------------------------------------------------


def llc(
    W: object,
    V: object,
    X: object = None,
    centered: bool = False,
    *,
    b: object = None,
    seed: int = 0,
    allow_probabilistic: bool = True,
) -> RLCT:
    """The local learning coefficient λ at the true parameter θ* = (W, V) (and b).

    The loss. Without data: K(θ) ≍ ‖Φ(θ) − Φ(θ*)‖² (squared loss, realizable at θ*, population
    inputs whose quadratic features have a positive-definite second-moment matrix, so that the
    Fisher information in the identifiable coordinates is positive definite). With data:
    K(θ) = (1/n) Σ_i ‖P(F(θ) − F(θ*))_i‖², squared loss with the uniform distribution on the n
    inputs. The prior is positive and continuous at θ*.

    What is proven, with r = rank J(θ*) (exact), N parameters and k = :func:`fibre_dimension`:

    * r/2 ≤ λ: r output coordinates with independent gradients are local coordinates y_1..y_r
      near θ*, and K ≥ c Σ y_i², so V(ε) ≤ C ε^{r/2}. (This needs no constant rank.)
    * λ ≤ (N − k)/2: the fibre contains a smooth k-dimensional submanifold M through θ* and
      K ≤ C dist(θ, M)², so V(ε) ≥ c ε^{(N−k)/2}.
    * If r = N − k the two bounds meet: λ = r/2 and V(ε) ≍ ε^{r/2}, so m = 1.
    * If r equals the generic rank r_gen of the class, the rank is maximal, hence (lower
      semicontinuity) constant near θ*; by the constant-rank theorem K ≍ |z|² in r local
      coordinates z, so λ = r/2 and m = 1.

    Otherwise (the rank drops) only the bounds r/2 ≤ λ ≤ (N − k)/2 are returned: neither r/2 nor
    r_gen/2 is the answer in general (Φ = x² gives K = x⁴ and λ = 1/4, between 0/2 and 1/2).

    Generic rank. r_gen is certified when the rank at a random point attains a proven upper bound;
    otherwise it is certified only with failure probability δ ≤ 10^−30 (Schwartz–Zippel). With
    ``allow_probabilistic=True`` (default) such a condition is recorded as holding, and its
    statement gives δ; with ``False`` it is recorded as undecided and the result is not exact.
    """
    pt = parse_point(W, V, X, centered, b)
    r = _int_rank(pt)
    N = num_parameters(pt.d, pt.p, pt.K, pt.bias)
    k = fibre_dimension(pt)
    lower, upper = sp.Rational(r, 2), sp.Rational(N - k, 2)
    shape = f"d={pt.d}, p={pt.p}, K={pt.K}" + (", biases" if pt.bias else "")
    if pt.X is None:
        loss = Condition(
            "K(θ) ≍ ‖Φ(θ) − Φ(θ*)‖² near θ* (data-free model: squared loss, realizable at θ*, "
            "positive-definite Fisher information in the identifiable coordinates)",
            True,
        )
    else:
        loss = Condition(
            f"K(θ) = (1/n)Σ_i‖{'P⊥' if pt.centered else ''}(F(θ) − F(θ*))_i‖² on the n = {pt.n} "
            "given inputs (squared loss, uniform distribution on the data, realizable at θ*)",
            True,
        )
    low_c = Condition(
        f"λ ≥ rank J(θ*)/2 = {lower}: {r} coordinates of the map with independent gradients at θ* "
        "are local coordinates y, and K ≥ c·Σ y_i²",
        True,
    )
    up_c = Condition(
        f"λ ≤ (N − k)/2 = {upper}: the fibre through θ* contains a smooth submanifold of "
        f"dimension k = {k} (unit scalings, free blocks of inactive units), N = {N}",
        True,
    )
    if r == N - k:
        return RLCT.exact_value(
            lower,
            1,
            "quadratic network: rank J(θ*)/2 = (N − k)/2, the two proven bounds meet",
            (loss, low_c, up_c),
        )
    cert = generic_rank_certificate(pt.d, pt.p, pt.K, pt.X, pt.centered, seed, bias=pt.bias)
    if r < cert.rank:
        status: bool | None = False
        text = (
            f"rank J(θ*) = {r} is below the generic rank of the class ({shape}), which is at "
            f"least {cert.rank} (a rank modulo a prime at a random point): the rank drops at θ*"
        )
    else:
        confident = allow_probabilistic and cert.failure_probability <= TARGET_FAILURE
        status = True if (cert.certified or confident) else None
        text = (
            f"rank J(θ*) = {r} equals the generic rank of the class ({shape}) (so it is maximal "
            f"and constant near θ*); generic rank {cert.describe()}"
        )
    gen_c = Condition(text, status)
    if status is True:
        return RLCT.exact_value(
            lower,
            1,
            "quadratic network: constant-rank theorem, λ = rank J(θ*)/2 at a point of maximal rank",
            (loss, gen_c),
        )
    return RLCT.bounds(
        lower,
        upper,
        "quadratic network: rank J(θ*)/2 ≤ λ ≤ (N − k)/2 (the rank is not known to be locally "
        "constant)",
        (loss, gen_c, low_c, up_c),
    )


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def modular_addition_data(p: int) -> tuple[np.ndarray, np.ndarray]:
    """All p² modular-addition examples as one-hot arrays (int64).

    Row i = a·p + b (a = 0..p−1 outer, b = 0..p−1 inner) holds the input x_i = [e_a; e_b] ∈
    {0,1}^{2p} and the target y_i = e_{(a+b) mod p} ∈ {0,1}^p. Returns (X, Y) of shapes
    (p², 2p) and (p², p). The paper takes p prime; any modulus p ≥ 2 is accepted.
    The input matrix has rank 2p − 1 (the two one-hot halves both sum to the all-ones column).
    """
    p = _dim(p, "p", 2)
    a, b = np.divmod(np.arange(p * p), p)
    X = np.zeros((p * p, 2 * p), dtype=np.int64)
    X[np.arange(p * p), a] = 1
    X[np.arange(p * p), p + b] = 1
    Y = np.zeros((p * p, p), dtype=np.int64)
    Y[np.arange(p * p), (a + b) % p] = 1
    return X, Y


def __getattr__(name: str) -> object:
    """The paper's theorems live in :mod:`rlct.quadratic_theorems` (which imports this module);
    they are also reachable here, as ``rlct.quadratic.check_theorems`` etc."""
    from . import quadratic_theorems

    if name in quadratic_theorems.__all__:
        return getattr(quadratic_theorems, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
