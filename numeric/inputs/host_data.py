"""Data kept in host memory and moved to the run's device one minibatch at a time.

A data set larger than the device's memory (token sequences for a language model) cannot be
moved there whole, as ``numeric.inputs.data.to_device`` does. ``HostData(data)`` keeps it on the
host (pinned when the run is on CUDA, so each copy is asynchronous) and gives the estimators
``data[idx]``: the rows ``idx`` gathered on the host, then moved to the device and cast to the
run's dtype (floating-point tensors only). The indices are those the resident path draws, from
the same generator on the same device, so at one seed both paths give the same numbers.

``place_data`` is what the estimators call: ``HostData`` bound to the run's device and dtype,
resident data moved as before, and data that would take more than ``HOST_DATA_FRACTION`` of
the device's free memory kept on the host automatically (CUDA only; on the CPU host and device
are one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from numeric.backend.memory import available_memory
from numeric.errors import InvalidInputError
from numeric.inputs.data import _each, _parts, data_len, take, to_device

# data taking more than this share of the device's free memory stays on the host (CUDA)
HOST_DATA_FRACTION = 0.25


class HostData:
    """A tensor, or a tuple or dict of tensors (samples on the first axis), held on the host and
    moved to ``device`` in ``dtype`` (floating-point parts) one indexed minibatch at a time.

    ``HostData(data)`` is what the user passes as data; the estimators bind it to the run's
    device and dtype (``to_run``). ``pin``: page-lock the host tensors when the device is CUDA
    (None: pin where CUDA is available)."""

    def __init__(
        self,
        data: Any,
        *,
        pin: bool | None = None,
        device: torch.device | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        if isinstance(data, HostData):
            data = data.data
        parts = _parts(data) or [("data", data)]
        for name, x in parts:
            if not isinstance(x, Tensor):
                raise InvalidInputError(
                    f"HostData holds tensors (samples on the first axis); {name} is a "
                    f"{type(x).__name__}"
                )
        self.n = data_len(data)
        self.pin = pin
        self.device, self.dtype = device, dtype
        self.data = _each(data, lambda x: x.detach().cpu())

    def to_run(self, device: torch.device, dtype: torch.dtype) -> HostData:
        """This data bound to ``device`` and ``dtype``; pinned when the device is CUDA (unless
        ``pin=False``)."""
        out = HostData(self.data, pin=self.pin, device=torch.device(device), dtype=dtype)
        if out.device.type == "cuda" and self.pin is not False:
            out.data = _each(out.data, lambda x: x if x.is_pinned() else x.pin_memory())
        return out

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, idx: Tensor) -> Any:
        """The rows ``idx`` (any shape, samples first) on the bound device, in its dtype."""
        if not isinstance(idx, Tensor):
            raise InvalidInputError(f"HostData is indexed by a tensor of indices, got {idx!r}")
        rows = take(self.data, idx.cpu())
        if self.device is None:
            return rows
        asynchronous = self.device.type == "cuda"

        def move(x: Tensor) -> Tensor:
            if asynchronous and not x.is_pinned():
                x = x.pin_memory()
            x = x.to(self.device, non_blocking=asynchronous)
            return x.to(self.dtype) if self.dtype is not None and x.is_floating_point() else x

        return _each(rows, move)

    def nbytes(self) -> int:
        """Bytes of the held tensors."""
        parts = _parts(self.data) or [("data", self.data)]
        return sum(x.numel() * x.element_size() for _, x in parts)

    def __repr__(self) -> str:
        kind = "dict" if isinstance(self.data, Mapping) else type(self.data).__name__
        return f"HostData({kind}, n={self.n}, device={self.device}, dtype={self.dtype})"


def data_bytes(data: Any) -> int:
    """Bytes of the tensors of a tensor, tuple or dict of tensors (0 for other data)."""
    parts = _parts(data) or [("data", data)]
    return sum(x.numel() * x.element_size() for _, x in parts if isinstance(x, Tensor))


def place_data(data: Any, device: torch.device, dtype: torch.dtype) -> Any:
    """``data`` where the run reads it: ``HostData`` bound to ``device`` and ``dtype``; tensors
    on the host that would take more than ``HOST_DATA_FRACTION`` of a CUDA device's free memory
    kept on the host as ``HostData``; anything else moved by ``to_device``."""
    if torch.device(device).type == "cuda" and _on_host(data):
        if data_bytes(data) > HOST_DATA_FRACTION * available_memory(torch.device(device)):
            return HostData(data).to_run(device, dtype)
    return to_device(data, device, dtype)


def _on_host(data: Any) -> bool:
    """A tensor, or a tuple or dict of tensors, all in host memory."""
    parts = _parts(data) or [("data", data)]
    return all(isinstance(x, Tensor) and x.device.type == "cpu" for _, x in parts)
