"""The points of the exceptional divisor where the initial forms' zeros are not finitely many.

Setting as in :mod:`rlct.blowup.origin`: the ideal x^a·J, o the least order of J's generators, π the
blow-up of the origin; in chart i (x_i = u, x_j = u·y_j) J∘π = u^o·J̃ with J̃ = ⟨G⟩, G the
generators' pull-backs divided by u^o, and Z = V(J̃) ∩ {u = 0} the zeros on E of the chart.
When Z is a curve or more, its points are not solved one by one. Instead, for s of J̃'s
generators g = (g_1..g_s) and a power u^j (j ≤ 6, or none), a point p ∈ Z is *good* when

* rank d(g, u)(p) = s + 1: (u, g_1..g_s) extend to coordinates (u, v_1..v_s, w) at p;
* with j: u^j ∈ J̃ near p (p ∉ V(J̃ : u^j)); and every other generator f lies in ⟨g, u^j⟩
  near p (p ∉ V(⟨g, u^j⟩ : f)), or in ⟨g⟩ without j. Then J̃ = ⟨v_1..v_s, u^j⟩ (or
  ⟨v_1..v_s⟩, *transversal* to E) near p;
* p lies on no hyperplane y_j = 0 that carries a_j > 0 or h_j ≠ 0 (they are units there).

The ideal is then u^(|a|+o)·⟨v_1..v_s, u^j⟩ under the prior |u|^(n−1+Σh): a monomial ideal, so
every good point has the same λ and m (the Newton polyhedron of a monomial ideal is never
degenerate). The points that are not good lie in finitely many sets Z ∩ V(minors),
Z ∩ V(quotients), Z ∩ {y_j = 0}; each must be finite with rational real points
(:func:`rlct.algebra.projective_zeros.affine_zeros`), or that choice of (g, j) fails; the first
choice that passes is used (any that passes describes the same local ideal at all but finitely many
points). The special points are solved one by one by the caller, as the isolated zeros are.

A line of Z inside a wall (y_j = 0 with a_j > 0 or h_j ≠ 0; three variables) has no such kind:
there the Newton polygon in (u, y_j), with coefficients in the line's coordinate, is used when it
is non-degenerate at all but finitely many of its points (:mod:`rlct.blowup.walls`).

Z may hold points of different kinds on different components (⟨x²z, yz − x³⟩ in chart x: Z =
{bc = 0}, u²·⟨u − bc, u²⟩ along c = 0 and u²·⟨b, u⟩ along b = 0). So Z is first split into the
hypersurfaces V(f_i) of the irreducible factors f_i over Q of the gcd of its equations, and the
finitely many rational points that the equations divided by the gcd leave (special), and each
V(f_i) gets a kind of its own; where that split does not apply or fails, Z is searched whole.

The kind's λ counts towards the minimum only where a real good point exists: one found with
rational coordinates (the *witness*) makes it exact; without one it is only a lower bound (its
real points might be none).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
from sympy.polys.orderings import ProductOrder, grevlex, lex

from ..algebra.factor import factor_list
from ..algebra.groebner import bounded_groebner, in_ideal, is_zero_dimensional
from ..algebra.projective_zeros import affine_zeros
from ..newton.along_line import AlgebraicPoints
from ..newton.analysis import ideal_step
from .walls import wall_line

__all__ = ["MAX_FAMILY_VARIABLES", "Family", "chart_families"]

MAX_FAMILY_VARIABLES = 4  # Gröbner bases of ideal quotients grow fast past this
MAX_STRICT_TERMS = 60  # terms of one strict-transform generator
MAX_STRICT_DEGREE = 8
MAX_POWER = 6  # the largest j in ⟨v_1..v_s, u^j⟩ tried
MAX_QUOTIENT_TERMS = 24  # terms of ⟨g⟩ : f's input; larger ones took up to 75 s (RESULTS.md)
TRIAL_VALUES = tuple(Fraction(q) for q in (1, -1, 2, "1/2", -2, 3, 0))

Point = tuple[Fraction, ...]
Least = tuple[int, list[sp.Expr]] | None  # (j, J̃ : u^j), or None when no j ≤ MAX_POWER
ELIMINATE_FIRST = ProductOrder((lex, lambda m: m[:1]), (grevlex, lambda m: m[1:]))


@dataclass(frozen=True)
class Family:
    """The good points of chart ``chart``, where the strict transform is ⟨v_1..v_s, u^j⟩
    (``smooth`` = s, ``power`` = j, None when transversal), their λ and m, and a rational real
    point of that kind when one was found."""

    chart: int
    smooth: int
    power: int | None
    lam: sp.Rational
    mult: int
    witness: Point | None
    wall: str | None = None  # a line inside this wall (rlct.blowup.walls): Γ in (u, wall)
    roots: tuple[AlgebraicPoints, ...] = ()  # that line's irrational points, read on their own

    @property
    def kind(self) -> str:
        if self.wall is not None:
            return f"a Newton polygon in (u, {self.wall})"
        vs = [f"v{i + 1}" for i in range(self.smooth)]
        return "⟨" + ", ".join(vs + ([] if self.power is None else [f"u^{self.power}"])) + "⟩"

    @property
    def label(self) -> str:
        where = "no real point found"
        if self.witness is not None:
            where = "at [" + " : ".join(str(c) for c in self.witness) + "]"
        if self.wall is not None:
            line = f"the line u = {self.wall} = 0 in a wall"
            return f"chart {self.chart + 1}, {line}, {self.kind} ({where})"
        return f"chart {self.chart + 1}, strict transform {self.kind} ({where})"


def chart_families(
    strict: Sequence[sp.Poly],
    chart: int,
    monomial: tuple[int, ...],
    order: int,
    h: tuple[sp.Rational, ...],
    exponents: tuple[int, sp.Rational] | None = None,
) -> tuple[tuple[Family, ...], tuple[Point, ...]] | None:
    """The good kinds and the special points (as points of RP^(n−1) with coordinate ``chart``
    equal to 1) of chart ``chart`` for the strict transform ``strict`` = G; None when no choice of
    g leaves finitely many rational special points, or the sizes are over the limits. Where Z is
    finite, every point of it is special and there is no family. ``exponents`` = (e, hu): the
    chart's ideal is u^e·J̃ under |u|^hu (default |a| + o and n − 1 + Σh, the blow-up of the
    origin; a weighted blow-up has its own, :mod:`rlct.blowup.weighted`)."""
    gens = list(strict[0].gens)
    n = len(gens)
    if n > MAX_FAMILY_VARIABLES or not _small(strict):
        return None
    u = gens[chart]
    ys = [x for j, x in enumerate(gens) if j != chart]
    exprs = [p.as_expr() for p in strict]
    on_e = [sp.expand(q.xreplace({u: 0})) for q in exprs]
    finite = affine_zeros(on_e, ys)
    if finite is not None:
        return (), tuple(_lift(p, chart) for p in finite)
    zeros_basis = bounded_groebner(on_e, ys, grevlex)
    if zeros_basis is None or is_zero_dimensional(zeros_basis, ys, grevlex):
        return None  # finitely many zeros, not all rational (not a family's business), or
        # over rlct.algebra.groebner's limits
    walls = [gens[j] for j in range(n) if j != chart and (monomial[j] > 0 or h[j] != 0)]
    e, hu = exponents or (sum(monomial) + order, sum(h, sp.Integer(n - 1)))

    def family_on(zeros: list[sp.Expr]) -> tuple[Family, set[Point]] | None:
        wall = next((w for w in walls if n == 3 and zeros == [w]), None)
        if wall is not None:  # the line u = wall = 0: rlct.blowup.walls
            factor = u**e * sp.Mul(*(gens[j] ** monomial[j] for j in range(n) if j != chart))
            total = [factor * q for q in exprs]
            return _wall_family(total, chart, u, ys, wall, (hu, h[gens.index(wall)]), walls)
        found = _component_family(exprs, zeros, u, ys, gens, walls)
        if found is None:
            return None
        size, power, witness, special = found
        lam, mult = _value(size, power, e, hu)
        lifted = None if witness is None else _lift(witness, chart)
        return Family(chart, size, power, lam, mult, lifted), special

    splits: list[tuple[list, set[Point]]] = []
    if (by_factors := _components(on_e, ys)) is not None:
        splits.append(by_factors)  # tried first: a kind per factor
    if by_factors is None or len(by_factors[0]) > 1 or by_factors[1]:
        splits.append(([on_e], set()))  # Z whole: one kind (the same as one factor alone)
    for components, special in splits:
        found = [family_on(zeros) for zeros in components]
        if all(f is not None for f in found):
            families = tuple(f[0] for f in found)  # type: ignore[index]
            special = special.union(*(f[1] for f in found))  # type: ignore[index]
            return families, tuple(_lift(p, chart) for p in sorted(special))
    return None


def _wall_family(
    total: list[sp.Expr],
    chart: int,
    u: sp.Symbol,
    ys: list[sp.Symbol],
    wall: sp.Symbol,
    h: tuple[sp.Rational, sp.Rational],
    walls: list[sp.Symbol],
) -> tuple[Family, set[Point]] | None:
    """The family of the line u = ``wall`` = 0 (:func:`rlct.blowup.walls.wall_line` on the
    chart's whole ideal ``total``) and its special points, as points of the chart."""
    other = next(y for y in ys if y != wall)
    line = wall_line(total, u, wall, other, h, other in walls)
    if line is None:
        return None
    on_line = {tuple(Fraction(0) if y == wall else v for y in ys) for v in line.special}
    witness = _lift(tuple(Fraction(0) if y == wall else line.witness for y in ys), chart)
    family = Family(chart, 0, None, line.lam, line.mult, witness, str(wall), line.algebraic)
    return family, on_line


def _components(on_e: list[sp.Expr], ys: list[sp.Symbol]) -> tuple[list, set[Point]] | None:
    """Z as the hypersurfaces V(f_i) of the irreducible factors f_i (over Q) of the gcd of its
    equations, and the finitely many rational points where the equations divided by the gcd
    vanish (points of Z off those hypersurfaces, or on them: special either way); None when
    the gcd is constant (Z is then searched whole), or leaves infinitely many or irrational
    points."""
    polys = [sp.Poly(q, *ys, domain=sp.QQ) for q in on_e if q != 0]
    if not polys:
        return None
    common = functools.reduce(sp.gcd, polys)
    if common.is_ground:
        return None
    factors = [f for f, _ in factor_list(common)[1]]
    rest = [sp.div(p, common)[0].as_expr() for p in polys]
    left = affine_zeros(rest, ys)
    if left is None:
        return None
    return [[f.as_expr()] for f in factors], set(left)


def _component_family(
    strict: list[sp.Expr],
    zeros: list[sp.Expr],
    u: sp.Symbol,
    ys: list[sp.Symbol],
    gens: list[sp.Symbol],
    walls: list[sp.Symbol],
) -> tuple[int, int | None, Point | None, set[Point]] | None:
    """The first choice of s generators g of J̃ (s = 0, 1, ...) whose kind holds at all but
    finitely many rational points of the zeros ``zeros`` on E (``_kind``): (s, j, a witness or
    None, the special points); None when no choice passes."""
    least: list[Least] = []  # the least power of u in J̃ near almost all of them, once computed
    for size in range(min(len(strict), len(ys)) + 1):
        for chosen in itertools.combinations(range(len(strict)), size):
            g = [strict[j] for j in chosen]
            others = [strict[j] for j in range(len(strict)) if j not in chosen]
            found = _kind(g, others, least, strict, u, ys, gens, zeros, walls)
            if found is None:
                continue
            power, test, special = found
            return size, power, _witness(test, zeros, u, ys, set(special)), set(special)
    return None


def _small(strict: Sequence[sp.Poly]) -> bool:
    return all(
        len(p.terms()) <= MAX_STRICT_TERMS and p.total_degree() <= MAX_STRICT_DEGREE for p in strict
    )


def _kind(
    g: list[sp.Expr],
    others: list[sp.Expr],
    least: list[Least],
    strict: list[sp.Expr],
    u: sp.Symbol,
    ys: list[sp.Symbol],
    gens: list[sp.Symbol],
    on_e: list[sp.Expr],
    walls: list[sp.Symbol],
) -> tuple[int | None, Callable[[dict], bool], list[Point]] | None:
    """For the choice g: transversal (no power of u), or else u^j with j the least power in J̃
    near all but finitely many points of Z (``least`` caches it: [(j, J̃ : u^j)] or [None]),
    when the failure sets on Z are all finite and rational; then the test of a point and the
    union of those sets, else None. The cheap pieces (minors, walls) first; ideal quotients only
    when they pass. Only the least j can hold: with a larger one, ⟨g, u^j⟩ misses u^(j−1)."""
    s = len(g)
    jac = sp.Matrix([[sp.diff(f, x) for x in gens] for f in (*g, u)])
    failing = [_minors(jac, s + 1), *([w] for w in walls)]
    special = _union_on_e(failing, on_e, u, ys)
    if special is None:
        return None
    for transversal in (True, False):
        if transversal:
            if not g:
                continue  # ⟨⟩ is no ideal of a zero
            power, base, pieces = None, list(g), []
        else:
            if not least:
                least.append(_least_power(strict, u, ys, gens, on_e))
            if least[0] is None:
                return None
            power, quotient = least[0]
            base, pieces = [*g, u**power], [quotient]
        basis = bounded_groebner(base, gens, grevlex)
        if basis is None:
            continue
        # f ∈ ⟨g, u^j⟩ fails nowhere: only the others' quotients are failure sets
        for f in (f for f in others if not in_ideal(f, basis, gens, grevlex)):
            pieces.append(_quotient(base, f, gens))
            if pieces[-1] is None:
                break
        if any(q is None for q in pieces):
            continue
        found = _union_on_e(pieces, on_e, u, ys)
        if found is None:
            continue
        ideals = [*failing, *pieces]

        def test(p: dict, ideals: list[list[sp.Expr]] = ideals) -> bool:
            """Good at p: p off every failure set."""
            return all(_nonzero_at(q, p) for q in ideals)

        return power, test, sorted(special | found)
    return None


def _least_power(
    strict: list[sp.Expr],
    u: sp.Symbol,
    ys: list[sp.Symbol],
    gens: list[sp.Symbol],
    on_e: list[sp.Expr],
) -> Least:
    """The least j ≤ MAX_POWER with Z ∩ V(J̃ : u^j) finite and rational (u^j ∈ J̃ near every
    other point of Z), and J̃ : u^j, by repeated quotients J̃ : u^j = (J̃ : u^(j−1)) : u."""
    quotient: list[sp.Expr] | None = strict
    for j in range(1, MAX_POWER + 1):
        quotient = _quotient(quotient, u, gens)
        if quotient is None:
            return None
        if _union_on_e([quotient], on_e, u, ys) is not None:
            return j, quotient
    return None


def _minors(m: sp.Matrix, size: int) -> list[sp.Expr]:
    rows = range(m.rows)
    return [
        sp.expand(m.extract(list(r), list(c)).det())
        for r in itertools.combinations(rows, size)
        for c in itertools.combinations(range(m.cols), size)
    ]


def _quotient(ideal: Sequence[sp.Expr], f: sp.Expr, gens: list[sp.Symbol]) -> list[sp.Expr] | None:
    """Generators of the ideal quotient ⟨ideal⟩ : f = (⟨ideal⟩ ∩ ⟨f⟩)/f (None over the size
    limit ``MAX_QUOTIENT_TERMS`` on the input's terms, or over :mod:`rlct.algebra.groebner`'s limits
    on the computation), the intersection by eliminating t from t·⟨ideal⟩ + (1 − t)·⟨f⟩ (a Gröbner
    basis over Q in an elimination order: lex on t, then grevlex; pure lex took minutes on some
    three-variable ideals)."""
    if sum(len(sp.Add.make_args(sp.expand(q))) for q in (*ideal, f)) > MAX_QUOTIENT_TERMS:
        return None
    t = sp.Dummy("t")
    system = [sp.expand(t * q) for q in ideal] + [sp.expand((1 - t) * f)]
    basis = bounded_groebner(system, [t, *gens], ELIMINATE_FIRST)
    if basis is None:
        return None
    meet = [q for q in basis if t not in q.free_symbols]
    return [sp.div(sp.Poly(q, *gens), sp.Poly(f, *gens))[0].as_expr() for q in meet]


def _union_on_e(
    pieces: Sequence[Sequence[sp.Expr]], on_e: list[sp.Expr], u: sp.Symbol, ys: list[sp.Symbol]
) -> set[Point] | None:
    """The real points of Z ∩ V(piece) over the pieces when each is finite and rational."""
    points: set[Point] = set()
    for piece in pieces:
        system = on_e + [sp.expand(q.xreplace({u: 0})) for q in piece]
        found = affine_zeros(system, ys)
        if found is None:
            return None
        points |= set(found)
    return points


def _nonzero_at(ideal: Sequence[sp.Expr], p: dict) -> bool:
    return any(sp.sympify(q).xreplace(p) != 0 for q in ideal)


def _value(s: int, power: int | None, e: int, hu: sp.Rational) -> tuple[sp.Rational, int]:
    """λ and m of u^e·⟨v_1..v_s, u^j⟩ (no u^j when ``power`` is None) under |u|^hu."""
    u, *v = sp.symbols(f"u v1:{s + 1}")
    gens = (u, *v)
    monoms = [u**e * x for x in v] + ([] if power is None else [u ** (e + power)])
    polys = [sp.Poly(m, *gens) for m in monoms]
    h = (hu, *([sp.Integer(0)] * s))
    result = ideal_step(polys, h).result
    return result.lam, result.mult


def _witness(
    test: Callable[[dict], bool],
    on_e: list[sp.Expr],
    u: sp.Symbol,
    ys: list[sp.Symbol],
    special: set[Point],
) -> Point | None:
    """A rational real point y of Z ∖ special where ``test`` holds: Z cut by y_j = q (then by
    more coordinates) for small rationals q, until the cut is finitely many points."""
    for size in range(1, len(ys)):
        for fixed in itertools.combinations(range(len(ys)), size):
            for values in itertools.product(TRIAL_VALUES, repeat=size):
                cut = {ys[j]: _rational(q) for j, q in zip(fixed, values)}
                rest = [y for y in ys if y not in cut]
                for point in affine_zeros([q.xreplace(cut) for q in on_e], rest) or ():
                    at = {**cut, **{y: _rational(c) for y, c in zip(rest, point)}}
                    key = tuple(Fraction(int(at[y].p), int(at[y].q)) for y in ys)
                    if key not in special and test({**at, u: sp.Integer(0)}):
                        return key
    return None


def _rational(q: Fraction) -> sp.Rational:
    return sp.Rational(q.numerator, q.denominator)


def _lift(point: Point, chart: int) -> Point:
    """The chart's affine point y as the point of RP^(n−1) with coordinate ``chart`` = 1."""
    return (*point[:chart], Fraction(1), *point[chart:])
