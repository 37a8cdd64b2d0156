"""An ideal that splits over disjoint groups of variables, solved group by group as ideals.

Two shapes, each read from the generators before they are squared and summed (K's own blocks,
after squaring, would reach the later steps only as expanded polynomials, which lose the
generators that the eliminations and blow-ups need):

* Sum: every generator lies in one group (:func:`rlct.reductions.blocks.generator_blocks`). Then
  K = Σ f_i² is the sum of the groups' own sums of squares, and λ adds (:func:`combine_sum`).
* Product: ⟨f_i⟩ = x^e·⟨g_k⟩ with x^e ≠ 1 a common monomial factor whose variables no g_k holds.
  Then K = x^(2e)·Σ g_k², a product of blocks on disjoint variables: λ = min of ⟨x^e⟩'s (a
  monomial ideal, exact by its Newton polyhedron) and ⟨g_k⟩'s, m = Σ m over the attaining
  (:func:`combine_product`). Where some g_k is a non-zero constant the ideal is ⟨x^e⟩ itself.

x²·⟨b + ca, d + ea⟩ (the chart point of a blow-up, x free of the rest): λ = min((h_x + 1)/4,
1/2 + 1/2) under |x|^(h_x).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ..algebra.monomials import common_monomial, divide_monomial
from ..newton.analysis import ideal_step
from ..result import RLCT, Solve
from .blocks import block_names, combine_product, combine_sum, generator_blocks
from .local_generators import local_generators

__all__ = ["ideal_blocks", "monomial_factor_split"]


def ideal_blocks(polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...], solve: Solve) -> RLCT | None:
    """λ and m of ⟨``polys``⟩ under the prior exponents ``h`` from its groups (module
    docstring; after :func:`rlct.reductions.local_generators.local_generators`), each group's ideal
    solved by ``solve``; None when it does not split."""
    polys = local_generators(list(polys))
    gens = polys[0].gens
    blocks = generator_blocks(polys)
    if blocks is not None:
        parts = []
        for group, members in blocks:
            names = [gens[j] for j in group]
            block = [sp.Poly(polys[i].as_expr(), *names) for i in members]
            parts.append((block_names(names), solve(block, tuple(h[j] for j in group))))
        return combine_sum(parts)
    split = monomial_factor_split(polys)
    if split is None:
        return None
    e, rest = split
    inside = [k for k, a in enumerate(e) if a]
    names = [gens[k] for k in inside]
    factor = sp.Poly(sp.Mul(*(gens[k] ** e[k] for k in inside)), *names)
    parts = [(block_names(names), ideal_step([factor], tuple(h[k] for k in inside)).result)]
    if rest:
        others = [k for k, a in enumerate(e) if not a]
        parts.append((block_names(rest[0].gens), solve(rest, tuple(h[k] for k in others))))
    return combine_product(parts)


def monomial_factor_split(
    polys: Sequence[sp.Poly],
) -> tuple[tuple[int, ...], list[sp.Poly]] | None:
    """(e, g_k) for ⟨polys⟩ = x^e·⟨g_k⟩ as in the module docstring, the g_k as polynomials in the
    variables outside x^e (an empty list where a g_k is a non-zero constant); None when the
    generators have no common monomial factor or a g_k holds one of its variables."""
    gens = polys[0].gens
    n = len(gens)
    e = common_monomial(polys)
    if not any(e):
        return None
    strict = [divide_monomial(p, e) for p in polys]
    if any(m[k] for g in strict for m in g.monoms() for k in range(n) if e[k]):
        return None
    if any(g.coeff_monomial((0,) * n) != 0 for g in strict):
        return e, []
    others = [gens[k] for k in range(n) if not e[k]]
    return e, [sp.Poly(g.as_expr(), *others) for g in strict]
