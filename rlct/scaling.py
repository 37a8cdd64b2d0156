"""Weights under which an ideal's generators are homogeneous: the torus action
x ↦ (s^(w_1)·x_1, …, s^(w_n)·x_n), s > 0, then maps the ideal to itself, so λ and m are constant
along its orbits (used by :mod:`rlct.blowup_coordinate` to move points over 0 to a chart's
origin)."""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from .lp import lp_min

__all__ = ["scaling_weights"]


def scaling_weights(
    ideal: Sequence[sp.Poly], free: Sequence[int]
) -> tuple[sp.Rational, ...] | None:
    """Rational weights w with every generator w-homogeneous (w·α equal over its monomials α)
    and w_i ≥ 1 for every i in ``free``, by an exact linear programme (:func:`rlct.lp.lp_min`:
    least Σ_(i ∈ free) w_i, with w_i = 1 + u_i for i in ``free`` and w_i = p_i − q_i otherwise,
    u, p, q ≥ 0); None where none exist. Then x ↦ (s^(w_i)·x_i) maps the ideal to itself for
    every s > 0. The point is checked against every equation in exact arithmetic all the same.

    (sympy 1.14's ``lpmin`` did this before: it turned ``Eq(e, 0)`` into one side only where
    ``e <= 0`` is rewritten as ``-e >= 0``, and returned w = (−1/2, 0, 1) for a³b²d ~ abd ~ ab,
    which is homogeneous for no weight with w_d ≥ 1; given the equations as pairs of
    inequalities, it cycled for minutes on some ideals under some hash seeds.)"""
    gens = ideal[0].gens
    n = len(gens)
    equal = set()
    for p in ideal:
        first, *rest = p.monoms()
        equal |= {tuple(a - b for a, b in zip(m, first)) for m in rest}
    diffs = sorted(equal)
    free_set = set(free)
    others = [i for i in range(n) if i not in free_set]
    order = [*sorted(free_set), *others]  # columns: u (free), then p and q (the others)
    rows = [[d[i] for i in order] + [-d[i] for i in others] for d in diffs]
    rhs = [-sum(d[i] for i in free_set) for d in diffs]
    cost = [1] * len(free_set) + [0] * (2 * len(others))
    solved = lp_min(cost, rows, rhs)
    if solved is None:
        return None
    _, x = solved
    w = dict(zip(sorted(free_set), (1 + v for v in x)))
    k = len(free_set)
    w.update({i: x[k + j] - x[k + len(others) + j] for j, i in enumerate(others)})
    weights = tuple(sp.Rational(w[i].numerator, w[i].denominator) for i in range(n))
    if any(sum(a * v for a, v in zip(d, weights)) != 0 for d in diffs):
        return None  # not expected: the programme's point fails an equation, so no claim
    if any(weights[i] < 1 for i in free_set):
        return None
    return weights
