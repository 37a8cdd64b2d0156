"""Observables at the draws, WAIC / singular fluctuation, susceptibilities and the per-block
callback (issue 63, item 2): ``numeric.draws.observables``, ``numeric.result.fluctuation``,
``numeric.draws.events``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from _stops import stop_chains

import numeric
import numeric.sampler.chains
from numeric.potential.reference import GaussianLinear


def _linear(n: int, d: int = 3, seed: int = 0) -> tuple[GaussianLinear, torch.Tensor]:
    """y = Xw + N(0, 1) with loss ½·mean (y − x·w)²: ℓ_i is the Gaussian NLL (σ = 1) up to a
    constant, so the model is regular and realisable."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = X @ torch.ones(d, dtype=torch.float64) + torch.randn(n, generator=g, dtype=torch.float64)
    m = GaussianLinear(X, y)
    return m, m.minimiser()


SMALL = dict(num_chains=4, seed=0, num_burnin=100, num_draws=400, progress=False)


def _gaussian_posterior(m: GaussianLinear, w: torch.Tensor, nbeta: float, gamma: float):
    """Residuals r_i at ŵ and s_i = x_iᵀΣx_i of the exact posterior N(ŵ, Σ), Σ⁻¹ = nβ·H + γ
    (H = XᵀX/n for the loss ½·mean (y − xw)²; ŵ minimises it, so the localisation keeps the
    mean)."""
    X, y = m.X.numpy(), m.y.numpy()
    n, d = X.shape
    sigma = np.linalg.inv(nbeta / n * X.T @ X + gamma * np.eye(d))
    return y - X @ w.numpy(), np.einsum("ij,jk,ik->i", X, sigma, X)


def test_singular_fluctuation_of_a_regular_model_is_half_its_dimension() -> None:
    """Linear regression, d = 3, β = 1 (nβ = n), γ = 0.01: ℓ_i = ½(r_i − x_iᵀδ)² with δ ~ N(0, Σ)
    gives Var_w ℓ_i = r_i²·s_i + s_i²/2 exactly, so ν_n = (β/2)·Σ_i (r_i²s_i + s_i²/2) for these
    data, and E ν_n → d/2 (Watanabe). WAIC: E_w exp(−ℓ_i) = (1 + s_i)^(−½)·exp(−r_i²/(2(1 + s_i)))
    gives T_n in closed form."""
    n, d = 1000, 3
    m, w = _linear(n, d)
    est = numeric.estimate_llc(
        m.loss_fn, {"w": w}, m.data, nbeta=float(n), gamma=0.01, num_chains=8, seed=0,
        num_burnin=300, num_draws=2000, progress=False, checks=numeric.Checks(
            observables=[numeric.per_sample_losses()]
        ),
    )  # fmt: skip
    r, s = _gaussian_posterior(m, w, float(n), 0.01)
    nu_exact = 0.5 * float(np.sum(r**2 * s + s**2 / 2))
    got = numeric.waic(est)
    se = got.singular_fluctuation_stderr
    assert 0 < se < 0.1
    assert abs(got.singular_fluctuation - nu_exact) < 4 * se, (got, nu_exact)
    # ν_n scatters around d/2 from data set to data set by ≈ (d/2)·√(2/n) (r_i² ~ χ²₁)
    spread = d / 2 * math.sqrt(2 / n)
    assert abs(got.singular_fluctuation - d / 2) < 4 * se + 3 * spread
    t_exact = float(np.mean(0.5 * np.log1p(s) + r**2 / (2 * (1 + s))))
    waic_exact = t_exact + 2 * nu_exact / n  # T_n + β·V/n, V = 2ν/β
    assert abs(got.waic - waic_exact) < 4 * got.waic_stderr, (got.waic, waic_exact)
    assert got.beta == 1.0 and got.n == n
    # G_t = E_w[L_n]: the per-sample losses average to the full-data losses at the same draws
    per_sample = est.observables["per_sample_loss"]
    np.testing.assert_allclose(per_sample.mean(-1), est.full_data.loss_trace, rtol=1e-10)
    assert got.gibbs_training_loss == pytest.approx(est.full_data.loss_trace.mean(), rel=1e-10)


