"""Temperature sweep, Hessian measures, plotting, and the slow checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import numeric
from numeric.hessian.measures import hessian_top_eigenvalues, hessian_trace
from numeric.potential.reference import GaussianLinear, expected_llc
from numeric.series.sweep import regress, temperature_sweep


def _fake(mean: float, stderr: float) -> numeric.LLCEstimate:
    est = numeric.estimate_llc_potential(
        lambda w: w[..., 0] ** 2,
        [0.0],
        100,
        num_chains=2,
        num_draws=10,
        num_burnin=0,
        step_size=1e-3,
    )
    return type(est)(**{**est.__dict__, "mean": mean, "stderr": stderr})


def test_regression_recovers_a_line() -> None:
    nb = [1e2, 1e3, 1e4, 1e5]
    ests = [_fake(0.5 - 1.0 / math.log(x), 0.01) for x in nb]
    r = regress(nb, ests)
    assert r.intercept == pytest.approx(0.5, abs=1e-9)
    assert r.slope == pytest.approx(-1.0, abs=1e-9)
    assert 0 < r.intercept_stderr < 1


def test_a_sweep_names_the_estimates_that_carry_errors() -> None:
    nb = [1e2, 1e3]
    ests = [_fake(0.4, 0.01), _fake(0.45, 0.01)]
    bad = numeric.Finding("slow_mixing", "error", "the chains have not mixed", {})
    ests = [type(e)(**{**e.__dict__, "diagnostics": d}) for e, d in zip(ests, [(), (bad,)])]
    r = regress(nb, ests)
    assert r.errors == ((1e3, bad),)
    text = str(r)
    assert "nβ = 1000: λ̂ = 0.45" in text and "errors: slow_mixing" in text
    assert text.count("errors:") == 1 and text.startswith("λ (intercept) = ")


def test_sweep_on_a_regular_potential() -> None:
    r = temperature_sweep(
        numeric.estimate_llc_potential,
        lambda w: w[..., 0] ** 4,
        [0.0],
        10_000,
        nbetas=[1e2, 1e3, 1e4],
        num_chains=8,
        gamma=0.1,
        seed=0,
    )
    assert abs(r.intercept - 0.25) < 4 * r.intercept_stderr  # m = 1: slope ≈ 0
    assert abs(r.slope) < 4 * r.slope_stderr + 0.05
    with pytest.raises(numeric.InvalidInputError):
        temperature_sweep(
            numeric.estimate_llc_potential, lambda w: w[..., 0] ** 4, [0.0], 100, nbetas=[10.0]
        )


def test_hessian_trace_and_top_eigenvalues_on_linear_model() -> None:
    g = torch.Generator().manual_seed(0)
    X = torch.randn(3000, 4, generator=g, dtype=torch.float64) * torch.tensor(
        [1.0, 2.0, 3.0, 0.5], dtype=torch.float64
    )
    m = GaussianLinear(X, torch.randn(3000, generator=g, dtype=torch.float64))
    w = {"w": torch.zeros(4, dtype=torch.float64)}
    H = X.T @ X / 3000
    tr = hessian_trace(m.loss_fn, w, m.data, num_samples=200, seed=1)
    assert abs(tr.mean - float(torch.trace(H))) < 4 * tr.stderr
    ev = hessian_top_eigenvalues(m.loss_fn, w, m.data, k=2)
    assert ev == pytest.approx(torch.linalg.eigvalsh(H).flip(0)[:2].numpy(), rel=1e-6)
    # a potential: a function of a tensor alone
    ev = hessian_top_eigenvalues(lambda v: (torch.tensor([1.0, 5.0]) * v**2).sum(), torch.zeros(2))
    assert ev[0] == pytest.approx(10.0)


def test_trace_plot() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from numeric.result.plots import plot_trace

    est = numeric.estimate_llc_potential(
        lambda w: w[..., 0] ** 2, [0.0], 1000, num_chains=3, num_draws=50, num_burnin=10, seed=0
    )
    fig = plot_trace(est)
    assert len(fig.axes) == 2


def test_slow_position_mixing_is_flagged() -> None:
    """Plain MALA (metric=False) on K = w1²w2² and w1²w2⁴ at 0: the loss trace mixes (ESS in the
    hundreds to thousands) while the chains creep along the flat axes (ESS of (w_i − w*_i)² about 10–200 in
    2,000 draws), and single runs are off by up to 4.6 standard errors: every run must say so.
    K = w² mixes in every coordinate: no finding."""
    n = 10_000

    def plain(K, seed: int) -> numeric.LLCEstimate:
        return numeric.estimate_llc_potential(
            K, [0.0, 0.0], n, num_chains=8, seed=seed, metric=False, num_draws=2000
        )

    crossing = [plain(lambda w: w[..., 0] ** 2 * w[..., 1] ** 2, s) for s in (9, 10)]
    crossing.append(plain(lambda w: w[..., 0] ** 2 * w[..., 1] ** 4, 11))
    # the loss trace alone looks healthy: ESS in the hundreds to thousands, far above the
    # positions'. Per run that is a draw of the processor's (the chains part at the last bit:
    # seed 10 read 546 on one machine and over 1,000 on another), and over seeds 0–29 of either
    # K the loss ESS ran from 72 to 6,373 and its ratio to the positions' from 4.1 to 324: a
    # bound per run (ESS > 400 and 10× the positions') failed one in four triples of runs. So
    # each run is held to 2× (half the smallest ratio seen) and the three together to a summed
    # ESS above 1,200 and 10× the positions' (resampled triples of those 60 runs: 0.14% fail).
    assert all(est.ess > 2 * est.slow_ess for est in crossing)
    total, slow = sum(est.ess for est in crossing), sum(est.slow_ess for est in crossing)
    assert total > 1200 and total > 10 * slow, [(est.ess, est.slow_ess) for est in crossing]
    for est in crossing:
        assert est.slow_ess < 200 or est.slow_rhat > 1.01
        (f,) = [f for f in est.diagnostics if f.code == "slow_mixing"]
        assert f.values["ess"] == est.slow_ess
        assert "coordinates of w" in f.message
        (creep,) = [f for f in est.diagnostics if f.code == "plain_mala_creeps"]
        assert "metric=None" in creep.message
    regular = numeric.estimate_llc_potential(lambda w: w[..., 0] ** 2, [0.0], n, num_chains=8)
    assert regular.slow_ess > 1000 and regular.slow_rhat < 1.01
    assert not [f for f in regular.diagnostics if f.code in ("slow_mixing", "plain_mala_creeps")]


def test_creeping_beyond_the_default_metric_size_is_a_warning() -> None:
    """d = 9 > 8: position-dependent steps are off by default, so a pilot that sees plain MALA
    creeping (K = w1²w2² + Σ w_j², j ≥ 3) must say so and name the way out (metric=True); with
    metric=True they run and the warning is gone."""

    def K(w):
        return w[..., 0] ** 2 * w[..., 1] ** 2 + w[..., 2:].square().sum(-1)

    def run(**kw) -> numeric.LLCEstimate:
        return numeric.estimate_llc_potential(K, [0.0] * 9, 10_000, num_draws=300, seed=0, **kw)

    off = run()
    assert off.config.preconditioner == "none"
    (creep,) = [f for f in off.diagnostics if f.code == "plain_mala_creeps"]
    assert creep.severity == "warning" and "metric=True" in creep.message
    on = run(metric=True)
    assert on.config.preconditioner == "position_dependent"
    assert not [f for f in on.diagnostics if f.code == "plain_mala_creeps"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "K", "w_star"),
    [
        ("w^4", lambda w: w[..., 0] ** 4, [0.0]),
        ("w1^2 w2^2", lambda w: w[..., 0] ** 2 * w[..., 1] ** 2, [0.0, 0.0]),
        ("w1^2 w2^4", lambda w: w[..., 0] ** 2 * w[..., 1] ** 4, [0.0, 0.0]),
    ],
)
def test_error_bars_are_calibrated(name: str, K, w_star: list[float]) -> None:
    """Over 12 seeds the z-scores against expected_llc have mean ≈ 0 and sd ≈ 1."""
    n = 10_000
    ref = expected_llc(K, w_star, nbeta=n / math.log(n), gamma=1.0).value
    z = np.array(
        [
            (e.mean - ref) / e.stderr
            for e in (
                numeric.estimate_llc_potential(K, w_star, n, num_chains=8, seed=s)
                for s in range(12)
            )
        ]
    )
    assert abs(z.mean()) < 3 / math.sqrt(12) + 0.3, (name, z)
    assert 0.4 < z.std() < 1.8, (name, z)


@pytest.mark.slow
def test_linear_regression_ten_parameters() -> None:
    g = torch.Generator().manual_seed(1)
    X = torch.randn(10_000, 10, generator=g)
    m = GaussianLinear(X, X @ torch.randn(10, generator=g) + torch.randn(10_000, generator=g))
    w_hat = m.minimiser()
    est = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, num_chains=8, seed=0)
    ref = expected_llc(m, w_hat, nbeta=est.nbeta, gamma=1.0).value
    assert est.ess >= 100
    assert abs(est.mean - 5.0) < 4 * est.stderr and abs(est.mean - ref) < 4 * est.stderr
