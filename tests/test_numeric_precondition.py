"""Hessian-preconditioned Langevin and the slow-direction diagnostic.

The case: a two-layer quadratic network f(x) = ((x·W)²)·Vᵀ with 8 parameters at a minimum ŵ of
L_n near a generic teacher; exact λ = rank J/2 = 5/2; the Hessian eigenvalues at ŵ spread over
seven decades (three ≈ 0, then ≈ 3 … 200), so plain SGLD with ε = 0.25/κ_max relaxes the softest
relevant direction in ≈ 650 steps while the loss trace, dominated by the stiff ones, looks mixed.
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from torch.func import hessian

import numeric
from numeric.findings.slow_mixing import check_slow_mixing
from numeric.sampler import sgld
from numeric.stats.diagnostics import direction_mixing

# One worker under pytest-xdist, so the module-scoped estimate is computed once.
pytestmark = pytest.mark.xdist_group("precondition")


def _f(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    return ((x @ p["W"]) ** 2) @ p["V"].T


def _loss(p: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    return 0.5 * (batch[1] - _f(p, batch[0])).square().sum(-1).mean()


@pytest.fixture(scope="module")
def quadratic_network():
    W = torch.tensor([[-6, 3], [2, -5], [4, 1]], dtype=torch.float64) / 4
    V = torch.tensor([[3, -2]], dtype=torch.float64) / 4
    g = torch.Generator().manual_seed(0)
    X = torch.randint(-2, 3, (40, 3), generator=g).double().repeat(250, 1)
    y = _f({"W": W, "V": V}, X) + torch.randn(X.shape[0], 1, generator=g, dtype=torch.float64)
    p = {"W": W.clone().requires_grad_(True), "V": V.clone().requires_grad_(True)}

    def closure() -> torch.Tensor:
        opt.zero_grad()
        val = _loss(p, (X, y))
        val.backward()
        return val

    def flat_loss(v: torch.Tensor) -> torch.Tensor:
        return _loss({"W": v[:6].reshape(3, 2), "V": v[6:].reshape(1, 2)}, (X, y))

    with warnings.catch_warnings():  # LBFGS and torch.func touch the deprecated torch.jit.script
        warnings.simplefilter("ignore", DeprecationWarning)
        opt = torch.optim.LBFGS(
            list(p.values()), max_iter=200, tolerance_grad=1e-12, line_search_fn="strong_wolfe"
        )
        opt.step(closure)
        w = {k: v.detach() for k, v in p.items()}
        h = torch.linalg.eigvalsh(hessian(flat_loss)(torch.cat([w["W"].reshape(-1), w["V"][0]])))
    return w, (X, y), h


def _laplace(h: torch.Tensor, nbeta: float, gamma: float = 1.0) -> float:
    hp = nbeta * h.clamp_min(0)
    return 0.5 * float((hp / (hp + gamma)).sum())


def test_quadratic_network_defaults_agree_with_laplace_and_exact(quadratic_network) -> None:
    w, data, h = quadratic_network
    est = numeric.estimate_llc(_loss, w, data, num_chains=8, seed=0)
    cfg = est.config
    assert cfg.preconditioner == "hessian"
    assert cfg.condition_number > 1e4  # what plain SGLD would have to resolve
    assert cfg.step_size > 1e-3  # in the preconditioned metric (plain SGLD: ≈ 1e-6)
    ref = _laplace(h, est.nbeta)
    assert cfg.laplace_llc == pytest.approx(ref, rel=1e-6)
    assert est.ess >= 100 and est.stderr <= 0.1 * est.mean, est  # the stopping rule's target
    assert abs(est.mean - ref) <= 3 * est.stderr, (est.mean, ref, est.stderr)
    # exact λ = 5/2, up to the finite-temperature gap of the quadratic directions
    assert abs(est.mean - 2.5) <= 3 * est.stderr + abs(2.5 - ref)
    assert not [f for f in est.diagnostics if f.severity == "error"], est.diagnostics


def test_slow_mixing_fires_without_preconditioner(quadratic_network) -> None:
    """The failure the preconditioner fixes: a short plain-SGLD run (LM; "auto" would switch to
    BAOAB here, ``numeric.plan.integrator_switch``); the loss trace alone looks acceptable (ESS ≈ 90
    from 8×200 draws) while the soft directions have not moved."""
    w, data, _ = quadratic_network
    est = numeric.estimate_llc(
        _loss, w, data, num_chains=8, seed=0, preconditioner="none", num_draws=200, num_burnin=328,
        integrator="lm",
    )  # fmt: skip
    assert est.config.preconditioner == "none"
    assert est.config.relaxation_steps > est.config.num_burnin + est.config.num_draws
    slow = [f for f in est.diagnostics if f.code == "slow_mixing"]
    assert slow and slow[0].severity == "warning", est.diagnostics  # a run shorter than t
    assert est.slow_ess < 30


def test_same_seed_identical_with_preconditioner(quadratic_network) -> None:
    w, data, _ = quadratic_network
    kw = dict(num_chains=3, num_draws=40, num_burnin=20, seed=5, preconditioner="hessian")
    a = numeric.estimate_llc(_loss, w, data, **kw)
    b = numeric.estimate_llc(_loss, w, data, **kw)
    assert (a.loss_trace == b.loss_trace).all() and a.mean == b.mean
    assert a.config.step_size == b.config.step_size and a.slow_ess == b.slow_ess
    c = numeric.estimate_llc(_loss, w, data, **{**kw, "seed": 6})
    assert not (a.loss_trace == c.loss_trace).all()


def test_auto_rules() -> None:
    """ "auto" preconditions only the control-variate gradient with ε chosen; D > 2048: none."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(300, 3, generator=g, dtype=torch.float64)
    y = X @ torch.ones(3, dtype=torch.float64)

    def loss(p, b):
        return 0.5 * (b[1] - b[0] @ p["w"]).square().mean()

    w = {"w": torch.linalg.lstsq(X, y).solution}
    kw = dict(num_chains=2, num_draws=20, num_burnin=10)
    assert numeric.estimate_llc(loss, w, (X, y), **kw).config.preconditioner == "hessian"
    for extra in ({"gradient": "minibatch"}, {"step_size": 1e-4}, {"preconditioner": "none"}):
        est = numeric.estimate_llc(loss, w, (X, y), **kw, **extra)
        assert est.config.preconditioner == "none", extra
    with pytest.raises(numeric.InvalidInputError, match="preconditioner"):
        numeric.estimate_llc(loss, w, (X, y), **kw, preconditioner="diag")  # type: ignore[arg-type]


