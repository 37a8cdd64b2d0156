"""batch_size = n: the full data at every step, exact gradients, no minibatch heating."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from test_numeric_kernel import _setup  # the sin regression of the kernel's tests

import numeric
from numeric.inputs.data import draw_indices
from numeric.potential.reference import GaussianLinear, expected_llc
from numeric.sampler import kernel
from numeric.sampler.gradients import make_gradient
from numeric.types import KernelSpec
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
    mini = numeric.estimate_llc(loss_fn, w_star, data, anchor_every=0, batch_size=256, **kw)
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
    from numeric.run.full_batch_switch import check_batch_heating
    from numeric.sampler.sgld import relaxation_steps
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


class _Rows:
    """Data indexable only by a tensor of indices (no tensor parts): indexed, not shared as is."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.x, self.y = x, y

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x[idx], self.y[idx]


@pytest.mark.parametrize("stacked", [True, False])
@pytest.mark.parametrize("indexable", [False, True])
def test_full_batch_gradient_is_the_exact_gradient_on_the_shared_data(
    stacked: bool, indexable: bool
) -> None:
    """ĝ = ∇L_n(w) per chain and L_B(w*) = L_n(w*), by hand, the data not copied per chain."""
    f, _, k, (x, y), _, g = _setup(cv=False)
    data = _Rows(x, y) if indexable else (x, y)
    spec = KernelSpec(control_variate=False, integrator="lm", stacked=stacked, full_batch=True)
    w = k.w_star + 0.1 * torch.randn(3, 3, generator=g, dtype=torch.float64)
    idx = draw_indices(200, (3, 200), g, torch.device("cpu"))
    ev = make_gradient(f, spec)(w, idx, k, data)
    ww = w.detach().requires_grad_(True)
    loss = 0.5 * (torch.sin(ww @ x.T) - y).square().mean(-1)
    (grad,) = torch.autograd.grad(loss.sum(), ww)
    torch.testing.assert_close(ev.loss, loss.detach())
    torch.testing.assert_close(ev.grad, grad)
    torch.testing.assert_close(ev.ref_loss, f(k.w_star, (x, y)).expand(3))
    assert ev.linear is None


