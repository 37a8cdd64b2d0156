r"""After warm-up: how many draws, recording them, and extending them until they mix.

Rules (recorded in ``LLCEstimate.config``):

* **Draws** (``choose_num_draws``): a first chunk of ≈ ``TARGET_ESS`` effective samples over all
  chains given the autocorrelation time τ measured on the last two burn-in blocks
  (``draws_from_tail``), within [``MIN_DRAWS``, ``MAX_DRAWS``] per chain. The draws the slowest
  relevant direction asks for (≈ ``SLOW_ESS`` effective samples at an autocorrelation time of 2t)
  are a diagnostic: ``draws_capped`` where the cap bound while they asked for more.
* **Sequential stopping** (``draws_until_precise``): draws are added (at most ``MAX_DRAWS`` per
  chain, ``MAX_EXTENSIONS`` extensions, each projected from the standard error so far) until the
  answer is known: λ̂'s standard error at most ``rtol``·|λ̂| (or ``target_stderr``), its loss
  trace at least ``MIN_LOSS_ESS`` effective draws (the burn-in's τ can be far too short: 4 chains
  of a 10⁶-parameter deep linear network gave ESS 52 from 4,099 draws), and λ̂ no longer moving
  between the halves of the draws. The slow directions' mixing (``SLOW_ESS`` of ‖w − w*‖² or
  of the drift on them) is reported (``slow_mixing``), not a length: λ̂ is what is estimated.
  Where the rule ends unmet: ``still_relaxing`` (λ̂ still moving), ``imprecise``.
  The potential estimator extends on the positions' ESS (``draws_until_mixed``).
* **Full-data losses**: L_n at the chains every ``full_loss_every`` draws (default ⌈n/B⌉, at
  most draws/10; about one more forward pass per step), for ``LLCEstimate.full_data``; with them
  the chains' spread ‖w − w*‖², for ``numeric.spreading``, and each chain's running sum of
  w − w* (one more [C, D] tensor), for ``numeric.centre``.
* **Heating**: the minibatch heating at the final positions (``LLCEstimate.minibatch_inflation``).
* **Stiffness**: κ where the draws ended, against the κ that ε was set for (``numeric.stiffness``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from numeric import sgld
from numeric.budget import DRAWS_SHARE, DRAWS_SHARE_NO_CHECK, Stopped
from numeric.centre import CentreSum
from numeric.chains import Chains
from numeric.diagnostics import autocorr_time, direction_ess, direction_rhat
from numeric.findings import Finding
from numeric.observable import observable
from numeric.options import LLCOptions, wants_step_check
from numeric.plan import LLCPlan
from numeric.reach import MAX_DIM
from numeric.result import chain_stats
from numeric.stiffness import END_CHECK_ITERS
from numeric.types import Draws, Precision, Trace, Tuning, Warmup
from numeric.warmup import Heating, Measure, relax

# the first chunk of automatic draws aims at TARGET_ESS effective samples (the stopping rule
# extends it as far as λ̂'s precision needs)
MIN_DRAWS, MAX_DRAWS, TARGET_ESS = 200, 20_000, 100.0
SLOW_ESS = 400.0  # effective samples wanted of the slowest direction / of ‖w − w*‖²
# automatic draws are extended while the loss trace's ESS is below this (its autocorrelation time
# was measured on 200 burn-in steps, which cannot see a longer one)
LOSS_ESS = 200.0
FULL_BATCH_EVERY = 16  # steps between full-loss evaluations where the batch is the full data
MAX_VISITED = 64  # chain positions kept for the unreached-region check (numeric.reach)
MAX_EXTENSIONS = 6  # rounds of added draws at most


def draws_from_tail(
    tail: Trace, num_chains: int, *, min_draws: int = MIN_DRAWS, target_ess: float = TARGET_ESS
) -> int:
    """Draws for ≈ ``target_ess`` effective samples given τ measured on the end of burn-in."""
    x = (tail.loss - tail.ref).double().cpu().numpy()
    tau = autocorr_time(x)
    if not math.isfinite(tau):
        return min_draws
    return int(min(MAX_DRAWS, max(min_draws, math.ceil(target_ess * tau / num_chains))))


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


def precision_of(delta: np.ndarray, nbeta: float, rtol: float, target: float | None) -> Precision:
    """``Precision`` of nβ·``delta`` [chain, draw]: se = max(between-chain, ESS-based), the
    standard error ``numeric.result`` reports; wanted = max(``rtol``·|λ̂|, ``target``)."""
    st = chain_stats(delta, nbeta)
    half = delta.shape[1] // 2
    if half >= 4:
        first, second = chain_stats(delta[:, :half], nbeta), chain_stats(delta[:, half:], nbeta)
        drift, drift_se = second.mean - first.mean, math.hypot(first.stderr, second.stderr)
    else:
        drift, drift_se = math.nan, math.nan
    wanted = max(rtol * abs(st.mean), target or 0.0)
    return Precision(st.mean, st.stderr, wanted, st.ess, drift, drift_se)


def draws_until_precise(
    draws: Callable[[int], Trace],
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
    ended the draws). Returns the traces, the draws, (draws, ESS) after each measurement and
    the last ``Precision``."""
    tr = draws(num_draws)
    num_draws = tr.steps
    p = precision(tr)
    history = [(num_draws, p.ess)]
    for _ in range(rounds):
        if p.done or stopped():
            break
        more = min(p.more_draws(num_draws), max_draws - num_draws)
        if more <= 0:
            break
        tr = Trace.join([tr, draws(more)])
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


