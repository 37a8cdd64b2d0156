r"""Temperature sweep (seed 002, App. B): λ̂(nβ) ≈ λ − (m−1)/log(nβ), so regress the estimates on
x = 1/log(nβ) by weighted least squares (weights 1/stderr²) and take the intercept as the
bias-reduced λ; the slope estimates −(m−1). Standard errors from (XᵀWX)⁻¹, scaled up by the
Birge ratio √(χ²/dof) when the points scatter more than their error bars allow.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from numeric.errors import InvalidInputError
from numeric.result import LLCEstimate


@dataclass(frozen=True)
class SweepResult:
    intercept: float  # bias-reduced λ
    intercept_stderr: float
    slope: float  # ≈ −(m − 1)
    slope_stderr: float
    nbetas: tuple[float, ...]
    estimates: tuple[LLCEstimate, ...]
    chi2: float


def temperature_sweep(
    estimator: Callable[..., LLCEstimate],
    *args: Any,
    nbetas: Sequence[float],
    seed: int = 0,
    **kwargs: Any,
) -> SweepResult:
    """Run ``estimator(*args, nbeta=nβ_j, seed=seed + j, **kwargs)`` for each nβ_j and regress.

    ``estimator`` is ``estimate_llc`` or ``estimate_llc_potential`` (or anything returning an
    ``LLCEstimate``). At least two distinct nβ are needed.
    """
    nb = [float(x) for x in nbetas]
    if len(set(nb)) < 2 or any(not (math.isfinite(x) and x > 1) for x in nb):
        raise InvalidInputError("nbetas needs at least two distinct values > 1")
    ests = tuple(estimator(*args, nbeta=x, seed=seed + j, **kwargs) for j, x in enumerate(nb))
    return regress(nb, ests)


def regress(nbetas: Sequence[float], ests: Sequence[LLCEstimate]) -> SweepResult:
    x = 1.0 / np.log(np.asarray(nbetas, dtype=np.float64))
    y = np.array([e.mean for e in ests])
    se = np.array([e.stderr for e in ests])
    if not np.all(np.isfinite(se) & (se > 0)):
        se = np.full_like(y, np.nanmean(se) if np.any(np.isfinite(se)) else 1.0)
    w = 1.0 / se**2
    A = np.stack([np.ones_like(x), x], axis=1)
    cov = np.linalg.inv(A.T @ (w[:, None] * A))
    coef = cov @ (A.T @ (w * y))
    resid = y - A @ coef
    chi2 = float(np.sum(w * resid**2))
    dof = len(y) - 2
    if dof > 0 and chi2 / dof > 1:
        cov = cov * (chi2 / dof)
    return SweepResult(
        float(coef[0]),
        float(math.sqrt(cov[0, 0])),
        float(coef[1]),
        float(math.sqrt(cov[1, 1])),
        tuple(float(v) for v in nbetas),
        tuple(ests),
        chi2,
    )
