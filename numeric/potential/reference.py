r"""The estimator's target at finite temperature: ``expected_llc``.

A perfect sampler returns λ_β = nβ·(E_p[L(w)] − L(w*)) with
p(w) ∝ exp(−nβ·L(w) − (γ/2)‖w − w*‖² − (α/2)‖w‖²). This differs from the asymptotic λ by the
finite-nβ bias (≈ −(m−1)/log nβ) and the localisation bias (γ, α); an estimate differs from λ_β
by the sampler's error (step size, mixing, Monte Carlo). Two exact cases:

* ``GaussianLinear``: L(w) = c·mean_i (y_i − x_iᵀw)² (c = ``loss_scale``; c = 1/2 is the Gaussian
  negative log-likelihood with unit noise, up to a constant). L is quadratic:
  L(w) = L(ŵ) + ½(w − ŵ)ᵀH(w − ŵ), H = 2c·XᵀX/n, ŵ the least-squares solution. p is Gaussian with
  precision P = nβH + (γ+α)I and mean μ = P⁻¹(nβHŵ + γw*), so

      λ_β = (nβ/2)·[tr(H P⁻¹) + (μ − ŵ)ᵀH(μ − ŵ) − (w* − ŵ)ᵀH(w* − ŵ)],

  which is ½·tr(nβH(nβH + γI)⁻¹) when w* = ŵ and α = 0 (→ d/2 as nβ → ∞). The noise in y enters
  only through ŵ: at the true parameter w* ≠ ŵ the last two terms are ≈ −β·d·σ²/2 ≈ −d/(2 log n)
  for c = 1/2 (the reason to localise at a minimum of L_n, not at the truth).
* A potential K in 1–3 dimensions (``numeric.estimate_llc_potential``): tensor-product trapezoid
  quadrature in coordinates w_j = w*_j + s·sinh(u_j), which are dense near w* (spacing s·du) and
  logarithmic far away, so sharp singular peaks and wide flat directions are both resolved. The
  box must hold the mass: U on its boundary is checked to exceed 40 (an error otherwise, e.g. a
  non-compact K with γ = 0). The error estimate compares against a grid with half the points.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from numeric.backend.linalg import least_squares, one_thread
from numeric.errors import InvalidInputError
from numeric.options import check_int, check_real
from numeric.potential.estimate_llc_potential import check_potential

MAX_POINTS_PER_AXIS = 100_001
MAX_GRID_POINTS = 10**8  # quadrature points in all (minutes of NumPy work)


@dataclass(frozen=True, eq=False)  # arrays: compared and hashed by identity
class GaussianLinear:
    """y ≈ Xw with loss L(w) = loss_scale·mean_i (y_i − x_iᵀw)²; ``loss_fn``/``data`` for
    ``estimate_llc`` (params ``{"w": w}``) and ``minimiser`` ŵ."""

    X: Tensor  # [n, d]
    y: Tensor  # [n]
    loss_scale: float = 0.5

    def __post_init__(self) -> None:
        if not (isinstance(self.X, Tensor) and isinstance(self.y, Tensor)):
            raise InvalidInputError("GaussianLinear needs tensors X [n, d] and y [n]")
        if self.X.dim() != 2 or self.y.shape != (self.X.shape[0],):
            raise InvalidInputError(
                f"GaussianLinear needs X [n, d] and y [n], got {tuple(self.X.shape)}, "
                f"{tuple(self.y.shape)}"
            )
        if not (self.X.is_floating_point() and self.y.is_floating_point()):
            raise InvalidInputError("GaussianLinear needs floating-point X and y")
        if self.X.shape[0] == 0 or self.X.shape[1] == 0:
            raise InvalidInputError(
                f"GaussianLinear needs n ≥ 1 samples and d ≥ 1 inputs, got X {tuple(self.X.shape)}"
            )
        if not (isinstance(self.loss_scale, (int, float)) and self.loss_scale > 0):
            raise InvalidInputError(f"loss_scale must be > 0, got {self.loss_scale!r}")

    def loss_fn(self, params: dict[str, Tensor], batch: tuple[Tensor, Tensor]) -> Tensor:
        x, y = batch
        return self.loss_scale * (y - x @ params["w"]).square().mean()

    @property
    def data(self) -> tuple[Tensor, Tensor]:
        return (self.X, self.y)

    def minimiser(self) -> Tensor:
        """The least-squares ŵ (the same bits in every process: numeric.backend.linalg)."""
        return least_squares(self.X, self.y).to(self.X.dtype)


@dataclass(frozen=True)
class ExpectedLLC:
    """λ_β (``value``) with its numerical error bound and the settings it holds for."""

    value: float
    abserr: float
    nbeta: float
    gamma: float
    prior_precision: float
    method: str


def expected_llc(
    model: GaussianLinear | Callable[[Tensor], Tensor],
    w_star: Any,
    *,
    nbeta: float,
    gamma: float,
    prior_precision: float = 0.0,
    num_points: int | None = None,
) -> ExpectedLLC:
    """λ_β for a ``GaussianLinear`` model (closed form) or a potential K in 1–3 D (quadrature).
    ``w_star`` (where the chains are localised) is required and finite, and so are the model's
    X and y: NaN or inf in any is an ``InvalidInputError`` naming it."""
    if w_star is None:
        raise InvalidInputError(
            "w_star is None: expected_llc needs the point the chains are localised at, a vector "
            "of numbers (for GaussianLinear e.g. model.minimiser() or the true parameter)"
        )
    check_real("nbeta", nbeta, low=0, strict=True)
    check_real("gamma", gamma, low=0, strict=False)
    check_real("prior_precision", prior_precision, low=0, strict=False)
    if num_points is not None:
        check_int("num_points", num_points, 3)
        if num_points > MAX_POINTS_PER_AXIS:
            raise InvalidInputError(
                f"num_points must be ≤ {MAX_POINTS_PER_AXIS} per axis, got {num_points}"
            )
    if isinstance(model, GaussianLinear):
        return _linear(model, w_star, nbeta, gamma, prior_precision)
    if callable(model):
        return _potential(model, w_star, nbeta, gamma, prior_precision, num_points)
    raise InvalidInputError(f"model must be GaussianLinear or a potential K, not {type(model)}")


def _w_star_vector(w_star: Any) -> np.ndarray:
    """``w_star`` as a flat float64 vector of finite numbers (else ``InvalidInputError``)."""
    try:
        ws = torch.as_tensor(w_star, dtype=torch.float64).detach().reshape(-1).cpu().numpy()
    except (TypeError, ValueError, RuntimeError) as exc:
        raise InvalidInputError(
            f"w_star must be a vector of numbers, got {w_star!r:.80}: {exc}"
        ) from None
    if not np.all(np.isfinite(ws)):
        raise InvalidInputError(f"w_star has NaN or inf entries: {ws.tolist()!r:.120}")
    return ws


def _linear(
    m: GaussianLinear, w_star: Any, nbeta: float, gamma: float, alpha: float
) -> ExpectedLLC:
    X = torch.as_tensor(m.X, dtype=torch.float64)
    y = torch.as_tensor(m.y, dtype=torch.float64)
    if X.dim() != 2 or y.shape != (X.shape[0],):
        raise InvalidInputError(
            f"GaussianLinear needs X [n, d] and y [n], got {tuple(X.shape)}, {tuple(y.shape)}"
        )
    n, d = X.shape
    for name, t in (("X", X), ("y", y)):
        if not bool(torch.isfinite(t).all()):
            bad = int((~torch.isfinite(t)).sum())
            raise InvalidInputError(
                f"GaussianLinear's {name} has {bad} NaN or inf entries: λ_β (and the least-squares"
                " ŵ it needs) is not defined; drop or impute those samples"
            )
    ws = torch.as_tensor(_w_star_vector(w_star), dtype=torch.float64, device=X.device)
    if ws.numel() != d:
        raise InvalidInputError(f"w_star has {ws.numel()} entries, X has {d} columns")
    H = 2 * m.loss_scale * X.T @ X / n
    P = nbeta * H + (gamma + alpha) * torch.eye(d, dtype=torch.float64)
    w_hat = least_squares(X, y)
    with one_thread():  # the same bits in every process (numeric.backend.linalg)
        mu = torch.linalg.solve(P, nbeta * H @ w_hat + gamma * ws)
        tr = torch.trace(torch.linalg.solve(P, H))
    a, b = mu - w_hat, ws - w_hat
    val = 0.5 * nbeta * (tr + a @ H @ a - b @ H @ b)
    return ExpectedLLC(
        float(val),
        1e-12 * max(1.0, abs(float(val))),
        nbeta,
        gamma,
        alpha,
        "closed form (Gaussian-linear)",
    )


def _potential(
    K: Callable[[Tensor], Tensor],
    w_star: Any,
    nbeta: float,
    gamma: float,
    alpha: float,
    num_points: int | None,
) -> ExpectedLLC:
    ws = _w_star_vector(w_star)
    d = ws.size
    if not 1 <= d <= 3:
        raise InvalidInputError(f"quadrature supports 1–3 parameters, got {d}")
    if num_points is not None and num_points**d > MAX_GRID_POINTS:
        raise InvalidInputError(
            f"num_points = {num_points} in {d} dimensions is {num_points**d:.3g} grid points, "
            f"more than {MAX_GRID_POINTS:.0e}"
        )
    npts = num_points or {1: 4001, 2: 1001, 3: 161}[d]
    k_star = float(check_potential(K, torch.as_tensor(ws)))
    # Box half-width R: where the localisation/prior alone gives U ≥ 60; else grow until K does.
    conf = gamma + alpha
    big = math.sqrt(120.0 / conf) + float(np.abs(ws).max()) if conf > 0 else 10.0
    s = 1e-3 / math.sqrt(nbeta) * max(1.0, big / 10)  # finest spacing scale at w*
    v1, e1 = _grid(K, ws, k_star, nbeta, gamma, alpha, npts, big, s)
    v2, _ = _grid(K, ws, k_star, nbeta, gamma, alpha, (npts + 1) // 2, big, s)
    if e1 < 40:
        raise InvalidInputError(
            f"the target's mass is not contained in |w − w*| ≤ {big:.3g} (U = {e1:.3g} on the "
            "boundary): K has non-compact level sets there; pass gamma > 0 or prior_precision > 0"
        )
    return ExpectedLLC(
        v1,
        abs(v1 - v2) + 1e-12,
        nbeta,
        gamma,
        alpha,
        f"sinh-mapped trapezoid quadrature, {npts}^{d} points, box ±{big:.3g}",
    )


def _grid(
    K: Callable[[Tensor], Tensor],
    ws: np.ndarray,
    k_star: float,
    nbeta: float,
    gamma: float,
    alpha: float,
    npts: int,
    big: float,
    s: float,
) -> tuple[float, float]:
    d = ws.size
    umax = math.asinh(big / s)
    u = np.linspace(-umax, umax, npts)
    off = s * np.sinh(u)
    jac = s * np.cosh(u) * (u[1] - u[0])
    axes = [ws[j] + off for j in range(d)]
    # Slice over the first axis to bound memory; accumulate with a running max for stability.
    rest = np.stack(np.meshgrid(*axes[1:], indexing="ij"), -1).reshape(-1, d - 1) if d > 1 else None
    wrest = (
        np.prod(
            np.stack(np.meshgrid(*([jac] * (d - 1)), indexing="ij"), -1).reshape(-1, d - 1), axis=1
        )
        if d > 1
        else np.ones(1)
    )
    logs, vals, wts = [], [], []
    chunk = max(1, 2_000_000 // max(1, wrest.size))
    a0 = axes[0]
    for i in range(0, npts, chunk):
        a = a0[i : i + chunk]
        if d > 1:
            pts = np.concatenate(
                [np.repeat(a, rest.shape[0])[:, None], np.tile(rest, (a.size, 1))], axis=1
            )
            wt = (jac[i : i + chunk][:, None] * wrest[None, :]).reshape(-1)
        else:
            pts, wt = a[:, None], jac[i : i + chunk]
        with torch.no_grad():
            out = K(torch.from_numpy(pts))
        if not (isinstance(out, Tensor) and tuple(out.shape) == (pts.shape[0],)):
            got = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
            raise InvalidInputError(
                f"K(w[{pts.shape[0]}, {d}]) must return shape ({pts.shape[0]},), got {got}"
            )
        kv = out.double().numpy()
        e = nbeta * (kv - k_star)
        U = e + 0.5 * gamma * ((pts - ws) ** 2).sum(1) + 0.5 * alpha * (pts**2).sum(1)
        logs.append(-U)
        vals.append(e)
        wts.append(wt)
    lw = np.concatenate(logs)
    e = np.concatenate(vals)
    wt = np.concatenate(wts)
    if not np.all(np.isfinite(lw)):
        raise InvalidInputError("K is not finite on the quadrature grid")
    mx = lw.max()
    p = wt * np.exp(lw - mx)
    value = float((p * e).sum() / p.sum())
    # Minimum of U over the box boundary (the outermost grid layer).
    shape = (npts,) * d
    Ug = (-lw).reshape(shape)
    edge = min(float(np.take(Ug, idx, axis=ax).min()) for ax in range(d) for idx in (0, -1))
    return value, edge
