"""Gröbner bases with a bound on their cost.

``sympy.groebner`` has none: a random draw of ``tests/test_rlct_blowup.py`` spent over ten
minutes in one ideal quotient of :mod:`rlct.blowup_families` (at most 24 input terms).
:func:`bounded_groebner` is Buchberger's algorithm over Q (the normal selection strategy, the
product and chain criteria, full reduction of each S-polynomial, then the reduced basis) that gives
up, returning None, after ``MAX_REDUCTIONS`` S-polynomials, or when the basis would hold more than
``MAX_BASIS`` polynomials, one of more than ``MAX_TERMS`` terms or a coefficient of more than
``MAX_BITS`` bits; its caller then declines, as it does at its other limits. Within the limits the
result is *the* reduced Gröbner basis (unique for the order), which ``sympy.groebner`` also returns.
The 521 quotients that the blow-up tests compute (up to 24 terms) need at most 200 reductions, a
basis of 20, 100 terms and 32 bits, and give the same bases as sympy's in 1.3× its time; the
limits sit 2.5–30× above that, and the cyclic-6 system (lex) is declined in about a second.
FLINT's ``buchberger_naive`` (python-flint) was tried first: over Z its coefficients grow so fast
that a 2,048-bit limit refused small three-variable ideals that sympy finishes in 0.05 s, and
without it the cyclic-6 system ran for minutes.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp
from sympy.polys.monomials import monomial_div, monomial_divides, monomial_lcm, monomial_mul
from sympy.polys.orderings import MonomialOrder
from sympy.polys.rings import PolyElement, ring

__all__ = [
    "MAX_BASIS",
    "MAX_BITS",
    "MAX_REDUCTIONS",
    "MAX_TERMS",
    "bounded_groebner",
    "in_ideal",
    "is_zero_dimensional",
]

MAX_REDUCTIONS = 500  # S-polynomials reduced
MAX_BASIS = 64  # polynomials in the basis while it is built
MAX_TERMS = 500  # terms of one of them
MAX_BITS = 1_024  # bits of a numerator or denominator of one coefficient


def bounded_groebner(
    polys: Sequence[sp.Expr], gens: Sequence[sp.Symbol], order: MonomialOrder
) -> list[sp.Expr] | None:
    """The reduced Gröbner basis of ⟨polys⟩ over Q in ``gens`` under ``order`` (monic, by
    decreasing leading monomial, as ``sympy.groebner`` lists it), or None over the limits (module
    docstring)."""
    r, *_ = ring(list(gens), sp.QQ, order=order)
    basis: list[PolyElement] = []
    pairs: set[tuple[int, int]] = set()
    for f in polys:
        if not _add(basis, pairs, r(sp.expand(f))):
            return None
    for _ in range(MAX_REDUCTIONS):
        if not pairs:
            return [g.as_expr() for g in _reduced(basis, r)]
        i, j = min(pairs, key=lambda p: r.order(_lcm(basis, p)))
        pairs.discard((i, j))
        if _skip(basis, pairs, i, j):
            continue
        if not _add(basis, pairs, _s_polynomial(basis[i], basis[j])):
            return None
    return None


def _lcm(basis: list[PolyElement], pair: tuple[int, int]) -> tuple[int, ...]:
    return monomial_lcm(basis[pair[0]].LM, basis[pair[1]].LM)


def _skip(basis: list[PolyElement], pairs: set[tuple[int, int]], i: int, j: int) -> bool:
    """Buchberger's criteria: coprime leading monomials, or a k whose leading monomial divides
    the pair's lcm with both of its pairs (i, k), (j, k) already treated."""
    lcm = _lcm(basis, (i, j))
    if monomial_mul(basis[i].LM, basis[j].LM) == lcm:
        return True
    for k, g in enumerate(basis):
        if k in (i, j) or not g or not monomial_divides(g.LM, lcm):
            continue
        if (min(i, k), max(i, k)) not in pairs and (min(j, k), max(j, k)) not in pairs:
            return True
    return False


def _s_polynomial(f: PolyElement, g: PolyElement) -> PolyElement:
    lcm = monomial_lcm(f.LM, g.LM)
    return f.mul_monom(monomial_div(lcm, f.LM)) - g.mul_monom(monomial_div(lcm, g.LM))


def _add(basis: list[PolyElement], pairs: set[tuple[int, int]], f: PolyElement) -> bool:
    """Reduce f by the basis and add what is left (monic) with its pairs; False when that
    passes a limit."""
    h = f.rem([g for g in basis if g]) if basis else f
    if not h:
        return True
    if len(basis) >= MAX_BASIS or len(h.terms()) > MAX_TERMS or _bits(h) > MAX_BITS:
        return False
    h = h.monic()
    pairs.update((k, len(basis)) for k in range(len(basis)))
    basis.append(h)
    return True


def _bits(f: PolyElement) -> int:
    return max(
        max(int(c.numerator).bit_length(), int(c.denominator).bit_length()) for c in f.coeffs()
    )


def _reduced(basis: list[PolyElement], r) -> list[PolyElement]:
    """The reduced basis: leading monomials divisible by another's dropped, each element
    reduced by the rest, monic, by decreasing leading monomial."""
    kept: list[PolyElement] = []
    for g in sorted((g for g in basis if g), key=lambda g: r.order(g.LM)):
        if not any(monomial_divides(k.LM, g.LM) for k in kept):
            kept.append(g)
    out = [g.rem([k for k in kept if k is not g]).monic() for g in kept]
    return sorted(out, key=lambda g: r.order(g.LM), reverse=True)


def in_ideal(f: sp.Expr, basis: Sequence[sp.Expr], gens: Sequence[sp.Symbol], order) -> bool:
    """f ∈ ⟨basis⟩, ``basis`` a Gröbner basis under ``order``: f reduces to 0 by it."""
    if not basis:
        return sp.expand(f) == 0
    return sp.reduced(f, list(basis), *gens, order=order, domain=sp.QQ)[1] == 0


def is_zero_dimensional(basis: Sequence[sp.Expr], gens: Sequence[sp.Symbol], order) -> bool:
    """Every variable has a pure power among the leading monomials of ``basis`` (a Gröbner
    basis under ``order``): V(⟨basis⟩) is finite. As ``sympy``'s ``is_zero_dimensional``, the
    unit ideal ⟨1⟩ does not count."""
    leading = [sp.Poly(b, *gens).LM(order=order).exponents for b in basis]
    return all(any(m[k] > 0 and sum(m) == m[k] for m in leading) for k in range(len(gens)))
