"""Exact Newton polyhedra P = conv(A) + R^d_{≥0} of a finite exponent set A ⊂ Z^d_{≥0}.

All arithmetic is in ``fractions.Fraction``. A facet is a half-space ⟨w, x⟩ ≥ c with w ≥ 0 a
primitive integer vector (the recession cone R^d_{≥0} forces w ≥ 0). A face is the set of points of
P on which a family of facets is tight; it is *compact* exactly when no unit direction e_j lies in
its recession cone, i.e. when every coordinate j has w_j > 0 for some tight facet.

The τ-distance of P is t = min{s : s·τ ∈ P} = max over facets of c / ⟨w, τ⟩, and the smallest face
containing t·τ is cut out by the facets tight there; its codimension is the rank of their normals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from math import gcd
from numbers import Integral

from .._validate import exact_rational, items
from ..algebra.ranks import rank_of
from ..errors import InvalidExponentError, InvalidPriorError, TooLargeError
from ..time_limit import check as check_time

__all__ = ["Face", "Facet", "NewtonPolyhedron"]

Vector = tuple[int, ...]

MAX_FACETS = 10_000
"""The most facets (rays of the double description) built before the polyhedron is refused."""

MAX_FACES = 16_384
"""The most faces (compact or not) enumerated by :attr:`NewtonPolyhedron.faces`."""

MAX_COMPACT_FACES = 1024
"""The most compact faces enumerated; each costs a non-degeneracy check (for Σ x_j² in d
variables there are 2^d − 1: d = 10 takes about 11 s, d = 11 is refused)."""

MAX_DD_WORK = 5_000_000
"""The most rays scanned by the double description's adjacency tests (each a subset test of two
sets of tight constraints) before the polyhedron is refused, so that the work, not only the
facets found, is bounded (about 2–3 s): K = Σ (w_i w_{i+1})² has 840 facets in 24 variables
(1.1·10⁶ scans, 0.5 s), 4,440 in 30 (3.0·10⁷, 16 s) and 7,771 in 32 (9.1·10⁷, 48 s); in 36
variables the construction ran a minute before reaching ``MAX_FACETS``."""


def _exponent_vectors(exponents: object) -> list[Vector]:
    rows = items(exponents, "exponents", InvalidExponentError, "exponent vectors")
    out = []
    for i, row in enumerate(rows):
        entries = items(row, f"exponent vector {i}", InvalidExponentError, "integers")
        for j, a in enumerate(entries):
            if isinstance(a, bool) or not isinstance(a, Integral):
                raise InvalidExponentError(
                    f"exponent vector {i} has entry {j} = {a!r}, which is not an integer"
                )
        out.append(tuple(int(a) for a in entries))
    return out


@dataclass(frozen=True)
class Facet:
    """The supporting half-space ⟨normal, x⟩ ≥ offset of a facet (normal ≥ 0, primitive)."""

    normal: Vector
    offset: int

    def value(self, x: Sequence[Fraction | int]) -> Fraction | int:
        return sum(a * b for a, b in zip(self.normal, x))

    def contains(self, x: Sequence[Fraction | int]) -> bool:
        """Whether x lies on the facet's hyperplane."""
        return self.value(x) == self.offset


@dataclass(frozen=True)
class Face:
    """A face of P: the exponents of A on it, the facets tight on it, and its recession directions."""

    points: tuple[Vector, ...]
    facets: tuple[Facet, ...]
    directions: tuple[int, ...]
    dim: int

    @property
    def compact(self) -> bool:
        return not self.directions


