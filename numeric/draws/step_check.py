r"""The step-size check: λ̂ again at ε/2, and the first-order extrapolation to ε → 0.

SGLD's estimate carries a bias that is first order in the step ε: the discretisation (for ReLU
networks, whose loss is not smooth, as well as where the chains leave the quadratic region) and
the minibatch gradient noise, whose extra variance ε²·Var(ĝ)/4 per step heats the chains by a
factor that grows with ε. Neither is in the error bar. On a ReLU MLP 64-150-10 trained on digits
(11,260 parameters, nβ = 187, batch 256) λ̂ was 52.7, 48.3 at ε = 8.24·10⁻⁵, 3.1·10⁻⁵ and, with
full-batch gradients, 47.1, 45.7: both extrapolate to ≈ 45, 15% below the default run.

After the draws the same chains go on at ε/2: ``num_relax`` steps to forget ε (8 autocorrelation
times of the loss at ε, which are 4 at ε/2, and 3 e-folding times at ε/2 of the slowest relevant
direction: the heating of the softer directions relaxes more slowly than the loss decorrelates;
at most a quarter of the draws), then ``num_draws`` = half the draws at ε; then back at ε, as
many steps of relaxation and as many draws again. With λ̂(ε) = λ₀ + c·ε + O(ε²):

    bias at ε   b = λ̂(ε) − λ₀ ≈ 2·(λ̂_ε − λ̂(ε/2)),      λ₀ ≈ 2·λ̂(ε/2) − λ̂_ε   (Richardson)

with λ̂_ε the mean of λ̂ over the run's last ``num_draws`` draws and over the draws at ε after the
check. The three stretches are equally spaced in time, so a linear drift of the chains cancels
from b, and λ₀ is read at the check's time rather than over the run's earlier draws. Comparing
λ̂(ε/2) with the run before it alone reads any drift as a step bias: on eight deep linear
networks (125–836 parameters, n = 10⁴, γ = 1) that comparison gave a negative b on all seven that
finished (up to −2.96 se), where the loss was still rising along the run (15-8-8-10-7: λ̂ over
the quarters of the draws 32.2, 31.8, 33.6, 36.7, then 37.9 at ε/2). Where λ̂ at ε after the
check differs from λ̂ over the last draws by ``SIGNIFICANT`` standard errors (``trend``), the
chains had not reached equilibrium and the ``drift_after_draws`` finding says so (an error where
the trend exceeds ``UNSETTLED`` = 5% of λ̂: on a 9,765-parameter deep linear network λ̂ read
637.3 ± 4.0 while the trend was +58.8 ± 8.0; and at any size where the chains are beyond the
quadratic region with capped draws, ``spreading.escalate``); no correction is
applied then (a drift that is not linear in time does not cancel from b: on the small-mode
notebook's 74-52-59-32 linear network, λ = 1,150, a run at 950 with such a drift would have been
"corrected" to 826).

Per chain, errors added in quadrature (the stretches are treated as independent). When
|b| is at least ``SIGNIFICANT`` standard errors the estimate becomes the extrapolation (its error
≈ 4× larger: the price of removing the bias) and the ``step_size_bias`` finding says so; otherwise
the estimate stays λ̂(ε) and ``LLCEstimate.step_check`` records b ± se (a bound on the bias).

The relaxation can be too short (then the extrapolation under-corrects): on the MLP above the
check's λ̂(ε/2) was 49.35 ± 0.48 over 10,000 draws and 48.29 ± 0.30 over 40,000 (a 4× longer run),
a hint (z = 1.9) of that. ``drift`` is λ̂ over the second half of the check's draws minus the first;
where it is significant and runs from λ̂(ε) towards λ̂(ε/2) the check's first half becomes
relaxation and as many draws are added (at most ``MAX_EXTENSIONS`` times), and where it still is
at the end the finding says so. Where |b| lies between ``UNDECIDED`` and ``SIGNIFICANT``
standard errors the check's draws at ε/2 are doubled (at most ``MAX_EXTENSIONS`` times) until it
is decided: the sequential stopping rule makes the draws, and with them the check, as short as
λ̂'s own precision allows, which can leave a real bias just short of significance.
"""

from __future__ import annotations

import math

import numpy as np

