"""Exact λ and m along a line of zeros, by the plane resolution with a parameter.

Setting. Three variables (x, y, w) and K(x, y; w) ≥ 0 with K(0, 0; w) = 0 for every w, prior
|x|^(h_x)·|y|^(h_y) (no weight on w): the line L = {x = y = 0}. Read K as a plane polynomial in
(x, y) with coefficients in the field Q(w) and run :mod:`rlct.plane.resolve`'s resolution over Q(w).

Why it is exact. The resolution's steps depend on finitely many decisions about elements of Q(w):
the signs of vertex coefficients and of units, which real roots the face polynomials have, with
which multiplicities, and which coincide. :class:`GenericField` takes each decision at a rational
witness w₀ and records the real zeros of every polynomial in w on which it rests (numerators and
denominators of the elements whose sign is read; leading coefficients, discriminants and pairwise
resultants, in the chart coordinate v, of the face polynomials' irreducible factors). A real root
of a face polynomial must lie in Q(w) (a linear factor in v; else declined), so the translation
v ↦ v − c(w) is analytic in w. On the open interval I ∋ w₀ free of the recorded zeros every
decision is the same, so the tower of charts with w carried along is a resolution of K near
every point of L over I (a product with the w-line): λ and m there are the plane's at w₀.

Runs at further witnesses cover the rest of the line; what no run's interval covers is a finite
set of rational points (declined if a recorded zero is irrational), the special values, solved
by the caller one by one. Off them λ is the least over the runs' values, m the largest order at it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
from sympy import QQ

from ..algebra.algebraic import RealRoot
from ..algebra.factor import factor_list, sqf_list
from ..errors import NotNonNegativeError, UndecidedError
from .charts import Terms
from .resolve import local_problem, solve_local

__all__ = ["GenericField", "LineResolution", "resolve_along_line"]

MAX_RUNS = 24  # witnesses tried along one line
_V = sp.Dummy("v")

Interval = tuple[Fraction | None, Fraction | None]  # open; None: unbounded on that side


class _Decline(Exception):
    """A condition of the construction fails on this line (the caller gets None)."""


class _WitnessIsZero(Exception):
    """The witness is a zero of a recorded polynomial: take another."""


class GenericField:
    """Q(w) with every decision taken at the witness w₀ and its zeros recorded (module docstring).

    Implements the interface of :class:`rlct.algebra.algebraic.RealField` that
    :mod:`rlct.plane.resolve` uses.
    """

    generator = None
    degree = 1

    def __init__(self, w: sp.Symbol) -> None:
        self.w = w
        self.domain = QQ.frac_field(w)
        self.at(Fraction(1))

    def at(self, w0: Fraction) -> None:
        """Take the decisions at w₀ from now on, with no zeros recorded yet."""
        self.w0 = sp.Rational(w0.numerator, w0.denominator)
        self.zeros: set[Fraction] = set()

    def from_coefficients(self, coeffs: dict[tuple[int, ...], object]) -> object:
        """The element Σ c_k·w^k of Q[w] ⊂ Q(w) from {(k,): c_k} (rationals)."""
        return self.domain.field.new(self.domain.field.ring.from_dict(coeffs))

    def convert(self, q: object) -> object:
        return self.domain.from_sympy(sp.sympify(q))

    def to_expr(self, a: object) -> sp.Expr:
        return self.domain.to_sympy(a)

    def key(self, a: object) -> tuple:
        return (sp.cancel(self.to_expr(a)),)

    def sign(self, a: object) -> int:
        """The sign at w₀ (constant between the recorded zeros of numerator and denominator)."""
        if not a:
            return 0
        value = sp.Integer(1)
        for part in (a.numer.as_expr(), a.denom.as_expr()):
            self._record(part)
            value *= part.xreplace({self.w: self.w0})
        if value == 0:
            raise _WitnessIsZero
        return 1 if value > 0 else -1

    def embedding(self, other: object) -> None:
        return None

    def note_faces(self, faces: list[dict[int, object]]) -> None:
        """Record where the face polynomials' real roots could change: the leading coefficients
        and discriminants of their irreducible factors (in v) and their pairwise resultants."""
        factors: dict[sp.Expr, sp.Poly] = {}
        for face in faces:
            for f in self._factors(face):
                factors.setdefault(f.as_expr(), f)
        for f in factors.values():
            self._record(sp.Poly(f.as_expr(), _V).LC())
            if f.degree(_V) >= 2:
                self._record(sp.discriminant(f.as_expr(), _V))
        for f, g in itertools.combinations(factors.values(), 2):
            self._record(sp.resultant(f.as_expr(), g.as_expr(), _V))

    def real_roots(self, coeffs: dict[int, object]) -> dict[RealRoot, int]:
        """The non-zero real roots of φ(v) = Σ coeffs[j]·v^j in Q(w); declined where a factor of
        degree ≥ 2 has real roots at w₀ (roots outside Q(w))."""
        out: dict[RealRoot, int] = {}
        for f, mult in self._factors(coeffs, with_mult=True):
            if f.degree(_V) >= 2:
                at_w0 = sp.Poly(f.as_expr().xreplace({self.w: self.w0}), _V, domain=QQ)
                if at_w0.degree() < f.degree(_V) or at_w0.count_roots() > 0:
                    raise _Decline("a face polynomial has a real root outside Q(w)")
                continue
            a_w, b_w = sp.Poly(f.as_expr(), _V).all_coeffs()
            if b_w == 0:
                continue  # the root v = 0 is not on the torus
            root = self.convert(-b_w / a_w)
            out[RealRoot(self, root, ("in", *self.key(root)), None)] = mult
        return out

    def _factors(self, coeffs: dict[int, object], with_mult: bool = False) -> list:
        """The irreducible factors of Σ coeffs[j]·v^j over Q[v, w] that involve v (primitive,
        positive leading coefficient; with multiplicities if asked)."""
        den = self.domain.field.ring.one
        for c in coeffs.values():
            den = den.lcm(c.denom)
        terms = {}
        for j, c in coeffs.items():
            for (k,), a in (c.numer * den.exquo(c.denom)).terms():
                terms[(j, k)] = a
        poly = sp.Poly.from_dict(terms, _V, self.w, domain=QQ)
        out = []
        for f, e in factor_list(poly)[1]:
            if f.degree(_V) == 0:
                continue
            f = sp.Poly(f.as_expr(), _V, self.w, domain=QQ).monic()
            out.append((f, e) if with_mult else f)
        return out

    def _record(self, expr: sp.Expr) -> None:
        """Add the real zeros of the polynomial ``expr`` in w; declined if one is irrational."""
        poly = sp.Poly(expr, self.w, domain=QQ)
        if poly.degree() <= 0:
            return
        for f, _ in factor_list(poly)[1]:
            if f.degree() == 1:
                a, b = f.all_coeffs()
                r = -b / a
                self.zeros.add(Fraction(int(r.p), int(r.q)))
            elif f.count_roots() > 0:
                raise _Decline(
                    f"a special value of {self.w} is irrational (a root of {f.as_expr()})"
                )


@dataclass(frozen=True)
class LineResolution:
    """λ, m at the points of the line off ``special``; ``witness`` is a point attaining them."""

    lam: sp.Rational
    mult: int
    witness: Fraction
    special: frozenset[Fraction]
    runs: int
    algebraic: tuple[()] = ()  # no irrational special points (they are declined here)


def resolve_along_line(
    K: sp.Poly,
    prior: tuple[sp.Rational, sp.Rational],
    special: frozenset[Fraction] = frozenset(),
) -> LineResolution | None:
    """λ and m of ``K`` (a polynomial in (x, y, w), its generators in that order) near the
    generic points of the line x = y = 0 under |x|^(h_x)|y|^(h_y), with ``special`` values of w
    the caller already excludes; None where the construction declines."""
    field = GenericField(K.gens[2])
    const, factors = _factors_over(K, field)
    covered: list[tuple[Interval, sp.Rational, int, Fraction]] = []
    avoid: set[Fraction] = set(special)
    for run in range(MAX_RUNS):
        gaps = _uncovered([c[0] for c in covered], avoid)
        pieces = [g for g in gaps if g[0] is None or g[1] is None or g[0] < g[1]]
        if not pieces:
            points = {g[0] for g in gaps}
            lam = min(c[1] for c in covered)
            mult = max(c[2] for c in covered if c[1] == lam)
            witness = next(c[3] for c in covered if (c[1], c[2]) == (lam, mult))
            return LineResolution(lam, mult, witness, frozenset(points), run)  # type: ignore[arg-type]
        w0 = _inside(pieces[0])
        field.at(w0)
        try:
            node = solve_local(local_problem(field, const, factors, prior), 0)  # type: ignore[arg-type]
        except _WitnessIsZero:
            avoid.add(w0)
            continue
        except (_Decline, UndecidedError, NotNonNegativeError):
            return None
        if w0 in field.zeros:  # e.g. two roots meet at w₀: the run holds only beside it
            avoid.add(w0)
            continue
        covered.append((_around(w0, field.zeros), node.lam, node.mult, w0))
    return None


def _factors_over(K: sp.Poly, field: GenericField) -> tuple[int, list[tuple[Terms, int]]]:
    """K = c·Π g_i^(e_i) (square-free over Q, hence over Q(w)), each g_i as {(i, j): element of
    Q(w)}: the sign of c and the factors, converted once for all the witnesses."""
    const, parts = sqf_list(K)
    factors = []
    for g, e in parts:
        coeffs: dict[tuple[int, int], dict[tuple[int], object]] = {}
        for (i, j, k), c in g.terms():
            coeffs.setdefault((i, j), {})[(k,)] = c
        factors.append(({m: field.from_coefficients(d) for m, d in coeffs.items()}, e))
    return (1 if const > 0 else -1), factors


def _around(w0: Fraction, zeros: set[Fraction]) -> Interval:
    """The open interval around w₀ free of ``zeros``."""
    below = [z for z in zeros if z < w0]
    above = [z for z in zeros if z > w0]
    return (max(below) if below else None, min(above) if above else None)


def _uncovered(intervals: list[Interval], avoid: set[Fraction]) -> list[Interval]:
    """The closed pieces of R outside the open ``intervals``, split at ``avoid`` (a piece (a, a)
    is a single point; a piece with a < b still needs a witness)."""
    pieces: list[Interval] = [(None, None)]
    for lo, hi in intervals:
        nxt: list[Interval] = []
        for a, b in pieces:
            if hi is not None and a is not None and hi <= a:
                nxt.append((a, b))
                continue
            if lo is not None and b is not None and lo >= b:
                nxt.append((a, b))
                continue
            if lo is not None and (a is None or a <= lo):
                nxt.append((a, lo))
            if hi is not None and (b is None or hi <= b):
                nxt.append((hi, b))
        pieces = nxt
    out: list[Interval] = []
    for a, b in pieces:
        cuts = sorted(p for p in avoid if (a is None or p > a) and (b is None or p < b))
        ends = [a, *cuts, b]
        out.extend(itertools.pairwise(ends))
        out.extend((p, p) for p in cuts)
    return out


def _inside(piece: Interval) -> Fraction:
    """A rational point inside the piece: the integer nearest 1, else the midpoint."""
    a, b = piece
    lo = None if a is None else math.floor(a) + 1
    hi = None if b is None else math.ceil(b) - 1
    if lo is not None and hi is not None and lo > hi:
        return (a + b) / 2  # type: ignore[operator]
    k = 1 if lo is None else max(lo, 1)
    return Fraction(k if hi is None else min(k, hi))
