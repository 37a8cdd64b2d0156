"""Whether the slowest directions mixed: the ``slow_mixing``, ``draws_capped`` and
``draws_below_rule`` findings.

``check_slow_mixing`` and ``check_draws_capped`` word them from numbers. ``slow_findings`` reads
the plan and the data estimator's draws: how the slowest relevant Hessian directions (or the
chains' positions, where flat directions are tracked) mixed, whether the draws were capped (or
given below the rule), then whether the chains were still spreading away from w*
(``numeric.findings.spreading``) or ended where the curvature outgrew the step
(``numeric.findings.stiffer_in_draws``)."""

from __future__ import annotations

import math

import numpy as np
from torch import Tensor

from numeric.findings.spreading import check_spreading
from numeric.plan.llc_plan import LLCPlan
from numeric.stats.diagnostics import direction_mixing, rhat_limit
from numeric.types import MAX_DRAWS, Draws, Finding, Warmup
from numeric.warmup.burn_in import relax

__all__ = ["check_draws_capped", "check_draws_given", "check_slow_mixing", "slow_findings"]


def check_slow_mixing(
    ess_value: float,
    rhat: float,
    *,
    relaxation_steps: float = float("nan"),
    num_burnin: int = 0,
    num_draws: int = 0,
    offer_preconditioner: bool = True,
    subject: str = "the slowest relevant Hessian directions",
    measured: str = "∇U projected on them",
    min_ess: float = 100.0,
    error_ess: float = 0.0,
    max_rhat: float = 1.05,
    error_rhat: float = math.inf,
    num_chains: int | None = None,
) -> tuple[Finding, ...]:
    """The slowest relevant directions have not mixed (``direction_mixing``). ``subject`` and
    ``measured`` say, in the message, which directions and which observable on them; the
    remedy offered is running longer, and also the Hessian preconditioner when
    ``offer_preconditioner`` (it is available and not in use already).

    A warning where the whole run (burn-in + draws) is shorter than one predicted relaxation
    time 2/(ε·κ_min); info where only ESS < ``min_ess`` or R-hat > ``max_rhat``. The short run
    was an error until the battery's three deep linear networks of 432-1,550 parameters, each a
    20,000-step burn-in at a friction raised by the minibatch heating, carried it on correct
    estimates (z −0.04 to 0.30); a short run that biases λ̂ shows in λ̂'s own trace
    (``still_relaxing``) and its ESS (``low_ess``), which are errors. Given ``num_chains`` m, the R-hat threshold is a floor raised to R-hat's own
    noise at this ESS (``rhat_limit``: 1 + 2m/ESS; many short chains). Low ESS or high R-hat of
    these coordinates was an error until the calibration battery (``verification.calibration``)
    showed it firing only on correct estimates (4 of 4: deep linear networks of 12-1,550
    parameters within 0.05-0.64 of their targets' error bars): λ̂ can average well over
    directions that mix slowly, and whether it did is what the sequential stopping rule tests on
    λ̂'s own trace (``still_relaxing``). As a warning it then fired on nearly every run the
    stopping rule ends at 10% precision, while the battery's error bars covered their targets at
    the nominal rates (|z| ≤ 1, 2, 3: 70%, 96%, 100% of 107 runs): it is info. ``error_ess`` and
    ``error_rhat`` are kept for callers that want the old rule.
    """
    if num_chains is not None:
        max_rhat = rhat_limit(ess_value, num_chains, max_rhat)
        error_rhat = rhat_limit(ess_value, num_chains, error_rhat, multiple=4.0)
    run = num_burnin + num_draws
    short = np.isfinite(relaxation_steps) and run < relaxation_steps
    bad_ess = np.isfinite(ess_value) and ess_value < min_ess
    bad_rhat = np.isfinite(rhat) and rhat > max_rhat
    if not (short or bad_ess or bad_rhat):
        return ()
    error = (np.isfinite(ess_value) and ess_value < error_ess) or (
        np.isfinite(rhat) and rhat > error_rhat
    )
    parts = [f"ESS {ess_value:.0f}", f"R-hat {rhat:.3f}"]
    if np.isfinite(relaxation_steps):
        parts.append(
            f"predicted relaxation time {relaxation_steps:.3g} steps vs {num_burnin} burn-in + "
            f"{num_draws} draws"
        )
    fix = (
        "use preconditioner='hessian' (or 'auto'), or run longer (num_draws, num_burnin)"
        if offer_preconditioner
        else "run longer (num_draws, num_burnin)"
    )
    what = (
        "the soft directions may not have reached equilibrium"
        if error or short
        else "λ̂ may or may not depend on them: its own trace's mixing and drift are tested by "
        "the stopping rule (still_relaxing)"
    )
    return (
        Finding(
            "slow_mixing",
            "error" if error else ("warning" if short else "info"),
            f"{subject} mix slowly ({measured}: "
            + ", ".join(parts)
            + f"); the loss trace's ESS does not see this; {what}; {fix}",
            {
                "ess": ess_value,
                "rhat": rhat,
                "relaxation_steps": relaxation_steps,
                "run_steps": float(run),
            },
        ),
    )


