"""One seeded training loop: a model, a loss, data, an optimizer; checkpoints at chosen steps.

Randomness comes from one ``torch.Generator`` (minibatch order, entropy-SGD's noise); nothing is
seeded globally, so the same seed gives the same weights bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from .optimizers import OptimizerSpec
from .records import Record

LossFn = Callable[[Tensor, Tensor], Tensor]


@dataclass(frozen=True)
class Checkpoint:
    """The parameters after ``step`` updates (a detached state dict) and the full-data loss there."""

    step: int
    state: dict[str, Tensor]
    loss: float


@dataclass(frozen=True)
class TrainingRun(Record):
    """Per-step losses (of the batch each step used, before its update) and the checkpoints."""

    optimizer: OptimizerSpec
    seed: int
    steps: int
    batch_size: int | None
    losses: np.ndarray
    checkpoints: tuple[Checkpoint, ...]
    final_loss: float

    def to_dict(self) -> dict:
        out = {f"optimizer.{k}": v for k, v in self.optimizer.to_dict().items()}
        out.update(seed=self.seed, steps=self.steps, batch_size=self.batch_size)
        out.update(
            final_loss=self.final_loss, checkpoint_steps=tuple(c.step for c in self.checkpoints)
        )
        return out

    @property
    def final(self) -> Checkpoint:
        return self.checkpoints[-1]


class _Batches:
    """Minibatch indices: epochs of random permutations from ``generator`` (all rows if None)."""

    def __init__(self, n: int, batch_size: int | None, generator: torch.Generator) -> None:
        self.n, self.batch_size, self.generator = n, batch_size, generator
        self._perm, self._pos = torch.empty(0, dtype=torch.long), 0

    def next(self) -> Tensor | None:
        if self.batch_size is None:
            return None
        if self._pos + self.batch_size > self._perm.numel():
            self._perm, self._pos = torch.randperm(self.n, generator=self.generator), 0
        idx = self._perm[self._pos : self._pos + self.batch_size]
        self._pos += self.batch_size
        return idx


def full_loss(model: nn.Module, loss: LossFn, data: tuple[Tensor, Tensor]) -> float:
    """The loss of ``model`` on all of ``data`` (no gradient)."""
    with torch.no_grad():
        return float(loss(model(data[0]), data[1]))


def train(
    model: nn.Module,
    loss: LossFn,
    data: tuple[Tensor, Tensor],
    optimizer: OptimizerSpec,
    steps: int,
    *,
    generator: torch.Generator,
    batch_size: int | None = None,
    checkpoint_at: Iterable[int] = (),
) -> TrainingRun:
    """Train ``model`` in place for ``steps`` optimizer steps on ``data = (x, y)``.

    ``batch_size=None`` is full-batch; otherwise each step takes the next ``batch_size`` rows of a
    random permutation (a new one each epoch; the last partial batch of an epoch is skipped). A
    checkpoint at step s holds the parameters after s updates (s = 0: the initial ones); the last
    step is always checkpointed. The seed recorded is ``generator.initial_seed()``.
    """
    x, y = data
    n = x.shape[0]
    if steps < 0:
        raise ValueError(f"steps must be non-negative, not {steps}")
    if batch_size is not None and not 1 <= batch_size <= n:
        raise ValueError(f"batch_size must lie in [1, n = {n}], not {batch_size}")
    at = sorted(set(checkpoint_at) | {steps})
    if at[0] < 0 or at[-1] > steps:
        raise ValueError(f"checkpoint steps must lie in [0, {steps}], got {at}")
    seed = generator.initial_seed()
    opt = optimizer.build(model.parameters(), generator)
    # optimizers that need the batch itself (per-sample gradients: NGD's empirical Fisher)
    observe = getattr(opt, "observe_batch", None)
    batches = _Batches(n, batch_size, generator)
    losses = np.full(steps, math.nan)
    checkpoints: list[Checkpoint] = []
    last_loss: list[Tensor] = []

    def closure() -> Tensor:
        idx = batches.next()
        xb, yb = (x, y) if idx is None else (x[idx], y[idx])
        if observe is not None:
            observe(model, loss, xb, yb)
        opt.zero_grad(set_to_none=False)
        value = loss(model(xb), yb)
        value.backward()
        last_loss.append(value.detach())
        return value

    def checkpoint(step: int) -> None:
        state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        checkpoints.append(Checkpoint(step, state, full_loss(model, loss, data)))

    model.train()
    next_at = iter(at)
    target = next(next_at)
    for step in range(steps + 1):
        while target == step:
            checkpoint(step)
            target = next(next_at, -1)
        if step == steps:
            break
        last_loss.clear()
        opt.step(closure)
        losses[step] = float(last_loss[0])
        if not math.isfinite(losses[step]):
            raise FloatingPointError(f"training diverged at step {step} ({optimizer.label})")
    return TrainingRun(
        optimizer, seed, steps, batch_size, losses, tuple(checkpoints), checkpoints[-1].loss
    )
