"""Wrong calls, one family per public entry point (normal crossings, polynomials, reduced-rank
regressions, the estimator): each a call with what it must raise and the message it must name.
``strategies.bad_inputs`` draws them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
from hypothesis import strategies as st

import rlct


@dataclass(frozen=True)
class BadInput:
    """A call that must raise ``error`` with a message matching ``match``."""

    description: str
    call: Callable[[], object]
    error: type[Exception]
    match: str


def bad_normal_crossing(draw) -> BadInput:
    kind = draw(st.sampled_from(["negative", "all_zero", "prior", "length"]))
    d = draw(st.integers(1, 3))
    k = draw(st.lists(st.integers(1, 3), min_size=d, max_size=d))
    if kind == "negative":
        j = draw(st.integers(0, d - 1))
        k[j] = -draw(st.integers(1, 3))
        return BadInput(
            f"k={k}", lambda: rlct.normal_crossing(k), rlct.InvalidExponentError, "negative"
        )
    if kind == "all_zero":
        return BadInput(
            f"k={[0] * d}",
            lambda: rlct.normal_crossing([0] * d),
            rlct.InvalidExponentError,
            "all zero",
        )
    if kind == "prior":
        h = [Fraction(0)] * d
        h[0] = Fraction(-draw(st.integers(2, 8)), 2)
        return BadInput(
            f"h={h}", lambda: rlct.normal_crossing(k, h), rlct.InvalidPriorError, "integrable"
        )
    return BadInput(
        f"k={k}, h of length {d + 1}",
        lambda: rlct.normal_crossing(k, [0] * (d + 1)),
        rlct.InvalidPriorError,
        "length",
    )


def bad_rrr(draw) -> BadInput:
    M, N, H = (draw(st.integers(1, 4)) for _ in range(3))
    r = min(M, N, H) + draw(st.integers(1, 3))
    return BadInput(
        f"rrr(M={M},N={N},H={H},r={r})",
        lambda: rlct.reduced_rank_regression(M, N, H, r),
        rlct.InvalidShapeError,
        "exceeds",
    )


def bad_polynomial(draw) -> BadInput:
    x, y = sp.symbols("x y", real=True)
    odd = draw(st.sampled_from([1, 3, 5]))
    K = x**odd + y**2
    return BadInput(
        f"K={K}", lambda: rlct.from_polynomial(K, (x, y)), rlct.NotNonNegativeError, "not ≥ 0"
    )


def bad_estimator(draw) -> BadInput:
    import numeric

    def K(w):
        return (w**2).sum(-1)

    nan, inf = float("nan"), float("inf")
    values = {
        "nbeta": [0.0, -1.0, nan, inf],
        "step_size": [0.0, -1e-3, nan],
        "w_star": [nan, inf],
        "num_chains": [0, -2],
    }
    kind = draw(st.sampled_from(list(values)))
    v = draw(st.sampled_from(values[kind]))
    if kind == "w_star":
        return BadInput(
            f"w_star=[{v}]",
            lambda: numeric.estimate_llc_potential(K, [v], 100),
            numeric.InvalidInputError,
            "not finite",
        )
    return BadInput(
        f"{kind}={v}",
        lambda: numeric.estimate_llc_potential(K, [0.0], 100, **{kind: v}),
        numeric.InvalidInputError,
        kind,
    )
