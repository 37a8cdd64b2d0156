"""Exact decision: does a face system have a zero in the real torus (R∖{0})^d?

Used for the non-degeneracy condition of Newton polyhedra. The answer is three-valued: True (a
real torus zero exists, proven), False (none exists, proven), None (could not be decided).

Method, for polynomials g_1..g_s that are quasi-homogeneous for the weights of a face of dimension k:
1. Torus reduction. The face's weights W (rows orthogonal to the face) act on the torus by
   x_j ↦ e^{(Wᵀs)_j} x_j, s ∈ R^{d−k}, scaling every g_i; choosing d−k coordinates J with W_J
   invertible, every orbit meets |x_J| = 1. So it suffices to set x_J ∈ {±1}^J and decide the
   system in the k remaining variables.
2. Certificates. No zero: a constant non-zero equation; for a non-negative g, all monomials even
   with positive coefficients; a Gröbner basis of ⟨g_i, z·Πy − 1⟩ equal to [1] (no complex torus
   zero). A zero: an exact univariate real-root count (Sturm), or a zero-dimensional system in shape
   position ⟨y_i − p_i(u), q(u)⟩ for a random linear form u, whose real solutions are the real roots
   of q; or a sign change of a single polynomial between two points of one open orthant.
3. For a single polynomial proven ≥ 0 (``certified_nonnegative``: even monomials with positive
   coefficients, a positive semi-definite quadratic, or products of such and of even powers), real
   zeros are critical points, so ∇g is added before the zero-dimensional step. K ≥ 0 is the
   caller's claim, and a K_γ that is not proven ≥ 0 does not get this step: a K_γ negative on a
   thin cone that sampling misses has regular zeros, and ∇g would hide them.
   Positive-dimensional systems are sliced by rational hyperplanes y_1 = r
   to look for a zero; when none is found the answer is None, never a guess.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from fractions import Fraction

import flint
import numpy as np
import sympy as sp
from sympy.polys.orderings import grevlex, lex

from ..time_limit import check as check_time
from .factor import factor_list
from .groebner import bounded_groebner, is_zero_dimensional
from .psd import form_matrix, psd_rank
from .ranks import nullspace

__all__ = ["has_real_torus_zero", "torus_reduction"]

_SLICES = (Fraction(1), Fraction(-1), Fraction(2), Fraction(-2), Fraction(1, 3), Fraction(-3, 2))


def torus_reduction(
    face_points: Sequence[tuple[int, ...]], d: int
) -> tuple[list[int], list[list[Fraction]]]:
    """Coordinates J (|J| = d − dim face) that the face's torus action can normalise to ±1."""
    base = face_points[0]
    diffs = [[a - b for a, b in zip(p, base)] for p in face_points[1:]]
    weights = (
        nullspace(diffs, d)
        if diffs
        else [[Fraction(int(i == j)) for j in range(d)] for i in range(d)]
    )
    chosen: list[int] = []
    # Greedy choice of pivot columns: Gaussian elimination on the weight matrix.
    m = [row[:] for row in weights]
    r = 0
    for col in range(d):
        p = next((i for i in range(r, len(m)) if m[i][col] != 0), None)
        if p is None:
            continue
        m[r], m[p] = m[p], m[r]
        for i in range(len(m)):
            if i != r and m[i][col] != 0:
                f = m[i][col] / m[r][col]
                m[i] = [a - f * b for a, b in zip(m[i], m[r])]
        chosen.append(col)
        r += 1
        if r == len(m):
            break
    return chosen, weights


def _positive_even_monomials(g: sp.Expr, variables: Sequence[sp.Symbol]) -> bool:
    """Every term of ``g`` (not 0) is c·x^α with c > 0 and every exponent even."""
    if g == 0:
        return False
    terms = sp.Poly(g, *variables).terms()
    return all(c > 0 and all(e % 2 == 0 for e in m) for m, c in terms)


