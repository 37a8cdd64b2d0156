"""λ of a small quadratic network at a rank drop, from the ideal of its identifiable map.

Where rank J(θ*) is below the generic rank the rank bounds r/2 ≤ λ ≤ (N − k)/2 need not meet
(:func:`rlct.quadratic.llc`). The loss itself is known, though: near θ*,
K(θ) ≍ Σ_i g_i(δ)² with δ = θ − θ* and g_i the coordinates of the map minus their values at θ*
(Φ's entries (Q_k, r_k, s_k) without data; the outputs f_θ(x_i)_k, centred across samples with
``centered``, with data). Any basis of the Q-span of the g_i generates the same ideal, so K is ≍
the sum of the basis's squares, and :func:`rlct.from_ideal` gives its λ and m (exact, or proven
bounds) with a prior positive at θ*. Tried only for small networks (N ≤ MAX_IDEAL_PARAMETERS).
"""

from __future__ import annotations

import math
import time

import numpy as np
import sympy as sp
from sympy.polys.matrices import DomainMatrix

from ..cascade import from_ideal
from ..errors import TooLargeError, UndecidedError
from ..result import RLCT, Condition, as_rational
from ..time_limit import OutOfTime, time_limit
from ..time_limit import check as check_time
from .point import Point, integer_point

__all__ = ["MAX_IDEAL_PARAMETERS", "ideal_generators", "ideal_llc"]

MAX_IDEAL_PARAMETERS = 12
"""The most parameters N for which the ideal is handed to :func:`rlct.from_ideal` (the exact
layer's blow-up search grows quickly with the number of variables)."""


def ideal_generators(pt: Point) -> tuple[list[sp.Poly], list[sp.Poly], list[sp.Symbol]]:
    """A basis (reduced row echelon form over Q) of the span of the g_i, the distinct non-zero
    g_i themselves (up to a rational factor), as polynomials in the shifts δ, and the shift
    symbols (ordered W row-major, V row-major, then b and c)."""
    d, K, p = pt.d, pt.K, pt.p
    dw = sp.symbols(f"dW0:{d * K}", real=True)
    dv = sp.symbols(f"dV0:{p * K}", real=True)
    db = sp.symbols(f"db0:{K}", real=True) if pt.bias else ()
    dc = sp.symbols(f"dc0:{p}", real=True) if pt.bias else ()
    symbols = [*dw, *dv, *db, *dc]

    def poly(e: sp.Expr) -> sp.Poly:
        return sp.Poly(e, *symbols, domain=sp.QQ)

    W = [[poly(as_rational(pt.W[i, j]) + dw[i * K + j]) for j in range(K)] for i in range(d)]
    V = [[poly(as_rational(pt.V[k, j]) + dv[k * K + j]) for j in range(K)] for k in range(p)]
    b = [poly(as_rational(pt.b[j]) + db[j]) for j in range(K)] if pt.bias else None
    c = [poly(as_rational(0) + dc[k]) for k in range(p)] if pt.bias else None
    coords = _data_outputs(pt, W, V, b, c) if pt.X is not None else _features(d, K, p, W, V, b, c)
    gens = [g - g.coeff_monomial(1) for g in coords]
    return _span_basis(gens, symbols), _distinct(gens), symbols


def _distinct(gens: list[sp.Poly]) -> list[sp.Poly]:
    """The non-zero ``gens``, each once up to a rational factor (made monic)."""
    seen: dict[tuple, sp.Poly] = {}
    for g in gens:
        if not g.is_zero:
            monic = g.monic()
            seen.setdefault(tuple(monic.terms()), monic)
    return list(seen.values())


