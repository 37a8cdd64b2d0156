"""Exact real algebraic numbers for the plane resolution (:mod:`rlct.plane.resolve`).

A field is Q or Q(θ) for one real algebraic number θ, held as a sympy ``AlgebraicField``: an
element is a polynomial in θ with rational coefficients, reduced modulo θ's minimal polynomial, so
every sum, product and zero test is exact. θ is a sympy expression built from ``CRootOf`` (the
i-th real root of an irreducible μ ∈ Q[t], in increasing order) by sums and rational multiples, so
it names one real embedding: the sign of a non-zero element is decided by evaluating it on
rational enclosures of θ that shrink until they exclude 0 (interval arithmetic, no floats).

Real roots of a polynomial φ ∈ K[v] are found by factoring φ over K (sympy, Trager's algorithm):
linear factors give roots in K; a real root of an irreducible factor ψ of degree ≥ 2 is a real
root r of the norm N(ψ) = Res_θ(μ(θ), ψ(θ, v)) ∈ Q[v] with ψ(θ, r) = 0, decided exactly in the
field Q(θ, r) = Q(θ') (a primitive element θ', sympy's ``primitive_element``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
from sympy import QQ

from ..errors import UndecidedError

__all__ = ["RealField", "RealRoot", "rational_field"]

_T = sp.Dummy("t")
_V = sp.Dummy("v")


def _fraction(q: object) -> Fraction:
    r = sp.Rational(q)
    return Fraction(int(r.p), int(r.q))


def _enclosure(expr: sp.Expr, bits: int) -> tuple[Fraction, Fraction]:
    """A rational interval containing the real number ``expr`` (CRootOf, sums, products, powers)."""
    if expr.is_Rational:
        f = _fraction(expr)
        return f, f
    if isinstance(expr, sp.CRootOf):
        dx = sp.Rational(1, 2**bits)
        mid = _fraction(expr.eval_rational(dx=dx, n=bits // 3 + 5))
        return mid - _fraction(dx), mid + _fraction(dx)
    if isinstance(expr, sp.Add):
        lo = hi = Fraction(0)
        for arg in expr.args:
            a, b = _enclosure(arg, bits)
            lo, hi = lo + a, hi + b
        return lo, hi
    if isinstance(expr, sp.Mul):
        lo = hi = Fraction(1)
        for arg in expr.args:
            lo, hi = _times((lo, hi), _enclosure(arg, bits))
        return lo, hi
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer and expr.exp > 0:
        base = _enclosure(expr.base, bits)
        out = (Fraction(1), Fraction(1))
        for _ in range(int(expr.exp)):
            out = _times(out, base)
        return out
    raise UndecidedError(f"cannot enclose {expr}")


def _times(a: tuple[Fraction, Fraction], b: tuple[Fraction, Fraction]) -> tuple[Fraction, Fraction]:
    products = [x * y for x in a for y in b]
    return min(products), max(products)


@dataclass(frozen=True)
class RealField:
    """Q (``generator`` None) or Q(θ) for the real number θ = ``generator``."""

    domain: sp.polys.domains.Domain
    generator: sp.Expr | None = None

    @property
    def degree(self) -> int:
        return 1 if self.generator is None else len(self.domain.mod.to_list()) - 1

    def convert(self, q: object) -> object:
        """A rational number as an element of the field."""
        return self.domain.convert(sp.Rational(q))

    def to_expr(self, a: object) -> sp.Expr:
        """The element as a sympy expression in θ (for display and for leaving the field)."""
        return self.domain.to_sympy(a)

    def key(self, a: object) -> tuple:
        """A hashable exact representation of an element."""
        if self.generator is None:
            return (sp.Rational(self.domain.to_sympy(a)),)
        return tuple(a.to_list())

    def sign(self, a: object) -> int:
        """The sign of an element, exactly: 0 for zero, else ±1 from shrinking enclosures."""
        if not a:
            return 0
        if self.generator is None:
            return 1 if a > 0 else -1
        coeffs = [_fraction(self.domain.dom.to_sympy(c)) for c in a.to_list()]
        for bits in (24, 64, 160, 400, 1000, 2500):
            lo_t, hi_t = _enclosure(self.generator, bits)
            lo = hi = Fraction(0)
            for c in coeffs:  # Horner on intervals
                lo, hi = _times((lo, hi), (lo_t, hi_t))
                lo, hi = lo + c, hi + c
            if lo > 0:
                return 1
            if hi < 0:
                return -1
        raise UndecidedError(f"the sign of {self.to_expr(a)} was not certified")

    def embedding(self, other: RealField) -> object:
        """The image of this field's θ in ``other`` (which must contain it)."""
        if self.generator is None:
            return None
        return other.domain.from_sympy(self.generator)

    def embed(self, a: object, other: RealField, image: object) -> object:
        """Map an element into ``other`` given the image of θ there (Horner)."""
        if self.generator is None:
            return other.domain.convert(self.domain.to_sympy(a))
        out = other.domain.zero
        for c in a.to_list():
            out = out * image + other.domain.convert(self.domain.dom.to_sympy(c))
        return out

    def note_faces(self, faces: list[dict[int, object]]) -> None:
        """Nothing to note: over a number field the roots' pattern is fixed (a field with a
        parameter, :class:`rlct.plane.along_line.GenericField`, records where it changes)."""

    def real_roots(self, coeffs: dict[int, object]) -> dict[RealRoot, int]:
        """The non-zero real roots of φ(v) = Σ coeffs[j]·v^j with their multiplicities."""
        # From the field's elements, not from expressions: θ's CRootOf is itself written in _V.
        terms = {(j,): self.domain.convert(c) for j, c in coeffs.items() if c}
        poly = sp.Poly.from_dict(terms or {(0,): self.domain.zero}, _V, domain=self.domain)
        if poly.degree() <= 0:
            return {}
        out: dict[RealRoot, int] = {}
        for factor, mult in poly.factor_list()[1]:
            monic = factor.monic()
            if monic.degree() == 1:
                root = -monic.rep.to_list()[1]
                if root:
                    out[RealRoot(self, root, ("in", *self.key(root)), None)] = mult
                continue
            for r in self._real_roots_of_irreducible(monic):
                out[r] = mult
        return out

    def _real_roots_of_irreducible(self, psi: sp.Poly) -> list[RealRoot]:
        """Real roots of an irreducible ψ ∈ K[v] of degree ≥ 2, each with the field K(root)."""
        if self.generator is None:
            qpoly = sp.Poly(psi.as_expr(), _V, domain=QQ)
            count = qpoly.count_roots()
            return [_new_root(self, sp.CRootOf(qpoly.as_expr(), i)) for i in range(count)]
        mu = sp.Poly(self.domain.mod.to_list(), _T, domain=QQ)
        coeffs = psi.rep.to_list()[::-1]  # coeffs[k] multiplies v^k
        lifted = sum(
            (
                sp.Poly(c.to_list(), _T, domain=QQ).as_expr() * _V**k
                for k, c in enumerate(coeffs)
                if c
            ),
            start=sp.Integer(0),
        )
        norm = sp.Poly(sp.resultant(mu.as_expr(), lifted, _T), _V, domain=QQ)
        roots = []
        for q, _ in norm.factor_list()[1]:
            for i in range(q.count_roots()):
                r = sp.CRootOf(q.as_expr(), i)
                candidate = _new_root(self, r)
                value = candidate.field.domain.zero
                image = self.embedding(candidate.field)
                for k, c in enumerate(coeffs):
                    value += self.embed(c, candidate.field, image) * candidate.value**k
                if not value:
                    roots.append(candidate)
        return roots


