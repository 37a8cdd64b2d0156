"""The package as a library: importable without pytest, its pytest plugin registered on install.

The plugin tests run pytest on a throw-away test file (pytest's ``pytester``) that uses the
``llc_check`` fixture with no ``pytest_plugins`` line: the fixture comes from the ``pytest11``
entry point in pyproject.toml.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]

# A user's test file: estimates are stand-ins with the fields an LLCEstimate has.
USER_TESTS = """
from dataclasses import dataclass

import rlct


@dataclass(frozen=True)
class Estimate:
    mean: float
    stderr: float
    ess: float = 1000.0
    rhat: float = 1.0
    nbeta: float = 1000.0
    diagnostics: tuple = ()


def test_agrees(llc_check):
    check = llc_check(Estimate(0.51, 0.01), rlct.normal_crossing([1]))
    assert check.verdict == "agree"


def test_disagrees(llc_check):
    llc_check(Estimate(0.70, 0.01), rlct.normal_crossing([1]), name="my net")
"""


def test_user_tests_get_the_fixture_from_the_entry_point(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    # the failure reads as the numbers, not as a traceback through the plugin
    result.stdout.fnmatch_lines(
        ["*LLC of my net: estimate 0.7 ± 0.01 vs exact λ = 1/2*disagree: z = 20.00 beyond ±3.0*"]
    )
    assert "pytest_plugin.py" not in result.stdout.str()
    assert "During handling of the above exception" not in result.stdout.str()


def test_llc_profile_option_selects_the_rule(pytester: pytest.Pytester) -> None:
    """ESS 200 passes the fast profile (ESS ≥ 100) and not the thorough one (ESS ≥ 400)."""
    pytester.makepyfile(
        test_profile=USER_TESTS.split("def test_agrees")[0]
        + """
def test_ess(llc_check):
    llc_check(Estimate(0.5, 0.01, ess=200.0), rlct.normal_crossing([1]))
"""
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    thorough = pytester.runpytest("-p", "no:cacheprovider", "--llc-profile", "thorough")
    thorough.assert_outcomes(failed=1)
    thorough.stdout.fnmatch_lines(["*inconclusive: ESS 200 < 400*"])


@pytest.mark.parametrize(
    "how", [("-p", "verification.pytest_plugin"), ("-p", "no:verification.pytest_plugin")]
)
def test_plugin_is_registered_once_and_can_be_turned_off(
    pytester: pytest.Pytester, how: tuple[str, str]
) -> None:
    """``-p verification.pytest_plugin`` (the way before the entry point) is not a second
    registration; ``-p no:...`` removes the fixture."""
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", *how)
    if how[1].startswith("no:"):
        result.assert_outcomes(errors=2)
        result.stdout.fnmatch_lines(["*fixture 'llc_check' not found*"])
    else:
        result.assert_outcomes(passed=1, failed=1)


def _without_pytest(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where ``import pytest`` fails."""
    prelude = "import sys; sys.modules['pytest'] = None\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=300
    )


def test_library_and_cli_import_without_pytest() -> None:
    """Every module of the package but the plugin, experiments included, on a plain install."""
    code = """
import importlib, pkgutil, runpy
import verification
for info in pkgutil.walk_packages(verification.__path__, 'verification.'):
    if info.name != 'verification.pytest_plugin':
        importlib.import_module(info.name)
from verification import assert_llc_matches, crosscheck, decide
assert 'pytest' not in {m for m in sys.modules if sys.modules[m] is not None}
sys.argv = ['python -m verification', '--help']
runpy.run_module('verification', run_name='__main__')
"""
    out = _without_pytest(code)
    assert out.returncode == 0, out.stderr
    assert "--quick" in out.stdout and "--llc-profile" not in out.stdout


def test_assert_llc_matches_raises_assertion_error_without_pytest() -> None:
    code = """
import rlct
from types import SimpleNamespace
from verification import LLCMismatch, assert_llc_matches
est = SimpleNamespace(mean=0.9, stderr=0.01, ess=1e3, rhat=1.0, nbeta=1e3, diagnostics=())
try:
    assert_llc_matches(est, rlct.normal_crossing([1]))
except AssertionError as err:
    assert isinstance(err, LLCMismatch) and err.check.verdict == "disagree"
    print(err)
"""
    out = _without_pytest(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("LLC of model: estimate 0.9 ± 0.01 vs exact λ = 1/2")


def test_the_plugin_costs_nothing_until_its_fixture_is_used(pytester: pytest.Pytester) -> None:
    """In a foreign project's test run the plugin is registered (its option is accepted) and
    neither torch nor sympy is imported until a test asks for ``llc_check``."""
    pytester.makeconftest(
        "import sys\n"
        "def pytest_collection_finish(session):\n"
        "    heavy = sorted(m for m in ('torch', 'sympy', 'numeric', 'rlct') if m in sys.modules)\n"
        "    print('HEAVY', heavy)\n"
    )
    pytester.makepyfile(test_other="def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("--co", "-s", "--llc-profile", "thorough")
    result.stdout.fnmatch_lines(["HEAVY []"])
    assert result.ret == 0


def test_the_plugin_s_profile_names_are_the_profiles() -> None:
    from verification.assertions import PROFILES
    from verification.pytest_plugin import PROFILE_NAMES

    assert tuple(sorted(PROFILES)) == PROFILE_NAMES
