"""Data sets as the estimators see them: a tuple of tensors (samples on the first axis) or
anything indexable by a tensor of indices."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from numeric.errors import InvalidInputError


def data_len(data: Any) -> int:
    """Number of samples: length of the first tensor of a tuple, or ``len(data)``."""
    if isinstance(data, (tuple, list)):
        if len(data) == 0:
            raise InvalidInputError("data is an empty tuple")
        lens = {int(x.shape[0]) if isinstance(x, Tensor) else len(x) for x in data}
        if len(lens) != 1:
            raise InvalidInputError(f"data tensors have different lengths {sorted(lens)}")
        return lens.pop()
    if isinstance(data, Tensor):
        if data.dim() == 0:
            raise InvalidInputError("data is a 0-dim tensor")
        return int(data.shape[0])
    return len(data)


def take(data: Any, idx: Tensor) -> Any:
    """``data`` indexed by a tensor of indices (shape [C, B] gives a batch per chain)."""
    if isinstance(data, (tuple, list)):
        return tuple(_take1(x, idx) for x in data)
    return _take1(data, idx)


def _take1(x: Any, idx: Tensor) -> Any:
    if isinstance(x, Tensor):  # index_select is several times faster than x[idx] on CPU
        return x.index_select(0, idx.reshape(-1)).reshape(*idx.shape, *x.shape[1:])
    return x[idx]


def to_device(data: Any, device: torch.device, dtype: torch.dtype) -> Any:
    """Tensors moved to ``device``; floating-point ones cast to ``dtype`` (indices stay integer)."""

    def conv(x: Any) -> Any:
        if isinstance(x, Tensor):
            x = x.to(device)
            return x.to(dtype) if x.is_floating_point() else x
        return x

    if isinstance(data, (tuple, list)):
        return tuple(conv(x) for x in data)
    return conv(data)


def signature(data: Any) -> tuple | None:
    """Shapes, dtypes and devices of a tuple of tensors (a cache key), None for other data."""
    items = data if isinstance(data, (tuple, list)) else (data,)
    if not all(isinstance(x, Tensor) for x in items):
        return None
    return tuple((tuple(x.shape), x.dtype, str(x.device)) for x in items)
