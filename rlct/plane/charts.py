"""Newton polygons and toric charts of plane polynomials over a real field
(:mod:`rlct.plane.resolve`).

A polynomial in the chart coordinates (u, v) is a dict {(i, j): coefficient} over a
:class:`~rlct.algebra.algebraic.RealField`. For a primitive weight w = (p, q) > 0 (the inner normal
of a compact edge of a Newton polygon) the chart with exponents (a, b), p·b − a·q = 1, is

    x = u^p · v^a,   y = u^q · v^b,

a map of determinant 1 on exponents: it is a bijection of the real torus (R∖{0})² onto itself,
sign patterns included, and {u = 0} is the exceptional curve E_w of the toric modification. A
monomial x^i y^j becomes u^(p i + q j) v^(a i + b j); the strict transform g̃ of g is g∘chart
divided by u^(N_w(g)) v^(M), N_w(g) = min ⟨w, α⟩ over g's exponents α, M the least v-exponent,
and g̃(0, v) is g's face polynomial on the edge of normal w, written in the coordinate v of E_w.
"""

from __future__ import annotations

import itertools
from math import comb, gcd

from ..algebra.algebraic import RealField

__all__ = [
    "Terms",
    "chart",
    "edge_normals",
    "face_restriction",
    "monomial_part",
    "order",
    "strict_transform",
    "translate",
    "vertex_exponent",
]

Terms = dict[tuple[int, int], object]


def _minimal(points: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """Exponents not dominated by another, sorted by the first coordinate (the second decreases)."""
    out: list[tuple[int, int]] = []
    for i, j in sorted(points):
        if not out or j < out[-1][1]:
            out.append((i, j))
    return out


def edge_normals(support: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """Primitive inner normals (p, q) > 0 of the compact edges of conv(support) + R²_{≥0}."""
    hull: list[tuple[int, int]] = []
    for pt in _minimal(support):
        while len(hull) >= 2:
            (ai, aj), (bi, bj) = hull[-2], hull[-1]
            if (bi - ai) * (pt[1] - aj) - (bj - aj) * (pt[0] - ai) > 0:
                break
            hull.pop()
        hull.append(pt)
    normals = []
    for (i1, j1), (i2, j2) in itertools.pairwise(hull):
        g = gcd(j1 - j2, i2 - i1)
        normals.append(((j1 - j2) // g, (i2 - i1) // g))
    return normals


def order(support: set[tuple[int, int]] | dict, w: tuple[int, int]) -> int:
    """N_w = min ⟨w, α⟩ over the exponents α."""
    return min(w[0] * i + w[1] * j for i, j in support)


def vertex_exponent(support: set[tuple[int, int]] | dict, w: tuple[int, int]) -> tuple[int, int]:
    """The exponent minimising ⟨w, α⟩, for a weight w inside a vertex's normal cone."""
    best = min(w[0] * i + w[1] * j for i, j in support)
    (vertex,) = [(i, j) for i, j in support if w[0] * i + w[1] * j == best]
    return vertex


def chart(w: tuple[int, int]) -> tuple[int, int]:
    """Exponents (a, b) ≥ 0 with p·b − a·q = 1, so that x = u^p v^a, y = u^q v^b is unimodular."""
    p, q = w
    b = pow(p, -1, q) if q > 1 else 1
    return (p * b - 1) // q, b


def strict_transform(g: Terms, w: tuple[int, int]) -> tuple[Terms, int, int]:
    """(g̃, N_w(g), M): g(u^p v^a, u^q v^b) = u^N v^M g̃(u, v), g̃ divisible by neither u nor v."""
    p, q = w
    a, b = chart(w)
    moved = {(p * i + q * j, a * i + b * j): c for (i, j), c in g.items()}
    n = min(e[0] for e in moved)
    m = min(e[1] for e in moved)
    return {(i - n, j - m): c for (i, j), c in moved.items()}, n, m


def face_restriction(g_tilde: Terms) -> dict[int, object]:
    """g̃(0, v) as {v-exponent: coefficient}: the face polynomial on E_w = {u = 0}."""
    return {j: c for (i, j), c in g_tilde.items() if i == 0}


def translate(g: Terms, field: RealField, c: object) -> Terms:
    """g(u, c + v) over ``field`` (which contains c and g's coefficients)."""
    zero = field.domain.zero
    top = max(j for _, j in g)
    powers = [field.domain.one]
    for _ in range(top):
        powers.append(powers[-1] * c)
    out: dict[tuple[int, int], object] = {}
    for (i, j), coeff in g.items():
        for k in range(j + 1):
            term = coeff * powers[j - k] * comb(j, k)
            out[(i, k)] = out.get((i, k), zero) + term
    return {e: x for e, x in out.items() if x}


def monomial_part(g: Terms) -> tuple[Terms, int, int]:
    """(h, α, β) with g = u^α v^β h and h divisible by neither u nor v."""
    alpha = min(i for i, _ in g)
    beta = min(j for _, j in g)
    return {(i - alpha, j - beta): c for (i, j), c in g.items()}, alpha, beta