def _spd(d: int, gen: torch.Generator) -> torch.Tensor:
    a = torch.randn(d, d, generator=gen, dtype=torch.float64)
    return a @ a.T / d + 0.5 * torch.eye(d, dtype=torch.float64)


def _sqrt(m: torch.Tensor) -> torch.Tensor:
    e, q = torch.linalg.eigh(m)
    return (q * e.sqrt()) @ q.T


@pytest.mark.parametrize("integrator", ["euler", "lm"])
def test_zero_noise_is_a_preconditioned_gradient_step(integrator: sgld.Integrator) -> None:
    gen = torch.Generator().manual_seed(0)
    d = 4
    A, M = _spd(d, gen), _spd(d, gen)
    S = _sqrt(M)
    center = torch.randn(d, generator=gen, dtype=torch.float64)
    w = torch.randn(5, d, generator=gen, dtype=torch.float64)

    def grad(x: torch.Tensor, _g: torch.Generator) -> sgld.GradientEval:
        loss = 0.5 * ((x @ A) * x).sum(-1)
        return sgld.GradientEval(loss, torch.zeros_like(loss), x @ A)

    eps, nbeta, gamma, alpha = 0.3, 7.0, 2.0, 0.5
    new, _ = sgld.step(
        sgld.init(w, gen),
        gen,
        grad,
        step_size=eps,
        nbeta=nbeta,
        gamma=gamma,
        center=center,
        prior_precision=alpha,
        integrator=integrator,
        noise_scale=0.0,
        preconditioner=S,
    )
    drift = nbeta * w @ A + gamma * (w - center) + alpha * w
    expected = w - 0.5 * eps * drift @ M
    torch.testing.assert_close(new.position, expected, rtol=1e-13, atol=1e-13)
    # M = I is the unpreconditioned step, bit for bit
    eye = torch.eye(d, dtype=torch.float64)
    kw = dict(step_size=eps, nbeta=nbeta, gamma=gamma, center=center, noise_scale=0.0)
    a, _ = sgld.step(sgld.init(w, gen), gen, grad, preconditioner=eye, **kw)
    b, _ = sgld.step(sgld.init(w, gen), gen, grad, **kw)
    assert torch.equal(a.position, b.position)


def test_lm_with_preconditioner_is_exact_for_a_gaussian() -> None:
    """U = ½wᵀAw with a dense M and a large step: the LM chain's covariance is A⁻¹."""
    gen = torch.Generator().manual_seed(3)
    d, c, t = 3, 4096, 300
    A, M = _spd(d, gen) * 4, _spd(d, gen)
    S = _sqrt(M)
    lam_max = float(torch.linalg.eigvalsh(S @ A @ S).max())
    eps = 1.5 / lam_max  # ε·κ = 1.5 in the preconditioned metric

    def grad(x: torch.Tensor, _g: torch.Generator) -> sgld.GradientEval:
        z = x.new_zeros(x.shape[0])
        return sgld.GradientEval(z, z, x @ A)

    state = sgld.init(torch.zeros(c, d, dtype=torch.float64), gen)
    kw = dict(step_size=eps, nbeta=1.0, gamma=0.0, center=torch.zeros(d, dtype=torch.float64))
    for _ in range(t):
        state, _ = sgld.step(state, gen, grad, preconditioner=S, **kw)
    w = state.position
    cov = w.T @ w / c
    target = torch.linalg.inv(A)
    se = torch.sqrt((target.diag()[:, None] * target.diag()[None, :] + target**2) / c)
    assert ((cov - target).abs() <= 5 * se).all(), (cov, target)


def test_direction_mixing_and_finding_on_arrays() -> None:
    rng = torch.Generator().manual_seed(0)
    fast = torch.randn(4, 500, 2, generator=rng, dtype=torch.float64).numpy()
    e, r = direction_mixing(fast)
    assert e > 1000 and r < 1.02
    assert check_slow_mixing(e, r) == ()
    walk = torch.randn(4, 500, 2, generator=rng, dtype=torch.float64).cumsum(1).numpy() * 0.05
    e, r = direction_mixing(walk)
    assert e < 30 and r > 1.1
    (f,) = check_slow_mixing(e, r)  # unmixed coordinates alone: info (calibration)
    assert f.code == "slow_mixing" and f.severity == "info"
    (f,) = check_slow_mixing(e, r, error_ess=30.0)  # the old rule, where a caller asks for it
    assert f.severity == "error"
    (f,) = check_slow_mixing(500.0, 1.0, relaxation_steps=1e4, num_burnin=100, num_draws=200)
    assert f.severity == "warning"  # a run shorter than one relaxation time
    (f,) = check_slow_mixing(80.0, 1.02)
    assert f.severity == "info"
    assert math.isnan(direction_mixing(fast[:, :, :0])[0])
