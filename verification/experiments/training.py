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

from .._validate import check_int, check_type
from ..errors import InvalidArgumentError, InvalidTypeError
from .optimizers import OptimizerSpec
from .records import Record

LossFn = Callable[[Tensor, Tensor], Tensor]
MAX_STEPS = 10**7  # the per-step losses are kept (80 MB); more is weeks of training anyway


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


def _checked_args(
    data: object, steps: object, batch_size: object, checkpoint_at: object, generator: object
) -> tuple[int, int | None, list[int]]:
    """``train``'s sizes as ints (bools, floats and strings refused) and the checkpoint steps,
    sorted with ``steps`` added: none is dropped or rounded."""
    if not (isinstance(data, tuple | list) and len(data) == 2):
        raise InvalidTypeError(f"data must be a pair (x, y) of tensors, got {type(data).__name__}")
    x, y = data
    check_type("data[0] (x)", x, Tensor)
    check_type("data[1] (y)", y, Tensor)
    if x.dim() == 0 or y.dim() == 0 or x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise InvalidArgumentError(
            f"data must hold as many rows of x as of y (at least one), got x {tuple(x.shape)}, "
            f"y {tuple(y.shape)}"
        )
    n = x.shape[0]
    steps = check_int("steps", steps, 0, MAX_STEPS)
    if batch_size is not None:
        batch_size = check_int(f"batch_size (n = {n} rows)", batch_size, 1, n)
    if isinstance(checkpoint_at, str | bytes) or not isinstance(checkpoint_at, Iterable):
        raise InvalidTypeError(f"checkpoint_at must be a sequence of steps, got {checkpoint_at!r}")
    at = {check_int("checkpoint_at step", s, 0, steps) for s in checkpoint_at}
    check_type("generator", generator, torch.Generator)
    return steps, batch_size, sorted(at | {steps})


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
    steps, batch_size, at = _checked_args(data, steps, batch_size, checkpoint_at, generator)
    if not callable(getattr(optimizer, "build", None)):
        raise InvalidTypeError(f"optimizer must be an OptimizerSpec, got {optimizer!r:.80}")
    x, y = data
    n = x.shape[0]
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
