"""Shared pieces of the blow-up tests' hypothesis strategies (three variables x, y, z)."""

from __future__ import annotations

import sympy as sp
from hypothesis import strategies as st

x, y, z = X = sp.symbols("x y z")


def monomial(draw: st.DrawFn, degree: int) -> sp.Expr:
    """A monomial x^a·y^b·z^c of the given total degree, exponents drawn."""
    a = draw(st.integers(0, degree))
    b = draw(st.integers(0, degree - a))
    return x**a * y**b * z ** (degree - a - b)
