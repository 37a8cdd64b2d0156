"""λ of an ideal one of whose generators is affine in a variable: eliminate that variable.

Let f_1 = c·v + r with c ∈ Q∖{0} and r free of v, and let v carry no prior exponent (h_v = 0).
Then ⟨f_1, f_2, …⟩ = ⟨f_1, g_2, …⟩ with g_i = f_i(v = −r/c), which is free of v (f_i − g_i is
divisible by v + r/c). Sums of squares of two generating sets of one ideal bound each other near
0, so K = Σ f_i² and f_1² + Σ g_i² share λ and m. In the coordinates v' = f_1/c (Jacobian 1, the
prior unchanged) the ideal is ⟨v'⟩ + ⟨g_i⟩ on disjoint variables, hence

    λ(K) = 1/2 + λ(Σ g_i²),  m(K) = m(Σ g_i²)   (λ = 1/2, m = 1 when every g_i is 0).

(x² − y³)² + (y − z²)² becomes ⟨y', x² − z⁶⟩: λ = 1/2 + 1/3 = 5/6, m = 1.

A polynomial K written as Σ c_i·Π_j b_ij^(2 e_ij) with rational c_i > 0 (:func:`square_generators`)
is such a sum of squares, of the generators Π_j b_ij^(e_ij).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from .changes import MAX_CHANGED_TERMS
from .factor import from_flint, to_flint
from .result import Condition

__all__ = ["MAX_PRODUCT_TERMS", "Elimination", "eliminate_affine_generator", "square_generators"]

MAX_PRODUCT_TERMS = 2_000_000  # term pairs one multiplication of the substitution may form


@dataclass(frozen=True)
class Elimination:
    """The generator f = c·v + r removed with its variable v; ``rest`` the g_i = f_i(v = −r/c)
    that are not 0, as polynomials in the other variables, with their prior exponents ``h``."""

    variable: sp.Symbol
    generator: sp.Poly
    rest: tuple[sp.Poly, ...]
    h: tuple[sp.Rational, ...]

    @property
    def condition(self) -> Condition:
        v, f = self.variable, self.generator.as_expr()
        rest = ", ".join(str(g.as_expr()) for g in self.rest) or "nothing"
        return Condition(
            f"the generator {f} is affine in {v} with a constant coefficient and {v} carries no "
            f"prior exponent: the ideal is ⟨{f}⟩ + ⟨{rest}⟩ with the rest free of {v}, and {v} ↦ "
            f"{f} is a change of coordinates with Jacobian a constant",
            True,
        )


def eliminate_affine_generator(
    polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...]
) -> Elimination | None:
    """The first generator affine in a prior-free variable with a constant coefficient, that
    variable eliminated from the others (module docstring); None when there is none or the
    substitution grows past ``MAX_CHANGED_TERMS`` terms."""
    gens = polys[0].gens
    for i, f in enumerate(polys):
        for j, v in enumerate(gens):
            if h[j] != 0 or f.degree(v) != 1:
                continue
            coefficient = f.diff(v)
            if not coefficient.is_ground:
                continue
            others = tuple(x for x in gens if x != v)
            root = -(f - coefficient * sp.Poly(v, *gens)) * (1 / coefficient.LC())
            rest = []
            for g in (*polys[:i], *polys[i + 1 :]):
                reduced = _substitute(g, j, root)
                if reduced is None:
                    return None
                if not reduced.is_zero:
                    rest.append(sp.Poly(reduced.as_expr(), *others))
            h_rest = tuple(x for k, x in enumerate(h) if k != j)
            return Elimination(v, f, tuple(rest), h_rest)
    return None


def _substitute(g: sp.Poly, j: int, root: sp.Poly) -> sp.Poly | None:
    """g with its j-th generator replaced by ``root`` (free of it), by Horner's rule in that
    generator over FLINT; None, before the work is done, when a product would exceed
    ``MAX_PRODUCT_TERMS`` term pairs or a result ``MAX_CHANGED_TERMS`` terms."""
    by_power: dict[int, dict[tuple[int, ...], sp.Rational]] = {}
    for m, c in g.terms():
        by_power.setdefault(m[j], {})[(*m[:j], 0, *m[j + 1 :])] = c
    fr = to_flint(root)
    out = fr * 0
    for k in range(max(by_power), -1, -1):
        if len(out) * len(fr) > MAX_PRODUCT_TERMS:
            return None
        c = by_power.get(k)
        out = out * fr + (to_flint(sp.Poly.from_dict(c, *g.gens)) if c else 0)
        if len(out) > MAX_CHANGED_TERMS:
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