def test_susceptibility_matches_quadrature() -> None:
    """K(w) = c·w⁴ (the loss ½·mean (x·w²)², y = 0; λ = 1/4), nβ = 200, γ = 1: the posterior
    ∝ exp(−nβ·c·w⁴ − w²/2) on a fine grid gives χ = −Cov(φ, nβ·L_n) for φ = (w², w⁴). The
    automatic burn-in leaves this singular target short of its tails (λ̂ ≈ 5% low), so the
    burn-in is given."""
    n, nbeta = 200, 200.0
    g = torch.Generator().manual_seed(1)
    x = torch.randn(n, generator=g, dtype=torch.float64)
    data = (x, torch.zeros(n, dtype=torch.float64))

    def loss_fn(p, batch):
        xb, yb = batch
        return 0.5 * (yb - xb * p["w"][0] ** 2).square().mean()

    est = numeric.estimate_llc(
        loss_fn, {"w": torch.zeros(1, dtype=torch.float64)}, data, nbeta=nbeta, num_chains=8,
        seed=0, num_burnin=3000, num_draws=4000, progress=False,
        observables={"phi": lambda w: torch.stack([w[:, 0] ** 2, w[:, 0] ** 4], -1)},
    )  # fmt: skip
    chi = numeric.susceptibility(est, "phi")
    c = 0.5 * float((x**2).mean())
    grid = np.linspace(-6.0, 6.0, 400_001)
    log_p = -nbeta * c * grid**4 - grid**2 / 2
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    energy = nbeta * c * grid**4
    exact = [
        -(np.sum(p * f * energy) - np.sum(p * f) * np.sum(p * energy)) for f in (grid**2, grid**4)
    ]
    assert chi.value.shape == (2,) and chi.num_draws == est.full_data.loss_trace.size
    for k in range(2):
        assert 0 < chi.stderr[k] < 0.2 * abs(exact[k])
        assert abs(chi.value[k] - exact[k]) < 4 * chi.stderr[k], (chi, exact)


def _positions_loss(m: GaussianLinear, pos: np.ndarray) -> np.ndarray:
    """L_n at positions [..., d], computed here from the data."""
    X, y = m.X.numpy(), m.y.numpy()
    return m.loss_scale * ((y - pos @ X.T) ** 2).mean(-1)


def test_shapes_follow_the_full_loss_evaluations_and_thinning() -> None:
    m, w = _linear(200)
    obs = {
        "positions": numeric.positions(),
        "thin": numeric.positions(max_draws=5),
        "norm": lambda v: v.square().sum(-1),
    }
    est = numeric.estimate_llc(m.loss_fn, {"w": w}, m.data, observables=obs, **SMALL)
    every = est.config.full_loss_every
    t = est.config.num_draws // every
    assert every >= 1 and t == est.full_data.loss_trace.shape[1] >= 10
    pos = est.observables["positions"]
    assert pos.shape == (4, t, 3) and est.observables["norm"].shape == (4, t)
    np.testing.assert_allclose(est.observables["norm"], (pos**2).sum(-1), rtol=1e-12)
    # row t is the chains where L_n was evaluated: the same step
    np.testing.assert_allclose(_positions_loss(m, pos), est.full_data.loss_trace, rtol=1e-9)
    # thinned: at most 5 rows, at evaluations 0, s, 2s, … (s a power of 2)
    thin = est.observables["thin"]
    stride = 1
    while math.ceil(t / stride) > 5:
        stride *= 2
    assert thin.shape == (4, math.ceil(t / stride), 3)
    np.testing.assert_array_equal(thin, pos[:, ::stride])


def test_observables_leave_the_run_unchanged_bit_for_bit() -> None:
    m, w = _linear(200)
    plain = numeric.estimate_llc(m.loss_fn, {"w": w}, m.data, **SMALL)
    seen = numeric.estimate_llc(
        m.loss_fn, {"w": w}, m.data, observables=[numeric.positions(), numeric.per_sample_losses()],
        callback=lambda event: None, **SMALL,
    )  # fmt: skip
    assert plain.observables == {} and set(seen.observables) == {"positions", "per_sample_loss"}
    assert seen.mean == plain.mean and seen.stderr == plain.stderr
    np.testing.assert_array_equal(seen.loss_trace, plain.loss_trace)
    np.testing.assert_array_equal(seen.full_data.loss_trace, plain.full_data.loss_trace)
    assert "observables" not in plain.to_dict() and "observables" in seen.to_dict(traces=True)


def _cut_draws(monkeypatch, cause: str, advances: int) -> None:
    """The clock runs out (or Ctrl-C arrives) inside the ``advances``-th block of the draws."""
    real = numeric.sampler.chains.Chains.advance
    seen = {"n": 0}

    def advance(self, k, tuning, **kw):
        if self.catch_interrupt:
            seen["n"] += 1
            if seen["n"] == advances:
                stop_chains(self, cause)
        return real(self, k, tuning, **kw)

    monkeypatch.setattr(numeric.sampler.chains.Chains, "advance", advance)


