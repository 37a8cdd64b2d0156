"""Exact linear programmes over Q: min c·x subject to A·x = b, x ≥ 0.

The two-phase simplex method on a dense tableau of ``Fraction``s, pivoting by Bland's rule (the
entering column is the first with a negative reduced cost, the leaving row the first basic
variable among those with the least ratio), which cannot cycle: every programme ends, in at most
as many pivots as there are bases. ``sympy.solvers.simplex.lpmin`` chooses pivots without such a
rule and its order of constraints follows the hash of symbols: on the degenerate programmes of
:func:`rlct.algebra.scaling.scaling_weights` (equations given as pairs of inequalities) it cycled
for minutes under some values of ``PYTHONHASHSEED`` and ended in a second under others.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from ..errors import InvalidShapeError, RLCTError
from ..time_limit import check as check_time

__all__ = ["lp_min"]

Exact = int | Fraction  # an exact rational input


def lp_min(
    c: Sequence[Exact], a: Sequence[Sequence[Exact]], b: Sequence[Exact]
) -> tuple[Fraction, tuple[Fraction, ...]] | None:
    """(min c·x, a minimising basic x) over A·x = b, x ≥ 0, in exact arithmetic; None where no
    x is feasible. Raises ``RLCTError`` where c·x is unbounded below on the feasible set (never
    for c ≥ 0)."""
    n = len(c)
    rows = [[Fraction(v) for v in row] + [Fraction(r)] for row, r in zip(a, b, strict=True)]
    if any(len(row) != n + 1 for row in rows):
        raise InvalidShapeError(f"every row of A needs {n} entries, one for each entry of c")
    rows = [[-v for v in row] if row[-1] < 0 else row for row in rows]
    m = len(rows)
    # phase 1: artificial variables n … n + m − 1, one basic in each row
    tab = [
        row[:n] + [Fraction(int(i == k)) for k in range(m)] + [row[n]] for i, row in enumerate(rows)
    ]
    basis = list(range(n, n + m))
    _optimise(tab, basis, [Fraction(0)] * n + [Fraction(1)] * m)
    if sum(tab[i][-1] for i, v in enumerate(basis) if v >= n) != 0:
        return None
    _drive_out_artificials(tab, basis, n)
    tab = [[*row[:n], row[-1]] for row in tab]
    _optimise(tab, basis, [Fraction(v) for v in c])
    x = [Fraction(0)] * n
    for i, v in enumerate(basis):
        x[v] = tab[i][-1]
    return sum(Fraction(cv) * xv for cv, xv in zip(c, x)), tuple(x)


def _optimise(tab: list[list[Fraction]], basis: list[int], cost: list[Fraction]) -> None:
    """Pivot by Bland's rule until no reduced cost is negative (the tableau and basis in place)."""
    width = len(cost)
    while True:
        check_time()
        reduced = [
            cost[j] - sum(cost[v] * tab[i][j] for i, v in enumerate(basis)) for j in range(width)
        ]
        entering = next((j for j in range(width) if reduced[j] < 0 and j not in basis), None)
        if entering is None:
            return
        candidates = [i for i in range(len(tab)) if tab[i][entering] > 0]
        if not candidates:
            raise RLCTError("the linear programme is unbounded below")
        least = min(tab[i][-1] / tab[i][entering] for i in candidates)
        leaving = min(
            (i for i in candidates if tab[i][-1] / tab[i][entering] == least),
            key=lambda i: basis[i],
        )
        _pivot(tab, basis, leaving, entering)


def _drive_out_artificials(tab: list[list[Fraction]], basis: list[int], n: int) -> None:
    """Replace each artificial variable left basic (at value 0) by an original one, or drop its
    row where the row has no original entry (a redundant equation)."""
    i = 0
    while i < len(tab):
        if basis[i] >= n:
            j = next((j for j in range(n) if tab[i][j] != 0), None)
            if j is None:
                del tab[i], basis[i]
                continue
            _pivot(tab, basis, i, j)
        i += 1


def _pivot(tab: list[list[Fraction]], basis: list[int], r: int, j: int) -> None:
    p = tab[r][j]
    tab[r] = [v / p for v in tab[r]]
    for i, row in enumerate(tab):
        if i != r and row[j] != 0:
            f = row[j]
            tab[i] = [v - f * w for v, w in zip(row, tab[r])]
    basis[r] = j
