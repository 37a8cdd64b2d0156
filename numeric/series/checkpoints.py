"""Checkpoints of a training run, as ``estimate_llc_series`` reads them.

A checkpoint is a dict of tensors (a ``state_dict()`` or a params dict) with a label and, when
known, the training step. ``as_checkpoints`` accepts a list of dicts, a dict from steps (or
labels) to dicts, ``Checkpoint``s, or a ``CheckpointRecorder``: the callback a training loop
calls every step, which keeps detached copies at the steps asked for.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from numeric.errors import InvalidInputError

__all__ = ["Checkpoint", "CheckpointRecorder", "as_checkpoints"]


@dataclass(frozen=True, eq=False)
class Checkpoint:
    """The parameters (and buffers) at one point of training: ``params`` by name."""

    params: Mapping[str, Tensor]
    step: int | None = None
    label: str = ""


class CheckpointRecorder:
    """A training loop's callback: ``recorder(step)`` keeps a detached copy of the model's
    ``state_dict()`` (or of what ``source()`` returns) when ``step`` is one to record.

    ``every``: record steps 0, every, 2·every, …; ``steps``: record exactly these steps instead.
    ``device``: where the copies are kept (default: where the tensors are; ``"cpu"`` frees GPU
    memory for long runs). Pass the recorder to ``estimate_llc_series`` as the checkpoints.
    """

    def __init__(
        self,
        source: nn.Module | Callable[[], Mapping[str, Tensor]],
        *,
        every: int = 1,
        steps: Iterable[int] | None = None,
        device: torch.device | str | None = None,
    ) -> None:
        if not (isinstance(source, nn.Module) or callable(source)):
            raise InvalidInputError(
                "source must be an nn.Module or a function returning a dict of tensors, "
                f"not {type(source).__name__}"
            )
        if not (_is_int(every) and every >= 1):
            raise InvalidInputError(f"every must be an int ≥ 1, got {every!r}")
        if steps is not None and (not isinstance(steps, Iterable) or isinstance(steps, str)):
            raise InvalidInputError(f"steps must be a list of ints ≥ 0 (steps=[{steps!r}]?)")
        wanted = None if steps is None else frozenset(_step(s, "steps") for s in steps)
        if wanted is not None and (not wanted or every != 1):
            raise InvalidInputError(
                "steps must name at least one step" if not wanted else
                "give every or steps, not both: steps records exactly those steps"
            )  # fmt: skip
        self.source, self.every, self.steps, self.device = source, every, wanted, device
        self._recorded: list[Checkpoint] = []
        self.last_step: int | None = None  # the last step the recorder was called with

    def wants(self, step: int) -> bool:
        """Whether ``step`` is one to record."""
        return step in self.steps if self.steps is not None else step % self.every == 0

    def __call__(self, step: int) -> bool:
        """Record the state at ``step`` if it is one to record; True when it was recorded."""
        step = _step(step, "step")
        last = self.last_step
        if last is not None and step <= last:  # whether or not this step is one to record
            again = "again" if step == last else f"after step {last}"
            raise InvalidInputError(
                f"step {step} comes {again}: call the recorder once per step, in increasing order"
            )
        self.last_step = step
        if not self.wants(step):
            return False
        state = self.source.state_dict() if isinstance(self.source, nn.Module) else self.source()
        if not isinstance(state, Mapping):
            raise InvalidInputError(f"source() must return a dict of tensors, not {type(state)}")
        self._recorded.append(Checkpoint(_copies(state, self.device), step, str(step)))
        return True

    @property
    def checkpoints(self) -> tuple[Checkpoint, ...]:
        return tuple(self._recorded)

    def __len__(self) -> int:
        return len(self._recorded)

    def __iter__(self) -> Iterator[Checkpoint]:
        return iter(tuple(self._recorded))


def _copies(state: Mapping[str, Any], device: torch.device | str | None) -> dict[str, Tensor]:
    """Detached copies of ``state``'s tensors (on ``device`` when given). Entries that are one
    tensor, as a tied parameter is under each of its names in a ``state_dict``, share one copy:
    no memory twice, and the names stay equal."""
    done: dict[tuple, Tensor] = {}
    out = {}
    for name, v in state.items():
        if not isinstance(v, Tensor):
            raise InvalidInputError(
                f"the recorded state has {name!r}, a {type(v).__name__}; a checkpoint holds "
                "tensors only (record a function returning the tensors to keep)"
            )
        key = _identity(v)
        if key not in done:
            done[key] = v.detach().clone() if device is None else v.detach().to(device, copy=True)
        out[name] = done[key]
    return out


def _identity(t: Tensor) -> tuple:
    """What makes two tensors the same values in memory: storage, offset, shape, strides."""
    if t.layout != torch.strided:
        return ("object", id(t))
    return (
        t.device,
        t.dtype,
        t.untyped_storage().data_ptr(),
        t.storage_offset(),
        tuple(t.shape),
        t.stride(),
    )


def as_checkpoints(checkpoints: Any) -> tuple[Checkpoint, ...]:
    """The checkpoints of any accepted form (module docstring), labelled: a dict's keys (int keys
    are also the steps), a ``Checkpoint``'s own label or step, else the position."""
    if isinstance(checkpoints, CheckpointRecorder):
        items: list[tuple[Any, Any]] = [(None, c) for c in checkpoints.checkpoints]
    elif isinstance(checkpoints, Mapping):
        if checkpoints and all(isinstance(v, Tensor) for v in checkpoints.values()):
            raise InvalidInputError(
                "checkpoints is one dict of tensors; pass a list of them (one per checkpoint), "
                "or call estimate_llc for a single one"
            )
        items = list(checkpoints.items())
    elif isinstance(checkpoints, Iterable) and not isinstance(checkpoints, (str, bytes)):
        items = [(None, c) for c in checkpoints]
    else:
        raise InvalidInputError(
            "checkpoints must be a list of state dicts, a dict from steps to state dicts, or a "
            f"CheckpointRecorder, not {type(checkpoints).__name__}"
        )
    if not items:
        if isinstance(checkpoints, CheckpointRecorder):
            asked = sorted(checkpoints.steps) if checkpoints.steps is not None else None
            raise InvalidInputError(
                "the CheckpointRecorder recorded nothing: it was asked for "
                + (f"steps {asked[:8]}" if asked else f"every {checkpoints.every} steps")
                + f" and last called with step {checkpoints.last_step}"
            )
        raise InvalidInputError("checkpoints is empty")
    out = tuple(_one(i, key, value) for i, (key, value) in enumerate(items))
    _check_distinct(out)
    return out


