"""Exact λ and m of a plane polynomial K(x, y) ≥ 0 at the origin, by an embedded resolution.

Setting. ζ(z) = ∫_U |K|^z |x|^(h_x) |y|^(h_y) dx dy over a small neighbourhood U of 0; λ is minus
its largest pole and m that pole's order; τ = (h_x + 1, h_y + 1).

Theorem used (resolution of singularities; Watanabe 2009, *Algebraic Geometry and Statistical
Learning Theory*, ch. 2 and 4: Hironaka's theorem and the poles of ζ). Let π be proper, real analytic, an isomorphism away from
π⁻¹(0), such that near every point P of π⁻¹(0) there are coordinates with K∘π = (unit)·Π u_j^(N_j)
and |det π'|·(prior∘π) = (unit > 0)·Π |u_j|^(k_j). Then λ = min_P min_j (k_j + 1)/N_j and m is the
largest number of j attaining the minimum at one P (the integrand is ≥ 0, so the contributions of
different P to the leading pole add and never cancel).

Construction (toric charts along the Newton polygon, following real roots: the Newton–Puiseux
algorithm as a tower of toric modifications; Varchenko 1976, A'Campo–Oka 1996). Write
K = c·x^A y^B Π g_i^(e_i) with g_i square-free, pairwise coprime, prime to x and y (sympy's
square-free decomposition over Q); factors with g_i(0) ≠ 0 are units. Let G = x^A y^B Π g_i^(e_i).

1. The toric modification of a regular fan refining the normal fan of P(G) has an exceptional
   curve E_w for each ray w, with N_w = min ⟨w, P(G)⟩ and k_w + 1 = ⟨w, τ⟩ (in a chart
   x = u^p v^a, y = u^q v^b of determinant 1 the Jacobian and the prior are monomials). At the
   torus-fixed points and the generic points of every E_w, K∘π is a monomial times a unit. These
   points give min_w ⟨w, τ⟩/N_w = 1/t (a ratio of linear forms is least at extreme rays, i.e. at
   the facet normals; t is the τ-distance) with order m = the codimension of the face at t·τ.
2. The strict transform meets E_w only where w is the normal of a compact edge, at v = c with c
   a real non-zero root of the face polynomial in E_w's coordinate (complex roots are not points
   of the real resolution). There, with v = c + v', the local problem has the same form: monomial
   u^(N_w), prior |u|^(k_w), factors g̃_i(u, c + v') (those vanishing at the point).
3. If c is a simple root of the reduced face polynomial Π_i (g_i)_w, exactly one branch g̃_i = 0
   passes, smooth and transversal to E_w: in the coordinates (u, g̃_i), K∘π = u^(N_w) g̃_i^(e_i)
   times a unit, so λ_c = min(⟨w, τ⟩/N_w, 1/e_i) and m_c = 2 when both attain. Otherwise recurse.

For a reduced curve the recursion ends (each step fixes one more term of the Puiseux expansions
through c; distinct branches separate and a single branch's root becomes simple); a depth limit
guards it (:class:`UndecidedError`, never a guess). K ≥ 0 near 0 is proven on the way: at every
point the unit and monomial are ≥ 0 (every vertex of every local Newton polygon has even
exponents and a positive coefficient, every real root of a face polynomial has even
multiplicity in K); a failure raises :class:`NotNonNegativeError` naming the chart.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..algebra.algebraic import RealField, RealRoot, rational_field
from ..algebra.factor import sqf_list
from ..errors import NotNonNegativeError, UndecidedError
from ..result import Condition
from .charts import (
    Terms,
    chart,
    edge_normals,
    face_restriction,
    monomial_part,
    order,
    strict_transform,
    translate,
    vertex_exponent,
)

__all__ = [
    "Branch",
    "ChartNode",
    "LocalProblem",
    "PlaneResolution",
    "local_problem",
    "resolve_plane",
    "solve_local",
]

MAX_DEPTH = 24
_U, _V = sp.symbols("u v", real=True)


@dataclass(frozen=True)
class Branch:
    """A smooth branch of K̃ = 0 crossing E_w transversally at v = root: a normal-crossing point."""

    weight: tuple[int, int]
    root: sp.Expr
    exponent: int
    lam: sp.Rational
    mult: int


@dataclass(frozen=True)
class ChartNode:
    """One local problem of the resolution: where it sits, its function and its local λ, m.

    ``x``, ``y`` give the original coordinates in the chart's (u, v); ``local`` is K∘φ up to a
    positive unit; ``newton`` is (1/t, m) of its Newton polygon with the prior |u|^(τ_u − 1)
    |v|^(τ_v − 1); ``branches`` are the normal-crossing points off the polygon's own charts and
    ``children`` the points where the resolution continues.
    """

    x: sp.Expr
    y: sp.Expr
    problem: LocalProblem = dataclasses.field(repr=False, compare=False)
    tau: tuple[sp.Rational, sp.Rational]
    newton: tuple[sp.Rational, int]
    branches: tuple[Branch, ...]
    children: tuple[ChartNode, ...]
    lam: sp.Rational
    mult: int

    @property
    def local(self) -> sp.Expr:
        """K∘φ up to a positive unit, as a sympy expression (built when asked: display only)."""
        return _local_expr(self.problem)

    def describe(self) -> str:
        ku, kv = (t - 1 for t in self.tau)
        prior = " · ".join(f"|{s}|^{k}" for s, k in (("u", ku), ("v", kv)) if k) or "1"
        local = f"({self.local})" if isinstance(self.local, sp.Add) else str(self.local)
        text = (
            f"chart x = {self.x}, y = {self.y}: K∘φ = (unit > 0)·{local}, "
            f"|Jφ|·prior = (unit)·{prior}; its Newton polygon gives 1/t = {self.newton[0]} "
            f"(m = {self.newton[1]})"
        )
        for b in self.branches:
            text += (
                f"; at v = {b.root} on E_{b.weight} a smooth transversal branch of multiplicity "
                f"{b.exponent}: λ = {b.lam}, m = {b.mult}"
            )
        if self.children:
            text += f"; {len(self.children)} point(s) resolved further"
        return text + f". Local λ = {self.lam}, m = {self.mult}"

    def walk(self) -> list[ChartNode]:
        return [self, *(n for c in self.children for n in c.walk())]


@dataclass(frozen=True)
class PlaneResolution:
    """λ, m and the tree of charts that proves them."""

    lam: sp.Rational
    mult: int
    root: ChartNode

    def conditions(self) -> tuple[Condition, ...]:
        nodes = self.root.walk()
        out = [Condition(n.describe(), True) for n in nodes]
        out.append(Condition("K ≥ 0 near 0 (signs checked at every point of the resolution)", True))
        out.append(
            Condition(
                f"λ = min over the {len(nodes)} chart(s) = {self.lam}, largest order there m = "
                f"{self.mult} (non-negative contributions to a pole add, they never cancel)",
                True,
            )
        )
        return tuple(out)


@dataclass
class LocalProblem:
    """u^A v^B Π g_i^(e_i) (``mono`` = (A, B), ``factors``) over ``field``, times a unit of sign
    ``sign``, under the prior with τ = ``tau``; ``coords`` give x, y in the chart's (u, v)."""

    field: RealField
    factors: list[tuple[Terms, int]]
    mono: tuple[int, int]
    tau: tuple[sp.Rational, sp.Rational]
    sign: int
    coords: tuple[sp.Expr, sp.Expr]


