"""Exact algebra that the steps share: factorisations over Q, bounded Gröbner bases, ranks,
linear programmes, real algebraic numbers, real zeros (in the torus and on projective space),
quadratic forms by their rank, scaling weights, and the common monomial of an ideal's generators.
"""

__all__: list[str] = []
