"""The local learning coefficient at any point p of the zero set {K = 0}.

Watanabe's local λ at p is the RLCT of K on a small neighbourhood of p. With w = p + u it is the
RLCT of K_p(u) = K(p + u) at u = 0, which :func:`rlct.from_polynomial` (or, for K = Σ f_i²,
:func:`rlct.from_ideal`) computes with its usual exact/bounds discipline and certificates.

The prior Π |w_j|^(h_j) becomes Π |u_j|^(h_j) on the coordinates with p_j = 0 and a smooth
positive factor (exponent 0) on those with p_j ≠ 0: near u = 0 the factor |p_j + u_j|^(h_j) lies
between two positive constants, which changes neither λ nor m.

p may hold rationals (ints, Fractions, sympy Rationals, strings such as "3/4") or real algebraic
numbers sympy keeps exact (sqrt(2), a CRootOf). K(p) = 0 is checked exactly (a non-rational value
by its minimal polynomial). When K_p has irrational coefficients the cascade (which works over Q)
does not run: only the order bounds 1/o ≤ λ ≤ Σ(h_j + 1)/o hold (o = ord₀ K_p; the lower one for
h ≥ 0, from λ_real ≥ lct_C ≥ 1/mult), returned with ``exact=False``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import sympy as sp

from .._validate import exact_rational, items, prior_vector
from ..cascade import from_ideal, from_polynomial
from ..errors import InvalidTypeError, NotNonNegativeError, NotPolynomialError, UndecidedError
from ..expressions import as_expression, as_variables, check_size
from ..result import RLCT, Condition

__all__ = ["local_ideal_llc", "local_llc"]


def local_llc(
    K: object,
    variables: Sequence[sp.Symbol],
    point: Sequence[object],
    prior_exponents: Sequence[object] | None = None,
) -> RLCT:
    """λ and m of K ≥ 0 at ``point`` (a zero of K), through the cascade of
    :func:`rlct.from_polynomial` applied to u ↦ K(point + u) (module docstring).

    The result's first condition records the point and the translation; λ, m and the later
    conditions are those of K(point + u) at u = 0, written in the same variable names (which
    then stand for u = w − point). Raises :class:`rlct.NotNonNegativeError` when K(point) ≠ 0,
    :class:`rlct.InvalidTypeError` for a point of the wrong length or a non-numeric entry.
    """
    variables = as_variables(variables)
    p = _point(point, len(variables))
    expr = as_expression(K, "K", variables)
    _check_zero([expr], variables, p, "K")
    h = prior_vector(prior_exponents, len(variables), "prior_exponents")
    shifted = _translate(expr, variables, p)
    return _solve(
        [shifted], variables, p, h, lambda hp: from_polynomial(shifted, variables, hp), False
    )


def local_ideal_llc(
    generators: Sequence[object],
    variables: Sequence[sp.Symbol],
    point: Sequence[object],
    prior_exponents: Sequence[object] | None = None,
) -> RLCT:
    """λ and m of K = Σ f_i² at ``point`` (a common zero of the f_i), through
    :func:`rlct.from_ideal` applied to the f_i(point + u); otherwise as :func:`local_llc`."""
    variables = as_variables(variables)
    p = _point(point, len(variables))
    gens = items(generators, "generators", InvalidTypeError, "polynomials")
    exprs = [as_expression(f, f"f_{i + 1}", variables) for i, f in enumerate(gens)]
    _check_zero(exprs, variables, p, "f")
    h = prior_vector(prior_exponents, len(variables), "prior_exponents")
    shifted = [_translate(e, variables, p) for e in exprs]
    return _solve(shifted, variables, p, h, lambda hp: from_ideal(shifted, variables, hp), True)


def _point(point: object, d: int) -> tuple[sp.Expr, ...]:
    """The point's coordinates: exact rationals, or real algebraic numbers kept by sympy."""
    entries = items(point, "point", InvalidTypeError, "exact real numbers")
    if len(entries) != d:
        raise InvalidTypeError(
            f"point has {len(entries)} coordinates but there are {d} variables: {entries!r}"
        )
    return tuple(_coordinate(v, f"point[{j}]") for j, v in enumerate(entries))


def _coordinate(value: object, name: str) -> sp.Expr:
    if isinstance(value, sp.Expr) and not isinstance(value, sp.Rational):
        if value.free_symbols:
            raise InvalidTypeError(f"{name} = {value} is not a number: it contains symbols")
        if value.has(sp.Float):
            raise InvalidTypeError(f"{name} = {value} is a float; give an exact number")
        if value.is_real is not True or value.is_algebraic is not True:
            raise InvalidTypeError(
                f"{name} = {value} is not known to be a real algebraic number; give a rational "
                "or a real algebraic number sympy keeps exact (sqrt(2), CRootOf)"
            )
        return value
    return exact_rational(value, name, InvalidTypeError)


