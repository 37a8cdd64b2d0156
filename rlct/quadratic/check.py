"""Every applicable theorem of the paper against the exact λ, at random integer points."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import sympy as sp

from .._validate import count, seconds_value
from ..errors import InvalidSeedError
from ..result import RLCT, rational_str
from .coefficient import llc
from .point import check_jacobian_size, data_rows, parse_point
from .theorems import (
    TheoremValue,
    corollary_5_3,
    theorem_4_1,
    theorem_4_2,
    theorem_5_1,
    theorem_5_2,
    theorem_5_5,
    theorem_G_1,
    theorem_G_2,
    theorem_G_5,
    theorem_G_6,
)

__all__ = ["TheoremCheck", "check_theorems"]


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

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-able data: every field, rationals as exact strings ("3/4"), the three-valued
        ``hypotheses_hold`` and ``agree`` as true / false / null."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = rational_str(value) if isinstance(value, sp.Rational) else value
        out["formula_lam"] = rational_str(self.formula_lam)
        return out


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
    d: int,
    p: int,
    K: int,
    X: object = None,
    centered: bool = False,
    seed: int = 0,
    search_seconds: float = 0.0,
) -> list[TheoremCheck]:
    """Every applicable theorem of the paper against the exact λ, at random integer points.

    Points: a generic point (entries uniform in [−2^16, 2^16], seed ``seed``) for Theorems 4.1,
    4.2, G.5, G.6, 5.1 and, with data, 5.2 and Corollary 5.3 (the latter when d = 2p); for Theorem
    5.5 the same point with its last unit made inactive (v_:K = 0) when K ≥ 2; for G.1 and G.2
    (only when p = 1) a generic point with biases. The exact side is :func:`rlct.quadratic.llc`
    at that point (exact when the rank is locally constant there, bounds otherwise). A theorem
    whose hypotheses fail is still evaluated: the record says so in ``hypotheses_hold``.
    ``search_seconds`` is passed to :func:`~rlct.quadratic.llc` (its exact search at a rank
    drop); 0 by default, so the records are the same on every machine.
    """
    d, p, K = count(d, "d"), count(p, "p"), count(K, "K")
    seed = count(seed, "seed", 0, InvalidSeedError)
    search_seconds = seconds_value(search_seconds, "search_seconds")
    # the largest Jacobian: with biases when p = 1, and with the data's n samples when given
    check_jacobian_size(d, p, K, None, p == 1)
    if X is not None and (n := data_rows(X)):
        check_jacobian_size(d, p, K, n, p == 1)
    rng = np.random.default_rng(seed)
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

    ex = llc(W, V, Xa, centered, seed=seed, search_seconds=search_seconds)
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
            llc(W, V5, Xa, centered, seed=seed, search_seconds=search_seconds),
            "last unit inactive",
        )
    else:
        record(theorem_5_5(W, V, Xa, centered), ex, "generic")
    if p == 1:
        bb = _draw(rng, (K,))
        exb = llc(W, V, Xa, centered, b=bb, seed=seed, search_seconds=search_seconds)
        for fn in (theorem_G_1, theorem_G_2):
            record(fn(W, V, bb, Xa, centered), exb, "generic, biases")
    return out