def resolve_plane(K: sp.Poly, prior: tuple[sp.Rational, sp.Rational]) -> PlaneResolution:
    """Resolve K ∈ Q[x, y] (K(0) = 0) with prior |x|^(h_x)|y|^(h_y); see the module docstring."""
    field = rational_field()
    const, parts = sqf_list(K)  # FLINT: sympy took minutes on (x − y)^400
    factors = [({m: field.convert(c) for m, c in g.terms()}, e) for g, e in parts]
    root = solve_local(local_problem(field, 1 if const > 0 else -1, factors, prior), 0)
    return PlaneResolution(root.lam, root.mult, root)


def local_problem(
    field: RealField,
    sign: int,
    parts: list[tuple[Terms, int]],
    prior: tuple[sp.Rational, sp.Rational],
) -> LocalProblem:
    """The problem at 0 of K = (``sign``)·Π g^e (``parts`` over ``field``): monomial parts
    gathered into u^A v^B, factors with g(0) ≠ 0 as units (their sign read), the rest kept."""
    factors: list[tuple[Terms, int]] = []
    big_a = big_b = 0
    for terms, e in parts:
        h, alpha, beta = monomial_part(terms)
        big_a, big_b = big_a + e * alpha, big_b + e * beta
        if (0, 0) in h:
            sign *= field.sign(h[(0, 0)]) ** e
        else:
            factors.append((h, e))
    tau = (sp.Rational(prior[0]) + 1, sp.Rational(prior[1]) + 1)
    return LocalProblem(field, factors, (big_a, big_b), tau, sign, (_U, _V))


def _ratio(w: tuple[int, int], tau: tuple[sp.Rational, sp.Rational], n: int) -> sp.Rational:
    return (w[0] * tau[0] + w[1] * tau[1]) / n


