"""``LLCEstimate.to_inference_data`` and the package's ESS / R-hat against ArviZ's.

ESS targets are independent of both codes: an AR(1) chain x_t = ρ·x_{t−1} + e_t has integrated
autocorrelation time (1 + ρ)/(1 − ρ), so C chains of T draws hold C·T·(1 − ρ)/(1 + ρ) effective
draws of the mean."""

from __future__ import annotations

import dataclasses
import math
import sys
import warnings

import numpy as np
import pytest
import torch

import numeric
from numeric.result.inference_data import live_chains
from numeric.stats.diagnostics import ess, split_rhat

with warnings.catch_warnings():  # arviz 0.2x announces its 1.0 refactor on import
    warnings.simplefilter("ignore", FutureWarning)
    az = pytest.importorskip("arviz")


def _ar1(rho: float, chains: int, draws: int, seed: int) -> np.ndarray:
    """[chain, draw] AR(1) with unit innovations, started in its stationary law."""
    g = np.random.default_rng(seed)
    x = np.empty((chains, draws))
    x[:, 0] = g.standard_normal(chains) / math.sqrt(1 - rho**2)
    e = g.standard_normal((chains, draws))
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + e[:, t]
    return x


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_ess_is_arviz_mean_ess_and_near_the_ar1_value(rho: float) -> None:
    x = _ar1(rho, 16, 4000, seed=11)
    target = x.size * (1 - rho) / (1 + rho)
    ours, theirs = ess(x), float(az.ess(x, method="mean"))
    # the same estimator (Stan's split-chain ESS of the mean) but for ArviZ's extra ρ̂ term at
    # the truncation lag: seen ≤ 2% apart on such traces, most often equal to the last bit
    assert ours == pytest.approx(theirs, rel=0.02)
    assert ours == pytest.approx(target, rel=0.15)  # 100 seeds: 0.86-1.13 of it at ρ = 0.9
    assert theirs == pytest.approx(target, rel=0.15)


def test_ess_is_the_mean_ess_not_the_bulk_ess() -> None:
    # a heavy-tailed trace (lognormal over an AR(1), ρ = 0.9): the ESS of the mean and the
    # rank-normalised bulk ESS part ways (seeds 0-4: 1,283-3,905 against 154-250)
    x = np.exp(2 * _ar1(0.9, 4, 1000, seed=0))
    assert ess(x) == pytest.approx(float(az.ess(x, method="mean")), rel=1e-9)
    assert ess(x) > 3 * float(az.ess(x, method="bulk"))


def test_rhat_is_arviz_rank_rhat() -> None:
    x = _ar1(0.8, 4, 500, seed=2)
    x[0] += 0.3  # one chain off: R-hat well above 1
    ours = split_rhat(x)
    assert ours == pytest.approx(float(az.rhat(x, method="rank")), abs=1e-12)
    assert ours > 1.01
    # not the classic split R-hat on the raw values (no rank normalisation, no folded tail)
    y = _ar1(0.0, 4, 500, seed=3) * np.array([[1.0], [1.0], [1.0], [4.0]])  # one wide chain
    assert split_rhat(y) == pytest.approx(float(az.rhat(y, method="rank")), abs=1e-12)
    assert split_rhat(y) > float(az.rhat(y, method="split")) + 0.05


def _potential_estimate() -> numeric.LLCEstimate:
    return numeric.estimate_llc_potential(
        lambda w: w[..., 0] ** 2 + w[..., 1] ** 4, [0.0, 0.0], 1000, num_chains=3, seed=1,
        num_burnin=100, num_draws=60,
    )  # fmt: skip


def test_inference_data_of_an_estimate() -> None:
    est = _potential_estimate()
    idata = est.to_inference_data()
    post = idata.posterior
    assert post.llc.dims == ("chain", "draw") and post.llc.shape == (3, 60)
    assert np.array_equal(post.loss.values, est.loss_trace)
    assert np.array_equal(idata.sample_stats.reference_loss.values, est.ref_loss_trace)
    # λ̂ is the mean of the per-draw observable; per chain, its per-chain values
    assert float(post.llc.mean()) == pytest.approx(est.mean, rel=1e-12)
    assert np.allclose(post.llc.mean("draw").values, est.per_chain, rtol=1e-12)
    assert float(az.ess(idata, method="mean", var_names=["llc"])["llc"]) == pytest.approx(
        est.ess, rel=0.02
    )
    assert float(az.rhat(idata, method="rank", var_names=["llc"])["llc"]) == pytest.approx(
        est.rhat, abs=1e-12
    )
    summary = az.summary(idata, var_names=["llc"], round_to="none")
    assert summary.loc["llc", "mean"] == pytest.approx(est.mean, rel=1e-12)
    assert summary.loc["llc", "r_hat"] == pytest.approx(est.rhat, abs=1e-12)
    a = post.attrs
    assert a["n"] == 1000 and a["seed"] == 1 and a["nbeta"] == pytest.approx(1000 / math.log(1000))
    assert a["gamma"] == est.config.gamma and a["step_size"] == est.config.step_size
    assert a["sampler"] == "mala" and list(a["diverged_chains"]) == []
    assert "full_data" not in idata.groups()


