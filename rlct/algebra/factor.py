"""Factorisations of polynomials over Q by FLINT (python-flint, already a dependency for the
modular ranks): sympy's ``factor_list`` and ``sqf_list`` spend seconds on an expanded (x − y)^150
and minutes at degree 400, FLINT milliseconds. Same contracts as ``sympy.Poly.factor_list`` and
``sympy.Poly.sqf_list``: K = c·Π f_i^(e_i), c rational, each f_i a primitive polynomial over Z in
the generators of K (irreducible, or square-free with the f_i pairwise coprime)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import NamedTuple

import flint
import sympy as sp

from ..time_limit import check as check_time

__all__ = [
    "LocalFactors",
    "constant_term",
    "factor_list",
    "from_flint",
    "linear_part",
    "local_factors",
    "sqf_list",
    "to_flint",
]

Factors = tuple[sp.Rational, list[tuple[sp.Poly, int]]]


def factor_list(p: sp.Poly) -> Factors:
    """p = c·Π f_i^(e_i) with the f_i irreducible over Q (``sympy.Poly.factor_list``)."""
    return _by_flint(p, lambda f: f.factor(), sp.Poly.factor_list)


def sqf_list(p: sp.Poly) -> Factors:
    """p = c·Π f_i^(e_i) with the f_i square-free and pairwise coprime, the e_i distinct
    (``sympy.Poly.sqf_list``)."""
    return _by_flint(p, lambda f: f.factor_squarefree(), sp.Poly.sqf_list)


def _by_flint(p: sp.Poly, split: Callable, fallback: Callable[[sp.Poly], Factors]) -> Factors:
    gens = p.gens
    if p.is_zero or p.is_ground or p.domain not in (sp.ZZ, sp.QQ):
        return fallback(p)  # constants, and domains FLINT is not asked to handle
    check_time()  # FLINT's factorisation is one call: the time limit is checked before it
    content, parts = split(to_flint(p))
    c = sp.Rational(int(content.p), int(content.q))
    out = []
    for f, e in parts:
        den, integral = from_flint(f, gens).clear_denoms(convert=True)
        g, primitive = integral.primitive()
        c *= (sp.Integer(g) / den) ** int(e)
        out.append((primitive, int(e)))
    return c, out


def to_flint(p: sp.Poly) -> flint.fmpq_mpoly:
    """p (over Z or Q) as a FLINT polynomial, its generators named by position."""
    ctx = flint.fmpq_mpoly_ctx.get(tuple(f"v{j}" for j in range(len(p.gens))), "lex")
    return ctx.from_dict(
        {m: flint.fmpq(int(sp.Rational(c).p), int(sp.Rational(c).q)) for m, c in p.terms()}
    )


def from_flint(f: flint.fmpq_mpoly, gens: tuple[sp.Symbol, ...]) -> sp.Poly:
    """A FLINT polynomial back as a sympy Poly over Q in ``gens`` (:func:`to_flint`'s inverse)."""
    coeffs = {m: sp.Rational(int(q.p), int(q.q)) for m, q in f.to_dict().items()}
    return sp.Poly.from_dict(coeffs or {(0,) * len(gens): 0}, *gens, domain=sp.QQ)


def sum_of_squares(polys: Sequence[sp.Poly]) -> sp.Poly:
    """Σ p_i², multiplied out by FLINT (sympy's own product took seconds on 10³-term
    generators), over ZZ where every p_i is, as sympy's sum of squares would be."""
    gens = polys[0].gens
    total = to_flint(polys[0]) ** 2
    for p in polys[1:]:
        total += to_flint(p) ** 2
    out = from_flint(total, gens)
    return out.set_domain(sp.ZZ) if all(p.domain == sp.ZZ for p in polys) else out


def constant_term(f: sp.Poly) -> sp.Rational:
    """f(0)."""
    return sp.Rational(f.coeff_monomial((0,) * len(f.gens)))


def linear_part(f: sp.Poly) -> list[Fraction]:
    """∇f(0): the coefficients of the degree-1 monomials of f."""
    d = len(f.gens)
    unit = [tuple(int(i == j) for i in range(d)) for j in range(d)]
    return [Fraction(int(c.p), int(c.q)) for c in map(sp.Rational, map(f.coeff_monomial, unit))]


# FLINT's factorisation of an irreducible polynomial in three or more variables grows fast
# with the degree (x^k + y^k + z^k: 0.25 s at k = 47, 2.2 s at 67, 15 s at 97, minutes at 110
# and 129, and it cannot be interrupted); square-free parts above this degree are kept whole
SPLIT_MAX_DEGREE = 48


class LocalFactors(NamedTuple):
    """K = u·Π f_i^(e_i) near 0: the f_i the factors over Q that vanish at 0, pairwise coprime
    and square-free, irreducible except a square-free part of K in three or more variables of
    degree above ``SPLIT_MAX_DEGREE`` (kept whole); u the rest (constant included)."""

    unit_at_0: sp.Rational  # u(0)
    vanishing: list[tuple[sp.Poly, int]]  # (f_i, e_i)


def local_factors(K: sp.Poly) -> LocalFactors:
    """K's :class:`LocalFactors`: its square-free decomposition, each part split into
    irreducible factors where that is quick (``SPLIT_MAX_DEGREE``). Every reader of these
    factors checks what it needs of them (a coordinate's gradient, a linear or quadratic form,
    one power), so a part kept whole is declined, never misread."""
    c, parts = sqf_list(K)
    factors: list[tuple[sp.Poly, int]] = []
    for part, e in parts:
        if part.total_degree() > SPLIT_MAX_DEGREE and sum(map(bool, part.degree_list())) > 2:
            factors.append((part, e))
            continue
        content, split = factor_list(part)
        c *= content**e
        factors.extend((f, e * k) for f, k in split)
    unit = c * sp.Mul(*(constant_term(f) ** e for f, e in factors if constant_term(f) != 0))
    return LocalFactors(sp.Rational(unit), [(f, e) for f, e in factors if constant_term(f) == 0])
