r"""How λ̂ depends on γ and nβ, and the finding that says when the chains left the region where
the loss at w* is quadratic-like (``check_beyond_quadratic``).

The estimator samples p(w) ∝ exp(−nβ·L_n(w) − (γ/2)‖w − w*‖² − (α/2)‖w‖²) and reports
λ̂ = nβ·(E[L_n(w)] − L_n(w*)), an estimate of λ_β(γ), which is λ only in the limit nβ → ∞ at fixed
γ. How it moves:

* **Quadratic directions** (H = ∇²L_n(w*) = Q·diag(h)·Qᵀ): each contributes
  ½·nβh/(nβh + γ), the Laplace value ``LLCConfig.laplace_llc`` = ½Σ_j nβh_j/(nβh_j + γ).
  Directions with nβh ≫ γ count ½, those with nβh ≪ γ nothing, so λ̂ grows with nβ and falls as
  γ grows, and a trained network with many soft directions counts them only as far as nβh ≳ γ.
* **Singular directions** (L_n quartic or higher along them, as at the true parameter of a deep
  linear network): a direction with L_n ≈ a·t⁴ contributes ≈ ¼ while the localisation is weaker
  than the loss where the chains go (γ ≪ √(nβ·a)), and less as γ/√(nβa) grows; the chains spread
  to ≈ (nβa)^(−1/4) along it, far beyond the quadratic picture. Reduced rank regression at the
  origin (λ = 3/2, n = 10⁴): 1.45 at γ ≤ 1, 1.18 at γ = 10.
* **nβ**: at fixed γ, λ̂ → λ − (m − 1)/log(nβ) + o(1/log nβ) as nβ grows (m the multiplicity);
  the corrections can be large at nβ = n/log n: the rank-1 deep linear network 4-3-5-3 (λ = 5,
  m = 2) gives ≈ 4.3 at nβ = 1086 and ≈ 5.2 at nβ = 10⁵ (γ = 1).
* **Where the chains go**: along directions the loss hardly holds, the chains go to distances
  ≈ 1/√γ from w*. For a trained network at γ = 1 that is far beyond where the loss at w* is
  quadratic (weights move by O(1) per entry): the curvature there is much larger than at w*, ε
  shrinks to resolve it, the soft directions then take ~10⁴ steps per relaxation time, and
  λ̂ reflects the loss far from w*. A larger γ keeps the chains where the quadratic picture holds:
  the README's 5-16-1 network took 3 s and agreed with the Laplace value at γ = 100, and did not
  mix in 46 s at γ = 1 (21.7 ± 0.8, ESS 50).

So compare estimates only at equal γ and nβ, and choose γ for the question: γ small (≪ √nβ in
the units of the weights) for the asymptotic λ of a singular model, γ large enough to keep the
chains in the basin of w* for the LLC of a trained network (and check that λ̂ moves little when
γ changes by a factor of a few).

``check_beyond_quadratic`` fires at a minimum with relevant directions (a Hessian rule) when λ̂
departs from the Laplace value by more than ``DEPART`` of it (and 3 standard errors), or the
curvature where the chains went exceeds the one at w* ``STIFFER`` times: an ``info`` finding when
the run mixed (λ̂ is then a fair estimate of λ_β at this γ, not of the quadratic picture), a
``warning`` when it also carries mixing findings (the chains wander where they mix slowly; a
larger γ helps).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from numeric.hessian.spectrum import pinned
from numeric.types import Finding

if TYPE_CHECKING:
    from numeric.plan.llc_plan import LLCPlan
    from numeric.stats.chain_stats import ChainStats
    from numeric.types import Tuning

DEPART = 0.25  # |λ̂ − λ_Laplace| beyond this fraction of λ_Laplace
STIFFER = 4.0  # κ where the chains went / κ at w* beyond this
MIXING_CODES = frozenset(
    {"low_ess", "rhat", "chains_disagree", "drift", "slow_mixing", "spreading"}
)


def check_beyond_quadratic(
    llc: float,
    stderr: float,
    laplace: tuple[float, float],
    kappa_where: float,
    kappa_star: float,
    gamma: float,
    findings: tuple[Finding, ...] | list[Finding],
) -> tuple[Finding, ...]:
    """The chains left the region where the loss at w* is quadratic-like (module docstring).
    ``laplace``: bounds (low, high) on the Laplace value (equal where it is exact; low nan where
    there is none); ``kappa_where``: the (preconditioned) curvature the step size was chosen
    for, where the chains went; ``kappa_star``: the same at w*; ``findings``: the run's other
    findings."""
    low, high = laplace
    if not (math.isfinite(llc) and math.isfinite(high) and high > 0):
        return ()
    low = low if math.isfinite(low) else 0.0
    above = llc - high > max(DEPART * high, 3 * stderr)
    below = low - llc > max(DEPART * low, 3 * stderr)
    departs = above or below
    ratio = kappa_where / kappa_star if kappa_star > 0 else math.nan
    stiffer = math.isfinite(ratio) and ratio > STIFFER
    if not (departs or stiffer):
        return ()
    trouble = sorted(
        {f.code for f in findings if f.code in MIXING_CODES or f.code == "draws_capped"}
    )
    what = []
    if departs:
        ref = high if above else low
        named = (
            f"the Laplace value ½Σ nβh/(nβh + γ) = {high:.4g} of the quadratic approximation at w*"
            if low == high
            else f"the {'upper' if above else 'lower'} bound on the Laplace value ½Σ nβh/(nβh + γ)"
            f" of the quadratic approximation at w*, which Lanczos quadrature brackets in "
            f"[{low:.4g}, {high:.4g}]"
        )
        what.append(f"λ̂ = {llc:.4g} is {llc / ref:.2g}× {named}")
    if stiffer:
        what.append(
            f"the curvature where the chains went is {ratio:.3g}× the curvature at w* (so ε is "
            f"{ratio:.3g}× smaller than w* alone needs)"
        )
    head = (
        "the chains wander beyond where the loss at w* is quadratic-like: "
        + "; ".join(what)
        + f". λ̂ then depends on γ (here {gamma:g}) and nβ beyond the quadratic picture "
        "(directions flat at w* carry part of it, as at a singular w*, or the chains reach "
        "loss far from w*); compare estimates only at equal γ and nβ"
    )
    if trouble:
        return (
            Finding(
                "beyond_quadratic",
                "warning",
                head + f", and there they mix slowly ({', '.join(trouble)}): a larger gamma keeps "
                f"them nearer w* and mixes faster (try gamma = {10 * gamma:g} and "
                f"{100 * gamma:g}; λ̂ moves toward the Laplace value at that γ); for the "
                "asymptotic λ of a singular model keep γ and run longer (num_draws, num_burnin)",
                _values(llc, laplace, ratio, gamma),
            ),
        )
    return (
        Finding(
            "beyond_quadratic",
            "info",
            head + " (the run mixed: λ̂ is a fair estimate at this γ)",
            _values(llc, laplace, ratio, gamma),
        ),
    )


def _values(
    llc: float, laplace: tuple[float, float], ratio: float, gamma: float
) -> dict[str, float]:
    """The finding's numbers: ``laplace`` where its bounds pin it down (``spectrum.pinned``),
    else nan, beside the bounds."""
    low, high = laplace
    return {
        "llc": llc,
        "laplace": pinned(laplace),
        "laplace_low": low,
        "laplace_high": high,
        "curvature_ratio": ratio,
        "gamma": gamma,
    }


def plan_beyond_quadratic(
    plan: LLCPlan, stats: ChainStats, tuning: Tuning, gamma: float, findings: list[Finding]
) -> tuple[Finding, ...]:
    """``check_beyond_quadratic`` for a data estimate: only at a minimum with a Hessian rule (a
    probe of slow relevant directions); elsewhere (a saddle, a singular w* with no relevant
    direction) the chains are expected to spread and the flat-direction rules apply."""
    if plan.probe.shape[1] == 0:
        return ()
    return check_beyond_quadratic(
        stats.mean,
        stats.stderr,
        plan.hessian.laplace_bounds(),
        tuning.kappa,
        plan.stiffest_at_w_star(),
        gamma,
        findings,
    )
