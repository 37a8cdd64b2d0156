"""LLC estimates at checkpoints, as records: the one place experiments call the estimator.

``llc_along`` estimates at each checkpoint with ``numeric.estimate_llc`` (one call per checkpoint
for now; it will become the estimator's own series call without changing its signature).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from torch import Tensor, nn

import numeric
from numeric.findings.checks import worst_severity

from ..errors import InvalidArgumentError
from .records import Record
from .training import Checkpoint

LossFn = Callable[[Tensor, Tensor], Tensor]


@dataclass(frozen=True)
class LLCPoint(Record):
    """One estimate: λ̂ ± standard error, its diagnostics, and how long it took."""

    step: int
    llc: float
    stderr: float
    ess: float
    rhat: float
    nbeta: float
    init_loss: float
    num_params: int
    findings: str  # "code (severity); …", "" when none
    worst: str  # "none", "info", "warning" or "error"
    seconds: float
    # ½Σ nβh⁺/(nβh⁺ + γ + α) over the Hessian's eigenvalues h at w*: the target of a quadratic
    # loss (``LLCConfig.laplace_llc``; nan where the Hessian was not computed)
    laplace: float = math.nan

    @property
    def ok(self) -> bool:
        """No error finding."""
        return self.worst != "error"


def _severity(findings: Sequence[numeric.Finding]) -> tuple[str, str]:
    """ "code (severity); …" and the worst severity ("none" where there is no finding)."""
    listed = "; ".join(f"{f.code} ({f.severity})" for f in findings)
    return listed, worst_severity(findings)


def point(est: numeric.LLCEstimate, step: int, seconds: float) -> LLCPoint:
    """The record of an estimate."""
    findings, worst = _severity(est.diagnostics)
    return LLCPoint(
        step,
        est.mean,
        est.stderr,
        est.ess,
        est.rhat,
        est.nbeta,
        est.init_loss,
        est.config.num_params,
        findings,
        worst,
        seconds,
        est.config.laplace_llc,
    )


def paper_llc_point(step: int, llc: float, stderr: float, params: int, seconds: float) -> LLCPoint:
    """A paper-procedure λ̂ (``paper_sgld``) as an ``LLCPoint``: it has no diagnostics or
    findings."""
    nan = math.nan
    return LLCPoint(step, llc, stderr, nan, nan, nan, nan, params, "", "none", seconds)


def reference_point(ref: numeric.HMCReference, num_params: int, seconds: float) -> LLCPoint:
    """The record of an HMC reference (``numeric.hmc_llc_potential``; no K(w*) is kept: nan)."""
    findings, worst = _severity(ref.diagnostics)
    return LLCPoint(
        0,
        ref.mean,
        ref.stderr,
        ref.ess,
        ref.rhat,
        ref.nbeta,
        math.nan,
        num_params,
        findings,
        worst,
        seconds,
    )


def llc_of(
    loss_fn: Callable[[dict[str, Tensor], Any], Tensor],
    params: dict[str, Tensor],
    data: Any,
    *,
    step: int = 0,
    **estimator: Any,
) -> tuple[LLCPoint, numeric.LLCEstimate]:
    """λ̂ of a functional loss at ``params`` (``numeric.estimate_llc``'s arguments): the one call
    of the estimator in the experiments. Returns the record and the full estimate."""
    t0 = time.perf_counter()
    est = numeric.estimate_llc(loss_fn, params, data, **estimator)
    return point(est, step, time.perf_counter() - t0), est


def llc_at(
    module: nn.Module,
    loss: LossFn,
    data: tuple[Tensor, Tensor],
    *,
    state: dict[str, Tensor] | None = None,
    step: int = 0,
    **estimator: Any,
) -> tuple[LLCPoint, numeric.LLCEstimate]:
    """λ̂ at ``module``'s parameters (after loading ``state`` if given); keyword arguments go to
    ``numeric.estimate_llc``. Returns the record and the full estimate."""
    if state is not None:
        module.load_state_dict(state)
    loss_fn, w_star = numeric.from_module(module, loss)
    return llc_of(loss_fn, w_star, data, step=step, **estimator)


def llc_along(
    checkpoints: Sequence[Checkpoint],
    module: nn.Module,
    loss: LossFn,
    data: tuple[Tensor, Tensor],
    **estimator: Any,
) -> tuple[LLCPoint, ...]:
    """λ̂ at each checkpoint (its parameters loaded into ``module``, which is left holding the
    last). The estimator's ``seed`` (default 0) is the same at every checkpoint."""
    saved = {k: v.detach().clone() for k, v in module.state_dict().items()}
    out = []
    try:
        for c in checkpoints:
            out.append(llc_at(module, loss, data, state=c.state, step=c.step, **estimator)[0])
    except Exception:
        module.load_state_dict(saved)
        raise
    return tuple(out)


def mse_loss(pred: Tensor, y: Tensor) -> Tensor:
    """½·mean_i ‖y_i − f(x_i)‖² (Gaussian regression with unit noise, up to a constant).

    ``y`` must have the shape of ``pred``'s trailing axes (leading axes of ``pred`` may hold
    chains): a prediction [n, 1] against targets [n] would broadcast to n × n pairs."""
    if pred.shape[pred.dim() - y.dim() :] != y.shape:
        raise InvalidArgumentError(
            f"mse_loss: y of shape {tuple(y.shape)} does not match the trailing axes of pred "
            f"{tuple(pred.shape)} (reshape one: [n, 1] against [n] would broadcast to n × n)"
        )
    return 0.5 * (pred - y).square().sum(-1).mean()


def nan_point(step: int, num_params: int, message: str) -> LLCPoint:
    """The record of an estimate that raised (``findings`` holds the message)."""
    nan = math.nan
    return LLCPoint(step, nan, nan, nan, nan, nan, nan, num_params, message, "error", nan)
