"""RLCTs from Newton polyhedra, for a polynomial K ≥ 0 and for ideals ⟨f_1..f_k⟩ (K = Σ f_i²).

With prior φ(w) = Π |w_j|^(h_j), put τ = (h_1+1, …, h_d+1) and let t be the τ-distance of the Newton
polyhedron P (see :mod:`rlct.newton.polyhedron`). If K is non-degenerate — for every compact face γ
of P the face polynomial K_γ has no zero in the real torus (R∖{0})^d — then λ = 1/t and m is the
codimension of the smallest face of P containing t·τ. For an ideal, P = P(I) and the condition is
that the face systems f_{1,γ} = … = f_{k,γ} = 0 have no common real torus zero; then
λ(Σ f_i²) = 1/(2 t_I).

Without the condition only λ ≤ 1/t holds (K ≤ C·Σ_{a ∈ supp K} |w^a| near 0). A lower bound that
always holds for a flat or non-negative-exponent prior: λ ≥ 1/ord₀(K), from λ_real ≥ lct_C(K) ≥
1/mult₀(K).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from .._validate import items, prior_vector
from ..algebra.realzeros import has_real_torus_zero, negative_point
from ..errors import InvalidTypeError, NotNonNegativeError, NotPolynomialError
from ..expressions import MAX_GENERATORS, as_expression, as_variables, check_size
from ..result import RLCT, Condition
from ..time_limit import check as check_time
from .polyhedron import Face, NewtonPolyhedron

__all__ = [
    "NewtonAnalysis",
    "as_generators",
    "as_polynomial",
    "face_polynomial",
    "ideal_analysis",
    "ideal_step",
    "newton_analysis",
    "newton_step",
    "order_bounds",
]


@dataclass(frozen=True)
class NewtonAnalysis:
    """The Newton data behind a result: polyhedron, τ, distance t, the face at t·τ, face checks."""

    polyhedron: NewtonPolyhedron
    tau: tuple[sp.Rational, ...]
    distance: sp.Rational
    face: Face
    face_conditions: tuple[tuple[Face, Condition], ...]
    result: RLCT


def _as_poly(
    expr: object, variables: Sequence[sp.Symbol], what: str, *, zero_ok: bool = False
) -> sp.Poly:
    e = as_expression(expr, what, variables)
    if e.has(sp.Float):
        raise NotPolynomialError(
            f"{what} has floating-point coefficients: {e}; use exact rationals"
        )
    extra = e.free_symbols - set(variables)
    if extra:
        raise NotPolynomialError(
            f"{what} contains symbols {sorted(map(str, extra))} not in the variables"
        )
    check_size(e, variables, what)
    try:
        p = sp.Poly(e, *variables)
    except sp.PolynomialError as err:
        raise NotPolynomialError(f"{what} is not a polynomial in {list(variables)}: {e}") from err
    if p.domain not in (sp.ZZ, sp.QQ):
        raise NotPolynomialError(f"{what} must have rational coefficients, got domain {p.domain}")
    if p.is_zero:
        if zero_ok:
            return p
        raise NotNonNegativeError(f"{what} is identically zero: it has no RLCT (λ would be +∞)")
    if p.coeff_monomial(1) != 0:
        raise NotNonNegativeError(
            f"{what}(0) = {p.coeff_monomial(1)} ≠ 0: the origin is not a zero"
        )
    return p


def face_polynomial(p: sp.Poly, face: Face) -> sp.Expr:
    """p_γ: the terms of p whose exponents lie on the face γ."""
    check_time()
    pts = set(face.points)
    gens = p.gens
    return sp.Add(*(c * sp.Mul(*(g**e for g, e in zip(gens, m))) for m, c in p.terms() if m in pts))


def _check_nonnegative_faces(p: sp.Poly, poly: NewtonPolyhedron) -> None:
    """Raise when K is visibly negative near 0: a vertex term with an odd exponent or negative
    coefficient, or a compact-face polynomial taking a negative value (K_γ(x) = lim s^{-c} K(s^w x))."""
    coeffs = dict(p.terms())
    for v in poly.vertices:
        if coeffs[v] < 0 or any(e % 2 for e in v):
            term = coeffs[v] * sp.Mul(*(g**e for g, e in zip(p.gens, v)))
            raise NotNonNegativeError(
                f"K is not ≥ 0 near the origin: its leading term {term} (a vertex of the Newton "
                "polyhedron) takes negative values"
            )
    for face in poly.compact_faces:
        if face.dim == 0:
            continue
        kg = face_polynomial(p, face)
        pt = negative_point(kg, p.gens)
        if pt is not None:
            raise NotNonNegativeError(
                f"K is not ≥ 0 near the origin: its face polynomial {kg} is negative at "
                + ", ".join(f"{v} = {x}" for v, x in pt.items())
            )


def _lower_bound(order: int, h: tuple[sp.Rational, ...]) -> sp.Rational:
    return sp.Rational(1, order) if all(x >= 0 for x in h) else sp.Integer(0)


def order_bounds(polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...]) -> RLCT:
    """Bounds on λ of K = Σ f_i² that need no Newton polyhedron (for one with too many faces):
    λ ≥ 1/ord₀(K) (module docstring), and λ ≤ Σ (h_j + 1)/2, λ of Σ w_j², since every f_i
    vanishes at 0 and so K ≤ C·Σ w_j² near 0."""
    order = 2 * min(min(sum(m) for m in p.monoms()) for p in polys)
    upper = sum((x + 1 for x in h), sp.Integer(0)) / 2
    cond = Condition(f"ord₀(K) = {order}; K ≤ C·Σ w_j² near 0", True)
    return RLCT.bounds(_lower_bound(order, h), upper, "order and Σ w_j² bounds", (cond,))


def _analyse(
    poly: NewtonPolyhedron,
    face_systems: list[tuple[Face, list[sp.Expr]]],
    variables: Sequence[sp.Symbol],
    h: tuple[sp.Rational, ...],
    nonnegative: bool,
    scale: int,
    order: int,
    label: str,
    stop_at_degenerate: bool = False,
) -> NewtonAnalysis:
    """Shared core: distance, face at t·τ, per-face conditions, and the result λ = 1/(scale·t).
    With ``stop_at_degenerate``, the faces after the first proven degenerate one are listed as
    not checked (status None): the result is bounds either way, and deciding them costs most."""
    tau = tuple(x + 1 for x in h)
    t = poly.distance([Fraction(int(x.p), int(x.q)) for x in tau])
    t_sym = sp.Rational(t.numerator, t.denominator)
    face = poly.face_at_distance([Fraction(int(x.p), int(x.q)) for x in tau])
    mult = poly.dim - face.dim
    checks = []
    degenerate = False
    for f, system in face_systems:
        if f.dim == 0:
            continue  # a vertex carries a single monomial, which has no torus zero
        what = "K_γ" if nonnegative else "the system f_{i,γ} = 0"
        where = "conv{" + ", ".join(map(str, f.points)) + "}"
        statement = f"{what} has no zero in (R∖{{0}})^d on the face γ = {where}"
        if degenerate:
            checks.append((f, Condition(f"{statement} (not checked: a face is degenerate)", None)))
            continue
        check_time()
        zero = has_real_torus_zero(system, variables, f.points, nonnegative)
        status = None if zero is None else (not zero)
        degenerate = stop_at_degenerate and status is False
        checks.append((f, Condition(statement, status)))
    lam = 1 / (scale * t_sym)
    conds = tuple(c for _, c in checks)
    if all(c.status is True for c in conds):
        result = RLCT.exact_value(lam, mult, f"Newton polyhedron ({label}), non-degenerate", conds)
    else:
        failing = [c for c in conds if c.status is not True]
        kind = (
            "degenerate" if any(c.status is False for c in failing) else "non-degeneracy undecided"
        )
        lower = min(_lower_bound(order, h), lam)
        result = RLCT.bounds(
            lower, lam, f"Newton polyhedron ({label}), {kind}: 1/t is an upper bound", conds
        )
    return NewtonAnalysis(poly, tau, t_sym, face, tuple(checks), result)


def newton_analysis(
    K: object, variables: Sequence[sp.Symbol], prior_exponents: Sequence[object] | None = None
) -> NewtonAnalysis:
    """Newton polyhedron data and the RLCT for a polynomial K ≥ 0 with K(0) = 0 under the prior
    Π |w_j|^(h_j) (:func:`rlct.from_polynomial` goes on from here when K is degenerate).

    Exact (λ = 1/t, m = codim of the face at t·τ) when every compact face polynomial is proven to
    have no real torus zero; otherwise the result gives bounds 1/ord₀(K) ≤ λ ≤ 1/t and lists the
    failed or undecided faces.

    K ≥ 0 is the caller's claim. It is checked where it can be seen (a vertex term that is odd or
    negative, a face polynomial negative at a sample point raise :class:`NotNonNegativeError`), and
    in the exact case it is proven: each K_γ is then zero-free on every open orthant and positive at
    a sample point there, so K ≍ Σ_vertices |w^a| ≥ 0 near the origin. (Zero-freeness is decided
    without assuming K ≥ 0: the shortcut that real zeros of K_γ are critical points is taken only
    where K_γ ≥ 0 is itself proven, ``rlct.algebra.realzeros.certified_nonnegative``.)
    """
    variables = as_variables(variables)
    p = _as_poly(K, variables, "K")
    h = prior_vector(prior_exponents, len(variables), "prior_exponents")
    return newton_step(p, h)


def newton_step(
    p: sp.Poly,
    h: tuple[sp.Rational, ...],
    stop_at_degenerate: bool = False,
    check_sign: bool = True,
) -> NewtonAnalysis:
    """:func:`newton_analysis` for K already validated: ``p`` from :func:`as_polynomial` (or built
    from one), ``h`` from ``prior_vector``, one exponent per generator of ``p``;
    ``stop_at_degenerate`` as in ``_analyse`` (for the pipeline, which only needs bounds once a
    face is degenerate; :func:`newton_analysis` decides every face). ``check_sign=False`` skips
    the search for a negative face value, for a K whose sign is known (a sum of squares, or a
    checked K after a change of coordinates: the pipeline's inner steps)."""
    poly = NewtonPolyhedron(p.monoms(), "K")
    if check_sign:
        _check_nonnegative_faces(p, poly)
    systems = [(f, [face_polynomial(p, f)]) for f in poly.compact_faces]
    order = min(sum(m) for m in p.monoms())
    return _analyse(poly, systems, p.gens, h, True, 1, order, "polynomial K", stop_at_degenerate)


def ideal_analysis(
    generators: Sequence[object],
    variables: Sequence[sp.Symbol],
    prior_exponents: Sequence[object] | None = None,
) -> NewtonAnalysis:
    """Newton data of the ideal ⟨f_1..f_k⟩ and the RLCT of K = Σ f_i² (f_i(0) = 0), under the prior
    Π |w_j|^(h_j) (:func:`rlct.from_ideal` goes on from here when the ideal is degenerate).

    λ = RLCT(I)/2 = 1/(2 t_I) when every compact face system of P(I) is proven to have no common real
    torus zero (monomial ideals always qualify); otherwise bounds, with the failing faces listed.
    """
    variables = as_variables(variables)
    polys = as_generators(generators, variables)
    h = prior_vector(prior_exponents, len(variables), "prior_exponents")
    return ideal_step(polys, h)


def ideal_step(
    polys: Sequence[sp.Poly], h: tuple[sp.Rational, ...], stop_at_degenerate: bool = False
) -> NewtonAnalysis:
    """:func:`ideal_analysis` for generators already validated (:func:`as_generators`);
    ``stop_at_degenerate`` as in ``_analyse``."""
    poly = NewtonPolyhedron([m for p in polys for m in p.monoms()], "the ideal ⟨f_i⟩")
    systems = [
        (f, [e for e in (face_polynomial(p, f) for p in polys) if e != 0])
        for f in poly.compact_faces
    ]
    order = 2 * min(sum(m) for p in polys for m in p.monoms())
    label = "ideal ⟨f_i⟩, K = Σ f_i²"
    return _analyse(poly, systems, polys[0].gens, h, False, 2, order, label, stop_at_degenerate)


def as_polynomial(expr: object, variables: Sequence[sp.Symbol], what: str = "K") -> sp.Poly:
    """``expr`` as a polynomial over Q in ``variables`` with ``expr``(0) = 0, validated as
    :func:`newton_analysis` does (accepted types, safe parsing of strings, size bounds)."""
    return _as_poly(expr, as_variables(variables), what)


def as_generators(generators: Sequence[object], variables: Sequence[sp.Symbol]) -> list[sp.Poly]:
    """The non-zero generators f_i as polynomials over Q, validated as :func:`ideal_analysis`
    does (``generators`` a sequence of at most MAX_GENERATORS polynomials, not all zero)."""
    variables = as_variables(variables)
    gens = items(generators, "generators", InvalidTypeError, "polynomials", MAX_GENERATORS)
    if not gens:
        raise NotPolynomialError("an ideal needs at least one generator")
    polys = []
    for i, f in enumerate(gens):
        p = _as_poly(f, variables, f"f_{i + 1}", zero_ok=True)
        if not p.is_zero:  # a zero generator (also one that expands to 0) adds nothing
            polys.append(p)
    if not polys:
        raise NotNonNegativeError("every generator is zero: K ≡ 0 has no RLCT")
    return polys
