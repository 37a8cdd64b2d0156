r"""Does an estimate agree with the exact λ? A decision rule a statistician can audit.

Target. The estimator's large-nβ expansion is λ̂ ≈ λ − (m−1)/log(nβ) (REFERENCE §6), so the
target is λ_target = λ − (m−1)/log(nβ). The correction is known to leading order only; half of its
size is added as systematic uncertainty σ_bias = ½·(m−1)/log(nβ). When a finite-temperature
reference λ_β (``numeric.expected_llc``: what a perfect sampler returns at this n, nβ, γ) is
available it replaces the expansion, with its quadrature error as σ_bias.

Rule. z = (λ̂ − λ_target) / √(se² + σ_bias²), se the estimate's standard error. Verdicts:

* ``inconclusive`` when the chains cannot be trusted: ESS < ``min_ess``, split R-hat > ``max_rhat``,
  a diagnostic of severity "error" fired, or a number the rule needs (λ̂, se, ESS, R-hat, nβ, the
  reference) is NaN or infinite (a broken chain is never called "agree" or "disagree");
* ``agree`` when |z| ≤ ``z_crit``;
* ``disagree`` otherwise.

``z_crit`` = 3 by default (two-sided 0.27% false-alarm rate per case; raise it for large
catalogues, e.g. Bonferroni).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import partial
from numbers import Real
from typing import Literal

from rlct import RLCT

from ._validate import check_real, check_type
from .errors import InvalidArgumentError, InvalidTypeError

Verdict = Literal["agree", "disagree", "inconclusive", "no exact value"]

__all__ = ["CrossCheck", "DecisionRule", "decide", "refuse"]


@dataclass(frozen=True)
class DecisionRule:
    """Thresholds of the decision (documented in the module docstring)."""

    z_crit: float = 3.0
    min_ess: float = 100.0
    max_rhat: float = 1.05

    def __post_init__(self) -> None:
        object.__setattr__(self, "z_crit", check_real("z_crit", self.z_crit, 0.0, open_lo=True))
        object.__setattr__(self, "min_ess", check_real("min_ess", self.min_ess, 0.0))
        object.__setattr__(self, "max_rhat", check_real("max_rhat", self.max_rhat, 1.0))

    def describe(self) -> str:
        return (
            f"|z| ≤ {self.z_crit} with z = (λ̂ − λ_target)/√(se² + σ_bias²); "
            f"inconclusive if ESS < {self.min_ess:g}, R-hat > {self.max_rhat}, or an error finding"
        )

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def _plain(x: float | None) -> float | None:
    """A float for JSON: None for a missing or non-finite value (the reasons say why)."""
    return None if x is None or not math.isfinite(x) else float(x)


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
    reference_source: str = ""  # what the reference is (``reference_source``); "" without one

    def to_dict(self) -> dict[str, object]:
        """One flat record of plain data (``json.dumps(..., allow_nan=False)`` accepts it).

        ``lambda_exact`` is λ as exact text ("1/2"), ``lambda`` its float (None when only bounds
        are known), ``lambda_lower``/``lambda_upper`` the bounds; NaN and ±inf become None.
        """
        ex = self.exact
        return {
            "case": self.case,
            "verdict": self.verdict,
            "exact": bool(ex.exact),
            "lambda_exact": str(ex.lam) if ex.exact else None,
            "lambda": float(ex.lam) if ex.exact else None,
            "lambda_lower": float(ex.lower),
            "lambda_upper": float(ex.upper),
            "m": ex.mult,
            "method": ex.method,
            **{
                k: _plain(getattr(self, k))
                for k in ("estimate", "stderr", "ess", "rhat", "nbeta", "target", "bias_sigma")
            },
            "reference": _plain(self.reference),
            "reference_source": self.reference_source or None,
            "z": _plain(self.z),
            "reasons": list(self.reasons),
            "findings": list(self.findings),
            "seconds": _plain(self.seconds),
            **self.rule.to_dict(),
        }


def _number(obj: object, attr: str, what: str) -> float:
    """``obj.attr`` as a float (NaN and inf kept: the rule turns them into reasons)."""
    if not hasattr(obj, attr):
        raise InvalidTypeError(
            f"{what} has no attribute {attr!r}: {type(obj).__name__} {obj!r:.80}"
        )
    value = getattr(obj, attr)
    try:
        # a bool, numpy's or torch's included, is not a measurement (float(True) would be 1.0)
        if isinstance(value, str | bytes | bool) or "bool" in str(getattr(value, "dtype", "")):
            raise TypeError
        return float(value)
    except OverflowError:  # an int beyond the float range: infinite, which the rule refuses
        return math.inf if value > 0 else -math.inf
    except (TypeError, ValueError):
        raise InvalidTypeError(f"{what}.{attr} must be a number, got {value!r:.80}") from None


def _error_findings(estimate: object) -> list[object]:
    diags = getattr(estimate, "diagnostics", None)
    if diags is None or isinstance(diags, str) or not isinstance(diags, Iterable):
        raise InvalidTypeError("estimate.diagnostics must be a sequence of findings")
    return [f for f in diags if getattr(f, "severity", "") == "error"]


def _check_reference_settings(reference: object | None, estimate: object, nbeta: float) -> None:
    """A λ_β reference holds at its own nβ and γ (``ExpectedLLC``): one made for other settings
    than the estimate's is refused (its value would be compared with another quantity; a
    reference at nβ = 10 against an estimate at nβ = 1,086 read 'disagree' at z = 5.2)."""
    if reference is None:
        return
    gamma = getattr(getattr(estimate, "config", None), "gamma", None)
    for attr, have in (("nbeta", nbeta), ("gamma", gamma)):
        want = getattr(reference, attr, None)
        try:
            want, have = float(want), float(have)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue  # the reference or the estimate does not say: nothing to compare
        if (
            math.isfinite(want)
            and math.isfinite(have)
            and not math.isclose(want, have, rel_tol=1e-9)
        ):
            raise InvalidArgumentError(
                f"the λ_β reference holds for {attr} = {want:.6g}, but the estimate ran at "
                f"{attr} = {have:.6g}: compute the reference at the estimate's settings"
            )


def _target(
    exact: RLCT, nbeta: float, reference: object | None, reasons: list[str]
) -> tuple[float | None, float, float | None]:
    """(λ_target, σ_bias, λ_β reference); λ_target None, with a reason, when it is undefined."""
    if reference is not None:
        value = _number(reference, "value", "reference")
        err = _number(reference, "abserr", "reference")
        if not math.isfinite(value) or not math.isfinite(err) or err < 0:
            reasons.append(f"λ_β reference {value} ± {err} is not a finite value and error")
            return None, 0.0, None
        return value, err, value
    m = exact.mult or 1
    if m == 1:
        return float(exact.lam), 0.0, None
    if not math.isfinite(nbeta) or nbeta <= 1:
        reasons.append(f"the target λ − (m−1)/log nβ needs nβ > 1, got nβ = {nbeta}")
        return None, 0.0, None
    shift = (m - 1) / math.log(nbeta)
    return float(exact.lam) - shift, 0.5 * shift, None


def _chain_reasons(
    mean: float, se: float, ess: float, rhat: float, nbeta: float, rule: DecisionRule
) -> list[str]:
    """Why the chains' numbers cannot be trusted (empty when they can)."""
    reasons = []
    if not math.isfinite(mean):
        reasons.append(f"estimate is {mean}")
    if not math.isfinite(se) or se < 0:
        reasons.append(f"standard error is {se}")
    if not math.isfinite(nbeta) or nbeta <= 0:
        reasons.append(f"nβ = {nbeta} is not a positive number")
    if not math.isfinite(ess) or ess < rule.min_ess:
        reasons.append(f"ESS {ess:.0f} < {rule.min_ess:g}")
    if not math.isfinite(rhat) or rhat > rule.max_rhat:
        reasons.append(f"R-hat {rhat:.3f} > {rule.max_rhat}")
    elif rhat < 0:  # a ratio of variances' square root: a negative one is a broken computation
        reasons.append(f"R-hat {rhat:.3f} is negative")
    return reasons


