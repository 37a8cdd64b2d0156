"""Metropolis-adjusted HMC on potentials (``numeric.potential.hmc``) against closed forms and
quadrature."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from numeric import DivergenceError, InvalidInputError, expected_llc, hmc_llc_potential


def test_gaussian_target_has_its_closed_form() -> None:
    """K = w², U = nβ·w² + w²/2: nβ·E[w²] = nβ/(2nβ + 1)."""
    n = 1000
    ref = hmc_llc_potential(
        lambda w: w[..., 0] ** 2, torch.zeros(1, dtype=torch.float64), n, num_draws=400, seed=0
    )
    nbeta = n / math.log(n)
    exact = nbeta / (2 * nbeta + 1)
    assert ref.nbeta == pytest.approx(nbeta)
    assert abs(ref.mean - exact) < 3.5 * ref.stderr
    assert ref.stderr < 0.06 * exact  # precise enough that the comparison can fail
    assert 0.5 < ref.acceptance < 1.0
    assert ref.trace.shape == (8, 400) and ref.per_chain.shape == (8,)


def test_positions_that_do_not_mix_are_named_the_loss_trace_does_not_see() -> None:
    """K = w₁² in two dimensions: w₂ is held by γ alone. With τ = π/2 (the default) both
    coordinates decorrelate each iteration; with τ = 0.05 w₂ barely moves between iterations,
    while the loss (w₁ only) still mixes. Info, not an error: λ̂ does not depend on w₂, and
    it is right (nβ/(2nβ + 1)); the calibration battery found such coordinate-mixing errors
    only on correct estimates (``numeric.findings.slow_mixing.check_slow_mixing``)."""
    K = lambda w: w[..., 0] ** 2  # noqa: E731
    w0 = torch.zeros(2, dtype=torch.float64)
    good = hmc_llc_potential(K, w0, 1000, num_draws=300, seed=0)
    assert good.position_ess > 400 and not any(f.code == "slow_mixing" for f in good.diagnostics)
    short = hmc_llc_potential(K, w0, 1000, num_draws=300, trajectory=0.05, seed=0)
    assert short.ess > 400 and short.position_ess < 50
    (slow,) = [f for f in short.diagnostics if f.code == "slow_mixing"]
    assert slow.severity == "info" and "positions" in slow.message
    nbeta = 1000 / math.log(1000)
    assert abs(short.mean - nbeta / (2 * nbeta + 1)) < 4 * short.stderr


@pytest.mark.parametrize("seed", [0, 1])
def test_singular_potential_matches_quadrature(seed: int) -> None:
    """K = w1²w2² at the origin (λ = 1/2, m = 2): the same target by 2-D quadrature."""

    def K(w: torch.Tensor) -> torch.Tensor:
        return w[..., 0] ** 2 * w[..., 1] ** 2

    ref = hmc_llc_potential(
        K, torch.zeros(2, dtype=torch.float64), 1000, num_chains=16, num_draws=500, seed=seed
    )
    exact = expected_llc(K, [0.0, 0.0], nbeta=ref.nbeta, gamma=1.0)
    assert abs(ref.mean - exact.value) < 3.5 * ref.stderr + exact.abserr
    assert ref.stderr < 0.05 * exact.value
    assert ref.rhat < 1.05


def test_the_seed_fixes_every_draw() -> None:
    def K(w: torch.Tensor) -> torch.Tensor:
        return (w**2).sum(-1)

    w0 = torch.zeros(3, dtype=torch.float64)
    a = hmc_llc_potential(K, w0, 500, num_draws=20, num_burnin=10, seed=4)
    b = hmc_llc_potential(K, w0, 500, num_draws=20, num_burnin=10, seed=4)
    c = hmc_llc_potential(K, w0, 500, num_draws=20, num_burnin=10, seed=5)
    assert np.array_equal(a.trace, b.trace) and a.step_size == b.step_size
    assert not np.array_equal(a.trace, c.trace)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"gamma": 0.0}, "gamma"),
        ({"gamma": math.inf}, "gamma"),
        ({"num_chains": 1}, "num_chains"),
        ({"num_draws": 2}, "num_draws"),
        ({"num_burnin": -1}, "num_burnin"),
        ({"step_size": 0.0}, "step_size"),
        ({"trajectory": math.nan}, "trajectory"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        hmc_llc_potential(lambda w: (w**2).sum(-1), torch.zeros(2), 100, **kwargs)


def test_points_and_potentials_are_checked() -> None:
    def K(w: torch.Tensor) -> torch.Tensor:
        return (w**2).sum(-1)

    # w* as a list is a vector, as for estimate_llc_potential
    listed = hmc_llc_potential(K, [0.0, 0.0], 100, num_draws=8, num_burnin=2)
    tensor = hmc_llc_potential(K, torch.zeros(2), 100, num_draws=8, num_burnin=2)
    assert np.array_equal(listed.trace, tensor.trace)
    with pytest.raises(InvalidInputError, match="1-D"):
        hmc_llc_potential(K, torch.zeros(2, 2), 100)
    with pytest.raises(InvalidInputError, match="not finite"):
        hmc_llc_potential(K, [0.0, math.nan], 100)
    with pytest.raises(InvalidInputError, match="not finite"):
        hmc_llc_potential(lambda w: K(w) / 0.0, [0.0, 0.0], 100)
    with pytest.raises(InvalidInputError, match="shape"):
        hmc_llc_potential(lambda w: w, [0.0, 0.0], 100)


def _w8(w: torch.Tensor) -> torch.Tensor:
    return w[..., 0] ** 8


def test_a_wall_of_high_curvature_is_sampled_without_bias() -> None:
    """K = w⁸: nβ·K is very skewed and the leapfrog is unstable at the walls |w| ≈ 0.6. With the
    earlier adaptation (multiplicative, towards 0.75) 5 of 22 seeds lay beyond 3 standard errors
    of quadrature (one at −7.2) with no finding. Now no seed is beyond 3.5 without the
    ``divergent`` finding that says it may be biased low, none beyond 6, and the seeds' mean z is
    within 1.5. (On the machine that set this test every seed of 0–7 was within 3.5; on another
    processor, whose kernels round differently, the same seeds read z = −0.79, −3.59, +1.57,
    −2.03, −1.07, +1.25, −4.91, +0.93, mean −0.8, each with 0.8–3.1% divergent trajectories and
    the finding.)"""
    n = 1000
    exact = expected_llc(_w8, [0.0], nbeta=n / math.log(n), gamma=1.0)
    zs = []
    for seed in range(8):
        ref = hmc_llc_potential(_w8, [0.0], n, seed=seed)
        z = (ref.mean - exact.value) / ref.stderr
        zs.append(z)
        assert ref.target_acceptance == 0.95
        if abs(z) >= 3.5:
            assert "divergent" in [f.code for f in ref.diagnostics], (seed, z)
    assert max(abs(z) for z in zs) < 6, zs
    assert abs(float(np.mean(zs))) < 1.5, zs  # no systematic bias either


def test_divergent_trajectories_are_reported() -> None:
    """At a low target acceptance ε is too large for the walls: the energy error explodes on a
    share of the trajectories, which the finding reports (an error from 5%) and says what to do;
    a Gaussian target has none."""
    low = hmc_llc_potential(_w8, [0.0], 1000, seed=1, target_acceptance=0.6)
    codes = {f.code: f for f in low.diagnostics}
    assert low.divergent >= 0.05 and codes["divergent"].severity == "error"
    assert "target_acceptance" in codes["divergent"].message
    assert "divergent" in str(low) and str(low).startswith("λ_β = ")
    gauss = hmc_llc_potential(lambda w: w[..., 0] ** 2, [0.0], 1000, seed=1)
    assert gauss.divergent == 0.0 and not gauss.diagnostics


def test_trajectories_leaving_where_k_is_finite_end_in_a_clear_error() -> None:
    """K finite only within 10⁻³ of w*: every trajectory of length τ ≈ 1.6 leaves it, so ε kept
    shrinking and each iteration ran up to 10⁵ leapfrog steps (hours). Now an error, at once."""

    def K(w: torch.Tensor) -> torch.Tensor:
        r2 = w.square().sum(-1)
        return torch.where(r2 < 1e-6, r2, torch.full_like(r2, math.nan))

    with pytest.raises(DivergenceError, match=r"NaN or inf.*shorter `trajectory`"):
        hmc_llc_potential(K, [0.0, 0.0], 1000, seed=0)


def test_target_acceptance_is_checked() -> None:
    for bad in (0.0, 1.0, 1.5, math.nan):
        with pytest.raises(InvalidInputError, match="target_acceptance"):
            hmc_llc_potential(lambda w: w[..., 0] ** 2, [0.0], 100, target_acceptance=bad)