def _sign_assignments(n: int) -> list[tuple[int, ...]]:
    out = [()]
    for _ in range(n):
        out = [(*s, v) for s in out for v in (1, -1)]
    return out


def has_real_torus_zero(
    polys: Sequence[sp.Expr],
    variables: Sequence[sp.Symbol],
    face_points: Sequence[tuple[int, ...]],
    nonnegative: bool,
) -> bool | None:
    """Whether the quasi-homogeneous system {g = 0} has a solution in (R∖{0})^d (None: undecided)."""
    d = len(variables)
    if any(g != 0 and len(sp.Add.make_args(sp.expand(g))) == 1 for g in polys):
        return False  # c·x^α with c ≠ 0 (a monomial face part) vanishes nowhere on the torus
    if any(_definite_quadratic_form(g, variables) for g in polys):
        return False  # a definite quadratic form vanishes only at 0
    if any(_positive_even_monomials(g, variables) for g in polys):
        return False  # Σ c_α·x^α, every c_α > 0 and α even: > 0 wherever no x_j is 0
    fixed, _ = torus_reduction(face_points, d)
    free = [v for j, v in enumerate(variables) if j not in fixed]
    undecided = False
    for signs in _sign_assignments(len(fixed)):
        check_time()
        subs = {variables[j]: s for j, s in zip(fixed, signs)}
        reduced = [sp.expand(g.subs(subs)) for g in polys]
        answer = _decide(reduced, free, nonnegative, depth=0)
        if answer is True:
            return True
        if answer is None:
            undecided = True
    return None if undecided else False


def _definite_quadratic_form(g: sp.Expr, variables: Sequence[sp.Symbol]) -> bool:
    """Whether g is a homogeneous quadratic form in its variables that is (±) positive definite
    (Sylvester: every leading principal minor of ±A is > 0, exactly over Q)."""
    p = sp.Poly(g, *variables)
    if p.is_zero or not p.is_homogeneous or p.total_degree() != 2:
        return False
    used = [v for v in variables if p.degree(v) > 0]
    A = sp.hessian(p.as_expr(), used) / 2
    for sign in (1, -1):
        M = sign * A
        if all(M[:k, :k].det() > 0 for k in range(1, len(used) + 1)):
            return True
    return False


def _decide(
    polys: list[sp.Expr], ys: list[sp.Symbol], nonnegative: bool, depth: int
) -> bool | None:
    polys = [g for g in polys if g != 0]
    if not polys:
        return True  # every equation vanishes identically: the whole torus is a zero set
    if any(g.is_number for g in polys):
        return False
    if not ys:
        return False
    if any(_positive_even(g, ys) or _positive_even(-g, ys) for g in polys):
        return False
    if len(ys) == 1:
        return _univariate(polys, ys[0])
    z = sp.Dummy("z")
    saturating = z * sp.Mul(*ys) - 1
    gb = bounded_groebner([*polys, saturating], [z, *ys], grevlex)  # None: past its limits
    if gb == [1]:
        return False
    if nonnegative and len(polys) == 1 and certified_nonnegative(polys[0], ys):
        g = polys[0]
        polys = [g, *(sp.diff(g, y) for y in ys)]
        gb = bounded_groebner([*polys, saturating], [z, *ys], grevlex)
        if gb == [1]:
            return False
    elif len(polys) == 1 and _sign_change(polys[0], ys):
        return True
    if gb is not None and is_zero_dimensional(gb, [z, *ys], grevlex):
        return _zero_dimensional(polys, ys)
    if depth >= len(ys) - 1:
        return None
    for r in _SLICES:
        sliced = [sp.expand(g.subs(ys[0], sp.Rational(r.numerator, r.denominator))) for g in polys]
        if _decide(sliced, ys[1:], False, depth + 1) is True:
            return True
    return None


