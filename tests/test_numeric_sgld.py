"""The pure SGLD / MALA transitions: exact algebra, reproducibility, chain independence."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from numeric.sampler import mala, mmala, sgld


def _quadratic_grad(h: torch.Tensor):
    """Gradient estimator of L(w) = ½ Σ h_i w_i² (exact, no data)."""

    def fn(w: torch.Tensor, gen: torch.Generator) -> sgld.GradientEval:
        loss = 0.5 * (h * w.square()).sum(-1)
        return sgld.GradientEval(loss, torch.zeros_like(loss), h * w)

    return fn


@pytest.mark.parametrize("integrator", ["euler", "lm"])
def test_zero_noise_is_a_gradient_step(integrator: sgld.Integrator) -> None:
    gen = torch.Generator().manual_seed(0)
    h = torch.tensor([1.0, 4.0, 0.5], dtype=torch.float64)
    center = torch.tensor([0.1, -0.2, 0.3], dtype=torch.float64)
    w = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    state = sgld.init(w, gen)
    eps, nbeta, gamma, alpha = 1e-2, 7.0, 2.0, 0.5
    new, info = sgld.step(
        state,
        gen,
        _quadratic_grad(h),
        step_size=eps,
        nbeta=nbeta,
        gamma=gamma,
        center=center,
        prior_precision=alpha,
        integrator=integrator,
        noise_scale=0.0,
    )
    expected = w - 0.5 * eps * (nbeta * h * w + gamma * (w - center) + alpha * w)
    assert torch.equal(new.position, expected)
    assert torch.equal(info.loss, 0.5 * (h * w.square()).sum(-1))


def test_same_seed_same_path_and_chains_differ() -> None:
    h = torch.tensor([1.0, 2.0])

    def run(seed: int) -> torch.Tensor:
        gen = torch.Generator().manual_seed(seed)
        state = sgld.init(torch.zeros(4, 2), gen)
        for _ in range(20):
            state, _ = sgld.step(
                state,
                gen,
                _quadratic_grad(h),
                step_size=1e-2,
                nbeta=10.0,
                gamma=1.0,
                center=torch.zeros(2),
            )
        return state.position

    a, b, c = run(3), run(3), run(4)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    # chains started at the same point move apart: each has its own noise
    assert torch.unique(a[:, 0]).numel() == 4


@pytest.mark.parametrize("integrator", ["euler", "lm", "baoab"])
def test_stationary_variance_of_gaussian(integrator: sgld.Integrator) -> None:
    """Var of the chain in U = k w²/2: 1/(k(1 − εk/4)) for Euler, exactly 1/k for LM and BAOAB
    (any friction: here ξ = 1, underdamped)."""
    k, eps = 4.0, 0.4  # εk = 1.6: a large step, where the two differ clearly
    gen = torch.Generator().manual_seed(1)
    c, t = 4096, 400
    state = sgld.init(torch.zeros(c, 1, dtype=torch.float64), gen)
    grad = _quadratic_grad(torch.tensor([k], dtype=torch.float64))
    xs = []
    for i in range(t):
        state, _ = sgld.step(
            state,
            gen,
            grad,
            step_size=eps,
            nbeta=1.0,
            gamma=0.0,
            center=torch.zeros(1, dtype=torch.float64),
            integrator=integrator,
            friction=1.0,
        )
        if i >= 100:
            xs.append(state.position[:, 0])
    x = torch.stack(xs)
    var = float(x.square().mean())
    expected = 1 / k if integrator != "euler" else 1 / (k * (1 - eps * k / 4))
    # 300 draws × 4096 chains, autocorrelation time ≲ 3 → relative sd of the variance ≲ 0.5%
    assert var == pytest.approx(expected, rel=0.03)


def _run(state, gen, grad, steps: int, **kw) -> tuple[sgld.SGLDState, list[torch.Tensor]]:
    losses = []
    for _ in range(steps):
        state, info = sgld.step(state, gen, grad, nbeta=1.0, **kw)
        losses.append(info.loss)
    return state, losses


def test_baoab_at_infinite_friction_is_lm() -> None:
    """c = exp(−ξ√ε) = 0: the velocity is the last draw, and the step is LM's."""
    grad = _quadratic_grad(torch.tensor([1.0, 30.0], dtype=torch.float64))
    kw = dict(step_size=0.01, gamma=0.5, center=torch.zeros(2, dtype=torch.float64))
    paths = {}
    for integ in ("lm", "baoab"):
        gen = torch.Generator().manual_seed(5)
        state = sgld.init(torch.ones(3, 2, dtype=torch.float64), gen)
        paths[integ], _ = _run(state, gen, grad, 50, integrator=integ, friction=math.inf, **kw)
    torch.testing.assert_close(paths["baoab"].position, paths["lm"].position)
    torch.testing.assert_close(paths["baoab"].noise, paths["lm"].noise)


