"""Simpler generators of the same ideal near the origin (λ and m are local, so only the ideal's
germ at 0 matters).

* A generator x^μ·u with u(0) ≠ 0 (a unit near 0) generates the same ideal as x^μ.
* A term c·x^α of a generator that a monomial generator x^β divides can go: f − c·x^α ∈ ⟨x^β, f⟩.
* A generator f can be replaced by its remainder f − q·g on division by another generator g
  (the same ideal, in any ring): done where the remainder has fewer terms.

Neither changes a Newton polyhedron's compact faces or face polynomials (the terms that go lie
strictly inside β + R≥0 or μ + R≥0), so Newton's verdict is the same; later steps see fewer
terms, and generators that now live on disjoint variables split into blocks
(x·(1 + 3x² − xy), x²y + ... → ⟨x, ...⟩).
"""

from __future__ import annotations

import sympy as sp

from ..algebra.monomials import common_monomial, divide_monomial

__all__ = ["local_generators", "reduce_by_generators", "reduce_by_monomials", "strip_units"]

MAX_DIVISION_TERMS = 400  # generators longer than this are not divided by one another


def local_generators(polys: list[sp.Poly]) -> list[sp.Poly]:
    """:func:`strip_units`, then :func:`reduce_by_monomials`."""
    return reduce_by_monomials(strip_units(polys))


def strip_units(polys: list[sp.Poly]) -> list[sp.Poly]:
    """Each generator x^μ·u with u(0) ≠ 0 replaced by x^μ."""
    out = []
    for p in polys:
        mu = common_monomial([p])
        if len(p.terms()) > 1 and divide_monomial(p, mu).coeff_monomial(1) != 0:
            p = sp.Poly.from_dict({mu: 1}, *p.gens, domain=sp.QQ)
        out.append(p)
    return out


def reduce_by_monomials(polys: list[sp.Poly]) -> list[sp.Poly]:
    """The same ideal with every term that a monomial generator divides removed from the other
    generators (f − c·x^α ∈ ⟨x^β, f⟩ when x^β divides x^α), until none is left; zeros, repeated
    monomials and multiples of another monomial generator dropped."""
    polys = [p for p in polys if not p.is_zero]
    while True:
        monomials = {p.monoms()[0] for p in polys if len(p.terms()) == 1}
        changed = False
        out = []
        seen: set[tuple[int, ...]] = set()
        for p in polys:
            if len(p.terms()) == 1:
                m = p.monoms()[0]
                if m in seen or any(b != m and _divides(b, m) for b in monomials):
                    changed = True  # a repeat, or a multiple of another monomial generator
                else:
                    seen.add(m)
                    out.append(p)
                continue
            kept = {m: c for m, c in p.terms() if not any(_divides(mono, m) for mono in monomials)}
            if len(kept) < len(p.terms()):
                changed = True
                if not kept:
                    continue
                p = sp.Poly.from_dict(kept, *p.gens, domain=sp.QQ)
            out.append(p)
        polys = out
        if not changed:
            return polys


def _divides(b: tuple[int, ...], m: tuple[int, ...]) -> bool:
    """x^b divides x^m."""
    return all(x >= y for x, y in zip(m, b))


def reduce_by_generators(polys: list[sp.Poly]) -> list[sp.Poly]:
    """The same ideal with each generator f replaced by its remainder f − q·g on division by
    another generator g (lex or graded reverse lex order) where that has fewer terms, until
    none does (the total number of terms falls at each step); zeros dropped. Generators past
    ``MAX_DIVISION_TERMS`` terms are left as they are."""
    polys = [p for p in polys if not p.is_zero]
    changed = True
    while changed:
        changed = False
        for b, f in enumerate(polys):
            if (remainder := _shorter_remainder(f, polys[:b] + polys[b + 1 :])) is not None:
                polys = [p for p in [*polys[:b], remainder, *polys[b + 1 :]] if not p.is_zero]
                changed = True
                break
    return polys


def _shorter_remainder(f: sp.Poly, others: list[sp.Poly]) -> sp.Poly | None:
    """f's remainder on division by one of ``others`` with fewer terms than f, or None."""
    size = len(f.terms())
    if size > MAX_DIVISION_TERMS:
        return None
    for g in others:
        if len(g.terms()) < 2 or len(g.terms()) > MAX_DIVISION_TERMS:
            continue  # monomials are reduce_by_monomials' job
        for order in ("lex", "grevlex"):
            _, remainder = sp.reduced(f, [g], order=order, polys=True)
            if remainder.is_zero or len(remainder.terms()) < size:
                return sp.Poly(remainder, *f.gens, domain=sp.QQ)
    return None
