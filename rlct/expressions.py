"""Polynomials given by the user: accepted types, safe parsing, and size bounds.

K (or an ideal generator) may be a sympy expression, a sympy ``Poly`` (read as its expression,
then checked as one), an integer or exact fraction, or a string read by
:func:`rlct.parsing.parse_expression` (never evaluated as code). Before sympy expands anything,
:func:`check_size` bounds the expanded polynomial from the expression tree: total
degree D ≤ ``MAX_DEGREE`` and at most ``MAX_TERMS`` terms (bounded by the tree, and by
C(n + D, n), the number of monomials of degree ≤ D in n variables), so ``(x + y)**5000`` is
refused at once instead of expanded.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from numbers import Rational

import numpy as np
import sympy as sp

from ._validate import exact_rational, items
from .errors import InvalidTypeError, NotPolynomialError, TooLargeError
from .parsing import parse_expression

__all__ = [
    "MAX_DEGREE",
    "MAX_GENERATORS",
    "MAX_TERMS",
    "MAX_VARIABLES",
    "as_expression",
    "as_variables",
    "check_size",
]

MAX_DEGREE = 500
"""The largest total degree of a polynomial K or generator f_i. (Degenerate faces of high degree
are what costs time afterwards: K = (x − y)^400 takes about 1.4 s in two variables, with FLINT's
factorisations, ``rlct.algebra.factor``; in three or more, the Gröbner bases of the non-degeneracy
decision are sympy's: (x + y + z)^60 about 2 minutes, (x + y + z + w)^20 about 3.)"""

MAX_TERMS = 2000
"""The largest number of terms of a polynomial once expanded (the Newton polyhedron's set-up is
quadratic in the number of terms)."""


MAX_VARIABLES = 64
"""The most variables a polynomial may have (the face enumeration bounds the work as well)."""

MAX_GENERATORS = 1000
"""The most generators of an ideal."""


def as_variables(variables: object) -> tuple[sp.Symbol, ...]:
    """The variables: an ordered sequence of distinct sympy Symbols."""
    vs = items(variables, "variables", NotPolynomialError, "sympy Symbols", MAX_VARIABLES)
    if not vs:
        raise NotPolynomialError("no variables given")
    if len(set(vs)) != len(vs) or not all(isinstance(v, sp.Symbol) for v in vs):
        raise NotPolynomialError(f"variables must be distinct sympy Symbols, got {variables!r}")
    return tuple(vs)  # type: ignore[arg-type]


def as_expression(value: object, name: str, variables: Sequence[sp.Symbol]) -> sp.Expr:
    """The sympy expression of a polynomial argument (see the module docstring)."""
    if isinstance(value, str):
        names = {str(v): v for v in variables}
        if len(names) < len(variables):
            raise NotPolynomialError(
                f"{name} is a string but two variables share a name, so it is ambiguous"
            )
        return parse_expression(value, name, names, NotPolynomialError)
    if isinstance(value, (float, np.floating, sp.Float)):
        raise NotPolynomialError(
            f"{name} = {value!r} is a floating-point number; use exact rationals"
        )
    if isinstance(value, sp.Expr):
        return value
    if isinstance(value, sp.Poly):
        if value.domain.is_FiniteField:  # as_expr would drop the multiples of p: 7xy mod 7 = 0
            raise NotPolynomialError(
                f"{name} is a Poly over {value.domain}; K is a polynomial over the rationals: "
                "build the Poly without modulus"
            )
        return value.as_expr()  # its generators and coefficients are checked as an expression's
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Rational, np.integer)):
        raise InvalidTypeError(
            f"{name} must be a sympy expression or Poly, an int, a Fraction or a string, got "
            f"{value!r} ({type(value).__name__})"
        )
    return exact_rational(value, name)


def _bounds(
    e: sp.Expr, args: list[tuple[int, int]], variables: set[sp.Symbol], name: str, limit: int
) -> tuple[int, int]:
    """(degree, number of terms) bounds of e expanded, from those of its arguments."""
    if e in variables:
        return 1, 1
    if not e.free_symbols & variables:
        return 0, 1  # a constant (its domain is checked when the polynomial is built)
    if isinstance(e, sp.Add):
        return max(d for d, _ in args), sum(t for _, t in args)
    if isinstance(e, sp.Mul):
        terms = 1
        for _, t in args:
            terms = min(terms * t, limit + 1)
        return sum(d for d, _ in args), terms
    if isinstance(e, sp.Pow) and isinstance(e.exp, sp.Integer) and e.exp >= 0:
        k = int(e.exp)
        (d, t), _ = args
        if d * k > MAX_DEGREE:
            raise TooLargeError(
                f"{name} has degree up to {d * k} (from {e.base}**{k}); at most {MAX_DEGREE} "
                "is accepted"
            )
        return d * k, comb(t + k - 1, k)
    raise NotPolynomialError(
        f"{name} is not a polynomial in {sorted(variables, key=str)}: it contains {e}"
    )


def check_size(
    expr: sp.Expr, variables: Sequence[sp.Symbol], name: str, max_terms: int = MAX_TERMS
) -> None:
    """Refuse a polynomial whose expansion could exceed MAX_DEGREE or ``max_terms`` terms
    (TooLargeError), or whose tree holds a non-polynomial part (1/x, sin x, √x:
    NotPolynomialError). A user's K is held to MAX_TERMS; polynomials rlct builds from it
    (:mod:`rlct.reductions.changes`) to a larger ``max_terms``."""
    vs = set(variables)
    done: dict[sp.Basic, tuple[int, int]] = {}
    stack: list[tuple[sp.Basic, bool]] = [(expr, False)]
    while stack:  # post-order without recursion
        e, ready = stack.pop()
        if e in done:
            continue
        if not ready and e.args and e not in vs:
            stack.append((e, True))
            stack.extend((a, False) for a in e.args)
            continue
        done[e] = _bounds(e, [done[a] for a in e.args] if ready else [], vs, name, max_terms)
    degree, terms = done[expr]
    terms = min(terms, comb(len(vs) + degree, degree))
    if degree > MAX_DEGREE:
        raise TooLargeError(f"{name} has degree up to {degree}; at most {MAX_DEGREE} is accepted")
    if terms > max_terms:
        raise TooLargeError(
            f"{name} would expand to up to {terms} terms (degree ≤ {degree} in {len(vs)} "
            f"variables); at most {max_terms} are accepted"
        )
