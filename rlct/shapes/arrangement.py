"""λ and m of K = unit·Π ℓ_i^(e_i), a product of linear forms: a central hyperplane arrangement.

Let the arrangement be the hyperplanes H_i = {ℓ_i = 0} of K's linear factors (exponents e_i,
all even, the unit c·u(0) > 0) together with the coordinate hyperplanes {x_j = 0} that carry a
prior exponent h_j ≠ 0 (a factor x_j is that hyperplane, with both e and h). A *flat* X is an
intersection of some H_i; it has codimension r(X) and lies in the hyperplanes A_X = {H_i ⊇ X}.
X is *dense* when A_X is irreducible: its normals cannot be split into two non-empty parts whose
spans add directly (the matroid of the normals is connected). Blowing up the dense flats in
increasing dimension (De Concini–Procesi's wonderful model, defined over Q, so real) resolves
K·prior; the exceptional divisor E_X has the ratio

    ρ(X) = (r(X) + Σ_{A_X} h_i) / Σ_{A_X} e_i

(a hyperplane is a dense flat of codimension 1: its ratio is (1 + h_i)/e_i). So λ = min ρ(X)
over the dense flats (the minimum over all flats is the same: a flat that is not dense is a
product, whose ratio is a mediant of its parts'), and m is the largest number of divisors E_X
with ρ(X) = λ that meet, a *nested* set: no two or more pairwise incomparable members whose
intersection is a dense flat (Feichtner–Kozlov).

Three planes through a line, (x + 2y)²(y − z)²(x + y + z)², have λ = 1/3 (the line: 2/6), m = 1;
four general planes in space, squared, 3/8 (the origin), m = 1. Exact and cheap for up to
``MAX_HYPERPLANES`` hyperplanes; it is tried where the Newton polyhedron is degenerate.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations

import sympy as sp

from ..algebra.factor import LocalFactors, linear_part, local_factors
from ..algebra.ranks import nullspace, rank_of
from ..result import RLCT, Condition

__all__ = ["MAX_HYPERPLANES", "arrangement_rlct"]

METHOD = "hyperplane arrangement: the wonderful model of its dense flats"
MAX_HYPERPLANES = 12  # flats are found by closure, nested sets by subsets of the minimal ones

Flat = frozenset[int]  # the hyperplanes that contain it


def _hyperplanes(
    K: sp.Poly, h: tuple[sp.Rational, ...], local: LocalFactors
) -> tuple[list[list[Fraction]], list[int], list[sp.Rational], list[str]] | None:
    """Normals, K-exponents, prior exponents and names of the arrangement; None if K is not a
    non-negative unit times a product of linear forms."""
    unit_at_0, vanishing = local
    if not vanishing or any(not f.is_homogeneous or f.total_degree() != 1 for f, _ in vanishing):
        return None
    if unit_at_0 <= 0 or any(e % 2 for _, e in vanishing):
        return None
    normals = [linear_part(f) for f, _ in vanishing]
    exps = [e for _, e in vanishing]
    names = [f"({f.as_expr()})^{e}" for f, e in vanishing]
    prior = [sp.Integer(0)] * len(normals)
    for j, hj in enumerate(h):
        if hj == 0:
            continue
        axis = [Fraction(int(i == j)) for i in range(len(h))]
        if axis in normals:
            prior[normals.index(axis)] = hj
        else:
            normals.append(axis)
            exps.append(0)
            prior.append(hj)
            names.append(f"|{K.gens[j]}|^{hj}")
    return normals, exps, prior, names


def _closure(normals: list[list[Fraction]], members: Sequence[int]) -> Flat:
    """Every hyperplane containing the intersection of ``members``: normals in their span."""
    r = rank_of([normals[i] for i in members])
    return frozenset(
        i for i in range(len(normals)) if rank_of([normals[k] for k in members] + [normals[i]]) == r
    )


def _flats(normals: list[list[Fraction]]) -> set[Flat]:
    """All flats, by intersecting flats with hyperplanes until nothing new appears."""
    found = {_closure(normals, [i]) for i in range(len(normals))}
    frontier = set(found)
    while frontier:
        new = {_closure(normals, [*x, i]) for x in frontier for i in range(len(normals))}
        frontier = new - found
        found |= frontier
    return found


def _dense(normals: list[list[Fraction]], flat: Flat) -> bool:
    """The matroid of the flat's normals is connected: the fundamental circuits (supports of a
    reduced null-space basis) join every element."""
    idx = sorted(flat)
    cols = [normals[i] for i in idx]
    rows = [[col[r] for col in cols] for r in range(len(cols[0]))]
    parent = list(range(len(idx)))

    def root(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    for vec in nullspace(rows, len(idx)):
        support = [k for k, v in enumerate(vec) if v != 0]
        for k in support[1:]:
            parent[root(k)] = root(support[0])
    return len({root(k) for k in range(len(idx))}) == 1


def _nested(normals: list[list[Fraction]], chosen: Sequence[Flat]) -> bool:
    """No two or more pairwise incomparable members intersect in a dense flat."""
    for size in range(2, len(chosen) + 1):
        for group in combinations(chosen, size):
            if any(a <= b or b <= a for a, b in combinations(group, 2)):
                continue
            if _dense(normals, _closure(normals, sorted(frozenset().union(*group)))):
                return False
    return True


def arrangement_rlct(
    K: sp.Poly, h: tuple[sp.Rational, ...], local: LocalFactors | None = None
) -> RLCT | None:
    """λ and m of a product of linear forms (module docstring); None when K is not one, or when
    its arrangement has more than ``MAX_HYPERPLANES`` hyperplanes. ``local``: K's factors, when
    the caller has them."""
    found = _hyperplanes(K, h, local or local_factors(K))
    if found is None or len(found[0]) > MAX_HYPERPLANES:
        return None
    normals, exps, prior, names = found
    ratios: dict[Flat, sp.Rational] = {}
    for flat in _flats(normals):
        weight = sum(exps[i] for i in flat)
        if weight and _dense(normals, flat):
            codim = rank_of([normals[i] for i in flat])
            ratios[flat] = (codim + sum(prior[i] for i in flat)) / sp.Integer(weight)
    lam = min(ratios.values())
    best = [x for x, r in ratios.items() if r == lam]
    mult = next(  # divisors meeting at a point: at most d of them
        size
        for size in range(min(len(best), len(h)), 0, -1)
        if any(_nested(normals, group) for group in combinations(best, size))
    )
    cond = Condition(
        f"K·prior = unit·{'·'.join(names)}: linear forms over Q, even exponents, a positive "
        f"unit; λ from the dense flat(s) of ratio {lam} (of {len(ratios)} dense flats), m the "
        "largest nested set of them",
        True,
    )
    return RLCT.exact_value(lam, mult, METHOD, (cond,))