@dataclass(frozen=True)
class LaplaceReference:
    """λ_β of the quadratic approximation of L_n at a minimum: ½·Σ nβh_i/(nβh_i + γ) over the
    Hessian's eigenvalues h_i. At a point of locally constant rank the loss is locally quadratic
    in the identifiable directions, so this is the finite-temperature target up to higher-order
    terms of L_n (not included in ``abserr``)."""

    value: float
    abserr: float = 0.0
    source = "Laplace λ_β, ½Σ nβh/(nβh + γ)"


def reference_source(reference: object | None) -> str:
    """What a reference value is: its ``source`` where it names one, λ_β by its method for
    ``numeric.expected_llc`` (quadrature or a closed form); "" for none."""
    if reference is None:
        return ""
    if isinstance(source := getattr(reference, "source", None), str):
        return source
    method = getattr(reference, "method", "")
    if isinstance(method, str) and method.startswith("closed form"):
        return "λ_β, closed form"
    return "λ_β, quadrature" if isinstance(method, str) and "quadrature" in method else "λ_β"


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
    localising at the true parameter instead of a minimum of L_n, see :mod:`verification.crosschecks`).
    """
    check_type("case", case, str)
    check_type("exact", exact, RLCT)
    check_type("rule", rule, DecisionRule)
    systematic = check_real("systematic", systematic, 0.0)
    if isinstance(seconds, bool) or not isinstance(seconds, Real):
        raise InvalidTypeError(f"seconds must be a number, got {seconds!r}")
    mean, se, ess, rhat, nbeta = (
        _number(estimate, a, "estimate") for a in ("mean", "stderr", "ess", "rhat", "nbeta")
    )
    errors = _error_findings(estimate)
    _check_reference_settings(reference, estimate, nbeta)
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
        seconds=float(seconds),
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
    reasons = _chain_reasons(mean, se, ess, rhat, nbeta, rule)
    reasons += [f"diagnostic: {getattr(f, 'code', f)}" for f in errors]
    target, sigma, ref_value = _target(exact, nbeta, reference, reasons)
    sigma = math.hypot(sigma, systematic)
    z = None
    if target is not None and math.isfinite(mean) and math.isfinite(se) and se >= 0:
        denom = math.hypot(se, sigma)
        z = (mean - target) / denom if denom > 0 else None
    if reasons:
        verdict: Verdict = "inconclusive"
    elif z is None:
        verdict, reasons = "inconclusive", ["standard error unavailable (se = σ_bias = 0)"]
    else:
        verdict = "agree" if abs(z) <= rule.z_crit else "disagree"
    return record(
        target=target,
        bias_sigma=sigma,
        reference=ref_value,
        reference_source=reference_source(reference) if ref_value is not None else "",
        z=z,
        verdict=verdict,
        reasons=tuple(reasons),
    )


def refuse(
    case: str, exact: RLCT, reason: str, *, rule: DecisionRule, seconds: float = float("nan")
) -> CrossCheck:
    """ "inconclusive" without an estimate (its numbers NaN): the case cannot be checked, and
    ``reason`` says why (e.g. a prior the estimator does not sample)."""
    nan = float("nan")
    return CrossCheck(
        case=case,
        exact=exact,
        estimate=nan,
        stderr=nan,
        ess=nan,
        rhat=nan,
        nbeta=nan,
        target=None,
        bias_sigma=0.0,
        reference=None,
        z=None,
        verdict="inconclusive",
        reasons=(reason,),
        rule=rule,
        seconds=seconds,
    )
