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

from fractions import Fraction

import sympy as sp
from sympy.polys.matrices import DomainMatrix

from ..errors import TooLargeError, UndecidedError
from ..polynomial import from_ideal
from ..result import RLCT, Condition
from ..time_limit import OutOfTime, time_limit
from .point import Point

__all__ = ["MAX_IDEAL_PARAMETERS", "ideal_generators", "ideal_llc"]

MAX_IDEAL_PARAMETERS = 12
"""The most parameters N for which the ideal is handed to :func:`rlct.from_ideal` (the exact
layer's blow-up search grows quickly with the number of variables)."""


def _q(x: int | Fraction) -> sp.Rational:
    f = Fraction(x)
    return sp.Rational(f.numerator, f.denominator)


def ideal_generators(pt: Point) -> tuple[list[sp.Poly], list[sp.Symbol]]:
    """A basis (reduced row echelon form over Q) of the span of the g_i, as polynomials in the
    shifts δ, and the shift symbols (ordered W row-major, V row-major, then b and c)."""
    d, K, p = pt.d, pt.K, pt.p
    dw = sp.symbols(f"dW0:{d * K}", real=True)
    dv = sp.symbols(f"dV0:{p * K}", real=True)
    db = sp.symbols(f"db0:{K}", real=True) if pt.bias else ()
    dc = sp.symbols(f"dc0:{p}", real=True) if pt.bias else ()
    symbols = [*dw, *dv, *db, *dc]

    def poly(e: sp.Expr) -> sp.Poly:
        return sp.Poly(e, *symbols, domain=sp.QQ)

    W = [[poly(_q(pt.W[i, j]) + dw[i * K + j]) for j in range(K)] for i in range(d)]
    V = [[poly(_q(pt.V[k, j]) + dv[k * K + j]) for j in range(K)] for k in range(p)]
    b = [poly(_q(pt.b[j]) + db[j]) for j in range(K)] if pt.bias else None
    c = [poly(_q(0) + dc[k]) for k in range(p)] if pt.bias else None
    coords = _data_outputs(pt, W, V, b, c) if pt.X is not None else _features(d, K, p, W, V, b, c)
    gens = [g - g.coeff_monomial(1) for g in coords]
    return _span_basis(gens, symbols), symbols


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
        xs = [_q(t) for t in x]
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
    """λ (and m) of Σ g_i² at δ = 0 by :func:`rlct.from_ideal`, searched for at most ``seconds``;
    None where N is too large, ``seconds`` is 0, every g_i vanishes identically, or the exact
    layer refuses the ideal as too large or undecided; an undecided Condition saying so where
    the search ran out of time."""
    if num_parameters > MAX_IDEAL_PARAMETERS or seconds <= 0:
        return None
    gens, symbols = ideal_generators(pt)
    if not gens:
        return None
    try:
        with time_limit(seconds):
            return from_ideal([g.as_expr() for g in gens], symbols)
    except (TooLargeError, UndecidedError):
        return None
    except OutOfTime:
        return Condition(
            f"the exact layer's search on the ideal of the identifiable map ({num_parameters} "
            f"parameters) did not end within search_seconds = {seconds:g}: only the rank "
            "bounds are proven (a larger search_seconds may decide λ)",
            None,
        )
