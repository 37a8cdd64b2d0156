"""The driver: a batch of chains advanced block by block (NumPyro's ``MCMC`` holds the same).

The transitions themselves are pure (``sgld.update`` through ``kernel``, ``mala.step``,
``mmala.step``); ``Chains`` owns the loop state: the chains' state, which chains are alive, the
steps done, the step-norm sums of the draws and the progress bar. ``advance(k, tuning)`` runs k
steps in blocks of at most ``CHECK_EVERY`` and checks each block once for non-finite or exploding
losses (one host sync per block, not per step): ``on_divergence="raise"`` raises
``DivergenceError`` naming the first chain and step, ``"continue"`` marks the chain dead (and
raises once every chain is).

A block is ``block(state, m, tuning, record) -> (state, Trace)`` (``kernel.AnchoredBlock``, or
``stepwise_block`` around a per-step transition).
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import Tensor

from numeric.budget import Clock, Stopped
from numeric.errors import DivergenceError, InvalidInputError
from numeric.options import OnDivergence
from numeric.types import Record, Trace, Tuning

CHECK_EVERY = 64  # steps between non-finite checks (one host sync each)
_LOG = logging.getLogger("numeric")

Block = Callable[[Any, int, Tuning, Record], tuple[Any, Trace]]
# a per-step transition: (state, ε) -> (new state, loss [C], ref [C])
Transition = Callable[[Any, float], tuple[Any, Tensor, Tensor]]


class StepNorms:
    """Sums of ‖drift‖² and ‖noise‖² per chain over the steps recorded, for the step-size check
    (``findings.checks.check_step_size``)."""

    def __init__(self, like: Tensor) -> None:
        self.drift = like.new_zeros(like.shape[0])
        self.noise = like.new_zeros(like.shape[0])
        self.count = 0

    def add(self, drift_sq: Tensor, noise_sq: Tensor, steps: int) -> None:
        self.drift += drift_sq
        self.noise += noise_sq
        self.count += steps

    def ratio(self) -> float:
        """√(mean ‖noise‖² / mean ‖drift‖²) of the steps recorded."""
        cnt = max(self.count, 1)
        return float(
            torch.sqrt(self.noise.sum() / cnt / (self.drift.sum() / cnt).clamp_min(1e-300))
        )


def check_block(
    loss: Tensor,
    ref: Tensor,
    nbeta: float,
    dim: int,
    first_step: int,
    *,
    tuning: Tuning,
    on_divergence: OnDivergence,
    alive: Tensor,
    lin: Tensor | None = None,
) -> Tensor:
    """Raise (or mark chains dead) on non-finite or exploding nβ·(L − L*) in a block [C, b] of
    losses and references; one host sync where all is well. Where the reference itself is not
    finite, ``check_reference`` raises instead (the difference is then not finite either).
    With the first-order minibatch noise ℓ (``numeric.stats.observable``) a step explodes only where
    L − L* and L − L* − ℓ both pass the limit: at large nβ the noise alone reaches it on chains
    that stay put, and in a curved valley ℓ alone does, while a diverging chain's loss grows
    quadratically and passes both."""
    limit = 50.0 * (dim / 2 + 10.0)
    scaled = (loss - ref) * nbeta
    if lin is not None:
        scaled = torch.minimum(scaled, scaled - lin * nbeta)
    bad = ~torch.isfinite(scaled) | (scaled > limit)
    if not bool(bad.any()):
        return alive
    check_reference(ref, first_step)
    chains, steps = bad.nonzero(as_tuple=True)
    order = torch.argsort(steps * bad.shape[0] + chains)
    c, s = int(chains[order[0]]), int(steps[order[0]]) + first_step
    value = float(scaled[chains[order[0]], steps[order[0]]])
    step_size = tuning.step_size
    ek = step_size * tuning.kappa
    cause = (
        f"step size ε = {step_size:.3g} is probably too large for nβ = {nbeta:.4g}"
        + (
            f" (ε·curvature ≈ {ek:.2g}; stable Langevin needs ε·curvature < 4 everywhere the chain "
            "goes)"
            if math.isfinite(ek)
            else ""
        )
        + (
            "; the step was chosen from the curvature at w*, and the chains went where the loss "
            "is steeper: raise gamma to keep them nearer w*, or pass a smaller step_size"
            if math.isfinite(tuning.kappa)
            else "; reduce step_size, or leave it None to have it chosen from the curvature"
        )
    )
    if on_divergence == "raise":
        what = (
            "non-finite loss" if not math.isfinite(value) else f"exploding loss nβ·ΔL = {value:.3g}"
        )
        raise DivergenceError(what, chain=c, step=s, cause=cause, step_size=step_size)
    alive = alive & ~bad.any(dim=1)
    if not bool(alive.any()):  # nothing left to continue with
        raise DivergenceError(
            "every chain diverged", chain=c, step=s, cause=cause, step_size=step_size
        )
    return alive


def check_reference(ref: Tensor, first_step: int) -> None:
    """Raise where the loss at w* itself, L_B(w*) on a drawn minibatch [C, b], is not finite:
    the loss is undefined on some minibatches, which no step size or restart mends (a divergence
    restarted three times before it said so)."""
    bad = ~torch.isfinite(ref)
    if not bool(bad.any()):
        return
    chains, steps = bad.nonzero(as_tuple=True)
    c, s = int(chains[0]), int(steps[0])
    raise InvalidInputError(
        f"the loss at w* is {float(ref[c, s])} on a minibatch the chains drew (chain {c}, step "
        f"{first_step + s}), though L_n(w*) on the whole data is finite: a loss that averages "
        "over a count that depends on the batch (cross-entropy with ignore_index on a batch "
        "whose targets are all ignored, a masked mean) is undefined on such batches, whatever "
        "the step size. Use a larger batch_size, or a loss that is a mean over the samples"
    )


def stepwise_block(
    transition: Transition, position_of: Callable[[Any], Tensor], center: Tensor
) -> Block:
    """A block that applies ``transition`` m times, taking before each step ‖w − w*‖²
    (``record.dist``) and the per-coordinate (w_i − w*_i)² as ``obs`` [C, m, D] (``record.obs``).
    Step norms, if any, are the transition's own business (``record.norms`` is ignored)."""

    def block(state: Any, m: int, tuning: Tuning, record: Record) -> tuple[Any, Trace]:
        loss, ref, dist, obs = [], [], [], []
        for _ in range(m):
            if record.dist or record.obs:
                sq = (position_of(state) - center).square()
                if record.dist:
                    dist.append(sq.sum(-1))
                if record.obs:
                    obs.append(sq)
            state, lo, re = transition(state, tuning.step_size)
            loss.append(lo)
            ref.append(re)
        return state, Trace(
            torch.stack(loss, 1),
            torch.stack(ref, 1),
            torch.stack(dist, 1) if record.dist else None,
            torch.stack(obs, 1) if record.obs else None,
        )

    return block


