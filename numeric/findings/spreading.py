r"""Whether the chains were still moving away from w* through the draws (``check_spreading``).

Every chain starts at w*. Along directions the loss hardly holds (flat at w*, held by γ + α
alone) the chains spread out slowly. Where the loss is quadratic that spread does not move λ̂;
where it is not (``beyond_quadratic``: the curvature where the chains went differs from w*'s, or
λ̂ departs from the Laplace value) λ̂ depends on how far the chains have spread, and draws taken
while the spread still grows average a transient, and the loss trace need not show it: on the
deep linear network 22-19-22 (rank 19, D = 836, n = 10⁴, γ = 1) the defaults gave λ̂ = 214.9 ±
0.8 while the chains' ‖w − w*‖² along the directions flat at w* grew from 49 to 69 through the
draws; 40 times the burn-in at the same ε and friction let the spread settle and read 225.0 ± 1.0,
against 222.5 ± 0.5 by Metropolis-adjusted HMC on the same posterior. (On 11-15-15-21, 92.3 ± 0.9
against HMC's 97.2 ± 0.3, five times the burn-in settled the spread but not the slowest
directions: 90.4 ± 0.8 with a ``slow_mixing`` error.) A trained MLP 64-150-10 (digits, γ = 1)
spreads to ‖w − w*‖² ≈ D/γ and stays there (growth 0.2%): nothing to report.

The statistic (``spread_growth``): ‖w − w*‖² at the full-loss evaluations ([T, C]), its mean
per chain over the first and the last quarter of the draws, the growth g_c of each chain;
G = mean(g)/mean(last quarter) and z = mean(g)/(sd(g)/√C), the chains being independent. From
growth ``GROWTH`` at z ``SIGNIFICANT`` the ``spreading`` finding is a warning (the error bar does
not hold the distance to equilibrium); ``escalate`` makes it an error where the chains are also
beyond the quadratic region and the run was shorter than the estimator's rules ask (automatic
lengths capped, ``draws_capped``, or a given ``num_draws`` below what the slowest direction
asks for, ``draws_below_rule``), and likewise the step check's ``drift_after_draws``
(λ̂ at ε still moving after the draws), whatever the size of the drift: on the deep linear
network 228-180-118-180-175 (rank 98, D = 115,020, λ = 15,677.5, m = 1, n = 10⁴, γ = 1) the
defaults read 11,613 ± 24 (−26%) with a drift of +129 ± 35 (1.1% of λ̂, under the 5% at which
the drift alone is an error), beyond the quadratic region (κ where the chains went 55× that at
w*) and with draws the rules wanted 15× longer: an average over a moving trace, of a run 15×
too short, in a region where λ̂ depends on how far the chains went, bounds nothing. Measured at
a warning only: the two-layer 8-6-8 of full rank at n = 2,000 spread by 31% through its
(uncapped) draws and read 28.89 ± 0.28 against HMC's 28.21 ± 0.15 (+2.4%).

Under a time budget (``numeric.budget``) a burn-in cut before its rules were met is a run shorter
than they ask, as capped draws are (``escalate``'s ``burn_in_cut``, ``Warmup.cut``); a budget that cut only the draws is not
(the burn-in's rules judged the chains relaxed). Measured on budget-cut runs of trained and
teacher networks (digits MLPs at 30 s, saddle checkpoints of a 400-parameter linear network at
20 s, 20 deep-linear teachers at 60 s; ``benchmarks/bench_budget_findings.py``): the four wrong
estimates no error caught (λ̂ 22.2 and 27.4 against 13.8 and 14.1, 52.1 and 104.7 against 12.4
and 12.7) were all still spreading beyond the quadratic region after a cut burn-in; counting a
cut of the draws as well caught none more and added a false alarm (46-25-23-41, 490.5 ± 4.9
against 482.5), and escalating a cut burn-in's spreading within the quadratic region added one
(9-24-30-38-25, 92.6 ± 0.7 against Aoyagi's 104.5 ± 9.1). Both estimators hand ``Draws.spread`` to it: ``estimate_llc``
‖w − w*‖² at its full-loss evaluations (``draws.sample``), ``estimate_llc_potential`` at every step
(``potential.warmup``; a warning there: it has no ``beyond_quadratic``).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from numeric.types import Finding

GROWTH = 0.10  # relative growth of the chains' mean ‖w − w*‖² across the draws
SIGNIFICANT = 3.0  # and its z over chains
MIN_POINTS = 8  # evaluations of ‖w − w*‖² below which the check is not made
TRANSIENT = ("spreading", "drift_after_draws")  # the findings ``escalate`` makes errors
SHORT = ("draws_capped", "draws_below_rule")  # a run shorter than the rules ask (``escalate``)


def spread_growth(spread: np.ndarray) -> tuple[float, float, float]:
    """(G, z, mean over the last quarter) of ‖w − w*‖² ``spread`` [T, C] (module docstring);
    z is nan with fewer than two chains, ±inf where every chain grew by the same amount."""
    x = np.asarray(spread, dtype=np.float64)
    q = max(x.shape[0] // 4, 1)
    first, last = x[:q].mean(axis=0), x[-q:].mean(axis=0)
    g = last - first
    scale = float(last.mean())
    growth = float(g.mean()) / scale if scale > 0 else math.nan
    if g.size < 2:
        return growth, math.nan, scale
    sd = float(g.std(ddof=1))
    if sd > 0:
        return growth, float(g.mean()) / (sd / math.sqrt(g.size)), scale
    return growth, (math.copysign(math.inf, float(g.mean())) if g.mean() != 0 else 0.0), scale


def still_spreading(
    spread: np.ndarray | None, alive: np.ndarray
) -> tuple[float, float, float] | None:
    """(G, z, mean over the last quarter) of ‖w − w*‖² [T, C] of the chains ``alive`` [C]
    (bool) where it grew by more than ``GROWTH`` at z > ``SIGNIFICANT``; None otherwise, and
    where fewer than ``MIN_POINTS`` evaluations were made (one chain has no z: None)."""
    if not spread_measured(spread):
        return None
    growth, z, last = spread_growth(spread[:, np.asarray(alive, dtype=bool)])
    if math.isfinite(growth) and growth > GROWTH and z > SIGNIFICANT:
        return growth, z, last
    return None


def check_spreading(spread: np.ndarray | None, alive: np.ndarray) -> tuple[Finding, ...]:
    """The ``spreading`` warning (module docstring) where ``still_spreading``."""
    if (found := still_spreading(spread, alive)) is None:
        return ()
    growth, z, last = found
    return (
        Finding(
            "spreading",
            "warning",
            "the chains were still moving away from w* through the draws: their mean ‖w − w*‖² "
            f"grew by {100 * growth:.0f}% from the first quarter of the draws to the last (to "
            f"{last:.4g}; z = {z:.1f} over {int(np.sum(alive))} chains). Where the loss is not the "
            "quadratic at w* λ̂ depends on how far they have spread, and the error bar does not "
            "hold the distance to the equilibrium value (the loss trace may look stationary); "
            "a longer num_burnin lets them settle, a larger gamma holds them nearer w*",
            {"growth": growth, "z": z, "spread": last},
        ),
    )


def spread_measured(spread: np.ndarray | None) -> bool:
    """‖w − w*‖² was evaluated often enough for ``check_spreading`` to be made."""
    return spread is not None and spread.ndim == 2 and spread.shape[0] >= MIN_POINTS


def escalate(findings: list[Finding], *, burn_in_cut: bool = False) -> list[Finding]:
    """``findings`` with the ``TRANSIENT`` warnings (``spreading``, and the step check's
    ``drift_after_draws``) made errors where ``beyond_quadratic`` is among them and the run was
    shorter than the estimator's rules ask: the time budget ended the burn-in (``burn_in_cut``,
    ``Warmup.cut``), or ``draws_capped`` (automatic lengths) or ``draws_below_rule``
    (``num_draws`` given) is among them too (module docstring)."""
    codes = {f.code for f in findings}
    short = [f for f in findings if f.code in SHORT]
    if "beyond_quadratic" not in codes or not (short or burn_in_cut):
        return findings
    if burn_in_cut:
        why = (
            "the time budget ended the burn-in before its rules were met (time_budget), so the "
            "chains were never judged relaxed"
        )
    elif short[0].code == "draws_capped":
        why = "the run was shorter than its own rules asked (draws_capped)"
    else:
        why = (
            f"the run was shorter than the estimator's rules ask (≈ {short[0].values['asked']:.0f} "
            f"draws per chain for the slowest direction, num_draws = {short[0].values['given']:.0f} "
            "given: draws_below_rule)"
        )
    return [
        replace(
            f,
            severity="error",
            message=f.message
            + f". Here the chains are beyond the quadratic region (beyond_quadratic) and {why}: "
            "λ̂ averages a transient and cannot be used as it is",
        )
        if f.code in TRANSIENT and f.severity == "warning"
        else f
        for f in findings
    ]
