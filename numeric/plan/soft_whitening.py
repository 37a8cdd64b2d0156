r"""Soft directions preconditioned at their own curvature where the potential is quadratic along
them (the dense preconditioner's re-plan for ``soft_directions``).

With H = ∇²L_n(w*) = Q·diag(h)·Qᵀ, c = γ + α and k_i = nβh_i⁺ + c, the dense preconditioner scales
every direction below the softest relevant one (nβh < c) like it, M_i = 1/k_soft
(``numeric.hessian.dense``): a direction flat at w* is often quartic, or turns along a curved set
of minima, where the chains go, and 1/c there is a step far too long. A *soft* direction
(0 < nβh_i < c) carries ½·nβh_i/k_i of the Laplace value (up to ¼) and under that clamp relaxes
k_soft/k_i times slower than the slowest relevant one (``numeric.findings.soft_directions``): on a
linear regression with ten features of scale 0.007 beside ten unit ones (nβ = 10⁴, γ = 1) that was
7.5·10⁴ steps against a 4,840-step run, and λ̂ missed 1.44 of 6.64.

Where the potential is what its curvature says along v_i (the unit eigenvector) wherever the
target puts the chains, the clamp is not needed. With σ_j = 1/√k_j (the target's spread along v_j)
and L the loss on the Hessian's samples (``hessian.at_w_star.hessian_subset``), the re-plan asks

* at w*, for s ∈ {±σ_i, ±3σ_i}: |nβ·(L(w* + s·v_i) − L(w*)) − ½·nβh_i·s²| ≤ ``TOLERANCE``·½·k_i·s²
  (a gradient at w*, a cubic or a quartic term that matter there fail it);
* at ``NUM_PROBES`` typical points of the quadratic target, p = w* + Q·(ζ ⊙ k^{-1/2}) with random
  signs ζ (flat directions at the localisation's spread): the curvature along v_i over ±σ_i,
  nβ·(L(p + σ_i·v_i) + L(p − σ_i·v_i) − 2L(p))/σ_i² + c, within ``TOLERANCE``·k_i of k_i (a
  product with a flat direction, (a·b)², is quadratic along a at w* and stiff where b has
  spread: on a two-layer quadratic network that made the curvature where the chains went 2300
  instead of ≈ 2);

and scales the soft directions that pass at their own curvature, M_i = 1/k_i: they then relax
like the relevant ones. Only soft directions carrying at least ``MIN_SHARE`` of the Laplace value
(the rest cannot move λ̂) and slowed at least ``MIN_SLOWDOWN``-fold by the clamp (the rest relax
within the run anyway) are checked, the ``MAX_CHECKED`` largest shares first. The signs come
from a generator seeded with the run's seed (not the run's stream), so the plan stays pure.
"""

from __future__ import annotations

import dataclasses
import math

import torch
from torch import Tensor

from numeric.hessian.at_w_star import HESSIAN_CHUNK, HVP_BATCH_SAMPLES, hessian_subset
from numeric.hessian.dense import HessianInfo
from numeric.inputs.data import take
from numeric.inputs.problem import DataModel

TOLERANCE = 0.5  # U's rise within this share of its quadratic model ½·k·s²
MIN_SHARE = 0.01  # ½·nβh/(nβh + c) below which a soft direction is left clamped
# k_soft/k below which the clamp is left alone: such a direction relaxes within a few times the
# slowest relevant one's time, which the run's lengths allow for (the README network at γ = 100:
# 36 soft directions slowed 1.5–2.6-fold; whitened, λ̂ was the same and the run 40% longer)
MIN_SLOWDOWN = 4.0
MAX_CHECKED = 64  # soft directions checked, by share (1 + R + 4m + 2Rm losses, R = NUM_PROBES)
OFFSETS = (-3.0, -1.0, 1.0, 3.0)  # s/σ_i along the axis at w*
# typical points of the target where the curvature along v_i is measured: a product with a
# difference of flat directions, (a·(b₁ − b₂))², is seen by half the sign draws
NUM_PROBES = 8


def soft_candidates(info: HessianInfo) -> Tensor:
    """Indices of the soft directions (0 < nβh < c) with share ½·nβh/k ≥ ``MIN_SHARE`` that the
    clamp slows at least ``MIN_SLOWDOWN``-fold (k_soft/k ≥ 4), the ``MAX_CHECKED`` largest
    shares first; none where no direction is relevant (nothing is clamped then)."""
    k_soft = info.softest_relevant
    if math.isnan(k_soft):
        return torch.zeros(0, dtype=torch.long, device=info.eigvals.device)
    h = info.nbeta * info.eigvals.clamp_min(0)
    k = info.curvatures
    share = 0.5 * h / k
    soft = info.soft & (share >= MIN_SHARE) & (k_soft / k >= MIN_SLOWDOWN)
    idx = torch.nonzero(soft).flatten()
    order = torch.argsort(share[idx], descending=True, stable=True)
    return idx[order][:MAX_CHECKED]