def default_progress(progress: bool | None) -> bool:
    """A progress bar when asked for, or by default when stderr is a terminal."""
    return sys.stderr.isatty() if progress is None else progress


class Chains:
    """A batch of chains: their state, which are alive, the steps done (module docstring)."""

    def __init__(
        self,
        state: Any,
        block: Block,
        position_of: Callable[[Any], Tensor],
        *,
        nbeta: float,
        on_divergence: OnDivergence,
        progress: bool,
        total_hint: int,
        clock: Clock | None = None,
    ) -> None:
        self.state, self.block, self.position_of = state, block, position_of
        self.nbeta, self.on_divergence = nbeta, on_divergence
        self.steps_done = 0
        # the clock (``numeric.budget``): advance stops past ``deadline``; during the draws a
        # Ctrl-C ends them (``catch_interrupt``) and sets ``interrupted``
        self.clock = Clock(None) if clock is None else clock
        self.deadline = math.inf
        self.catch_interrupt = False
        self.stop_from = 0  # steps before which neither the clock nor Ctrl-C is caught
        self.interrupted = False
        self.tuning: Tuning | None = None  # the tuning of the last advance
        self.log = _PhaseLog()
        w = position_of(state)
        self.alive = torch.ones(w.shape[0], dtype=torch.bool, device=w.device)
        self.dim = w.shape[1]
        self.norms = StepNorms(w)
        self.pbar = None
        if progress:
            from tqdm.auto import tqdm

            self.pbar = tqdm(total=total_hint, desc="SGLD", unit="step", file=sys.stderr)

    @property
    def position(self) -> Tensor:
        return self.position_of(self.state)

    def phase(self, label: str, steps: int | None = None) -> None:
        """Start the progress bar afresh for the run's next phase: its name, and its length in
        steps where known (the bar then fills towards the phase's end; an open count otherwise)."""
        self.log.start(label, steps, self.steps_done)
        if self.pbar is None:
            return
        self.pbar.refresh()  # the phase that ends, as it ended (a log keeps each phase's tally)
        self.pbar.set_description(f"SGLD {label}", refresh=False)
        self.pbar.reset(total=math.inf if steps is None else max(int(steps), 0))  # inf: open

    def advance(
        self,
        k: int,
        tuning: Tuning,
        *,
        track_dist: bool = False,
        track_obs: bool = False,
        norms: bool = False,
    ) -> Trace:
        """k ≥ 1 steps at ``tuning``; ‖w − w*‖², the slow observables and the step norms
        (added to ``self.norms``) only when asked for."""
        if k < 1:
            raise ValueError(f"advance needs k ≥ 1 steps, got {k}")
        record = Record(dist=track_dist, obs=track_obs, norms=norms)
        self.tuning = tuning
        parts: list[Trace] = []
        done = 0
        try:
            while done < k:
                if time.monotonic() > self.deadline and self.steps_done + done >= self.stop_from:
                    raise Stopped("time_budget", None)
                m = min(CHECK_EVERY, k - done)
                self.state, tr = self.block(self.state, m, tuning, record)
                if norms and tr.drift_sq is not None:
                    self.norms.add(tr.drift_sq, tr.noise_sq, m)
                self.alive = check_block(
                    tr.loss,
                    tr.ref,
                    self.nbeta,
                    self.dim,
                    self.steps_done + done,
                    tuning=tuning,
                    on_divergence=self.on_divergence,
                    alive=self.alive,
                    lin=tr.lin,
                )
                if self.pbar is not None:
                    self.pbar.update(m)
                parts.append(tr)
                done += m
        except Stopped:
            self.steps_done += done
            raise Stopped("time_budget", Trace.join(parts) if parts else None) from None
        except KeyboardInterrupt:
            if not self.catch_interrupt or self.steps_done + done < self.stop_from:
                raise
            self.steps_done += done
            self.interrupted = True
            raise Stopped("interrupted", Trace.join(parts) if parts else None) from None
        self.steps_done += k
        return Trace.join(parts)

    @contextlib.contextmanager
    def stoppable(self, share: float, *, interruptible: bool, grace: int = 0) -> Iterator[None]:
        """Steps inside end by ``share`` of the time budget (``advance`` raises ``Stopped``) and,
        with ``interruptible``, at Ctrl-C; neither after it. The first ``grace`` steps inside run
        whatever the clock says, and Ctrl-C during them propagates: a phase that must return
        something (the draws) has it even where the warm-up spent its share of the budget."""
        self.deadline, self.catch_interrupt = self.clock.deadline(share), interruptible
        self.stop_from = self.steps_done + grace
        try:
            yield
        finally:
            self.deadline, self.catch_interrupt, self.stop_from = math.inf, False, 0

    def seconds_per_step(self) -> float:
        """Wall time per step so far (all of it: steps, measurements, checks); nan before any."""
        return self.clock.elapsed() / self.steps_done if self.steps_done else math.nan

    def __enter__(self) -> Chains:
        return self

    def __exit__(self, *exc: object) -> None:
        self.log.start(None, None, self.steps_done)
        if self.pbar is not None:
            self.pbar.close()


class _PhaseLog:
    """One ``logging`` line (logger ``numeric``, level INFO) per phase as it ends: its name,
    steps and seconds, so that a run is visible where stderr is not a terminal
    (``logging.basicConfig(level=logging.INFO)`` shows them)."""

    def __init__(self) -> None:
        self.label: str | None = None
        self.steps0 = 0
        self.t0 = time.monotonic()

    def start(self, label: str | None, steps: int | None, steps_done: int) -> None:
        now = time.monotonic()
        if self.label is not None and _LOG.isEnabledFor(logging.INFO):
            _LOG.info(
                "SGLD %s: %d steps in %.2f s", self.label, steps_done - self.steps0, now - self.t0
            )
        if label is not None and steps is not None and _LOG.isEnabledFor(logging.DEBUG):
            _LOG.debug("SGLD %s: %d steps planned", label, steps)
        self.label, self.steps0, self.t0 = label, steps_done, now
