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
    Then x ↦ (s^(w_i)·x_i) maps the ideal to itself for every s > 0.

    Each equation w·(α − β) = 0 goes to the solver as the two inequalities ≥ 0 and ≤ 0: sympy
    1.14's ``lpmin`` turns ``Eq(e, 0)`` into one side only where ``e <= 0`` is rewritten as
    ``-e >= 0`` (a leading minus sign), and so returned w = (−1/2, 0, 1) for
    a³b²d ~ abd ~ ab, which is homogeneous for no weight with w_d ≥ 1. The point returned is
    checked against every constraint in exact arithmetic all the same."""
    gens = ideal[0].gens
    w = sp.symbols(f"w0:{len(gens)}")
    equal = set()
    for p in ideal:
        first, *rest = p.monoms()
        equal |= {tuple(a - b for a, b in zip(m, first)) for m in rest}
    forms = [sum(a * v for a, v in zip(d, w) if a) for d in sorted(equal)]
    constraints = [c for f in forms for c in (sp.Ge(f, 0), sp.Le(f, 0))]
    constraints += [w[i] >= 1 for i in free]
    try:
        _, point = lpmin(sum(w[i] for i in free), constraints)
    except InfeasibleLPError:
        return None
    weights = tuple(sp.Rational(point.get(v, 0)) for v in w)
    at = dict(zip(w, weights))
    if any(f.xreplace(at) != 0 for f in forms) or any(weights[i] < 1 for i in free):
        return None  # the solver's point fails a constraint: no weights are claimed
    return weights
