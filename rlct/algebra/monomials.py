"""The common monomial factor x^a of an ideal's generators, and the generators divided by it."""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

__all__ = ["common_monomial", "divide_monomial"]


def common_monomial(polys: Sequence[sp.Poly]) -> tuple[int, ...]:
    """The exponents of the generators' common monomial factor x^a (a_j: the least over terms)."""
    return tuple(min(m[j] for p in polys for m in p.monoms()) for j in range(len(polys[0].gens)))


def divide_monomial(p: sp.Poly, exponents: tuple[int, ...]) -> sp.Poly:
    """p / x^exponents, for a monomial that divides every term of p."""
    terms = {tuple(e - k for e, k in zip(m, exponents)): c for m, c in p.terms()}
    return sp.Poly.from_dict(terms, *p.gens, domain=sp.QQ)
