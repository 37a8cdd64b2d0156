"""The closed forms of Cullen et al. (2026) for quadratic networks, with their hypotheses checked.

Each ``theorem_*`` function takes a point (and data, where the theorem is about data), checks the
theorem's hypotheses *at that point* in exact arithmetic, and returns a :class:`TheoremValue`:
the value (or bounds) the paper claims for λ and every hypothesis as a :class:`Condition`. The
claim is reported as the paper states it, whether or not it is right;
:func:`rlct.quadratic.check_theorems` compares it with the exact λ of :func:`rlct.quadratic.llc`.

Conventions follow :mod:`rlct.quadratic` (f = V σ(Wᵀx), Q_k = Σ_j v_kj w_j w_jᵀ, m = d(d+1)/2).
With data, the paper's theorems (stated for the population loss under "the standard SLT
assumptions") implicitly need the data to see every tangent direction of the identifiable
coordinates; we add that as an explicit hypothesis: rank J_X(θ*) = rank J_Φ(θ*).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from .._validate import items
from ..algebra.ranks import rational_rank
from ..errors import InvalidResultError, InvalidShapeError, InvalidTypeError
from ..result import Condition, as_rational, condition_tuple, rational_str
from .datasets import modular_addition_data
from .hypotheses import (
    data_conditions,
    rank_one_span,
    sym_dim,
    underparam_conditions,
)
from .jacobians import feature_rank, rank_at
from .point import Point, exact_array, parse_point

__all__ = [
    "TheoremValue",
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
            raise InvalidResultError(f"kind must be 'value' or 'bounds', got {self.kind!r}")
        for name in ("theorem", "claim"):
            if not isinstance(getattr(self, name), str):
                raise InvalidTypeError(f"{name} must be a string, got {getattr(self, name)!r}")
        object.__setattr__(self, "lower", as_rational(self.lower, "lower"))
        object.__setattr__(self, "upper", as_rational(self.upper, "upper"))
        object.__setattr__(self, "hypotheses", condition_tuple(self.hypotheses, "hypotheses"))
        notes = items(self.notes, "notes", InvalidTypeError, "strings")
        if not all(isinstance(n, str) for n in notes):
            raise InvalidTypeError(f"notes must be strings, got {self.notes!r}")
        object.__setattr__(self, "notes", tuple(notes))
        if self.kind == "value" and self.lower != self.upper:
            raise InvalidResultError("a 'value' claim needs lower == upper")
        if self.lower > self.upper:
            raise InvalidResultError(f"lower = {self.lower} exceeds upper = {self.upper}")

    @property
    def lam(self) -> sp.Rational | None:
        """The claimed λ for a 'value' claim, else None."""
        return self.lower if self.kind == "value" else None

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-able data: bounds as exact strings ("3/4"), each hypothesis with its status
        "holds", "fails" or "undecided", and whether they all hold (true / false / null)."""
        return {
            "theorem": self.theorem,
            "claim": self.claim,
            "kind": self.kind,
            "lam": rational_str(self.lam),
            "lower": rational_str(self.lower),
            "upper": rational_str(self.upper),
            "hypotheses": [c.to_dict() for c in self.hypotheses],
            "hypotheses_hold": self.hypotheses_hold,
            "notes": list(self.notes),
        }

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


def _overparam(name: str, pt: Point) -> TheoremValue:
    p, K, m = pt.p, pt.K, sym_dim(pt.d)
    r1 = rank_one_span(pt.W)
    hyps = [
        Condition(f"K ≥ d(d+1)/2 (K = {K}, d(d+1)/2 = {m})", K >= m),
        Condition(
            f"some d(d+1)/2 of the w_j w_jᵀ span Sym(d) (they span a space of dimension {r1} of {m})",
            r1 == m,
        ),
        *data_conditions(pt),
    ]
    return TheoremValue(
        name, "λ = p·d(d+1)/4", "value", sp.Rational(p * m, 2), sp.Rational(p * m, 2), tuple(hyps)
    )


def _underparam(name: str, pt: Point) -> TheoremValue:
    d, p, K = pt.d, pt.p, pt.K
    hyps = [*underparam_conditions(pt.W, pt.V), *data_conditions(pt)]
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
        *data_conditions(pt),
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
        *data_conditions(pt),
    ]
    val = sp.Rational(K * (2 * d - K + 1) + 2 * K + 2, 4)
    return TheoremValue(
        "Theorem G.2", "λ = [K(2d−K+1)/2 + K + 1]/2", "value", val, val, tuple(hyps)
    )


def theorem_5_1(
    W: object, V: object, X: object = None, centered: bool = False, *, b: object = None
) -> TheoremValue:
    """Theorem 5.1 (NTK): the linearised model at θ0 has λ = rank(𝓘)/2, 𝓘 = E[φφᵀ].

    With squared loss (w ≡ 1) on the given data, rank 𝓘 = rank J_X(θ0); without data, the
    identifiable coordinates play the role of the features and rank 𝓘 = rank J_Φ(θ0).
    """
    pt = parse_point(W, V, X, centered, b)
    r = rank_at(pt)
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
    Vp = exact_array(V, "V")
    if Vp.ndim not in (1, 2):
        raise InvalidShapeError(f"V must be a p × K matrix, got shape {Vp.shape}")
    p = 1 if Vp.ndim == 1 else Vp.shape[0]
    if X is None:
        if p < 2:
            raise InvalidShapeError(
                f"V has {p} row: Corollary 5.3 needs p ≥ 2 outputs (the modulus) to build X"
            )
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
        hyps = underparam_conditions(Wa, Va, "active subnetwork: ")
        lit = ke >= sym_dim(d) and rank_one_span(Wa) == sym_dim(d)
        notes = (
            f"K_eff = {ke}; literal reading (G.5's conditions on the active subnetwork: K_eff ≥ "
            f"d(d+1)/2 and spanning) {'holds' if lit else 'fails'} here, and G.5 would then give "
            f"λ = {sp.Rational(p * sym_dim(d), 2)}",
        )
    hyps += data_conditions(pt)
    return TheoremValue("Theorem 5.5", "λ = K_eff(d+p−1)/2", "value", val, val, tuple(hyps), notes)
