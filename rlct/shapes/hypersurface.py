"""λ of K = unit·x^b·f^e for a hypersurface f = 0 that is Newton non-degenerate itself.

K = f² is never Newton non-degenerate as a polynomial once f has real zeros near 0 (K_γ = f_γ²
vanishes wherever f_γ does), yet f itself may be: for every compact face γ of f's Newton
polyhedron P(f), the face polynomial f_γ has no *singular* zero in the real torus (R∖{0})^d
(f_γ = x_1∂_1f_γ = … = x_d∂_df_γ = 0 has no solution there). A toric modification along a regular
refinement of P(f)'s dual fan then turns f into a monomial times a strict transform f̃ that is
smooth and crosses every divisor normally near the preimage of 0 (only compact faces meet it),
and turns the monomial x^b (even exponents b_j ≥ 0, from the factors of K that are coordinates)
into a monomial. With prior Π |w_j|^(h_j) and τ_j = h_j + 1, the poles of ∫ K^z φ come from

* each ray ν of the fan: ratio ⟨τ, ν⟩/ℓ_K(ν), ℓ_K(ν) = ⟨b, ν⟩ + e·ℓ_f(ν) (P(K) = b + e·P(f) has
  the same fan), the smallest being λ_N = 1/t, t the τ-distance of P(K), reached by
  m_N = d − dim(face at t·τ) divisors through one point (as for K in :mod:`rlct.newton.analysis`);
* the strict transform f̃ = 0, ratio 1/e, where it has real points over 0: exactly when some
  compact face polynomial f_γ has a real torus zero (there x^b and the prior are units).

So λ_N < 1/e gives λ = λ_N, m = m_N (real zeros or not); λ_N > 1/e gives λ = 1/e, m = 1 when f
has real zeros near 0 (some f_γ does) and λ_N, m_N when none does; λ_N = 1/e with real zeros
(the strict transform may meet the divisors that attain it) is declined. (xy − z³)² has λ = 1/2,
m = 1 (λ_N = 2/3); (x² − y⁴ − z⁶)² λ = 11/24; x²y⁶(x³y − z⁴)² has λ_N = 5/32 < 1/2. The vanishing
factors of K other than coordinates share one even exponent e, and f is their product. Every
condition (non-degeneracy, real zeros) is decided exactly by :mod:`rlct.algebra.realzeros`;
undecided means declined.
"""

from __future__ import annotations

import operator
from fractions import Fraction
from functools import reduce

import sympy as sp

from ..algebra.factor import LocalFactors, local_factors
from ..algebra.realzeros import has_real_torus_zero
from ..errors import TooLargeError
from ..newton.analysis import face_polynomial
from ..newton.polyhedron import Face, NewtonPolyhedron
from ..result import RLCT, Condition
from .smooth import coordinate_index

__all__ = ["hypersurface_power_rlct"]

METHOD = "power of a Newton non-degenerate hypersurface: toric resolution of f"
MAX_FACE_TERMS = 8  # face polynomials of f with more terms are declined: their decisions are slow


def hypersurface_power_rlct(
    K: sp.Poly, h: tuple[sp.Rational, ...], local: LocalFactors | None = None
) -> RLCT | None:
    """λ and m of K = u·x^b·f^e (module docstring); None when K is not of that form (u(0) > 0,
    b and e even, one exponent e for the factors that are not coordinates), when f is degenerate
    or a condition is undecided, or at the tie λ_N = 1/e with real zeros. ``local``: K's
    factors, when the caller has them."""
    unit_at_0, vanishing = local or local_factors(K)
    gens, d = K.gens, len(K.gens)
    b, others = [0] * d, []
    for g, e in vanishing:
        j = coordinate_index(g)
        if j is None:
            others.append((g, e))
        else:
            b[j] = e
    exponents = {e for _, e in others}
    if len(exponents) != 1 or unit_at_0 <= 0 or any(x % 2 for x in (*b, *exponents)):
        return None  # an odd power ≥ 0 has f ≥ 0, no smooth real zeros: Newton's case for K
    (e,) = exponents
    f = reduce(operator.mul, (g for g, _ in others))
    try:
        faces = [g for g in NewtonPolyhedron(f.monoms(), "f").compact_faces if g.dim > 0]
        poly = NewtonPolyhedron([tuple(bj + e * a for bj, a in zip(b, m)) for m in f.monoms()], "K")
    except TooLargeError:
        return None
    face_polys = [face_polynomial(f, g) for g in faces]
    if any(len(sp.Add.make_args(fg)) > MAX_FACE_TERMS for fg in face_polys):
        return None  # deciding large face systems can take minutes (lex Gröbner bases)
    for g, fg in zip(faces, face_polys):
        if not _no_singular_torus_zero(fg, gens, g.points):
            return None  # a singular torus zero (degenerate), or undecided
    tau = [Fraction(int(x.p), int(x.q)) + 1 for x in h]
    t = poly.distance(tau)
    lam_n, strict = sp.Rational(t.denominator, t.numerator), sp.Rational(1, e)
    mult_n = d - poly.face_at_distance(tau).dim
    real = _real_torus_zero(faces, face_polys, gens)
    if lam_n < strict:
        lam, mult, why = lam_n, mult_n, f"λ_N = {lam_n} < 1/{e}: the divisors' ratio is smallest"
    elif real is None:
        return None
    elif real is False:
        lam, mult, why = lam_n, mult_n, f"λ_N = {lam_n} and no face polynomial has a real zero"
    elif lam_n == strict:
        return None  # the strict transform ties with the divisors: m not decided here
    else:
        lam, mult = strict, 1
        why = (
            f"λ_N = {lam_n} > 1/{e} and {real} has a real torus zero: the strict transform's 1/{e}"
        )
    monomial = sp.Mul(*(x**bj for x, bj in zip(gens, b)))
    conditions = (
        Condition(
            f"K = unit·{monomial}·f^{e} with f = {f.as_expr()}, the unit {unit_at_0} > 0 at 0, and "
            "no compact face polynomial f_γ of f has a singular zero in the real torus (decided "
            "exactly)",
            True,
        ),
        Condition(why, True),
    )
    return RLCT.exact_value(lam, mult, METHOD, conditions)


def _no_singular_torus_zero(fg: sp.Expr, gens: tuple[sp.Symbol, ...], points) -> bool:
    """Proven: f_γ = x_1∂_1f_γ = … = x_d∂_df_γ = 0 has no solution in the real torus. A single
    term x_i∂_if_γ (x_i in one term of f_γ) vanishes nowhere there; otherwise
    rlct.algebra.realzeros."""
    derivatives = [sp.expand(x * sp.diff(fg, x)) for x in gens]
    if any(len(sp.Add.make_args(dv)) == 1 for dv in derivatives if dv != 0):
        return True
    return has_real_torus_zero([fg, *derivatives], gens, points, False) is False


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