@pytest.mark.parametrize(("friction", "eps"), [(8.0, 0.01), (1.0, 0.01), (math.inf, 0.01)])
def test_relaxation_steps_is_the_decay_of_the_mean(friction: float, eps: float) -> None:
    """Without noise the mean of (z, v) on U = kz²/2 decays as |μ|ᵗ: −1/ln|μ| is
    ``relaxation_steps`` (2/(εk) for LM, ≈ ξ/(k√ε) overdamped, 2/(ξ√ε) underdamped)."""
    from numeric.sampler.sgld import relaxation_steps

    k = 2.0
    grad = _quadratic_grad(torch.tensor([k], dtype=torch.float64))
    gen = torch.Generator().manual_seed(0)
    state = sgld.SGLDState(
        torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64)
    )
    center = torch.zeros(1, dtype=torch.float64)
    kw = dict(step_size=eps, gamma=0.0, center=center, integrator="baoab", friction=friction)
    t0, t1 = 300, 1300
    a, _ = _run(state, gen, grad, t0, noise_scale=0.0, **kw)
    b, _ = _run(a, gen, grad, t1 - t0, noise_scale=0.0, **kw)
    size = lambda s: float(torch.cat([s.position * math.sqrt(k), s.noise]).norm())  # noqa: E731
    measured = -(t1 - t0) / math.log(size(b) / size(a))
    assert measured == pytest.approx(relaxation_steps(eps, k, friction), rel=0.02)


def test_baoab_samples_a_singular_target() -> None:
    """K = w1²w2² at nβ = 1000, γ = 1 (exact gradients): the flat directions, held by γ alone,
    relax in ≈ 1/√ε steps with momentum (2/ε under LM, 20,000 here); 6,000 BAOAB steps land on
    the quadrature value of nβ·E[K]."""
    from numeric.potential.reference import expected_llc

    def potential(w: torch.Tensor) -> torch.Tensor:
        return w[..., 0].square() * w[..., 1].square()

    def grad(w: torch.Tensor, gen: torch.Generator) -> sgld.GradientEval:
        k = potential(w)
        g = 2 * w * w.flip(-1).square()
        return sgld.GradientEval(k, torch.zeros_like(k), g)

    nbeta, c = 1000.0, 2000
    ref = expected_llc(potential, [0.0, 0.0], nbeta=nbeta, gamma=1.0).value
    gen = torch.Generator().manual_seed(2)
    state = sgld.init(torch.zeros(c, 2, dtype=torch.float64), gen)
    kw = dict(
        step_size=1e-4,
        nbeta=nbeta,
        gamma=1.0,
        center=torch.zeros(2, dtype=torch.float64),
        integrator="baoab",
        friction=2.0,
    )
    total = torch.zeros(c, dtype=torch.float64)
    for i in range(6000):
        state, info = sgld.step(state, gen, grad, **kw)
        if i >= 3000:
            total += info.loss
    per_chain = nbeta * total / 3000
    stderr = float(per_chain.std()) / math.sqrt(c)
    assert abs(float(per_chain.mean()) - ref) < 4 * stderr + 0.005 * ref


def test_friction_for_heating_meets_the_tolerance_exactly() -> None:
    eps, tol = 1e-4, 0.01
    for excess in (1e-5, 1e-4, 3e-3):
        xi = sgld.friction_for_heating(excess, eps, tol)
        assert excess * sgld.noise_heating(eps, "baoab", xi) == pytest.approx(tol, rel=1e-9)
        # less friction would heat more
        assert excess * sgld.noise_heating(eps, "baoab", 0.9 * xi) > tol
    assert sgld.friction_for_heating(0.0, eps, tol) == 0.0  # no gradient noise: no constraint
    assert sgld.friction_for_heating(0.02, eps, tol) == math.inf  # even LM heats more: LM
    assert sgld.noise_heating(eps, "lm", 1.0) == 1.0
    assert sgld.noise_heating(eps, "baoab", math.inf) == 1.0


def test_mala_leaves_gaussian_invariant_at_large_steps() -> None:
    k = 9.0

    def pot(w: torch.Tensor):
        u = 0.5 * k * w.square().sum(-1)
        return u, k * w, u

    gen = torch.Generator().manual_seed(2)
    state = mala.init(torch.zeros(2048, 2, dtype=torch.float64), pot)
    acc, xs = [], []
    for i in range(300):
        state, info = mala.step(state, gen, pot, step_size=0.3)  # εk = 2.7: Euler would be biased
        acc.append(float(info.acceptance.mean()))
        if i >= 50:
            xs.append(state.position)
    var = float(torch.stack(xs).square().mean())
    assert var == pytest.approx(1 / k, rel=0.05)
    assert 0.05 < sum(acc) / len(acc) < 1.0


