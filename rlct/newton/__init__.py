"""Newton polyhedra: the polyhedron itself, λ = 1/t for a K or an ideal that is non-degenerate
(:mod:`~rlct.newton.analysis`), and the same along a line of zeros with coefficients that are
polynomials in the line's coordinate (:mod:`~rlct.newton.along_line`).
"""

__all__: list[str] = []
