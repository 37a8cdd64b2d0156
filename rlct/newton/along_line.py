"""λ and m at the generic points of a line of zeros, by a Newton polyhedron whose coefficients
are polynomials in the line's coordinate.

Setting: generators F_k ∈ Q[x_1..x_r, w] of an ideal, all zero on the line L = {x = 0}, under
the prior Π|x_j|^(h_j) (a unit in w off w = 0). Read F_k = Σ_α c_kα(w)·x^α with c_kα ∈ Q[w] and
let Γ be the Newton polyhedron of the supports {α : c_kα ≠ 0} in x alone.

At a point p = (0, w₀) of L, in coordinates (x, w' = w − w₀), the Newton polyhedron of the ideal
is Γ × R≥0 when every coefficient on a compact face of Γ is non-zero at w₀ (the terms off those
faces lie inside it whatever their coefficients), and its compact faces are those of Γ with the
face polynomials F_{k,γ}(x; w₀). Wherever, in addition, no system {F_{k,γ}(·; w₀) = 0} has a zero
in the torus, the ideal is Newton non-degenerate at p, and λ and m are those of Γ × R≥0 under the
weights (h + 1, 1): the same at every such point (Watanabe 2009, ch. 4; the w direction's weight
1 is never on the face that Γ's distance is attained on, so m is Γ's).

The points of L where either fails are finitely many when (i) no coefficient on a compact face
vanishes identically (true by construction) and (ii) for each compact face the elimination ideal
(⟨F_{k,γ}⟩ + ⟨t·x_1⋯x_r − 1⟩) ∩ Q[w] is not zero (lex Gröbner bases over Q; a zero ideal means a
complex torus zero for every w: declined). Their real points must be rational (else declined,
except for the coefficients' irrational roots, read as below);
they and the caller's ``known`` values are the special values, solved one by one by the caller.
λ and m are read at a witness w₀ off them (the least positive integer) by
:func:`rlct.newton.analysis.ideal_step`, which must find the ideal non-degenerate there.

Irrational values where a coefficient on a compact face vanishes (the real roots s of an
irreducible factor q of degree ≥ 2) are read here instead of declined: v = q(w) is a coordinate
near s (q'(s) ≠ 0), each coefficient is c_α = q^μ_α·u_α with u_α(s) ≠ 0, so the polyhedron at s is
conv{(α, μ_α)} + R≥0, the same at every root of q. Where every compact face holds exactly one
point of some generator (a monomial face part, so no torus zero), λ and m there are those of the
monomial ideal ⟨x^α·v^μ_α⟩; otherwise declined. Irrational values from the face systems (where a
torus zero appears) are still declined.

⟨x, (w² − 1)·y³⟩ on L = {x = y = 0}: Γ = conv{(1, 0), (0, 3)} + R²≥0, whose vertex y³ has the
coefficient w² − 1, so w = ±1 are special; elsewhere λ = 1/2 + 1/6 = 2/3, m = 1.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
from sympy.polys.orderings import lex

from ..algebra.groebner import bounded_groebner
from ..algebra.projective_zeros import affine_zeros
from ..result import RLCT
from .analysis import ideal_step
from .polyhedron import NewtonPolyhedron

__all__ = [
    "MAX_FACE_TERMS",
    "MAX_TRANSVERSE",
    "AlgebraicPoints",
    "AlongLine",
    "newton_along_line",
]

MAX_TRANSVERSE = 7  # transverse variables a face system's Gröbner basis may have
MAX_FACE_TERMS = 64  # terms of one face system given to a lex Gröbner basis (rlct.algebra.groebner)


@dataclass(frozen=True)
class AlongLine:
    """λ, m at the points of the line off ``special``; ``witness`` is such a point, and
    ``vertices`` the exponents of Γ's vertices (in the transverse variables, for the record)."""

    lam: sp.Rational
    mult: int
    witness: Fraction
    special: frozenset[Fraction]
    vertices: tuple[tuple[int, ...], ...]
    algebraic: tuple[AlgebraicPoints, ...] = ()


@dataclass(frozen=True)
class AlgebraicPoints:
    """The real roots s of an irreducible ``q`` ∈ Q[w] of degree ≥ 2 at which a coefficient on a
    compact face vanishes, read in the coordinates (x, v = q(w)): λ, m (the same at each root)."""

    q: sp.Expr
    lam: sp.Rational
    mult: int

    @property
    def text(self) -> str:
        """Where and what, for a condition."""
        where = f"at the real roots of {self.q} (read in the coordinate v = {self.q})"
        return f"{where}, λ = {self.lam}, m = {self.mult}"

    def part(self, where: str) -> RLCT:
        """These points as an exact part of a resolution whose other points are ``where``."""
        return RLCT.exact_value(self.lam, self.mult, f"{where} at the real roots of {self.q}")