def certified_nonnegative(g: sp.Expr, ys: Sequence[sp.Symbol]) -> bool:
    """Whether g ≥ 0 on R^k is proven exactly: all monomials even with positive coefficients; a
    quadratic whose homogenisation [[A, b/2], [bᵀ/2, c]] is positive semi-definite
    (``psd.psd_rank``); or c·Π p_i^(e_i) with c > 0 and every p_i of odd e_i so proven.
    False means not proven, not negative."""
    vs = [y for y in ys if sp.Poly(g, *ys).degree(y) > 0]
    if not vs:
        return bool(sp.sympify(g) >= 0)
    if _positive_even(g, vs) or _psd_quadratic(g, vs):
        return True
    c, factors = factor_list(sp.Poly(g, *vs))
    if len(factors) == 1 and factors[0][1] == 1:
        return False  # irreducible, and neither test above holds
    return bool(c > 0) and all(e % 2 == 0 or certified_nonnegative(f, vs) for f, e in factors)


def _psd_quadratic(g: sp.Expr, ys: list[sp.Symbol]) -> bool:
    """Whether g is a polynomial of degree 2 whose homogenisation is positive semi-definite."""
    p = sp.Poly(g, *ys)
    if p.total_degree() != 2:
        return False
    a = form_matrix(p if p.is_homogeneous else p.homogenize(sp.Dummy("t")))
    return a is not None and psd_rank(a) is not None


def _positive_even(g: sp.Expr, ys: list[sp.Symbol]) -> bool:
    p = sp.Poly(g, *ys)
    return all(c > 0 for c in p.coeffs()) and all(e % 2 == 0 for m in p.monoms() for e in m)


def _univariate(polys: list[sp.Expr], y: sp.Symbol) -> bool:
    g = sp.Poly(polys[0], y)
    for other in polys[1:]:
        g = g.gcd(sp.Poly(other, y))
    if g.degree() <= 0:
        return False
    while g.eval(0) == 0:  # strip the factor y^v: zeros at y = 0 are not in the torus
        g = sp.Poly(sp.quo(g.as_expr(), y), y)
    return bool(g.degree() > 0 and g.count_roots() > 0)


def _sign_change(g: sp.Expr, ys: list[sp.Symbol], samples: int = 24) -> bool:
    """Search one open orthant at a time for two rational points where g has opposite signs."""
    rng = random.Random(0)
    value = _evaluator(g, ys)
    for signs in _sign_assignments(len(ys)):
        seen: set[int] = set()
        for _ in range(samples):
            v = value([flint.fmpq(s * rng.randint(1, 40), rng.randint(1, 40)) for s in signs])
            seen.add((v > 0) - (v < 0))
            if 1 in seen and -1 in seen:
                return True
    return False


def _zero_dimensional(polys: list[sp.Expr], ys: list[sp.Symbol]) -> bool | None:
    """Real torus solutions of a zero-dimensional system, via a shape-position lex basis."""
    z, u = sp.Dummy("z"), sp.Dummy("u")
    rng = random.Random(1)
    base = [*polys, z * sp.Mul(*ys) - 1]
    system = list(base)
    for attempt in range(4):
        if attempt == 1:
            radical = _radical_generators(base, [z, *ys])
            if radical is None:
                return None  # over rlct.algebra.groebner's limits: undecided
            system = base + radical
        coeffs = [rng.randint(-9, 9) or 1 for _ in ys]
        form = u - sum(c * y for c, y in zip(coeffs, ys))
        exprs = bounded_groebner([*system, form], [z, *ys, u], lex)
        if exprs is None:
            return None  # a lex basis past rlct.algebra.groebner's limits (one ran for minutes)
        if exprs == [1]:
            return False
        if len(exprs) != len(ys) + 2:
            continue
        *linear, q = exprs
        if not all(_solved_for(e, v, [z, *ys]) for e, v in zip(linear, [z, *ys])):
            continue
        if q.free_symbols - {u}:
            continue
        return bool(sp.Poly(q, u).count_roots() > 0)
    return None


