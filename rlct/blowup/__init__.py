"""Blow-ups for ideals that the other steps leave bounded: of the origin
(:mod:`~rlct.blowup.origin`, with the families of zeros on its divisor and the lines inside a wall),
weighted, of a coordinate subspace (with charts straightened), of a line in three variables and of a
codimension-two subspace.
"""

__all__: list[str] = []
