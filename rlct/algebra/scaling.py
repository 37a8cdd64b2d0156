"""Weights under which an ideal's generators are homogeneous: the torus action
x ↦ (s^(w_1)·x_1, …, s^(w_n)·x_n), s > 0, then maps the ideal to itself, so λ and m are constant
along its orbits (used by :mod:`rlct.blowup.coordinate` to move points over 0 to a chart's
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
    and w_i ≥ 1 for every i in ``free``, by an exact linear programme
    (:func:`rlct.algebra.lp.lp_min`: least Σ_(i ∈ free) w_i, with w_i = 1 + u_i for i in ``free``
    and w_i = p_i − q_i otherwise, u, p, q ≥ 0); None where none exist. Then x ↦ (s^(w_i)·x_i) maps
    the ideal to itself for every s > 0. The point is checked against every equation in exact
    arithmetic all the same.

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
    fixed = sorted(set(free))  # w_i = 1 + u_i
    signed = [i for i in range(n) if i not in fixed]  # w_i = p_i − q_i
    rows = [[d[i] for i in fixed] + [d[i] for i in signed] + [-d[i] for i in signed] for d in diffs]
    rhs = [-sum(d[i] for i in fixed) for d in diffs]
    solved = lp_min([1] * len(fixed) + [0] * (2 * len(signed)), rows, rhs)
    if solved is None:
        return None
    x = solved[1]
    u, p, q = x[: len(fixed)], x[len(fixed) : n], x[n:]
    w = dict(zip(fixed, (1 + v for v in u))) | {i: a - b for i, a, b in zip(signed, p, q)}
    weights = tuple(sp.Rational(w[i].numerator, w[i].denominator) for i in range(n))
    if any(sum(a * v for a, v in zip(d, weights)) != 0 for d in diffs):
        return None  # not expected (the programme is exact): a failing point makes no claim
    return weights
