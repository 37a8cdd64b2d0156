r"""Temperature sweep (seed 002, App. B): λ̂(nβ) ≈ λ − (m−1)/log(nβ), so regress the estimates on
x = 1/log(nβ) by weighted least squares (weights 1/stderr²) and take the intercept as the
bias-reduced λ; the slope estimates −(m−1). Standard errors from (XᵀWX)⁻¹, scaled up by the
Birge ratio √(χ²/dof) when the points scatter more than their error bars allow.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from numeric.errors import InvalidInputError
from numeric.options import as_seeds
from numeric.potential.estimate_llc_potential import estimate_llc_potential
from numeric.result.llc_estimate import LLCEstimate
from numeric.run.estimate_llc import estimate_llc
from numeric.types import Finding


@dataclass(frozen=True)
class SweepResult:
    intercept: float  # bias-reduced λ
    intercept_stderr: float
    slope: float  # ≈ −(m − 1)
    slope_stderr: float
    nbetas: tuple[float, ...]
    estimates: tuple[LLCEstimate, ...]
    chi2: float

    @property
    def errors(self) -> tuple[tuple[float, Finding], ...]:
        """(nβ, finding) for each error finding of the estimates: inputs of the regression a
        reader should not trust."""
        return tuple(
            (nb, f)
            for nb, est in zip(self.nbetas, self.estimates, strict=True)
            for f in est.diagnostics
            if f.severity == "error"
        )

    def __str__(self) -> str:
        lines = [
            f"λ (intercept) = {self.intercept:.4g} ± {self.intercept_stderr:.2g}, slope "
            f"{self.slope:.3g} ± {self.slope_stderr:.2g} (≈ −(m − 1)), χ² = {self.chi2:.3g} "
            f"over {len(self.nbetas)} nβ"
        ]
        for nb, est in zip(self.nbetas, self.estimates, strict=True):
            codes = [f.code for f in est.diagnostics if f.severity == "error"]
            flag = f"  errors: {', '.join(codes)}" if codes else ""
            lines.append(f"  nβ = {nb:.4g}: λ̂ = {est.mean:.4g} ± {est.stderr:.2g}{flag}")
        return "\n".join(lines)


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
    _check_call(estimator, args, kwargs, seed)
    nb = _nbetas(nbetas)
    if len(set(nb)) < 2 or any(not (math.isfinite(x) and x > 1) for x in nb):
        raise InvalidInputError("nbetas needs at least two distinct values > 1")
    seed = as_seeds(seed, len(nb))  # every seed + j, before the first estimate runs
    ests = tuple(
        _checked_estimate(estimator, estimator(*args, nbeta=x, seed=seed + j, **kwargs), x)
        for j, x in enumerate(nb)
    )
    return regress(nb, ests)


def _checked_estimate(estimator: Any, est: Any, nbeta: float) -> LLCEstimate:
    """``est`` if it is an ``LLCEstimate`` (the regression reads its mean and stderr), else an
    ``InvalidInputError`` naming what came back, raised at the first nβ."""
    if isinstance(est, LLCEstimate):
        return est
    name = getattr(estimator, "__qualname__", type(estimator).__name__)
    raise InvalidInputError(
        f"temperature_sweep needs an estimator that returns an LLCEstimate (its mean and stderr "
        f"are regressed on 1/log nβ), but {name} returned {type(est).__name__} {est!r:.60} at "
        f"nβ = {nbeta:g}: pass numeric.estimate_llc or numeric.estimate_llc_potential, or wrap "
        "yours to return their result"
    )


_USAGE = (
    "temperature_sweep(numeric.estimate_llc, loss_fn, params, data, nbetas=[...], ...) or "
    "temperature_sweep(numeric.estimate_llc_potential, K, w_star, n, nbetas=[...], ...)"
)


def _check_call(estimator: Any, args: tuple[Any, ...], kwargs: dict[str, Any], seed: Any) -> None:
    """Refuse, before any estimate, a call the estimator cannot take: the estimator left out
    (the loss in its place), ``nbeta`` given beside ``nbetas``, arguments it does not have."""
    if not callable(estimator):
        raise InvalidInputError(
            f"estimator must be the estimate function, got {type(estimator).__name__}: {_USAGE}"
        )
    if "nbeta" in kwargs:
        raise InvalidInputError(
            "nbeta is what the sweep varies: pass its values as nbetas=[...] only"
        )
    try:
        sig = inspect.signature(estimator)
    except (TypeError, ValueError):  # no signature to read (a builtin): the call itself tells
        return
    try:
        sig.bind(*args, nbeta=2.0, seed=seed, **kwargs)
    except TypeError as exc:
        name = getattr(estimator, "__qualname__", type(estimator).__name__)
        ours = estimator in (estimate_llc, estimate_llc_potential)
        hint = "" if ours else f". The first argument is the estimator, then its own: {_USAGE}"
        raise InvalidInputError(
            f"temperature_sweep calls estimator(*args, nbeta=nβ, seed=seed + j, **kwargs), and "
            f"the estimator given ({name}) cannot take that call: {exc}{hint}"
        ) from None


def _nbetas(nbetas: Any) -> list[float]:
    """The values of ``nbetas`` as floats (a sequence, array or tensor of numbers)."""
    if isinstance(nbetas, (str, bytes, Mapping)) or not isinstance(nbetas, Iterable):
        raise InvalidInputError(
            f"nbetas must be a sequence of at least two distinct numbers > 1, got {nbetas!r}"
        )
    return [_number(f"nbetas[{j}]", x) for j, x in enumerate(nbetas)]


def _number(name: str, x: Any) -> float:
    """``float(x)`` for a number (a numpy or 0-dim tensor one too); strings are not parsed."""
    if not isinstance(x, (str, bytes, bool)):
        try:
            return float(x)
        except (TypeError, ValueError, RuntimeError):
            pass
    raise InvalidInputError(f"{name} must be a number > 1, got {x!r}")


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