def _losses(model: DataModel, idx: Tensor, points: Tensor) -> Tensor:
    """L on the samples ``idx`` at each of ``points`` [P, D], at most ``HVP_BATCH_SAMPLES``
    samples × points per vmapped call (the dense Hessian's bound on its working set)."""
    total = points.new_zeros(points.shape[0])
    for s in range(0, idx.numel(), HESSIAN_CHUNK):
        rows = idx[s : s + HESSIAN_CHUNK]
        part = take(model.data, rows)
        step = max(1, HVP_BATCH_SAMPLES // rows.numel())
        with torch.no_grad():
            for p in range(0, points.shape[0], step):
                total[p : p + step] += model.shared_batch(points[p : p + step], part) * rows.numel()
    return total / idx.numel()


def _typical_points(info: HessianInfo, w_star: Tensor, seed: int) -> Tensor:
    """``NUM_PROBES`` points w* + Q·(ζ ⊙ k^{-1/2}), ζ random signs [NUM_PROBES, D]."""
    g = torch.Generator().manual_seed(seed)
    signs = torch.randint(0, 2, (NUM_PROBES, w_star.numel()), generator=g) * 2 - 1
    z = signs.to(device=w_star.device, dtype=w_star.dtype) * info.curvatures.rsqrt()
    return w_star + z @ info.eigvecs.T


def quadratic_along(
    model: DataModel, w_star: Tensor, info: HessianInfo, idx: Tensor, seed: int
) -> Tensor:
    """Mask over ``idx``: the potential along each eigenvector is its quadratic model at w* out
    to 3σ_i, and its curvature at the typical points is k_i's (module docstring)."""
    m = idx.numel()
    if m == 0:
        return torch.zeros(0, dtype=torch.bool, device=w_star.device)
    h = info.nbeta * info.eigvals[idx].clamp_min(0)
    k = info.curvatures[idx]
    sigma = k.rsqrt()
    v = info.eigvecs[:, idx].T  # [m, D]
    offsets = torch.tensor(OFFSETS, dtype=k.dtype, device=k.device)
    s = sigma[:, None] * offsets  # [m, 4]
    centres = torch.cat([w_star[None], _typical_points(info, w_star, seed)])  # [1 + R, D]
    axis = (w_star + s[..., None] * v[:, None, :]).reshape(-1, w_star.numel())
    pm = torch.stack([-sigma, sigma], dim=1)  # [m, 2]
    around = centres[1:, None, None, :] + pm[None, :, :, None] * v[None, :, None, :]
    samples = hessian_subset(model.n, seed, w_star.device, hvps=w_star.numel())
    losses = _losses(model, samples, torch.cat([centres, axis, around.reshape(-1, w_star.numel())]))
    losses = info.nbeta * losses.double()
    r = centres.shape[0] - 1
    at_centres, rest = losses[: r + 1], losses[r + 1 :]
    rise = rest[: 4 * m].reshape(m, 4) - at_centres[0]
    s2 = s.double().square()
    kd, hd = k.double()[:, None], h.double()[:, None]
    ok = ((rise - 0.5 * hd * s2).abs() <= TOLERANCE * 0.5 * kd * s2).all(dim=1)
    pairs = rest[4 * m :].reshape(r, m, 2)
    second = (pairs.sum(dim=2) - 2 * at_centres[1:, None]) / sigma.double().square()[None]
    curvature = second + info.floor  # [R, m]
    ok &= ((curvature - kd.T).abs() <= TOLERANCE * kd.T).all(dim=0)
    return ok & torch.isfinite(losses).all()


def whiten_quadratic_soft(
    model: DataModel, w_star: Tensor, info: HessianInfo, seed: int
) -> HessianInfo:
    """``info`` with ``whitened`` set to the soft directions that pass ``quadratic_along`` (the
    same ``info`` where none does)."""
    idx = soft_candidates(info)
    passed = idx[quadratic_along(model, w_star, info, idx, seed)]
    if passed.numel() == 0:
        return info
    mask = torch.zeros(info.eigvals.numel(), dtype=torch.bool, device=info.eigvals.device)
    mask[passed] = True
    return dataclasses.replace(info, whitened=mask)
