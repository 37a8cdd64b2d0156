"""The step-size check (numeric.draws.step_check): λ̂ again at ε/2 and the extrapolation to ε → 0.

The analytic case: a linear regression with the Hessian preconditioner M = (nβH + γ)⁻¹, full-batch
gradients and the Euler integrator w' = w − (ε/2)·M∇U + √ε·M^{1/2}ξ. In the preconditioned
coordinates U is ½‖z‖², each coordinate an AR(1) with coefficient 1 − ε/2, so its stationary
variance is 1/(1 − ε/4) and nβ·E[L − L(w*)] = Λ/(1 − ε/4), Λ = ½Σ nβh/(nβh + γ) (the Laplace
value, exact here). At ε = 1: λ̂(ε) = (4/3)·Λ, λ̂(ε/2) = (8/7)·Λ, and the extrapolation
2λ̂(ε/2) − λ̂(ε) = (20/21)·Λ (what is left is second order).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import numeric
from numeric.draws.step_check import MIN_DRAWS, MIN_RELAX, SIGNIFICANT, check_bias, check_lengths
from numeric.stats.chain_stats import chain_stats
from numeric.types import CheckDraws, Trace

# One worker under pytest-xdist, so the module-scoped estimate is computed once.
pytestmark = pytest.mark.xdist_group("step_check")


def _linear(n: int = 4000, d: int = 6, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = x @ torch.randn(d, generator=g, dtype=torch.float64) + torch.randn(
        n, generator=g, dtype=torch.float64
    )
    m = numeric.GaussianLinear(x, y)
    return m, {"w": m.minimiser()}


def _euler(step_size: float, step_check: bool = True, seed: int = 0) -> numeric.LLCEstimate:
    m, w = _linear()
    return numeric.estimate_llc(
        m.loss_fn,
        w,
        m.data,
        integrator="euler",
        preconditioner="hessian",
        step_size=step_size,
        batch_size=m.data[0].shape[0],
        num_chains=8,
        num_burnin=200,
        num_draws=4000,
        seed=seed,
        step_check=step_check,
    )


@pytest.fixture(scope="module")
def euler_one() -> numeric.LLCEstimate:
    return _euler(1.0)


def test_euler_bias_is_found_and_extrapolated_away(euler_one: numeric.LLCEstimate) -> None:
    est = euler_one
    lam = est.config.laplace_llc
    c = est.step_check
    assert c is not None and c.applied
    assert abs(c.llc_at_step - 4 / 3 * lam) < 4 * c.stderr_at_step
    assert abs(c.llc_at_half_step - 8 / 7 * lam) < 4 * c.stderr_at_half_step
    assert abs(c.bias - 8 / 21 * lam) < 4 * c.bias_stderr  # 2·(4/3 − 8/7)·Λ
    # the estimate is the extrapolation, (20/21)·Λ up to its error
    assert est.mean == c.extrapolated and est.stderr == c.extrapolated_stderr
    assert abs(est.mean - 20 / 21 * lam) < 4 * est.stderr
    assert abs(est.mean - lam) < 0.1 * lam  # against +33% at ε = 1
    np.testing.assert_allclose(est.per_chain.mean(), est.mean)
    codes = [f.code for f in est.diagnostics]
    assert "step_size_bias" in codes
    found = next(f for f in est.diagnostics if f.code == "step_size_bias")
    assert found.severity == "warning" and "step_scale" in found.message


def test_check_leaves_the_run_at_eps_untouched() -> None:
    """The check runs after the draws: λ̂(ε), its traces and error are those of a run without it."""
    on, off = _euler(0.1), _euler(0.1, step_check=False)
    assert off.step_check is None
    c = on.step_check
    assert c is not None and c.llc_at_step == off.mean and c.stderr_at_step == off.stderr
    np.testing.assert_array_equal(on.loss_trace, off.loss_trace)
    if not c.applied:
        assert on.mean == off.mean and on.stderr == off.stderr
    # ε = 0.1: the bias is (1/(1 − 1/40) − 1)·Λ ≈ 2.6%·Λ, within the check's resolution
    lam = on.config.laplace_llc
    assert abs(c.bias - (1 / (1 - 0.025) - 1) * lam) < 4 * c.bias_stderr
    assert c.step_size == pytest.approx(0.1)


def test_small_step_is_not_corrected() -> None:
    """LM on a Gaussian target samples the configuration exactly: no bias to find."""
    m, w = _linear()
    est = numeric.estimate_llc(m.loss_fn, w, m.data, num_chains=4, seed=3, step_check=True)
    c = est.step_check
    assert c is not None and not c.applied
    assert abs(c.bias) < SIGNIFICANT * c.bias_stderr
    assert est.mean == c.llc_at_step
    assert "step_size_bias" not in [f.code for f in est.diagnostics]
    # stationary chains: λ̂ at ε after the check is where the run left it
    assert abs(c.trend) < SIGNIFICANT * c.trend_stderr
    assert abs(c.llc_after_check - c.llc_at_step) < 4 * c.stderr_after_check
    assert "drift_after_draws" not in [f.code for f in est.diagnostics]


def test_check_lengths() -> None:
    # τ = 4·1000/400 = 10 steps at ε: 80 steps of relaxation at ε/2, half the draws
    assert check_lengths(1000, 400.0, 4) == (80, 500)
    assert check_lengths(1000, 400.0, 4, efold=40.0) == (120, 500)  # 3 e-folds of the slowest
    assert check_lengths(1000, 400.0, 4, efold=math.inf) == (80, 500)  # no such direction
    assert check_lengths(1000, 4000.0, 4) == (MIN_RELAX, 500)  # short τ: the floor
    assert check_lengths(1000, 2.0, 4) == (250, 500)  # at most a quarter of the draws
    assert check_lengths(100, math.nan, 4) == (MIN_RELAX, MIN_DRAWS)


def _trace(values: np.ndarray) -> Trace:
    loss = torch.as_tensor(values)
    return Trace(loss, torch.zeros_like(loss))


def test_check_bias_arithmetic() -> None:
    """Per chain 2·λ̂_c(ε/2) − λ̂_c(ε); errors added in quadrature; applied from 3 se."""
    rng = np.random.default_rng(0)
    main_x = 1.0 + 0.01 * rng.standard_normal((4, 400))
    half_x = 0.8 + 0.01 * rng.standard_normal((4, 400))
    nbeta = 10.0
    main = chain_stats(main_x, nbeta)
    alive = np.ones(4, dtype=bool)
    check = CheckDraws(_trace(half_x), 60)
    res, stats, found = check_bias(main, check, alive, nbeta, 0.1)
    half = chain_stats(half_x, nbeta)
    assert res.applied and stats is not None and len(found) == 1
    assert res.num_relax == 60 and res.num_draws == 400 and res.step_size == 0.1
    assert res.bias == pytest.approx(2 * (main.mean - half.mean))
    assert res.bias_stderr == pytest.approx(2 * math.hypot(main.stderr, half.stderr))
    assert res.extrapolated == pytest.approx(2 * half.mean - main.mean)
    assert res.extrapolated_stderr == pytest.approx(math.hypot(2 * half.stderr, main.stderr))
    np.testing.assert_allclose(stats.per_chain, 2 * half.per_chain - main.per_chain)
    assert stats.mean == res.extrapolated and stats.stderr == res.extrapolated_stderr
    # a check whose second half sits lower than its first: the chains were still relaxing
    assert abs(res.drift) < SIGNIFICANT * res.drift_stderr  # (not here)
    assert "still moving" not in found[0].message
    relaxing = half_x.copy()
    relaxing[:, :200] += 0.05
    res3, _, found3 = check_bias(main, CheckDraws(_trace(relaxing), 60), alive,
                                 nbeta, 0.1)  # fmt: skip
    first = chain_stats(relaxing[:, :200], nbeta)
    second = chain_stats(relaxing[:, 200:], nbeta)
    assert res3.drift == pytest.approx(second.mean - first.mean)  # ≈ −0.5
    assert res3.drift_stderr == pytest.approx(math.hypot(first.stderr, second.stderr))
    assert res3.applied and "still moving" in found3[0].message
    # the same means: nothing to correct
    res2, stats2, found2 = check_bias(main, CheckDraws(_trace(main_x), 60), alive,
                                      nbeta, 0.1)  # fmt: skip
    assert not res2.applied and stats2 is None and found2 == ()
    assert res2.bias == 0.0


def test_bias_is_read_between_two_stretches_at_eps() -> None:
    """A linear drift in time cancels from b (the stretches at ε before and after the check are
    as far from the check's draws); with a drift ``drift_after_draws`` fires and no correction is
    applied; without one a step bias is corrected at the check's time."""
    rng = np.random.default_rng(2)
    nbeta, c, r = 10.0, 400, 100
    alive = np.ones(4, dtype=bool)

    def stretch(start: int, steps: int, slope: float, shift: float = 0.0) -> np.ndarray:
        t = np.arange(start, start + steps)
        return 1.0 + slope * t + shift + 0.01 * rng.standard_normal((4, steps))

    def check(slope: float, shift: float):
        main_x = stretch(-c, 2 * c, slope)  # the run: its last c draws start at t = 0
        check = CheckDraws(
            _trace(stretch(c + r, c, slope, shift)),  # at ε/2, λ̂ lower by nβ·|shift|
            r,
            _trace(main_x[:, c:]),
            _trace(stretch(2 * (c + r), c, slope)),
        )
        main = chain_stats(main_x, nbeta)
        return main, *check_bias(main, check, alive, nbeta, 0.1)

    for shift, bias in ((0.0, 0.0), (-0.1, 2.0)):  # the loss rises by 1e-4 per step
        main, res, stats, found = check(1e-4, shift)
        assert abs(res.bias - bias) < 3 * res.bias_stderr and res.bias_stderr < 0.2
        # λ̂ at ε rose by nβ·slope·2(r + c) = 1.0 from the run's end to after the check
        assert res.trend == pytest.approx(nbeta * 1e-4 * 2 * (c + r), abs=3 * res.trend_stderr)
        assert not res.applied and stats is None
        codes = [f.code for f in found]
        assert codes == ["drift_after_draws"]
        assert found[0].severity == "error"  # the trend, 1.0, is 10% of λ̂ ≈ 10
        assert ("was not applied" in found[0].message) == (bias != 0.0)
    # the run's λ̂(ε) against λ̂(ε/2) alone reads the drift as a step bias of the wrong sign
    assert 2 * (main.mean - chain_stats(stretch(c + r, c, 1e-4), nbeta).mean) < -1.0

    main, res, stats, found = check(0.0, -0.1)  # no drift: the bias is corrected
    assert res.applied and stats is not None and stats.mean == res.extrapolated
    assert [f.code for f in found] == ["step_size_bias"]
    assert abs(res.trend) < SIGNIFICANT * res.trend_stderr
    assert abs(res.bias - 2.0) < 3 * res.bias_stderr
    assert abs(res.extrapolated - (nbeta - 2.0)) < 3 * res.extrapolated_stderr
    assert res.llc_after_check == pytest.approx(nbeta, abs=0.05)


@pytest.mark.parametrize(("shift", "severity"), [(0.0, None), (0.03, "warning"),
                                               (0.08, "error"), (-0.08, "error")])  # fmt: skip
def test_drift_after_draws_severity(shift: float, severity: str | None) -> None:
    """λ̂ at ε after the check off by ``shift``·λ̂ from the run's last draws (σ tiny: always
    significant when nonzero): a warning up to ``UNSETTLED`` = 5% of λ̂, an error beyond, which
    says on which side the equilibrium value likely lies."""
    rng = np.random.default_rng(3)
    nbeta, alive = 10.0, np.ones(4, dtype=bool)

    def x(level: float) -> np.ndarray:
        return level + 1e-3 * rng.standard_normal((4, 400))

    main = chain_stats(x(1.0), nbeta)
    check = CheckDraws(_trace(x(1.0)), 50, _trace(x(1.0)), _trace(x(1.0 + shift)))
    res, _, found = check_bias(main, check, alive, nbeta, 0.1)
    assert res.trend == pytest.approx(nbeta * shift, abs=0.01)
    drift = [f for f in found if f.code == "drift_after_draws"]
    assert [f.severity for f in drift] == ([severity] if severity else [])
    if severity == "error":
        side = "above" if shift > 0 else "below"
        assert f"likely lies {side} it" in drift[0].message and "5% of λ̂" in drift[0].message
    elif severity == "warning":
        assert "cannot be used" not in drift[0].message


def test_option_is_validated() -> None:
    m, w = _linear(200, 2)
    with pytest.raises(numeric.InvalidInputError, match="step_check"):
        numeric.estimate_llc(m.loss_fn, w, m.data, step_check="yes")  # type: ignore[arg-type]


def test_to_dict_and_str_carry_the_check(euler_one: numeric.LLCEstimate) -> None:
    assert "the LLC above is the extrapolation to ε → 0" in str(euler_one)
    d = euler_one.to_dict()
    assert d["step_check"]["applied"] is True
    assert d["step_check"]["extrapolated"] == euler_one.mean


def test_relaxing_rule() -> None:
    """The check is extended while its λ̂ moves, half to half, away from λ̂(ε)."""
    from numeric.draws.step_check import _relaxing

    rng = np.random.default_rng(1)
    flat = 0.8 + 0.01 * rng.standard_normal((4, 400))
    alive = np.ones(4, dtype=bool)
    falling = flat.copy()
    falling[:, :200] += 0.05  # first half nearer λ̂(ε) = 1.0
    rising = flat.copy()
    rising[:, 200:] += 0.05  # moving back towards λ̂(ε): not relaxation from ε
    assert _relaxing(_trace(falling), alive, 1.0)
    assert not _relaxing(_trace(flat), alive, 1.0)
    assert not _relaxing(_trace(rising), alive, 1.0)
    assert not _relaxing(_trace(falling), np.array([True, True, True, True]), 0.5)  # λ̂(ε) below
