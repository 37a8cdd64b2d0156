"""The ``off_centre`` finding (``numeric.findings.off_centre``): chains that settle around a point
other than w*.

The statistic is checked against pairwise inner products and a leave-one-chain-out jackknife
written out by loops; its noise cancels where the chains' own scatter is large; the finding fires
on the quadratic network f = v·(wᵀx)² at w = 0, v = 1 (λ = 3/4), whose zero set w = 0 leads to
the more singular v = 0 (λ = 1/2), at γ = 1 and not at γ = 100, and stays silent on potentials
even about w*."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import numeric
from numeric.findings.off_centre import CentreSum, centre_offset, check_off_centre

ALIVE4 = np.ones(4, dtype=bool)


def _by_loops(mu: np.ndarray) -> tuple[float, float]:
    """T as the mean of ⟨μ_c, μ_c'⟩ over ordered pairs c ≠ c', and its jackknife error."""
    c = mu.shape[0]

    def pairs_mean(rows: list[int]) -> float:
        values = [float(mu[a] @ mu[b]) for a, b in itertools.permutations(rows, 2)]
        return sum(values) / len(values)

    t = pairs_mean(list(range(c)))
    loo = [pairs_mean([k for k in range(c) if k != j]) for j in range(c)]
    mean = sum(loo) / c
    return t, math.sqrt((c - 1) / c * sum((v - mean) ** 2 for v in loo))


@pytest.mark.parametrize("chains", [3, 4, 7])
def test_centre_offset_is_the_pairs_mean_and_its_jackknife(chains: int) -> None:
    rng = np.random.default_rng(chains)
    mu = rng.normal(size=(chains, 5)) + np.array([0.3, -1.0, 0.0, 2.0, 0.5])
    t, s = centre_offset(mu)
    t_loop, s_loop = _by_loops(mu)
    assert t == pytest.approx(t_loop, rel=1e-12)
    assert s == pytest.approx(s_loop, rel=1e-10)


def test_centre_offset_cancels_the_chains_own_scatter() -> None:
    """Means of 4 chains scattered by N(0, 1) in each of 10⁴ directions: ‖μ̄‖² ≈ D/C = 2,500,
    T within a few errors of 0; with the same scatter around a centre one unit away, T ≈ 1."""
    rng = np.random.default_rng(0)
    d = 10_000
    noise = rng.normal(size=(4, d)) * 0.01
    t0, s0 = centre_offset(noise)
    assert float(np.square(noise.mean(0)).sum()) > 0.2  # the naive estimate: D/C·10⁻⁴ = 0.25
    assert abs(t0) < 4 * s0 and abs(t0) < 0.01
    shift = np.zeros(d)
    shift[7] = 1.0
    t1, s1 = centre_offset(noise + shift)
    assert t1 == pytest.approx(1.0, abs=0.05) and t1 / s1 > 10


def test_centre_offset_below_three_chains() -> None:
    t, s = centre_offset(np.array([[1.0, 0.0], [3.0, 0.0]]))
    assert t == 3.0 and math.isnan(s)
    t, s = centre_offset(np.array([[1.0, 0.0]]))
    assert math.isnan(t) and math.isnan(s)


def _means(shift: float, d: int = 3, chains: int = 4, scatter: float = 0.01) -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    m = scatter * torch.randn(chains, d, generator=g, dtype=torch.float64)
    m[:, 0] += shift
    return m


def test_off_centre_fires_from_half_a_localisation_length() -> None:
    w_star = torch.zeros(3, dtype=torch.float64)
    (f,) = check_off_centre(_means(0.2), ALIVE4, w_star, gamma=25.0, prior=0.0)
    assert f.code == "off_centre" and f.severity == "warning"
    assert f.values["lengths"] == pytest.approx(1.0, abs=0.02)  # 0.2 · √25
    assert f.values["distance"] == pytest.approx(0.2, abs=0.004)
    assert f.values["scale"] == pytest.approx(0.2)
    assert "gamma = 250 and 2500" in f.message
    assert check_off_centre(_means(0.08), ALIVE4, w_star, gamma=25.0, prior=0.0) == ()  # 0.4


def test_off_centre_needs_significance_and_chains() -> None:
    w_star = torch.zeros(3, dtype=torch.float64)
    noisy = _means(1.0, scatter=2.0)  # centre 1 away, chains scattered by 2 in each direction
    t, s = centre_offset(noisy.numpy())
    assert t / s < 3
    assert check_off_centre(noisy, ALIVE4, w_star, gamma=1.0, prior=0.0) == ()
    two = np.array([True, True, False, False])
    assert check_off_centre(_means(5.0), two, w_star, gamma=1.0, prior=0.0) == ()
    assert check_off_centre(None, ALIVE4, w_star, gamma=1.0, prior=0.0) == ()
    assert check_off_centre(_means(5.0), ALIVE4, w_star, gamma=0.0, prior=0.0) == ()


def test_off_centre_reads_the_live_chains_only() -> None:
    w_star = torch.zeros(3, dtype=torch.float64)
    m = _means(0.0, chains=5)
    m[4] = float("nan")  # a diverged chain's mean
    m[4, 0] = 1e6
    alive = np.array([True, True, True, True, False])
    assert check_off_centre(m, alive, w_star, gamma=1.0, prior=0.0) == ()
    m[:4, 0] += 2.0
    (f,) = check_off_centre(m, alive, w_star, gamma=1.0, prior=0.0)
    assert f.values["lengths"] == pytest.approx(2.0, abs=0.03)


def test_off_centre_takes_off_the_priors_pull() -> None:
    """With a prior α‖w‖²/2 the flat directions' centre is γ/(γ + α)·w*: a shift of α‖w*‖/(γ + α)
    toward 0 is the prior's, not a finding; beyond it the finding counts the rest."""
    w_star = torch.tensor([3.0, 0.0, 0.0], dtype=torch.float64)
    pull = 1.0 * 3.0 / 2.0  # α = γ = 1
    m = _means(-pull)
    assert check_off_centre(m, ALIVE4, w_star, gamma=1.0, prior=1.0) == ()
    (f,) = check_off_centre(_means(-pull - 1.0), ALIVE4, w_star, gamma=1.0, prior=1.0)
    assert f.values["lengths"] == pytest.approx(math.sqrt(2.0), abs=0.03)  # 1 · √(γ + α)
    assert "prior's pull" in f.message


