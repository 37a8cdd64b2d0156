"""Quadratic forms: exact positive semi-definiteness and rank, and λ of K = xᵀAx ≥ 0.

A form K = xᵀAx with A ⪰ 0 of rank r becomes y_1² + … + y_r² under a linear change of coordinates
y = Px (P invertible), whose Jacobian is a non-zero constant: under a uniform prior on the
variables K depends on, λ = r/2 with m = 1 (REFERENCE §2, a regular model in r directions).
``psd_rank`` decides A ⪰ 0 and r by symmetric elimination over Q: a positive pivot is taken out
(A ⪰ 0 iff its Schur complement is), a negative diagonal entry disproves it, and a remainder with
zero diagonal is ⪰ 0 only if it is zero.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..result import RLCT, Condition

__all__ = ["form_matrix", "psd_rank", "quadratic_form_rlct", "uniform_form"]


def form_matrix(p: sp.Poly) -> list[list[Fraction]] | None:
    """A with p = xᵀAx over p's generators, when p is a homogeneous quadratic; else None."""
    if p.is_zero or not p.is_homogeneous or p.total_degree() != 2:
        return None
    k = len(p.gens)
    a = [[Fraction(0)] * k for _ in range(k)]
    for monom, c in p.terms():
        idx = [j for j, e in enumerate(monom) for _ in range(e)]
        q = Fraction(int(sp.Rational(c).p), int(sp.Rational(c).q))
        i, j = idx
        if i == j:
            a[i][i] += q
        else:
            a[i][j] += q / 2
            a[j][i] += q / 2
    return a


def psd_rank(a: list[list[Fraction]]) -> int | None:
    """rank(A) when the symmetric rational A is positive semi-definite, else None (exact)."""
    m = [row[:] for row in a]
    active = list(range(len(m)))
    rank = 0
    while active:
        if any(m[i][i] < 0 for i in active):
            return None
        i = max(active, key=lambda j: m[j][j])
        if m[i][i] == 0:  # zero diagonal: ⪰ 0 only if every remaining entry is zero
            return rank if all(m[r][c] == 0 for r in active for c in active) else None
        active.remove(i)
        for r in active:
            f = m[r][i] / m[i][i]
            if f:
                for c in active:
                    m[r][c] -= f * m[i][c]
        rank += 1
    return rank


def uniform_form(p: sp.Poly, h: tuple[sp.Rational, ...]) -> list[list[Fraction]] | None:
    """A restricted to the variables p = xᵀAx involves, when p is a homogeneous quadratic and
    their prior exponents are 0 (a linear change of them keeps a uniform prior); else None."""
    a = form_matrix(p)
    if a is None:
        return None
    present = [j for j in range(len(a)) if any(a[j])]
    if any(h[j] != 0 for j in present):
        return None
    return [[a[i][j] for j in present] for i in present]


def quadratic_form_rlct(p: sp.Poly, h: tuple[sp.Rational, ...]) -> RLCT | None:
    """λ = r/2, m = 1 for K = xᵀAx with A ⪰ 0 of rank r (module docstring), when the prior
    exponents of the variables K depends on are 0; None where K is not such a form or a prior
    exponent there is not 0 (the linear change would move it)."""
    a = uniform_form(p, h)
    if a is None:
        return None
    r = psd_rank(a)
    if r is None or r == 0:
        return None
    cond = Condition(
        f"K is a positive semi-definite quadratic form of rank {r} (symmetric elimination over "
        f"Q): a linear change of coordinates makes it y_1² + … + y_{r}², and the prior is uniform "
        "in the variables it depends on",
        True,
    )
    return RLCT.exact_value(sp.Rational(r, 2), 1, "positive semi-definite quadratic form", (cond,))