def reduced_point(pt: Point) -> Point:
    """An integer point with the same λ and m: :func:`integer_point`'s blockwise rescaling, then
    (W, b) divided by the gcd of their entries and V by the gcd of its own (θ ↦ (αW, βV, αb) is
    a linear change of coordinates that multiplies every output by α²β), so that coefficients
    stay small for the exact layer."""
    ip = integer_point(pt)

    def divided(a: np.ndarray | None, g: int) -> np.ndarray | None:
        return None if a is None else np.vectorize(lambda x: x // g, otypes=[object])(a)

    gw = math.gcd(*(int(x) for x in ip.W.flat), *(() if ip.b is None else map(int, ip.b.flat)))
    gv = math.gcd(*(int(x) for x in ip.V.flat))
    gw, gv = gw or 1, gv or 1
    return Point(divided(ip.W, gw), divided(ip.V, gv), ip.X, divided(ip.b, gw), ip.centered)


def _features(d, K, p, W, V, b, c) -> list[sp.Poly]:
    """Φ's coordinates: Q_k[a, a'] (a ≤ a'), then r_k and s_k with biases."""
    out = []
    for k in range(p):
        for a in range(d):
            for a2 in range(a, d):
                out.append(sum((V[k][j] * W[a][j] * W[a2][j] for j in range(K)), W[0][0] * 0))
        if b is not None:
            for a in range(d):
                out.append(sum((2 * V[k][j] * b[j] * W[a][j] for j in range(K)), W[0][0] * 0))
            out.append(sum((V[k][j] * b[j] ** 2 for j in range(K)), c[k]))
    return out


def _data_outputs(pt: Point, W, V, b, c) -> list[sp.Poly]:
    """f_θ(x_i)_k for every sample (centred across samples with ``centered``)."""
    d, K, p = pt.d, pt.K, pt.p
    zero = W[0][0] * 0
    pre = []
    for x in pt.X:
        check_time()
        xs = [as_rational(t) for t in x]
        units = []
        for j in range(K):
            u = sum((W[a][j] * xs[a] for a in range(d)), zero)
            units.append(u + b[j] if b is not None else u)
        pre.append([u**2 for u in units])
    outs = []
    for k in range(p):
        row = [
            sum((V[k][j] * h[j] for j in range(K)), c[k] if c is not None else zero) for h in pre
        ]
        if pt.centered:
            mean = sum(row, zero) * sp.Rational(1, len(row))
            row = [f - mean for f in row]
        outs.extend(row)
    return outs


def _span_basis(gens: list[sp.Poly], symbols: list[sp.Symbol]) -> list[sp.Poly]:
    """A basis of the Q-span of ``gens`` (the rows of the coefficient matrix's RREF)."""
    monomials = sorted({m for g in gens for m in g.monoms()})
    if not monomials:
        return []
    col = {m: i for i, m in enumerate(monomials)}
    rows = []
    for g in gens:
        row = [sp.QQ(0)] * len(monomials)
        for m, a in g.terms():
            row[col[m]] = sp.QQ.from_sympy(a)
        rows.append(row)
    rref, _ = DomainMatrix(rows, (len(rows), len(monomials)), sp.QQ).rref()
    basis = []
    for row in rref.to_list():
        terms = {monomials[i]: a for i, a in enumerate(row) if a}
        if terms:
            basis.append(sp.Poly.from_dict(terms, *symbols, domain=sp.QQ))
    return basis


def ideal_llc(pt: Point, num_parameters: int, seconds: float) -> RLCT | Condition | None:
    """λ (and m) of Σ g_i² at δ = 0 by :func:`rlct.from_ideal`, searched for at most ``seconds``
    (the generators built within that time too). The exact layer's search depends on how the
    ideal is written, so it is tried four ways, all the same ideal: a basis of the span and the
    distinct g_i themselves, each with the variables in order and reversed; first each for an
    equal share of half the time, then those that ran out of time with the rest; the first exact
    answer is returned, else the bounds intersected. None where N is too large, ``seconds`` is
    0, every g_i vanishes identically, a coefficient has more than MAX_COEFFICIENT_DIGITS digits,
    or the exact layer refuses every form; an undecided Condition where time ran out first."""
    if num_parameters > MAX_IDEAL_PARAMETERS or seconds <= 0:
        return None
    deadline = time.monotonic() + seconds
    try:
        with time_limit(seconds):
            basis, raw, symbols = ideal_generators(reduced_point(pt))
    except OutOfTime:
        return _out_of_time(num_parameters, seconds)
    if not basis or _too_long(basis):
        return None
    forms = [(basis, symbols), (basis, symbols[::-1])]
    if _worth_trying(raw, basis):
        forms += [(raw, symbols), (raw, symbols[::-1])]
    result: RLCT | None = None
    for share in (0.5, 1.0):
        pending = []
        for k, (polys, order) in enumerate(forms):
            left = deadline - time.monotonic()
            budget = left * share / (len(forms) - k)
            try:
                with time_limit(max(budget, 0.0)):
                    found = _solve(polys, order)
            except OutOfTime:
                pending.append((polys, order))
                continue
            if found is not None and found.exact:
                return found
            if found is not None:
                result = found if result is None else result.intersect(found)
        forms = pending
        if not forms:
            break
    if result is None and forms:
        return _out_of_time(num_parameters, seconds)
    return result


def _out_of_time(num_parameters: int, seconds: float) -> Condition:
    return Condition(
        f"the exact layer's search on the ideal of the identifiable map ({num_parameters} "
        f"parameters) did not end within search_seconds = {seconds:g}: only the rank "
        "bounds are proven (a larger search_seconds may decide λ)",
        None,
    )


MAX_COEFFICIENT_DIGITS = 200
"""The most decimal digits of a generator's coefficient handed to the exact layer (its
conditions print the polynomials, and Python prints at most 4,300 digits)."""

MAX_RAW_GENERATORS = 64
"""The most generators tried as they are (the basis first in any case)."""


def _too_long(polys: list[sp.Poly]) -> bool:
    limit = 10**MAX_COEFFICIENT_DIGITS
    return any(abs(c.p) >= limit or c.q >= limit for g in polys for c in g.coeffs())


def _worth_trying(raw: list[sp.Poly], basis: list[sp.Poly]) -> bool:
    same = {tuple(g.monic().terms()) for g in basis} == {tuple(g.terms()) for g in raw}
    return not same and len(raw) <= MAX_RAW_GENERATORS and not _too_long(raw)


def _solve(polys: list[sp.Poly], symbols: list[sp.Symbol]) -> RLCT | None:
    try:
        return from_ideal([g.as_expr() for g in polys], symbols)
    except (TooLargeError, UndecidedError):
        return None