def newton_along_line(
    total: Sequence[sp.Expr],
    transverse: Sequence[sp.Symbol],
    line: sp.Symbol,
    h: Sequence[sp.Rational],
    known: frozenset[Fraction] = frozenset(),
) -> AlongLine | None:
    """λ and m of ⟨``total``⟩ at the generic points of {``transverse`` = 0} (the coordinate
    ``line`` free) under the prior exponents ``h`` of the transverse variables, with the special
    values of ``line`` (module docstring; ``known`` ones included); None when a condition fails
    or there are more than ``MAX_TRANSVERSE`` transverse variables or ``MAX_FACE_TERMS`` terms in a
    face system."""
    xs = tuple(transverse)
    if len(xs) > MAX_TRANSVERSE:
        return None
    terms = [ts for ts in (_terms(f, xs) for f in total) if ts]
    if not terms or any(not any(m) for ts in terms for m in ts):
        return None  # a generator is not zero on the line
    gamma = NewtonPolyhedron([m for ts in terms for m in ts], "the ideal along the line")
    special = set(known)
    algebraic: set[sp.Poly] = set()
    on_faces = {m for face in gamma.compact_faces for m in face.points}
    for ts in terms:
        for m, c in ts.items():
            if m in on_faces:
                rational, irreducible = _coefficient_roots(c, line)
                special |= rational
                algebraic |= irreducible
    t = sp.Dummy("t")
    torus = t * sp.Mul(*xs) - 1
    for face in gamma.compact_faces:
        if len(face.points) < 2:
            continue  # a vertex: a monomial, no zero in the torus
        on = set(face.points)
        system = [_face_part(ts, on, xs) for ts in terms]
        system = [e for e in system if e != 0]
        if sum(len(sp.Add.make_args(e)) for e in system) > MAX_FACE_TERMS:
            return None  # declined rather than a Gröbner basis of unknown cost
        basis = bounded_groebner([*system, torus], [t, *xs, line], lex)
        if basis is None:
            return None  # over rlct.algebra.groebner's limits
        eliminated = [e for e in basis if not e.free_symbols & {t, *xs}]
        if not eliminated:
            return None  # a torus zero for every w: degenerate along all of L
        roots = affine_zeros(eliminated, [line])
        if roots is None:
            return None
        special |= {r[0] for r in roots}
    w0 = next(Fraction(k) for k in itertools.count(1) if Fraction(k) not in special)
    shift = sp.Rational(w0.numerator, w0.denominator)
    local = [sp.Poly(sp.expand(f.xreplace({line: line + shift})), *xs, line) for f in total]
    result = ideal_step([p for p in local if not p.is_zero], (*h, sp.Integer(0))).result
    if not result.exact:
        return None
    points = [_at_roots(terms, q, xs, h) for q in sorted(algebraic, key=str)]
    if any(p is None for p in points):
        return None
    return AlongLine(result.lam, result.mult, w0, frozenset(special), gamma.vertices, tuple(points))


def _coefficient_roots(c: sp.Expr, line: sp.Symbol) -> tuple[set[Fraction], set[sp.Poly]]:
    """The rational real roots of c ∈ Q[w], and its irreducible factors of degree ≥ 2 that have
    real roots (monic)."""
    poly = sp.Poly(c, line, domain=sp.QQ)
    rational, irreducible = set(), set()
    for f, _ in poly.factor_list()[1]:
        if f.degree() == 1:
            r = -f.nth(0) / f.nth(1)
            rational.add(Fraction(int(r.numerator), int(r.denominator)))
        elif f.count_roots() > 0:
            irreducible.add(f.monic())
    return rational, irreducible


def _at_roots(
    terms: list[dict[tuple[int, ...], sp.Expr]],
    q: sp.Poly,
    xs: tuple[sp.Symbol, ...],
    h: Sequence[sp.Rational],
) -> AlgebraicPoints | None:
    """λ, m at the real roots s of ``q`` (module docstring): with v = q(w), a local coordinate
    there (q'(s) ≠ 0), c_α = q^μ_α·u_α with u_α(s) ≠ 0, so the polyhedron is conv{(α, μ_α)} + R≥0
    and the face parts carry the u_α(s). Non-degenerate when every compact face holds exactly
    one point of some generator (a monomial face part: no torus zero); then λ, m are those of
    the monomial ideal ⟨x^α·v^μ_α⟩. None otherwise."""
    points = [
        [(*m, _multiplicity(sp.Poly(c, *q.gens, domain=sp.QQ), q)) for m, c in ts.items()]
        for ts in terms
    ]
    gamma = NewtonPolyhedron([p for g in points for p in g], f"the ideal at the roots of {q}")
    for face in gamma.compact_faces:
        on = set(face.points)
        if not any(sum(p in on for p in g) == 1 for g in points):
            return None
    v = sp.Dummy("v")
    names = (*xs, v)
    monomials = {p for g in points for p in g}
    gens = [sp.Poly(sp.Mul(*(x**a for x, a in zip(names, p))), *names) for p in monomials]
    result = ideal_step(gens, (*h, sp.Integer(0))).result
    return AlgebraicPoints(q.as_expr(), result.lam, result.mult) if result.exact else None


def _multiplicity(c: sp.Poly, q: sp.Poly) -> int:
    """The largest k with q^k dividing c (c ≠ 0)."""
    k = 0
    while True:
        quotient, remainder = c.div(q)
        if not remainder.is_zero:
            return k
        c, k = quotient, k + 1


def _terms(f: sp.Expr, xs: tuple[sp.Symbol, ...]) -> dict[tuple[int, ...], sp.Expr]:
    """f as Σ c_α(w)·x^α: {α: c_α} (coefficients as expressions in the rest)."""
    poly = sp.Poly(sp.expand(f), *xs)
    return {m: poly.domain.to_sympy(c) for m, c in poly.terms() if c}


def _face_part(
    ts: dict[tuple[int, ...], sp.Expr], on: set[tuple[int, ...]], xs: tuple[sp.Symbol, ...]
) -> sp.Expr:
    """The terms of one generator whose exponents lie on a face."""
    return sp.Add(*(c * sp.Mul(*(x**a for x, a in zip(xs, m))) for m, c in ts.items() if m in on))
