r"""After warm-up: how many draws, and recording them (``sample``, ``DataDraws``).

Rules (recorded in ``LLCEstimate.config``):

* **Draws** (``choose_num_draws``): a first chunk of ≈ ``TARGET_ESS`` effective samples over all
  chains given the autocorrelation time τ measured on the last two burn-in blocks
  (``draws_from_tail``), within [``MIN_DRAWS``, ``MAX_DRAWS``] per chain, and at least one
  relaxation time of the slowest relevant direction (``relaxation_floor``). The draws the slowest
  relevant direction asks for (≈ ``SLOW_ESS`` effective samples at an autocorrelation time of 2t)
  are a diagnostic: ``draws_capped`` where the cap bound while they asked for more.
* **Sequential stopping**: draws are added until the answer is known
  (``numeric.draws.stopping_rule``); on minibatches λ̂'s error bar is at least the one the
  full-data losses give (``chain_stats.full_data_stderr``).
* **Full-data losses**: L_n at the chains every ``full_loss_every`` draws (default ⌈n/B⌉, at
  most draws/10; about one more forward pass per step), for ``LLCEstimate.full_data``; with them
  the chains' spread ‖w − w*‖², for ``numeric.findings.spreading``, and each chain's running sum of
  w − w* (one more [C, D] tensor), for ``numeric.findings.off_centre``.
* **Observables** (``numeric.draws.observables``): the options' observables at the chains at
  each full-loss evaluation (nothing more per step), and the callback (``numeric.draws.events``)
  once per block of draws. Where the clock or Ctrl-C cuts the draws, the full losses and the
  observables keep the evaluations made, the same count in each.
* **Heating**: the minibatch heating at the final positions (``LLCEstimate.minibatch_inflation``).
* **Stiffness**: κ where the draws ended, against the κ that ε was set for
  (``numeric.findings.stiffer_in_draws``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from numeric.budget import DRAWS_SHARE, DRAWS_SHARE_NO_CHECK, Stopped
from numeric.draws.events import BlockLog
from numeric.draws.observables import BoundObservable, ObservableRecorder
from numeric.draws.stopping_rule import MAX_EXTENSIONS, draws_until_precise, precision_of
from numeric.findings.off_centre import CentreSum
from numeric.findings.spreading import still_spreading
from numeric.findings.stiffer_in_draws import END_CHECK_ITERS
from numeric.findings.unreached_region import MAX_DIM
from numeric.options import LLCOptions, wants_step_check
from numeric.plan.llc_plan import LLCPlan
from numeric.sampler import sgld
from numeric.sampler.chains import Chains
from numeric.stats.chain_stats import full_trace
from numeric.stats.diagnostics import autocorr_time, direction_ess, direction_rhat
from numeric.stats.observable import observable
from numeric.types import MAX_DRAWS, Draws, Precision, Trace, Tuning, Warmup
from numeric.warmup.burn_in import relax
from numeric.warmup.friction import Heating
from numeric.warmup.step_size import Measure

# the first chunk of automatic draws aims at TARGET_ESS effective samples (the stopping rule
# extends it as far as λ̂'s precision needs)
MIN_DRAWS, TARGET_ESS = 200, 100.0  # MAX_DRAWS per chain: numeric.types
SLOW_ESS = 400.0  # effective samples wanted of the slowest direction / of ‖w − w*‖²
# automatic draws are extended while the loss trace's ESS is below this (its autocorrelation time
# was measured on 200 burn-in steps, which cannot see a longer one)
LOSS_ESS = 200.0
FULL_BATCH_EVERY = 16  # steps between full-loss evaluations where the batch is the full data
MAX_VISITED = 64  # chain positions kept for the unreached-region check (findings.unreached_region)


def draws_from_tail(
    tail: Trace, num_chains: int, *, min_draws: int = MIN_DRAWS, target_ess: float = TARGET_ESS
) -> int:
    """Draws for ≈ ``target_ess`` effective samples given τ measured on the end of burn-in."""
    x = (tail.loss - tail.ref).double().cpu().numpy()
    tau = autocorr_time(x)
    if not math.isfinite(tau):
        return min_draws
    return int(min(MAX_DRAWS, max(min_draws, math.ceil(target_ess * tau / num_chains))))


def choose_num_draws(
    warm: Warmup, plan: LLCPlan, opts: LLCOptions, num_chains: int
) -> tuple[int, int | None]:
    """(draws per chain, draws the slowest direction asks for or None) (module docstring);
    given ``num_draws``, those and what the rule asks for."""
    if opts.num_draws is not None:
        return opts.num_draws, rule_draws(warm, plan, num_chains)
    tail = warm.tail
    num = draws_from_tail(tail, num_chains) if tail is not None and tail.steps >= 50 else 1000
    return max(num, relaxation_floor(warm, plan)), rule_draws(warm, plan, num_chains)


def relaxation_floor(warm: Warmup, plan: LLCPlan) -> int:
    """The fewest automatic draws per chain: one relaxation time t of the slowest relevant
    direction at the run's tuning (``MAX_DRAWS`` at most; 0 where there is no such direction).
    Shorter draws cannot show λ̂'s autocorrelation through that direction, so neither its ESS
    nor the chains' spread of means bounds the error: on a ReLU 2-3-6-1 at n = 10⁴ (B = 256)
    the runs the stopping rule ended at 200–1,400 draws (t ≈ 1,200–5,300) read λ̂ with a spread
    twice their stated standard errors, two of thirty at |z| = 4.6 and 6.0 with no finding
    (benchmarks/RESULTS.md, "ReLU minibatch calibration")."""
    t = relax(warm.tuning, plan.kappa_min)
    return min(math.ceil(t), MAX_DRAWS) if math.isfinite(t) else 0


def slow_draws(t: float, num_chains: int) -> float:
    """Draws per chain for ``SLOW_ESS`` effective samples of a direction that relaxes in t
    steps: 2·t/C each (its autocorrelation time is ≈ 2t)."""
    return SLOW_ESS * 2 * t / num_chains


def rule_draws(warm: Warmup, plan: LLCPlan, num_chains: int) -> int | None:
    """``slow_draws`` of the slowest direction (t its relaxation time in steps at the run's
    tuning), rounded up; None where t is not finite."""
    t = relax(warm.tuning, plan.kappa_min)
    return math.ceil(slow_draws(t, num_chains)) if math.isfinite(t) else None


class DataDraws:
    """``draws(k)``: k draws of the chains at a fixed tuning, with the slow observables, the
    step norms and (every ``every`` steps; 0: never) L_n at the chains in ``full_losses``."""

    def __init__(
        self,
        chains: Chains,
        tuning: Tuning,
        every: int,
        track_positions: bool,
        full_loss: Callable[[Tensor], Tensor],
        w_star: Tensor,
        observables: tuple[BoundObservable, ...] = (),
        log: BlockLog | None = None,
    ) -> None:
        self.chains, self.tuning, self.every = chains, tuning, every
        self.track_positions, self.full_loss, self.w_star = track_positions, full_loss, w_star
        self.observed = ObservableRecorder(observables)
        self.log = log  # the callback's running sums (None: no callback)
        self.full_losses: list[Tensor] = []
        self.spreads: list[Tensor] = []  # ‖w − w*‖² [C] at each full-loss evaluation
        self.centre = CentreSum()  # Σ (w − w*) [C, D] there too (numeric.findings.off_centre)
        # positions at every ``stride``-th full-loss evaluation, for
        # numeric.findings.unreached_region; halved and the stride doubled when full, so that they
        # span the whole run, not its first part
        self.visited: list[Tensor] = []
        self.evaluations, self.stride = 0, 1
        self.stopped: str | None = None  # "time_budget" or "interrupted" where draws were cut

    def __call__(self, count: int) -> Trace | None:
        """``count`` draws (fewer where the clock or Ctrl-C stopped them: ``stopped``; None
        where they stopped before a step)."""
        self.chains.phase("draws", count)
        parts, done, every = [], 0, self.every
        while done < count and self.stopped is None:
            k = min(every, count - done) if every else count - done
            try:
                parts.append(
                    self.chains.advance(
                        k, self.tuning, track_dist=self.track_positions, track_obs=True, norms=True
                    )
                )
            except Stopped as stop:
                self.stopped = stop.reason
                if stop.trace is not None:
                    parts.append(stop.trace)
                    if self.log is not None:
                        self.log(stop.trace, None, {}, stop.reason)
                break
            done += k
            evaluated = self._evaluate() if k == every else None
            if self.log is not None:
                full, values = evaluated if evaluated is not None else (None, {})
                self.log(parts[-1], full, values, self.stopped)
        return Trace.join(parts) if parts else None

    def _evaluate(self) -> tuple[Tensor, dict[str, Tensor]] | None:
        """L_n and the observables at the chains, recorded together; None where Ctrl-C came
        during them (the draws end there, ``stopped``, and neither is recorded)."""
        pos = self.chains.position
        try:
            full, values = self.full_loss(pos), self.observed.values(pos)
        except KeyboardInterrupt:
            if not self.chains.catch_interrupt:
                raise
            self.chains.interrupted, self.stopped = True, "interrupted"
            return None
        self.full_losses.append(full)
        self.observed.keep(values)
        offset = pos - self.w_star
        self.spreads.append(offset.square().sum(-1))
        self.centre.add(offset)
        if pos.shape[-1] <= MAX_DIM:
            self._keep(pos)
        return full, values

    def full_trace(self, alive: np.ndarray) -> np.ndarray | None:
        """L_n at the live chains [live chain, evaluation] so far (None before the first)."""
        return full_trace(self.full_losses, alive) if self.full_losses else None

    def spread(self) -> np.ndarray | None:
        """‖w − w*‖² [T, C] at the full-loss evaluations so far (None before the first)."""
        return torch.stack(self.spreads).double().cpu().numpy() if self.spreads else None

    def spreading(self) -> bool:
        """Whether the live chains' spread so far still grows (``spreading.still_spreading``)."""
        return still_spreading(self.spread(), self.chains.alive.cpu().numpy()) is not None

    def _keep(self, pos: Tensor) -> None:
        if self.evaluations % self.stride == 0:
            self.visited.append(pos.detach().clone())
            if len(self.visited) > MAX_VISITED:
                self.visited, self.stride = self.visited[::2], 2 * self.stride
        self.evaluations += 1

    def observable(self, t: Trace) -> np.ndarray:
        """What the draws are extended on: ‖w − w*‖² where the chains spread (target
        ``SLOW_ESS``), else the loss trace (target ``LOSS_ESS``); live chains only."""
        x = t.dist if self.track_positions else t.loss - t.ref
        return x[..., None].double().cpu().numpy()[self.chains.alive.cpu().numpy()]


