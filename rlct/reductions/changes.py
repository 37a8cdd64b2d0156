"""Coordinate changes suggested by degenerate faces: triangular (and linear) substitutions.

λ and m are invariant under an analytic isomorphism φ fixing 0 that keeps the prior's form
(change of variables w = φ(w') in ζ(z) = ∫ K(w)^z φ(w) dw: the Jacobian is a positive unit).
The changes tried here are

    φ: x_k ↦ x_k − r(x_{−k}),   r a polynomial with r(0) = 0,

polynomial automorphisms with Jacobian 1 (inverse x_k ↦ x_k + r) that leave every other
coordinate alone, so the prior Π|x_j|^(h_j) keeps its form exactly when h_k = 0. They come from
the real factors of a degenerate face polynomial K_γ: a factor f = a·x_k + r'(x_{−k}) of K_γ with
a ∈ Q∖{0} becomes a·x_k after x_k ↦ x_k − r'/a (a linear form when f is linear: the linear
changes). After the change the Newton polyhedron is recomputed; whatever it proves (exact, or
an upper bound 1/t) holds for K.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from ..algebra.factor import factor_list, from_flint, to_flint
from ..expressions import MAX_TERMS, check_size
from ..newton.analysis import face_polynomial
from ..newton.polyhedron import Face

__all__ = ["MAX_CHANGED_TERMS", "Substitution", "candidate_substitutions"]

MAX_CHANGED_TERMS = 10 * MAX_TERMS
"""The most terms K∘φ may have once expanded (its degree is held to MAX_DEGREE, as K's is). Ten
times a user's K: (x − y² − z²)² + x¹⁰⁰ is exact only through a K∘φ of 5,151 terms, while
x ↦ x + y⁵ − 5y⁴z + … on a K of degree 100 would have expanded to up to 21 million."""


@dataclass(frozen=True)
class Substitution:
    """x_k ↦ x_k − shift, with shift free of x_k and vanishing at 0."""

    variable: sp.Symbol
    shift: sp.Expr

    def apply(self, K: sp.Poly) -> sp.Poly:
        """K∘φ, expanded, over Q in the same variables (composed by FLINT; sympy's expand took
        most of the search's time), on the smallest domain (Z when the coefficients allow).
        Raises :class:`TooLargeError` before expanding when K∘φ could have degree > MAX_DEGREE
        or more than MAX_CHANGED_TERMS terms (:func:`rlct.expressions.check_size`), which keeps
        the search's memory bounded."""
        composed = K.as_expr().xreplace({self.variable: self.variable - self.shift})
        check_size(composed, K.gens, f"K∘φ for φ: {self}", MAX_CHANGED_TERMS)
        f = to_flint(K)
        images = list(f.context().gens())
        k = K.gens.index(self.variable)
        images[k] = images[k] - to_flint(sp.Poly(self.shift, *K.gens))
        return from_flint(f.compose(*images), K.gens).retract()

    def __str__(self) -> str:
        return f"{self.variable} ↦ {self.variable - self.shift}"


def candidate_substitutions(
    K: sp.Poly, faces: Sequence[Face], prior: Sequence[sp.Rational]
) -> tuple[list[Substitution], list[str]]:
    """Substitutions from the factors of the given faces' polynomials, and the reasons why others
    were not admissible (a factor linear only in variables with a prior exponent h_k ≠ 0)."""
    found: dict[tuple[sp.Symbol, sp.Expr], Substitution] = {}
    blocked: list[str] = []
    for face in faces:
        _, factors = factor_list(sp.Poly(face_polynomial(K, face), *K.gens))
        for fp, _ in factors:
            f = fp.as_expr()
            if fp.total_degree() < 1:
                continue
            usable = []
            for k, x in enumerate(K.gens):
                if fp.degree(x) != 1:
                    continue
                a = fp.as_expr().coeff(x, 1)
                if not a.is_number:
                    continue
                rest = sp.expand(fp.as_expr() - a * x)
                if rest == 0:
                    continue  # f = a·x_k is already a coordinate
                if prior[k] != 0:
                    blocked.append(
                        f"{x} ↦ {x} − ({rest})/({a}) would straighten the factor {f} of a face "
                        f"polynomial, but the prior |{x}|^{prior[k]} would lose its form"
                    )
                    continue
                usable.append(Substitution(x, sp.expand(rest / a)))
            for s in usable:
                found.setdefault((s.variable, s.shift), s)
    return list(found.values()), blocked