def test_centre_sum_is_the_mean_offset() -> None:
    w_star = torch.tensor([1.0, -1.0], dtype=torch.float64)
    acc = CentreSum()
    assert acc.mean() is None
    first = torch.tensor([[2.0, -1.0], [1.0, 0.0]], dtype=torch.float64) - w_star
    acc.add(first)
    acc.add(torch.tensor([[0.0, -1.0], [1.0, 2.0]], dtype=torch.float64) - w_star)
    assert torch.equal(acc.mean(), torch.tensor([[0.0, 0.0], [0.0, 2.0]], dtype=torch.float64))
    assert torch.equal(first, torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64))


def _quadratic_network(w: torch.Tensor) -> torch.Tensor:
    """K = E[(v·(wᵀx)²)²] = 3v²‖w‖⁴ for x ~ N(0, I₃): λ = 3/4 at w = 0, v = 1; 1/2 at v = 0."""
    return 3 * w[..., 3] ** 2 * w[..., :3].square().sum(-1) ** 2


W0 = torch.tensor([0.0, 0.0, 0.0, 1.0], dtype=torch.float64)


def test_quadratic_network_at_gamma_one_is_off_centre() -> None:
    est = numeric.estimate_llc_potential(
        _quadratic_network, W0, 10_000, gamma=1.0, seed=0, num_burnin=500, num_draws=1000
    )
    (f,) = [f for f in est.diagnostics if f.code == "off_centre"]
    assert 0.7 < f.values["distance"] < 1.1  # v went from 1 to near 0
    assert f.values["z"] > 3
    assert est.mean < 0.6  # λ̂ reads v = 0's 1/2, not w*'s 3/4


