"""Simpler generators of the same ideal near the origin (λ and m are local, so only the ideal's
germ at 0 matters).

* A generator x^μ·u with u(0) ≠ 0 (a unit near 0) generates the same ideal as x^μ.
* A term c·x^α of a generator that a monomial generator x^β divides can go: f − c·x^α ∈ ⟨x^β, f⟩.

Neither changes a Newton polyhedron's compact faces or face polynomials (the terms that go lie
strictly inside β + R≥0 or μ + R≥0), so Newton's verdict is the same; later steps see fewer
terms, and generators that now live on disjoint variables split into blocks
(x·(1 + 3x² − xy), x²y + ... → ⟨x, ...⟩).
"""

from __future__ import annotations

import sympy as sp

from .blowup import common_monomial, divide_monomial

__all__ = ["local_generators", "reduce_by_monomials", "strip_units"]


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
