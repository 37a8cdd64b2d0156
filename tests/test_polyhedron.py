"""Exact Newton polyhedra: the double-description facets against a brute-force oracle."""

import itertools
import math
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from rlct.newton.polyhedron import NewtonPolyhedron


def brute_force_facets(points, d):
    """Every hyperplane through k points and parallel to d − k unit directions that supports P."""
    found = set()
    gens = [("p", p) for p in points] + [("e", j) for j in range(d)]
    for chosen in itertools.combinations(gens, d):
        pts = [g[1] for g in chosen if g[0] == "p"]
        if not pts:
            continue
        rows = [[a - b for a, b in zip(p, pts[0])] for p in pts[1:]]
        rows += [[int(i == j) for i in range(d)] for kind, j in chosen if kind == "e"]
        null = sp.Matrix(rows).nullspace() if rows else [sp.Matrix([1])]
        if len(null) != 1:
            continue
        w = [sp.Rational(x) for x in null[0]]
        den = math.lcm(*(int(x.q) for x in w))
        w = [int(x * den) for x in w]
        g = math.gcd(*w)
        w = [x // g for x in w]
        if all(x <= 0 for x in w):
            w = [-x for x in w]
        if any(x < 0 for x in w):
            continue
        c = sum(a * b for a, b in zip(w, pts[0]))
        if all(sum(a * b for a, b in zip(w, p)) >= c for p in points):
            found.add((tuple(w), c))
    return found


point_sets = st.integers(1, 3).flatmap(
    lambda d: st.lists(
        st.tuples(*[st.integers(0, 4)] * d).filter(any), min_size=1, max_size=6, unique=True
    )
)


@given(point_sets)
def test_double_description_matches_brute_force(points):
    P = NewtonPolyhedron(points)
    got = {(f.normal, f.offset) for f in P.facets}
    assert got == brute_force_facets(points, P.dim)


@given(point_sets)
def test_distance_is_where_the_diagonal_enters(points):
    """t·1 ∈ P and (t − ε)·1 ∉ P: check membership with the facets' inequalities."""
    P = NewtonPolyhedron(points)
    t = P.distance([1] * P.dim)
    inside = [
        all(f.value([s] * P.dim) >= f.offset for f in P.facets) for s in (t, t - Fraction(1, 1000))
    ]
    assert inside == [True, False]
    # and t·1 dominates a convex combination of points: at least one point is ≤ t·1 when d = 1
    if P.dim == 1:
        assert t == min(p[0] for p in points)


def test_square_example():
    # conv{(2,0),(0,2)} + R²₊: facets x ≥ 0, y ≥ 0, x + y ≥ 2.
    P = NewtonPolyhedron([(2, 0), (0, 2), (1, 1)])
    assert {(f.normal, f.offset) for f in P.facets} == {((1, 0), 0), ((0, 1), 0), ((1, 1), 2)}
    assert sorted(P.vertices) == [(0, 2), (2, 0)]
    edge = [f for f in P.compact_faces if f.dim == 1]
    assert [f.points for f in edge] == [((0, 2), (1, 1), (2, 0))]


def test_building_the_facets_is_bounded_in_work_not_only_in_facets() -> None:
    """The path Σ (w_i w_{i+1})² in 36 variables ran a minute in the double description before
    its facets passed MAX_FACETS; the adjacency tests' work is bounded too, so it is refused in
    seconds, naming K."""
    from rlct.errors import TooLargeError
    from rlct.newton.polyhedron import NewtonPolyhedron

    n = 36
    points = [tuple(2 if k in (i, i + 1) else 0 for k in range(n)) for i in range(n - 1)]
    with pytest.raises(TooLargeError, match=r"K: .*adjacency tests"):
        _ = NewtonPolyhedron(points, "K").facets


def test_compact_faces_have_the_affine_rank_of_their_points() -> None:
    """A compact face's dimension from its points' affine rank equals d − rank of the normals
    of the facets containing it, on every compact face of a few polyhedra."""
    from rlct.algebra.ranks import rank_of
    from rlct.newton.polyhedron import NewtonPolyhedron

    for points in (
        [(2, 0, 0), (0, 2, 0), (0, 0, 2), (1, 1, 1)],
        [(4, 0, 0), (0, 4, 0), (0, 0, 4), (2, 2, 0), (0, 2, 2)],
        [(2, 2, 0, 0), (0, 2, 2, 0), (0, 0, 2, 2), (6, 0, 0, 0), (0, 0, 0, 6)],
    ):
        poly = NewtonPolyhedron(points)
        for face in poly.compact_faces:
            assert face.dim == poly.dim - rank_of([f.normal for f in face.facets])