def solve_local(loc: LocalProblem, depth: int) -> ChartNode:
    """The chart tree of one local problem (module docstring, steps 1–3), ``depth`` deep."""
    if depth > MAX_DEPTH:
        raise UndecidedError(f"the plane resolution did not end within {MAX_DEPTH} charts")
    big_a, big_b = loc.mono
    normals = sorted(
        {w for g, _ in loc.factors for w in edge_normals(set(g))},
        key=lambda w: Fraction(w[1], w[0]),
    )
    orders = {
        w: big_a * w[0] + big_b * w[1] + sum(e * order(g, w) for g, e in loc.factors)
        for w in normals
    }
    ratios = [loc.tau[0] / big_a] if big_a else []
    ratios += [loc.tau[1] / big_b] if big_b else []
    ratios += [_ratio(w, loc.tau, orders[w]) for w in normals]
    newton = min(ratios)
    _check_vertices(loc, normals)
    points: list[tuple[sp.Rational, int]] = [(newton, ratios.count(newton))]
    branches: list[Branch] = []
    children: list[ChartNode] = []
    for w in normals:
        transforms = [strict_transform(g, w) for g, _ in loc.factors]
        faces = [face_restriction(gt) for gt, _, _ in transforms]
        loc.field.note_faces(faces)
        roots = [loc.field.real_roots(face) for face in faces]
        for c in dict.fromkeys(r for per in roots for r in per):
            mults = [per.get(c, 0) for per in roots]
            if sum(m * e for m, (_, e) in zip(mults, loc.factors)) % 2:
                raise NotNonNegativeError(
                    f"K is not ≥ 0 near the origin: it changes sign across a branch of K = 0 "
                    f"through v = {c.expr()} in the chart x = {loc.coords[0]}, y = "
                    f"{loc.coords[1]} (edge of normal {w})"
                )
            r_w = _ratio(w, loc.tau, orders[w])
            if sum(mults) == 1:
                e = loc.factors[mults.index(1)][1]
                lam = min(r_w, sp.Rational(1, e))
                branches.append(Branch(w, c.expr(), e, lam, 1 + (r_w == sp.Rational(1, e))))
                points.append((lam, branches[-1].mult))
            else:
                child = solve_local(_child(loc, w, orders[w], transforms, mults, c), depth + 1)
                children.append(child)
                points.append((child.lam, child.mult))
    lam = min(p[0] for p in points)
    mult = max(p[1] for p in points if p[0] == lam)
    return ChartNode(
        *loc.coords,
        loc,
        loc.tau,
        (newton, ratios.count(newton)),
        tuple(branches),
        tuple(children),
        lam,
        mult,
    )


def _check_vertices(loc: LocalProblem, normals: list[tuple[int, int]]) -> None:
    """Every vertex of the local Newton polygon: even exponents and a positive coefficient."""
    rays = [(1, 0), *normals, (0, 1)]
    for w1, w2 in itertools.pairwise(rays):
        w = (w1[0] + w2[0], w1[1] + w2[1])
        vertex = list(loc.mono)
        sign = loc.sign
        for g, e in loc.factors:
            i, j = vertex_exponent(g, w)
            vertex[0] += e * i
            vertex[1] += e * j
            sign *= loc.field.sign(g[(i, j)]) ** e
        if sign < 0 or vertex[0] % 2 or vertex[1] % 2:
            raise NotNonNegativeError(
                f"K is not ≥ 0 near the origin: in the chart x = {loc.coords[0]}, y = "
                f"{loc.coords[1]} its leading term u^{vertex[0]}·v^{vertex[1]} (a vertex of the "
                f"local Newton polygon, coefficient of sign {sign:+d}) takes negative values"
            )


def _child(
    loc: LocalProblem,
    w: tuple[int, int],
    n_w: int,
    transforms: list[tuple[Terms, int, int]],
    mults: list[int],
    c: RealRoot,
) -> LocalProblem:
    """The local problem at the point v = c of E_w (coordinates u, v' = v − c)."""
    field = c.field
    image = loc.field.embedding(field) if c.extension is not None else None
    a, b = chart(w)
    m_total = a * loc.mono[0] + b * loc.mono[1]
    m_total += sum(e * m for (_, _, m), (_, e) in zip(transforms, loc.factors))
    sign = loc.sign * field.sign(c.value) ** (m_total % 2)
    factors: list[tuple[Terms, int]] = []
    big_b = 0
    for (gt, _, _), (_, e), mult in zip(transforms, loc.factors, mults):
        if image is not None:
            gt = {k: loc.field.embed(v, field, image) for k, v in gt.items()}
        if mult == 0:
            value = sum(
                (coef * c.value**j for (i, j), coef in gt.items() if i == 0), field.domain.zero
            )
            sign *= field.sign(value) ** (e % 2)
            continue
        h, _, beta = monomial_part(translate(gt, field, c.value))
        big_b += e * beta
        if (0, 0) in h:
            sign *= field.sign(h[(0, 0)]) ** (e % 2)
        else:
            factors.append((h, e))
    p, q = w
    shift = c.expr() + _V
    subs = {_U: _U**p * shift**a, _V: _U**q * shift**b}
    coords = tuple(sp.expand(e.subs(subs, simultaneous=True)) for e in loc.coords)
    tau = (p * loc.tau[0] + q * loc.tau[1], sp.Integer(1))
    return LocalProblem(field, factors, (n_w, big_b), tau, sign, coords)


def _local_expr(loc: LocalProblem) -> sp.Expr:
    """u^A v^B Π g_i^(e_i) as a sympy expression (radicals for quadratic generators)."""
    pretty = {}
    gen = loc.field.generator
    if isinstance(gen, sp.CRootOf) and sp.degree(gen.poly) == 2:
        pretty = {gen: sp.Poly(gen.poly).real_roots(radicals=True)[gen.index]}
    out = _U ** loc.mono[0] * _V ** loc.mono[1]
    for g, e in loc.factors:
        poly = sp.Add(
            *(loc.field.to_expr(c).subs(pretty) * _U**i * _V**j for (i, j), c in g.items())
        )
        out *= poly**e
    return out
