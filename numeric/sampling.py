r"""After warm-up: how many draws, recording them, and extending them until they mix.

Rules (recorded in ``LLCEstimate.config``):

* **Draws** (``choose_num_draws``): enough for ≈ ``TARGET_ESS`` effective samples over all chains
  given the autocorrelation time τ measured on the last two burn-in blocks
  (``draws_from_tail``), and for ≈ ``SLOW_ESS`` effective samples of the slowest relevant
  direction (its autocorrelation time is ≈ 2t), within [``MIN_DRAWS``, ``MAX_DRAWS``] per chain;
  the ``draws_capped`` finding says when the cap binds.
* **Extension** (``draws_until_mixed``): where the chains spread along flat directions draws are
  added (at most ``MAX_DRAWS`` per chain, ``MAX_EXTENSIONS`` extensions, at least doubling once
  the ESS stops growing with the draws) until ‖w − w*‖² has ESS ``SLOW_ESS``;
  elsewhere until the loss trace has ESS ``LOSS_ESS`` (its τ, measured on 200 burn-in steps, can
  be far too short: 4 chains of a 10⁶-parameter deep linear network gave ESS 52 from 4,099
  draws). The rule reads only the mixing (ESS), never the estimate. Where the ESS fell as draws
  were added and ended short, the chains were still drifting: ``still_relaxing`` (an error).
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
from numeric.centre import CentreSum
from numeric.chains import Chains
from numeric.diagnostics import autocorr_time, direction_ess, direction_rhat
from numeric.findings import Finding
from numeric.options import LLCOptions
from numeric.plan import LLCPlan
from numeric.reach import MAX_DIM
from numeric.stiffness import END_CHECK_ITERS
from numeric.types import Draws, Trace, Tuning, Warmup
from numeric.warmup import Heating, Measure, relax

MIN_DRAWS, MAX_DRAWS, TARGET_ESS = 200, 20_000, 400.0
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


def check_still_relaxing(
    history: tuple[tuple[int, float], ...], target_ess: float
) -> tuple[Finding, ...]:
    """The draws were extended but the ESS ended short of ``target_ess`` after falling as draws
    were added: the chains were still drifting when the draws began. An error: on a trained
    64-150-10 MLP (digits) the loss ESS went 131, 91, 68 over 221, 370, 893 draws and the rule
    (then three extensions) stopped at 2,892 draws and ESS 84 with λ̂ = 58.2 ± 2.5, where a 4×
    longer run gave 45.6 ± 1.4."""
    if len(history) < 2 or not history[-1][1] < target_ess:
        return ()
    peak = max(e for _, e in history[:-1])
    if not history[-1][1] < peak:
        return ()
    trail = ", ".join(f"{e:.0f}" for _, e in history)
    sizes = ", ".join(str(n) for n, _ in history)
    return (
        Finding(
            "still_relaxing",
            "error",
            f"the effective sample size fell as draws were added ({trail} over {sizes} draws per "
            f"chain), short of {target_ess:.0f}: the chains were still moving when the draws "
            "began, and λ̂ is biased toward where they started; run longer (num_burnin several "
            "times the automatic one), or raise gamma so that they settle sooner",
            {"ess": history[-1][1], "peak_ess": peak, "draws": float(history[-1][0])},
        ),
    )


def choose_num_draws(
    warm: Warmup, plan: LLCPlan, opts: LLCOptions, num_chains: int
) -> tuple[int, int | None]:
    """(draws per chain, draws the slowest direction asks for or None) (module docstring);
    given ``num_draws``, those and what the rule asks for."""
    if opts.num_draws is not None:
        return opts.num_draws, rule_draws(warm, plan, num_chains)
    tail = warm.tail
    num = draws_from_tail(tail, num_chains) if tail is not None and tail.steps >= 50 else 1000
    wanted = rule_draws(warm, plan, num_chains)
    if wanted is None:
        return num, None
    return max(num, min(wanted, MAX_DRAWS)), wanted


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

    def __call__(self, count: int) -> Trace:
        self.chains.phase("draws", count)
        parts, done, every = [], 0, self.every
        while done < count:
            k = min(every, count - done) if every else count - done
            parts.append(
                self.chains.advance(
                    k, self.tuning, track_dist=self.track_positions, track_obs=True, norms=True
                )
            )
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
    trace, num_draws, mixing, history = draws_until_mixed(
        record,
        num_draws,
        record.observable,
        extend=opts.num_draws is None,
        target_ess=SLOW_ESS if plan.track_positions else LOSS_ESS,
        max_draws=MAX_DRAWS,
        report=plan.track_positions,
    )
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
    )
