"""The closed forms of Cullen et al. (2026) for quadratic networks, with their hypotheses checked.

Each ``theorem_*`` function takes a point (and data, where the theorem is about data), checks the
theorem's hypotheses *at that point* in exact arithmetic, and returns a :class:`TheoremValue`:
the value (or bounds) the paper claims for λ and every hypothesis as a :class:`Condition`. The
claim is reported as the paper states it, whether or not it is right; :func:`check_theorems`
compares it with the exact λ of :func:`rlct.quadratic.llc`.

Conventions follow :mod:`rlct.quadratic` (f = V σ(Wᵀx), Q_k = Σ_j v_kj w_j w_jᵀ, m = d(d+1)/2).
With data, the paper's theorems (stated for the population loss under "the standard SLT
assumptions") implicitly need the data to see every tangent direction of the identifiable
coordinates; we add that as an explicit hypothesis: rank J_X(θ*) = rank J_Φ(θ*).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from .errors import InvalidShapeError
from .jacobian import rational_rank
from .quadratic import (
    Point,
    _dim,
    _int_rank,
    feature_rank,
    llc,
    modular_addition_data,
    parse_point,
)
from .result import RLCT, Condition

__all__ = [
    "TheoremCheck",
    "TheoremValue",
    "check_theorems",
    "corollary_5_3",
    "theorem_4_1",
    "theorem_4_2",
    "theorem_5_1",
    "theorem_5_2",
    "theorem_5_5",
    "theorem_G_1",
    "theorem_G_2",
    "theorem_G_5",
    "theorem_G_6",
]


@dataclass(frozen=True)
class TheoremValue:
    """What a theorem claims at a point.

    Attributes:
        theorem: its name in the paper, e.g. "Theorem 4.2".
        claim: the formula, e.g. "λ = K(d+p−1)/2".
        kind: "value" (λ = lower = upper) or "bounds" (lower ≤ λ ≤ upper).
        lower, upper: the claimed value, or the claimed bounds.
        hypotheses: each hypothesis evaluated exactly at the point (True / False / None).
        notes: remarks on how the theorem was read.
    """

    theorem: str
    claim: str
    kind: str
    lower: sp.Rational
    upper: sp.Rational
    hypotheses: tuple[Condition, ...]
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("value", "bounds"):
            raise ValueError(f"kind must be 'value' or 'bounds', got {self.kind!r}")
        object.__setattr__(self, "lower", sp.Rational(self.lower))
        object.__setattr__(self, "upper", sp.Rational(self.upper))
        if self.kind == "value" and self.lower != self.upper:
            raise ValueError("a 'value' claim needs lower == upper")

    @property
    def lam(self) -> sp.Rational | None:
        """The claimed λ for a 'value' claim, else None."""
        return self.lower if self.kind == "value" else None

    @property
    def hypotheses_hold(self) -> bool | None:
        """True if every hypothesis holds, False if one fails, None if one is undecided."""
        statuses = [c.status for c in self.hypotheses]
        if any(s is False for s in statuses):
            return False
        return True if all(s is True for s in statuses) else None

    def __str__(self) -> str:
        span = f"λ = {self.lower}" if self.kind == "value" else f"{self.lower} ≤ λ ≤ {self.upper}"
        lines = [f"{self.theorem}: {self.claim} → {span}"]
        lines += [f"  {c}" for c in self.hypotheses]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


@dataclass(frozen=True)
class TheoremCheck:
    """One theorem against the exact λ at one point.

    ``agree`` is True when the exact λ is known and satisfies the claim, False when the claim is
    incompatible with what is proven (exact λ, or the bounds when λ is not exact), None when the
    exact side only gives bounds that contain the claim.
    """

    theorem: str
    d: int
    p: int
    K: int
    data: str
    point: str
    kind: str
    formula_lower: sp.Rational
    formula_upper: sp.Rational
    exact_lam: sp.Rational | None
    exact_lower: sp.Rational
    exact_upper: sp.Rational
    hypotheses_hold: bool | None
    agree: bool | None

    @property
    def formula_lam(self) -> sp.Rational | None:
        return self.formula_lower if self.kind == "value" else None


# --------------------------------------------------------------------------------------------
# Exact helpers
# --------------------------------------------------------------------------------------------


def _m(d: int) -> int:
    return d * (d + 1) // 2


def _rank_one_span(W: np.ndarray) -> int:
    """rank of {w_j w_jᵀ} in Sym(d) (upper-triangular coordinates)."""
    ia, ib = np.triu_indices(W.shape[0])
    return rational_rank((W[ia, :] * W[ib, :]).T)


def _perp_basis(w: np.ndarray) -> list[np.ndarray]:
    """A rational basis of w^⊥ (w ≠ 0): w_a e_c − w_c e_a for c ≠ a, a the first nonzero index."""
    d = len(w)
    a = next(i for i in range(d) if w[i] != 0)
    out = []
    for c in range(d):
        if c != a:
            u = np.zeros(d, dtype=object)
            u[c] = w[a]
            u[a] = u[a] - w[c]
            out.append(u)
    return out


def _orthogonal_injective(W: np.ndarray, V: np.ndarray) -> bool:
    """Hypothesis (3) of Theorems 4.2 / G.6: (u_j ⊥ w_j)_j ↦ (Σ_j v_kj(u_j w_jᵀ + w_j u_jᵀ))_k is
    injective. False if some w_j = 0 (then any u_j ≠ 0 is in the kernel)."""
    d, K = W.shape
    if any(all(x == 0 for x in W[:, j]) for j in range(K)):
        return False
    if d == 1:
        return True  # every w_j^⊥ is {0}
    ia, ib = np.triu_indices(d)
    cols = []
    for j in range(K):
        w = W[:, j]
        for u in _perp_basis(w):
            S = np.outer(u, w) + np.outer(w, u)
            cols.append(np.concatenate([V[k, j] * S[ia, ib] for k in range(V.shape[0])]))
    return rational_rank(np.array(cols, dtype=object)) == len(cols)


def _data_conditions(pt: Point) -> list[Condition]:
    if pt.X is None:
        return []
    free = Point(pt.W, pt.V, None, pt.b, False)
    rx, rf = _int_rank(pt), _int_rank(free)
    return [
        Condition(
            f"(implicit) the data see every tangent direction: rank J_X(θ*) = {rx} equals rank "
            f"J_Φ(θ*) = {rf} (the paper states its theorems for the population loss)",
            rx == rf,
        )
    ]


def _units_ok(W: np.ndarray, V: np.ndarray) -> bool:
    return all(
        any(x != 0 for x in W[:, j]) and any(x != 0 for x in V[:, j]) for j in range(W.shape[1])
    )


# --------------------------------------------------------------------------------------------
# Theorems 4.1 / G.5 and 4.2 / G.6 (no biases, p outputs)
# --------------------------------------------------------------------------------------------


def _overparam(name: str, pt: Point) -> TheoremValue:
    p, K, m = pt.p, pt.K, _m(pt.d)
    r1 = _rank_one_span(pt.W)
    hyps = [
        Condition(f"K ≥ d(d+1)/2 (K = {K}, d(d+1)/2 = {m})", K >= m),
        Condition(
            f"some d(d+1)/2 of the w_j w_jᵀ span Sym(d) (they span a space of dimension {r1} of {m})",
            r1 == m,
        ),
        *_data_conditions(pt),
    ]
    return TheoremValue(
        name, "λ = p·d(d+1)/4", "value", sp.Rational(p * m, 2), sp.Rational(p * m, 2), tuple(hyps)
    )


def _underparam_conditions(W: np.ndarray, V: np.ndarray, label: str = "") -> list[Condition]:
    d, K = W.shape
    m = _m(d)
    r1 = _rank_one_span(W)
    return [
        Condition(f"{label}K < d(d+1)/2 (K = {K}, d(d+1)/2 = {m})", K < m),
        Condition(f"{label}(1) w_j ≠ 0 and v_:j ≠ 0 for every unit j", _units_ok(W, V)),
        Condition(
            f"{label}(2) the w_j w_jᵀ are linearly independent in Sym(d) (rank {r1} of K = {K})",
            r1 == K,
        ),
        Condition(
            f"{label}(3) u_j ⊥ w_j with Σ_j v_kj(u_j w_jᵀ + w_j u_jᵀ) = 0 for all k forces u = 0",
            _orthogonal_injective(W, V),
        ),
    ]


def _underparam(name: str, pt: Point) -> TheoremValue:
    d, p, K = pt.d, pt.p, pt.K
    hyps = [*_underparam_conditions(pt.W, pt.V), *_data_conditions(pt)]
    val = sp.Rational(K * (d + p - 1), 2)
    return TheoremValue(name, "λ = K(d+p−1)/2", "value", val, val, tuple(hyps))


def _unbiased(pt: Point, name: str) -> Point:
    if pt.bias:
        raise InvalidShapeError(f"{name} is about networks without biases")
    return pt


def theorem_4_1(W: object, V: object, X: object = None, centered: bool = False) -> TheoremValue:
    """Theorem 4.1: K ≥ d(d+1)/2 and some d(d+1)/2 of the w_j w_jᵀ span Sym(d) ⇒ λ = p·d(d+1)/4."""
    return _overparam("Theorem 4.1", _unbiased(parse_point(W, V, X, centered), "Theorem 4.1"))


def theorem_G_5(W: object, V: object, X: object = None, centered: bool = False) -> TheoremValue:
    """Theorem G.5 (the appendix restatement of 4.1, same hypotheses and value)."""
    return _overparam("Theorem G.5", _unbiased(parse_point(W, V, X, centered), "Theorem G.5"))


def theorem_4_2(W: object, V: object, X: object = None, centered: bool = False) -> TheoremValue:
    """Theorem 4.2: K < d(d+1)/2 with hypotheses (1)–(3) ⇒ λ = K(d+p−1)/2.

    (1) w_j ≠ 0 and v_:j ≠ 0; (2) {w_j w_jᵀ} linearly independent; (3) the orthogonal
    linearisation (u_j ⊥ w_j) ↦ (Σ_j v_kj(u_j w_jᵀ + w_j u_jᵀ))_k is injective. All three are
    decided exactly. The proof (App. G.6) drops the parallel parts Δv̂ without justification, and
    the formula fails e.g. for p = 1, d = 3, K = 2 at points where (1)–(3) hold (rank 5, not 6).
    """
    return _underparam("Theorem 4.2", _unbiased(parse_point(W, V, X, centered), "Theorem 4.2"))


def theorem_G_6(W: object, V: object, X: object = None, centered: bool = False) -> TheoremValue:
    """Theorem G.6 (the appendix restatement of 4.2, same hypotheses and value)."""
    return _underparam("Theorem G.6", _unbiased(parse_point(W, V, X, centered), "Theorem G.6"))


# --------------------------------------------------------------------------------------------
# Theorems G.1 / G.2 (biases, one output)
# --------------------------------------------------------------------------------------------


def _single_output_biased(
    W: object, v: object, b: object, X: object, centered: bool, name: str
) -> Point:
    if b is None:
        raise InvalidShapeError(f"{name} is about networks with biases: give b")
    pt = parse_point(W, v, X, centered, b)
    if pt.p != 1:
        raise InvalidShapeError(f"{name} is about a single output, but V has shape {pt.V.shape}")
    return pt


def theorem_G_1(
    W: object, v: object, b: object, X: object = None, centered: bool = False
) -> TheoremValue:
    """Theorem G.1: f = Σ_j v_j(w_jᵀx + b_j)² + c, K ≥ d and rank Q* = d ⇒ λ = (d+1)(d+2)/4."""
    pt = _single_output_biased(W, v, b, X, centered, "Theorem G.1")
    d, K = pt.d, pt.K
    Q = (pt.W * pt.V[0][None, :]).dot(pt.W.T)
    rq = rational_rank(Q)
    hyps = [
        Condition(f"K ≥ d (K = {K}, d = {d})", K >= d),
        Condition(f"rank Q* = d (rank Q* = {rq})", rq == d),
        *_data_conditions(pt),
    ]
    val = sp.Rational((d + 1) * (d + 2), 4)
    return TheoremValue("Theorem G.1", "λ = (d+1)(d+2)/4", "value", val, val, tuple(hyps))


def theorem_G_2(
    W: object, v: object, b: object, X: object = None, centered: bool = False
) -> TheoremValue:
    """Theorem G.2: K < d, v_j ≠ 0, {w_j} independent, v_i + v_j ≠ 0 ⇒ λ = D(K)/2,
    D(K) = K(2d−K+1)/2 + K + 1. (The Fisher condition is a hypothesis only with data.)"""
    pt = _single_output_biased(W, v, b, X, centered, "Theorem G.2")
    d, K = pt.d, pt.K
    v0 = pt.V[0]
    rw = rational_rank(pt.W.T)
    sums_ok = all(v0[i] + v0[j] != 0 for i in range(K) for j in range(i + 1, K))
    hyps = [
        Condition(f"1 ≤ K ≤ d − 1 (K = {K}, d = {d})", K < d),
        Condition("v_j ≠ 0 for every unit j", all(x != 0 for x in v0)),
        Condition(f"the w_j are linearly independent (rank W = {rw} of K = {K})", rw == K),
        Condition("v_i + v_j ≠ 0 for i ≠ j", sums_ok),
        *_data_conditions(pt),
    ]
    val = sp.Rational(K * (2 * d - K + 1) + 2 * K + 2, 4)
    return TheoremValue(
        "Theorem G.2", "λ = [K(2d−K+1)/2 + K + 1]/2", "value", val, val, tuple(hyps)
    )


# --------------------------------------------------------------------------------------------
# Section 5: NTK, lazy regime, modular arithmetic, effective width
# --------------------------------------------------------------------------------------------


def theorem_5_1(
    W: object, V: object, X: object = None, centered: bool = False, *, b: object = None
) -> TheoremValue:
    """Theorem 5.1 (NTK): the linearised model at θ0 has λ = rank(𝓘)/2, 𝓘 = E[φφᵀ].

    With squared loss (w ≡ 1) on the given data, rank 𝓘 = rank J_X(θ0); without data, the
    identifiable coordinates play the role of the features and rank 𝓘 = rank J_Φ(θ0).
    """
    pt = parse_point(W, V, X, centered, b)
    r = _int_rank(pt)
    hyps = (
        Condition("squared loss: the curvature weight w(x) ≡ 1 is bounded away from 0 and ∞", True),
    )
    notes = (
        "this is the λ of the linearised (NTK) model; for the quadratic network itself rank/2 is "
        "the exact λ only where the rank is locally constant (at θ0 = 0 with d = p = K = 1 the "
        "NTK value is 0 while the network has K = v²w⁴ near 0, λ = 1/4)",
    )
    return TheoremValue(
        "Theorem 5.1", "λ = rank(𝓘)/2", "value", sp.Rational(r, 2), sp.Rational(r, 2), hyps, notes
    )


def _feature_columns(pt: Point) -> np.ndarray:
    """F = σ(XW) (n × K), centred (times n) when the point is centred."""
    F = pt.X.dot(pt.W)
    F = F * F
    if pt.centered:
        F = pt.n * F - F.sum(axis=0, keepdims=True)
    return F


def _lazy_rank_condition(pt: Point) -> tuple[int, int, Condition]:
    l = feature_rank(pt.X, False, False)
    rF = rational_rank(_feature_columns(pt))
    P = "P⊥" if pt.centered else ""
    c = Condition(
        f"rank {P}σ(XW) = min(l, K) = {min(l, pt.K)} (the almost-sure event of Thm E.1; "
        f"here rank {P}σ(XW) = {rF}, l = dim span σ(Xw) = {l})",
        rF == min(l, pt.K),
    )
    return l, rF, c


def theorem_5_2(W: object, V: object, X: object, centered: bool = False) -> TheoremValue:
    """Theorem 5.2 (lazy / random-feature memorisation): λ = p·min(l, K)/2 at the ridge
    memorisation solution, l = dim span{σ(Xw)} = rank of the quadratic features of X.

    θ* = (W, V) is taken as a memorisation solution of the targets Y := f_θ*(X) (realizable). The
    almost-sure event of Thm E.1, rank σ(XW) = min(l, K), is checked exactly at W.
    """
    if X is None:
        raise InvalidShapeError("Theorem 5.2 is about a finite dataset: give X")
    pt = _unbiased(parse_point(W, V, X, centered), "Theorem 5.2")
    l, rF, cond = _lazy_rank_condition(pt)
    hyps = (
        Condition("θ* interpolates its targets (Y := f_θ*(X), so Ỹ − F̃V = 0)", True),
        cond,
    )
    notes = (
        f"the proof differentiates in V only (W frozen): p·rank F̃/2 = {sp.Rational(pt.p * rF, 2)} "
        "is the λ of the V-only model; the network's λ also counts the W directions",
    )
    val = sp.Rational(pt.p * min(l, pt.K), 2)
    return TheoremValue("Theorem 5.2", "λ = p·min(l, K)/2", "value", val, val, hyps, notes)


def _is_one_hot_pairs(X: np.ndarray, p: int) -> bool:
    if X.shape[1] != 2 * p:
        return False
    for row in X:
        a, b = row[:p], row[p:]
        if sorted(a) != [0] * (p - 1) + [1] or sorted(b) != [0] * (p - 1) + [1]:
            return False
    return True


def corollary_5_3(W: object, V: object, X: object = None, centered: bool = False) -> TheoremValue:
    """Corollary 5.3 (modular addition, σ = t²): p·min(2p−1, K)/2 ≤ λ ≤ p·min(p(2p−1), K)/2.

    p is the number of outputs (the modulus); X defaults to all p² modular-addition inputs and must
    then be n × 2p. Hypotheses: d = 2p, the rows of X are one-hot pairs [e_a; e_b], rank X = 2p−1,
    and Thm 5.2's almost-sure rank event at W.
    """
    Vp = np.array(V, dtype=object)
    p = 1 if Vp.ndim == 1 else Vp.shape[0]
    if X is None:
        if p < 2:
            raise InvalidShapeError("Corollary 5.3 needs p ≥ 2 outputs (the modulus)")
        X = modular_addition_data(p)[0]
    pt = _unbiased(parse_point(W, V, X, centered), "Corollary 5.3")
    rX = rational_rank(pt.X)
    _, _, cond = _lazy_rank_condition(pt)
    hyps = (
        Condition(f"d = 2p (d = {pt.d}, p = {p})", pt.d == 2 * p),
        Condition("every row of X is a one-hot pair [e_a; e_b]", _is_one_hot_pairs(pt.X, p)),
        Condition(f"rank X = 2p − 1 = {2 * p - 1} (rank X = {rX})", rX == 2 * p - 1),
        cond,
    )
    lo = sp.Rational(p * min(2 * p - 1, pt.K), 2)
    hi = sp.Rational(p * min(p * (2 * p - 1), pt.K), 2)
    return TheoremValue(
        "Corollary 5.3", "p·min(2p−1, K)/2 ≤ λ ≤ p·min(p(2p−1), K)/2", "bounds", lo, hi, hyps
    )


def theorem_5_5(W: object, V: object, X: object = None, centered: bool = False) -> TheoremValue:
    """Theorem 5.5 (effective width): λ = K_eff(d+p−1)/2, K_eff = #{j : v_:j ≠ 0}.

    The paper asks the active subnetwork to satisfy "the non-degeneracy conditions of Theorem
    G.5", but the formula is G.6's, whose conditions make the argument go through; we check G.6's
    conditions (1)–(3) and K_eff < d(d+1)/2 on the active subnetwork, and record the literal G.5
    reading in a note (its conditions give G.5's different value p·d(d+1)/4).
    """
    pt = _unbiased(parse_point(W, V, X, centered), "Theorem 5.5")
    active = [j for j in range(pt.K) if any(x != 0 for x in pt.V[:, j])]
    d, p, ke = pt.d, pt.p, len(active)
    val = sp.Rational(ke * (d + p - 1), 2)
    if ke == 0:
        hyps = [Condition("at least one active unit (K_eff ≥ 1)", False)]
        notes: tuple[str, ...] = ()
    else:
        Wa, Va = pt.W[:, active], pt.V[:, active]
        hyps = _underparam_conditions(Wa, Va, "active subnetwork: ")
        lit = ke >= _m(d) and _rank_one_span(Wa) == _m(d)
        notes = (
            f"K_eff = {ke}; literal reading (G.5's conditions on the active subnetwork: K_eff ≥ "
            f"d(d+1)/2 and spanning) {'holds' if lit else 'fails'} here, and G.5 would then give "
            f"λ = {sp.Rational(p * _m(d), 2)}",
        )
    hyps += _data_conditions(pt)
    return TheoremValue("Theorem 5.5", "λ = K_eff(d+p−1)/2", "value", val, val, tuple(hyps), notes)


# --------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------


def _agree(tv: TheoremValue, ex: RLCT) -> bool | None:
    if ex.exact:
        return bool(tv.lower <= ex.lam <= tv.upper)
    if tv.upper < ex.lower or tv.lower > ex.upper:
        return False
    return None


_POINT_RANGE = 1 << 16


def _draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    vals = rng.integers(-_POINT_RANGE, _POINT_RANGE, size=shape, endpoint=True)
    out = np.empty(vals.size, dtype=object)
    out[:] = [int(v) for v in vals.flat]
    return out.reshape(shape)


def check_theorems(
    d: int, p: int, K: int, X: object = None, centered: bool = False, seed: int = 0
) -> list[TheoremCheck]:
    """Every applicable theorem of the paper against the exact λ, at random integer points.

    Points: a generic point (entries uniform in [−2^16, 2^16], seed ``seed``) for Theorems 4.1,
    4.2, G.5, G.6, 5.1 and, with data, 5.2 and Corollary 5.3 (the latter when d = 2p); for Theorem
    5.5 the same point with its last unit made inactive (v_:K = 0) when K ≥ 2; for G.1 and G.2
    (only when p = 1) a generic point with biases. The exact side is :func:`rlct.quadratic.llc`
    at that point (exact when the rank is locally constant there, bounds otherwise). A theorem
    whose hypotheses fail is still evaluated: the record says so in ``hypotheses_hold``.
    """
    d, p, K = _dim(d, "d"), _dim(p, "p"), _dim(K, "K")
    rng = np.random.default_rng(_dim(seed, "seed", 0))
    W, V = _draw(rng, (d, K)), _draw(rng, (p, K))
    Xa = parse_point(W, V, X, centered).X if X is not None else None
    data = "none" if Xa is None else f"X n={Xa.shape[0]}" + (" centred" if centered else "")
    out: list[TheoremCheck] = []

    def record(tv: TheoremValue, ex: RLCT, label: str) -> None:
        out.append(
            TheoremCheck(
                tv.theorem,
                d,
                p,
                K,
                data,
                label,
                tv.kind,
                tv.lower,
                tv.upper,
                ex.lam if ex.exact else None,
                ex.lower,
                ex.upper,
                tv.hypotheses_hold,
                _agree(tv, ex),
            )
        )

    ex = llc(W, V, Xa, centered, seed=seed)
    for fn in (theorem_4_1, theorem_4_2, theorem_G_5, theorem_G_6, theorem_5_1):
        record(fn(W, V, Xa, centered), ex, "generic")
    if Xa is not None:
        record(theorem_5_2(W, V, Xa, centered), ex, "generic")
        if d == 2 * p and p >= 2:
            record(corollary_5_3(W, V, Xa, centered), ex, "generic")
    if K >= 2:
        V5 = V.copy()
        V5[:, -1] = 0
        record(
            theorem_5_5(W, V5, Xa, centered),
            llc(W, V5, Xa, centered, seed=seed),
            "last unit inactive",
        )
    else:
        record(theorem_5_5(W, V, Xa, centered), ex, "generic")
    if p == 1:
        bb = _draw(rng, (K,))
        exb = llc(W, V, Xa, centered, b=bb, seed=seed)
        for fn in (theorem_G_1, theorem_G_2):
            record(fn(W, V, bb, Xa, centered), exb, "generic, biases")
    return out
