r"""The last stage of a run: the estimate from its draws (``summarise``), with every finding in
the order the report lists them, the configuration and the step-size check's extrapolation. On
minibatches λ̂'s standard error is at least the one its full-data losses give
(``numeric.stats.chain_stats.full_data_stderr``).
"""

from __future__ import annotations

from torch import Tensor

from numeric.draws.burn_in_extension import settling_finding
from numeric.draws.step_check import check_bias
from numeric.draws.stopping_rule import check_precision
from numeric.findings.beyond_quadratic import plan_beyond_quadratic
from numeric.findings.checks import check_step_size, relieve_low_ess
from numeric.findings.gradient_at_w_star import check_gradient, gradient_shift
from numeric.findings.slow_mixing import slow_findings
from numeric.findings.soft_directions import check_soft_directions
from numeric.findings.spreading import escalate, spread_measured
from numeric.findings.standard import summarise_chains
from numeric.findings.stiffer_in_draws import check_stiffer_in_draws
from numeric.findings.unreached_region import reach_findings
from numeric.inputs.problem import Problem
from numeric.options import LLCOptions
from numeric.plan.llc_plan import LLCPlan
from numeric.result.config import run_config
from numeric.result.llc_estimate import LLCEstimate, make_estimate
from numeric.run.full_batch_switch import check_batch_heating
from numeric.stats.chain_stats import floored, full_data_estimate, full_data_stderr
from numeric.types import Draws, Finding, Warmup

__all__ = ["summarise"]


def summarise(
    problem: Problem,
    plan: LLCPlan,
    opts: LLCOptions,
    warm: Warmup,
    drawn: Draws,
    alive: Tensor,
    restarts: tuple[Finding, ...] = (),
) -> LLCEstimate:
    """The estimate from a run's draws (the last stage): statistics, findings after ``restarts``
    (divergence, standard, step size, slow directions, positions, draws capped, still spreading,
    still relaxing, beyond the quadratic region, unreached regions, heated minibatches, step-size
    bias, stiffness, the gradient at w*: in that order), the configuration, and the
    extrapolation to ε → 0 where the step-size check found a significant bias
    (``numeric.draws.step_check``)."""
    alive_np = alive.cpu().numpy()
    tuning = warm.tuning
    summary = summarise_chains(drawn.trace, alive_np, problem.nbeta, tuning.step_size)
    full_data = full_data_estimate(drawn.full_losses, alive_np, problem.init_loss, problem.nbeta)
    if not problem.full_batch and full_data is not None:  # the batch noise can hide slow moves
        floor = full_data_stderr(full_data.loss_trace - problem.init_loss, problem.nbeta)
        summary = summary._replace(stats=floored(summary.stats, floor))
    findings = [*summary.divergence, *restarts, *summary.standard]
    findings.extend(settling_finding(drawn.settled, warm.num_burnin))
    findings.extend(check_step_size(drawn.noise_to_drift, drawn.inflation))
    slow_ess, slow_rhat, slow = slow_findings(plan, warm, drawn, alive, opts.num_draws is not None)
    findings.extend(slow)
    stats = summary.stats
    findings.extend(
        check_soft_directions(
            plan, tuning, warm.num_burnin, int(drawn.num_draws), stats.mean, stats.stderr
        )
    )
    findings.extend(check_precision(drawn.precision, opts.num_draws is None))
    findings.extend(plan_beyond_quadratic(plan, summary.stats, tuning, opts.gamma, findings))
    findings.extend(reach_findings(problem, opts, drawn, summary, full_data, alive_np))
    findings.extend(
        check_batch_heating(
            plan, tuning, problem.n, problem.batch_size, opts.num_chains, problem.dim
        )
    )
    checked = None
    if drawn.check is not None:
        checked, stats, found = check_bias(
            summary.stats, drawn.check, alive_np, problem.nbeta, tuning.step_size
        )
        findings.extend(found)
        summary = summary._replace(stats=stats or summary.stats)
    findings.extend(
        check_stiffer_in_draws(
            tuning, drawn.kappa_end, plan.integrator, checked is not None and checked.applied
        )
    )
    findings = escalate(findings, burn_in_cut=warm.cut)
    budget_cut = warm.cut or drawn.stopped == "time_budget"  # ``numeric.budget``'s two cuts
    findings = relieve_low_ess(
        findings, budget_cut=budget_cut, spread_checked=spread_measured(drawn.spread)
    )
    shift = gradient_shift(plan.hessian, problem.g_star)
    findings.extend(
        check_gradient(
            shift, float(problem.g_star.norm()), summary.stats.mean, summary.stats.stderr,
            problem.nbeta,
        )
    )  # fmt: skip
    return make_estimate(
        summary,
        init_loss=problem.init_loss,
        nbeta=problem.nbeta,
        findings=findings,
        config=run_config(problem, plan, opts, warm, drawn),
        full_data=full_data,
        slow_ess=slow_ess,
        slow_rhat=slow_rhat,
        minibatch_inflation=drawn.inflation,
        step_check=checked,
        observables=drawn.observables,
    )
