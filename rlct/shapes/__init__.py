"""K of a recognised shape, solved in one step after one factorisation: smooth hypersurfaces
crossing normally, a power of a non-degenerate quadratic form, a product of linear forms (a
hyperplane arrangement), a power of a hypersurface that is Newton non-degenerate itself.
"""

__all__: list[str] = []
