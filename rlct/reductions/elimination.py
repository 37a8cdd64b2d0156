"""λ of an ideal one of whose generators is affine in a variable: eliminate that variable.

Let f_1 = u·v + r with u, r free of v, u(0) ≠ 0 (a constant, or a unit near 0), and let v carry no
prior exponent (h_v = 0). Near 0, v = −r/u solves f_1 = 0, and for f_i of degree d_i in v

    g_i = u^(d_i)·f_i(v = −r/u),   a polynomial free of v,

satisfies u^(d_i)·f_i − g_i ∈ ⟨f_1⟩, so ⟨f_1, f_2, …⟩ = ⟨f_1, g_2, …⟩ in the local ring (u is a
unit there). Sums of squares of two generating sets of one ideal bound each other near 0, so
K = Σ f_i² and f_1² + Σ g_i² share λ and m. The coordinates (f_1, w_{−v}) have Jacobian u, a unit,
and leave the prior unchanged, and in them the ideal is ⟨v'⟩ + ⟨g_i⟩ on disjoint variables:

    λ(K) = 1/2 + λ(Σ g_i²),  m(K) = m(Σ g_i²)   (λ = 1/2, m = 1 when every g_i is 0).

(x² − y³)² + (y − z²)² becomes ⟨y', x² − z⁶⟩: λ = 1/2 + 1/3 = 5/6, m = 1.

A polynomial K written as Σ c_i·Π_j b_ij^(2 e_ij) with rational c_i > 0 (:func:`square_generators`)
is such a sum of squares, of the generators Π_j b_ij^(e_ij).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from ..algebra.factor import from_flint, to_flint
from ..result import Condition
from ..time_limit import check as check_time
from .changes import MAX_CHANGED_TERMS

__all__ = ["MAX_PRODUCT_TERMS", "Elimination", "eliminate_affine_generator", "square_generators"]

MAX_PRODUCT_TERMS = 2_000_000  # term pairs one multiplication of the substitution may form


@dataclass(frozen=True)
class Elimination:
    """The generator f = u·v + r removed with its variable v; ``rest`` the g_i =
    u^(d_i)·f_i(v = −r/u) that are not 0, as polynomials in the other variables, with their prior
    exponents ``h``."""

    variable: sp.Symbol
    generator: sp.Poly
    rest: tuple[sp.Poly, ...]
    h: tuple[sp.Rational, ...]

    @property
    def condition(self) -> Condition:
        v, f = self.variable, self.generator.as_expr()
        rest = _listed(self.rest)
        return Condition(
            f"the generator {f} is affine in {v} with a coefficient that is not 0 at 0, and {v} "
            f"carries no prior exponent: near 0 the ideal is ⟨{f}⟩ + ⟨{rest}⟩ with the rest free "
            f"of {v}, and {v} ↦ {f} is a change of coordinates whose Jacobian is a unit",
            True,
        )


LISTED_TERMS = 60
"""The most terms of the rest written out in full in the condition's statement."""


def _listed(rest: Sequence[sp.Poly]) -> str:
    """The rest's generators written out, or counted where they have more than LISTED_TERMS
    terms in all (printing 10⁴-term polynomials took longer than the elimination itself)."""
    if not rest:
        return "nothing"
    terms = sum(len(g.terms()) for g in rest)
    if terms > LISTED_TERMS:
        return f"{len(rest)} generators of {terms} terms in all"
    return ", ".join(str(g.as_expr()) for g in rest)


def eliminate_affine_generator(
    polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...]
) -> Elimination | None:
    """The first generator affine in a prior-free variable v whose coefficient is not 0 at 0,
    that variable eliminated from the others (module docstring); None when there is none or a
    substitution would grow past the limits (:func:`_substitute`)."""
    gens = polys[0].gens
    for i, f in enumerate(polys):
        check_time()
        for j, v in enumerate(gens):
            if h[j] != 0 or f.degree(v) != 1:
                continue
            unit = f.diff(v)
            if unit.coeff_monomial((0,) * len(gens)) == 0:
                continue
            minus_r = unit * sp.Poly(v, *gens) - f
            others = tuple(x for x in gens if x != v)
            rest = []
            for g in (*polys[:i], *polys[i + 1 :]):
                reduced = _substitute(g, j, minus_r, unit)
                if reduced is None:
                    return None
                if not reduced.is_zero:
                    rest.append(_drop_variable(reduced, j, others))
            h_rest = tuple(x for k, x in enumerate(h) if k != j)
            return Elimination(v, f, tuple(rest), h_rest)
    return None


def _drop_variable(p: sp.Poly, j: int, others: tuple[sp.Symbol, ...]) -> sp.Poly:
    """``p`` (free of its j-th variable) as a Poly in the ``others``, over ZZ where every
    coefficient is an integer (as ``sp.Poly(p.as_expr(), *others)`` reads it, without the
    expression)."""
    terms = {m[:j] + m[j + 1 :]: c for m, c in p.terms()}
    domain = sp.ZZ if all(c.is_Integer for c in terms.values()) else sp.QQ
    return sp.Poly.from_dict(terms, *others, domain=domain)


def _substitute(g: sp.Poly, j: int, minus_r: sp.Poly, unit: sp.Poly) -> sp.Poly | None:
    """u^d·g(v = −r/u) = Σ_k c_k·(−r)^k·u^(d−k) for g = Σ_k c_k·v^k of degree d in v (the j-th
    generator; r, u free of it), by Horner's rule over FLINT; None, before the work is done, when
    a product would form more than ``MAX_PRODUCT_TERMS`` term pairs, or when a result has more than
    ``MAX_CHANGED_TERMS`` terms."""
    by_power: dict[int, dict[tuple[int, ...], sp.Rational]] = {}
    for m, c in g.terms():
        by_power.setdefault(m[j], {})[(*m[:j], 0, *m[j + 1 :])] = c
    fr, fu = to_flint(minus_r), to_flint(unit)
    out, u_power = fr * 0, fu**0
    for k in range(max(by_power), -1, -1):
        check_time()
        if (len(out) * len(fr) + len(u_power) * len(fu)) > MAX_PRODUCT_TERMS:
            return None
        c = by_power.get(k)
        out = out * fr + (to_flint(sp.Poly.from_dict(c, *g.gens)) * u_power if c else 0)
        u_power = u_power * fu
        if len(out) > MAX_CHANGED_TERMS or len(u_power) > MAX_CHANGED_TERMS:
            return None
    return from_flint(out, g.gens)


def square_generators(expr: sp.Expr, variables: Sequence[sp.Symbol]) -> list[sp.Poly] | None:
    """[Π_j b_ij^(e_ij)] when ``expr`` is written Σ_i c_i·Π_j b_ij^(2 e_ij) with rationals
    c_i > 0 and polynomials b_ij (then expr ≍ Σ of their squares near 0); None otherwise."""
    out = []
    for term in sp.Add.make_args(expr):
        c, factors = term.as_coeff_mul()
        if not (c.is_Rational and c > 0):
            return None
        root = sp.Integer(1)
        for factor in factors:
            base, e = factor.as_base_exp()
            if not (e.is_Integer and e > 0 and e % 2 == 0):
                return None
            root *= base ** (e // 2)
        try:
            p = sp.Poly(root, *variables)
        except sp.PolynomialError:
            return None
        if p.domain not in (sp.ZZ, sp.QQ):
            return None
        out.append(p)
    return out