def test_full_batch_reference_loss_is_computed_once_per_w_star_and_data() -> None:
    """L_n(w*) is one number on the full batch: one forward pass of w* over three steps; a new
    w* (or new data) is evaluated again, and each ref equals its own L_n(w*)."""
    f0, _, k, data, _, g = _setup(cv=False)
    seen: list[torch.Tensor] = []  # every tensor f is called on (vmapped rows are new objects)

    def f(w: torch.Tensor, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        seen.append(w)
        return f0(w, batch)

    spec = KernelSpec(control_variate=False, integrator="lm", stacked=True, full_batch=True)
    gradient = make_gradient(f, spec)
    idx = draw_indices(200, (3, 200), g, torch.device("cpu"))
    w = k.w_star + 0.1 * torch.randn(3, 3, generator=g, dtype=torch.float64)
    refs = [gradient(w + 0.01 * i, idx, k, data).ref_loss for i in range(3)]
    assert sum(t is k.w_star for t in seen) == 1
    for r in refs:
        torch.testing.assert_close(r, f0(k.w_star, data).expand(3))
    moved = k._replace(w_star=k.w_star + 0.5)
    ref = gradient(w, idx, moved, data).ref_loss
    assert sum(t is moved.w_star for t in seen) == 1
    torch.testing.assert_close(ref, f0(moved.w_star, data).expand(3))
    assert not torch.allclose(ref, refs[0])


def test_full_batch_functional_block_equals_eager() -> None:
    """The form torch.compile traces (the data handed whole to every step) takes the same steps
    as the eager one."""
    f, _, k, data, state, g = _setup(cv=False)
    spec = KernelSpec(control_variate=False, integrator="baoab", stacked=True, full_batch=True)
    k = k._replace(friction=2.0)
    noise = kernel.draw_block(g, kernel.UNROLL, 3, 200, 200, k.w_star)
    eager = kernel.make_block(f, spec, functional=False)
    functional = kernel.make_block(f, spec, functional=True)
    s1, t1 = eager(state, noise, None, 1e-3, k, data)
    eps = torch.tensor(1e-3, dtype=torch.float64)
    s2, t2 = functional(state, noise, None, eps, k, data)
    torch.testing.assert_close(s2.position, s1.position)
    torch.testing.assert_close(t2.loss, t1.loss)
    torch.testing.assert_close(t2.ref, t1.ref)


def test_a_full_batch_kernel_with_a_control_variate_is_refused() -> None:
    with pytest.raises(ValueError, match="no control variate"):
        KernelSpec(control_variate=True, integrator="lm", stacked=True, full_batch=True)


def test_compiled_full_batch_estimate_equals_eager() -> None:
    """compile=True at batch_size = n: the data handed whole to the compiled steps, nothing
    gathered; the same estimate up to rounding."""
    f, _, k, data, _, _ = _setup(cv=False)
    kw = dict(num_chains=2, num_burnin=16, num_draws=40, step_size=1e-4, seed=3, batch_size=200)

    def loss_fn(p: dict[str, torch.Tensor], batch) -> torch.Tensor:
        return f(p["w"], batch)

    eager = numeric.estimate_llc(loss_fn, {"w": k.w_star}, data, **kw)
    compiled = numeric.estimate_llc(loss_fn, {"w": k.w_star}, data, compile=True, **kw)
    assert eager.config.gradient == compiled.config.gradient == "exact"
    assert math.isclose(compiled.mean, eager.mean, rel_tol=1e-6, abs_tol=1e-9)


@pytest.mark.parametrize(
    ("n", "chains", "dim", "gradient", "anchor_every", "batch"),
    [
        (200, 4, 2, "control_variate", None, 200),  # n ≤ 256
        # step_cost: 2¹⁸ + (C + 1)·n·D against 2·(2¹⁸ + 2C·256·D)
        (10_000, 4, 2, "control_variate", None, 10_000),  # 3.6·10⁵ ≤ 5.4·10⁵
        (30_000, 4, 2, "control_variate", None, 256),  # 5.6·10⁵ > 5.3·10⁵
        (10_000, 4, 30, "control_variate", None, 256),  # 1.8·10⁶ > 6.5·10⁵
        (2_000, 8, 12, "control_variate", None, 2_000),  # 4.8·10⁵ ≤ 6.2·10⁵
        (20_000, 4, 448, "control_variate", None, 256),  # a deep linear network
        (300, 4, 2, "minibatch", None, 256),  # plain minibatch gradients asked for
        (300, 4, 2, "control_variate", 16, 256),  # anchors asked for
    ],
)
def test_the_default_batch_is_the_data_where_a_step_on_it_costs_no_more(
    n: int, chains: int, dim: int, gradient: str, anchor_every: int | None, batch: int
) -> None:
    """The full data where its step costs at most twice a control-variate step of 256, a
    step's fixed cost (``inputs.problem.STEP_OVERHEAD``) included."""
    from types import SimpleNamespace

    from numeric.inputs.problem import default_batch_size

    opts = SimpleNamespace(num_chains=chains, gradient=gradient, anchor_every=anchor_every)
    assert default_batch_size(n, opts, dim) == batch


@pytest.fixture
def no_step_overhead(monkeypatch):
    """A step's fixed cost set to 0, as for a model whose loss's work dominates it: minibatches
    by default where the data's rows cost more than 2C·256 (the switch's domain)."""
    import numeric.inputs.problem

    monkeypatch.setattr(numeric.inputs.problem, "STEP_OVERHEAD", 0)


def test_an_estimate_at_n_400_with_the_defaults_runs_on_the_full_batch() -> None:
    loss_fn, w_star, data = _product_regression(400, 0)
    est = numeric.estimate_llc(loss_fn, w_star, data, num_chains=4, num_draws=200, seed=0)
    assert est.config.batch_size == 400 and est.config.gradient == "exact"


def test_switch_needs_the_gain_and_a_projected_run_no_dearer_than_twice_the_run_left() -> None:
    """``switch_to_full_batch``: the 10⁵-parameter network's numbers gain G ≈ 31 per relaxation
    time, but its full-batch run, 19.5 × (20,000 + 20,000) minibatch steps' worth (both capped),
    is far above 2 × the 20,000 + 20,000 burn-in and draws left: no switch, while
    ``batch_heating`` still reports. At n = 1,000 (r = 1.95) and the same raise the projected run
    is cheap enough: a switch."""
    from numeric.run.full_batch_switch import (
        SWITCH_COST,
        check_batch_heating,
        full_batch_case,
        switch_to_full_batch,
    )
    from numeric.sampler.sgld import relaxation_steps
    from numeric.types import MAX_DRAWS, Tuning

    eps, hot = 2.01e-8, Tuning(2.01e-8, math.nan, 613.0)
    assert switch_to_full_batch(_plan(), hot, 10_000, 256, 4) is None
    assert check_batch_heating(_plan(), hot, 10_000, 256)
    case = switch_to_full_batch(_plan(), Tuning(1e-3, math.nan, 60.0), 1_000, 256, 4)
    assert case is not None and case.gain >= 2
    t_full = relaxation_steps(1e-3, 1.0, 2.0)
    assert case.full_batch_relaxation_steps == pytest.approx(t_full)
    # burn-in of 5 relaxation times and draws for 100 effective samples of λ̂'s trace at an
    # autocorrelation time of 2t (``projected_draws``)
    projected = case.cost_per_step * (5 * t_full + max(100 * 2 * t_full / 4, 200))
    assert case.full_batch_steps == pytest.approx(projected)
    # t = 60/(κ√ε) ≈ 1,480 steps: 5t of burn-in and the draws, capped, left to the minibatch run
    t_now = relaxation_steps(1e-3, 1.0, 60.0)
    assert case.relaxation_steps == pytest.approx(t_now)
    assert case.minibatch_steps == pytest.approx(5 * t_now + MAX_DRAWS)
    # the burn-in already run is not left: 1,000 steps in, 1,000 fewer
    later = switch_to_full_batch(_plan(), Tuning(1e-3, math.nan, 60.0), 1_000, 256, 4, None, 1000)
    assert later.minibatch_steps == pytest.approx(5 * t_now - 1000 + MAX_DRAWS)
    past = switch_to_full_batch(_plan(), Tuning(1e-3, math.nan, 60.0), 1_000, 256, 4, None, 10**4)
    assert past.minibatch_steps == MAX_DRAWS
    big = full_batch_case(_plan(), hot, 10_000, 256, 4)
    assert big.gain > 2 and big.minibatch_steps == 20_000 + MAX_DRAWS  # both capped
    assert big.full_batch_steps > SWITCH_COST * big.minibatch_steps
    assert case.full_batch_steps <= SWITCH_COST * case.minibatch_steps
    # the same raise at n = 100,000: the gain is there per relaxation time, the cost is not
    assert switch_to_full_batch(_plan(), Tuning(1e-3, math.nan, 60.0), 100_000, 256, 4) is None
    # nothing to switch: critical damping kept, already the full batch, a given friction
    assert switch_to_full_batch(_plan(), Tuning(eps, math.nan, 2.0), 1_000, 256, 4) is None
    assert switch_to_full_batch(_plan(), hot, 1_000, 1_000, 4) is None
    fixed = _plan()
    fixed.raises_friction = False
    assert switch_to_full_batch(fixed, Tuning(1e-3, math.nan, 60.0), 1_000, 256, 4) is None


def _codes(est: numeric.LLCEstimate) -> set[str]:
    return {f.code for f in est.diagnostics}


def test_defaults_switch_to_the_full_batch_where_minibatch_noise_raises_the_friction(
    no_step_overhead,
) -> None:
    """The noisy saddle y = x·w1·w2 (n = 2,000, 8 chains: ``bench_full_batch.py``'s seed 0):
    with the defaults the minibatch noise raises BAOAB's friction and the run restarts on the
    full batch, the same estimate bit for bit as ``batch_size = n`` asked for, with the
    ``full_batch_switch`` finding; a given batch size or given lengths are kept as they are."""
    loss_fn, w_star, data = _product_regression(2000, 0)
    kw = dict(num_chains=8, seed=0)
    auto = numeric.estimate_llc(loss_fn, w_star, data, **kw)
    asked = numeric.estimate_llc(loss_fn, w_star, data, batch_size=2000, **kw)
    assert auto.config.batch_size == 2000 and auto.config.gradient == "exact"
    assert auto.mean == asked.mean and np.array_equal(auto.loss_trace, asked.loss_trace)
    (switch,) = [f for f in auto.diagnostics if f.code == "full_batch_switch"]
    assert switch.severity == "info" and "batch_size = 2000" in switch.message
    v = switch.values
    assert v["gain"] >= 2 and v["friction"] > v["critical_friction"] == pytest.approx(2.0)
    assert v["full_batch_steps"] <= 2 * v["minibatch_steps"]
    assert _codes(auto) - {"full_batch_switch"} == _codes(asked)
    for given in (dict(batch_size=256), dict(num_draws=300), dict(num_burnin=300)):
        kept = numeric.estimate_llc(loss_fn, w_star, data, **kw, **{"num_draws": 300, **given})
        assert kept.config.batch_size == 256 and "full_batch_switch" not in _codes(kept)


def _forced_switch(monkeypatch) -> None:
    """Every automatic warm-up makes the case for the full batch
    (``run.full_batch_switch.switch_to_full_batch``)."""
    import numeric.run.one_run
    from numeric.run.full_batch_switch import FullBatchCase

    case = FullBatchCase(10.0, 2.0, 1e3, 10.0, 2.0, 50.0, 2e4, 1e3)
    monkeypatch.setattr(numeric.run.one_run, "switch_to_full_batch", lambda *a: case)


def _regression(n: int = 1000):
    """A linear regression (d = 4) at its minimiser: LM, quick with the defaults."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 4, generator=g)
    m = GaussianLinear(X, X @ torch.randn(4, generator=g) + torch.randn(n, generator=g))
    return m.loss_fn, {"w": m.minimiser()}, m.data


def test_a_switch_that_diverges_or_does_not_fit_keeps_the_minibatch_run(
    monkeypatch, no_step_overhead
) -> None:
    """Where the switched run diverges (once: it is not restarted, its projection made at the
    minibatch run's ε no longer holds), or the full batch's set-up is refused (its memory), the
    estimate is the minibatch run's without the switch (the same numbers); ``full_batch_diverged``
    says which, nothing is said where it did not fit."""
    import numeric.run.estimate_llc
    from numeric.errors import DivergenceError
    from numeric.run.one_run import Diverged

    loss_fn, w_star, data = _regression()
    kw = dict(num_chains=4, seed=0)
    plain = numeric.estimate_llc(loss_fn, w_star, data, **kw)
    assert plain.config.batch_size == 256 and "full_batch_switch" not in _codes(plain)
    run, setup = numeric.run.estimate_llc.one_run, numeric.run.estimate_llc.setup_problem

    full_runs = []

    def diverging(problem, plan, opts, switchable=False, clock=None):
        if problem.full_batch:
            full_runs.append(opts.step_scale)
            err = DivergenceError("diverged", chain=0, step=7, cause="a test", step_size=1e-3)
            return Diverged(err)
        return run(problem, plan, opts, switchable, clock)

    def refusing(loss_fn, params, data, opts):
        if opts.batch_size == 1000:
            raise numeric.InvalidInputError("the full batch needs 1 TB")
        return setup(loss_fn, params, data, opts)

    _forced_switch(monkeypatch)
    monkeypatch.setattr(numeric.run.estimate_llc, "one_run", diverging)
    fell = numeric.estimate_llc(loss_fn, w_star, data, **kw)
    assert fell.config.batch_size == 256
    assert fell.mean == plain.mean and np.array_equal(fell.loss_trace, plain.loss_trace)
    (note,) = [f for f in fell.diagnostics if f.code == "full_batch_diverged"]
    assert "chain 0 at step 7" in note.message and "minibatches of 256" in note.message
    assert full_runs == [0.25]  # not restarted at a smaller ε: the projection no longer holds
    assert _codes(fell) - {"full_batch_diverged"} == _codes(plain)
    monkeypatch.setattr(numeric.run.estimate_llc, "one_run", run)
    monkeypatch.setattr(numeric.run.estimate_llc, "setup_problem", refusing)
    kept = numeric.estimate_llc(loss_fn, w_star, data, **kw)
    assert kept.config.batch_size == 256 and kept.mean == plain.mean
    assert _codes(kept) == _codes(plain)