def _is_zero(value: sp.Expr) -> bool:
    """value == 0, decided exactly (a non-rational algebraic number by its minimal polynomial)."""
    value = sp.expand(value)
    if value.is_Rational:
        return value == 0
    x = sp.Dummy("x")
    try:
        return sp.minimal_polynomial(value, x) == x
    except (NotImplementedError, sp.PolynomialError) as err:
        raise UndecidedError(f"could not decide whether {value} is 0 exactly: {err}") from err


def _check_zero(
    exprs: list[sp.Expr], variables: tuple[sp.Symbol, ...], p: tuple[sp.Expr, ...], what: str
) -> None:
    at = dict(zip(variables, p))
    for i, e in enumerate(exprs):
        name = what if len(exprs) == 1 and what == "K" else f"f_{i + 1}"
        extra = e.free_symbols - set(variables)
        if extra:
            raise NotPolynomialError(
                f"{name} contains symbols {sorted(map(str, extra))} not in the variables"
            )
        check_size(e, variables, name)
        value = e.xreplace(at)
        if not _is_zero(value):
            shown = ", ".join(map(str, p))
            raise NotNonNegativeError(
                f"{name}({shown}) = {sp.expand(value)} ≠ 0: the point ({shown}) "
                "is not in the zero set, so it has no local λ"
            )


def _translate(expr: sp.Expr, variables: tuple[sp.Symbol, ...], p: tuple[sp.Expr, ...]) -> sp.Expr:
    """expr(p + u) with u named as the variables; the tree is kept (a sum of squares stays one)."""
    return expr.xreplace({v: v + c for v, c in zip(variables, p) if c != 0})


def _solve(
    shifted: list[sp.Expr],
    variables: tuple[sp.Symbol, ...],
    p: tuple[sp.Expr, ...],
    h: tuple[sp.Rational, ...],
    cascade: object,
    ideal: bool,
) -> RLCT:
    hp = tuple(hj if c == 0 else sp.Integer(0) for hj, c in zip(h, p))
    shown = "(" + ", ".join(map(str, p)) + ")"
    head = [
        Condition(
            f"at the point {shown}: K(point) = 0 exactly; λ, m are those of K(point + u) at "
            f"u = 0, u = w − point named as the variables {list(map(str, variables))}",
            True,
        )
    ]
    if hp != h:
        moved = [str(v) for v, hj, c in zip(variables, h, p) if hj != 0 and c != 0]
        head.append(
            Condition(
                f"prior exponents set to 0 on {moved}: |point_j + u_j|^h_j is bounded above and "
                "away from 0 near u = 0",
                True,
            )
        )
    if all(c.is_Rational for c in p):
        res = cascade(hp)  # type: ignore[operator]
        return dataclasses.replace(
            res, method=f"local at {shown}: {res.method}", conditions=(*head, *res.conditions)
        )
    return _algebraic_bounds(shifted, variables, hp, ideal, shown, head)


def _algebraic_bounds(
    shifted: list[sp.Expr],
    variables: tuple[sp.Symbol, ...],
    h: tuple[sp.Rational, ...],
    ideal: bool,
    shown: str,
    head: list[Condition],
) -> RLCT:
    """Order bounds for K(point + u) with algebraic coefficients (module docstring)."""
    polys = []
    for e in shifted:
        try:
            poly = sp.Poly(sp.expand(e), *variables, extension=True)
        except (sp.PolynomialError, NotImplementedError) as err:
            raise NotPolynomialError(f"K(point + u) could not be kept exact: {err}") from err
        if not (poly.domain in (sp.ZZ, sp.QQ) or poly.domain.is_AlgebraicField):
            raise NotPolynomialError(
                f"K(point + u) has coefficients in {poly.domain}, not an exact number field"
            )
        if not poly.is_zero:
            polys.append(poly)
    if not polys:
        raise NotNonNegativeError("K(point + u) is identically zero: it has no RLCT")
    if all(p.domain in (sp.ZZ, sp.QQ) for p in polys):
        exprs = [p.as_expr() for p in polys]
        res = from_ideal(exprs, variables, h) if ideal else from_polynomial(exprs[0], variables, h)
        return dataclasses.replace(
            res, method=f"local at {shown}: {res.method}", conditions=(*head, *res.conditions)
        )
    order = min(min(sum(m) for m in p.monoms()) for p in polys) * (2 if ideal else 1)
    if order == 1:
        raise NotNonNegativeError(
            f"K has a non-zero gradient at {shown}: it changes sign there, so K ≥ 0 fails"
        )
    lower = sp.Rational(1, order) if all(x >= 0 for x in h) else sp.Integer(0)
    upper = sum((x + 1 for x in h), sp.Integer(0)) / order
    notes = (
        Condition(
            f"K(point + u) has irrational coefficients (in {polys[0].domain}): the cascade, "
            "which works over Q, was not run",
            None,
        ),
        Condition("K ≥ 0 near the point (not checked over the number field)", None),
        Condition(f"ord₀ K(point + u) = {order}: K ≤ C·|u|^{order} near 0", True),
    )
    method = f"local at {shown}: order bounds 1/o ≤ λ ≤ Σ(h_j+1)/o"
    return RLCT.bounds(lower, upper, method, (*head, *notes))
