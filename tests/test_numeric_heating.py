"""The minibatch heating in λ̂'s directions (``numeric.warmup.friction.minibatch_heating``).

Checked against closed forms: for a fixed symmetric A and noise of known covariance Σ the
inflation is 1 + h·ε·nβ²·tr(F·Σ)/(4·tr F), F = A(A + γ)⁻¹, computed here with dense linear algebra.
"""

from __future__ import annotations

import math

import pytest
import torch

from numeric.sampler.sgld import GradientEval
from numeric.warmup.friction import counted_excess, gauss_quadrature, minibatch_heating

D = 60


def _operator(rank: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A [D, D] = Q·diag(h)·Qᵀ of the given rank (h from 10⁻² to 10² on it), with Q and h."""
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(D, D, generator=g, dtype=torch.float64))
    h = torch.zeros(D, dtype=torch.float64)
    h[:rank] = torch.logspace(-2, 2, rank, dtype=torch.float64)
    return q @ torch.diag(h) @ q.T, q, h


def _f(theta: torch.Tensor, floor: float = 1.0) -> torch.Tensor:
    a = theta.clamp_min(0.0)
    return a / (a + floor)


def test_gauss_quadrature_is_exact_once_the_krylov_space_is_invariant() -> None:
    a, q, h = _operator(rank=7, seed=0)
    f_dense = q @ torch.diag(_f(h)) @ q.T
    v = torch.randn(3, D, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    exact = torch.einsum("cd,de,ce->c", v, f_dense, v)
    # rank 7 plus the null space: at most 8 distinct eigenvalues, so 8 steps are exact, and the
    # steps past the breakdown add nothing
    for steps in (8, 20, D):
        got = gauss_quadrature(lambda x: x @ a, v, steps, _f)
        torch.testing.assert_close(got, exact, rtol=1e-9, atol=1e-9)
    # two steps are not: the test can fail
    assert not torch.allclose(gauss_quadrature(lambda x: x @ a, v, 2, _f), exact, rtol=1e-3)


def test_gauss_quadrature_takes_one_operator_per_row() -> None:
    a0, q0, h0 = _operator(rank=5, seed=2)
    a1, q1, h1 = _operator(rank=40, seed=3)
    ops = torch.stack([a0, a1])
    v = torch.randn(2, D, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    got = gauss_quadrature(lambda x: torch.einsum("cde,ce->cd", ops, x), v, D, _f)
    for i, (q, h) in enumerate(((q0, h0), (q1, h1))):
        exact = v[i] @ (q @ torch.diag(_f(h)) @ q.T) @ v[i]
        assert float(got[i]) == pytest.approx(float(exact), rel=1e-8)


def _noisy_gradient(a: torch.Tensor, root: torch.Tensor):
    """ĝ(w) = A·w + root·ξ: noise of covariance root·rootᵀ, drawn from the caller's generator."""

    def gradient_fn(chosen: torch.Tensor):
        def grad(w: torch.Tensor, gen: torch.Generator) -> GradientEval:
            xi = torch.randn(w.shape[0], root.shape[1], generator=gen, dtype=w.dtype)
            g = w @ a + xi @ root.T
            zero = w.new_zeros(w.shape[0])
            return GradientEval(zero, zero, g)

        return grad

    return gradient_fn


@pytest.mark.parametrize("where", ["stiff", "flat", "everywhere"])
def test_heating_weights_the_noise_by_the_directions_the_estimate_counts(where: str) -> None:
    """Noise in the 6 stiff directions of a rank-6 Hessian heats λ̂ D/tr F ≈ 10 times more than
    the coordinate average says; noise in the flat directions not at all; isotropic noise as the
    average says. Each within the Monte Carlo error of 64 chains × 8 draws and 4 probes each."""
    rank, nbeta, gamma, eps = 6, 1.0, 1.0, 1e-3
    a, q, h = _operator(rank, seed=5)
    cols = {"stiff": q[:, :rank], "flat": q[:, rank:], "everywhere": q}[where]
    root = cols * 0.5  # Σ = ¼ on the chosen directions
    sigma = root @ root.T
    f_dense = q @ torch.diag(_f(nbeta * h, gamma)) @ q.T
    exact = 1 + eps * nbeta**2 * float(torch.trace(f_dense @ sigma) / torch.trace(f_dense)) / 4
    average = 1 + eps * nbeta**2 * float(torch.trace(sigma)) / D / 4
    chains = 16
    w = torch.zeros(chains, D, dtype=torch.float64)
    alive = torch.ones(chains, dtype=torch.bool)
    kw = dict(step_size=eps, nbeta=nbeta, samples=8)
    gen = torch.Generator().manual_seed(6)
    got = minibatch_heating(
        _noisy_gradient(a, root), w, alive, gen, hvp_at=lambda _: lambda v: v @ a,
        floor=gamma, **kw,
    )  # fmt: skip
    old = minibatch_heating(_noisy_gradient(a, root), w, alive, gen, **kw)
    assert old - 1 == pytest.approx(average - 1, rel=0.15)
    if where == "flat":
        assert got - 1 == pytest.approx(0.0, abs=1e-12)
    else:
        assert got - 1 == pytest.approx(exact - 1, rel=0.25)
    if where == "stiff":  # what the coordinate average missed
        assert (got - 1) / (old - 1) > 5


def test_counted_excess_is_nan_where_the_hessian_is_not_finite() -> None:
    noise = torch.randn(4, 2, D, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    gen = torch.Generator().manual_seed(8)
    assert math.isnan(counted_excess(lambda v: v * math.nan, noise, 1.0, 1.0, gen))
    # and the heating falls back to the coordinate average there
    a, _, _ = _operator(6, seed=9)
    w = torch.zeros(4, D, dtype=torch.float64)
    alive = torch.ones(4, dtype=torch.bool)
    root = torch.eye(D, dtype=torch.float64)
    kw = dict(step_size=1e-3, nbeta=1.0, samples=8)
    nan_hvp = minibatch_heating(
        _noisy_gradient(a, root), w, alive, torch.Generator().manual_seed(1),
        hvp_at=lambda _: lambda v: v * math.nan, floor=1.0, **kw,
    )  # fmt: skip
    plain = minibatch_heating(
        _noisy_gradient(a, root), w, alive, torch.Generator().manual_seed(1), **kw
    )
    assert nan_hvp == plain


def _stub_run(friction: float, inflation: float, raises: bool = True):
    from types import SimpleNamespace

    from numeric.types import Draws, Tuning, Warmup

    plan = SimpleNamespace(raises_friction=raises)
    warm = Warmup(Tuning(1e-4, 2500.0, friction), None, 0, "")
    drawn = Draws(None, 100, None, (1.0, 1.0), inflation=inflation)  # type: ignore[arg-type]
    return plan, warm, drawn


def test_cooler_options_ask_for_the_friction_that_meets_the_tolerance() -> None:
    from numeric.options import LLCOptions
    from numeric.run.heating_restart import RESTART_TOL, cooler_options
    from numeric.sampler import sgld
    from numeric.warmup.friction import HEAT_TOL

    opts = LLCOptions()
    # hotter than the tolerance at ξ = 2: the least ξ whose heating is HEAT_TOL
    plan, warm, drawn = _stub_run(2.0, 1.05)
    after = cooler_options(opts, plan, warm, drawn)  # type: ignore[arg-type]
    assert after is not None and after.min_friction > 2.0
    lm_excess = 0.05 / sgld.noise_heating(1e-4, "baoab", 2.0)
    heat = lm_excess * sgld.noise_heating(1e-4, "baoab", after.min_friction)
    assert heat == pytest.approx(HEAT_TOL, rel=1e-9)
    assert after.friction is None and after.seed == opts.seed  # the rest as it was
    # within the tolerance, a given friction, or an LM run: no restart
    assert cooler_options(opts, *_stub_run(2.0, 1.0 + 0.9 * RESTART_TOL)) is None  # type: ignore[arg-type]
    assert cooler_options(opts, *_stub_run(2.0, 1.05, raises=False)) is None  # type: ignore[arg-type]
    assert cooler_options(opts, *_stub_run(2.0, math.nan)) is None  # type: ignore[arg-type]
    # so hot that even LM exceeds the tolerance: BAOAB's LM limit, ξ = ∞
    assert cooler_options(opts, *_stub_run(2.0, 1e3)).min_friction == math.inf  # type: ignore[arg-type, union-attr]


def test_a_run_heated_after_its_warm_up_restarts_with_more_friction() -> None:
    """At the saddle y = x·w1·w2 with the control variate centred at w*, a 20-step burn-in
    measures the heating before the chains spread; the draws end far hotter, so the run starts
    again with the friction the heating asks for (here ∞: even LM heats more than 1%), and the
    finding says so. A given friction is kept."""
    import numeric
    from numeric.run.heating_restart import RESTART_TOL
    from tests.test_numeric_llc import _product_regression

    loss_fn, w_star, data, _ = _product_regression(2000, 0)
    kw = dict(num_chains=4, seed=1, anchor_every=0, integrator="baoab", num_burnin=20)
    kw["batch_size"] = 256  # minibatches (the defaults take the full batch of this small model)
    est = numeric.estimate_llc(loss_fn, w_star, data, num_draws=300, **kw)
    (found,) = [f for f in est.diagnostics if f.code == "heating_restart"]
    assert found.severity == "info"
    assert found.values["inflation"] > 1 + RESTART_TOL
    assert found.values["min_friction"] > found.values["friction"]
    assert est.config.friction >= found.values["min_friction"]
    given = numeric.estimate_llc(loss_fn, w_star, data, num_draws=300, friction=2.0, **kw)
    assert given.config.friction == 2.0
    assert given.minibatch_inflation > 1 + RESTART_TOL
    assert not [f for f in given.diagnostics if f.code == "heating_restart"]
