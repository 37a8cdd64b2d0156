"""λ of K = unit·f^e for a hypersurface f = 0 that is Newton non-degenerate, singular or not.

K = f² is never Newton non-degenerate as a polynomial once f has real zeros near 0 (K_γ = f_γ²
vanishes wherever f_γ does), yet f itself may be: for every compact face γ of f's Newton
polyhedron P(f), the face polynomial f_γ has no *singular* zero in the real torus (R∖{0})^d
(f_γ = x_1∂_1f_γ = … = x_d∂_df_γ = 0 has no solution there). A toric modification along a regular
refinement of P(f)'s dual fan then turns f into a monomial times a strict transform f̃ that is
smooth and crosses every divisor normally near the preimage of 0 (only compact faces meet it).
With prior Π |w_j|^(h_j) and τ_j = h_j + 1, the poles of ∫ |f|^(e·z) φ come from

* each ray ν of the fan: ratio ⟨τ, ν⟩/(e·ℓ_f(ν)), the smallest being 1/(e·t), t the τ-distance of
  P(f), reached by m_N = d − dim(face at t·τ) divisors through one point (as for K in
  :mod:`rlct.newton`);
* the strict transform f̃ = 0, ratio 1/e, where it has real points over 0: exactly when some
  compact face polynomial f_γ has a real torus zero (then f̃ meets the divisors only where they
  do not reach the smallest ratio, or at a tie, which is not decided here).

So with λ_N = 1/t: λ_N < 1 gives λ = λ_N/e, m = m_N (real zeros or not); λ_N > 1 gives λ = 1/e,
m = 1 when f has real zeros near 0 (some f_γ does) and λ_N/e, m_N when none does; λ_N = 1 with
real zeros is declined. (xy − z³)² has λ = 1/2, m = 1 (λ_N = 4/3, the cone over the cusp meets
the torus); (x² − y⁴ − z⁶)² has λ = 11/24 (λ_N = 11/12). K = u·Π f_i^e with one exponent e for
all its vanishing factors is read as f = Π f_i. Every condition (non-degeneracy, real zeros) is
decided exactly by :mod:`rlct.realzeros`; undecided means declined.
"""

from __future__ import annotations

import operator
from fractions import Fraction
from functools import reduce

import sympy as sp

from .errors import TooLargeError
from .factor import LocalFactors, local_factors
from .newton import face_polynomial
from .polyhedron import Face, NewtonPolyhedron
from .realzeros import has_real_torus_zero
from .result import RLCT, Condition

__all__ = ["hypersurface_power_rlct"]

METHOD = "power of a Newton non-degenerate hypersurface: toric resolution of f"


def hypersurface_power_rlct(
    K: sp.Poly, h: tuple[sp.Rational, ...], local: LocalFactors | None = None
) -> RLCT | None:
    """λ and m of K = u·f^e (module docstring); None when K is not of that form (u(0) > 0, e
    even, one exponent for all vanishing factors), when f is degenerate or its conditions are
    undecided, or at the tie λ_N = 1 with real zeros. ``local``: K's factors, when the caller
    has them."""
    unit_at_0, vanishing = local or local_factors(K)
    exponents = {e for _, e in vanishing}
    if not vanishing or len(exponents) != 1 or unit_at_0 <= 0:
        return None
    (e,) = exponents
    if e % 2:
        return None  # an odd power ≥ 0 has f ≥ 0, no smooth real zeros: Newton's case for K
    f = reduce(operator.mul, (g for g, _ in vanishing))
    try:
        poly = NewtonPolyhedron(f.monoms(), "f")
        faces = [g for g in poly.compact_faces if g.dim > 0]
    except TooLargeError:
        return None
    face_polys = [face_polynomial(f, g) for g in faces]
    gens = f.gens
    for g, fg in zip(faces, face_polys):
        system = [fg, *(x * sp.diff(fg, x) for x in gens)]
        if has_real_torus_zero(system, gens, g.points, False) is not False:
            return None  # a singular torus zero (degenerate), or undecided
    tau = [Fraction(int(x.p), int(x.q)) + 1 for x in h]
    t = poly.distance(tau)
    lam_n = sp.Rational(t.denominator, t.numerator)
    mult_n = poly.dim - poly.face_at_distance(tau).dim
    real = _real_torus_zero(faces, face_polys, gens)
    if lam_n < 1:
        lam, mult, why = lam_n, mult_n, f"λ_N = {lam_n} < 1: the divisors' ratio is the smallest"
    elif real is None:
        return None
    elif real is False:
        lam, mult, why = lam_n, mult_n, f"λ_N = {lam_n} and no face polynomial has a real zero"
    elif lam_n == 1:
        return None  # the strict transform ties with the divisors: m not decided here
    else:
        lam, mult = sp.Integer(1), 1
        why = f"λ_N = {lam_n} > 1 and {real} has a real torus zero: the strict transform's 1"
    conditions = (
        Condition(
            f"K = unit·f^{e} with f = {f.as_expr()}, the unit {unit_at_0} > 0 at 0, and no compact "
            "face polynomial f_γ of f has a singular zero in the real torus (decided exactly)",
            True,
        ),
        Condition(why, True),
    )
    return RLCT.exact_value(lam / e, mult, METHOD, conditions)


def _real_torus_zero(
    faces: list[Face], face_polys: list[sp.Expr], gens: tuple[sp.Symbol, ...]
) -> sp.Expr | bool | None:
    """A compact face polynomial with a real torus zero (proven), False when none has one, None
    when some face is undecided and none is proven to have one."""
    undecided = False
    for g, fg in zip(faces, face_polys):
        zero = has_real_torus_zero([fg], gens, g.points, False)
        if zero:
            return fg
        undecided = undecided or zero is None
    return None if undecided else False
