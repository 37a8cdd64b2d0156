"""Findings about a run: what went wrong or looks suspicious, as messages with their numbers
(``Finding``, in ``numeric.types``; each code's meaning in ``numeric.findings.codes``).

The checks here read the draws' numbers alone; a question that needs more of the run has a module
of its own beside this one. Each ``check_*`` is a plain function of arrays and numbers
(``numeric.stats.diagnostics`` computes them) returning a tuple of ``Finding``s, empty when all is
well; ``format_findings`` renders them. The order in which an estimator lists them is its own
(``numeric.run.estimate_llc``, ``numeric.potential``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from scipy import stats

from numeric.errors import InvalidInputError
from numeric.stats.diagnostics import _as_2d, ess, rhat_limit
from numeric.types import Finding

ERROR_ESS = 30.0  # below this many effective draws an estimate (or a slow direction) is an error


SEVERITY = {"info": 1, "warning": 2, "error": 3}  # a finding's severity, by rank


def worst_severity(findings: Iterable[Finding]) -> str:
    """The most severe of ``findings``: "none", "info", "warning" or "error"."""
    return max((f.severity for f in findings), key=lambda s: SEVERITY.get(s, 0), default="none")


def format_findings(findings: Iterable[Finding]) -> str:
    """One line per finding; ``"no findings"`` when there are none."""
    listed = None if isinstance(findings, (str, bytes, Finding)) else tuple(findings)
    if listed is None or not all(isinstance(f, Finding) for f in listed):
        raise InvalidInputError("format_findings takes a list of Findings (est.diagnostics)")
    return "\n".join(map(str, listed)) if listed else "no findings"


# --------------------------------------------------------------------------------------------
# Checks: each returns a tuple of findings (possibly empty).


def check_below_reference(delta: np.ndarray, nbeta: float, stderr: float) -> tuple[Finding, ...]:
    """Mean of L(w) − L(w*) significantly below zero (by 3 standard errors): w* is not a local
    minimum, and λ̂ < 0 is not a learning coefficient at all. An error: at a saddle of a deep
    linear network with γ = 1 the chains ran downhill to λ̂ = −853, which a warning let pass as an
    estimate."""
    m = float(np.mean(delta)) * nbeta
    if m + 3 * stderr < 0:
        return (
            Finding(
                "below_reference_loss",
                "error",
                f"sampled loss is below L(w*) on average: λ̂ = nβ·(E[L] − L(w*)) = {m:.4g} "
                f"(stderr {stderr:.2g}) is negative, so it is not a learning coefficient: w* is "
                "not a local minimum of L_n and the chains ran downhill. Train further (or check "
                "w*); to measure a saddle or plateau on purpose, raise gamma until λ̂ > 0 (the "
                "localisation then holds the chains near w*, and λ̂ depends on γ)",
                {"llc": m, "stderr": stderr},
            ),
        )
    return ()


def low_ess_finding(ess_value: float, rhat: float, min_ess: float = 100.0) -> Finding:
    """ESS below ``min_ess``: a warning (the error bar is rough); an error below ``ERROR_ESS``
    (as for the slow directions, ``check_slow_mixing``): with a handful of effective draws the
    standard error is itself a guess, R-hat cannot see unmixed chains (its own noise,
    ``rhat_limit``, is then ~1 + 8/ESS for 4 chains) and the chains may still be relaxing.
    Measured: a 2,091-parameter deep linear network with 200 + 400 steps gave λ̂ = 4.6 ± 0.9
    against λ = 165 at ESS 5.6 and R-hat 1.90, which a warning let pass."""
    if ess_value >= ERROR_ESS:
        return Finding(
            "low_ess",
            "warning",
            f"effective sample size {ess_value:.0f} < {min_ess:.0f}: the error bar is "
            "unreliable; run more draws or chains",
            {"ess": ess_value},
        )
    return Finding(
        "low_ess",
        "error",
        f"effective sample size {ess_value:.1f} < {ERROR_ESS:.0f} (split R-hat {rhat:.2f}): the "
        "estimate cannot be trusted, the chains have not mixed and may still be moving away "
        "from w*; run longer (leave num_draws and num_burnin None for the automatic lengths, "
        "or raise them several-fold)",
        {"ess": ess_value, "rhat": rhat},
    )


def relieve_low_ess(
    findings: list[Finding], *, budget_cut: bool, spread_checked: bool
) -> list[Finding]:
    """``findings`` with a ``low_ess`` error made a warning where the time budget cut the run's
    burn-in or draws (``budget_cut``) and the chains' spread was measured (``spread_checked``),
    so that a relaxation still under way has findings of its own: ``spreading`` (an error after
    a cut burn-in, ``spreading.escalate``) and ``still_relaxing``. The few effective draws are then
    the budget's, and what they make rough is the error bar, not λ̂. Measured on 46 runs of
    trained and teacher networks at a time budget (``benchmarks/bench_budget_findings.py``): as
    an error it fired on 16 of the 36 estimates within 3σ of their reference; the two wrong
    estimates it alone flagged were still spreading beyond the quadratic region after a cut
    burn-in, which ``spreading.escalate`` makes an error."""
    if not (budget_cut and spread_checked):
        return findings
    return [
        Finding(
            "low_ess",
            "warning",
            f"effective sample size {f.values['ess']:.1f} < {ERROR_ESS:.0f} (split R-hat "
            f"{f.values['rhat']:.2f}) in a run the time budget cut: the error bar is rough; "
            "the chains' spread and λ̂'s drift were checked for a relaxation still under way "
            "(spreading, still_relaxing); a larger time_budget for a precise λ̂",
            f.values,
        )
        if f.code == "low_ess" and f.severity == "error"
        else f
        for f in findings
    ]


def check_mixing(
    per_chain: np.ndarray,
    per_chain_stderr: np.ndarray,
    rhat: float,
    ess_value: float,
    *,
    min_ess: float = 100.0,
    max_rhat: float = 1.05,
) -> tuple[Finding, ...]:
    """Low ESS, R-hat above ``rhat_limit`` (``max_rhat``, or R-hat's own noise at this ESS when
    larger), or per-chain estimates that disagree beyond their errors (χ²; pass the chain means'
    pooled standard error, ``chain_mean_stderr``, where chains are short: per-chain errors from a
    few hundred draws are biased low)."""
    out: list[Finding] = []
    if np.isfinite(ess_value) and ess_value < min_ess:
        out.append(low_ess_finding(ess_value, rhat, min_ess))
    limit = rhat_limit(ess_value, per_chain.size, max_rhat)
    if np.isfinite(rhat) and rhat > limit:
        out.append(
            Finding(
                "rhat",
                "warning",
                f"split R-hat {rhat:.3f} > {limit:.3g}: chains have not mixed",
                {"rhat": rhat, "limit": limit},
            )
        )
    c = per_chain.size
    se = np.asarray(per_chain_stderr, dtype=np.float64)
    if c >= 2 and np.all(np.isfinite(se)) and np.all(se > 0):
        wts = 1 / se**2
        mu = np.sum(wts * per_chain) / np.sum(wts)
        chi2 = float(np.sum(wts * (per_chain - mu) ** 2))
        p = float(stats.chi2.sf(chi2, df=c - 1))
        if p < 1e-3:
            out.append(
                Finding(
                    "chains_disagree",
                    "warning",
                    f"per-chain estimates disagree beyond their standard errors "
                    f"(χ² = {chi2:.1f} on {c - 1} dof, p = {p:.1g}): chains sample different "
                    "regions or have not converged",
                    {"chi2": chi2, "dof": float(c - 1), "p_value": p},
                )
            )
    return tuple(out)


def check_drift(delta: np.ndarray, nbeta: float) -> tuple[Finding, ...]:
    """Geweke-style drift: mean of the first 20% of draws vs the last 50% (z with ESS errors)."""
    x = _as_2d(delta) * nbeta
    _c, t = x.shape
    if t < 40:
        return ()
    a, b = x[:, : t // 5], x[:, t // 2 :]
    ea, eb = ess(a), ess(b)
    if not (np.isfinite(ea) and np.isfinite(eb)) or ea <= 1 or eb <= 1:
        return ()
    se = np.sqrt(a.var(ddof=1) / ea + b.var(ddof=1) / eb)
    if se <= 0:
        return ()
    z = float((a.mean() - b.mean()) / se)
    if abs(z) > 4:
        return (
            Finding(
                "drift",
                "warning",
                f"the loss trace still drifts after burn-in (first 20% vs last 50% of draws: "
                f"{a.mean():.4g} vs {b.mean():.4g}, z = {z:.1f}); increase num_burnin",
                {"z": z, "early": float(a.mean()), "late": float(b.mean())},
            ),
        )
    return ()


def check_step_size(
    noise_to_drift: float,
    minibatch_inflation: float,
    *,
    max_inflation: float = 1.1,
    error_inflation: float = 2.0,
) -> tuple[Finding, ...]:
    """Step-size health.

    ``noise_to_drift``: RMS ratio ‖√ε ξ‖ / ‖(ε/2)∇U‖ over the draws. In equilibrium on a quadratic
    well it is ≈ 2/√(ε·mean curvature) ≫ 1; near or below 1 the chain is optimising, not sampling.
    ``minibatch_inflation``: the predicted factor by which gradient noise inflates the sampling
    temperature of the directions λ̂ counts (``warmup.friction.minibatch_heating``), and so the
    estimate; where the chains spread along flat directions the estimate can move by several times
    that. A warning above ``max_inflation``, an error above ``error_inflation``: an estimate the
    prediction doubles is not one to report (least squares, n = 200, plain minibatch gradients:
    predicted 1.51 at nβ = 10⁵ and 6.1 at 10⁶, where the full-data losses read 2.23 and 8.27
    against λ = 3/2, and the minibatch observable 1.15 ± 0.19 and 0.97 ± 0.91).
    """
    out: list[Finding] = []
    if np.isfinite(noise_to_drift) and noise_to_drift < 1.5:
        out.append(
            Finding(
                "step_size_drift",
                "warning",
                f"the drift term is as large as the noise term (noise/drift = {noise_to_drift:.2f}"
                "): the step size is too large for this nβ or the chain is far from equilibrium",
                {"noise_to_drift": noise_to_drift},
            )
        )
    if np.isfinite(minibatch_inflation) and minibatch_inflation > max_inflation:
        out.append(
            Finding(
                "minibatch_noise",
                "error" if minibatch_inflation > error_inflation else "warning",
                f"minibatch gradient noise inflates the temperature by ≈ {minibatch_inflation:.3f}"
                " (1 + ε·nβ²·Var(ĝ)/4 in the directions λ̂ counts): the estimate is biased upward;"
                " use a smaller step size, a larger batch, or gradient='control_variate'",
                {"inflation": minibatch_inflation},
            )
        )
    return tuple(out)


def divergence_findings(alive: np.ndarray, step_size: float, nbeta: float) -> tuple[Finding, ...]:
    """An error finding naming the chains that diverged (and were dropped); at least one is
    alive (``chains.check_block`` raises when none is)."""
    if alive.all():
        return ()
    dead = np.nonzero(~alive)[0].tolist()
    return (
        Finding(
            "divergence",
            "error",
            f"chains {dead} diverged (non-finite or exploding loss) and were dropped; the step "
            f"size ε = {step_size:.3g} is probably too large for nβ = {nbeta:.4g}",
            {"num_diverged": float(len(dead))},
        ),
    )


def low_acceptance(rate: float) -> tuple[Finding, ...]:
    """MALA's mean acceptance below 0.2: the chains mix slowly; none accepted at all: the chains
    never left their start, and λ̂ (0 ± 0 there) is no estimate (an error)."""
    if not rate < 0.2:
        return ()
    if rate == 0:
        return (
            Finding(
                "low_acceptance",
                "error",
                "MALA accepted no proposal: the chains never left their start, so λ̂ is not an "
                "average over the posterior (its 0 ± 0 is no estimate); reduce step_size, or "
                "leave it None for the automatic step",
                {"acceptance": rate},
            ),
        )
    return (
        Finding(
            "low_acceptance",
            "warning",
            f"MALA acceptance {rate:.2f} is low: the chains mix slowly; reduce step_size",
            {"acceptance": rate},
        ),
    )


def nonfinite_proposals(fraction: float) -> tuple[Finding, ...]:
    """MALA proposals rejected because U was NaN or inf there: the chains sampled the target
    restricted to where it is finite."""
    if not fraction > 0:
        return ()
    return (
        Finding(
            "nonfinite_potential",
            "warning",
            f"{100 * fraction:.3g}% of the proposals during the draws landed where U (or ∇U) is "
            "NaN or inf and were rejected: the chains sample the target restricted to where K is "
            "finite. That is right only if K is undefined there (its domain); if K should be "
            "finite everywhere near w*, it overflows or has a bug",
            {"fraction": fraction},
        ),
    )
