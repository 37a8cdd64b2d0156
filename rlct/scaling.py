"""Weights under which an ideal's generators are homogeneous: the torus action
x ↦ (s^(w_1)·x_1, …, s^(w_n)·x_n), s > 0, then maps the ideal to itself, so λ and m are constant
along its orbits (used by :mod:`rlct.blowup_coordinate` to move points over 0 to a chart's
origin)."""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp
from sympy.solvers.simplex import InfeasibleLPError, lpmin

__all__ = ["scaling_weights"]


def scaling_weights(
    ideal: Sequence[sp.Poly], free: Sequence[int]
) -> tuple[sp.Rational, ...] | None:
    """Rational weights w with every generator w-homogeneous (w·α equal over its monomials α)
    and w_i ≥ 1 for every i in ``free``, by an exact linear programme; None where none exist.
    Then x ↦ (s^(w_i)·x_i) maps the ideal to itself for every s > 0."""
    gens = ideal[0].gens
    w = sp.symbols(f"w0:{len(gens)}")
    equal = set()
    for p in ideal:
        first, *rest = p.monoms()
        equal |= {tuple(a - b for a, b in zip(m, first)) for m in rest}
    constraints = [sp.Eq(sum(a * v for a, v in zip(d, w) if a), 0) for d in sorted(equal)]
    constraints += [w[i] >= 1 for i in free]
    try:
        _, point = lpmin(sum(w[i] for i in free), constraints)
    except InfeasibleLPError:
        return None
    return tuple(sp.Rational(point.get(v, 0)) for v in w)