def check_draws_capped(
    wanted: int, used: int, relaxation_steps: float, *, offer_preconditioner: bool = True
) -> tuple[Finding, ...]:
    """The draw rule wanted more draws per chain for the slowest direction than the cap allows
    (``offer_preconditioner``: the run had none, so the advice names it)."""
    if wanted <= used:
        return ()
    advice = "pass num_draws (and num_burnin)" + (
        ", or use the Hessian preconditioner" if offer_preconditioner else ""
    )
    return (
        Finding(
            "draws_capped",
            "warning",
            f"the slowest relevant direction relaxes in ≈ {relaxation_steps:.3g} steps and needs "
            f"≈ {wanted} draws per chain for 400 effective samples, more than the cap ({used}); "
            + advice,
            {"wanted": float(wanted), "used": float(used), "relaxation_steps": relaxation_steps},
        ),
    )


def slow_findings(
    plan: LLCPlan, warm: Warmup, drawn: Draws, alive: Tensor, given: bool = False
) -> tuple[float, float, list[Finding]]:
    """(ESS, R-hat) of the slow observables and their findings: the slowest relevant Hessian
    directions (a probe), or the chains' positions (flat directions); then capped draws (or,
    ``given`` num_draws, fewer than the rule asks for) and the chains' spread growing through
    the draws, and whether they ended in steeper regions."""
    tuning, live = warm.tuning, int(alive.sum())
    t_relax = relax(tuning, plan.kappa_min)
    slow_ess = slow_rhat = math.nan
    out: list[Finding] = []
    if plan.probe.shape[1] > 0:
        proj = drawn.trace.obs.double().cpu().numpy()[alive.cpu().numpy()]
        slow_ess, slow_rhat = direction_mixing(proj)
        out.extend(
            check_slow_mixing(
                slow_ess,
                slow_rhat,
                relaxation_steps=t_relax,
                num_burnin=warm.num_burnin,
                num_draws=int(drawn.num_draws),
                offer_preconditioner=plan.pre_s is None,
                num_chains=live,
            )
        )
    if plan.track_positions:
        slow_ess, slow_rhat = drawn.mixing
        out.extend(
            check_slow_mixing(
                slow_ess,
                slow_rhat,
                num_burnin=warm.num_burnin,
                num_draws=int(drawn.num_draws),
                # ‖w − w*‖² relaxes twice as fast as w: e-folding time t_flat/2
                relaxation_steps=relax(tuning, plan.kappa_flat) / 2,
                offer_preconditioner=False,
                max_rhat=1.01,
                error_ess=0.0,
                error_rhat=math.inf,
                num_chains=live,
                subject="the chains' positions",
                measured="‖w − w*‖²",
            )
        )
    if drawn.wanted is not None and given:
        out.extend(check_draws_given(drawn.wanted, int(drawn.num_draws), t_relax))
    elif drawn.wanted is not None and drawn.num_draws >= MAX_DRAWS:  # the cap bound
        out.extend(
            check_draws_capped(
                drawn.wanted,
                int(drawn.num_draws),
                t_relax,
                offer_preconditioner=plan.pre_s is None,
            )
        )
    out.extend(check_spreading(drawn.spread, alive.cpu().numpy()))
    return slow_ess, slow_rhat, out


def check_draws_given(asked: int, given: int, relaxation_steps: float) -> tuple[Finding, ...]:
    """``num_draws`` given, fewer than the draw rule asks for the slowest direction (info: the
    lengths were the user's; ``spreading.escalate`` reads it as it reads ``draws_capped``)."""
    if asked <= given:
        return ()
    return (
        Finding(
            "draws_below_rule",
            "info",
            f"the slowest relevant direction relaxes in ≈ {relaxation_steps:.3g} steps, and 400 "
            f"effective samples of it take ≈ {asked} draws per chain; num_draws = {given} given",
            {"asked": float(asked), "given": float(given), "relaxation_steps": relaxation_steps},
        ),
    )
