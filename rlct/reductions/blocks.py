"""Splitting K into blocks on disjoint sets of variables, and combining the blocks' RLCTs.

For K_1(w_S) and K_2(w_T) with S ∩ T = ∅, K_j(0) = 0 and a product prior:

* sum (K_j ≥ 0):  λ(K_1 + K_2) = λ_1 + λ_2,  m = m_1 + m_2 − 1;
* product:        λ(K_1 · K_2) = min(λ_1, λ_2),  m = Σ m_j over the j attaining the minimum.

Proofs: for a product the zeta function ∫|K|^z φ is the product of the blocks' zeta functions,
whose poles at −λ_j of orders m_j multiply; for a sum the Laplace integral Z(n) = ∫ e^(−nK) φ is
the product of the blocks' Z_j(n) ≍ n^(−λ_j) (log n)^(m_j − 1), and Z(n) ≍ n^(−λ)(log n)^(m − 1)
is the Mellin dual of ζ's leading pole (Watanabe 2009, ch. 4; S. Lin's thesis 2011 states both
rules for ideals). Bounds combine the same way:
lower and upper bounds add for a sum and take the minimum for a product.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy as sp

from ..algebra.factor import factor_list
from ..result import RLCT, Condition

__all__ = [
    "block_names",
    "combine_product",
    "combine_sum",
    "generator_blocks",
    "product_blocks",
    "split_blocks",
    "sum_blocks",
]


def _components(supports: Sequence[set[int]]) -> list[set[int]]:
    """Connected components of the variables, two variables joined when a support holds both."""
    comps: list[set[int]] = []
    for s in supports:
        joined = [c for c in comps if c & s]
        merged = set(s).union(*joined)
        comps = [c for c in comps if not c & s] + [merged]
    return sorted(comps, key=min)


def sum_blocks(K: sp.Poly) -> list[tuple[int, ...]] | None:
    """Variable groups such that every monomial of K lies in one group (None: a single group)."""
    supports = [{j for j, e in enumerate(m) if e} for m in K.monoms()]
    comps = _components([s for s in supports if s])
    return [tuple(sorted(c)) for c in comps] if len(comps) > 1 else None


def generator_blocks(
    polys: Sequence[sp.Poly],
) -> list[tuple[tuple[int, ...], tuple[int, ...]]] | None:
    """(variable group, indices of its generators) such that every generator f_i lies in one
    group (None: a single group): then K = Σ f_i² is the sum of the groups' own sums of squares."""
    supports = [{j for m in p.monoms() for j, e in enumerate(m) if e} for p in polys]
    comps = _components([s for s in supports if s])
    if len(comps) < 2:
        return None
    return [
        (tuple(sorted(c)), tuple(i for i, s in enumerate(supports) if s and s <= c)) for c in comps
    ]


def product_blocks(K: sp.Poly) -> list[tuple[sp.Poly, tuple[int, ...]]] | None:
    """K = unit · Π_j B_j with the B_j on disjoint variable groups, each B_j(0) = 0 and signed so
    that its lowest term is positive (None when there is only one such block)."""
    _, factors = factor_list(K)  # FLINT: (x − y)^400 in ms, where sympy took minutes
    vanishing = [(f, e) for f, e in factors if f.coeff_monomial(1) == 0]
    supports = [{j for j in range(len(K.gens)) if f.degree(K.gens[j]) > 0} for f, _ in vanishing]
    comps = _components(supports)
    if len(comps) < 2:
        return None
    out = []
    for comp in comps:
        block = sp.Poly(1, *K.gens)
        for (f, e), s in zip(vanishing, supports):
            if s <= comp:
                block *= f**e
        lowest = min(block.terms(), key=lambda t: (sum(t[0]), t[0]))
        out.append((block if lowest[1] > 0 else -block, tuple(sorted(comp))))
    return out


def _named(conds: Sequence[Condition], label: str) -> list[Condition]:
    return [Condition(f"[{label}] {c.statement}", c.status) for c in conds]


def combine_sum(parts: Sequence[tuple[str, RLCT]]) -> RLCT:
    """λ = Σ λ_j, m = Σ m_j − (k − 1) for blocks K_1 + … + K_k on disjoint variables."""
    labels = " + ".join(f"K({name})" for name, _ in parts)
    head = Condition(
        f"K = {labels} on disjoint variables, each ≥ 0: λ = Σ λ_j, m = Σ m_j − (k − 1)", True
    )
    conds = [head] + [c for name, r in parts for c in _named(r.conditions, name)]
    if all(r.exact for _, r in parts):
        lam = sum(r.lam for _, r in parts)
        mult = sum(r.mult for _, r in parts) - (len(parts) - 1)
        return RLCT.exact_value(lam, mult, f"sum of blocks {labels}", tuple(conds))
    lower = sum(r.lower for _, r in parts)
    upper = sum(r.upper for _, r in parts)
    return RLCT.bounds(lower, upper, f"sum of blocks {labels} (not all exact)", tuple(conds))


def combine_product(parts: Sequence[tuple[str, RLCT]]) -> RLCT:
    """λ = min λ_j, m = Σ m_j over the attaining j, for K = Π K_j on disjoint variables.

    Exact also when some blocks are only bounded, if the least exact λ_j lies strictly below every
    other block's lower bound (those blocks cannot attain the minimum)."""
    labels = " · ".join(f"K({name})" for name, _ in parts)
    head = Condition(f"K = unit · {labels} on disjoint variables: λ = min λ_j", True)
    conds = [head] + [c for name, r in parts for c in _named(r.conditions, name)]
    exact = [r for _, r in parts if r.exact]
    loose = [r for _, r in parts if not r.exact]
    if exact:
        lam = min(r.lam for r in exact)
        if all(r.lower > lam for r in loose):
            mult = sum(r.mult for r in exact if r.lam == lam)
            kept = [c for c in conds if c.status is True]
            note = Condition(
                "every block that is not exact has a lower bound above λ, so it does not attain",
                True,
            )
            return RLCT.exact_value(
                lam, mult, f"product of blocks {labels}", (*kept, note) if loose else tuple(kept)
            )
    lower = min(r.lower for _, r in parts)
    upper = min(r.upper for _, r in parts)
    return RLCT.bounds(lower, upper, f"product of blocks {labels} (not all exact)", tuple(conds))


def split_blocks(
    K: sp.Poly,
    h: Sequence[sp.Rational],
    solve: Callable[[sp.Poly, tuple[sp.Rational, ...]], RLCT],
) -> RLCT | None:
    """K as a sum or a product of blocks on disjoint variables, each solved by ``solve`` and
    combined (:func:`combine_sum`, :func:`combine_product`); None when K is neither."""
    groups = sum_blocks(K)
    if groups is not None:
        parts = []
        for g in groups:
            gens = [K.gens[j] for j in g]
            terms = [
                (m, c) for m, c in K.terms() if all(m[j] == 0 for j in range(len(m)) if j not in g)
            ]
            block = sp.Poly.from_dict({tuple(m[j] for j in g): c for m, c in terms}, *gens)
            parts.append((block_names(gens), solve(block, tuple(h[j] for j in g))))
        return combine_sum(parts)
    blocks = product_blocks(K)
    if blocks is not None:
        parts = []
        for block, g in blocks:
            gens = [K.gens[j] for j in g]
            sub = sp.Poly(block.as_expr(), *gens)
            parts.append((block_names(gens), solve(sub, tuple(h[j] for j in g))))
        return combine_product(parts)
    return None


def block_names(gens: Sequence[sp.Symbol]) -> str:
    """A block's variables as its label: 'x, y'."""
    return ", ".join(map(str, gens))
