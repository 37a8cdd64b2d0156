"""The generic rank of a quadratic network's Jacobian, by ranks modulo random primes."""

from __future__ import annotations

import numpy as np

from .._validate import count, flag
from ..algebra.ranks import GenericRank, sample_generic_rank
from ..errors import InvalidSeedError
from .jacobians import build_jacobian, shape_bound
from .point import check_jacobian_size, data_rows, den_lcm, parse_data

__all__ = ["content_bits", "generic_rank", "generic_rank_certificate"]


def _uniform(rng: np.random.Generator, q: int, shape: tuple[int, ...]) -> np.ndarray:
    vals = rng.integers(0, q, size=shape)
    out = np.empty(vals.size, dtype=object)
    out[:] = [int(v) for v in vals.flat]
    return out.reshape(shape)


def content_bits(
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
    J = build_jacobian(
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

    Algorithm (:func:`rlct.algebra.ranks.sample_generic_rank`): ranks of J(θ) modulo uniformly
    random primes q ∈ [2^60, 2^61) at points θ uniform in F_q^N. The result is always a proven lower
    bound on r_gen; it is certified equal to r_gen when it reaches the proven upper bound u of
    ``shape_bound``. Otherwise it can be too small only if every trial hit (i) a prime dividing
    the content of a fixed nonzero r_gen-minor M (log2|content| ≤ L of ``content_bits``, so at
    most L/60 of the > 2^60/59 primes) or (ii) a zero of M mod q (deg M ≤ 2u since every entry of
    J has degree ≤ 2 in θ; Schwartz–Zippel: probability ≤ 2u/2^60). Trials are added until
    δ = (L/(60·⌊2^60/59⌋) + 2u/2^60)^t ≤ 10^−30.
    """
    d, p, K = count(d, "d"), count(p, "p"), count(K, "K")
    seed = count(seed, "seed", 0, InvalidSeedError)
    centered, bias = flag(centered, "centered"), flag(bias, "bias")
    check_jacobian_size(d, p, K, None if X is None else data_rows(X), bias)  # before converting
    Xa = parse_data(X, d, centered)
    u = shape_bound(d, p, K, Xa, centered, bias)
    Xi = None
    if Xa is not None:
        gamma = den_lcm(Xa)
        Xi = np.vectorize(lambda x: int(x * gamma), otypes=[object])(Xa)

    def sample(rng: np.random.Generator, q: int) -> np.ndarray:
        W, V = _uniform(rng, q, (d, K)), _uniform(rng, q, (p, K))
        b = _uniform(rng, q, (K,)) if bias else None
        return build_jacobian(W, V, Xi, b, centered)

    return sample_generic_rank(
        sample, u, 2, lambda: content_bits(d, p, K, Xi, centered, bias, u), seed
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