def test_data_estimate_round_trips_through_netcdf(tmp_path) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(500, 2, generator=g)
    m = numeric.GaussianLinear(x, x @ torch.ones(2) + torch.randn(500, generator=g))
    est = numeric.estimate_llc(
        m.loss_fn, {"w": m.minimiser()}, m.data, num_chains=2, num_burnin=50, num_draws=40,
        batch_size=64, seed=0, observables={"w_sq": lambda w: w**2},
    )  # fmt: skip
    idata = est.to_inference_data()
    assert float(idata.posterior.llc.mean()) == pytest.approx(est.mean, rel=1e-12)
    full = idata.full_data
    assert full.llc.shape == est.full_data.loss_trace.shape == (2, 10)  # every 4 of 40 draws
    assert float(full.llc.mean()) == pytest.approx(est.full_data.mean, rel=1e-12)
    # observables are taken with the full-data losses: they join that group, row for row
    assert full.w_sq.shape == (2, 10, 2)
    assert np.array_equal(full.w_sq.values, est.observables["w_sq"])
    path = tmp_path / "llc.nc"
    idata.to_netcdf(str(path))
    back = az.from_netcdf(str(path))
    assert set(back.groups()) == {"posterior", "sample_stats", "full_data"}
    assert np.array_equal(back.posterior.llc.values, idata.posterior.llc.values)
    assert np.array_equal(back.full_data.w_sq.values, est.observables["w_sq"])
    assert back.posterior.attrs["batch_size"] == 64
    assert back.posterior.attrs["linear_coefficient"] == est.linear_coefficient


def _diverging_estimate() -> numeric.LLCEstimate:
    """A loss that is NaN beyond |w| > 0.2: chain 3 of 16 steps out (seed 3) and is dropped."""

    def K(w: torch.Tensor) -> torch.Tensor:
        return torch.where(w[..., 0].abs() > 0.2, math.nan, w[..., 0] ** 2)

    return numeric.estimate_llc_potential(
        K, [0.0], 1000, num_chains=16, num_draws=400, num_burnin=0, step_size=1e-3,
        metropolis=False, on_divergence="continue", seed=3,
    )  # fmt: skip


def test_diverged_chains_are_left_out() -> None:
    est = _diverging_estimate()
    dead = np.flatnonzero(~np.isfinite(est.loss_trace).all(axis=1))
    assert dead.size >= 1 and est.per_chain.size == 16 - dead.size
    idata = est.to_inference_data()
    post = idata.posterior
    assert list(post.chain.values) == [c for c in range(16) if c not in dead]
    assert list(post.attrs["diverged_chains"]) == dead.tolist()
    assert np.allclose(post.llc.mean("draw").values, est.per_chain, rtol=1e-12)
    assert np.isfinite(float(az.ess(idata, var_names=["llc"])["llc"]))
    # the estimate records its live chains; they are the chains whose traces stayed finite
    assert np.array_equal(np.flatnonzero(~est.alive), dead)
    with pytest.raises(ValueError, match="alive mask"):
        live_chains(dataclasses.replace(est, per_chain=est.per_chain[:-2]))
    # an estimate built without the mask: the divergence finding names the chains, and without
    # it the divergence rule on the traces finds the same ones
    unrecorded = dataclasses.replace(est, alive=None)
    bare = dataclasses.replace(unrecorded, diagnostics=())
    assert np.array_equal(live_chains(unrecorded), est.alive)
    assert np.array_equal(live_chains(bare), est.alive)
    with pytest.raises(ValueError, match="cannot tell which"):
        live_chains(dataclasses.replace(bare, per_chain=est.per_chain[:-2]))


def _with_observables(est: numeric.LLCEstimate, obs: dict) -> numeric.LLCEstimate:
    if "observables" in {f.name for f in dataclasses.fields(est)}:
        return dataclasses.replace(est, observables=obs)
    out = dataclasses.replace(est)
    object.__setattr__(out, "observables", obs)  # the field is not there yet
    return out


def test_observables_join_the_posterior() -> None:
    est = _potential_estimate()
    sq = np.random.default_rng(0).random((3, 60, 2))
    idata = _with_observables(est, {"w_sq": sq, "norm": sq.sum(-1)}).to_inference_data()
    assert idata.posterior.w_sq.dims == ("chain", "draw", "w_sq_dim_0")
    assert np.array_equal(idata.posterior.w_sq.values, sq)
    assert np.array_equal(idata.posterior.norm.values, sq.sum(-1))
    empty = _with_observables(est, {}).to_inference_data()
    assert set(empty.posterior.data_vars) == {"loss", "llc"}
    thinned = _with_observables(est, {"w_sq": sq[:, :10]}).to_inference_data()
    assert "w_sq" not in thinned.posterior and "observable_w_sq" in thinned.groups()
    assert np.array_equal(thinned["observable_w_sq"].w_sq.values, sq[:, :10])
    with pytest.raises(ValueError, match="expected"):
        _with_observables(est, {"w_sq": sq[:2]}).to_inference_data()
    with pytest.raises(ValueError, match="clashes"):
        _with_observables(est, {"llc": sq}).to_inference_data()


def test_observables_of_live_or_all_chains() -> None:
    est = _diverging_estimate()
    alive = live_chains(est)
    t = est.loss_trace.shape[1]
    every = np.arange(16 * t, dtype=float).reshape(16, t)
    a = _with_observables(est, {"x": every}).to_inference_data()
    b = _with_observables(est, {"x": every[alive]}).to_inference_data()
    assert np.array_equal(a.posterior.x.values, every[alive])
    assert np.array_equal(b.posterior.x.values, every[alive])


def test_missing_arviz_names_the_extra(monkeypatch) -> None:
    est = _potential_estimate()
    monkeypatch.setitem(sys.modules, "arviz", None)  # import arviz now raises ImportError
    with pytest.raises(ImportError, match=r"slt-check\[arviz\]"):
        est.to_inference_data()
