"""Linear networks at points of their zero set away from the origin (issue 64).

A factorisation (W_1, …, W_L) (input first) of a true map W* = W_L⋯W_1 is, up to bases of the
spaces, a sum of *intervals*: an interval [a, b] (0 ≤ a ≤ b ≤ L) is one basis vector in each
space a, …, b that W_(a+1), …, W_b carry along and W_(b+1) sends to 0. The ranks of the partial
products decide the intervals and back (type-A quiver representations):

    rank(W_j⋯W_(i+1)) = #{intervals [a, b] with a ≤ i, j ≤ b},     rank of the empty product h_i,
    #[a, b] = r(a, b) − r(a − 1, b) − r(a, b + 1) + r(a − 1, b + 1)   (r = 0 outside 0..L),

so W* has rank #[0, L] and width h_k is the number of intervals through space k. A dead hidden
unit is an interval [k, k]; a layer of lower rank than its neighbours allow cuts intervals there.
:func:`chain` builds the partial-permutation chain of an interval list, :func:`disguise` moves it
by unimodular integer changes of basis g_k (W_k ↦ g_k W_k g_(k−1)⁻¹: integer entries, the same
ranks, hence the same local λ), and :func:`partial_product_ranks` / :func:`intervals_of` go from
a chain's ranks back to its intervals (for trained, float, weights after a numerical rank
decision: :mod:`verification.experiments.local_rank`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import sympy as sp

from .errors import InvalidArgumentError

__all__ = ["chain", "disguise", "intervals_of", "partial_product_ranks", "widths_of"]

Interval = tuple[int, int]
IntMatrix = tuple[tuple[int, ...], ...]


def _check(intervals: Sequence[Interval], L: int) -> None:
    if L < 1:
        raise InvalidArgumentError(f"a network needs at least one layer, got L = {L}")
    for a, b in intervals:
        if not 0 <= a <= b <= L:
            raise InvalidArgumentError(f"interval [{a}, {b}] is not inside the spaces 0..{L}")


def widths_of(intervals: Sequence[Interval], L: int) -> tuple[int, ...]:
    """h_k = the number of intervals through space k, k = 0..L."""
    _check(intervals, L)
    return tuple(sum(a <= k <= b for a, b in intervals) for k in range(L + 1))


def chain(intervals: Sequence[Interval], L: int) -> tuple[IntMatrix, ...]:
    """(W_1, …, W_L), 0/1 partial permutations: interval i's vector in space k goes to its vector
    in space k + 1 when the interval goes on, to 0 when it ends at k. Every width must be ≥ 1."""
    hs = widths_of(intervals, L)
    if min(hs) == 0:
        raise InvalidArgumentError(f"the intervals leave a space empty: widths {hs}")
    index = [{i: pos for pos, i in enumerate(j for j, (a, b) in enumerate(intervals) if a <= k <= b)}
             for k in range(L + 1)]  # fmt: skip
    layers = []
    for k in range(1, L + 1):
        W = [[0] * hs[k - 1] for _ in range(hs[k])]
        for i, (a, b) in enumerate(intervals):
            if a <= k - 1 and k <= b:
                W[index[k][i]][index[k - 1][i]] = 1
        layers.append(tuple(map(tuple, W)))
    return tuple(layers)


def _unimodular(h: int, rng: random.Random, steps: int) -> sp.Matrix:
    """An integer matrix of determinant ±1: ``steps`` row operations row_i += c·row_j and sign
    flips from the identity (its inverse is an integer matrix too)."""
    g = sp.eye(h)
    for _ in range(steps if h > 1 else 0):
        i, j = rng.sample(range(h), 2)
        g[i, :] = g[i, :] + rng.choice((-1, 1, 2)) * g[j, :]
    for i in range(h):
        if rng.random() < 0.3:
            g[i, :] = -g[i, :]
    return g


def disguise(
    layers: Sequence[IntMatrix], seed: int, *, steps: int = 2, spaces: Sequence[int] | None = None
) -> tuple[IntMatrix, ...]:
    """W_k ↦ g_k W_k g_(k−1)⁻¹ with unimodular g_k drawn from ``random.Random(seed)`` on the
    ``spaces`` listed (default all, 0..L; g = I elsewhere). The ranks of all partial products,
    hence the intervals and the local λ, do not change; W* becomes g_L W* g_0⁻¹."""
    L = len(layers)
    rng = random.Random(seed)
    hs = [len(layers[0][0]), *(len(w) for w in layers)]
    chosen = set(range(L + 1) if spaces is None else spaces)
    gs = [_unimodular(h, rng, steps) if k in chosen else sp.eye(h) for k, h in enumerate(hs)]
    out = []
    for k, w in enumerate(layers, start=1):
        moved = gs[k] * sp.Matrix(w) * gs[k - 1].inv()
        out.append(tuple(tuple(int(x) for x in moved.row(i)) for i in range(moved.rows)))
    return tuple(out)


def partial_product_ranks(ranks_of: dict[tuple[int, int], int], L: int) -> dict[Interval, int]:
    """Validated r(i, j) for 0 ≤ i ≤ j ≤ L (``ranks_of`` must hold every pair)."""
    missing = [(i, j) for i in range(L + 1) for j in range(i, L + 1) if (i, j) not in ranks_of]
    if missing:
        raise InvalidArgumentError(f"ranks of the partial products missing for {missing}")
    return {(i, j): ranks_of[(i, j)] for i in range(L + 1) for j in range(i, L + 1)}


def intervals_of(ranks_of: dict[tuple[int, int], int], L: int) -> list[Interval]:
    """The intervals of a chain from r(i, j) = rank(W_j⋯W_(i+1)) (r(i, i) = h_i), by the
    module docstring's formula; ``InvalidArgumentError`` when a count comes out negative (the
    ranks are not those of any chain: an inconsistent numerical rank decision)."""
    r = partial_product_ranks(ranks_of, L)

    def at(i: int, j: int) -> int:
        return r[(i, j)] if 0 <= i <= j <= L else 0

    out: list[Interval] = []
    for a in range(L + 1):
        for b in range(a, L + 1):
            count = at(a, b) - at(a - 1, b) - at(a, b + 1) + at(a - 1, b + 1)
            if count < 0:
                raise InvalidArgumentError(
                    f"the partial-product ranks {r} give {count} intervals [{a}, {b}]: they are "
                    "not the ranks of any chain of linear maps"
                )
            out += [(a, b)] * count
    return out


def _rrr(r: int, p: int, q: int, s: int, t: int, u: int) -> list[Interval]:
    """RRR intervals: r through, p killed by B, q from B alone, s ker A, t dead units, u
    outputs outside the image of B (M = r + p + s, H = r + p + q + t, N = r + q + u)."""
    return [(0, 2)] * r + [(0, 1)] * p + [(1, 2)] * q + [(0, 0)] * s + [(1, 1)] * t + [(2, 2)] * u


DEAD = "inactive unit"
LOWER = "a middle layer of lower rank"
GENERIC = "generic-rank factors"

# (intervals, L, label, visible): ``visible`` keeps the hidden bases (a dead unit stays a zero
# row and column); the others are moved by unimodular g_k on every space
_POINTS: tuple[tuple[list[Interval], int, str, bool], ...] = (
    (_rrr(1, 0, 0, 1, 1, 1), 2, DEAD, True),
    (_rrr(1, 1, 0, 0, 0, 2), 2, "A surjective", False),
    (_rrr(1, 1, 0, 0, 0, 3), 2, "A surjective", False),
    (_rrr(0, 2, 0, 1, 0, 3), 2, "B = 0, A surjective", False),
    (_rrr(1, 1, 1, 0, 0, 4), 2, "", False),
    (_rrr(2, 0, 1, 4, 0, 1), 2, "", False),
    (_rrr(2, 0, 0, 1, 0, 1), 2, GENERIC, False),
    (_rrr(2, 1, 1, 3, 0, 2), 2, "", False),
    (_rrr(1, 2, 2, 2, 1, 2), 2, DEAD, True),
    (_rrr(3, 2, 1, 5, 0, 4), 2, "", False),
    ([(0, 3), (0, 1), (2, 3)], 3, LOWER, False),
    ([(0, 3), (0, 3), (0, 0), (3, 3)], 3, GENERIC, False),
    ([(0, 2), (2, 3), (3, 3), (3, 3)], 3, "W* = 0, first layers injective", False),
    ([(0, 2), (2, 3), (2, 3), (3, 3)], 3, "W* = 0, first layers injective", False),
    ([(0, 3), (0, 2), (1, 3), (0, 0), (3, 3)], 3, "", False),
    ([(0, 3), (0, 1), (0, 2), (3, 3), (3, 3)], 3, "", False),
    ([(0, 2), (0, 2), (2, 2), (2, 3), (2, 3), (3, 3)], 3, "", False),
    ([(0, 0)] * 3 + [(0, 2), (0, 3), (1, 3), (3, 3), (3, 3)], 3, "", False),
    ([(0, 1)] * 3 + [(0, 3), (1, 1), (1, 1), (2, 3), (2, 3)], 3, LOWER, False),
    ([(0, 3), (1, 1), (1, 2), (0, 0), (3, 3)], 3, DEAD, True),
    ([(0, 4), (0, 1), (2, 4), (0, 0), (4, 4)], 4, LOWER, False),
    ([(0, 2), (0, 3), (2, 2), (2, 2), (2, 4), (3, 4), (3, 4), (3, 4), (4, 4)], 4, "", False),
    ([(0, 3)] * 3 + [(0, 1)] * 2 + [(2, 3)] * 2 + [(0, 0)] * 3 + [(3, 3)] * 3, 3, LOWER, False),
    ([(0, 3)] * 2 + [(0, 2)] * 2 + [(1, 3)] * 2 + [(0, 0)] * 2 + [(3, 3)] * 2 + [(1, 2)], 3, "",
     False),
    ([(0, 3)] * 3 + [(0, 2)] * 3 + [(1, 3)] * 2 + [(1, 1)] + [(0, 0)] * 4 + [(3, 3)] * 3, 3, DEAD,
     False),
)  # fmt: skip


def network_points() -> list:
    """The battery's and the catalogue's linear networks away from the origin: 10 reduced-rank
    regressions and 15 deep linear networks of 8–249 parameters, every one with an exact local
    λ (``FactorisedCase.exact``), at disguised or visible (dead unit) factorisations."""
    from .cases import FactorisedCase

    out = []
    for i, (intervals, L, label, visible) in enumerate(_POINTS):
        layers = chain(intervals, L)
        spaces = (0, L) if visible else None
        out.append(FactorisedCase(disguise(layers, seed=100 + i, spaces=spaces), label))
    return out


REPORT_POINTS = (
    "rrr(M=2,N=3,H=2,r=1) at rank A, B = 2,1 (A surjective)",
    "rrr(M=2,N=4,H=2,r=1) at rank A, B = 2,1 (A surjective)",
    "dln(1-1-2-3,r=0) at layer ranks 1,1,1 (W* = 0, first layers injective)",
)


def report_points() -> list:
    """The verification report's (full catalogue's) networks away from the origin: three of at
    most 12 parameters whose local λ exceeds the global one (3 against 5/2, 4 against 3,
    3/2 against 1/2)."""
    by_name = {c.name: c for c in network_points()}
    return [by_name[name] for name in REPORT_POINTS]
