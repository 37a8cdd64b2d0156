r"""The natural-gradient optimizer of Saghir et al.'s code: Kaldi's online NGD with momentum.

The paper (seed 003) writes NGD as w ← w − η·F_s⁻¹∇L with F_s = F + κI (Eqs 5–7; :mod:`.ngd`
implements those equations with the batch's exact empirical Fisher). The authors' code
(``cxtraa/ngd_with_slt``, ``ngd.py``, taken from ``YiwenShaoStephen/NGD-SGD``) runs a different
algorithm, the online natural gradient of Povey, Zhang & Khudanpur (2015, ICLR workshop,
"Parallel training of DNNs with natural gradient and parameter averaging"), and its experiment
settings (``experiments/args_ngd_sgd.json``) add Nesterov momentum. This module implements that
algorithm from its mathematics:

* **Per axis.** For a parameter tensor and each of its axes a with size m > 1, the gradient G is
  reshaped to X [N, m] (axis a last, every other axis a "row"; N = G.numel()/m). Each axis keeps its
  own estimate F̂ of the m × m matrix E[XᵀX/N]; the axes are preconditioned one after the other.
* **Low rank plus identity.** F̂ = Rᵀ·diag(d)·R + ρI with R [r, m] orthonormal rows,
  r = min(⌊(m + 1)/2⌋, 80).
* **Smoothed inverse.** With β = ρ(1 + α) + α·Σd/m (α times the mean eigenvalue of F̂ added to it),
  (F̂ + (α·tr F̂/m)·I)⁻¹ ∝ I − Rᵀ·diag(e)·R, e_i = d_i/(d_i + β), so X̂ = X − (XRᵀ)·diag(e)·R.
  X̂ is then **rescaled to ‖X‖_F** (the step keeps the gradient's size; only its direction changes).
* **Exponential moving average.** On an updating step the estimate moves toward the new batch:
  T = (η/N)·XᵀX + (1 − η)·F̂ (η = the weight of the new batch: 0.9 in the paper's settings), and
  one step of subspace iteration re-fits it: Y = R·T, YYᵀ = U·diag(c)·Uᵀ (an eigendecomposition,
  as the authors' code computes it), s = √c floored at (1 − η)ρ, R ← diag(1/s)·Uᵀ·Y,
  ρ ← (tr T − Σs)/(m − r), d ← max(s − ρ, f), ρ ← max(ρ, f), f = max(ε, δ·max s). The estimate is updated on the first
  10 steps and then every ``update_period``-th; X is preconditioned with the estimate before the
  update.
* **Start.** R₀ has the rows of the identity's first r columns scaled by 1.1, repeated across the
  remaining columns and normalised (disjoint supports, so orthonormal); d = ρ = ε; three updates
  with the first batch's X, as a power iteration, before the first step.
* **Momentum** (as ``torch.optim.SGD``): b ← μ·b + X̂ (b₀ = X̂); the step is X̂ + μ·b with
  Nesterov, b without; w ← w − lr·step.

The paper's ε (Eq. 7's floor on tr F) is the floor ε here, and its α the smoothing α.

Against the authors' ``ngd.py`` (float64, the same gradients): the same steps to 10⁻¹⁴ wherever
the rows of X span at least r dimensions. Where they do not (a bias, N = 1; a first-layer weight's
input axis when m/2 exceeds its N rows), the small eigenvalues of YYᵀ are rounding noise in both
codes, so the two follow the same algorithm along different rounding: the directions agree in
character (cosine with the gradient ≈ 0.95 in both), not bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.optim import Optimizer

from .._validate import check_bool, check_int, check_real
from ..errors import InvalidArgumentError
from .optimizers import with_momentum
from .records import Record

MAX_RANK = 80
INITIAL_UPDATES = 10  # the estimate is updated on every one of the first steps
START_ITERATIONS = 3


def _start_rows(rank: int, dim: int, dtype: torch.dtype, device: torch.device) -> Tensor:
    """[rank, dim] orthonormal rows: row i is 1.1 at column i and 1 at columns i + k·rank."""
    rows = torch.zeros(rank, dim, dtype=dtype, device=device)
    for i in range(rank):
        rows[i, i::rank] = 1.0
        rows[i, i] = 1.1
    return rows / rows.norm(dim=1, keepdim=True)


class AxisFisher:
    """The online estimate F̂ = Rᵀdiag(d)R + ρI along one axis of size ``dim`` (module docstring)."""

    def __init__(
        self,
        dim: int,
        *,
        alpha: float,
        eta: float,
        epsilon: float,
        delta: float,
        update_period: int,
        dtype: torch.dtype,
        device: torch.device,
    ) -> None:
        if dim < 2:
            raise ValueError(f"an axis of size {dim} has nothing to precondition")
        self.dim, self.rank = dim, min((dim + 1) // 2, MAX_RANK)
        self.alpha, self.eta, self.epsilon, self.delta = alpha, eta, epsilon, delta
        self.update_period = update_period
        self.R = _start_rows(self.rank, dim, dtype, device)
        self.d = torch.full((self.rank,), epsilon, dtype=dtype, device=device)
        self.rho = epsilon
        self.t = 0

    def matrix(self) -> Tensor:
        """F̂ as a dense [dim, dim] matrix."""
        eye = torch.eye(self.dim, dtype=self.R.dtype, device=self.R.device)
        return self.R.T @ (self.d[:, None] * self.R) + self.rho * eye

    def _smoothed_solve(self, X: Tensor) -> Tensor:
        """X·(F̂ + α·(tr F̂/dim)·I)⁻¹, up to the factor β (the norm is reset by the caller)."""
        beta = self.rho * (1 + self.alpha) + self.alpha * float(self.d.sum()) / self.dim
        e = self.d / (self.d + beta)
        return X - ((X @ self.R.T) * e) @ self.R

    def update(self, X: Tensor) -> None:
        """Move F̂ toward XᵀX/N by the weight η and re-fit its rank-r part (one subspace step)."""
        n, eta = X.shape[0], self.eta
        trace = eta / n * float(X.square().sum()) + (1 - eta) * (
            self.dim * self.rho + float(self.d.sum())
        )
        Y = (eta / n) * (self.R @ X.T) @ X + (1 - eta) * (self.d + self.rho)[:, None] * self.R
        c, U = torch.linalg.eigh(Y @ Y.T)  # as the authors' code: Z = YYᵀ, not an SVD of Y
        c, U = c.flip(0), U.flip(1)
        s = torch.clamp(c, min=((1 - eta) * self.rho) ** 2).sqrt()
        rho = (trace - float(s.sum())) / (self.dim - self.rank)
        floor = max(self.epsilon, self.delta * float(s.max()))
        self.R = (U.T @ Y) / s[:, None]
        self.d = torch.clamp(s - rho, min=floor)
        self.rho = max(rho, floor)

    def precondition(self, X: Tensor) -> Tensor:
        """X [N, dim] preconditioned by the estimate so far, rescaled to ‖X‖; then an update on
        the steps that update. A non-finite result returns X unchanged."""
        if self.t == 0:
            for _ in range(START_ITERATIONS):
                self.update(X)
        updating = self.t < INITIAL_UPDATES or self.t % self.update_period == 0
        self.t += 1
        out = self._smoothed_solve(X)
        if updating:
            self.update(X)
        size, new = float(X.square().sum()), float(out.square().sum())
        if not math.isfinite(new):
            return X
        return out * math.sqrt(size / (new + 1e-30))


def precondition_tensor(grad: Tensor, fishers: list[AxisFisher | None]) -> Tensor:
    """The gradient of one parameter preconditioned along each axis in turn (None: size 1)."""
    out = grad
    for axis, fisher in enumerate(fishers):
        if fisher is None:
            continue
        moved = out.movedim(axis, -1)
        shape = moved.shape
        flat = fisher.precondition(moved.reshape(-1, shape[-1]))
        out = flat.reshape(shape).movedim(-1, axis)
    return out


class OnlineNGD(Optimizer):
    """Online natural gradient with (Nesterov) momentum (module docstring)."""

    def __init__(
        self,
        params: Iterable[Tensor],
        lr: float,
        *,
        alpha: float = 0.01,
        eta: float = 0.9,
        momentum: float = 0.9,
        nesterov: bool = True,
        epsilon: float = 1e-10,
        delta: float = 5e-4,
        update_period: int = 4,
    ) -> None:
        defaults = dict(
            lr=lr, alpha=alpha, eta=eta, momentum=momentum, nesterov=nesterov, epsilon=epsilon,
            delta=delta, update_period=update_period,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _fishers(self, p: Tensor, group: dict) -> list[AxisFisher | None]:
        state = self.state[p]
        if "fishers" not in state:
            keys = ("alpha", "eta", "epsilon", "delta", "update_period")
            state["fishers"] = [
                None
                if size < 2
                else AxisFisher(size, dtype=p.dtype, device=p.device, **{k: group[k] for k in keys})
                for size in p.shape
            ]
        return state["fishers"]

    @torch.no_grad()
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:  # type: ignore[override]
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            mu = group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                direction = precondition_tensor(p.grad, self._fishers(p, group))
                direction = with_momentum(self.state[p], direction, mu, group["nesterov"])
                p.add_(direction, alpha=-group["lr"])
        return loss


@dataclass(frozen=True)
class OnlineNGDSpec(Record):
    """The settings of :class:`OnlineNGD`; ``build`` makes it (``train`` takes it like an
    ``OptimizerSpec``). The defaults are the paper's (Fig. 1 α; ``args_ngd_sgd.json`` for the
    rest)."""

    lr: float
    alpha: float = 0.01
    eta: float = 0.9
    momentum: float = 0.9
    nesterov: bool = True
    epsilon: float = 1e-10
    delta: float = 5e-4
    update_period: int = 4
    kind: str = "online_ngd"

    def __post_init__(self) -> None:
        check_real("lr", self.lr, 0.0, open_lo=True)
        check_real("alpha", self.alpha, 0.0, open_lo=True)
        check_real("eta", self.eta, 0.0, 1.0, open_lo=True)
        check_real("momentum", self.momentum, 0.0, 1.0)
        check_bool("nesterov", self.nesterov)
        if self.nesterov and self.momentum == 0:
            raise InvalidArgumentError("Nesterov momentum needs momentum > 0")
        check_real("epsilon", self.epsilon, 0.0, open_lo=True)
        check_real("delta", self.delta, 0.0, 1.0, open_lo=True)
        check_int("update_period", self.update_period, 1)

    @property
    def label(self) -> str:
        return f"online NGD(α={self.alpha:g}, η={self.eta:g}, μ={self.momentum:g})"

    def build(self, params: Iterable[Tensor], generator: torch.Generator) -> OnlineNGD:
        del generator  # deterministic given the minibatches
        return OnlineNGD(
            params, self.lr, alpha=self.alpha, eta=self.eta, momentum=self.momentum,
            nesterov=self.nesterov, epsilon=self.epsilon, delta=self.delta,
            update_period=self.update_period,
        )  # fmt: skip


def online_ngd(lr: float, alpha: float = 0.01, **settings: float | bool | int) -> OnlineNGDSpec:
    """The authors' NGD (Kaldi's online natural gradient, Nesterov momentum 0.9, η = 0.9)."""
    return OnlineNGDSpec(lr, alpha, **settings)  # type: ignore[arg-type]
