r"""Does an estimate agree with the exact λ? A decision rule a statistician can audit.

Target. The estimator's large-nβ expansion is λ̂ ≈ λ − (m−1)/log(nβ) (REFERENCE §6), so the
target is λ_target = λ − (m−1)/log(nβ). The correction is known to leading order only; half of its
size is added as systematic uncertainty σ_bias = ½·(m−1)/log(nβ). When a finite-temperature
reference λ_β (``numeric.expected_llc``: what a perfect sampler returns at this n, nβ, γ) is
available it replaces the expansion, with its quadrature error as σ_bias.

Rule. z = (λ̂ − λ_target) / √(se² + σ_bias²), se the estimate's standard error. Verdicts:

* ``inconclusive`` when the chains cannot be trusted: ESS < ``min_ess``, split R-hat > ``max_rhat``,
  or a diagnostic of severity "error" fired (a broken chain is never called "agree");
* ``agree`` when |z| ≤ ``z_crit``;
* ``disagree`` otherwise.

``z_crit`` = 3 by default (two-sided 0.27% false-alarm rate per case; raise it for large
catalogues, e.g. Bonferroni).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Literal

from rlct import RLCT

Verdict = Literal["agree", "disagree", "inconclusive", "no exact value"]

__all__ = ["CrossCheck", "DecisionRule", "decide"]


@dataclass(frozen=True)
class DecisionRule:
    """Thresholds of the decision (documented in the module docstring)."""

    z_crit: float = 3.0
    min_ess: float = 100.0
    max_rhat: float = 1.05

    def describe(self) -> str:
        return (
            f"|z| ≤ {self.z_crit} with z = (λ̂ − λ_target)/√(se² + σ_bias²); "
            f"inconclusive if ESS < {self.min_ess:g}, R-hat > {self.max_rhat}, or an error finding"
        )


@dataclass(frozen=True)
class CrossCheck:
    """The exact side, the estimate, the target used, the z-score and the verdict."""

    case: str
    exact: RLCT
    estimate: float
    stderr: float
    ess: float
    rhat: float
    nbeta: float
    target: float | None
    bias_sigma: float
    reference: float | None
    z: float | None
    verdict: Verdict
    reasons: tuple[str, ...]
    rule: DecisionRule
    seconds: float = float("nan")
    findings: tuple[str, ...] = ()  # the estimate's error findings, in full (why "inconclusive")


def decide(
    case: str,
    exact: RLCT,
    estimate: object,
    *,
    reference: object | None = None,
    rule: DecisionRule = DecisionRule(),
    seconds: float = float("nan"),
    systematic: float = 0.0,
) -> CrossCheck:
    """Compare an ``LLCEstimate`` with an exact ``RLCT`` (and an optional ``ExpectedLLC``).

    ``systematic`` is an extra, documented source of bias added to σ_bias in quadrature (e.g.
    localising at the true parameter instead of a minimum of L_n, see :mod:`verification.catalogue`).
    """
    mean, se = float(estimate.mean), float(estimate.stderr)
    ess, rhat, nbeta = float(estimate.ess), float(estimate.rhat), float(estimate.nbeta)
    errors = [f for f in estimate.diagnostics if getattr(f, "severity", "") == "error"]
    record = partial(
        CrossCheck,
        case,
        exact,
        mean,
        se,
        ess,
        rhat,
        nbeta,
        rule=rule,
        seconds=seconds,
        findings=tuple(str(f) for f in errors),
    )
    if not exact.exact or exact.lam is None:
        return record(
            target=None,
            bias_sigma=0.0,
            reference=None,
            z=None,
            verdict="no exact value",
            reasons=("the exact side is only a bound",),
        )
    ref_value = None if reference is None else float(reference.value)
    if reference is not None:
        target, sigma = ref_value, float(reference.abserr)
    else:
        shift = ((exact.mult or 1) - 1) / math.log(nbeta)
        target, sigma = float(exact.lam) - shift, 0.5 * shift
    sigma = math.hypot(sigma, systematic)
    reasons: list[str] = []
    if not math.isfinite(ess) or ess < rule.min_ess:
        reasons.append(f"ESS {ess:.0f} < {rule.min_ess:g}")
    if not math.isfinite(rhat) or rhat > rule.max_rhat:
        reasons.append(f"R-hat {rhat:.3f} > {rule.max_rhat}")
    reasons += [f"diagnostic: {f.code}" for f in errors]
    denom = math.hypot(se, sigma) if math.isfinite(se) else float("nan")
    z = (mean - target) / denom if denom and math.isfinite(denom) else None
    if reasons:
        verdict: Verdict = "inconclusive"
    elif z is None:
        verdict, reasons = "inconclusive", ["standard error unavailable"]
    else:
        verdict = "agree" if abs(z) <= rule.z_crit else "disagree"
    return record(
        target=target,
        bias_sigma=sigma,
        reference=ref_value,
        z=z,
        verdict=verdict,
        reasons=tuple(reasons),
    )
