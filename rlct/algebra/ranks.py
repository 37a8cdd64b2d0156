"""Exact ranks of integer and rational matrices (the backend of :mod:`rlct.quadratic`, and the
small eliminations of :mod:`rlct.newton.polyhedron` and :mod:`rlct.algebra.realzeros`).

Algorithm choice (measured on one core, Jacobian of the quadratic network with d=8, p=5, K=40,
180 × 520, entries up to 2^125):

* sympy ``DomainMatrix`` over QQ: about 230 s; over GF(2^31 − 1): about 12 s. Too slow.
* python-flint ``nmod_mat.rank()`` modulo the Mersenne prime q = 2^61 − 1: 0.03 s. This is a
  *lower bound* on the rank over Q (a minor that vanishes over Q vanishes mod q, not conversely).
* python-flint ``fmpz_mat.rank()``: exact over Z (FLINT row-reduces with fraction-free /
  multimodular elimination whose result is proven, not heuristic). It is fast on tall matrices
  (520 × 180: 0.02–0.07 s, rank-deficient ones too) but very slow on the same matrix laid out
  wide (180 × 520: 30 s), so we always hand it the orientation with rows ≥ columns.

:func:`exact_rank` combines them: the modular rank r_q is computed first; if r_q reaches an upper
bound that is known to hold (min(rows, cols), or a structural bound supplied by the caller), then
r_q ≤ rank_Q ≤ bound = r_q proves rank_Q = r_q. Otherwise FLINT's exact integer rank decides. The
answer is therefore always the exact rank over Q; the modular step is only a shortcut.

The Newton-polyhedron code ranks and solves tiny matrices (a few facet normals or face
directions, d ≤ 10 columns): :func:`rank_of` and :func:`nullspace` do this by Gaussian elimination
over ``Fraction``, where the set-up cost of FLINT would dominate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from numbers import Integral, Rational

import flint
import numpy as np

from .._validate import count
from ..errors import InvalidShapeError, InvalidTypeError, NonFiniteError
from ..time_limit import check as check_time

__all__ = [
    "PRIME",
    "TARGET_FAILURE",
    "GenericRank",
    "exact_rank",
    "integer_rows",
    "nullspace",
    "primitive",
    "random_prime",
    "rank_mod_prime",
    "rank_of",
    "rational_rank",
    "sample_generic_rank",
]

PRIME = (1 << 61) - 1
"""The Mersenne prime 2^61 − 1, the modulus of the fast lower-bound rank."""


def _matrix_rows(a: object) -> list[list[object]]:
    """The rows of a rectangular 2-D matrix (numpy array or sequence of sequences)."""
    if isinstance(a, np.ndarray):
        if a.ndim != 2:
            raise InvalidShapeError(f"expected a 2-D matrix, got shape {a.shape}")
        return a.tolist()
    flat = (str, bytes)
    if isinstance(a, flat) or not isinstance(a, Iterable):
        raise InvalidShapeError(f"expected a 2-D matrix (a sequence of rows), got {a!r}")
    rows = []
    for i, row in enumerate(a):
        if isinstance(row, flat) or not isinstance(row, Iterable):
            raise InvalidShapeError(f"expected a 2-D matrix, but row {i} is {row!r}")
        rows.append(list(row))
    if any(len(r) != len(rows[0]) for r in rows):
        lengths = sorted({len(r) for r in rows})
        raise InvalidShapeError(f"the matrix is ragged: its rows have lengths {lengths}")
    return rows


def _integer(x: object, i: int, j: int) -> int:
    if type(x) is int:
        return x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (Integral, np.integer, flint.fmpz)):
        raise InvalidTypeError(f"matrix entry [{i}, {j}] = {x!r} is not an integer")
    return int(x)


def _fraction(x: object, i: int, j: int) -> Fraction:
    if type(x) is int or isinstance(x, Fraction):
        return Fraction(x)
    if isinstance(x, (float, np.floating)):
        if not math.isfinite(x):
            raise NonFiniteError(f"matrix entry [{i}, {j}] = {x!r} is not finite")
        return Fraction(float(x))  # the float's exact binary value
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (Rational, np.integer, flint.fmpz)):
        raise InvalidTypeError(f"matrix entry [{i}, {j}] = {x!r} is not a rational number")
    if isinstance(x, (Integral, np.integer, flint.fmpz)):
        return Fraction(int(x))
    return Fraction(int(x.numerator), int(x.denominator))


def _as_int_rows(a: np.ndarray | Sequence[Sequence[int]]) -> list[list[int]]:
    return [[_integer(x, i, j) for j, x in enumerate(row)] for i, row in enumerate(_matrix_rows(a))]


def _tall(rows: list[list[int]]) -> list[list[int]]:
    """The matrix or its transpose, whichever has at least as many rows as columns."""
    if rows and len(rows) < len(rows[0]):
        return [list(col) for col in zip(*rows)]
    return rows


def rank_mod_prime(a: np.ndarray | Sequence[Sequence[int]], q: int = PRIME) -> int:
    """Rank of an integer matrix reduced modulo the prime ``q`` (a lower bound on its rank over Q)."""
    rows = _as_int_rows(a)
    if not rows or not rows[0]:
        return 0
    return int(flint.nmod_mat([[x % q for x in row] for row in rows], q).rank())


def exact_rank(a: np.ndarray | Sequence[Sequence[int]], upper_bound: int | None = None) -> int:
    """The exact rank over Q of an integer matrix.

    ``upper_bound``, when given, must be a proven upper bound on the rank (for example rows minus
    the number of known independent left-kernel vectors); it only lets the fast modular rank stop
    early. The result never depends on it being tight.
    """
    rows = _as_int_rows(a)
    if not rows or not rows[0]:
        return 0
    bound = min(len(rows), len(rows[0]))
    if upper_bound is not None:
        bound = min(bound, count(upper_bound, "upper_bound", 0))
    r_mod = int(flint.nmod_mat([[x % PRIME for x in row] for row in rows], PRIME).rank())
    if r_mod >= bound:  # r_mod ≤ rank over Q ≤ bound
        return r_mod
    return int(flint.fmpz_mat(_tall(rows)).rank())


def integer_rows(a: np.ndarray | Sequence[Sequence[object]]) -> list[list[int]]:
    """Scale each row of a rational matrix by the lcm of its denominators (rank unchanged)."""
    out = []
    for i, row in enumerate(_matrix_rows(a)):
        check_time()
        if all(type(x) is int for x in row):
            out.append(row)
            continue
        fr = [_fraction(x, i, j) for j, x in enumerate(row)]
        m = lcm(*(f.denominator for f in fr)) if fr else 1
        out.append([int(f * m) for f in fr])
    return out


def rational_rank(
    a: np.ndarray | Sequence[Sequence[object]], upper_bound: int | None = None
) -> int:
    """Exact rank over Q of a matrix of ints / Fractions (rows are cleared of denominators)."""
    return exact_rank(integer_rows(a), upper_bound)


# --------------------------------------------------------------------------------------------
# Small rational matrices (Newton polyhedra)
# --------------------------------------------------------------------------------------------


def rank_of(rows: Sequence[Sequence[Fraction | int]]) -> int:
    """Exact rank of a small rational matrix (:func:`rational_rank`: rows cleared of
    denominators, then FLINT; Gaussian elimination over Fraction took 18 ms on the 40 × 30
    facet-normal matrices of Σ w_j², FLINT takes microseconds)."""
    return rational_rank(rows)


def primitive(v: Sequence[Fraction]) -> tuple[int, ...]:
    """The primitive integer vector with the direction of the non-zero rational vector v."""
    den = lcm(*(x.denominator for x in v))
    ints = [int(x * den) for x in v]
    g = math.gcd(*ints)
    return tuple(x // g for x in ints)


def nullspace(rows: Sequence[Sequence[Fraction | int]], ncols: int) -> list[list[Fraction]]:
    """Basis of {x : rows · x = 0} over Q (reduced row echelon form)."""
    m = [[Fraction(x) for x in r] for r in rows]
    pivots: list[int] = []
    r = 0
    for col in range(ncols):
        p = next((i for i in range(r, len(m)) if m[i][col] != 0), None)
        if p is None:
            continue
        m[r], m[p] = m[p], m[r]
        inv = 1 / m[r][col]
        m[r] = [a * inv for a in m[r]]
        for i in range(len(m)):
            if i != r and m[i][col] != 0:
                f = m[i][col]
                m[i] = [a - f * b for a, b in zip(m[i], m[r])]
        pivots.append(col)
        r += 1
    free = [c for c in range(ncols) if c not in pivots]
    basis = []
    for fcol in free:
        v = [Fraction(0)] * ncols
        v[fcol] = Fraction(1)
        for i, pc in enumerate(pivots):
            v[pc] = -m[i][fcol]
        basis.append(v)
    return basis


# --------------------------------------------------------------------------------------------
# Generic ranks of polynomial matrices by sampling
# --------------------------------------------------------------------------------------------

PRIME_LOW, PRIME_HIGH = 1 << 60, 1 << 61
"""Random primes are drawn uniformly from the primes in [2^60, 2^61)."""

PRIME_COUNT_LOWER = PRIME_LOW // 59
"""A lower bound on the number of primes in [2^60, 2^61): by Rosser–Schoenfeld (1962),
x/ln x < π(x) < 1.25506·x/ln x for x ≥ 17, so π(2^61) − π(2^60) > 2^60·(2/(61 ln 2) −
1.25506/(60 ln 2)) > 2^60/59."""

TARGET_FAILURE = Fraction(1, 10**30)
"""Random (prime, point) trials are added until the failure bound is at most 10^−30."""


@dataclass(frozen=True)
class GenericRank:
    """The generic rank r_gen of a polynomial matrix J(θ), as far as it is certified.

    Attributes:
        rank: the largest rank found at the random points. Always rank ≤ r_gen (a rank modulo a
            prime at an integer point is at most the rank over Q there, which is at most the
            generic rank), so this is a proven lower bound.
        upper_bound: a proven upper bound u ≥ r_gen supplied by the caller.
        certified: rank == upper_bound, hence rank == r_gen with certainty.
        failure_probability: when not certified, Pr[rank < r_gen] ≤ this value over the random
            primes and points (see :func:`sample_generic_rank`); 0 when certified.
        points: how many random (prime, point) pairs were ranked; seed: the numpy seed used.
    """

    rank: int
    upper_bound: int
    certified: bool
    failure_probability: Fraction
    points: int
    seed: int

    def describe(self) -> str:
        if self.certified:
            return (
                f"certified: the rank {self.rank} at a random point attains the proven upper bound "
                f"{self.upper_bound}"
            )
        return (
            f"probabilistic: the largest rank at {self.points} random points modulo random "
            f"61-bit primes (seed {self.seed}) is {self.rank} < proven bound {self.upper_bound}; "
            f"by Schwartz–Zippel the generic rank exceeds {self.rank} with probability "
            f"≤ δ = {float(self.failure_probability):.3g}"
        )

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-able data: the bound δ exactly, as the string of its fraction."""
        return {
            "rank": self.rank,
            "upper_bound": self.upper_bound,
            "certified": self.certified,
            "failure_probability": str(self.failure_probability),
            "points": self.points,
            "seed": self.seed,
            "description": self.describe(),
        }


