"""Flat views of a dict of parameter tensors: chains are rows of one [chains, D] tensor."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import Tensor

from numeric.errors import InvalidInputError


@dataclass(frozen=True)
class ParamSpec:
    """Names, shapes and sizes of the parameters; ``unflatten`` gives views into a flat vector."""

    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    numels: tuple[int, ...]

    @property
    def dim(self) -> int:
        return sum(self.numels)

    def unflatten(self, flat: Tensor) -> dict[str, Tensor]:
        """Views of ``flat`` (last axis of length D) as a dict of tensors (leading axes kept)."""
        lead = flat.shape[:-1]
        parts = torch.split(flat, self.numels, dim=-1)
        return {
            name: part.reshape(tuple(lead) + tuple(shape))
            for name, part, shape in zip(self.names, parts, self.shapes, strict=True)
        }


def flatten_params(
    params: Mapping[str, Tensor], *, dtype: torch.dtype | None, device: torch.device | str | None
) -> tuple[Tensor, ParamSpec]:
    """Concatenate ``params`` into one detached 1-D tensor; check that it is non-empty and finite."""
    if not isinstance(params, Mapping) or len(params) == 0:
        raise InvalidInputError("params must be a non-empty dict of tensors (w*)")
    names, shapes, numels, flats = [], [], [], []
    for name, value in params.items():
        if not isinstance(value, Tensor):
            raise InvalidInputError(f"params[{name!r}] is a {type(value).__name__}, not a tensor")
        if value.is_meta:
            raise InvalidInputError(
                f"params[{name!r}] is on the meta device, which has shapes but no values: w* "
                "must hold the trained values (load them with load_state_dict(..., assign=True) "
                "or move the module to a real device)"
            )
        if not value.is_floating_point():
            raise InvalidInputError(
                f"params[{name!r}] has dtype {value.dtype}; need floating point"
            )
        names.append(name)
        shapes.append(tuple(value.shape))
        numels.append(math.prod(value.shape))
        flats.append(value.detach().reshape(-1))
    dev = torch.device(device) if device is not None else flats[0].device
    # mixed dtypes run in the widest (order-independent), as torch's type promotion would
    dt = (
        dtype
        if dtype is not None
        else functools.reduce(torch.promote_types, [f.dtype for f in flats])
    )
    flat = torch.cat([f.to(device=dev, dtype=dt) for f in flats])
    if flat.numel() == 0:
        raise InvalidInputError("params have no elements")
    bad = ~torch.isfinite(flat)
    if bool(bad.any()):
        k = int(bad.nonzero()[0, 0])
        name = names[next(i for i, c in enumerate(_cumsum(numels)) if k < c)]
        raise InvalidInputError(f"w* is not finite: params[{name!r}] has NaN or inf entries")
    return flat, ParamSpec(tuple(names), tuple(shapes), tuple(numels))


def _cumsum(xs: list[int]) -> list[int]:
    out, s = [], 0
    for x in xs:
        s += x
        out.append(s)
    return out
