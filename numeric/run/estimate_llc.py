r"""Local learning coefficient of a model with data: ``estimate_llc``.

λ̂ = nβ·(E_w[L_n(w)] − L_n(w*)) with w drawn by SGLD (``numeric.sampler.sgld``) from the localised
tempered posterior p(w) ∝ exp(−nβ·L_n(w) − (γ/2)‖w − w*‖² − (α/2)‖w‖²) (REFERENCE §6). Chains are
the leading axis of one [C, D] tensor; the loss is vectorised over chains with ``torch.func.vmap``
(each chain draws its own minibatch: one ``randint`` of shape [C, B] per step).

The estimate is a pipeline of stages, each rule in the module named for it (docs/architecture.md):

===========================  =======================================================================
``options``                  the arguments, validated once (``LLCOptions``); nβ = n/log n default
``inputs.problem``           the data model and the ``Problem``: w*, L_n(w*), ∇L_n(w*)
``plan.preconditioner``      H(w*) (``hessian/``) and the preconditioner M, dense or low-rank
``plan.soft_whitening``      soft directions scaled at their own curvature where U is quadratic
``plan.llc_plan``            slow and flat directions, integrator, friction ξ₀, anchors
``sampler.gradients``        the minibatch gradient: control variate centred at w* or an anchor
``sampler.kernel``           the hot loop: blocks of steps from pre-drawn noise, eager or compiled
``sampler.chains``           the batch of chains, advanced block by block, checked for divergence
``run.one_run``              one run of the chains from w*: warm-up, draws, the step-size check
``run.summarise``            the estimate from a run's draws: statistics, findings, the extrapolation
``warmup.step_size``         ε from the curvature where the chains are (``warmup.curvature``)
``warmup.friction``          BAOAB's friction raised for the minibatch heating where the chains are
``warmup.burn_in``           the burn-in: the slowest and the flat directions, stationarity
``plan.integrator_switch``   LM → BAOAB where the adapted step outpaces the slowest direction
``draws.sample``             the number of draws, the draws and what they record
``draws.stopping_rule``      draws added until λ̂ is precise and no longer moves
``draws.burn_in_extension``  the draws made burn-in while the chains still spread away from w*
``draws.step_check``         the chains continued at ε/2 and back at ε: the bias, λ₀ at ε → 0
``findings.*``               one module per question a finding answers (``findings.codes``)
``run.attempt``              a run to make; each run's outcome goes to its policy (the loop here)
``run.*_restart``            again from w* after a divergence (smaller ε) or hot draws (more ξ)
``run.full_batch_switch``    where the full batch mixes cheaper than heated minibatches
``result.llc_estimate``      the estimate and its configuration (``result.config``)
===========================  =======================================================================
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, NoReturn

import numpy as np
import torch
from torch import Tensor

from numeric.backend.denormals import flushing_denormals
from numeric.backend.torch_limits import run_differentiable
from numeric.budget import Clock, budget_findings
from numeric.errors import DivergenceError
from numeric.inputs.module_loss import ModuleLoss, from_module
from numeric.inputs.problem import LossFn, Problem, setup_problem
from numeric.inputs.restrict import require_eval_mode
from numeric.option_groups import Budget, Checks, Runtime, Sampler, Target, apply_groups
from numeric.options import (
    DEFAULT_RTOL,
    Gradient,
    Integrator,
    LLCOptions,
    OnDivergence,
    Preconditioning,
)
from numeric.plan.llc_plan import make_plan
from numeric.result.llc_estimate import LLCEstimate
from numeric.run.attempt import Attempt
from numeric.run.divergence_restart import divergence_error, restarted
from numeric.run.full_batch_switch import fallen_back, full_batch_attempt
from numeric.run.heating_restart import cooled
from numeric.run.one_run import Completed, Diverged, one_run
from numeric.run.summarise import summarise

__all__ = ["ModuleLoss", "estimate_llc", "from_module"]

_LOG = logging.getLogger("numeric")


def estimate_llc(
    loss_fn: LossFn,
    params: Mapping[str, Tensor],
    data: Any,
    *,
    nbeta: float | None = None,
    gamma: float = 1.0,
    prior_precision: float = 0.0,
    step_size: float | None = None,
    num_chains: int = 4,
    num_draws: int | None = None,
    num_burnin: int | None = None,
    batch_size: int | None = None,
    seed: int = 0,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
    gradient: Gradient = "control_variate",
    integrator: Integrator | Literal["auto"] = "auto",
    friction: float | None = None,
    preconditioner: Preconditioning = "auto",
    step_scale: float = 0.25,
    full_loss_every: int | None = None,
    anchor_every: int | None = None,
    on_divergence: OnDivergence = "raise",
    progress: bool | None = None,
    compile: bool = False,
    step_check: bool | None = None,
    rtol: float = DEFAULT_RTOL,
    target_stderr: float | None = None,
    time_budget: float | None = None,
    observables: Any = None,
    callback: Callable[[Any], Any] | None = None,
    chain_block: int | None = None,
    target: Target | None = None,
    sampler: Sampler | None = None,
    budget: Budget | None = None,
    checks: Checks | None = None,
    runtime: Runtime | None = None,
) -> LLCEstimate:
    r"""Estimate the local learning coefficient at ``params`` (= w*) with SGLD.

    Every setting is a keyword; the same settings also come grouped (``target``, ``sampler``,
    ``budget``, ``checks``, ``runtime``: ``numeric.option_groups``), built once and reused.

    With automatic lengths (``num_draws`` None) the draws stop when the answer is known: λ̂'s
    standard error is at most ``rtol``·|λ̂| (default 10%; 0.05 or less to compare checkpoints
    finely) or ``target_stderr``, λ̂'s own loss trace has 100 effective draws and λ̂ no longer moves
    between the halves of the draws (``draws.stopping_rule``). ``time_budget`` (seconds) bounds the
    whole estimate: the burn-in ends by 40% of it, the draws by 75% (95% without the step-size
    check), and the check runs only where it fits; a phase cut short is named in the ``time_budget``
    finding, and lengths then depend on the machine's speed (``numeric.budget``). Ctrl-C during the
    draws ends them and returns the estimate from the draws so far, with the ``interrupted``
    finding. Each phase ends with a line on the ``numeric`` logger (INFO):
    ``logging.basicConfig(level=logging.INFO)`` shows a run's progress where stderr is not a
    terminal.

    ``loss_fn(params, batch)`` returns the mean loss of ``batch`` for a dict of tensors ``params``
    (see ``from_module``); it must be traceable by ``torch.func.vmap`` (no ``.item()``, no in-place
    updates of inputs). ``data`` is a tuple of tensors with samples on the first axis, a dict of
    them (batches are then dicts with the same keys), or anything indexable by a tensor of indices;
    a batch is ``take(data, idx)``. numpy arrays, map-style ``Dataset``s and a ``DataLoader`` (its
    data set; its batch size is not used) are converted once (``inputs.data_forms.as_data``).
    Tensors with NaN or inf entries are not dropped: the loss at w* is then not finite, and the
    error names them. With a ``from_module`` loss the module must be in eval mode, checked before
    any forward pass; where attention kernels lack the derivatives the estimate needs, it runs again
    with torch's math attention (``backend.torch_limits``). CPU denormals are flushed to zero
    meanwhile (``backend.denormals``).

    Arguments left ``None`` are chosen from the problem (the rules are in ``numeric.plan``,
    ``numeric.warmup`` and ``numeric.draws``); ``gamma`` is γ, the localisation strength, and
    ``prior_precision`` α, of a Gaussian prior N(0, α⁻¹ I). A non-finite or exploding loss raises
    ``DivergenceError`` naming chain and step unless ``on_divergence="continue"`` (then the diverged
    chains are dropped and reported, and the error comes when none is left); with the automatic ε
    the run first restarts from w* with at most a quarter of the diverged run's ε
    (``divergence_restart.restart_options``). The full-data estimate evaluates L_n at the chains
    every ``full_loss_every`` steps (default ⌈n/B⌉ for minibatches of ``batch_size`` B, 16 for the
    full batch, at most draws/10; about one more forward pass per step; 0 turns it off). The noise
    is drawn in blocks that end at these evaluations, so another ``full_loss_every`` gives other
    chains from the same seed (as valid, not the same bits).

    ``batch_size`` B (default 256, or n where n ≤ 256 or a step on all n samples costs no more than
    a control-variate step of 256: n ≤ 512·C/(C + 1), ``inputs.problem.default_batch_size``): each
    chain's minibatch per step, drawn with replacement; B = n is the full data at every step
    (``data.draw_indices``): ĝ = ∇L_n(w) exactly (``config.gradient`` "exact"; no control variate,
    no anchors), at n/B times a minibatch step's cost, and no minibatch heating, so BAOAB's friction
    stays at critical damping. Where the heating raises the friction far above it, the slow
    directions relax that many times slower, and a larger B with replacement does not help (ξ falls
    as 1/B, the cost per step rises as B): then the full batch can be cheaper (``batch_heating``
    finding). With the default B and automatic lengths the run switches to it where it relaxes the
    slowest direction at least twice as cheaply and its projected run costs at most twice what the
    minibatch run has left, burn-in and draws (the ``full_batch_switch`` finding;
    ``run.full_batch_switch``).

    ``anchor_every`` (control-variate gradient only): every this many steps each chain's current
    position becomes its anchor r, with ∇L_n(r) computed on the full data, and each step centres the
    control variate at the nearer of r and w* (``sampler.gradients``). Default (``plan.llc_plan``):
    where the chains spread far from w* (no Hessian slow-direction rule applies: w* is not a
    minimum, or it is singular with no direction stiffer than γ + α), ⌈n/B⌉ rounded up to a multiple
    of 8 (an epoch; the full gradients then cost about 40% of the minibatch work); elsewhere 0, the
    centre at w* (near a minimum it is as good and cheaper).

    ``integrator``: ``"auto"`` (LM near a minimum, BAOAB where the chains spread along flat
    directions: ``plan.llc_plan``, or where the step outpaces the slowest relevant direction 16×:
    ``plan.integrator_switch``), ``"lm"``, ``"euler"`` (devinterp's update) or ``"baoab"``
    (underdamped Langevin with ``friction`` ξ; default 2√κ of the slowest directions, critical
    damping, raised during burn-in where the chains spread until the minibatch heating of λ̂'s
    directions is at most 1% (``warmup.friction``), and the run restarted with more friction where
    the draws end hotter: ``run.heating_restart``; ``sampler.sgld``). A given ``friction`` is kept,
    and used only where BAOAB runs.

    ``preconditioner``: ``"auto"`` (when the gradient is the control variate and ``step_size`` is
    None: the dense Hessian preconditioner when D ≤ 2048, above that a low-rank one from the
    Hessian's top eigenpairs by Lanczos where it lowers the stiffest curvature at least 2×),
    ``"hessian"``, ``"lowrank"`` or ``"none"`` (``plan.preconditioner``, ``hessian.spectrum``). A
    given ``step_size`` is in the preconditioned metric when one is used.

    ``compile=True`` runs the SGLD steps through one ``torch.compile``d kernel of
    ``kernel.UNROLL`` fused steps (same random numbers as the eager loop, so the same estimate up
    to rounding, for C·D up to 2²¹): 10–30× fewer microseconds per step for small models, after a
    one-off compile (20–35 s the first time on a machine, 9–11 s in a later process, which finds
    inductor's generated code on disk). The kernel is cached per process for the same
    ``loss_fn`` object (``from_module`` returns equal ones for the same module), shapes and
    settings, so later estimates on the same model do not compile again. Worth it for long runs
    and for many estimates of one architecture (checkpoints, sweeps).

    ``step_check`` (default: on with a given ``step_size``, Euler steps or plain minibatch
    gradients; off at the automatic ε with LM or BAOAB on the full batch or with the control
    variate, where on the calibration battery it never found a bias: docs/estimator/step-check.md;
    pass True to run it anyway): after the
    draws the chains go on at ε/2, then at ε again, and ``LLCEstimate.step_check`` holds λ̂(ε),
    λ̂(ε/2), λ̂ at ε after the check, the bias b ≈ 2·(λ̂_ε − λ̂(ε/2)) at ε (λ̂_ε over the stretches
    at ε either side of the check) and the extrapolation 2·λ̂(ε/2) − λ̂_ε; where |b| ≥ 3 standard
    errors (and λ̂ at ε did not drift across the check) it is the estimate, and ``step_size_bias``
    says so (``draws.step_check``).

    ``observables`` (name → function of the positions [C, D] returning [C, ...], or a sequence of
    named built-ins: ``numeric.per_sample_losses()``, ``numeric.positions(max_draws)``) are
    evaluated at each full-loss evaluation of the draws and kept in ``LLCEstimate.observables``
    as [chain, draw, ...]; they draw no random numbers, so the chains are the same bits with and
    without them (``numeric.waic``, ``numeric.susceptibility``; docs/how-to/observables.md).
    ``callback(event)`` is called once per block of draws with a ``numeric.DrawsEvent``
    (``numeric.JsonLinesLogger`` writes them to a file). ``chain_block=k`` computes the
    sampler's gradients (and the warm-up's curvature products) for k chains at a time, where the
    activations of all chains at once do not fit in memory: the same draws, the same estimate up
    to rounding."""
    keywords = dict(
        nbeta=nbeta, gamma=gamma, prior_precision=prior_precision, step_size=step_size,
        num_chains=num_chains, num_draws=num_draws, num_burnin=num_burnin, seed=seed,
        step_scale=step_scale, on_divergence=on_divergence, progress=progress,
        batch_size=batch_size, device=device, dtype=dtype, gradient=gradient,
        integrator=integrator, friction=friction, preconditioner=preconditioner,
        full_loss_every=full_loss_every, anchor_every=anchor_every, compile=compile,
        step_check=step_check, rtol=rtol, target_stderr=target_stderr, time_budget=time_budget,
        observables=observables, callback=callback, chain_block=chain_block,
    )  # fmt: skip
    groups = dict(target=target, sampler=sampler, budget=budget, checks=checks, runtime=runtime)
    opts = LLCOptions(**apply_groups(keywords, groups, caller="estimate_llc"))
    require_eval_mode(loss_fn)  # before any forward pass: batch norm would update its statistics
    # chains running away before a divergence is raised overflow the statistics' squares, which
    # handle the resulting inf and nan themselves: no numpy warning ahead of the error
    with flushing_denormals(), np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return run_differentiable(lambda: _estimate_llc(loss_fn, params, data, opts))


def _estimate_llc(
    loss_fn: LossFn, params: Mapping[str, Tensor], data: Any, opts: LLCOptions
) -> LLCEstimate:
    """``estimate_llc`` once its options are checked: the set-up, then runs until their outcome
    asks for no other (``_run_until_done``: restarts after a divergence or hot draws, and the
    full batch where heated minibatches make it the cheaper way to mix)."""
    clock = Clock(opts.time_budget)
    problem = setup_problem(loss_fn, params, data, opts)
    _LOG.info("set-up: %d parameters, n = %d, B = %d in %.2f s", problem.dim, problem.n,
              problem.batch_size, clock.elapsed())  # fmt: skip
    first = Attempt(problem, opts, switchable=_may_switch(problem, opts))
    return _run_until_done(first, clock, lambda o: setup_problem(loss_fn, params, data, o))


def _may_switch(problem: Problem, opts: LLCOptions) -> bool:
    """The full-batch switch applies: minibatches of the default size with the control variate,
    automatic lengths, no anchors asked for (``numeric.run.full_batch_switch``)."""
    return (
        opts.batch_size is None
        and opts.num_burnin is None
        and opts.num_draws is None
        and not opts.anchor_every
        and opts.gradient == "control_variate"
        and not problem.full_batch
    )


def _run_until_done(
    first: Attempt, clock: Clock, setup: Callable[[LLCOptions], Problem]
) -> LLCEstimate:
    """The one loop of runs: from ``first``, each run's outcome (``one_run.Outcome``) goes to its
    policy (``numeric.run.attempt``), which gives the next attempt or none; the state is the
    ``Attempt`` alone, so no policy mutates another's. Returns the estimate of the last completed
    run, or raises the error of a divergence no policy answers. ``setup(opts)`` makes the problem
    of other options (the full batch's)."""
    attempt = first
    while True:
        attempt = _planned(attempt)
        assert attempt.plan is not None
        outcome = one_run(
            attempt.problem, attempt.plan, attempt.opts, attempt.switchable, clock.rest()
        )
        if isinstance(outcome, Completed):
            after = cooled(attempt, outcome, clock)
            if after is None:
                return _finish(attempt, outcome)
        elif isinstance(outcome, Diverged):
            after = restarted(attempt, outcome.error, clock) or fallen_back(attempt, outcome.error)
            if after is None:
                _raise(divergence_error(attempt, outcome.error), outcome.error)
        else:
            after = full_batch_attempt(first, outcome.case, setup)
        attempt = after


def _planned(attempt: Attempt) -> Attempt:
    """``attempt`` with its plan (``numeric.plan.llc_plan.make_plan``), made where it has none."""
    if attempt.plan is not None:
        return attempt
    started = time.monotonic()
    plan = make_plan(attempt.problem, attempt.opts)
    _LOG.info("plan: %s, %s preconditioner in %.2f s", plan.integrator, plan.preconditioner,
              time.monotonic() - started)  # fmt: skip
    return dataclasses.replace(attempt, plan=plan)


def _finish(attempt: Attempt, ran: Completed) -> LLCEstimate:
    """The estimate from the completed run, with what its attempts said and what the clock or
    Ctrl-C cut first."""
    said = (*attempt.said, *budget_findings(ran.warm, ran.drawn, attempt.opts.time_budget))
    return summarise(attempt.problem, ran.plan, attempt.opts, ran.warm, ran.drawn, ran.alive, said)


def _raise(final: DivergenceError, err: DivergenceError) -> NoReturn:
    """The divergence as the chains raised it, or reworded (``final``) from it."""
    if final is err:
        raise err
    raise final from err