def test_mala_rejects_non_finite_proposals() -> None:
    def pot(w: torch.Tensor):
        u = torch.where(w[:, 0] > 0.0, torch.full_like(w[:, 0], math.inf), w[:, 0].square())
        return u, 2 * w, u

    gen = torch.Generator().manual_seed(0)
    state = mala.init(torch.full((64, 1), -1.0, dtype=torch.float64), pot)
    for _ in range(50):
        state, _ = mala.step(state, gen, pot, step_size=1.0)
    assert bool((state.position <= 0).all())


def _crossing(nbeta: float):
    """U = nβ·w1²w2² + ½‖w‖² with its gradient and Hessian (the recorded loss is w1²w2²)."""

    def pot(w: torch.Tensor):
        a, b = w[:, 0], w[:, 1]
        k = a.square() * b.square()
        u = nbeta * k + 0.5 * w.square().sum(-1)
        g = torch.stack([2 * nbeta * a * b.square() + a, 2 * nbeta * b * a.square() + b], -1)
        h = torch.stack(
            [
                torch.stack([2 * nbeta * b.square() + 1, 4 * nbeta * a * b], -1),
                torch.stack([4 * nbeta * a * b, 2 * nbeta * a.square() + 1], -1),
            ],
            -2,
        )
        return u, g, k, h

    return pot


def _crossing_mean_k(nbeta: float) -> float:
    """E[w1²w2²] under exp(−U) by quadrature on a fine grid (the target is smooth, tails e^{−w²/2})."""
    x = np.linspace(-7, 7, 2801)
    a, b = np.meshgrid(x, x, indexing="ij")
    k = a**2 * b**2
    p = np.exp(-(nbeta * k + 0.5 * (a**2 + b**2)))
    return float((k * p).sum() / p.sum())


def test_mmala_leaves_a_singular_target_invariant() -> None:
    """Position-dependent MALA alone, 4,096 chains from w = 0: E[K] matches quadrature. Dropping
    the ½·log det G terms of the proposal densities moves E[K] by ~10%, far outside this band."""
    nbeta = 20.0
    pot = _crossing(nbeta)
    gen = torch.Generator().manual_seed(3)
    state = mmala.init(torch.zeros(4096, 2, dtype=torch.float64), pot, floor=1.0)
    ks, acc = [], []
    for i in range(400):
        eps = 0.02 * 100 ** torch.rand(4096, generator=gen, dtype=torch.float64)
        state, info = mmala.step(state, gen, pot, step_size=eps, floor=1.0)
        acc.append(float(info.acceptance.mean()))
        if i >= 100:
            ks.append(state.loss)
    k = torch.stack(ks)
    ref = _crossing_mean_k(nbeta)
    # 4,096 independent chains: the per-chain means' spread gives the standard error
    se = float(k.mean(0).std()) / math.sqrt(k.shape[1])
    assert abs(float(k.mean()) - ref) < 4 * se
    assert se < 0.02 * ref
    assert 0.2 < sum(acc) / len(acc) < 1.0


def test_mmala_metric_is_softabs_of_the_hessian() -> None:
    h = torch.tensor([[[2.0, 0.0], [0.0, -3.0]], [[0.1, 0.0], [0.0, 5.0]]], dtype=torch.float64)
    vecs, vals = mmala.softabs_metric(h, floor=0.5)
    assert sorted(vals[0].tolist()) == [2.0, 3.0]  # |−3|
    assert sorted(vals[1].tolist()) == [0.5, 5.0]  # 0.1 floored
    g = vecs @ torch.diag_embed(vals) @ vecs.mT
    assert torch.allclose(g[0], torch.diag(torch.tensor([2.0, 3.0], dtype=torch.float64)))
    bad = torch.full((1, 2, 2), math.nan, dtype=torch.float64)
    assert mmala.softabs_metric(bad, floor=0.5)[1].tolist() == [[0.5, 0.5]]


@pytest.mark.parametrize(("dtype", "rtol"), [(torch.float64, 1e-7), (torch.float32, 2e-2)])
def test_difference_hessian_matches_the_analytic_one(dtype: torch.dtype, rtol: float) -> None:
    """Central differences of ∇U reproduce ∇²U of the crossing potential at nβ = 10³ where
    its entries span 1 to ~10⁴; U, ∇U and the loss at w itself are passed through unchanged."""
    exact = _crossing(1000.0)

    def three(w: torch.Tensor):
        u, g, k, _ = exact(w)
        return u, g, k

    w = torch.tensor([[0.0, 0.0], [2.0, 0.01], [-0.3, 0.7], [1.5, -1.2]], dtype=dtype)
    u, g, k, h = mmala.with_difference_hessian(three)(w)
    u0, g0, k0, h0 = exact(w)
    assert torch.equal(u, u0) and torch.equal(g, g0) and torch.equal(k, k0)
    scale = h0.abs().amax(dim=(-2, -1), keepdim=True)
    assert float(((h - h0).abs() / scale).max()) < rtol
