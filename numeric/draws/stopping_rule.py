r"""The sequential stopping rule: when the draws end (``draws_until_precise``).

Automatic draws (``numeric.draws.sample``) are extended (at most ``MAX_DRAWS`` per chain,
``MAX_EXTENSIONS`` extensions, each projected from the standard error so far) until the answer is
known: λ̂'s standard error at most ``rtol``·|λ̂| (or ``target_stderr``), its loss trace at least
``MIN_LOSS_ESS`` effective draws (the burn-in's τ can be far too short: 4 chains of a
10⁶-parameter deep linear network gave ESS 52 from 4,099 draws), and λ̂ no longer moving between
the halves of the draws. The slow directions' mixing (``SLOW_ESS`` of ‖w − w*‖² or of the drift
on them) is reported (``slow_mixing``), not a length: λ̂ is what is estimated. Where the rule ends
unmet: ``still_relaxing`` (λ̂ still moving), ``imprecise``. The potential estimator extends on
the positions' ESS (``draws_until_mixed``).

``check_precision`` words what the rule did not reach where the draws ended; ``precision_of``
is the ``Precision`` (``numeric.types``) it reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from numeric.stats.chain_stats import chain_stats, floored, full_data_stderr
from numeric.stats.diagnostics import direction_ess, direction_rhat
from numeric.types import Finding, Precision, Trace

MAX_EXTENSIONS = 6  # rounds of added draws at most


def draws_until_mixed(
    draws: Callable[[int], Trace],
    num_draws: int,
    observable: Callable[[Trace], np.ndarray],
    *,
    extend: bool,
    target_ess: float,
    max_draws: int,
    report: bool = True,
    rounds: int = MAX_EXTENSIONS,
) -> tuple[Trace, int, tuple[float, float], tuple[tuple[int, float], ...]]:
    """``num_draws`` draws and the (ESS, R-hat) of ``observable`` ([C, T, j]) over them; with
    ``extend``, draws are added until that ESS reaches ``target_ess`` (at most ``max_draws``
    per chain, ``rounds`` extensions, each sized from the ESS so far, and at least
    doubling the draws once the ESS stopped growing with them: a trace still drifting has an
    autocorrelation time that grows with its length). Returns the traces, the draws, the mixing
    and the (draws, ESS) after each measurement; without ``report`` the mixing is measured only
    as far as the extension needs (ESS; R-hat nan: ranking every draw costs as much as a tenth of
    the steps of a small model). R-hat is not a target: on K = w1²w2² the rank-based R-hat sees
    the chains' slow switching between the axes, which moves λ̂ little (the z-scores stay
    calibrated) and would cost runs of 15,000+ draws."""
    tr = draws(num_draws)
    obs = observable(tr) if extend or report else None
    pos_ess = direction_ess(obs) if obs is not None else math.nan
    history = [(num_draws, pos_ess)] if extend else []
    for _ in range(rounds if extend else 0):
        if not (math.isfinite(pos_ess) and pos_ess < target_ess):
            break
        want = math.ceil(num_draws * (1.1 * target_ess / max(pos_ess, 1.0) - 1.0))
        if len(history) > 1 and pos_ess <= history[-2][1]:  # the ESS did not grow: drifting
            want = max(want, num_draws)
        more = min(want, max_draws - num_draws)
        if more <= 0:
            break
        tr = Trace.join([tr, draws(more)])
        num_draws += more
        obs = observable(tr)
        pos_ess = direction_ess(obs)
        history.append((num_draws, pos_ess))
    rhat = direction_rhat(obs) if report and obs is not None else math.nan
    return tr, num_draws, (pos_ess, rhat), tuple(history)


def precision_of(
    delta: np.ndarray,
    nbeta: float,
    rtol: float,
    target: float | None,
    full: np.ndarray | None = None,
) -> Precision:
    """``Precision`` of nβ·``delta`` [chain, draw]: se = max(between-chain, ESS-based), the
    standard error ``numeric.result.llc_estimate`` reports, at least the one the full-data losses
    ``full`` [chain, evaluation] give where the draws are on minibatches
    (``chain_stats.full_data_stderr``); wanted = max(``rtol``·|λ̂|, ``target``)."""
    st = floored(chain_stats(delta, nbeta), full_data_stderr(full, nbeta))
    half = delta.shape[1] // 2
    if half >= 4:
        first, second = chain_stats(delta[:, :half], nbeta), chain_stats(delta[:, half:], nbeta)
        drift, drift_se = second.mean - first.mean, math.hypot(first.stderr, second.stderr)
    else:
        drift, drift_se = math.nan, math.nan
    wanted = max(rtol * abs(st.mean), target or 0.0)
    return Precision(st.mean, st.stderr, wanted, st.ess, drift, drift_se)


def draws_until_precise(
    draws: Callable[[int], Trace | None],
    num_draws: int,
    precision: Callable[[Trace], Precision],
    *,
    max_draws: int,
    stopped: Callable[[], bool],
    rounds: int = MAX_EXTENSIONS,
) -> tuple[Trace, int, tuple[tuple[int, float], ...], Precision]:
    """The sequential stopping rule of automatic draws: ``num_draws`` draws, then more
    (``Precision.more_draws``) until λ̂'s standard error reaches its target, its loss trace has
    ``MIN_LOSS_ESS`` effective draws and λ̂ no longer moves between the halves of the draws, or
    ``max_draws`` per chain, ``rounds`` extensions, or ``stopped()`` (the time budget or Ctrl-C
    ended the draws, or they are to become burn-in: ``numeric.draws.burn_in_extension``). Returns the traces, the draws, (draws, ESS) after each measurement and
    the last ``Precision``. ``draws(k)`` returns None where it was stopped before a step: the
    first call cannot be (``numeric.draws.sample`` runs its first block past the clock)."""
    tr = draws(num_draws)
    if tr is None:
        raise RuntimeError("the draws were stopped before their first step")
    num_draws = tr.steps
    p = precision(tr)
    history = [(num_draws, p.ess)]
    for _ in range(rounds):
        if p.done or stopped():
            break
        more = min(p.more_draws(num_draws), max_draws - num_draws)
        if more <= 0:
            break
        added = draws(more)
        if added is None:  # the clock ran out just as the extension began
            break
        tr = Trace.join([tr, added])
        num_draws = tr.steps
        p = precision(tr)
        history.append((num_draws, p.ess))
    return tr, num_draws, tuple(history), p


UNSETTLED = 0.05  # λ̂'s move between the halves of its draws, as a share of λ̂, that is an error


def check_precision(p: Precision | None, automatic: bool) -> tuple[Finding, ...]:
    """What the stopping rule did not reach where the draws ended (``Precision``):
    ``still_relaxing`` where λ̂ over the second half of the draws differs from the first half by
    ``SETTLED_Z`` standard errors (an error where the move is also over ``UNSETTLED`` of λ̂: the
    estimate is then an average over a trace still on its way, as on a trained 64-150-10 MLP whose
    automatic run read 58.2 ± 2.5 where a 4× longer one read 45.6 ± 1.4); ``imprecise`` (info)
    where automatic draws ended above their standard-error target."""
    if p is None or not math.isfinite(p.mean):
        return ()
    out = []
    if not p.settled:
        share = abs(p.drift) / abs(p.mean) if p.mean else math.inf
        error = share > UNSETTLED
        out.append(
            Finding(
                "still_relaxing",
                "error" if error else "warning",
                f"λ̂ moved by {p.drift:+.3g} ± {p.drift_stderr:.2g} ({share:.1%} of λ̂ = "
                f"{p.mean:.4g}) from the first half of the draws to the second: the chains were "
                "still relaxing, and λ̂ leans toward where they started; "
                + ("it cannot be used as it is; " if error else "")
                + "run longer (num_burnin several times the automatic one), or raise gamma so "
                "that they settle sooner",
                {"drift": p.drift, "drift_stderr": p.drift_stderr, "share": share},
            )
        )
    if automatic and not p.precise:
        out.append(
            Finding(
                "imprecise",
                "info",
                f"the draws ended at a standard error of {p.stderr:.2g}, above the target "
                f"{p.wanted:.2g} (rtol·|λ̂| or target_stderr): more draws (num_draws), more "
                "chains, or a looser rtol",
                {"stderr": p.stderr, "wanted": p.wanted},
            )
        )
    return tuple(out)
