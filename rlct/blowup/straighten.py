"""Triangular changes of coordinates that straighten an ideal's generators towards monomials
(the charts of :mod:`rlct.blowup.coordinate`).

A change v' = c·v + r (c ∈ Q∖{0}, r free of v with r(0) = 0, h_v = 0, v not in the common
monomial x^e) is an analytic automorphism fixing 0 with |J| = |c| that keeps the prior's form,
so λ and m are the same after it. The changes tried, first found first:

* a generator x^μ·(c·v + r) (v not in x^μ): it becomes the monomial x^μ·v';
* an irreducible factor c·v + r of a generator: the generator becomes v'·(the rest);
* inside a generator f = c·x^α·v + x^α·r + (terms x^α does not divide): v' = v + r/c, so v
  enters f through v' wherever x^α does;
* a generator linear in v and in y with ∂f/∂y = q·∂f/∂v, q free of v and y: v' = v + q·y, after
  which f no longer holds y (f depends on v and y only through v + q·y, as a product of layers
  does on a column of one layer after a chart of the next: u·C·(a₀ + w·a₁)).

Before and after each change the generators are simplified without changing the ideal: every
term that a monomial generator divides is removed, and a generator is replaced by its remainder
on division by another where that has fewer terms (:mod:`rlct.reductions.local_generators`).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ..algebra.monomials import common_monomial, divide_monomial
from ..reductions.local_generators import reduce_by_generators, reduce_by_monomials

__all__ = ["MAX_CHANGE_TERMS", "MAX_FACTOR_TERMS", "change_coordinates", "monomial", "straighten"]

MAX_CHANGE_TERMS = 2_000  # terms of one generator after a chart's changes
MAX_FACTOR_TERMS = 200  # generators factored in search of a change


def straighten(
    strict: list[sp.Poly], h: list[sp.Rational], e: tuple[int, ...], over_zero: list[bool]
) -> tuple[list[sp.Poly], tuple[tuple[sp.Symbol, sp.Expr], ...], list[bool]] | None:
    """The changes v' = g of the module docstring (g = c·v + r; a generator x^μ·g becomes the
    monomial x^μ·v'; v' keeps v's name), the generators simplified before and after each
    (:func:`_simplify`): the generators after them, the changes made, and which coordinates are
    known to vanish at every point over 0 after them (``over_zero``: before): a new v' does
    where v does and every term of r holds one that does. None past the size limit."""
    gens = strict[0].gens
    over_zero = list(over_zero)
    done: list[tuple[sp.Symbol, sp.Expr]] = []
    fixed: set[int] = set()
    strict = _simplify(strict)
    while (found := _change(strict, h, e, fixed)) is not None:
        k, g, a, mu = found
        v = gens[k]
        rewritten = change_coordinates(strict, k, g, a, mu)
        if rewritten is None:
            return None
        strict = _simplify(rewritten)
        fixed.add(k)
        rest = [m for m, _ in g.terms() if m[k] == 0]
        over_zero[k] = over_zero[k] and all(
            any(a and over_zero[i] for i, a in enumerate(m)) for m in rest
        )
        done.append((v, g.as_expr()))
    return strict, tuple(done), over_zero


def change_coordinates(
    polys: list[sp.Poly], k: int, g: sp.Poly, a: int | None, mu: Sequence[int]
) -> list[sp.Poly] | None:
    """``polys`` after v' = g (v = x_k, g = c·v + r, r free of v; v' keeps v's name): generator
    ``a`` (= x^μ·g), where given, becomes the monomial x^μ·v', the others are rewritten by
    v = (v' − r)/c; None where one grows past ``MAX_CHANGE_TERMS``."""
    gens = polys[0].gens
    v = gens[k]
    c = g.coeff_monomial(v)
    inverse = (v - (g.as_expr() - c * v)) / c  # old v in terms of v' (named v)
    out = []
    for b, p in enumerate(polys):
        if b == a:
            out.append(sp.Poly(v * monomial(gens, mu), *gens, domain=sp.QQ))
            continue
        q = sp.Poly(sp.expand(p.as_expr().xreplace({v: inverse})), *gens, domain=sp.QQ)
        if len(q.terms()) > MAX_CHANGE_TERMS:
            return None
        out.append(q)
    return out


def _simplify(polys: list[sp.Poly]) -> list[sp.Poly]:
    """The same ideal, its generators reduced by the monomial ones and by one another
    (:mod:`rlct.reductions.local_generators`) until neither changes them."""
    while True:
        out = reduce_by_generators(reduce_by_monomials(polys))
        if [p.as_dict() for p in out] == [p.as_dict() for p in polys]:
            return out
        polys = out


Change = tuple[int, sp.Poly, int | None, tuple[int, ...]]


def _change(
    strict: list[sp.Poly], h: list[sp.Rational], e: tuple[int, ...], fixed: set[int]
) -> Change | None:
    """The first change the module docstring allows: (variable index k, g = c·v + r, the index
    of the generator x^μ·g that becomes a monomial or None, μ). v is not yet changed, free of
    prior and of x^e, and not in a generator that is a monomial already (the change would undo
    it). In the module docstring's order: a generator's own factor g, an irreducible factor, a
    g inside a generator, then v + q·y where a generator holds v and y only through it."""
    gens = strict[0].gens
    in_monomials = {
        k for p in strict if len(p.terms()) == 1 for k, a in enumerate(p.monoms()[0]) if a
    }

    def allowed(k: int) -> bool:
        return k not in fixed and k not in in_monomials and h[k] == 0 and e[k] == 0

    for a, p in enumerate(strict):
        mu = common_monomial([p])
        g = divide_monomial(p, mu)
        if len(g.terms()) < 2 or g.coeff_monomial(1) != 0:
            continue  # a monomial, or x^μ times a unit at the origin
        for k, v in enumerate(gens):
            if allowed(k) and mu[k] == 0 and g.degree(v) == 1 and g.diff(v).is_ground:
                return k, g, a, mu
    for p in strict:
        for u in _factors(p):
            for k, v in enumerate(gens):
                if allowed(k) and u.degree(v) == 1 and u.diff(v).is_ground:
                    return k, u, None, (0,) * len(gens)
    for p in strict:
        for k, v in enumerate(gens):
            if allowed(k) and p.degree(v) == 1 and len((slope := p.diff(v)).terms()) == 1:
                if (inner := _inside(p, k, slope)) is not None:
                    return k, inner, None, (0,) * len(gens)
    for p in strict:
        for k, v in enumerate(gens):
            if allowed(k) and p.degree(v) == 1 and (through := _through(p, k)) is not None:
                return k, through, None, (0,) * len(gens)
    return None


def _through(p: sp.Poly, k: int) -> sp.Poly | None:
    """g = v + q·y where p is linear in v = x_k and in some y with ∂p/∂y = q·∂p/∂v, q free of
    v and y (p then depends on v and y only through g); None where no y is."""
    gens = p.gens
    slope = p.diff(gens[k])
    for y in gens:
        if y == gens[k] or p.degree(y) != 1:
            continue
        q, remainder = p.diff(y).div(slope)
        if remainder.is_zero and not q.is_zero and q.degree(gens[k]) == 0 and q.degree(y) == 0:
            return sp.Poly(gens[k] + q.as_expr() * y, *gens, domain=sp.QQ)
    return None


def _factors(p: sp.Poly) -> list[sp.Poly]:
    """The irreducible factors u of p over Q with u(0) = 0 and at least two terms (not
    monomials, not units near 0), for generators of at most ``MAX_FACTOR_TERMS`` terms."""
    if len(p.terms()) < 2 or len(p.terms()) > MAX_FACTOR_TERMS:
        return []
    _, factors = p.factor_list()
    return [u for u, _ in factors if len(u.terms()) > 1 and u.coeff_monomial(1) == 0]


def _inside(p: sp.Poly, k: int, slope: sp.Poly) -> sp.Poly | None:
    """g = v + r with c·x^α·g the terms of p that x^α = ``slope``/c divides (r free of v,
    r(0) = 0, r ≠ 0), or None."""
    (alpha,), (c,) = slope.monoms(), slope.coeffs()
    inner = {}
    for m, d in p.terms():
        if m[k] == 0 and all(a >= b for a, b in zip(m, alpha)):
            inner[tuple(a - b for a, b in zip(m, alpha))] = d / c
    if not inner or (0,) * len(alpha) in inner:
        return None
    unit = tuple(1 if i == k else 0 for i in range(len(alpha)))
    return sp.Poly.from_dict({unit: 1, **inner}, *p.gens, domain=sp.QQ)


def monomial(gens: Sequence[sp.Symbol], exponents: Sequence[int]) -> sp.Expr:
    """Π gens_i^exponents_i."""
    return sp.Mul(*(v**a for v, a in zip(gens, exponents)))
