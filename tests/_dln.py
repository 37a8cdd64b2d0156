"""The deep linear network y = W3·W2·W1·x (widths [2, 2, 1, 2], input first) of the restricted-LLC
tests, at true parameters with noise-free responses y = f_{w*}(x): L_n(w) = ½·mean‖f_w − f_{w*}‖²
and every true parameter is an exact minimum."""

from __future__ import annotations

import torch

N = 10_000
DT = torch.float64
W1 = ((1.0, 0.5), (-0.3, 0.8))
W2 = ((0.7, -0.6),)
W3 = ((0.9,), (0.4,))


def forward(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    return x @ p["W1"].T @ p["W2"].T @ p["W3"].T


def dln_loss(p: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    x, y = batch
    return 0.5 * (y - forward(p, x)).square().sum(-1).mean()


def true_parameter() -> dict[str, torch.Tensor]:
    return {k: torch.tensor(v, dtype=DT) for k, v in (("W1", W1), ("W2", W2), ("W3", W3))}


def dln_data() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(N, 2, generator=g, dtype=DT)
    return x, forward(true_parameter(), x)


def orbit() -> dict[int, dict[str, torch.Tensor]]:
    """Three true parameters, as checkpoints at steps 0, 100, 200: W1 = B_k invertible,
    W2 = c_k·W2*·W1*·B_k⁻¹, W3 = W3*/c_k, so W3·W2·W1 = W3*·W2*·W1* at each."""
    w = true_parameter()
    bs = [w["W1"], torch.tensor([[0.6, -0.2], [0.3, 1.1]], dtype=DT)]
    bs.append(torch.tensor([[1.3, 0.0], [0.4, 0.5]], dtype=DT))
    out = {}
    for k, (c, b) in enumerate(zip([1.0, 1.5, 0.7], bs)):
        w2 = c * w["W2"] @ w["W1"] @ torch.linalg.inv(b)
        out[100 * k] = {"W1": b, "W2": w2, "W3": w["W3"] / c}
    return out
