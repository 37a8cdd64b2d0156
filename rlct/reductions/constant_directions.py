"""K that depends on fewer linear combinations of the variables than it has variables.

The directions along which K is constant form the linear space

    N = {v ∈ Q^d : v·∇K ≡ 0}   (K(w + t·v) = K(w) for all t, as polynomials),

decided by exact linear algebra on the coefficients of ∂K/∂w_j. Keep only the v with v_j = 0 on
every coordinate that carries a prior exponent h_j ≠ 0. If N ≠ 0, let P be dim N coordinates (none
with a prior) on which N's basis is the identity, and J the others.
The linear change w = Σ_{j∈J} w'_j e_j + Σ_l t_l n_l (n_l the basis of N) is invertible with a
constant Jacobian, leaves the prior Π_{j∈J} |w'_j|^(h_j) in its form, and turns K into

    K(w) = K(w'_J, 0)   (independent of t),

so ζ(z) = ∫ K^z Π|w_j|^(h_j) dw is a positive constant times the same integral of K(w_J, 0) over
the |J| = d − dim N variables w_J: λ and m are those of K with w_j = 0 for j ∈ P. Example:
(x + y − z)⁶ + (2x − y)⁶ is constant along (1, 2, 3); with z = 0 it is a polynomial in (x, y),
which the plane resolution solves exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..algebra.ranks import integer_rows, nullspace, primitive
from ..result import Condition

__all__ = ["Reduction", "drop_constant_directions"]


@dataclass(frozen=True)
class Reduction:
    """K restricted to ``kept`` (the coordinates J), with their prior exponents, and why."""

    K: sp.Poly
    h: tuple[sp.Rational, ...]
    kept: tuple[int, ...]
    condition: Condition


def drop_constant_directions(K: sp.Poly, h: tuple[sp.Rational, ...]) -> Reduction | None:
    """K(w_J, 0) when K is constant along a non-zero space N of directions free of the prior's
    coordinates (module docstring); None when there is none."""
    free = [j for j, hj in enumerate(h) if hj == 0 and K.degree(K.gens[j]) > 0]
    if not free:
        return None
    basis = _constant_directions(K, free)
    if not basis:
        return None
    # rlct.algebra.ranks.nullspace gives each basis vector a 1 at its own free column, its last
    # non-zero entry, where the others are 0: N on those columns is the identity, so they can be
    # dropped.
    dropped = {free[max(i for i, c in enumerate(v) if c != 0)] for v in basis}
    kept = tuple(j for j in range(len(K.gens)) if j not in dropped)
    gens = [K.gens[j] for j in kept]
    reduced = sp.Poly(K.as_expr().subs({K.gens[j]: 0 for j in dropped}), *gens)
    directions = "; ".join(_in_all_coordinates(v, free, len(K.gens)) for v in basis)
    names = ", ".join(f"{K.gens[j]} = 0" for j in sorted(dropped))
    condition = Condition(
        f"K is constant along {directions} (v·∇K ≡ 0, decided over Q), which moves no "
        f"coordinate with a prior exponent: the linear change to ({', '.join(map(str, gens))}) "
        f"and these directions has a constant Jacobian, so λ and m are those of K at {names}, "
        f"{reduced.as_expr()}",
        True,
    )
    return Reduction(reduced, tuple(h[j] for j in kept), kept, condition)


def _constant_directions(K: sp.Poly, free: list[int]) -> list[list[Fraction]]:
    """A basis of {v on the coordinates ``free`` : Σ_j v_j ∂K/∂w_j ≡ 0}, in those coordinates.

    The system has a row per monomial of ∇K; its null space is that of the |free|² Gram matrix
    MᵀM (Mv = 0 ⟺ |Mv|² = 0 over Q), which keeps the elimination small for a K of many terms."""
    rows: dict[tuple[int, ...], list[object]] = {}
    for col, j in enumerate(free):
        for monomial, c in K.diff(K.gens[j]).terms():
            rows.setdefault(monomial, [0] * len(free))[col] = c
    m = integer_rows(list(rows.values()))
    gram = [[sum(r[a] * r[b] for r in m) for b in range(len(free))] for a in range(len(free))]
    return nullspace(gram, len(free))


def _in_all_coordinates(v: list[Fraction], free: list[int], d: int) -> str:
    """v on the coordinates ``free``, written in all d coordinates as a primitive integer vector."""
    full = [Fraction(0)] * d
    for i, j in enumerate(free):
        full[j] = v[i]
    return str(primitive(full))
