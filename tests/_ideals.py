"""Shared pieces of the blow-up tests: hypothesis strategies (three variables x, y, z) and the
check of a forced blow-up against Newton's value."""

from __future__ import annotations

import sympy as sp
from hypothesis import assume
from hypothesis import strategies as st

from rlct.cascade import _solve_ideal

x, y, z = X = sp.symbols("x y z")


def monomial(draw: st.DrawFn, degree: int) -> sp.Expr:
    """A monomial x^a·y^b·z^c of the given total degree, exponents drawn."""
    a = draw(st.integers(0, degree))
    b = draw(st.integers(0, degree - a))
    return x**a * y**b * z ** (degree - a - b)


@st.composite
def curve_ideals(draw: st.DrawFn) -> list[sp.Expr]:
    """Two generators c·w·v + higher terms whose quadratic parts share the variable w, so that
    the initial forms vanish on the line w = 0 (and more), times a monomial now and then."""
    common = draw(st.sampled_from(X))
    factor = draw(st.sampled_from((1, 1, x, z, y * z)))
    gens = []
    for _ in range(2):
        f = draw(st.sampled_from((-1, 1, 2))) * common * draw(st.sampled_from(X))
        f += sum(monomial(draw, draw(st.integers(3, 4))) for _ in range(draw(st.integers(0, 2))))
        gens.append(sp.expand(factor * f))
    return gens


@st.composite
def two_line_ideals(draw: st.DrawFn) -> list[sp.Expr]:
    """c·v·w + terms of degree 3–4, and terms of degree 3–4 only: the initial forms vanish on the
    two lines v = 0 and w = 0, each with its own kind of points; times a monomial now and then."""
    v, w = draw(st.permutations(X))[:2]
    factor = draw(st.sampled_from((1, 1, x, z, y * z)))
    first = draw(st.sampled_from((-1, 1, 2))) * v * w
    first += sum(monomial(draw, draw(st.integers(3, 4))) for _ in range(draw(st.integers(0, 2))))
    second = sum(monomial(draw, draw(st.integers(3, 4))) for _ in range(draw(st.integers(1, 2))))
    return [sp.expand(factor * first), sp.expand(factor * second)]


ZEROS_ON_CURVES = st.one_of(curve_ideals(), two_line_ideals())


def check_forced_blowup(polys, h, blow_up, combine, depth: int) -> None:
    """A blow-up forced on an ideal that Newton's polyhedron solves on its own (an independent
    exact value): ``blow_up(polys, h)`` (None: the draw is skipped), its points solved ``depth``
    blow-ups deep, ``combine``d. Where that is exact it must equal Newton's λ and m, and otherwise
    its bounds must hold Newton's λ."""
    newton = _solve_ideal(polys, h, 0)
    blown = blow_up(polys, h)
    assume(newton.exact and blown is not None)
    got = combine(blown, [_solve_ideal(p.generators, p.h, depth) for p in blown.points])
    if got.exact:
        assert (got.lam, got.mult) == (newton.lam, newton.mult)
    else:
        assert got.lower <= newton.lam <= got.upper
