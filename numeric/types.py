"""The small immutable types that flow between the estimators' stages.

A run goes options → problem → plan → chains → warm-up → draws → estimate
(``numeric.run.estimate_llc``, ``numeric.potential``). The kernel's types (``KernelSpec``,
``Constants``, ``Record``, ``BlockNoise``) describe one block of steps; ``Trace`` is what any number
of steps saw; ``Tuning`` is what the next steps use; ``Warmup`` and ``Draws`` are what warm-up and
sampling hand on; ``Precision`` is what the stopping rule reads; ``Finding`` is what every stage
reports (``numeric.findings``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple

import torch
from torch import Tensor

from numeric.options import Integrator

if TYPE_CHECKING:
    import numpy as np

Severity = Literal["info", "warning", "error"]


@dataclass(frozen=True)
class Finding:
    """One diagnostic finding. ``values`` holds the numbers the message is based on."""

    code: str
    severity: Severity
    message: str
    values: Mapping[str, float] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"[{self.severity}] {self.code}: {self.message}"


@dataclass(frozen=True)
class KernelSpec:
    """Static settings a kernel is specialised on."""

    control_variate: bool  # ĝ = ∇L_B(w) − ∇L_B(w*) + ∇L_n(w*), else ĝ = ∇L_B(w)
    integrator: Integrator
    stacked: bool  # evaluate w and w* in one vmapped call (small models: dispatch-bound)
    # control variate centred at the nearer of w* and the chain's anchor r (``Constants``):
    # ĝ = ∇L_B(w) − ∇L_B(a) + ∇L_n(a), a = r if ‖w − r‖ < ‖w − w*‖ else w* (``gradients.centre``)
    anchored: bool = False
    # every step sees all n samples (``Problem.full_batch``): one copy of the data, shared by the
    # chains (vmapped with the data not mapped), never gathered per chain; no control variate
    full_batch: bool = False
    # the gradients for at most this many chains per vmapped forward and reverse pass (None: all
    # at once): activations held for one block only, the random draws unchanged
    chain_block: int | None = None

    def __post_init__(self) -> None:
        if self.full_batch and (self.control_variate or self.anchored):
            raise ValueError("a full-batch kernel computes ∇L_n(w) exactly: no control variate")


class Constants(NamedTuple):
    """Per-run tensors and scalars a kernel reads (arguments, not closures: no recompiles)."""

    w_star: Tensor  # [D]
    g_star: Tensor  # [D] ∇L_n(w*)
    sqrt_m: Tensor | None  # [D, D] S = M^{1/2}, or None
    probe: Tensor  # [D, j] directions the drift is projected on (j may be 0)
    nbeta: float
    gamma: float
    alpha: float
    anchor: Tensor | None = None  # [C, D] r: each chain's anchor (``KernelSpec.anchored``)
    g_anchor: Tensor | None = None  # [C, D] ∇L_n(r)
    loss_anchor: Tensor | None = None  # [C] L_n(r) − L_n(w*) (None: every r is w*)
    friction: float = math.inf  # ξ of the BAOAB integrator

    def for_chains(self, chains: Tensor) -> Constants:
        """The constants of the chains ``chains`` (an index tensor): every per-chain field
        (anchors, their gradients and losses) taken for those rows, the shared ones as they are."""

        def take(t: Tensor | None) -> Tensor | None:
            return None if t is None else t[chains]

        return self._replace(
            anchor=take(self.anchor),
            g_anchor=take(self.g_anchor),
            loss_anchor=take(self.loss_anchor),
        )


class Record(NamedTuple):
    """Which optional per-step records a block computes."""

    dist: bool  # ‖w_t − w*‖²
    obs: bool  # d_t·probe
    norms: bool  # Σ‖move‖², Σ‖noise‖²


ALL = Record(dist=True, obs=True, norms=True)


class BlockNoise(NamedTuple):
    idx: Tensor  # [m, C, B] minibatch indices
    xi: Tensor  # [m, C, D] standard normal draws


def cat_steps(values: Sequence[Tensor | None]) -> Tensor | None:
    """Per-step records [C, m, ...] of consecutive blocks joined along the step axis; None when
    a block did not record them."""
    return None if any(v is None for v in values) else torch.cat(list(values), 1)


def _total(values: Sequence[Tensor | None]) -> Tensor | None:
    """Per-block sums added up (Python ``sum``, left to right); None when one is missing."""
    return None if any(v is None for v in values) else sum(values)  # type: ignore[return-value]


class Trace(NamedTuple):
    """What consecutive steps saw: per-step records [C, T] and, over the steps, sums [C]."""

    loss: Tensor  # L_B(w_t) before step t (potentials: K(w_t))
    ref: Tensor  # L_B(w*) on the same minibatch (potentials: K(w*))
    dist: Tensor | None = None  # ‖w_t − w*‖²; None when not recorded
    obs: Tensor | None = None  # [C, T, j] slow observables (d_t·probe, or (w − w*)²)
    drift_sq: Tensor | None = None  # Σ_t ‖(ε/2)·M^{1/2}d_t‖²
    noise_sq: Tensor | None = None  # Σ_t ‖noise increment‖²
    lin: Tensor | None = None  # ℓ_t, the first-order minibatch noise (GradientEval.linear)

    @staticmethod
    def join(parts: Sequence[Trace]) -> Trace:
        """Consecutive traces as one: records concatenated, sums added (one part: itself)."""
        if len(parts) == 1:
            return parts[0]
        return Trace(
            cat_steps([p.loss for p in parts]),  # type: ignore[arg-type]
            cat_steps([p.ref for p in parts]),  # type: ignore[arg-type]
            cat_steps([p.dist for p in parts]),
            cat_steps([p.obs for p in parts]),
            _total([p.drift_sq for p in parts]),
            _total([p.noise_sq for p in parts]),
            cat_steps([p.lin for p in parts]),
        )

    def window(self, start: int, stop: int | None = None) -> Trace:
        """Steps start..stop of the per-step records (the sums over steps left out)."""
        cut = slice(start, stop)
        return Trace(
            self.loss[:, cut],
            self.ref[:, cut],
            None if self.dist is None else self.dist[:, cut],
            None if self.obs is None else self.obs[:, cut],
            lin=None if self.lin is None else self.lin[:, cut],
        )

    @property
    def steps(self) -> int:
        return int(self.loss.shape[1])


class Tuning(NamedTuple):
    """What the next steps use; each warm-up phase returns a new one."""

    step_size: float  # ε
    kappa: float  # κ behind ε (nan when ε was given); named in divergence messages
    friction: float = math.inf  # ξ of BAOAB; ∞ for LM and Euler
    anchor_every: int = 0  # steps between anchor refreshes; 0: control variate centred at w*


class Warmup(NamedTuple):
    """What warm-up hands to sampling."""

    tuning: Tuning
    tail: Trace | None  # the last burn-in steps (τ → number of draws); None if none were run
    num_burnin: int  # steps run before the draws
    step_size_rule: str
    findings: tuple[Finding, ...] = ()  # potentials: plain_mala_creeps
    metric: bool = False  # potentials: position-dependent steps on
    cut: bool = False  # the time budget ended the burn-in early (``numeric.budget``)


MIN_LOSS_ESS = 100.0  # effective draws of λ̂'s own trace before its error bar is believed
MAX_DRAWS = 20_000  # automatic draws per chain at most (``numeric.draws.sample``)
SETTLED_Z = 3.0  # |λ̂(second half) − λ̂(first half)| / se from which λ̂ is still moving
# the standard error's projection adds at most this many times the draws so far: an early se
# rests on few effective draws (4 chains: 3 df), se = max(between-chain, ESS-based) leans high
# there, and the projection squares it (rrr(2,2,2,0): se 0.297 projected 7,572 more draws after
# 697, and the run ended at half the target). The ESS floor's projection, linear in the ESS, is
# not capped (a 432-parameter network whose ESS floor asked for 5× took 1.8× the draws capped)
MAX_GROWTH = 3.0


class Precision(NamedTuple):
    """λ̂ over the draws so far, its standard error against the target ``wanted``, the loss
    trace's ESS, and λ̂'s move from the first half of the draws to the second (± its se)."""

    mean: float
    stderr: float
    wanted: float
    ess: float
    drift: float
    drift_stderr: float

    @property
    def precise(self) -> bool:
        return self.stderr <= self.wanted

    @property
    def settled(self) -> bool:
        return not abs(self.drift) >= SETTLED_Z * self.drift_stderr

    @property
    def done(self) -> bool:
        return self.precise and self.ess >= MIN_LOSS_ESS and self.settled

    def more_draws(self, num_draws: int) -> int:
        """Draws per chain to add: the standard error falls as 1/√draws, so (se/wanted)² − 1
        times the draws so far (10% over), as many again for the ESS floor, and at least as
        many as there are where λ̂ still moves (the first draws then weigh half as much); the
        standard error's share at most ``MAX_GROWTH`` times the draws so far."""
        grow = 0.0
        if not self.precise and self.wanted > 0:
            grow = 1.1 * (self.stderr / self.wanted) ** 2 - 1.0
            grow = min(grow, MAX_GROWTH) if math.isfinite(grow) else grow
        if self.ess < MIN_LOSS_ESS:
            grow = max(grow, 1.1 * MIN_LOSS_ESS / max(self.ess, 1.0) - 1.0)
        if not self.settled:
            grow = max(grow, 1.0)
        if not math.isfinite(grow):  # a standard error that is not finite: double
            grow = 1.0
        return max(math.ceil(num_draws * max(grow, 0.25)), 1)


