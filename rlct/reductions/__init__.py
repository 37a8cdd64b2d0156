"""The same λ and m from a smaller or simpler problem: dropping constant directions, blocks on
disjoint variables (of K or of an ideal), eliminating a variable, linear and triangular changes of
coordinates read off degenerate faces, and simpler generators of the same ideal near 0.
"""

__all__: list[str] = []
