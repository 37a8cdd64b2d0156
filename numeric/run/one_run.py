r"""One run of the data estimator's chains from w* (``Run``, ``one_run``): the kernel, the chains,
the warm-up, the draws until settled and the step-size check, on the random stream of one seed,
and how it ended, a value (``Outcome``: ``Completed``, ``Diverged``, ``FullBatchBetter``;
``numeric.run.estimate_llc`` starts runs again as their outcomes ask and turns the last into the
estimate).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from numeric.budget import Clock, Stopped
from numeric.draws.burn_in_extension import draw_until_settled, retuner
from numeric.draws.observables import bind_observables
from numeric.draws.sample import sample
from numeric.draws.step_check import run_check
from numeric.errors import DivergenceError
from numeric.inputs.problem import Problem
from numeric.options import LLCOptions, wants_step_check
from numeric.plan.integrator_switch import momentum_plan
from numeric.plan.llc_plan import LLCPlan
from numeric.run.full_batch_switch import FullBatchCase, switch_to_full_batch
from numeric.sampler import sgld
from numeric.sampler.chains import Chains, default_progress
from numeric.sampler.kernel import AnchoredBlock, Kernel, cache_key
from numeric.types import Constants, Draws, Trace, Tuning, Warmup
from numeric.warmup.probes import DataProbes
from numeric.warmup.warm_up import warm_up

# the step-size check's steps per draw: relaxation (≤ a quarter of the draws) and half the draws
# at ε/2, then as many at ε (``step_check.check_lengths``)
CHECK_COST = 1.5


@dataclass(frozen=True)
class Completed:
    """The run's draws: the plan it ended with (the warm-up may switch LM to BAOAB), its warm-up,
    its draws and its live chains [C]."""

    plan: LLCPlan
    warm: Warmup
    drawn: Draws
    alive: Tensor

    @property
    def asked_to_stop(self) -> bool:
        """Ctrl-C ended the draws or the step-size check."""
        return self.drawn.stopped in ("interrupted", "check_interrupted")


@dataclass(frozen=True)
class Diverged:
    """A chain diverged: the error the chains raised (its chain, step and ε)."""

    error: DivergenceError


@dataclass(frozen=True)
class FullBatchBetter:
    """The warm-up made the case for the full batch (``full_batch_switch``): the run ended
    there."""

    case: FullBatchCase


Outcome = Completed | Diverged | FullBatchBetter


class _Switch(Exception):
    """Raised inside the burn-in where the full batch makes its case: this run ends there."""

    def __init__(self, case: FullBatchCase) -> None:
        super().__init__(case)
        self.case = case


class Run:
    """One run of the chains from w*, on the random stream of ``opts.seed``, in public stages
    that each go on from where the last left the chains: ``warm_up`` (step size, friction,
    burn-in), ``draw`` (the draws until precise, with the burn-in extended where they had not
    settled) and ``check_step`` (the step-size check's draws at ε/2). A context manager: leaving
    it ends the phase log and the progress bar. ``numeric.stages`` shows the sequence; no
    re-run policy applies inside a run (``estimate_llc`` restarts runs after a divergence or a
    heating, and switches to the full batch)."""

    def __init__(
        self, problem: Problem, plan: LLCPlan, opts: LLCOptions, clock: Clock | None = None
    ) -> None:
        self.problem, self.opts = problem, opts
        gen = torch.Generator(device=problem.w_star.device)
        gen.manual_seed(opts.seed)
        kern = run_kernel(problem, plan, opts)
        self.chains = start_chains(problem, plan, opts, kern, gen, clock)
        self.probes = DataProbes(problem, plan, kern, self.chains, gen, opts.step_scale, opts.seed)
        self.gen = gen
        self.observables = bind_observables(opts.observables, problem, opts.num_chains)

    @property
    def plan(self) -> LLCPlan:
        """The plan the run goes on with (the warm-up may switch LM to BAOAB:
        ``numeric.plan.integrator_switch``)."""
        return self.probes.plan

    @property
    def alive(self) -> Tensor:
        """Which chains are live [C] (``on_divergence="continue"`` drops diverged ones)."""
        return self.chains.alive

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.chains.__exit__(*exc)

    def warm_up(self, switchable: bool = False) -> Warmup | FullBatchCase:
        """Step size, friction and burn-in (``numeric.warmup``); with ``switchable``, the case for
        the full batch instead where the raised friction makes it (the run ends there)."""
        probes, chains, problem, opts = self.probes, self.chains, self.problem, self.opts

        def switch(tuning: Tuning) -> LLCPlan | None:
            """BAOAB from here on where the momentum rule says so: a new kernel, same state."""
            new = momentum_plan(probes.plan, tuning, opts)
            if new is not None:
                probes.plan, probes.kern = new, run_kernel(problem, new, opts)
                chains.block.kernel = probes.kern
            return new

        def ask_switch(tuning: Tuning) -> None:
            """The full batch instead, once the raised friction makes the case for it."""
            case = switch_to_full_batch(
                probes.plan, tuning, problem.n, problem.batch_size, opts.num_chains, problem.dim,
                chains.steps_done,
            )  # fmt: skip
            if case is not None:
                raise _Switch(case)

        try:
            return warm_up(
                chains, probes.plan, opts, self.gen, measure=probes.curvature,
                heating=probes.heating, switch=switch, check=probes.check_curvature,
                on_raise=ask_switch if switchable else None,
            )  # fmt: skip
        except _Switch as switched:
            return switched.case

    def draw(self, warm: Warmup) -> tuple[Warmup, Draws]:
        """The draws after ``warm`` until λ̂ is precise (``numeric.draws.sample``); where they had
        not settled (automatic lengths) they become burn-in and the draws start again
        (``numeric.draws.burn_in_extension``): the warm-up as extended, and the draws."""
        problem, opts, plan, probes, chains = (
            self.problem, self.opts, self.plan, self.probes, self.chains
        )  # fmt: skip
        return draw_until_settled(
            lambda w, settling: sample(
                chains, plan, opts, w, problem.n, problem.batch_size,
                problem.model.full_loss, probes.heating, problem.w_star, probes.check_curvature,
                self.observables, settling=settling,
            ),
            warm, automatic=opts.num_burnin is None, alive=lambda: chains.alive.cpu().numpy(),
            steps_done=lambda: chains.steps_done,
            retune=retuner(plan, opts, probes.heating, probes.check_curvature),
        )  # fmt: skip

    def check_step(self, warm: Warmup, drawn: Draws) -> Draws:
        """The draws with the step-size check's (``numeric.draws.step_check``) where it is on
        (``options.wants_step_check``), the draws ran to their end, and its projected time fits
        in what is left of the time budget; else as they were (``stopped`` says why not)."""
        if not wants_step_check(self.opts, self.problem.full_batch) or drawn.stopped is not None:
            return drawn
        chains = self.chains
        if not CHECK_COST * drawn.num_draws * chains.seconds_per_step() <= chains.clock.left():
            return drawn._replace(stopped="check_skipped")
        return drawn._replace(**_checked(chains, warm.tuning, drawn.trace, self.plan.kappa_min))


def one_run(
    problem: Problem,
    plan: LLCPlan,
    opts: LLCOptions,
    switchable: bool = False,
    clock: Clock | None = None,
) -> Outcome:
    """A ``Run``'s stages in order, and how the run ended (``numeric.run.attempt``):
    ``Completed`` (the plan it ended with, its warm-up, draws and live chains), ``Diverged``, or
    with ``switchable`` ``FullBatchBetter`` where the warm-up makes the case for the full batch."""
    try:
        with Run(problem, plan, opts, clock) as run:
            warm = run.warm_up(switchable)
            if isinstance(warm, FullBatchCase):
                return FullBatchBetter(warm)
            warm, drawn = run.draw(warm)
            drawn = run.check_step(warm, drawn)
    except DivergenceError as err:
        return Diverged(err)
    return Completed(run.plan, warm, drawn, run.alive)


def _checked(chains: Chains, tuning: Tuning, trace: Trace, kappa_min: float) -> dict:
    """The step-size check's draws, or where the clock ran out during them (the check may
    extend past its projected cost) or Ctrl-C arrived, none and why: the estimate from the
    draws stands, its step bias unmeasured."""
    try:
        with chains.stoppable(1.0, interruptible=True):  # the rest of the budget
            return {"check": run_check(chains, tuning, trace, kappa_min)}
    except Stopped as stop:
        return {"stopped": "check_cut" if stop.reason == "time_budget" else "check_interrupted"}


def run_kernel(problem: Problem, plan: LLCPlan, opts: LLCOptions) -> Kernel:
    """The kernel of the run: constants from the problem and plan, eager or compiled."""
    c, d = opts.num_chains, problem.dim
    consts = Constants(
        problem.w_star,
        problem.g_star,
        plan.pre_s,
        plan.probe,
        problem.nbeta,
        opts.gamma,
        opts.prior_precision,
        friction=plan.friction,
    )
    if plan.kernel_spec.anchored:  # until the first refresh every chain is anchored at w*
        consts = consts._replace(
            anchor=problem.w_star.expand(c, d).clone(),
            g_anchor=problem.g_star.expand(c, d).clone(),
            loss_anchor=problem.w_star.new_zeros(c),
        )
    model = problem.model
    return Kernel(
        model.f,
        plan.kernel_spec,
        consts,
        model.data,
        compiled=opts.compile,
        cache_key=cache_key(
            problem.loss_fn, problem.spec, plan.kernel_spec, model.data, c, problem.batch_size
        ),
    )


def start_chains(
    problem: Problem,
    plan: LLCPlan,
    opts: LLCOptions,
    kern: Kernel,
    gen: torch.Generator,
    clock: Clock | None = None,
) -> Chains:
    """Every chain at w*, with a fresh noise draw (the first draw from ``gen``)."""
    model = problem.model
    block = AnchoredBlock(
        kern,
        model.full_loss_grad,
        gen,
        problem.n,
        problem.batch_size,
        plan.kernel_spec.anchored,
    )
    return Chains(
        sgld.init(problem.w_star.expand(opts.num_chains, problem.dim), gen),
        block,
        lambda s: s.position,
        nbeta=problem.nbeta,
        on_divergence=opts.on_divergence,
        progress=default_progress(opts.progress),
        total_hint=(opts.num_burnin or 1000) + (opts.num_draws or 1000),
        clock=clock,
    )