class CheckDraws(NamedTuple):
    """What the step-size check hands on (``numeric.draws.step_check``): its draws at ε/2, the steps
    of relaxation before them (and again before ``after``), the last draws at ε before the check
    (``before``, as many as at ε/2) and as many at ε after it (``after``)."""

    trace: Trace
    num_relax: int
    before: Trace | None = None
    after: Trace | None = None


class Draws(NamedTuple):
    """What sampling hands to the estimate."""

    trace: Trace  # [C, T] loss, ref (+ obs or dist)
    num_draws: int
    wanted: int | None  # draws per chain the slowest direction asks for (draws_capped; given
    # num_draws: draws_below_rule)
    mixing: tuple[float, float]  # ESS, R-hat of the extension observable
    full_losses: tuple[Tensor, ...] = ()  # L_n at the chains every ``full_loss_every`` draws
    full_loss_every: int = 0
    noise_to_drift: float = math.nan  # √(mean ‖noise‖² / mean ‖drift‖²) over the draws
    inflation: float = math.nan  # minibatch heating at the final positions (nan: exact ∇)
    visited: tuple[Tensor, ...] = ()  # chain positions [C, D] during and at the end of the draws
    ess_history: tuple[tuple[int, float], ...] = ()  # (draws, ESS) at each extension check
    check: CheckDraws | None = None  # the step-size check's draws at ε/2 (numeric.draws.step_check)
    spread: np.ndarray | None = None  # ‖w − w*‖² [T, C] (data: at the full-loss evaluations)
    kappa_end: float = (
        math.nan
    )  # κ where the draws ended (``findings.stiffer_in_draws``; nan: none)
    centre: Tensor | None = None  # each chain's mean of w − w* [C, D] (``findings.off_centre``)
    # (draws per chain, growth, z) of each round of draws made burn-in
    # (``numeric.draws.burn_in_extension``)
    settled: tuple[tuple[int, float, float], ...] = ()
    # "time_budget" or "interrupted": the draws were cut short; "check_skipped": the step-size
    # check did not fit in the time budget; "check_cut" / "check_interrupted": the clock or
    # Ctrl-C stopped it, and it was dropped
    stopped: str | None = None
    precision: Precision | None = None  # λ̂'s precision where the draws stopped
    # observables at the full-loss evaluations, name → [C, T, ...] (numeric.draws.observables)
    observables: dict[str, np.ndarray] | None = None
