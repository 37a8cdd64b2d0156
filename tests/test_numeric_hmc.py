"""Metropolis-adjusted HMC on potentials (``numeric.hmc``) against closed forms and quadrature."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from numeric import InvalidInputError, expected_llc, hmc_llc_potential


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
