"""Small torch networks with seeded initialisation: ReLU MLPs with biases, deep linear networks.

Widths are listed input → output, as in ``rlct.deep_linear_network``. Initialisation draws from the
given generator (never the global one): every weight and bias ~ U(−b, b), b = scale/√fan_in, torch's
default bound for ``scale = 1``.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Sequence

import torch
from torch import Tensor, nn


def _check_widths(widths: Sequence[int]) -> list[int]:
    ws = [int(w) for w in widths]
    if len(ws) < 2 or min(ws) < 1:
        raise ValueError(f"widths must list at least two positive sizes, got {list(widths)}")
    return ws


@torch.no_grad()
def seeded_init_(module: nn.Module, generator: torch.Generator, scale: float = 1.0) -> nn.Module:
    """Re-initialise every ``nn.Linear`` of ``module`` in place: U(−b, b), b = scale/√fan_in."""
    for layer in module.modules():
        if isinstance(layer, nn.Linear):
            bound = scale / math.sqrt(layer.in_features)
            for p in (layer.weight, layer.bias):
                if p is not None:
                    u = torch.rand(p.shape, generator=generator, dtype=p.dtype)
                    p.copy_((2 * u - 1) * bound)
    return module


def relu_mlp(
    widths: Sequence[int],
    *,
    generator: torch.Generator,
    bias: bool = True,
    scale: float = 1.0,
    dtype: torch.dtype = torch.float32,
) -> nn.Sequential:
    """Linear → ReLU → … → Linear; parameters named ``{2i}.weight``/``{2i}.bias`` for layer i."""
    ws = _check_widths(widths)
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(ws)):
        layers.append(nn.Linear(a, b, bias=bias, dtype=dtype))
        if i < len(ws) - 2:
            layers.append(nn.ReLU())
    return seeded_init_(nn.Sequential(*layers), generator, scale)  # type: ignore[return-value]


def deep_linear(
    widths: Sequence[int],
    *,
    generator: torch.Generator,
    scale: float = 1.0,
    dtype: torch.dtype = torch.float64,
) -> nn.Sequential:
    """x ↦ W_L ⋯ W_1 x without biases; ``{i}.weight`` is W_{i+1} (widths[i+1] × widths[i])."""
    ws = _check_widths(widths)
    layers = [nn.Linear(a, b, bias=False, dtype=dtype) for a, b in itertools.pairwise(ws)]
    return seeded_init_(nn.Sequential(*layers), generator, scale)  # type: ignore[return-value]


def linear_product(weights: Iterable[Tensor]) -> Tensor:
    """W_L ⋯ W_1 of the layers' weights W_1, …, W_L (first layer first; leading axes broadcast,
    so a batch of chains' weights gives a batch of products)."""
    return functools.reduce(lambda P, W: W @ P, weights)


def num_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
