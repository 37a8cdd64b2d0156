"""batch_size = n: the full data at every step, exact gradients, no minibatch heating."""

from __future__ import annotations

import math

import pytest
import torch

import numeric
from numeric.data import draw_indices
from numeric.reference import GaussianLinear, expected_llc
from verification.models import product_regression


def test_a_batch_of_all_n_samples_is_the_data_in_order_and_draws_nothing() -> None:
    g = torch.Generator().manual_seed(0)
    before = g.get_state()
    idx = draw_indices(5, (3, 2, 5), g, torch.device("cpu"))
    assert idx.shape == (3, 2, 5) and torch.equal(idx[1, 1], torch.arange(5))
    assert torch.equal(g.get_state(), before)  # the generator's stream is untouched
    some = draw_indices(5, (3, 2, 4), g, torch.device("cpu"))
    assert not torch.equal(g.get_state(), before) and int(some.max()) < 5


def _product_regression(n: int, seed: int):
    """y = x·w1·w2 + noise at the saddle w* = 0 (the friction-raising case of test_numeric_llc)."""
    prob = product_regression(n, torch.Generator().manual_seed(seed))
    return prob.loss_fn, prob.params, prob.data


def test_full_batch_keeps_critical_friction_where_minibatches_raise_it() -> None:
    """At the saddle with the centre at w* only, minibatch noise raises BAOAB's friction above
    critical damping 2√γ = 2; the full batch has no such noise: ξ stays 2, the heating is 1, the
    gradient is exact (no control variate, no anchors)."""
    loss_fn, w_star, data = _product_regression(2000, 0)
    kw = dict(num_chains=4, seed=1, num_draws=300)
    mini = numeric.estimate_llc(loss_fn, w_star, data, anchor_every=0, **kw)
    assert mini.config.friction > 2.0 + 1e-9 and mini.config.gradient == "control_variate"
    full = numeric.estimate_llc(loss_fn, w_star, data, batch_size=2000, **kw)
    c = full.config
    assert c.integrator == "baoab" and c.friction == pytest.approx(2.0)
    assert c.gradient == "exact" and c.batch_size == 2000 and c.anchor_every == 0
    assert full.minibatch_inflation == pytest.approx(1.0, abs=1e-9)
    assert "heating_restart" not in {f.code for f in full.diagnostics}


def test_anchors_with_the_full_batch_are_refused_not_dropped() -> None:
    loss_fn, w_star, data = _product_regression(200, 0)
    with pytest.raises(numeric.InvalidInputError, match="anchor_every = 16 applies to minibatch"):
        numeric.estimate_llc(loss_fn, w_star, data, batch_size=200, anchor_every=16)


def test_full_batch_recovers_the_exact_target_of_a_regular_model() -> None:
    """Linear regression, d = 4: with exact gradients the estimate is on the exact finite-nβ
    target, and the minibatch losses are the full-data losses (one and the same λ̂)."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(1000, 4, generator=g)
    y = X @ torch.randn(4, generator=g) + torch.randn(1000, generator=g)
    m = GaussianLinear(X, y)
    w_hat = m.minimiser()
    est = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, num_chains=4, batch_size=1000)
    ref = expected_llc(m, w_hat, nbeta=est.nbeta, gamma=est.config.gamma)
    assert est.ess >= 100 and abs(est.mean - ref.value) <= 4 * est.stderr, (est, ref.value)
    assert est.config.gradient == "exact" and est.config.preconditioner == "hessian"
    assert est.full_data is not None and math.isclose(est.full_data.mean, est.mean, rel_tol=0.05)
    assert not [f for f in est.diagnostics if f.severity == "error"], est.diagnostics


def _plan(kappa_min: float = math.nan, track: bool = True, cv: bool = True):
    """What ``check_batch_heating`` reads of a plan: BAOAB with the default friction."""
    from types import SimpleNamespace

    spec = SimpleNamespace(control_variate=cv)
    return SimpleNamespace(
        raises_friction=True, kappa_min=kappa_min, kappa_flat=1.0, track_positions=track,
        kernel_spec=spec,
    )  # fmt: skip


def test_heated_minibatches_name_the_full_batch_where_it_is_cheaper() -> None:
    """The 10⁵-parameter deep linear network's run (n = 10⁴, B = 256, ε = 2.01·10⁻⁸, ξ raised
    from 2 to 613 along flat directions of curvature γ = 1): overdamped, t ≈ ξ/(κ√ε) = 4.3·10⁶
    steps; at ξ₀ = 2, t ≈ 1/√(εκ) ≈ 7·10³; the full batch costs 10⁴/512 = 19.5 minibatch steps."""
    from numeric.batching import check_batch_heating
    from numeric.sgld import relaxation_steps
    from numeric.types import Tuning

    eps = 2.01e-8
    (f,) = check_batch_heating(_plan(), Tuning(eps, math.nan, 613.0), 10_000, 256)
    assert f.code == "batch_heating" and f.severity == "info"
    assert 613 / math.sqrt(eps) == pytest.approx(f.values["relaxation_steps"], rel=0.01)
    assert 6e3 < f.values["full_batch_relaxation_steps"] < 8e3
    assert f.values["cost_per_step"] == pytest.approx(10_000 / 512)
    assert 25 < f.values["gain"] < 35 and "batch_size = 10000" in f.message
    full = relaxation_steps(eps, 1.0, 2.0)
    assert f.values["gain"] == pytest.approx(f.values["relaxation_steps"] / full / 19.53125)
    # not reported: critical damping kept, the full batch itself, a mild raise, a given friction
    assert check_batch_heating(_plan(), Tuning(eps, math.nan, 2.0), 10_000, 256) == ()
    assert check_batch_heating(_plan(), Tuning(eps, math.nan, 613.0), 10_000, 10_000) == ()
    assert check_batch_heating(_plan(), Tuning(eps, math.nan, 30.0), 10_000, 256) == ()
    fixed = _plan()
    fixed.raises_friction = False
    assert check_batch_heating(fixed, Tuning(eps, math.nan, 613.0), 10_000, 256) == ()
    # without the control variate a minibatch step is one pass: the full batch gains half as much
    (g,) = check_batch_heating(_plan(cv=False), Tuning(eps, math.nan, 613.0), 10_000, 256)
    assert g.values["gain"] == pytest.approx(f.values["gain"] / 2)
