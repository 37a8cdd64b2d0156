"""The real zeros on RP^(n−1) of homogeneous polynomials F_1..F_k ∈ Q[x_1..x_n], exactly, when
they are finitely many rational points.

Method. Every point of RP^(n−1) has a unique representative whose first non-zero coordinate is 1:
x = (0, …, 0, 1, y_(i+1), …, y_n). For each i the affine system F(0, …, 0, 1, y) = 0 is decided by
a lex Gröbner basis G over Q (``rlct.algebra.groebner.bounded_groebner``; past its limits:
declined):

* G = [1]: no zero with first non-zero coordinate i (not even a complex one).
* G zero-dimensional: its last element is univariate in y_n; each irreducible factor over Q of
  degree 1 gives a rational value, and the system with y_n fixed is solved the same way in one
  variable fewer. A factor of degree ≥ 2 with a real root (an exact Sturm count) is an irrational
  real point: declined. Factors without real roots hold complex points only, which are not points
  of the real blow-up.
* G not zero-dimensional: the complex zero set is a curve or more, and its real points are not
  decided here: declined.

A form proven ≥ 0 (or ≤ 0) on R^n (``realzeros.certified_nonnegative``: x² + y², even powers)
has minima at its real zeros, so its partial derivatives are added to the system: x² + y² alone
has a curve of complex zeros, but with 2x and 2y only the real point x = y = 0.

"Declined" is ``None``: the caller does not guess. Sizes are bounded before any basis is computed
(degree, terms, and the Bezout number of the system: :func:`too_costly`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import sympy as sp
from sympy.polys.orderings import lex

from .factor import factor_list
from .groebner import bounded_groebner, is_zero_dimensional
from .realzeros import certified_nonnegative

__all__ = [
    "MAX_FORM_DEGREE",
    "MAX_FORM_TERMS",
    "affine_zeros",
    "real_projective_zeros",
    "too_costly",
]

MAX_FORM_DEGREE = 8  # forms of higher degree are declined: a lex basis grows too fast
MAX_FORM_TERMS = 40  # nor more terms in all the forms together
MAX_BEZOUT_PLANE = 36  # Bezout number of the system in three variables (charts of dimension 2)
MAX_BEZOUT = 8  # and in more

Point = tuple[Fraction, ...]


def real_projective_zeros(
    forms: Sequence[sp.Poly], gens: Sequence[sp.Symbol]
) -> tuple[Point, ...] | None:
    """The real common zeros of the homogeneous ``forms`` on RP^(n−1), each normalised to first
    non-zero coordinate 1, in lexicographic order; None when they are not proven to be finitely
    many rational points (or the forms are over the size limits)."""
    gens = list(gens)
    forms = [f for f in forms if not f.is_zero]
    if not forms:
        return None  # every point is a zero
    if max(f.total_degree() for f in forms) > MAX_FORM_DEGREE:
        return None
    if sum(len(f.terms()) for f in forms) > MAX_FORM_TERMS:
        return None
    semidefinite = [f for f in forms if _semidefinite(f, gens)]
    forms = forms + [f.diff(x) for f in semidefinite for x in gens if f.degree(x) > 0]
    if too_costly([f.total_degree() for f in forms], len(gens)):
        return None
    points: list[Point] = []
    for i in range(len(gens)):
        fixed = {**{g: 0 for g in gens[:i]}, gens[i]: 1}
        system = [f.as_expr().xreplace(fixed) for f in forms]
        found = affine_zeros(system, gens[i + 1 :])
        if found is None:
            return None
        points += [(*(Fraction(0),) * i, Fraction(1), *p) for p in found]
    return tuple(sorted(points))


def too_costly(degrees: list[int], n: int) -> bool:
    """Fewer than n − 1 forms always share a curve of complex zeros (the projective dimension
    theorem): no finite answer. Otherwise the Bezout number of the n − 1 lowest degrees bounds
    the work of a lex basis; past 36 points in three variables, or 8 in more, it took from
    seconds to minutes on dense random forms, and the step declines."""
    if len(degrees) < n - 1:
        return True
    bezout = math.prod(sorted(degrees)[: n - 1])
    return bezout > (MAX_BEZOUT_PLANE if n <= 3 else MAX_BEZOUT)


def _semidefinite(f: sp.Poly, gens: list[sp.Symbol]) -> bool:
    e = f.as_expr()
    return certified_nonnegative(e, gens) or certified_nonnegative(-e, gens)


def affine_zeros(system: list[sp.Expr], ys: list[sp.Symbol]) -> list[Point] | None:
    """The real zeros in Q^len(ys) of ``system`` when its complex zeros are finitely many and
    the real ones rational; None otherwise."""
    system = [sp.expand(e) for e in system]
    system = [e for e in system if e != 0]
    if any(e.is_number for e in system):
        return []  # a non-zero constant: no zero
    if not ys:
        return [()]
    if not system:
        return None  # all of Q^len(ys)
    basis = bounded_groebner(system, ys, lex)
    if basis is None:
        return None  # past the limits of rlct.algebra.groebner: undecided
    if basis == [1]:
        return []
    if not is_zero_dimensional(basis, ys, lex):
        return None
    last = sp.Poly(basis[-1], ys[-1], domain=sp.QQ)
    values = _rational_real_roots(last)
    if values is None:
        return None
    out: list[Point] = []
    for r in values:
        rest = [e.xreplace({ys[-1]: sp.Rational(r.numerator, r.denominator)}) for e in basis]
        sub = affine_zeros(rest, ys[:-1])
        if sub is None:
            return None
        out += [(*p, r) for p in sub]
    return out


def _rational_real_roots(p: sp.Poly) -> list[Fraction] | None:
    """The real roots of a univariate p over Q when all are rational, else None."""
    roots: list[Fraction] = []
    for factor, _ in factor_list(p)[1]:
        if factor.degree() == 1:
            a, b = factor.all_coeffs()
            r = -sp.Rational(b) / sp.Rational(a)
            roots.append(Fraction(int(r.p), int(r.q)))
        elif factor.count_roots() > 0:  # Sturm: exact number of real roots
            return None
    return sorted(set(roots))
