"""``assert_llc_matches``: fail unless an LLC estimate agrees with an exact λ (no pytest needed).

Use it in any test runner::

    from verification import assert_llc_matches

    def test_my_model():
        est = numeric.estimate_llc(loss_fn, w_star, data, num_chains=8, seed=0)
        assert_llc_matches(est, rlct.normal_crossing([1, 1]))

With pytest, the plugin (:mod:`verification.pytest_plugin`, registered on install) also gives
the ``llc_check`` fixture, which applies the profile chosen with ``--llc-profile``.
"""

from __future__ import annotations

from rlct import RLCT

from ._validate import check_type
from .decision import CrossCheck, DecisionRule, decide

__all__ = ["PROFILES", "LLCMismatch", "assert_llc_matches"]

PROFILES = {
    "fast": DecisionRule(z_crit=3.0, min_ess=100.0, max_rhat=1.05),
    "thorough": DecisionRule(z_crit=4.0, min_ess=400.0, max_rhat=1.01),
}


class LLCMismatch(AssertionError):
    """The estimate does not agree with the exact λ; ``check`` holds the full verdict."""

    def __init__(self, message: str, check: CrossCheck) -> None:
        super().__init__(message)
        self.check = check


def assert_llc_matches(
    estimate: object,
    exact: RLCT,
    *,
    reference: object | None = None,
    rule: DecisionRule = PROFILES["fast"],
    name: str = "model",
) -> CrossCheck:
    """Return the verdict if the estimate agrees with the exact λ under ``rule`` (see
    :mod:`.crosscheck`); raise :class:`LLCMismatch` (an ``AssertionError``) otherwise."""
    check_type("name", name, str)
    check = decide(name, exact, estimate, reference=reference, rule=rule)
    if check.verdict != "agree":
        z = "unavailable" if check.z is None else f"{check.z:.2f}"
        detail = "; ".join(check.reasons) or f"z = {z} beyond ±{rule.z_crit}"
        raise LLCMismatch(
            f"LLC of {name}: estimate {check.estimate:.4g} ± {check.stderr:.2g} vs exact λ = "
            f"{exact.lam} (target {check.target}) — {check.verdict}: {detail}",
            check,
        )
    return check