@pytest.mark.parametrize(("cause", "code"), [("clock", "time_budget"), ("ctrl_c", "interrupted")])
def test_cut_draws_keep_the_rows_taken_consistently(monkeypatch, cause, code) -> None:
    m, w = _linear(200)
    events = []
    _cut_draws(monkeypatch, cause, 4)
    est = numeric.estimate_llc(
        m.loss_fn, {"w": w}, m.data, observables=[numeric.positions()], callback=events.append,
        time_budget=3600.0, **SMALL,
    )  # fmt: skip
    assert code in {f.code for f in est.diagnostics}
    pos = est.observables["positions"]
    assert pos.shape[:2] == est.full_data.loss_trace.shape == (4, 3)  # three blocks evaluated
    np.testing.assert_allclose(_positions_loss(m, pos), est.full_data.loss_trace, rtol=1e-9)
    assert events[-1].step == est.config.num_draws and len(events) == 3
    assert [e.stopped for e in events] == [None] * 3  # the cut block ran no step


def test_ctrl_c_inside_an_observable_ends_the_draws_with_its_rows_consistent() -> None:
    m, w = _linear(200)
    calls = {"n": 0}

    def fragile(v: torch.Tensor) -> torch.Tensor:
        calls["n"] += 1
        if calls["n"] == 4:  # the third evaluation of the draws (after one trial at w*)
            raise KeyboardInterrupt
        return v[:, 0]

    est = numeric.estimate_llc(m.loss_fn, {"w": w}, m.data, observables={"w0": fragile}, **SMALL)
    assert "interrupted" in {f.code for f in est.diagnostics}
    assert est.observables["w0"].shape == est.full_data.loss_trace.shape == (4, 2)
    assert est.config.num_draws == 3 * est.config.full_loss_every


def test_the_callback_sees_every_block_and_the_file_logger_matches_the_trace(tmp_path) -> None:
    m, w = _linear(200)
    events = []
    path = tmp_path / "draws.jsonl"
    logger = numeric.JsonLinesLogger(path)

    def both(event: numeric.DrawsEvent) -> None:
        events.append(event)
        logger(event)

    est = numeric.estimate_llc(
        m.loss_fn, {"w": w}, m.data, observables={"w0": lambda v: v[:, 0]},
        runtime=numeric.Runtime(callback=both), **SMALL,
    )  # fmt: skip
    every, draws = est.config.full_loss_every, est.config.num_draws
    assert est.linear_coefficient == 0.0  # full batch: R_t = L(w*), llc_means comparable
    assert [e.step for e in events] == [min(k * every, draws) for k in range(1, len(events) + 1)]
    assert events[-1].step == draws and len(events) == math.ceil(draws / every)
    assert [e.block for e in events] == list(range(len(events)))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == len(events)
    delta = est.loss_trace - est.ref_loss_trace
    w0 = []
    for row in rows:
        step = row["step"]
        np.testing.assert_allclose(row["loss_means"], est.loss_trace[:, :step].mean(1), rtol=1e-9)
        np.testing.assert_allclose(
            row["llc_means"], est.nbeta * delta[:, :step].mean(1), rtol=1e-9, atol=1e-12
        )
        if row["observables"]:
            w0.append(row["observables"]["w0"])
            assert row["full_loss"] is not None
    np.testing.assert_allclose(np.array(w0).T, est.observables["w0"], rtol=1e-12)
    np.testing.assert_allclose(
        np.array([r["full_loss"] for r in rows if r["full_loss"] is not None]).T,
        est.full_data.loss_trace, rtol=1e-12,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(observables=lambda w: w), "mapping name"),
        (dict(observables=[lambda w: w]), "has no name"),
        (dict(observables={"a": 3}), "function of the positions"),
        (dict(observables={"a": lambda w: w}, full_loss_every=0), "full_loss_every=0"),
        (dict(callback=3), "callback must be callable"),
    ],
)
def test_bad_observable_settings_are_refused(kw, match) -> None:
    m, w = _linear(50)
    with pytest.raises(numeric.InvalidInputError, match=match):
        numeric.estimate_llc(m.loss_fn, {"w": w}, m.data, **kw)


def test_an_observable_of_the_wrong_shape_and_a_missing_name_are_named() -> None:
    m, w = _linear(200)
    with pytest.raises(numeric.InvalidInputError, match="'bad' returned shape"):
        numeric.estimate_llc(
            m.loss_fn, {"w": w}, m.data, observables={"bad": lambda v: v.sum()}, **SMALL
        )
    with pytest.raises(numeric.InvalidInputError, match="max_draws"):
        numeric.positions(max_draws=1)
    est = numeric.estimate_llc(m.loss_fn, {"w": w}, m.data, **SMALL)
    with pytest.raises(numeric.InvalidInputError, match="no observable 'per_sample_loss'"):
        numeric.waic(est)
