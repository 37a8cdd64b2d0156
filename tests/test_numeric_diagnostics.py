"""ESS, split R-hat and the findings, on arrays with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from numeric.diagnostics import (
    Finding,
    _average_ranks,
    autocorr_time,
    check_below_reference,
    check_drift,
    check_mixing,
    check_step_size,
    ess,
    format_findings,
    split_rhat,
)


def _ar1(rho: float, chains: int, draws: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros((chains, draws))
    e = rng.standard_normal((chains, draws)) * np.sqrt(1 - rho**2)
    x[:, 0] = rng.standard_normal(chains)
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + e[:, t]
    return x


def test_ess_of_independent_draws_is_the_sample_size() -> None:
    x = np.random.default_rng(0).standard_normal((8, 2000))
    assert ess(x) == pytest.approx(x.size, rel=0.1)


@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_ess_of_ar1_matches_theory(rho: float) -> None:
    x = _ar1(rho, 8, 5000, seed=1)
    tau = (1 + rho) / (1 - rho)
    assert autocorr_time(x) == pytest.approx(tau, rel=0.15)
    assert ess(x) == pytest.approx(x.size / tau, rel=0.15)


def test_rhat_flags_chains_in_different_places() -> None:
    x = np.random.default_rng(2).standard_normal((4, 1000))
    assert split_rhat(x) < 1.01
    x[0] += 3.0
    assert split_rhat(x) > 1.1
    trend = x + np.linspace(0, 5, 1000)  # every chain drifts: split chains disagree
    assert split_rhat(trend) > 1.1


@pytest.mark.parametrize(
    "x",
    [
        np.random.default_rng(4).standard_normal((16, 50)),  # no ties
        np.random.default_rng(5).integers(0, 6, (9, 13)).astype(float),  # many ties
        np.zeros((3, 4)),  # one run of ties
        np.array([[2.0, 1.0, 2.0, -0.0, 0.0]]),  # ties at both ends; −0 equals 0
    ],
)
def test_average_ranks_match_scipy(x: np.ndarray) -> None:
    expected = stats.rankdata(x, method="average").reshape(x.shape)
    np.testing.assert_array_equal(_average_ranks(x), expected)


def test_average_ranks_of_a_missing_value_are_missing() -> None:
    x = np.array([[1.0, np.nan], [0.5, 2.0]])
    assert np.isnan(_average_ranks(x)).all()
    assert np.isnan(stats.rankdata(x, method="average")).all()  # scipy's convention


def test_findings() -> None:
    rng = np.random.default_rng(3)
    delta = rng.standard_normal((4, 500)) * 0.01 - 0.01
    (f,) = check_below_reference(delta, nbeta=100.0, stderr=0.05)
    assert f.code == "below_reference_loss" and f.values["llc"] < 0
    assert check_below_reference(-delta, nbeta=100.0, stderr=0.05) == ()

    per_chain = np.array([1.0, 1.1, 0.9, 5.0])
    codes = {f.code for f in check_mixing(per_chain, np.full(4, 0.1), rhat=1.3, ess_value=20)}
    assert codes == {"low_ess", "rhat", "chains_disagree"}
    assert check_mixing(per_chain[:3], np.full(3, 0.1), rhat=1.0, ess_value=1e4) == ()

    drifting = rng.standard_normal((4, 1000)) + np.linspace(3, 0, 1000)
    assert [f.code for f in check_drift(drifting, 1.0)] == ["drift"]
    assert check_drift(rng.standard_normal((4, 1000)), 1.0) == ()

    codes = [f.code for f in check_step_size(1.0, 1.5)]
    assert codes == ["step_size_drift", "minibatch_noise"]
    assert check_step_size(10.0, 1.01) == ()


def test_format_findings() -> None:
    f = Finding("x", "warning", "something", {"a": 1.0})
    assert format_findings([f]) == "[warning] x: something"
    assert format_findings([]) == "no findings"