def choose_num_draws(
    warm: Warmup, plan: LLCPlan, opts: LLCOptions, num_chains: int
) -> tuple[int, int | None]:
    """(draws per chain, draws the slowest direction asks for or None) (module docstring);
    given ``num_draws``, those and what the rule asks for."""
    if opts.num_draws is not None:
        return opts.num_draws, rule_draws(warm, plan, num_chains)
    tail = warm.tail
    num = draws_from_tail(tail, num_chains) if tail is not None and tail.steps >= 50 else 1000
    return num, rule_draws(warm, plan, num_chains)


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
    ) -> None:
        self.chains, self.tuning, self.every = chains, tuning, every
        self.track_positions, self.full_loss, self.w_star = track_positions, full_loss, w_star
        self.full_losses: list[Tensor] = []
        self.spreads: list[Tensor] = []  # ‖w − w*‖² [C] at each full-loss evaluation
        self.centre = CentreSum()  # Σ (w − w*) [C, D] there too (numeric.centre)
        # positions at every ``stride``-th full-loss evaluation, for numeric.reach; halved and
        # the stride doubled when full, so that they span the whole run, not its first part
        self.visited: list[Tensor] = []
        self.evaluations, self.stride = 0, 1
        self.stopped: str | None = None  # "time_budget" or "interrupted" where draws were cut

    def __call__(self, count: int) -> Trace:
        """``count`` draws (fewer where the clock or Ctrl-C stopped them: ``stopped``)."""
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
                break
            done += k
            if k == every:
                pos = self.chains.position
                self.full_losses.append(self.full_loss(pos))
                offset = pos - self.w_star
                self.spreads.append(offset.square().sum(-1))
                self.centre.add(offset)
                if pos.shape[-1] <= MAX_DIM:
                    self._keep(pos)
        return Trace.join(parts)

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
    check: Measure | None = None,
) -> Draws:  # fmt: skip
    """The draws of ``estimate_llc`` after ``warm`` (module docstring); ``check`` measures κ
    where they ended (``Draws.kappa_end``, ``numeric.stiffness``), nan without it."""
    num_draws, wanted = choose_num_draws(warm, plan, opts, opts.num_chains)
    every = opts.full_loss_every
    if every is None:  # the full batch's own losses are L_n: evaluations only for the positions
        epoch = FULL_BATCH_EVERY if batch_size == n else math.ceil(n / batch_size)
        every = max(1, min(epoch, num_draws // 10))
    record = DataDraws(chains, warm.tuning, every, plan.track_positions, full_loss, w_star)
    checked = wants_step_check(opts, batch_size == n)
    chains.deadline = chains.clock.deadline(DRAWS_SHARE if checked else DRAWS_SHARE_NO_CHECK)
    chains.catch_interrupt = True
    try:
        trace, num_draws, history, precision = draws_until_precise(
            record,
            num_draws,
            lambda tr: precision_of(
                observable(tr, chains.alive.cpu().numpy()), chains.nbeta, opts.rtol,
                opts.target_stderr,
            ),
            max_draws=MAX_DRAWS if opts.num_draws is None else num_draws,
            stopped=lambda: record.stopped is not None,
            rounds=MAX_EXTENSIONS if opts.num_draws is None else 0,
        )  # fmt: skip
    finally:
        chains.catch_interrupt = False
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
        spread=(torch.stack(record.spreads).double().cpu().numpy() if record.spreads else None),
        kappa_end=kappa_end,
        centre=record.centre.mean(),
        stopped=record.stopped,
        precision=precision,
    )