def sample(
    chains: Chains, plan: LLCPlan, opts: LLCOptions, warm: Warmup, n: int, batch_size: int,
    full_loss: Callable[[Tensor], Tensor], heating: Heating, w_star: Tensor,
    check: Measure | None = None, observables: tuple[BoundObservable, ...] = (),
    settling: bool = False,
) -> Draws:  # fmt: skip
    """The draws of ``estimate_llc`` after ``warm`` (module docstring); ``check`` measures κ
    where they ended (``Draws.kappa_end``, ``numeric.findings.stiffer_in_draws``), nan without
    it; ``observables`` recorded at the full-loss evaluations, ``opts.callback`` called per
    block. ``settling``: these draws become burn-in if the chains still spread
    (``numeric.draws.burn_in_extension``), so they are not extended once the spread so far shows
    it (``spreading.still_spreading``): a precise λ̂ there would be thrown away."""
    num_draws, wanted = choose_num_draws(warm, plan, opts, opts.num_chains)
    every = opts.full_loss_every
    if every is None:  # the full batch's own losses are L_n: evaluations only for the positions
        epoch = FULL_BATCH_EVERY if batch_size == n else math.ceil(n / batch_size)
        every = max(1, min(epoch, num_draws // 10))
    log = BlockLog(opts.callback, chains.nbeta) if opts.callback is not None else None
    record = DataDraws(
        chains, warm.tuning, every, plan.track_positions, full_loss, w_star, observables, log
    )
    checked = wants_step_check(opts, batch_size == n)

    def measure(tr: Trace) -> Precision:
        """λ̂'s precision over the draws so far (on minibatches with the full-data floor)."""
        alive = chains.alive.cpu().numpy()
        full = None if batch_size == n else record.full_trace(alive)
        return precision_of(
            observable(tr, alive), chains.nbeta, opts.rtol, opts.target_stderr, full
        )

    # the first block of draws runs past the clock: there is an estimate even where the warm-up
    # and its restarts took the draws' share of the budget
    first = min(every or MIN_DRAWS, num_draws)
    share = DRAWS_SHARE if checked else DRAWS_SHARE_NO_CHECK
    with chains.stoppable(share, interruptible=True, grace=first):
        trace, num_draws, history, precision = draws_until_precise(
            record,
            num_draws,
            measure,
            max_draws=MAX_DRAWS if opts.num_draws is None else num_draws,
            stopped=lambda: record.stopped is not None or (settling and record.spreading()),
            rounds=MAX_EXTENSIONS if opts.num_draws is None else 0,
        )  # fmt: skip
    mixing = (math.nan, math.nan)
    if plan.track_positions:
        obs = record.observable(trace)
        mixing = (direction_ess(obs), direction_rhat(obs))
    t = warm.tuning
    inflation = heating(t, sgld.noise_heating(t.step_size, plan.integrator, t.friction))
    kappa_end = check(None, END_CHECK_ITERS)[0] if check is not None else math.nan
    return Draws(
        trace,
        num_draws,
        wanted,
        mixing,
        tuple(record.full_losses),
        every,
        chains.norms.ratio(),
        inflation,
        (*record.visited, chains.position.detach().clone()),
        history,
        spread=record.spread(),
        kappa_end=kappa_end,
        centre=record.centre.mean(),
        stopped=record.stopped,
        precision=precision,
        observables=record.observed.arrays(opts.num_chains) if observables else None,
    )
