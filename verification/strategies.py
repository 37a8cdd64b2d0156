"""Public hypothesis strategies that produce verification cases together with their exact answer.

The expected λ and m of a generated polynomial are derived *by construction*, not by calling the
code under test: blocks on disjoint variables combine by

* sum:     λ(K1 + K2) = λ1 + λ2,       m = m1 + m2 − 1;
* product: λ(K1 · K2) = min(λ1, λ2),   m = m1 + m2 if λ1 = λ2, else the m of the smaller,

starting from normal-crossing monomials c·Π w_j^(2k_j) (λ = min (h_j+1)/(2k_j)). Positive even
sums are Newton non-degenerate, so the exact layer must reproduce these values. Degenerate cases
get their answer by construction too: λ and m do not change under a polynomial diffeomorphism
fixing 0 that keeps the prior's form (:func:`diffeomorphic_polynomials`), and the binomial
(x^a − c·y^b)² has λ = min((a+b)/(2ab), 1/2) (:func:`degenerate_polynomials`).

Hypothesis owns the randomness: every strategy that needs a seed draws it, and torch generators
are built from that seed downstream.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from hypothesis import assume
from hypothesis import strategies as st

import rlct
from rlct.quadratic.point import MAX_JACOBIAN_ENTRIES

from ._validate import OPTIONAL_BOOL, checked
from .cases import DLNCase, FactorisedCase, PotentialCase, QuadraticCase, RRRCase
from .factorisations import chain, disguise, widths_of
from .wrong_calls import BadInput, bad_estimator, bad_normal_crossing, bad_polynomial, bad_rrr

__all__ = [
    "BadInput",
    "bad_inputs",
    "degenerate_polynomials",
    "diffeomorphic_polynomials",
    "dln_cases",
    "factorised_networks",
    "newton_polynomials",
    "normal_crossing_cases",
    "quadratic_cases",
    "quadratic_shapes",
    "rrr_cases",
    "seeds",
]

seeds = st.integers(min_value=0, max_value=2**32 - 1)


@dataclass(frozen=True)
class _Block:
    expr: sp.Expr
    variables: tuple[sp.Symbol, ...]
    prior: tuple[sp.Rational, ...]
    lam: sp.Rational
    mult: int


def _nc_value(k: list[int], h: list[sp.Rational]) -> tuple[sp.Rational, int]:
    ratios = [(hj + 1) / (2 * kj) for kj, hj in zip(k, h) if kj > 0]
    lam = min(ratios)
    return lam, ratios.count(lam)


@checked(max_dim=(1, 32), max_k=1, priors=bool)
@st.composite
def normal_crossing_cases(draw, max_dim: int = 4, max_k: int = 3, priors: bool = True):
    """K = Π w_j^(2k_j) with prior exponents h_j ∈ {0, 1/2, 1, 2} (or 0)."""
    d = draw(st.integers(1, max_dim))
    k = draw(st.lists(st.integers(0, max_k), min_size=d, max_size=d).filter(any))
    hs = st.sampled_from([0, sp.Rational(1, 2), 1, 2]) if priors else st.just(0)
    h = [sp.Rational(x) for x in draw(st.lists(hs, min_size=d, max_size=d))]
    w = sp.symbols(f"w0:{d}", real=True)
    lam, mult = _nc_value(k, h)
    K = sp.Mul(*(wi ** (2 * ki) for wi, ki in zip(w, k)))
    return PotentialCase(f"nc(k={k},h={[str(x) for x in h]})", K, tuple(w), tuple(h), lam, mult)


def _leaf(draw, start: int, max_k: int, max_dim: int) -> _Block:
    d = draw(st.integers(1, min(2, max_dim - start)))
    k = draw(st.lists(st.integers(0, max_k), min_size=d, max_size=d).filter(any))
    w = sp.symbols(f"w{start}:{start + d}", real=True)
    c = draw(st.integers(1, 3))
    h = [sp.Integer(0)] * d
    lam, mult = _nc_value(k, h)
    return _Block(
        c * sp.Mul(*(wi ** (2 * ki) for wi, ki in zip(w, k))), tuple(w), tuple(h), lam, mult
    )


def _combine(draw, start: int, depth: int, max_k: int, max_dim: int) -> _Block:
    """A block on w_start, …, w_(max_dim−1) at most: a leaf, or two blocks on disjoint variables
    summed or multiplied; built within the room left, never rejected (rejections failed
    hypothesis's filter health check now and then)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return _leaf(draw, start, max_k, max_dim)
    a = _combine(draw, start, depth - 1, max_k, max_dim)
    if start + len(a.variables) >= max_dim:
        return a  # no variable left for a second block
    b = _combine(draw, start + len(a.variables), depth - 1, max_k, max_dim)
    variables, prior = a.variables + b.variables, a.prior + b.prior
    if draw(st.booleans()):
        return _Block(a.expr + b.expr, variables, prior, a.lam + b.lam, a.mult + b.mult - 1)
    if a.lam == b.lam:
        lam, mult = a.lam, a.mult + b.mult
    else:
        lam, mult = min((a.lam, a.mult), (b.lam, b.mult))
    return _Block(sp.expand(a.expr * b.expr), variables, prior, lam, mult)


@checked(depth=(0, 16), max_k=1, max_dim=(1, 16))
@st.composite
def newton_polynomials(draw, depth: int = 2, max_k: int = 2, max_dim: int = 5):
    """Non-degenerate K built from monomials by sums and products on disjoint variables.

    ``max_dim`` bounds the number of variables: exact facet enumeration grows combinatorially.
    """
    b = _combine(draw, 0, depth, max_k, max_dim)
    return PotentialCase(f"newton({b.expr})", b.expr, b.variables, b.prior, b.lam, b.mult)


def _binomial_value(a: int, b: int) -> tuple[sp.Rational, int]:
    """λ, m of (x^a − c·y^b)² (c > 0): the edge of normal (b, a)/g gives (a+b)/(2ab); the branches
    x^a = c·y^b are smooth, real and cross the exceptional curve transversally, giving 1/2; m = 2
    exactly when both attain (a = b = 2)."""
    edge = sp.Rational(a + b, 2 * a * b)
    return min(edge, sp.Rational(1, 2)), 2 if edge == sp.Rational(1, 2) else 1


@checked()
@st.composite
def degenerate_polynomials(draw):
    """K = (x^a − c·y^b)² · Π z_j^(2k_j): the face polynomial vanishes on the torus, so the Newton
    step alone gives only the bound ``newton_upper``; λ and m follow from the binomial's value
    and the product rule over the disjoint z_j."""
    a, b = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    c = sp.Rational(draw(st.integers(1, 4)), draw(st.integers(1, 3)))
    extra = draw(st.lists(st.integers(0, 2), max_size=2))
    x, y = sp.symbols("x y", real=True)
    zs = sp.symbols(f"z0:{len(extra)}", real=True)
    K = sp.expand((x**a - c * y**b) ** 2 * sp.Mul(*(z ** (2 * k) for z, k in zip(zs, extra))))
    # Newton value of the (x, y) factor: the edge from (2a, 0) to (0, 2b) meets the diagonal at
    # t = 2ab/(a+b); a z-factor k_j > 0 caps 1/t at 1/(2k_j) (product rule for upper bounds).
    upper = sp.Rational(a + b, 2 * a * b)
    lam, mult = _binomial_value(a, b)
    values = [(lam, mult)] + [(sp.Rational(1, 2 * k), 1) for k in extra if k]
    for k in extra:
        if k:
            upper = min(upper, sp.Rational(1, 2 * k))
    lam = min(v for v, _ in values)
    mult = sum(m for v, m in values if v == lam)
    zero = (sp.Integer(0),) * (2 + len(zs))
    return PotentialCase(f"degenerate({K})", K, (x, y, *zs), zero, lam, mult, True, upper)


def _triangular(draw, w: tuple[sp.Symbol, ...], k: int, degree: int) -> dict[sp.Symbol, sp.Expr]:
    """w_k ↦ w_k + r(w_{−k}), r a sum of one or two monomials of degree 1..``degree``."""
    others = [v for j, v in enumerate(w) if j != k]
    r = sp.Integer(0)
    for _ in range(draw(st.integers(1, 2))):
        exps = draw(st.lists(st.integers(0, degree), min_size=len(others), max_size=len(others)))
        total = sum(exps)
        if total == 0 or total > degree:
            exps = [0] * len(others)
            exps[draw(st.integers(0, len(others) - 1))] = 1
        c = draw(st.sampled_from([-3, -2, -1, 1, 2, 3, sp.Rational(1, 2), sp.Rational(-1, 2)]))
        r += c * sp.Mul(*(v**e for v, e in zip(others, exps)))
    return {w[k]: w[k] + r}


def _linear(draw, w: tuple[sp.Symbol, ...]) -> dict[sp.Symbol, sp.Expr]:
    """w ↦ A·w for an integer matrix A with det A ≠ 0."""
    d = len(w)
    entries = st.integers(-2, 2)
    A = sp.Matrix(d, d, lambda i, j: draw(entries))
    assume(A.det() != 0)
    return {w[i]: sum(A[i, j] * w[j] for j in range(d)) for i in range(d)}


@checked(dim=(2, 6), max_degree=(2, 24), max_k=1, priors=bool)
@st.composite
def diffeomorphic_polynomials(
    draw, dim: int = 2, max_degree: int = 12, max_k: int = 2, priors: bool = True
):
    """K = K₀∘Φ with (λ, m) known by construction, written in other coordinates than K₀'s.

    The change of coordinates usually leaves K degenerate in its own coordinates, not always: in
    100 draws at dim = 2 a third were Newton non-degenerate as written ((x + 5y)⁴ + y², say),
    where the Newton step alone is exact.

    K₀ is a sum of normal-crossing monomials on a partition of the variables (λ = Σ of the blocks'
    min (h_j+1)/(2k_j), m = Σ m_b − (#blocks − 1)); Φ composes one to three maps fixing 0 that keep
    the prior's form: triangular w_k ↦ w_k + r(w_{−k}) for a k with h_k = 0 (Jacobian 1), and
    invertible integer linear maps when the prior is flat. λ and m are those of K₀; total degree
    ≤ ``max_degree`` (the maps' degrees are drawn within that budget).
    """
    w = sp.symbols("x y") if dim == 2 else sp.symbols(f"w0:{dim}")
    w = tuple(sp.Symbol(str(v), real=True) for v in w)
    hs = st.sampled_from([0, 0, 0, sp.Rational(1, 2), 1]) if priors else st.just(0)
    h = [sp.Rational(draw(hs)) for _ in range(dim)]
    labels = draw(st.lists(st.integers(0, dim - 1), min_size=dim, max_size=dim))
    blocks = [[j for j in range(dim) if labels[j] == b] for b in sorted(set(labels))]
    K0, lam, mult, degree = sp.Integer(0), sp.Integer(0), 1, 0
    for block in blocks:
        k = draw(st.lists(st.integers(0, max_k), min_size=len(block), max_size=len(block)))
        if not any(k):
            k[0] = 1
        c = draw(st.integers(1, 3))
        K0 += c * sp.Mul(*(w[j] ** (2 * kj) for j, kj in zip(block, k)))
        bl, bm = _nc_value(k, [h[j] for j in block])
        lam, mult = lam + bl, mult + bm - 1
        degree = max(degree, 2 * sum(k))
    assume(degree <= max_degree)  # the maps never lower the degree: rejected before expanding
    K, maps = K0, []
    for _ in range(draw(st.integers(1, 3))):
        room = max_degree // degree
        flat = [j for j in range(dim) if h[j] == 0]
        if all(x == 0 for x in h) and draw(st.booleans()):
            step = _linear(draw, w)
        elif flat:
            d_map = draw(st.integers(1, min(3, room))) if room >= 1 else 1
            step = _triangular(draw, w, draw(st.sampled_from(flat)), d_map)
            degree *= d_map
        else:
            break
        K = K.subs(step, simultaneous=True)
        maps.append(step)
    K = sp.expand(K)
    assume(K != K0 and sp.Poly(K, *w).total_degree() <= max_degree)
    name = f"diffeo(K₀ = {K0}, Φ = {[{str(a): str(b) for a, b in m.items()} for m in maps]})"
    return PotentialCase(name, K, w, tuple(h), lam, mult, False)


@checked(max_size=1)
@st.composite
def rrr_cases(draw, max_size: int = 6):
    """Reduced rank regression shapes with a valid true rank r ≤ min(M, N, H)."""
    M, N, H = (draw(st.integers(1, max_size)) for _ in range(3))
    r = draw(st.integers(0, min(M, N, H)))
    return RRRCase(M, N, H, r)


@checked(max_layers=1, max_width=1)
@st.composite
def dln_cases(draw, max_layers: int = 4, max_width: int = 6):
    """Deep linear network widths (input → output) and a valid true rank."""
    widths = tuple(draw(st.lists(st.integers(1, max_width), min_size=2, max_size=max_layers + 1)))
    r = draw(st.integers(0, min(widths)))
    return DLNCase(widths, r)


@checked(max_layers=(2, 6), max_width=(1, 12))
@st.composite
def factorised_networks(draw, max_layers: int = 3, max_width: int = 3):
    """(case, exact): a linear network at a factorisation (W_1, …, W_L) of its true map, not only
    the origin, with its local λ from the closed form (``FactorisedCase.exact``; draws where it
    gives only bounds are rejected). The point is a sum of intervals of the chain
    (:mod:`verification.factorisations`: W* of rank #[0, L], a dead unit [k, k], a layer of lower
    rank where intervals end), drawn with every width in 1..``max_width``, then moved by
    unimodular integer changes of basis: integer layers, exact products, K(w*) = 0 exactly."""
    L = draw(st.integers(2, max_layers))
    pairs = [(a, b) for a in range(L + 1) for b in range(a, L + 1)]
    intervals: list[tuple[int, int]] = []
    for iv in draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=3 * max_width)):
        if max(widths_of([*intervals, iv], L)) <= max_width:
            intervals.append(iv)
    intervals += [(k, k) for k, h in enumerate(widths_of(intervals, L)) if h == 0]
    seed = draw(st.integers(0, 2**16))
    case = FactorisedCase(disguise(chain(intervals, L), seed))
    exact = case.exact()
    assume(exact.exact)
    return case, exact


