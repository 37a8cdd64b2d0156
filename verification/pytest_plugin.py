"""The pytest plugin: the ``llc_check`` fixture and the ``--llc-profile`` option.

Installing ``slt-check`` registers it (entry point ``pytest11``), so a test suite needs no
``pytest_plugins`` line::

    def test_my_model(llc_check):
        est = numeric.estimate_llc(loss_fn, w_star, data, num_chains=8, seed=0)
        llc_check(est, rlct.normal_crossing([1, 1]))

``llc_check(estimate, exact, **kwargs)`` is :func:`verification.assert_llc_matches` with the
decision rule of the profile chosen by ``--llc-profile`` (``fast``: z ≤ 3, ESS ≥ 100, R-hat ≤
1.05; ``thorough``: z ≤ 4, ESS ≥ 400, R-hat ≤ 1.01); a mismatch fails the test with the numbers
and no traceback. Disable the plugin with ``-p no:verification.pytest_plugin``. This is the only
module of the package that imports pytest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from rlct import RLCT

    from .decision import CrossCheck

__all__ = ["PROFILE_NAMES", "llc_check", "pytest_addoption"]

# ``assertions.PROFILES``' names, here so that registering the option imports nothing of the
# package: the plugin loads in every test run of an environment it is installed in, and costs
# nothing (no torch, no sympy) until a test uses the fixture
PROFILE_NAMES = ("fast", "thorough")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--llc-profile", default="fast", choices=PROFILE_NAMES, help="LLC decision profile"
    )


@pytest.fixture
def llc_check(request: pytest.FixtureRequest) -> Callable[..., CrossCheck]:
    """``llc_check(estimate, exact, **kwargs)`` with the decision rule of the selected profile."""
    from .assertions import PROFILES, LLCMismatch, assert_llc_matches

    rule = PROFILES[request.config.getoption("--llc-profile")]

    def check(estimate: object, exact: RLCT, **kwargs: object) -> CrossCheck:
        kwargs.setdefault("rule", rule)
        try:
            return assert_llc_matches(estimate, exact, **kwargs)
        except LLCMismatch as err:
            message = str(err)
        pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback

    return check
