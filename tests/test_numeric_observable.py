"""λ̂'s observable with the minibatch's linear term regressed out (``numeric.stats.observable``):
the coefficient, the divergence check that reads both observables, and a least-squares fit whose
minibatch estimate at nβ ≫ n matches its full-data one."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import numeric
from numeric.errors import DivergenceError
from numeric.sampler.chains import check_block
from numeric.stats.observable import linear_coefficient, observable
from numeric.types import Trace, Tuning


def test_the_coefficient_recovers_a_known_regression_slope() -> None:
    """d = 0.3 + 1.7·ℓ + e with e independent of ℓ: ĉ = 1.7 within its sampling error
    (sd(e)/(sd(ℓ)·√N) = 0.5/(2·√4000) ≈ 0.004)."""
    rng = np.random.default_rng(0)
    ell = rng.normal(0.0, 2.0, (4, 1000))
    d = 0.3 + 1.7 * ell + rng.normal(0.0, 0.5, (4, 1000))
    assert linear_coefficient(d, ell) == pytest.approx(1.7, abs=0.02)
    assert linear_coefficient(d, np.zeros_like(ell)) == 0.0
    assert linear_coefficient(d, np.full_like(ell, np.inf)) == 0.0
    with pytest.raises(ValueError, match="differ in shape"):
        linear_coefficient(d, ell[:, :10])


@pytest.mark.parametrize("scale", [1.0, 1e-18])
def test_an_unrelated_l_is_not_regressed_out(scale: float) -> None:
    """ℓ independent of d (at any scale: 10⁻¹⁸ is the rounding-level ℓ of a noise-free teacher)
    gives ĉ = 0 on every one of 20 seeds, where the plain fit is ≈ ±sd(d)/(sd(ℓ)·√N) (≈ ±10¹⁶ at
    the small scale); ℓ that explains 1% of d's variance (t ≈ 6 at N = 4,000) is still fitted."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        d = rng.normal(2.0, 1.0, (4, 1000))
        ell = rng.normal(0.0, scale, (4, 1000))
        assert abs(float(((d - d.mean()) * ell).sum() / np.square(ell).sum())) > 0.0
        assert linear_coefficient(d, ell) == 0.0
    rng = np.random.default_rng(0)
    ell = rng.normal(0.0, 1.0, (4, 1000))
    d = 2.0 + 0.1 * ell + rng.normal(0.0, 1.0, (4, 1000))
    assert linear_coefficient(d, ell) == pytest.approx(0.1, abs=0.05)


def test_the_observable_leaves_the_mean_and_lowers_the_variance() -> None:
    """A trace whose d carries a zero-mean linear term of sd 10 around a mean of 2: the regressed
    observable keeps the mean (within 3 se) with its sd down from ≈ 10 to ≈ 1; a dead chain
    (inf losses) is left out of ĉ and of the result."""
    g = torch.Generator().manual_seed(1)
    ell = 10.0 * torch.randn(3, 2000, generator=g, dtype=torch.float64)
    base = 2.0 + torch.randn(3, 2000, generator=g, dtype=torch.float64)
    loss = base + ell
    loss[2] = math.inf
    alive = np.array([True, True, False])
    x = observable(Trace(loss, torch.zeros_like(loss), lin=ell), alive)
    assert x.shape == (2, 2000)
    assert abs(x.mean() - 2.0) < 3 * x.std() / math.sqrt(x.size)
    assert 0.9 < x.std() < 1.1
    raw = observable(Trace(loss, torch.zeros_like(loss)), alive)
    assert raw.std() > 9.0


def _tuning() -> Tuning:
    return Tuning(step_size=1e-3, kappa=1.0)


def test_the_divergence_check_reads_both_observables() -> None:
    """nβ·d past the limit with nβ·(d − ℓ) small (the linear term alone) is no divergence; the
    reverse (ℓ alone, as in a curved valley) neither; both past it, or a non-finite loss, is."""
    nbeta, dim = 1e8, 3
    limit = 50.0 * (dim / 2 + 10.0) / nbeta
    alive = torch.ones(2, dtype=torch.bool)
    ref = torch.zeros(2, 4, dtype=torch.float64)
    ell = torch.zeros(2, 4, dtype=torch.float64)
    ell[0, 1] = 10 * limit
    d = torch.full((2, 4), 0.1 * limit, dtype=torch.float64)
    d[0, 1] += 10 * limit  # linear term only
    kw = dict(tuning=_tuning(), on_divergence="raise", alive=alive)
    assert check_block(d, ref, nbeta, dim, 0, lin=ell, **kw).all()
    with pytest.raises(DivergenceError):
        check_block(d, ref, nbeta, dim, 0, **kw)  # without ℓ: a false alarm, as before
    valley = torch.full((2, 4), 0.1 * limit, dtype=torch.float64)  # d small, d − ℓ large
    assert check_block(valley, ref, nbeta, dim, 0, lin=-ell, **kw).all()
    d[1, 2] = 100 * limit
    with pytest.raises(DivergenceError, match="exploding"):
        check_block(d, ref, nbeta, dim, 0, lin=ell, **kw)
    d[1, 2] = math.nan
    with pytest.raises(DivergenceError, match="non-finite"):
        check_block(d, ref, nbeta, dim, 0, lin=ell, **kw)


def _least_squares(n: int = 200):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 3, generator=g, dtype=torch.float64)
    y = x @ torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    y = y + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)
    w = torch.linalg.lstsq(x, y[:, None]).solution[:, 0]

    def loss(p, b):
        return (b[1] - b[0] @ p["w"]).square().mean()

    return loss, {"w": w}, (x, y)


@pytest.mark.parametrize(
    ("nbeta", "anchor_every", "device"),
    [
        (1e6, None, "cpu"),
        (1e8, None, "cpu"),
        (1e6, 16, "cpu"),
        pytest.param(1e8, 16, "cuda", marks=pytest.mark.gpu),
    ],
)
def test_far_above_n_the_minibatch_estimate_matches_the_full_data_one(
    nbeta: float, anchor_every: int | None, device: str
) -> None:
    """Least squares in 3 parameters, n = 200: λ = 3/2. Without the regression λ̂'s standard error
    was 0.23 at nβ = 10⁶ (against 0.05 from full-data losses) and at 10⁸ the linear term alone
    tripped the divergence check. Now λ̂ has the full-data error bar, sits within 0.02 of the
    full-data estimate (the same draws), and ĉ is 1 (the loss is quadratic: d = ℓ + g_n·δ + its
    quadratic part). With anchors refreshed every 16 steps ℓ is taken about each chain's centre
    (the anchor's own batch noise included: with (∇L_B(r) − ∇L_n(r))·(w − r) alone the error was
    0.17 at 10⁶ and 10⁸ diverged)."""
    loss, w, data = _least_squares()
    est = numeric.estimate_llc(
        loss,
        w,
        data,
        nbeta=nbeta,
        num_chains=4,
        seed=0,
        progress=False,
        anchor_every=anchor_every,
        device=device,
        batch_size=100,  # minibatches (the default for n = 200 is the full batch, exact)
        rtol=0.02,  # ĉ is a regression on the draws: enough of them to pin it to 2·10⁻³
    )
    assert est.config.device.startswith(device)
    assert est.linear_coefficient == pytest.approx(1.0, abs=2e-3)
    assert est.full_data is not None
    assert est.stderr < 1.5 * est.full_data.stderr
    assert abs(est.mean - est.full_data.mean) < 0.02
    assert abs(est.mean - 1.5) < 4 * est.stderr
    assert not [f for f in est.diagnostics if f.severity == "error"]