def test_quadratic_network_at_gamma_hundred_stays() -> None:
    est = numeric.estimate_llc_potential(
        _quadratic_network, W0, 10_000, gamma=100.0, seed=0, num_burnin=500, num_draws=1000
    )
    assert "off_centre" not in [f.code for f in est.diagnostics]


@pytest.mark.parametrize(
    "K",
    [
        lambda w: w[..., 0] ** 2 * w[..., 1] ** 4,  # x²y⁴ at the origin
        lambda w: w.square().sum(-1),  # regular
        lambda w: (w[..., 0] * w[..., 1] - w[..., 2] ** 2) ** 2,  # the cone, even about 0
    ],
)
def test_potentials_even_about_w_star_stay_centred(K) -> None:
    est = numeric.estimate_llc_potential(
        K, torch.zeros(3, dtype=torch.float64), 10_000, seed=0, num_burnin=500, num_draws=1000
    )
    assert "off_centre" not in [f.code for f in est.diagnostics]


def _regression() -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1000, 2, generator=g, dtype=torch.float64)
    w_min = torch.tensor([0.5, -1.0], dtype=torch.float64)
    return (x, x @ w_min), w_min


def _squared_error(p: dict[str, torch.Tensor], batch) -> torch.Tensor:
    x, y = batch
    return 0.5 * (x @ p["w"] - y).square().mean()


def test_data_estimate_off_its_minimum_is_off_centre_by_the_gaussian_shift() -> None:
    """Least squares at w* = w_min + δ: the localised posterior is Gaussian with mean
    w* − (nβH + γ)⁻¹·nβH·δ (H = XᵀX/n), so the chains' centre lies that far from w*."""
    data, w_min = _regression()
    delta = torch.tensor([0.2, 0.0], dtype=torch.float64)
    gamma = 100.0
    est = numeric.estimate_llc(_squared_error, {"w": w_min + delta}, data, gamma=gamma, seed=0)
    x = data[0]
    h = x.T @ x / x.shape[0]
    shift = torch.linalg.solve(
        est.nbeta * h + gamma * torch.eye(2, dtype=h.dtype), est.nbeta * h @ delta
    )
    (f,) = [f for f in est.diagnostics if f.code == "off_centre"]
    assert f.values["distance"] == pytest.approx(float(shift.norm()), rel=0.05)
    assert f.values["lengths"] == pytest.approx(float(shift.norm()) * math.sqrt(gamma), rel=0.05)
    assert "gradient_at_w_star" in [f.code for f in est.diagnostics]


def test_data_estimate_at_its_minimum_stays_centred() -> None:
    data, w_min = _regression()
    est = numeric.estimate_llc(_squared_error, {"w": w_min}, data, gamma=1.0, seed=0)
    assert "off_centre" not in [f.code for f in est.diagnostics]
    assert abs(est.mean - 1.0) < 4 * est.stderr and est.stderr <= 0.1  # d/2 with nβh ≫ γ


def test_hmc_reference_reads_the_same_centre() -> None:
    """HMC (``hmc_llc_potential``) on the quadratic network at γ = 4: its chains go to v ≈ 0
    too (0.5 localisation lengths would be a centre 0.25 from w*; they are about 1 away)."""
    ref = numeric.hmc_llc_potential(
        _quadratic_network, W0, 10_000, gamma=4.0, seed=0, num_burnin=50, num_draws=50
    )
    (f,) = [f for f in ref.diagnostics if f.code == "off_centre"]
    assert 0.7 < f.values["distance"] < 1.1 and f.values["lengths"] > 1.4
