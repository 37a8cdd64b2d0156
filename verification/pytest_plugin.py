"""Pytest helpers for verifying your own model's LLC against an exact value.

Use in a test::

    from verification.pytest_plugin import assert_llc_matches

    def test_my_model():
        est = numeric.estimate_llc(loss_fn, w_star, data, num_chains=8, seed=0)
        assert_llc_matches(est, rlct.normal_crossing([1, 1]))

or enable the plugin (``pytest -p verification.pytest_plugin``) for the ``llc_check`` fixture,
which applies the profile selected with ``--llc-profile`` (``fast``: z ≤ 3, ESS ≥ 100;
``thorough``: z ≤ 4, ESS ≥ 400, R-hat ≤ 1.01).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rlct import RLCT

from .crosscheck import CrossCheck, DecisionRule, decide

PROFILES = {
    "fast": DecisionRule(z_crit=3.0, min_ess=100.0, max_rhat=1.05),
    "thorough": DecisionRule(z_crit=4.0, min_ess=400.0, max_rhat=1.01),
}


def assert_llc_matches(
    estimate: object,
    exact: RLCT,
    *,
    reference: object | None = None,
    rule: DecisionRule = PROFILES["fast"],
    name: str = "model",
) -> CrossCheck:
    """Fail unless the estimate agrees with the exact λ under ``rule`` (see :mod:`.crosscheck`)."""
    check = decide(name, exact, estimate, reference=reference, rule=rule)
    if check.verdict != "agree":
        detail = "; ".join(check.reasons) or f"z = {check.z:.2f} beyond ±{rule.z_crit}"
        pytest.fail(
            f"LLC of {name}: estimate {check.estimate:.4g} ± {check.stderr:.2g} vs exact λ = "
            f"{exact.lam} (target {check.target}) — {check.verdict}: {detail}",
            pytrace=False,
        )
    return check


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--llc-profile", default="fast", choices=sorted(PROFILES), help="LLC decision profile"
    )


@pytest.fixture
def llc_check(request: pytest.FixtureRequest) -> Callable[..., CrossCheck]:
    """``llc_check(estimate, exact)`` with the decision rule of the selected profile."""
    rule = PROFILES[request.config.getoption("--llc-profile")]

    def check(estimate: object, exact: RLCT, **kwargs: object) -> CrossCheck:
        return assert_llc_matches(estimate, exact, rule=rule, **kwargs)

    return check
