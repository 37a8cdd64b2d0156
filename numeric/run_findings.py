"""The data estimator's findings that read the plan and the draws: how the slow directions and
the chains' positions mixed, whether the draws were capped (``numeric.findings`` words them),
whether the chains were still spreading away from w* (``numeric.spreading``) or ended where the
curvature outgrew the step (``numeric.stiffness``), settled around a point other than w*
(``numeric.centre``), and regions of low loss the chains never reached (``numeric.reach``)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from numeric.centre import check_off_centre
from numeric.data import take
from numeric.diagnostics import direction_mixing
from numeric.findings import Finding, check_draws_capped, check_slow_mixing
from numeric.model import Problem
from numeric.options import LLCOptions
from numeric.plan import LLCPlan
from numeric.reach import unreached_region
from numeric.resolution import check_resolution, check_rounding
from numeric.result import ChainSummary, FullDataLLC
from numeric.sampling import MAX_DRAWS
from numeric.spreading import check_spreading
from numeric.stiffness import check_stiffer_in_draws
from numeric.types import Draws, Warmup
from numeric.warmup import relax

__all__ = ["check_draws_given", "reach_findings", "slow_findings"]


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
    out.extend(check_stiffer_in_draws(tuning, drawn.kappa_end))
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


def reach_findings(
    problem: Problem,
    opts: LLCOptions,
    drawn: Draws,
    summary: ChainSummary,
    full_data: FullDataLLC | None,
    alive: np.ndarray,
) -> tuple[Finding, ...]:
    """The unreached-region check (``numeric.reach``), on full-data losses, whether the chains
    settled around another point (``numeric.centre``) and whether λ̂ rests on the loss's
    rounding (``numeric.resolution``)."""
    nbeta, l_star = problem.nbeta, problem.init_loss
    levels = (
        nbeta * (full_data.loss_trace - l_star) if full_data is not None else nbeta * summary.delta
    )
    rounding = check_resolution(summary.stats.mean, nbeta, l_star, problem.w_star.dtype)
    if drawn.visited and not rounding:
        last = drawn.visited[-1][torch.as_tensor(alive, device=drawn.visited[-1].device)]
        rounding = check_rounding(problem, last, summary.stats.mean)
    centre = check_off_centre(drawn.centre, alive, problem.w_star, opts.gamma, opts.prior_precision)
    return (
        rounding
        + centre
        + unreached_region(
            lambda w: nbeta * (problem.model.full_loss(w) - l_star),
            problem.w_star,
            [v[torch.as_tensor(alive, device=v.device)] for v in drawn.visited],
            levels,
            opts.gamma + opts.prior_precision,
            opts.seed,
            delta_grad=_subset_delta(problem),
            work_per_point=float(min(problem.n, DESCENT_ROWS) * problem.dim),
        )
    )


DESCENT_ROWS = 2048  # samples the unreached-region check's descent uses (its ends use all n)


def _subset_delta(problem: Problem) -> Callable[[Tensor], tuple[Tensor, Tensor]]:
    """(nβ·(L_S(w) − L_S(w*)), its gradient) on the first ``DESCENT_ROWS`` samples S: where the
    probes go down (``reach.descend``) a subset finds the basins, at a fraction of the cost."""
    model, nbeta = problem.model, problem.nbeta
    idx = torch.arange(min(problem.n, DESCENT_ROWS), device=problem.w_star.device)
    batch = take(model.data, idx)
    with torch.no_grad():
        ref = model.shared_batch(problem.w_star[None], batch)[0]

    def delta_grad(w: Tensor) -> tuple[Tensor, Tensor]:
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            values = model.shared_batch(ww, batch)
            (grad,) = torch.autograd.grad(values.sum(), ww)
        return nbeta * (values.detach() - ref), nbeta * grad

    return delta_grad
