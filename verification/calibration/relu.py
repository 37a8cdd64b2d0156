r"""ReLU networks for the calibration battery: the models users train, with an exact target.

A one-hidden-layer ReLU network f(x) = W₂·relu(W₁x + b₁) + b₂ with ``student`` hidden units,
fitted to data from a teacher of the same form with ``teacher`` ≤ ``student`` units and unit
Gaussian noise (n samples, x ~ N(0, I_d)); w* = ŵ, the minimum of
L_n = ½·mean‖y − f(x)‖² that L-BFGS reaches (a kink of relu, where a subgradient of size
10⁻³–10⁻² remains, as after training) from the teacher padded with units whose outgoing
weights are 0 (so with ``student`` > ``teacher`` the minimum lies near the singular set of the
extra units, as after training an over-wide network).

The loss is not smooth (relu's kinks) and not polynomial, so no closed form or quadrature gives
λ_β; the target is λ_β(γ) = nβ·(E[L_n] − L_n(w*)) of the same L_n under
exp(−nβ·L_n(w) − γ‖w − w*‖²/2) by Metropolis-adjusted HMC on the full-data loss
(``numeric.hmc_llc_potential``, exact gradients, a fixed seed), ± its standard error. It is what
the SGLD estimator's discretisation and minibatch noise are measured against, at the nβ and γ the
estimate ran at (benchmarks/RESULTS.md, "Does the step-size check earn its cost?").
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from numeric.potential.hmc import hmc_llc_potential

from .._validate import check_int
from ..crosschecks import _minimise
from ..models import half_mse
from .models import Built, Target, require_usable

NAMES = ("W1", "b1", "W2", "b2")


def relu_forward(p: dict[str, Tensor], x: Tensor) -> Tensor:
    """W₂·relu(W₁x + b₁) + b₂ for inputs x [n, d] → [n, o]."""
    return torch.relu(x @ p["W1"].T + p["b1"]) @ p["W2"].T + p["b2"]


def relu_loss(p: dict[str, Tensor], batch: tuple[Tensor, Tensor]) -> Tensor:
    """½·mean‖y − f(x)‖² (unit-noise Gaussian negative log-likelihood up to a constant)."""
    x, y = batch
    return half_mse(y - relu_forward(p, x))


def _layers(d: int, hidden: int, out: int, g: torch.Generator) -> dict[str, Tensor]:
    f64 = torch.float64
    return {
        "W1": torch.randn(hidden, d, generator=g, dtype=f64),
        "b1": 0.5 * torch.randn(hidden, generator=g, dtype=f64),
        "W2": torch.randn(out, hidden, generator=g, dtype=f64),
        "b2": 0.5 * torch.randn(out, generator=g, dtype=f64),
    }


def build_relu(seed: int, *, d: int, teacher: int, student: int, out: int, n: int) -> Built:
    """Teacher, data and the student's minimum ŵ (module docstring), all from ``seed``."""
    for name, value in (("d", d), ("teacher", teacher), ("out", out), ("n", n)):
        check_int(name, value, 1)
    check_int("student", student, teacher)
    g = torch.Generator().manual_seed(seed)
    t = _layers(d, teacher, out, g)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = relu_forward(t, x) + torch.randn(n, out, generator=g, dtype=torch.float64)
    extra = _layers(d, student - teacher, out, g)
    start = {
        "W1": torch.cat([t["W1"], extra["W1"]]),
        "b1": torch.cat([t["b1"], extra["b1"]]),
        "W2": torch.cat([t["W2"], torch.zeros(out, student - teacher, dtype=torch.float64)], 1),
        "b2": t["b2"],
    }
    w_hat = _minimise(relu_loss, start, (x, y))  # at a kink: ‖∇L_n‖ ~ 10⁻³–10⁻² remains
    return Built((relu_loss, w_hat, (x, y)), {"w_hat": w_hat, "data": (x, y)})


def relu_potential(w_hat: dict[str, Tensor], data: tuple[Tensor, Tensor]) -> tuple[Any, Tensor]:
    """L_n as a potential of flat parameters w [C, D] (``NAMES`` order, row-major), batched over
    the chains, and w* = ŵ flattened in that order."""
    x, y = data
    shapes = [w_hat[k].shape for k in NAMES]
    sizes = [w_hat[k].numel() for k in NAMES]
    w_star = torch.cat([w_hat[k].reshape(-1) for k in NAMES])

    def potential(w: Tensor) -> Tensor:
        c = w.shape[0]
        W1, b1, W2, b2 = (b.reshape(c, *s) for b, s in zip(w.split(sizes, dim=-1), shapes))
        hidden = torch.relu(torch.einsum("nd,chd->cnh", x, W1) + b1[:, None, :])
        r = y - (torch.einsum("cnh,coh->cno", hidden, W2) + b2[:, None, :])
        return 0.5 * r.square().sum((-1, -2)) / x.shape[0]

    return potential, w_star


def relu_hmc_target(built: Built, nbeta: float, gamma: float, **hmc: Any) -> Target:
    """λ_β(γ) of the network's L_n at ŵ by HMC (keywords ``hmc`` go to
    ``numeric.hmc_llc_potential``: chains, draws, burn-in, seed); ``TargetError`` where the HMC
    run has an error finding."""
    potential, w_star = relu_potential(built.aux["w_hat"], built.aux["data"])
    settings = {"num_chains": 8, "num_draws": 300, "num_burnin": 100, "seed": 0, **hmc}
    n = len(built.aux["data"][0])
    ref = hmc_llc_potential(potential, w_star, n, nbeta=nbeta, gamma=gamma, **settings)
    require_usable(ref)
    return Target(ref.mean, ref.stderr, "λ_β(γ), HMC on the full-data L_n")