from numeric.result.llc_estimate import StepCheck
from numeric.sampler.chains import Chains
from numeric.stats.chain_stats import ChainStats, chain_stats
from numeric.stats.diagnostics import ess
from numeric.stats.observable import observable
from numeric.types import CheckDraws, Finding, Trace, Tuning
from numeric.warmup.burn_in import relax as relax_steps

SIGNIFICANT = 3.0  # |b| / se(b) from which the extrapolation replaces λ̂(ε)
UNDECIDED = 2.0  # |b| / se(b) from which (below SIGNIFICANT) the check draws more at ε/2
# a significant trend at ε across the check larger than this fraction of λ̂ is an error finding
UNSETTLED = 0.05
RELAX_TAUS = 8.0  # relaxation at ε/2, in autocorrelation times of the loss at ε
RELAX_EFOLDS = 3.0  # and in e-folding times at ε/2 of the slowest relevant direction
MIN_RELAX, MIN_DRAWS = 50, 100
# times the check's first half becomes relaxation (and as many steps are drawn again) while its
# λ̂ still moves away from λ̂(ε)
MAX_EXTENSIONS = 2


def check_lengths(
    num_draws: int, ess: float, num_chains: int, efold: float = math.nan
) -> tuple[int, int]:
    """(relaxation steps, draws) at ε/2 after ``num_draws`` draws at ε whose loss trace had
    effective sample size ``ess`` over ``num_chains`` chains (τ = C·T/ESS steps at ε), where
    the slowest relevant direction has ``efold`` e-folding steps at ε/2 (nan: none known)."""
    tau = num_chains * num_draws / ess if ess > 0 and math.isfinite(ess) else num_draws
    want = max(RELAX_TAUS * tau, RELAX_EFOLDS * efold if math.isfinite(efold) else 0.0)
    relax = int(min(max(MIN_RELAX, math.ceil(want)), max(MIN_RELAX, num_draws // 4)))
    return relax, max(MIN_DRAWS, num_draws // 2)


def run_check(chains: Chains, tuning: Tuning, draws: Trace, kappa_min: float) -> CheckDraws:
    """The chains continued at ε/2 after ``draws`` at ε (``check_lengths``; ``kappa_min``: the
    slowest relevant curvature, nan when none is known): relaxation, the check's draws, then the
    same relaxation and as many draws at ε again."""
    alive = chains.alive.cpu().numpy()
    delta = _delta(draws, alive)
    e = ess(delta) if delta.shape[1] >= 4 else float(delta.size)
    half = tuning._replace(step_size=tuning.step_size / 2)
    efold = relax_steps(half, kappa_min)
    relax, count = check_lengths(draws.steps, e, int(alive.sum()), efold)
    chains.phase("step check at ε/2", relax + count)
    chains.advance(relax, half)
    trace = chains.advance(count, half)
    at_step = float(delta.mean())
    for _ in range(MAX_EXTENSIONS):  # still relaxing: the first half becomes relaxation
        if not _relaxing(trace, chains.alive.cpu().numpy(), at_step):
            break
        keep = trace.steps // 2
        chains.phase("step check at ε/2", count - keep)
        relax += trace.steps - keep
        rest = trace.window(trace.steps - keep)
        trace = Trace.join([rest, chains.advance(count - keep, half)])
    for _ in range(MAX_EXTENSIONS):  # a bias between 2 and 3 se: draw until it is decided
        if not _undecided(draws, trace, chains.alive.cpu().numpy()):
            break
        chains.phase("step check at ε/2", trace.steps)
        trace = Trace.join([trace, chains.advance(trace.steps, half)])
    count = trace.steps
    chains.phase("step check back at ε", relax + count)
    chains.advance(relax, tuning)
    after = chains.advance(count, tuning)
    last = min(count, draws.steps)
    before = draws.window(draws.steps - last)
    return CheckDraws(trace, relax, before, after)


def _undecided(draws: Trace, half: Trace, alive: np.ndarray) -> bool:
    """The bias b = 2·(λ̂_ε − λ̂(ε/2)), λ̂_ε over as many of the run's last draws, is between
    ``UNDECIDED`` and ``SIGNIFICANT`` of its standard errors: more draws at ε/2 decide it (on a
    regression with Euler steps at ε·κ ≈ 1.2 the check read b = 1.14 ± 0.39, 2.9 se, and left
    λ̂ = 2.14 against λ_β = 1.50 uncorrected and unflagged)."""
    last = min(half.steps, draws.steps)
    at, at_half = _stats(draws.window(draws.steps - last), alive, 1.0), _stats(half, alive, 1.0)
    se = 2 * math.hypot(at.stderr, at_half.stderr)
    z = abs(2 * (at.mean - at_half.mean)) / se if se > 0 else math.nan
    return bool(UNDECIDED <= z < SIGNIFICANT)


def _relaxing(trace: Trace, alive: np.ndarray, at_step: float) -> bool:
    """The check's λ̂ moved, from its first half to its second, by at least ``SIGNIFICANT``
    standard errors away from λ̂(ε) (``at_step``, the mean loss difference at ε)."""
    drift, se = _drift(trace, alive, 1.0)
    away = at_step - float(_delta(trace, alive).mean())
    return bool(abs(drift) >= SIGNIFICANT * se and drift * away < 0)


def _delta(trace: Trace, alive: np.ndarray) -> np.ndarray:
    """L_B(w_t) − R_t [live chain, step] in float64, as ``findings.standard.summarise_chains``."""
    return observable(trace, alive)


def _stats(trace: Trace, alive: np.ndarray, nbeta: float) -> ChainStats:
    return chain_stats(_delta(trace, alive), nbeta)


def _drift(trace: Trace, alive: np.ndarray, nbeta: float) -> tuple[float, float]:
    """λ̂ over the second half of ``trace`` minus the first half, and its standard error."""
    t = trace.steps // 2
    if t < 4:
        return math.nan, math.nan
    first = _stats(trace.window(0, t), alive, nbeta)
    second = _stats(trace.window(t), alive, nbeta)
    return second.mean - first.mean, math.hypot(first.stderr, second.stderr)


def check_bias(
    main: ChainStats, check: CheckDraws, alive: np.ndarray, nbeta: float, step_size: float
) -> tuple[StepCheck, ChainStats | None, tuple[Finding, ...]]:
    """The check's numbers; when the bias is significant (and λ̂ at ε did not drift across the
    check), the extrapolated per-chain statistics (per chain 2·λ̂_c(ε/2) − λ̂_ε,c) and the
    ``step_size_bias`` finding; ``drift_after_draws`` when λ̂ at ε moved from the run's last draws
    to the draws after the check. Without ``before``/``after`` (a check that did not return to
    ε) λ̂_ε is the run's λ̂(ε)."""
    half = _stats(check.trace, alive, nbeta)
    drift, drift_se = _drift(check.trace, alive, nbeta)
    if check.before is not None and check.after is not None:
        before, after = _stats(check.before, alive, nbeta), _stats(check.after, alive, nbeta)
        at_step = 0.5 * (before.per_chain + after.per_chain)
        at_step_se = 0.5 * math.hypot(before.stderr, after.stderr)
        at_step_cms = 0.5 * math.hypot(before.chain_mean_stderr, after.chain_mean_stderr)
        trend, trend_se = after.mean - before.mean, math.hypot(before.stderr, after.stderr)
        after_mean, after_se = after.mean, after.stderr
    else:
        at_step, at_step_se, at_step_cms = main.per_chain, main.stderr, main.chain_mean_stderr
        trend = trend_se = after_mean = after_se = math.nan
    per_bias = 2 * (at_step - half.per_chain)
    bias, bias_se = float(per_bias.mean()), 2 * math.hypot(at_step_se, half.stderr)
    # λ₀ = 2·λ̂(ε/2) − λ̂_ε, at the check's time: where the chains drift, the run's λ̂(ε) (an
    # average over earlier draws) would carry the drift into λ₀. The stretches are disjoint.
    per_ext = 2 * half.per_chain - at_step
    ext = float(per_ext.mean())
    ext_se = math.hypot(2 * half.stderr, at_step_se)
    ext_cms = math.hypot(2 * half.chain_mean_stderr, at_step_cms)
    # a drift that is not linear in time does not cancel from b: no correction is applied then
    applied = bool(abs(bias) >= SIGNIFICANT * bias_se) and not _drifting(trend, trend_se)
    result = StepCheck(
        step_size,
        check.num_relax,
        check.trace.steps,
        main.mean,
        main.stderr,
        half.mean,
        half.stderr,
        bias,
        bias_se,
        ext,
        ext_se,
        applied,
        drift,
        drift_se,
        after_mean,
        after_se,
        trend,
        trend_se,
    )
    found = _drift_after_draws(result)
    if not applied:
        return result, None, found
    std = float(per_ext.std(ddof=1)) if per_ext.size > 1 else float("nan")
    stats = ChainStats(ext, std, ext_se, per_ext, main.ess, main.rhat, ext_cms)
    return result, stats, (_finding(result), *found)


def _drifting(trend: float, trend_se: float) -> bool:
    """λ̂ at ε after the check differs from λ̂ over the run's last draws by ``SIGNIFICANT`` se."""
    return bool(abs(trend) >= SIGNIFICANT * trend_se)


def _drift_after_draws(c: StepCheck) -> tuple[Finding, ...]:
    """The ``drift_after_draws`` finding (``_drifting``), an error where the trend exceeds
    ``UNSETTLED``·|λ̂| over the run's last draws (the number is then not an equilibrium
    average, whatever its error bar says); it says when a significant b was therefore not applied."""
    if not _drifting(c.trend, c.trend_stderr):
        return ()
    before = c.llc_after_check - c.trend
    unsettled = abs(c.trend) > UNSETTLED * abs(before)
    ses = abs(c.trend) / c.stderr_at_step if c.stderr_at_step > 0 else math.inf
    unapplied = (
        f"; the step-size check's b = {c.bias:+.3g} ± {c.bias_stderr:.2g} was not applied, "
        "since a drift that is not linear in time does not cancel from it"
        if abs(c.bias) >= SIGNIFICANT * c.bias_stderr
        else ""
    )
    side = "above" if c.trend > 0 else "below"
    verdict = (
        f"more than {UNSETTLED:.0%} of λ̂ and {ses:.2g} of its standard errors: the estimate "
        f"cannot be used as it is (the equilibrium value likely lies {side} it); "
        if unsettled
        else ""
    )
    return (
        Finding(
            "drift_after_draws",
            "error" if unsettled else "warning",
            f"λ̂ at ε moved from {before:.4g} over the last {c.num_draws} "
            f"draws to {c.llc_after_check:.4g} over as many draws after the step-size check "
            f"({c.trend:+.3g} ± {c.trend_stderr:.2g}, {2 * (c.num_relax + c.num_draws)} steps "
            "later): the chains had not reached equilibrium, and λ̂ is an average over a moving "
            f"trace; {verdict}a longer num_burnin (and num_draws) lets them settle" + unapplied,
            {"trend": c.trend, "trend_stderr": c.trend_stderr},
        ),
    )


def _finding(c: StepCheck) -> Finding:
    rel = c.bias / c.extrapolated if c.extrapolated else math.nan
    return Finding(
        "step_size_bias",
        "warning",
        f"the step biased λ̂: {c.llc_at_step:.4g} ± {c.stderr_at_step:.2g} at ε = "
        f"{c.step_size:.3g}, {c.llc_at_half_step:.4g} ± {c.stderr_at_half_step:.2g} with the "
        f"same chains at ε/2 (and {c.llc_after_check:.4g} ± {c.stderr_after_check:.2g} at ε "
        f"after it), a bias of {c.bias:+.3g} ± {c.bias_stderr:.2g} ({rel:+.1%}) at ε "
        "(first order in ε: discretisation and minibatch gradient noise); the estimate is the "
        f"extrapolation to ε → 0, {c.extrapolated:.4g} ± {c.extrapolated_stderr:.2g}. To shrink "
        "the bias instead (and the error bar with it): a smaller step_scale, or a larger "
        "batch_size" + _still_relaxing(c),
        {
            "bias": c.bias,
            "bias_stderr": c.bias_stderr,
            "llc_at_step": c.llc_at_step,
            "llc_at_half_step": c.llc_at_half_step,
        },
    )


def _still_relaxing(c: StepCheck) -> str:
    """The finding's warning when λ̂ at ε/2 was still moving away from λ̂(ε) during the check."""
    if not (abs(c.drift) >= SIGNIFICANT * c.drift_stderr and c.drift * c.bias < 0):
        return ""
    return (
        f". λ̂ at ε/2 was still moving during the check ({c.drift:+.3g} ± {c.drift_stderr:.2g} "
        "from its first half to its second): the chains had not finished relaxing from ε, so the "
        "bias is likely larger and the extrapolation still on the side of λ̂(ε); a longer run "
        "(num_draws) gives the check more time"
    )
