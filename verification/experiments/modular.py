"""Modular addition with a two-layer quadratic network (Cullen et al. 2026, seed 002).

Task: all p² pairs (a, b) with x = [e_a; e_b] ∈ R^{2p} and target y = e_{(a+b) mod p} ∈ R^p
(``rlct.modular_addition_data``), a random fraction for training. Model: f(x) = V·σ(Wᵀx),
σ(t) = t², W ∈ R^{2p×K}, V ∈ R^{p×K}, no biases. Loss: the centred squared error

    L(θ) = (1/2N)·‖P⊥(Y − f_θ(X))‖²_F,   P⊥ = I − 11ᵀ/N across the N samples,

i.e. ½·mean_i ‖(r_i − r̄)‖² for residuals r_i. The centring couples the samples (r̄ is a mean
over the data), so L is not a mean of per-sample terms: minibatch estimates of it are biased.
Training here is full-batch, and the LLC estimator is handed ``full_data_loss``, which evaluates
the centred loss on all N training samples whatever batch it is given (exact gradients; the
``data`` it is passed only sets n = N).

The centred loss cannot see a constant offset c ∈ R^p added to every output, so the raw argmax
accuracy can stay below 1 at zero loss; ``accuracy(..., centre=...)`` also reports the accuracy of
the predictions minus their mean over the training inputs (per-class centring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

import rlct

from .records import Record


@dataclass(frozen=True)
class ModularTask:
    """One-hot inputs and targets, split at random into train and validation sets."""

    p: int
    train_fraction: float
    seed: int
    x_train: Tensor
    y_train: Tensor
    x_val: Tensor
    y_val: Tensor
    train_rows: np.ndarray  # indices into rlct.modular_addition_data(p)

    @property
    def n_train(self) -> int:
        return self.x_train.shape[0]

    @property
    def train(self) -> tuple[Tensor, Tensor]:
        return self.x_train, self.y_train

    @property
    def val(self) -> tuple[Tensor, Tensor]:
        return self.x_val, self.y_val

    def exact_inputs(self) -> np.ndarray:
        """The training inputs as an integer array (for ``rlct``)."""
        return rlct.modular_addition_data(self.p)[0][self.train_rows]


def modular_task(
    p: int,
    train_fraction: float,
    seed: int,
    dtype: torch.dtype = torch.float64,
    device: str | torch.device = "cpu",
) -> ModularTask:
    """A random split of the p² examples, ``round(fraction·p²)`` of them for training."""
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must lie in (0, 1), not {train_fraction}")
    X, Y = rlct.modular_addition_data(p)
    n_train = round(train_fraction * p * p)
    if not 2 <= n_train < p * p:
        raise ValueError(f"p = {p} with fraction {train_fraction} leaves {n_train} training rows")
    perm = torch.randperm(p * p, generator=torch.Generator().manual_seed(seed)).numpy()
    tr, va = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    x = torch.as_tensor(X, dtype=dtype, device=device)
    y = torch.as_tensor(Y, dtype=dtype, device=device)
    return ModularTask(p, train_fraction, seed, x[tr], y[tr], x[va], y[va], tr)


class QuadraticNet(nn.Module):
    """f(x) = V·(Wᵀx)² with W [d, K], V [p, K]; init W ~ N(0, 1/d), V ~ N(0, 1/K) from
    ``generator`` (the paper does not state its initialisation)."""

    def __init__(
        self,
        d: int,
        p: int,
        K: int,
        *,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float64,
        device: str | torch.device = "cpu",
    ) -> None:
        super().__init__()
        W = torch.randn(d, K, generator=generator, dtype=dtype) / math.sqrt(d)
        V = torch.randn(p, K, generator=generator, dtype=dtype) / math.sqrt(K)
        self.W = nn.Parameter(W.to(device))
        self.V = nn.Parameter(V.to(device))

    def forward(self, x: Tensor) -> Tensor:
        return ((x @ self.W) ** 2) @ self.V.T

    @property
    def shape(self) -> tuple[int, int, int]:
        """(d, p, K)."""
        return self.W.shape[0], self.V.shape[0], self.W.shape[1]


def centred_mse(pred: Tensor, y: Tensor) -> Tensor:
    """½·mean_i ‖(r_i − r̄)‖², r = y − pred, r̄ the mean over the rows given."""
    r = y - pred
    return 0.5 * (r - r.mean(0)).square().sum(-1).mean()


@dataclass(frozen=True)
class FullDataLoss:
    """``loss_fn(params, batch)`` for ``numeric.estimate_llc``: the centred loss of the network
    with ``params`` on all training samples (the batch is ignored; see the module docstring)."""

    module: QuadraticNet
    x: Tensor
    y: Tensor

    def __call__(self, params: dict[str, Tensor], batch: object = None) -> Tensor:
        pred = ((self.x @ params["W"]) ** 2) @ params["V"].T
        return centred_mse(pred, self.y)

    def data(self) -> tuple[Tensor]:
        """A stand-in data set of N rows: n = N for the estimator's nβ = n/log n."""
        return (torch.arange(self.x.shape[0], dtype=self.x.dtype)[:, None],)


def accuracy(pred: Tensor, y: Tensor, centre: Tensor | None = None) -> float:
    """Fraction of rows whose argmax matches the target's; ``centre`` [p] is subtracted first."""
    out = pred if centre is None else pred - centre
    return float((out.argmax(-1) == y.argmax(-1)).double().mean())


@dataclass(frozen=True)
class Snapshot(Record):
    """Losses and accuracies of a network at one step."""

    step: int
    train_loss: float
    val_loss: float
    train_acc: float
    val_acc: float
    train_acc_centred: float
    val_acc_centred: float


@torch.no_grad()
def snapshot(net: QuadraticNet, task: ModularTask, step: int) -> Snapshot:
    """Centred losses, raw accuracies, and accuracies after removing the mean training output."""
    pt, pv = net(task.x_train), net(task.x_val)
    c = pt.mean(0)
    return Snapshot(
        step,
        float(centred_mse(pt, task.y_train)),
        float(centred_mse(pv, task.y_val)),
        accuracy(pt, task.y_train),
        accuracy(pv, task.y_val),
        accuracy(pt, task.y_train, c),
        accuracy(pv, task.y_val, c),
    )


def grokking_severity(snaps: list[Snapshot] | tuple[Snapshot, ...], centred: bool = True) -> float:
    """GSM = 1{a_V(T) ≥ 0.95}·mean_t |a_T(t) − a_V(t)| over the snapshots (the paper sums over
    epochs; here over evenly spaced checkpoints). Centred accuracies by default (module doc)."""
    at = np.array([s.train_acc_centred if centred else s.train_acc for s in snaps])
    av = np.array([s.val_acc_centred if centred else s.val_acc for s in snaps])
    return float(np.mean(np.abs(at - av))) if av[-1] >= 0.95 else 0.0


def paper_formula(p: int, K: int) -> float:
    """Thm 4.2 / 5.5 of the paper for modular addition (d = 2p): λ = K(d + p − 1)/2 = K(3p − 1)/2."""
    return K * (3 * p - 1) / 2


def sample_cap(p: int, n_train: int) -> float:
    """p(N − 1)/2: the centred outputs on N inputs span p(N − 1) dimensions, so rank J ≤ p(N − 1)
    and λ ≤ p(N − 1)/2 at any realisable point (the map factors through them)."""
    return p * (n_train - 1) / 2