def _check_distinct(cps: tuple[Checkpoint, ...]) -> None:
    """Labels that tell the checkpoints apart, steps that increase, and no two made of the very
    same tensors (``state_dict()`` appended in a loop without a copy: every one is the final
    weights; a constant buffer shared by all is fine)."""
    labels = [c.label for c in cps]
    if len(set(labels)) != len(labels):
        twice = sorted({x for x in labels if labels.count(x) > 1})
        raise InvalidInputError(f"checkpoints have the same label twice: {twice[:8]}")
    steps = [c.step for c in cps if c.step is not None]
    if any(b <= a for a, b in itertools.pairwise(steps)):
        raise InvalidInputError(f"the checkpoints' steps must increase, got {steps[:16]}")
    seen: dict[tuple, str] = {}
    for cp in cps:
        key = tuple(sorted((name, _identity(v)) for name, v in cp.params.items()))
        if key in seen:
            raise InvalidInputError(
                f"checkpoints {seen[key]!r} and {cp.label!r} are the same tensors in memory "
                "(model.state_dict() kept without a copy: every checkpoint would be the final "
                "weights); keep copy.deepcopy(model.state_dict()), or use CheckpointRecorder"
            )
        seen[key] = cp.label


def _one(i: int, key: Any, value: Any) -> Checkpoint:
    if isinstance(value, Checkpoint):
        step = None if value.step is None else _step(value.step, "a Checkpoint's step")
        label = value.label or (str(step) if step is not None else str(i))
        return Checkpoint(_params(value.params, label), step, label)
    label = str(i) if key is None else str(key)
    step = _step(key, "the checkpoints' steps (int keys)") if _is_int(key) else None
    return Checkpoint(_params(value, label), step, label)


def _params(value: Any, label: str) -> dict[str, Tensor]:
    if not isinstance(value, Mapping) or not value:
        raise InvalidInputError(
            f"checkpoint {label!r} is a {type(value).__name__}; each checkpoint must be a "
            "non-empty dict of tensors (a state_dict)"
        )
    for name, v in value.items():
        if not isinstance(v, Tensor):
            raise InvalidInputError(
                f"checkpoint {label!r}: {name!r} is a {type(v).__name__}, not a tensor"
            )
    return dict(value)


def _is_int(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _step(x: Any, name: str) -> int:
    if not (_is_int(x) and x >= 0):
        raise InvalidInputError(f"{name} must be ints ≥ 0, got {x!r}")
    return int(x)
