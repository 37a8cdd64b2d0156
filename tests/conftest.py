"""Shared pytest configuration: opt-in markers and hypothesis profiles.

`slow` tests run with ``--runslow``; `gpu` tests with ``--rungpu`` and only when CUDA is present.
Hypothesis profiles: ``default`` (fast, used locally and in CI) and ``thorough``
(select with ``--hypothesis-profile=thorough`` or ``SLT_HYPOTHESIS_PROFILE=thorough``).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(
    os.environ.get("SLT_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")
    parser.addoption("--rungpu", action="store_true", default=False, help="run tests marked gpu")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_slow = pytest.mark.skip(reason="slow test: pass --runslow to run it")
    gpu_reason = "GPU test: pass --rungpu on a machine with CUDA"
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:  # the exact layer's tests run without torch (.ci/floors)
        has_cuda = False
    skip_gpu = pytest.mark.skip(
        reason=gpu_reason if has_cuda else "GPU test: CUDA is not available"
    )
    for item in items:
        if "slow" in item.keywords and not config.getoption("--runslow"):
            item.add_marker(skip_slow)
        if "gpu" in item.keywords and not (config.getoption("--rungpu") and has_cuda):
            item.add_marker(skip_gpu)


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Small models are dispatch-bound; one torch thread avoids OpenMP contention on a shared
    2-core machine (it slowed estimator tests by up to 30×). Restored after each test. Without
    torch (the exact layer's tests at the lowest supported sympy: .ci/floors) nothing to do."""
    try:
        import torch
    except ImportError:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