def _solved_for(e: sp.Expr, v: sp.Symbol, gens: list[sp.Symbol]) -> bool:
    """Whether e = c·v − p(u) with c a non-zero number (the shape-position form)."""
    p = sp.Poly(e, *gens)
    unit = tuple(int(g == v) for g in gens)
    zero = (0,) * len(gens)
    if not set(p.monoms()) <= {unit, zero} or unit not in p.monoms():
        return False
    return p.coeff_monomial(v).is_number


def _radical_generators(polys: list[sp.Expr], gens: list[sp.Symbol]) -> list[sp.Expr] | None:
    """Square-free univariate eliminants (Seidenberg): with them a zero-dim ideal becomes radical;
    None where a lex basis is past :mod:`rlct.algebra.groebner`'s limits."""
    out = []
    for v in gens:
        order = [g for g in gens if g != v] + [v]
        basis = bounded_groebner(polys, order, lex)
        if basis is None:
            return None
        last = basis[-1]
        if last.free_symbols <= {v}:
            out.append(sp.sqf_part(last))
    return out


def negative_point(
    g: sp.Expr, variables: Sequence[sp.Symbol], samples: int = 12
) -> dict[sp.Symbol, Fraction] | None:
    """A rational point of the torus where g < 0, found by exact evaluation at sample points (in
    every orthant up to six variables, in 64 of them beyond)."""
    vs = list(variables)
    if _positive_even(g, vs):
        return None
    value = _evaluator(g, vs)
    if (pt := _negative_direction(g, vs)) is not None and value(pt) < 0:
        return dict(zip(vs, pt))
    rng = random.Random(2)
    orthants = _sign_assignments(len(vs)) if len(vs) <= 6 else _some_orthants(len(vs), rng)
    for signs in orthants:
        for _ in range(samples):
            pt = [s * Fraction(rng.randint(1, 30), rng.randint(1, 30)) for s in signs]
            if value(pt) < 0:
                return dict(zip(vs, pt))
    return None


def _some_orthants(n: int, rng: random.Random, count: int = 64) -> list[tuple[int, ...]]:
    """``count`` sign patterns of n coordinates (the all-positive one first): past six variables
    the 2^n orthants would make a sampling check exponential in the number of variables."""
    return [(1,) * n] + [tuple(rng.choice((1, -1)) for _ in range(n)) for _ in range(count - 1)]


def _negative_direction(g: sp.Expr, vs: list[sp.Symbol]) -> list[Fraction] | None:
    """For a quadratic form g = xᵀAx: a rational approximation of A's eigenvector of least
    eigenvalue when that is negative (the caller checks g < 0 there exactly), else None. It
    finds the thin negative cones that random sampling misses."""
    a = form_matrix(sp.Poly(g, *vs))
    if a is None:
        return None
    scale = max((abs(x) for row in a for x in row), default=0) or 1  # floats overflow past 1e308
    evals, evecs = np.linalg.eigh(np.array([[x / scale for x in row] for row in a], dtype=float))
    if not evals[0] < 0:
        return None
    v = evecs[:, 0] / np.abs(evecs[:, 0]).max()
    return [Fraction(float(x)).limit_denominator(10**6) for x in v]


def _evaluator(g: sp.Expr, variables: Sequence[sp.Symbol]):
    """Exact evaluation of a rational polynomial at a Fraction point, by FLINT (the sign
    searches evaluate thousands of points: pure-Python Fractions took 116 of the 225 s of
    from_ideal on a 1-3-2 linear network's ideal)."""
    terms = sp.Poly(g, *variables, domain=sp.QQ).terms()
    ctx = flint.fmpq_mpoly_ctx.get(tuple(f"v{j}" for j in range(len(variables))), "lex")
    poly = ctx.from_dict({m: flint.fmpq(int(c.p), int(c.q)) for m, c in terms})

    def value(point: Sequence[Fraction | flint.fmpq]) -> flint.fmpq:
        return poly(
            *(
                x if isinstance(x, flint.fmpq) else flint.fmpq(x.numerator, x.denominator)
                for x in point
            )
        )

    return value
