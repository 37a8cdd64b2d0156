"""Data sets as the estimators see them: a tuple of tensors (samples on the first axis), a dict
of such tensors (the loss then gets a dict batch with the same keys), or anything indexable by a
tensor of indices (``numeric.inputs.data_forms.as_data`` brings the other forms users hold into one
of these)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor
from torch.utils.data import (
    DataLoader,
    IterableDataset,
)

from numeric.errors import InvalidInputError


def _parts(data: Any) -> list[tuple[str, Any]] | None:
    """(name, part) of a dict (``data['key']``) or tuple (``data[i]``) of tensors; None for
    other data, which is one piece."""
    if isinstance(data, Mapping):
        return [(f"data[{k!r}]", x) for k, x in data.items()]
    if isinstance(data, (tuple, list)):
        return [(f"data[{i}]", x) for i, x in enumerate(data)]
    return None


def _each(data: Any, fn: Callable[[Any], Any]) -> Any:
    """``fn`` applied to each part of a dict or tuple (a dict or tuple again), or to ``data``."""
    if isinstance(data, Mapping):
        return {k: fn(x) for k, x in data.items()}
    if isinstance(data, (tuple, list)):
        return tuple(fn(x) for x in data)
    return fn(data)


def data_len(data: Any) -> int:
    """Number of samples: the common length of the tensors of a tuple or dict, or ``len(data)``."""
    if data is None or isinstance(data, (str, bytes)):
        raise InvalidInputError(
            f"data must be a tensor, a tuple or dict of tensors (samples on the first axis) or "
            f"an indexable data set, got {type(data).__name__}"
        )
    if isinstance(data, (DataLoader, IterableDataset)):  # len() would count batches, or fail
        raise InvalidInputError(
            f"data is a {type(data).__name__}: pass it through "
            "numeric.inputs.data_forms.as_data first (its data set as tensors), or pass the tensors"
        )
    parts = _parts(data)
    if parts is not None:
        if not parts:
            raise InvalidInputError(f"data is an empty {type(data).__name__}")
        lens = {name: _length(name, x) for name, x in parts}
        if len(set(lens.values())) != 1:
            shown = ", ".join(f"{name} {m}" for name, m in lens.items())
            raise InvalidInputError(f"data tensors have different lengths: {shown}")
        return next(iter(lens.values()))
    return _length("data", data)


def _length(name: str, x: Any) -> int:
    """Samples in one part of the data (its first axis, or ``len``)."""
    if name != "data" and isinstance(x, (tuple, Mapping)):
        raise InvalidInputError(
            f"{name} is a {type(x).__name__}: data nested in data is not read; pass one flat "
            "tuple or dict of tensors with samples on the first axis, e.g. (x, y)"
        )
    if isinstance(x, Tensor):
        if x.dim() == 0:
            raise InvalidInputError(f"{name} is a 0-dim tensor: samples go on the first axis")
        return int(x.shape[0])
    try:
        return len(x)
    except TypeError:
        raise InvalidInputError(
            f"{name} is a {type(x).__name__}, which has no length: pass tensors with samples on "
            "the first axis"
        ) from None


def take(data: Any, idx: Tensor) -> Any:
    """``data`` indexed by a tensor of indices (shape [C, B] gives a batch per chain)."""
    return _each(data, lambda x: _take1(x, idx))


def take_all(data: Any, idx: Tensor) -> Any:
    """``take(data, idx)`` for idx = 0..n − 1 ([n]): tensors as they are (no copy), other data
    indexed. The batch every chain shares at the full batch."""
    return _each(data, lambda x: x if isinstance(x, Tensor) else _take1(x, idx))


def row_blocks(count: int, size: int | None) -> list[tuple[int, int]]:
    """Rows 0..count − 1 as (start, stop) blocks of at most ``size`` (None: one block)."""
    step = max(size or count, 1)
    return [(s, min(s + step, count)) for s in range(0, count, step)]


def rows_of(batch: Any, start: int, stop: int) -> Any:
    """Rows start:stop of a gathered batch [R, B, ...] (each part of a dict or tuple)."""
    return _each(batch, lambda x: x[start:stop])


def take_tiled(data: Any, idx: Tensor, copies: int) -> Any:
    """``take(data, idx.repeat(copies, 1))`` for idx [C, B]: each chain's minibatch ``copies``
    times over, [copies·C, B, ...]. Tensors are gathered once and the rows concatenated (on the
    CPU a gather and an index ``repeat`` cost ~20 µs each for 8 chains' batches, a concatenation
    a few); other data are indexed by the repeated indices."""
    if copies == 1:
        return take(data, idx)

    def one(x: Any) -> Any:
        if isinstance(x, Tensor):
            return torch.cat([_take1(x, idx)] * copies)
        return x[idx.repeat(copies, 1)]

    return _each(data, one)


def _take1(x: Any, idx: Tensor, out: Tensor | None = None) -> Any:
    """x[idx] with idx's shape in front; a tensor's rows go into ``out`` when given."""
    if isinstance(x, Tensor):  # index_select is several times faster than x[idx] on CPU
        rows = torch.index_select(_rows(x), 0, idx.reshape(-1), out=out)
        return rows.view(*idx.shape, *x.shape[1:])
    return x[idx]


def _rows(x: Tensor) -> Tensor:
    """x itself, or x flattened when a row is one element ([n, 1] → [n]: index_select on the
    flat view is 4× faster on CPU)."""
    return x.reshape(-1) if x.dim() > 1 and math.prod(x.shape[1:]) == 1 else x


PACK_WIDTH = 64  # tensors whose rows total at most this many elements are gathered as one


class Gatherer:
    """``take`` for a tensor or a tuple of tensors into buffers reused from call to call.

    A fresh multi-megabyte result per call is fresh memory from the OS each time, and its page
    faults cost more than the gather (3× for 256 chains × 8 steps × 100 rows of 10 floats).
    Narrow rows cost per row, not per byte: tensors of one dtype and device whose rows together
    hold at most ``PACK_WIDTH`` elements are copied once, side by side, into one [n, Σ widths]
    matrix, gathered by one ``index_select`` and returned as column views of its result (x [n, 4]
    and y [n, 4] in 0.64 ms instead of 1.34 ms for 204,800 rows). The result is overwritten by
    the next call.

    ``batch_inner=True`` (packable data only; ``self.batch_inner`` says whether it applied): the
    packed matrix is kept transposed, [Σ widths, n], and gathered along its columns, so in the
    result the last axis of ``idx`` (the batch) is innermost in memory and the features are
    outermost. A compiled step then vectorises along the batch (``numeric.backend.inductor``).
    """

    def __init__(self, data: tuple[Tensor, ...] | Tensor, *, batch_inner: bool = False) -> None:
        self.data = data
        self._items = data if isinstance(data, (tuple, list)) else (data,)
        flat = [_rows(x) for x in self._items]
        widths = [math.prod(r.shape[1:]) for r in flat]
        packable = len({(r.dtype, r.device) for r in flat}) == 1 and sum(widths) <= PACK_WIDTH
        self.batch_inner = batch_inner and packable
        self._packed: Tensor | None = None  # [n, Σ widths], or [Σ widths, n] when batch_inner
        if packable and (len(flat) > 1 or self.batch_inner):
            packed = torch.cat([r.reshape(r.shape[0], -1) for r in flat], 1)
            self._packed = packed.t().contiguous() if self.batch_inner else packed
        # column range [a, b) of each tensor in the packed matrix
        self._cuts = list(itertools.pairwise([0, *itertools.accumulate(widths)]))
        self._out: tuple[Tensor, ...] = ()

    def __call__(self, idx: Tensor) -> Any:
        n_idx = idx.numel()
        if self._packed is None:  # one gather per tensor, each into its own buffer
            if not self._out or self._out[0].shape[0] != n_idx:
                rows = map(_rows, self._items)
                self._out = tuple(r.new_empty((n_idx, *r.shape[1:])) for r in rows)
            res = tuple(_take1(x, idx, o) for x, o in zip(self._items, self._out, strict=True))
            return self._as_data(res)
        axis = 1 if self.batch_inner else 0  # the packed matrix's sample axis
        if not self._out or self._out[0].shape[axis] != n_idx:
            shape = list(self._packed.shape)
            shape[axis] = n_idx
            self._out = (self._packed.new_empty(shape),)
        (o,) = self._out
        torch.index_select(self._packed, axis, idx.reshape(-1), out=o)
        if self.batch_inner:  # tensor i: rows a..b, the last axis of idx innermost in memory
            res = tuple(
                o[a:b].view(b - a, *idx.shape).movedim(0, -1).view(*idx.shape, *x.shape[1:])
                for (a, b), x in zip(self._cuts, self._items, strict=True)
            )
        else:  # tensor i: columns a..b (a view that splits the row axis and the column block)
            res = tuple(
                o[:, a:b].view(*idx.shape, *x.shape[1:])
                for (a, b), x in zip(self._cuts, self._items, strict=True)
            )
        return self._as_data(res)

    def _as_data(self, res: tuple[Tensor, ...]) -> Any:
        return res if isinstance(self.data, (tuple, list)) else res[0]


def to_device(data: Any, device: torch.device, dtype: torch.dtype) -> Any:
    """Tensors moved to ``device``; floating-point ones cast to ``dtype`` (indices stay integer).
    Data that moves itself (``numeric.inputs.host_data.HostData``: a ``to_run`` method) is
    bound to ``device`` and ``dtype`` instead, its tensors left where they are."""
    if callable(to_run := getattr(data, "to_run", None)):
        return to_run(device, dtype)

    def conv(x: Any) -> Any:
        if isinstance(x, Tensor):
            if x.is_meta:
                raise InvalidInputError(
                    "data holds a tensor on the meta device, which has shapes but no values: "
                    "pass the data on the CPU or a GPU"
                )
            x = x.to(device)
            return x.to(dtype) if x.is_floating_point() else x
        return x

    return _each(data, conv)


def non_finite_parts(data: Any) -> list[str]:
    """Names of the floating-point tensors of ``data`` that hold NaN or inf (``data``,
    ``data[i]`` or ``data['key']``), to say where a non-finite loss comes from."""
    named = _parts(data) or [("data", data)]
    return [
        name
        for name, x in named
        if isinstance(x, Tensor) and x.is_floating_point() and not bool(torch.isfinite(x).all())
    ]


def signature(data: Any) -> tuple | None:
    """Shapes, dtypes and devices of a tuple of tensors (a cache key), None for other data
    (dicts included: the compiled kernel takes a tensor or a tuple)."""
    if isinstance(data, Mapping):
        return None
    items = data if isinstance(data, (tuple, list)) else (data,)
    if not all(isinstance(x, Tensor) for x in items):
        return None
    return tuple((tuple(x.shape), x.dtype, str(x.device)) for x in items)


def draw_indices(
    n: int, shape: tuple[int, ...], gen: torch.Generator, device: torch.device
) -> torch.Tensor:
    """Minibatch indices of ``shape`` (batch size last) uniform on [0, n) with replacement; a
    batch of all n samples is the full data, 0..n − 1 in order for each (a broadcast view, nothing
    drawn from ``gen``): full-batch gradients are exact, with no minibatch noise."""
    if shape[-1] == n:
        return torch.arange(n, device=device).expand(shape)
    return torch.randint(n, shape, generator=gen, device=device)