def random_prime(rng: np.random.Generator) -> int:
    """A uniformly random prime in [2^60, 2^61) (rejection sampling; FLINT's test is proven)."""
    while True:
        c = int(rng.integers(PRIME_LOW, PRIME_HIGH)) | 1
        if flint.fmpz(c).is_prime():
            return c


def sample_generic_rank(
    sample: Callable[[np.random.Generator, int], np.ndarray],
    upper_bound: int,
    entry_degree: int,
    content_bits: Callable[[], int],
    seed: int = 0,
) -> GenericRank:
    """The generic rank of an integer polynomial matrix J(θ), by sampling modulo random primes.

    ``sample(rng, q)`` must return J(θ) (integer entries, any size) at a point θ uniform in F_q^N;
    ``upper_bound`` is a proven u ≥ r_gen; every entry has degree ≤ ``entry_degree`` in θ; and
    ``content_bits()`` returns L with log2|c(M)| ≤ L for the content (gcd of coefficients) of
    every nonzero minor M of size ≤ u (it is only called when the first trial does not certify).

    Each trial draws a uniformly random prime q ∈ [2^60, 2^61) and θ uniform in F_q^N and computes
    r_q = rank of J(θ) mod q. Always r_q ≤ rank_Q J(θ) ≤ r_gen, so the maximum over trials is a
    proven lower bound, certified equal to r_gen once it reaches u. Otherwise let M be a nonzero
    r_gen × r_gen minor (degree ≤ entry_degree·u). A trial fails only if (i) q | c(M) — at most
    L/60 of the more than ⌊2^60/59⌋ candidate primes divide c(M) — or (ii) q ∤ c(M) and
    M(θ) ≡ 0 mod q, probability ≤ entry_degree·u/q by Schwartz–Zippel over F_q. Trials are
    independent, so after t trials δ = (L/(60·⌊2^60/59⌋) + entry_degree·u/2^60)^t; trials are added
    until δ ≤ 10^−30 (at most 64). numpy's PCG64 generator with ``seed`` stands in for independent
    uniform draws.
    """
    if upper_bound <= 0:
        return GenericRank(0, 0, True, Fraction(0), 0, seed)
    rng = np.random.default_rng(seed)
    best, t, delta, per_trial = 0, 0, Fraction(1), None
    while True:
        q = random_prime(rng)
        best = max(best, rank_mod_prime(sample(rng, q), q))
        t += 1
        if best >= upper_bound:
            return GenericRank(best, upper_bound, True, Fraction(0), t, seed)
        if per_trial is None:
            per_trial = Fraction(content_bits(), 60 * PRIME_COUNT_LOWER) + Fraction(
                entry_degree * upper_bound, PRIME_LOW
            )
        delta *= per_trial
        if delta <= TARGET_FAILURE or t >= 64:
            return GenericRank(best, upper_bound, False, min(delta, Fraction(1)), t, seed)