@checked(estimator=bool)
@st.composite
def bad_inputs(draw, estimator: bool = True):
    """Invalid inputs for the exact layer and the estimator, each with the documented error it
    must raise (``estimator=False`` keeps to :mod:`rlct`, which does not need torch)."""
    makers = [bad_normal_crossing, bad_rrr, bad_polynomial]
    if estimator:
        makers.append(bad_estimator)
    return draw(st.sampled_from(makers))(draw)


@checked(max_d=(1, 32), max_p=(1, 32), max_K=(1, 32))
@st.composite
def quadratic_shapes(draw, max_d: int = 4, max_p: int = 3, max_K: int = 6):
    """(d, p, K) for a two-layer quadratic network."""
    return draw(st.integers(1, max_d)), draw(st.integers(1, max_p)), draw(st.integers(1, max_K))


_SPECIAL = ("inactive unit", "zero feature", "parallel features")


def _largest_width(d: int, p: int) -> int:
    """The largest K whose exact Jacobian fits ``MAX_JACOBIAN_ENTRIES`` with any of the case's
    inputs (none: p·d(d + 1)/2 rows; n = d + 3 random samples; modular addition's (d/2)²), at
    least 1 (every d, p ≤ 32 fits at K = 1)."""
    rows = p * max(d * (d + 1) // 2, d + 3, (d // 2) ** 2)
    return max(1, MAX_JACOBIAN_ENTRIES // (rows * (d + p)))


@checked(max_d=(1, 32), max_p=(1, 32), max_K=(1, 32), data=OPTIONAL_BOOL)
@st.composite
def quadratic_cases(draw, max_d: int = 4, max_p: int = 3, max_K: int = 6, data: bool | None = None):
    """A quadratic network at a generic integer point or at a special point where the rank can
    drop, with random integer inputs (n = d + 3), modular-addition inputs, or no data. K is
    drawn up to ``max_K`` and at most the width whose exact Jacobian rlct builds
    (``rlct.quadratic.point.MAX_JACOBIAN_ENTRIES``): every case can be computed."""
    d, p = draw(st.integers(1, max_d)), draw(st.integers(1, max_p))
    K = draw(st.integers(1, min(max_K, _largest_width(d, p))))
    ints = st.integers(-5, 5).filter(bool)
    W = [[draw(ints) for _ in range(K)] for _ in range(d)]
    V = [[draw(ints) for _ in range(K)] for _ in range(p)]
    kinds = ("generic", *_SPECIAL) if K >= 2 else ("generic", "inactive unit", "zero feature")
    kind = draw(st.sampled_from(kinds))
    if kind == "inactive unit":
        for row in V:
            row[0] = 0
    elif kind == "zero feature":
        for row in W:
            row[0] = 0
    elif kind == "parallel features":
        for row in W:
            row[1] = 2 * row[0]
    use_data = draw(st.booleans()) if data is None else data
    X, label = None, "none"
    if use_data:
        if d % 2 == 0 and d >= 4 and draw(st.booleans()):
            X = tuple(map(tuple, rlct.modular_addition_data(d // 2)[0].astype(int).tolist()))
            label = f"modular addition q={d // 2}"
        else:
            X = tuple(tuple(draw(st.integers(-3, 3)) for _ in range(d)) for _ in range(d + 3))
            label = f"random X n={d + 3}"
    return QuadraticCase(tuple(map(tuple, W)), tuple(map(tuple, V)), X, kind, label)