@dataclass(frozen=True)
class RealRoot:
    """A non-zero real root c of a polynomial over ``parent``: ``value`` lies in ``field``, which
    is ``parent`` itself (``field`` None: a root in the field) or parent(c)."""

    parent: RealField
    value: object
    key: tuple
    extension: RealField | None

    @property
    def field(self) -> RealField:
        return self.parent if self.extension is None else self.extension

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RealRoot) and self.key == other.key

    def expr(self) -> sp.Expr:
        """The root as a sympy expression (radicals for quadratics, else CRootOf)."""
        return _pretty(self)


def _pretty(root: RealRoot) -> sp.Expr:
    e = root.field.to_expr(root.value)
    if isinstance(e, sp.CRootOf) and sp.degree(e.poly) == 2:
        return sp.Poly(e.poly).real_roots(radicals=True)[e.index]
    return e


def _new_root(parent: RealField, r: sp.CRootOf) -> RealRoot:
    """The root r of an irreducible factor over ``parent``, in the field parent(r)."""
    if parent.generator is None:
        field = RealField(QQ.algebraic_field(r), r)
    else:
        domain = QQ.algebraic_field(parent.generator, r)
        field = RealField(domain, domain.ext.as_expr())
    return RealRoot(parent, field.domain.from_sympy(r), ("root", r), field)


def rational_field() -> RealField:
    """The field Q."""
    return RealField(QQ, None)
