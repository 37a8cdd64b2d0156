"""Seed 002 (Cullen et al. 2026), Figs 1–2: the final LLC against p and against K.

``scaling_point`` trains a quadratic network on modular addition (``.cullen.train_quadratic``),
polishes it to a critical point of L_n (``.cullen.polish``) and puts λ̂ beside the paper's
K(3p − 1)/2, the exact λ at the trained point for the training set actually used
(``rlct.quadratic_llc``, centred as the loss is), the cap p(N − 1)/2 and the polished training
loss, which says whether the exact λ is the data's; ``scaling_verdict`` reads the claimed
scaling from λ̂'s exponents.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

import rlct

from .cullen import CLAIM_SCALING, Estimator, estimate, polish, train_quadratic, weighted_slope
from .llc import LLCPoint
from .modular import ModularTask, Snapshot, centred_mse, paper_formula, sample_cap
from .paper_stats import loglog_fit
from .records import Measurement, Record, Verdict, mean_stderr


@dataclass(frozen=True)
class ScalingPoint(Record):
    """A trained network: its λ̂, the exact λ at it, and the paper's and the cap's values."""

    p: int
    K: int
    n_train: int
    num_params: int
    final: Snapshot  # after AdamW
    grad_norm: float  # ‖∇L_n‖ at the polished point where everything below is computed
    llc: LLCPoint  # at the package's default temperature nβ = N/log N (γ = 1)
    llc_cold: LLCPoint  # at nβ = 10⁴, γ = 100, where the chains mix (module docstring)
    laplace: float  # λ_β of the quadratic approximation at the default nβ and γ
    laplace_cold: float
    exact_lam: float  # rank/2 at the trained point (nan when only bounds are known)
    exact_lower: float
    exact_upper: float
    exact: bool
    generic_rank: int  # of the class on these training inputs (centred); −1: not computed
    paper: float  # K(3p − 1)/2
    cap: float  # p(N − 1)/2
    seconds_exact: float
    # the centred L_n at the polished point: the exact λ is that of the targets the network itself
    # outputs (rlct.quadratic_llc), the data's only where it fits them (≤ FIT_LOSS); nan: not kept
    polished_loss: float = math.nan

    @property
    def fits(self) -> bool:
        """The polished point fits its training data (the exact λ's hypothesis), or the loss was
        not kept (records before it was)."""
        return not self.polished_loss > FIT_LOSS


# a centred training loss at most this fits the data: L-BFGS from a memorised point reaches
# ≈ 10⁻²⁰ in float64; a model that cannot fit its N samples stays near 10⁻² or above
FIT_LOSS = 1e-10


def scaling_point(
    task: ModularTask,
    K: int,
    *,
    lr: float,
    weight_decay: float,
    steps: int,
    seed: int,
    settings: Estimator,
    cold: tuple[float, float] = (1e4, 100.0),
    exact_max_rows: int = 20_000,
) -> ScalingPoint:
    """Train, polish to a critical point of L_n, estimate λ̂ there at the package's default
    temperature and at ``cold`` = (nβ, γ), and compute the exact λ there (skipped, nan, when the
    Jacobian has more than ``exact_max_rows`` rows p·N: exact ranks of that size take hours)."""
    net, snaps, _ = train_quadratic(
        task, K, lr=lr, weight_decay=weight_decay, steps=steps, seed=seed
    )
    grad = polish(net, task)
    with torch.no_grad():
        polished_loss = float(centred_mse(net(task.x_train), task.y_train))
    pt, est = estimate(net, task, settings, step=steps)
    pt_cold, est_cold = estimate(net, task, settings, step=steps, nbeta=cold[0], gamma=cold[1])
    t0 = time.perf_counter()
    nan = math.nan
    lam, lower, upper, exact, gen = nan, nan, nan, False, -1
    if task.p * task.n_train <= exact_max_rows:
        X = task.exact_inputs()
        W, V = net.W.detach().cpu().numpy(), net.V.detach().cpu().numpy()
        res = rlct.quadratic_llc(W, V, X, True)
        gen = int(rlct.generic_rank(2 * task.p, task.p, K, X, True))
        lam = float(res.lam) if res.exact else nan
        lower, upper, exact = float(res.lower), float(res.upper), bool(res.exact)
    secs = time.perf_counter() - t0
    return ScalingPoint(
        task.p,
        K,
        task.n_train,
        net.W.numel() + net.V.numel(),
        snaps[-1],
        grad,
        pt,
        pt_cold,
        float(est.config.laplace_llc),
        float(est_cold.config.laplace_llc),
        lam,
        lower,
        upper,
        exact,
        gen,
        paper_formula(task.p, K),
        sample_cap(task.p, task.n_train),
        secs,
        polished_loss,
    )


EXPONENT_BAND = (0.8, 1.2)


def _exponent(
    name: str, xs: Sequence[float], pts: Sequence[ScalingPoint], nums: list
) -> tuple[float, float] | None:
    """The 95% interval of b in log λ̂ = a + b·log x (t at k − 2 df), recorded in ``nums`` with
    the exact λ's exponent beside it; None with fewer than 3 points or a λ̂ ≤ 0."""
    llc = [q.llc.llc for q in pts]
    if len(pts) < 3 or min(llc) <= 0:
        return None
    fit = loglog_fit(xs, llc)
    nums.append(Measurement(f"exponent of λ̂ in {name}", fit.slope, fit.stderr))
    if all(q.exact for q in pts):
        exact = loglog_fit(xs, [q.exact_lam for q in pts])
        nums.append(Measurement(f"exponent of the exact λ in {name}", exact.slope, exact.stderr))
    return fit.interval(0.95)


def _median(values: Sequence[float]) -> float:
    """The median, nan for no values."""
    return float(np.median(values)) if len(values) else math.nan


def _formula_check(
    pts: Sequence[ScalingPoint], exact: Sequence[ScalingPoint]
) -> tuple[bool, list[Measurement], str]:
    """The paper's K(3p − 1)/2 against the exact λ at the ``exact`` points that fit their data
    (``scaling_verdict``): whether it misses by more than 1% in median, the measurements, and
    the sentence's words on it."""
    fitting = [q for q in exact if q.fits]
    formula_err = [q.paper / q.exact_lam - 1 for q in fitting]
    capped = [q for q in exact if q.exact_lam >= q.cap - 0.5]
    largest = max(
        (q.polished_loss for q in pts if math.isfinite(q.polished_loss)), default=math.nan
    )
    nums = [
        Measurement("median paper/exact − 1 (points that fit)", _median(formula_err)),
        Measurement("points with an exact λ that fit their training data", len(fitting)),
        Measurement("largest polished training loss", largest),
        Measurement("points at the cap p(N − 1)/2", len(capped)),
    ]
    unfit = len(exact) - len(fitting)
    fit_said = (
        f"{len(fitting)} of {len(exact)} polished points fit their training data (centred L_n ≤ "
        f"{FIT_LOSS:.0e}); at the other {unfit} (L_n up to {largest:.2g}) the exact λ is that "
        "of the network's own outputs, not of the data, and is left out of the formula check"
        if unfit
        else f"all {len(exact)} polished points fit their training data"
    )
    formula_said = (
        f"median relative error of the formula {_median(formula_err):+.1%} where they fit"
        if formula_err
        else "the formula is not checked: no point fits"
    )
    said = (
        f"{formula_said}; {len(capped)} of {len(exact)} points sit at the cap p(N − 1)/2 that N "
        f"training points impose); {fit_said}"
    )
    off = bool(formula_err) and _median(np.abs(formula_err)) > 0.01
    return off, nums, said


def scaling_verdict(by_p: Sequence[ScalingPoint], by_K: Sequence[ScalingPoint]) -> Verdict:
    """The paper's formula against the exact λ, and the claimed scaling of λ̂.

    Rule (issue 62, fixed before the rerun; it had read the absolute level, λ̂/λ < 0.5 not
    reproduced, though the paper interprets levels only up to an estimator-dependent scale): the
    claim is proportionality, λ̂ ∝ K at fixed p and ∝ 3p − 1 at fixed K. Exponents by log–log
    least squares over each series (≥ 3 points), 95% intervals at k − 2 df. Reproduced if both
    intervals lie inside ``EXPONENT_BAND`` = [0.8, 1.2] (after a correction where the formula
    misses the exact λ by more than 1% in median); not reproduced if either interval misses the
    band; inconclusive otherwise (wide intervals, or a series too short).

    The formula is held against the exact λ only at points that fit their training data
    (``ScalingPoint.fits``; issue 62, set when the polished training loss was first recorded,
    before the notebook was re-run): elsewhere ``rlct.quadratic_llc`` gives the λ of the targets
    the network itself outputs, not the data's. With no such point the formula is not checked
    (no "after a correction" from it)."""
    pts = list(by_p) + list(by_K)
    exact = [q for q in pts if q.exact]
    if not exact:  # nothing to hold the formula against (every task above exact_max_rows, or
        return Verdict(  # bounds only): no median, no mean of an empty list
            CLAIM_SCALING,
            "inconclusive",
            (Measurement("points", len(pts)), Measurement("points with an exact λ", 0)),
            f"none of the {len(pts)} trained points has an exact λ, so the formula K(3p − 1)/2 "
            "cannot be checked against it.",
        )
    off, nums, formula_said = _formula_check(pts, exact)
    ratio = [q.llc.llc / q.exact_lam for q in exact]
    nums += [
        Measurement("mean λ̂/λ_exact", *mean_stderr(ratio)),
        Measurement("mean λ̂/λ_β(Laplace)", *mean_stderr([q.llc.llc / q.laplace for q in pts])),
        Measurement(
            "mean λ̂_cold/λ_exact", *mean_stderr([q.llc_cold.llc / q.exact_lam for q in exact])
        ),
        Measurement(
            "mean λ̂_cold/λ_β,cold(Laplace)",
            *mean_stderr([q.llc_cold.llc / q.laplace_cold for q in pts]),
        ),
    ]
    if len(by_K) >= 2:
        s, se = weighted_slope(
            [q.K for q in by_K], [q.llc.llc for q in by_K], [q.llc.stderr for q in by_K]
        )
        nums.append(Measurement(f"dλ̂/dK at p = {by_K[0].p}", s, se))
        nums.append(Measurement(f"paper dλ/dK at p = {by_K[0].p}", (3 * by_K[0].p - 1) / 2))
    if len(by_p) >= 2:
        s, se = weighted_slope(
            [q.p for q in by_p], [q.llc.llc for q in by_p], [q.llc.stderr for q in by_p]
        )
        nums.append(Measurement(f"dλ̂/dp at K = {by_p[0].K}", s, se))
        nums.append(Measurement(f"paper dλ/dp at K = {by_p[0].K}", 1.5 * by_p[0].K))
    exps = [
        _exponent(name, xs, pts_, nums)
        for name, xs, pts_ in (
            ("K", [q.K for q in by_K], by_K),
            ("3p − 1", [3 * q.p - 1 for q in by_p], by_p),
        )
    ]
    lo_band, hi_band = EXPONENT_BAND
    inside = [e is not None and lo_band <= e[0] and e[1] <= hi_band for e in exps]
    outside = [e is not None and (e[1] < lo_band or e[0] > hi_band) for e in exps]
    shown = ", ".join(
        f"{n}: [{e[0]:.2f}, {e[1]:.2f}]" if e else f"{n}: fewer than 3 points"
        for n, e in zip(("K", "3p − 1"), exps, strict=True)
    )
    sentence = (
        f"the exact λ at the trained points is rank/2 = min(≈K(3p − 2), p(N − 1))/2, not "
        f"K(3p − 1)/2 ({formula_said}. The claim's scaling, "
        f"scale-free: the 95% intervals of λ̂'s exponents are "
        f"{shown} (proportionality: inside [{lo_band}, {hi_band}]). The levels, not in the rule: "
        f"λ̂ is {np.mean(ratio):.2f}× the exact λ on average at the default nβ = N/log N and "
        f"{np.mean([q.llc_cold.llc / q.exact_lam for q in exact]):.2f}× at nβ = 10⁴, γ = 100, "
        "where it matches the Laplace λ_β: a direction counts only where nβh ≫ γ"
    )
    if all(inside):
        outcome = "reproduced after a correction" if off else "reproduced"
    elif any(outside):
        outcome = "not reproduced"
    else:
        outcome = "inconclusive"
    return Verdict(CLAIM_SCALING, outcome, tuple(nums), sentence + ".")
