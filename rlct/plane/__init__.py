"""Two variables: the embedded resolution of K(x, y) by toric charts along the Newton polygon
(:mod:`~rlct.plane.resolve`, with its charts in :mod:`~rlct.plane.charts`), and the same over
Q(w) along a line of zeros in three variables (:mod:`~rlct.plane.along_line`).
"""

__all__: list[str] = []
