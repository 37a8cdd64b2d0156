"""The chains still moving away from w* (numeric.findings.spreading): the statistic on made-up
spreads whose growth is known, and the finding on estimates (data and potential) whose chains cannot
have settled."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from _spreading import dln_868, spreads

import numeric
from numeric.findings.spreading import GROWTH, check_spreading, escalate, spread_growth
from numeric.types import Finding


def test_growth_of_a_line_is_its_rise_between_the_quarters() -> None:
    x = spreads(0.4, noise=0.0)
    g, z, last = spread_growth(x)
    # quarter means of 1 + 0.4·s, s = k/399: s̄ = 49.5/399 (first 100) and 349.5/399 (last 100)
    first_mean, last_mean = 1 + 0.4 * 49.5 / 399, 1 + 0.4 * 349.5 / 399
    assert last == pytest.approx(last_mean, rel=1e-3)
    assert g == pytest.approx((last_mean - first_mean) / last_mean, rel=1e-3)
    assert z == math.inf  # every chain grew by the same amount


def test_stationary_chains_give_nothing() -> None:
    x = spreads(0.0, noise=0.2)
    g, z, _ = spread_growth(x)
    assert abs(g) < GROWTH and abs(z) < 3
    assert check_spreading(x, np.ones(4, bool)) == ()


def test_growing_chains_give_a_warning_with_the_growth() -> None:
    x = spreads(0.5)
    (warn,) = check_spreading(x, np.ones(4, bool))
    assert (warn.code, warn.severity) == ("spreading", "warning")
    g, _, _ = spread_growth(x)  # (1.4375 − 1.0625)/1.4375 ≈ 0.26 for a rise of 0.5
    assert warn.values["growth"] == pytest.approx(g) and g == pytest.approx(0.26, abs=0.01)
    assert "26%" in warn.message and "gamma" in warn.message


def _finding(code: str) -> Finding:
    return Finding(code, "warning", code)


def test_escalated_to_an_error_only_beyond_the_quadratic_region_with_capped_draws() -> None:
    (warn,) = check_spreading(spreads(0.5), np.ones(4, bool))
    others = [_finding("beyond_quadratic"), _finding("draws_capped")]
    got = escalate([warn, *others])
    assert [f.severity for f in got] == ["error", "warning", "warning"]
    assert got[0].values == warn.values and "cannot be used" in got[0].message
    for partial in ([warn, others[0]], [warn, others[1]], others):
        assert escalate(list(partial)) == list(partial)


def test_drift_after_the_draws_is_escalated_like_spreading() -> None:
    """λ̂ at ε still moving after the draws (the step check's ``drift_after_draws``), beyond the
    quadratic region and with capped draws, is an error too; an error stays as it was (its
    message not extended twice), and without both companions the warning stays a warning."""
    drift = _finding("drift_after_draws")
    others = [_finding("beyond_quadratic"), _finding("draws_capped"), _finding("low_ess")]
    got = escalate([*others, drift])
    assert [f.severity for f in got] == ["warning", "warning", "warning", "error"]
    assert got[-1].message.startswith("drift_after_draws. Here the chains")
    again = escalate(got)
    assert again == got
    assert escalate([others[0], drift]) == [others[0], drift]


def test_a_given_num_draws_below_the_rule_escalates_like_capped_draws() -> None:
    """With ``num_draws`` given there is no ``draws_capped``: ``draws_below_rule`` (info: the
    draws the slowest direction asks for against those given) takes its place, and the message
    names both numbers."""
    from numeric.findings.slow_mixing import check_draws_given

    (warn,) = check_spreading(spreads(0.5), np.ones(4, bool))
    beyond = _finding("beyond_quadratic")
    (below,) = check_draws_given(15_000, 2_000, 3_000.0)
    assert below.code == "draws_below_rule" and below.severity == "info"
    assert "15000 draws per chain" in below.message and "num_draws = 2000" in below.message
    got = escalate([warn, beyond, below])
    assert [f.severity for f in got] == ["error", "warning", "info"]
    assert "15000 draws per chain" in got[0].message and "num_draws = 2000" in got[0].message
    assert check_draws_given(2_000, 2_000, 500.0) == check_draws_given(500, 2_000, 100.0) == ()
    assert escalate([warn, below]) == [warn, below]


def test_growth_below_the_threshold_or_in_one_chain_only_is_not_reported() -> None:
    small = spreads(0.5 * GROWTH, noise=0.001)  # significant, but under GROWTH
    assert spread_growth(small)[1] > 3
    assert check_spreading(small, np.ones(4, bool)) == ()
    one = spreads(0.0, noise=0.01)
    one[:, 0] *= np.linspace(1.0, 3.0, len(one))  # one chain wanders off, three stay
    g, z, _ = spread_growth(one)
    assert g > GROWTH and z < 3
    assert check_spreading(one, np.ones(4, bool)) == ()


def test_diverged_chains_are_left_out_and_short_records_are_not_read() -> None:
    x = spreads(0.0, noise=0.05)
    x[:, 2] = np.linspace(1.0, 1e6, len(x))  # a chain running away (dropped as diverged)
    alive = np.array([True, True, False, True])
    assert check_spreading(x, alive) == ()
    assert check_spreading(x, np.ones(4, bool)) == ()  # one chain grows: z small
    assert check_spreading(spreads(1.0)[:5], np.ones(4, bool)) == ()
    assert check_spreading(None, np.ones(4, bool)) == ()


def test_chains_spreading_along_an_orbit_are_reported() -> None:
    est = dln_868(num_burnin=100, num_draws=2000)
    found = {f.code: f for f in est.diagnostics}
    # lengths given, 2,000 draws where the slowest direction asks for ≈ 5,200: an error too
    assert found["spreading"].severity == "error"
    assert "num_draws = 2000 given" in found["spreading"].message
    assert found["draws_below_rule"].values["given"] == 2000
    assert found["spreading"].values["growth"] > 0.3
    # the chains still spreading: beyond_quadratic no longer says "the run mixed"
    assert found["beyond_quadratic"].severity == "warning"
    assert "spreading" in found["beyond_quadratic"].message


def test_chains_held_near_w_star_are_not_reported() -> None:
    est = dln_868(num_burnin=100, num_draws=2000, gamma=100.0)
    assert "spreading" not in {f.code for f in est.diagnostics}, est


def test_the_potential_estimator_reports_spreading_along_exactly_flat_directions() -> None:
    """K = w₁² + w₂² in 20 dimensions: 18 directions held by γ alone. Their spread does not move
    λ̂ (exactly 1 here: two quadratic directions), so the finding is a warning and λ̂ is right."""

    def K(w):
        return w[..., 0].square() + w[..., 1].square()

    w0 = torch.zeros(20, dtype=torch.float64)
    short = numeric.estimate_llc_potential(K, w0, 10_000, seed=0, num_burnin=50, num_draws=2000)
    (found,) = [f for f in short.diagnostics if f.code == "spreading"]
    assert found.severity == "warning" and found.values["growth"] > 0.3
    # nβ/(nβ + γ) per quadratic direction, nβ = n/log n
    nbeta = 10_000 / math.log(10_000)
    assert abs(short.mean - nbeta / (nbeta + 1)) < 4 * short.stderr
    held = numeric.estimate_llc_potential(
        K, w0, 10_000, seed=0, num_burnin=50, num_draws=2000, gamma=100.0
    )
    assert "spreading" not in {f.code for f in held.diagnostics}


def test_a_burn_in_cut_by_the_time_budget_escalates_like_capped_draws() -> None:
    """Where the time budget ended the burn-in (``time_budget`` with ``num_burnin``) the run was
    shorter than its rules ask, as with ``draws_capped``: spreading beyond the quadratic region
    is then an error whose message names the cut. A budget that ended only the draws (the
    burn-in's rules met) or skipped the step-size check is no such cut, and within the quadratic
    region the warning stays (budget-cut runs of trained networks: benchmarks/RESULTS.md)."""
    (warn,) = check_spreading(spreads(0.5), np.ones(4, bool))
    beyond = _finding("beyond_quadratic")
    burn_in = Finding("time_budget", "warning", "ended the burn-in", {"num_burnin": 128.0})
    draws = Finding("time_budget", "warning", "ended the draws", {"num_draws": 900.0})
    skipped = Finding("time_budget", "info", "the step-size check did not fit", {})
    got = escalate([burn_in, warn, beyond], burn_in_cut=True)
    assert [f.severity for f in got] == ["warning", "error", "warning"]
    assert "the time budget ended the burn-in" in got[1].message
    assert got[1].values == warn.values and "cannot be used" in got[1].message
    for found, cut in (([draws, warn, beyond], False), ([skipped, warn, beyond], False)):
        assert escalate(found, burn_in_cut=cut) == found
    assert escalate([burn_in, warn], burn_in_cut=True) == [burn_in, warn]


def test_low_ess_under_a_time_budget_is_a_warning_where_the_spread_was_checked() -> None:
    """A run the time budget cut has few effective draws because of the budget: ``low_ess`` is
    then a warning (its numbers kept) where the chains' spread was measured, so that spreading
    can speak for a relaxation under way; an error where it was not, or without a cut (an info
    ``time_budget``, a skipped step-size check, is no cut)."""
    from numeric.findings.checks import low_ess_finding, relieve_low_ess
    from numeric.findings.spreading import MIN_POINTS, spread_measured

    low = low_ess_finding(12.0, 1.2)
    assert low.severity == "error"
    draws = Finding("time_budget", "warning", "ended the draws", {"num_draws": 900.0})
    skipped = Finding("time_budget", "info", "the step-size check did not fit", {})
    eased_all = relieve_low_ess([draws, low], budget_cut=True, spread_checked=True)
    (eased,) = [f for f in eased_all if f.code == "low_ess"]
    assert eased.severity == "warning" and eased.values == low.values
    assert "12.0 < 30" in eased.message and "time budget" in eased.message
    assert relieve_low_ess([draws, low], budget_cut=True, spread_checked=False) == [draws, low]
    assert relieve_low_ess([skipped, low], budget_cut=False, spread_checked=True) == [skipped, low]
    assert relieve_low_ess([low], budget_cut=False, spread_checked=True) == [low]
    assert spread_measured(np.ones((MIN_POINTS, 4))) and not spread_measured(None)
    assert not spread_measured(np.ones((MIN_POINTS - 1, 4)))
