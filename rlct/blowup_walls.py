"""A line of zeros on the exceptional divisor that lies inside a wall.

Setting as in :mod:`rlct.blowup_families`, three variables: in a chart (u, y, w) of the blow-up
the ideal is u^e·y^b·w^c·J̃ under the prior |u|^(h_u)·|y|^(h_y)·|w|^(h_w), and the zeros of J̃ on
E contain the line L = {u = y = 0} of a *wall* y (b > 0 or h_y ≠ 0). There (u, y) carry the
monomial factor and the prior, so the points of L are never of the kinds
⟨v_1..v_s, u^j⟩ that :mod:`rlct.blowup_families` recognises. Read the generators F_k instead as
polynomials in (u, y) with coefficients in Q[w]; Γ is the Newton polygon of their supports.

At a point p = (0, 0, w₀) of L, in coordinates (u, y, w' = w − w₀), the Newton polyhedron of
the ideal is Γ × R≥0 when every coefficient on a compact face of Γ is non-zero at w₀ (the terms
off those faces lie inside it whatever their coefficients), and its compact faces are those of Γ
with the face polynomials F_{k,γ}(u, y; w₀). So wherever, in addition, no system
{F_{k,γ}(·; w₀) = 0} has a zero in the torus, the ideal is Newton non-degenerate at p, and λ and
m are those of Γ × R≥0 under the weights (h_u + 1, h_y + 1, 1): the same at every such point.

The points of L where either fails are finitely many when (i) no coefficient on a compact face
vanishes identically (true by construction) and (ii) for each compact edge the elimination
ideal (⟨F_{k,γ}⟩ + ⟨t·u·y − 1⟩) ∩ Q[w] is not zero (Gröbner bases over Q; a zero ideal means a
torus zero for every w: declined). Their real points must be rational (else declined); they and
w = 0 (when w is a wall too) are the special points, solved one by one by the caller. λ and m
are read at a witness w₀ off them (the least positive integer) by :func:`rlct.newton.ideal_step`,
which must find the ideal non-degenerate there.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction

import sympy as sp

from .newton import ideal_step
from .plane_line import resolve_along_line
from .polyhedron import NewtonPolyhedron
from .projective_zeros import affine_zeros

__all__ = ["wall_line"]

Point = tuple[Fraction, ...]


def wall_line(
    total: Sequence[sp.Expr],
    u: sp.Symbol,
    wall: sp.Symbol,
    other: sp.Symbol,
    h: tuple[sp.Rational, sp.Rational],
    other_is_wall: bool,
) -> tuple[sp.Rational, int, Fraction, set[Fraction]] | None:
    """λ, m at the generic points of L = {u = ``wall`` = 0}, a witness w₀ and the special values
    of ``other`` (module docstring), for the chart's whole ideal ``total`` (monomial factor
    included) under the prior exponents ``h`` = (h_u, h_wall); None when a condition fails.
    Where Γ's faces are degenerate along L, the plane resolution with a parameter
    (:mod:`rlct.plane_line`) on K = Σ F_k² takes over."""
    known = frozenset({Fraction(0)} if other_is_wall else ())  # w = 0 is a wall itself
    found = _by_newton(total, u, wall, other, h, known)
    if found is not None:
        return found
    K = sp.Poly(sp.expand(sum((f**2 for f in total), sp.S.Zero)), u, wall, other)
    line = resolve_along_line(K, h, known)
    if line is None:
        return None
    return line.lam, line.mult, line.witness, set(line.special)


def _by_newton(
    total: Sequence[sp.Expr],
    u: sp.Symbol,
    wall: sp.Symbol,
    other: sp.Symbol,
    h: tuple[sp.Rational, sp.Rational],
    known: frozenset[Fraction],
) -> tuple[sp.Rational, int, Fraction, set[Fraction]] | None:
    """:func:`wall_line` by Γ's non-degeneracy (module docstring), ``known`` special values
    included; None when it fails."""
    terms = [_terms(f, u, wall) for f in total]
    terms = [ts for ts in terms if ts]
    if not terms:
        return None
    gamma = NewtonPolyhedron([m for ts in terms for m in ts], "the ideal on the wall")
    special = set(known)
    on_faces = {m for face in gamma.compact_faces for m in face.points}
    for ts in terms:
        for m, c in ts.items():
            if m in on_faces:
                roots = affine_zeros([c], [other])
                if roots is None:
                    return None
                special |= {r[0] for r in roots}
    t = sp.Dummy("t")
    for face in gamma.compact_faces:
        if len(face.points) < 2:
            continue  # a vertex: a monomial, no zero in the torus
        on = set(face.points)
        system = [
            sp.Add(*(c * u**a * wall**b for (a, b), c in ts.items() if (a, b) in on))
            for ts in terms
        ]
        system = [e for e in system if e != 0]
        system.append(t * u * wall - 1)
        basis = sp.groebner(system, t, u, wall, other, order="lex", domain=sp.QQ)
        eliminated = [e for e in basis.exprs if not e.free_symbols & {t, u, wall}]
        if not eliminated:
            return None  # a torus zero for every w: degenerate along all of L
        roots = affine_zeros(eliminated, [other])
        if roots is None:
            return None
        special |= {r[0] for r in roots}
    w0 = next(Fraction(k) for k in itertools.count(1) if Fraction(k) not in special)
    shift = sp.Rational(w0.numerator, w0.denominator)
    local = [sp.Poly(sp.expand(f.xreplace({other: other + shift})), u, wall, other) for f in total]
    result = ideal_step([p for p in local if not p.is_zero], (*h, sp.Integer(0))).result
    if not result.exact:
        return None
    return result.lam, result.mult, w0, special


def _terms(f: sp.Expr, u: sp.Symbol, wall: sp.Symbol) -> dict[tuple[int, int], sp.Expr]:
    """f as Σ c_ab(w)·u^a·wall^b: {(a, b): c_ab} (coefficients as expressions in the rest)."""
    poly = sp.Poly(sp.expand(f), u, wall)
    return {m: poly.domain.to_sympy(c) for m, c in poly.terms() if c}