def _double_description(points: Sequence[Vector], d: int, name: str) -> tuple[Facet, ...]:
    """Facets of conv(points) + R^d_{≥0}; see :attr:`NewtonPolyhedron.facets`."""

    # A ray is (w_0..w_{d−1}, c); constraint j < d is w_j ≥ 0, constraint d + i is ⟨w, a_i⟩ ≥ c.
    def value(k: int, ray: tuple[int, ...]) -> int:
        if k < d:
            return ray[k]
        a = points[k - d]
        return sum(x * y for x, y in zip(ray, a)) - ray[d]

    def normalise(ray: list[int]) -> tuple[int, ...]:
        g = 0
        for x in ray:
            g = gcd(g, x)
        return tuple(x // g for x in ray) if g > 1 else tuple(ray)

    first = points[0]
    rays = [(*tuple(int(i == j) for i in range(d)), first[j]) for j in range(d)]
    rays.append((0,) * d + (-1,))
    done = [*range(d), d]  # constraints processed so far
    work = 0  # rays scanned by the adjacency test, bounded by MAX_DD_WORK
    zeros = {r: frozenset(k for k in done if value(k, r) == 0) for r in rays}
    for i in range(1, len(points)):
        check_time()
        k = d + i
        vals = {r: value(k, r) for r in rays}
        plus = [r for r in rays if vals[r] > 0]
        minus = [r for r in rays if vals[r] < 0]
        keep = [r for r in rays if vals[r] >= 0]
        done.append(k)
        new = []
        for rp in plus:
            for rm in minus:
                common = zeros[rp] & zeros[rm]
                if len(common) < d - 1:
                    continue  # adjacent rays share d − 1 tight constraints in dimension d + 1
                work += len(rays)
                if work > MAX_DD_WORK:
                    raise TooLargeError(
                        f"{name}: the Newton polyhedron ({len(points)} points in {d} variables) "
                        f"has too many facets to build: {len(rays):,} rays after {i} of the "
                        f"points, more than {MAX_DD_WORK:,} adjacency tests"
                    )
                if any(r not in (rp, rm) and common <= zeros[r] for r in rays):
                    continue
                ray = normalise([vals[rp] * b - vals[rm] * a for a, b in zip(rp, rm)])
                new.append(ray)
        for r in keep:
            if vals[r] == 0:
                zeros[r] = zeros[r] | {k}
        for r in new:
            zeros[r] = frozenset(j for j in done if value(j, r) == 0)
        rays = list(dict.fromkeys(keep + new))
        if len(rays) > MAX_FACETS:
            raise TooLargeError(
                f"{name}: the Newton polyhedron ({len(points)} points in {d} variables) would have "
                f"more than {MAX_FACETS:,} facets"
            )
    facets = {Facet(r[:d], r[d]) for r in rays if any(r[:d])}
    return tuple(sorted(facets, key=lambda f: (f.normal, f.offset)))


class NewtonPolyhedron:
    """P = conv(A) + R^d_{≥0} for exponent vectors A (non-negative integers, not containing 0)."""

    def __init__(self, exponents: Iterable[Sequence[int]], name: str = "the exponents") -> None:
        """``name`` says whose polyhedron this is in error messages (e.g. "K")."""
        pts = sorted(set(_exponent_vectors(exponents)))
        if not pts:
            raise InvalidExponentError("a Newton polyhedron needs at least one exponent vector")
        d = len(pts[0])
        if any(len(p) != d for p in pts) or d == 0:
            raise InvalidExponentError("exponent vectors must all have the same positive length")
        if any(a < 0 for p in pts for a in p):
            raise InvalidExponentError("exponents must be non-negative")
        if (0,) * d in pts:
            raise InvalidExponentError(
                "the exponent vector 0 (a constant term) is not allowed: the origin must be a zero"
            )
        self.points: tuple[Vector, ...] = tuple(pts)
        self.dim = d
        self.name = name

    @cached_property
    def minimal_points(self) -> tuple[Vector, ...]:
        """Points of A not dominated componentwise by another point (P is generated by these)."""
        pts = self.points
        out = []
        for p in pts:
            check_time()
            if not any(q != p and all(a <= b for a, b in zip(q, p)) for q in pts):
                out.append(p)
        return tuple(out)

    @cached_property
    def facets(self) -> tuple[Facet, ...]:
        """All facets, as the extreme rays of the cone of valid inequalities (double description).

        A facet ⟨w, x⟩ ≥ c of P is an extreme ray (w, c) ≠ (0, −1) of the pointed cone
        C = {(w, c) : w ≥ 0, ⟨w, a⟩ − c ≥ 0 for a ∈ A}. C is built one point at a time by the
        double description method (Motzkin et al.), in exact integer arithmetic with the
        combinatorial adjacency test.
        """
        return _double_description(self.minimal_points, self.dim, self.name)

    @cached_property
    def _incidence(self) -> tuple[dict[Vector, int], tuple[int, ...]]:
        """Bit masks over facets: the facets containing each point, and those with w_j = 0."""
        facets = self.facets
        point_mask = {
            p: sum(1 << i for i, f in enumerate(facets) if f.contains(p)) for p in self.points
        }
        dir_mask = tuple(
            sum(1 << i for i, f in enumerate(facets) if f.normal[j] == 0) for j in range(self.dim)
        )
        return point_mask, dir_mask

    def _closure(self, tight: int) -> tuple[tuple[Vector, ...], tuple[int, ...], int]:
        """The points and recession directions on the facets of the bit mask ``tight``, and the
        mask of every facet that contains them all (the face's identity): bit operations only."""
        point_mask, dir_mask = self._incidence
        pts = tuple(p for p in self.points if point_mask[p] & tight == tight)
        dirs = tuple(j for j in range(self.dim) if dir_mask[j] & tight == tight)
        closed = -1
        for p in pts:
            closed &= point_mask[p]
        for j in dirs:
            closed &= dir_mask[j]
        return pts, dirs, closed & ((1 << len(self.facets)) - 1)

    def _face_from_mask(self, tight: int) -> Face:
        """The face cut out by the facets in the bit mask ``tight`` (closed under containment)."""
        pts, dirs, closed = self._closure(tight)
        facets = tuple(f for i, f in enumerate(self.facets) if closed >> i & 1)
        if not dirs and pts:  # compact: the convex hull of its points, of their affine rank
            dim = rank_of([[a - b for a, b in zip(p, pts[0])] for p in pts[1:]]) if pts[1:] else 0
        else:  # d less the rank of the facets' normals (hundreds of rows, few of them needed)
            dim = self.dim - rank_of([f.normal for f in facets]) if facets else self.dim
        return Face(pts, facets, dirs, dim)

    def _face_from_facets(self, tight: Iterable[Facet]) -> Face:
        index = {f: i for i, f in enumerate(self.facets)}
        return self._face_from_mask(sum(1 << index[f] for f in set(tight)))

    @cached_property
    def faces(self) -> tuple[Face, ...]:
        """All proper non-empty faces, each once (intersections of facets)."""
        seen: dict[tuple[Facet, ...], Face] = {}
        tried: set[frozenset[Facet]] = set()
        frontier = [self._face_from_facets([f]) for f in self.facets]
        while frontier:
            nxt = []
            for face in frontier:
                if face.facets in seen or not face.points:
                    continue
                seen[face.facets] = face
                if len(seen) > MAX_FACES:
                    raise TooLargeError(
                        f"{self.name}: the Newton polyhedron has more than {MAX_FACES:,} faces"
                    )
                for f in self.facets:
                    key = frozenset((*face.facets, f))
                    if f not in face.facets and key not in tried:
                        tried.add(key)
                        nxt.append(self._face_from_facets(key))
            frontier = nxt
        return tuple(sorted(seen.values(), key=lambda f: (f.dim, f.points)))

    def _face_containing(self, pts: Iterable[Vector]) -> Face:
        """The smallest face containing the given points of P."""
        point_mask, _ = self._incidence
        tight = -1
        for p in pts:
            tight &= point_mask[p]
        return self._face_from_mask(tight & ((1 << len(self.facets)) - 1))

    @cached_property
    def vertices(self) -> tuple[Vector, ...]:
        return tuple(p for p in self.minimal_points if self._face_containing([p]).dim == 0)

    @cached_property
    def compact_faces(self) -> tuple[Face, ...]:
        """All compact faces, grown upward from the vertices.

        A compact face G of dimension k+1 is the smallest face containing one of its compact facets
        F and a vertex of G outside F, so joining compact faces with vertices reaches every compact
        face; a join that is not compact has no compact face above it and is not grown further.
        """
        point_mask, _ = self._incidence
        level: dict[int, Face] = {}
        for v in self.vertices:
            closed = self._closure(point_mask[v])[2]
            level[closed] = self._face_from_mask(closed)
        found = dict(level)
        while level:
            nxt: dict[int, Face] = {}
            for mask, face in level.items():
                for v in self.vertices:
                    if v in face.points:
                        continue
                    check_time()
                    _, dirs, closed = self._closure(mask & point_mask[v])
                    if dirs or closed in found or closed in nxt:
                        continue  # not compact, or met before: no rank to compute
                    nxt[closed] = self._face_from_mask(closed)
                    if len(found) + len(nxt) > MAX_COMPACT_FACES:
                        raise TooLargeError(
                            f"{self.name}: the Newton polyhedron has more than "
                            f"{MAX_COMPACT_FACES:,} compact faces ({len(self.vertices)} "
                            f"vertices in {self.dim} variables), each needing a "
                            "non-degeneracy check"
                        )
            found.update(nxt)
            level = nxt
        return tuple(sorted(found.values(), key=lambda f: (f.dim, f.points)))

    def _tau(self, tau: Sequence[Fraction | int]) -> list[Fraction]:
        """τ as exact positive Fractions of length d (τ_j = h_j + 1 > 0)."""
        entries = items(tau, "tau", InvalidPriorError, "positive rationals")
        if len(entries) != self.dim:
            raise InvalidPriorError(
                f"tau has length {len(entries)} but the polyhedron has dimension {self.dim}"
            )
        out = []
        for j, t in enumerate(entries):
            r = exact_rational(t, f"tau[{j}]", InvalidPriorError)
            if r <= 0:
                raise InvalidPriorError(f"tau[{j}] = {r} must be > 0 (τ_j = h_j + 1)")
            out.append(Fraction(int(r.p), int(r.q)))
        return out

    def distance(self, tau: Sequence[Fraction | int]) -> Fraction:
        """The τ-distance t = min{s > 0 : s·τ ∈ P} (τ > 0)."""
        tau = self._tau(tau)
        return max(Fraction(f.offset) / f.value(tau) for f in self.facets)

    def face_at_distance(self, tau: Sequence[Fraction | int]) -> Face:
        """The smallest face of P containing t·τ."""
        t = self.distance(tau)
        point = [t * x for x in self._tau(tau)]
        return self._face_from_facets(f for f in self.facets if f.value(point) == f.offset)

    def __repr__(self) -> str:
        return f"NewtonPolyhedron(vertices={list(self.vertices)})"
