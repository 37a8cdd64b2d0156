"""The estimator on CUDA: statistics against exact targets, reproducibility, compile = eager.

Every test here carries the ``gpu`` marker (run with ``--rungpu`` on a machine with CUDA).
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

import numeric
from numeric.hessian import hessian_trace
from numeric.reference import GaussianLinear, expected_llc

pytestmark = pytest.mark.gpu


def _linear(n: int, d: int, seed: int) -> tuple[GaussianLinear, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g)
    m = GaussianLinear(X, X @ torch.randn(d, generator=g) + torch.randn(n, generator=g))
    return m, m.minimiser()


def test_gpu_matches_cpu_statistically() -> None:
    """CPU data and parameters with ``device="cuda"``: moved, and the estimate lands on d/2."""
    m, w_hat = _linear(5000, 4, 0)
    est = numeric.estimate_llc(
        m.loss_fn, {"w": w_hat}, m.data, num_chains=64, seed=0, device="cuda"
    )
    ref = expected_llc(m, w_hat, nbeta=est.nbeta, gamma=1.0).value
    assert est.config.device.startswith("cuda")
    assert est.ess >= 100
    assert abs(est.mean - 2.0) < 4 * est.stderr + 0.05 and abs(est.mean - ref) < 4 * est.stderr


def test_same_seed_identical_on_cuda_and_chains_differ() -> None:
    m, w_hat = _linear(2000, 3, 1)
    kw = dict(num_chains=8, num_draws=60, num_burnin=20, seed=5, device="cuda")
    a = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, **kw)
    b = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, **kw)
    assert (a.loss_trace == b.loss_trace).all() and a.mean == b.mean
    assert len(set(a.per_chain.tolist())) == 8
    c = numeric.estimate_llc(m.loss_fn, {"w": w_hat}, m.data, **{**kw, "seed": 6})
    assert not (a.loss_trace == c.loss_trace).all()


@pytest.mark.parametrize("integrator", ["lm", "baoab"])
def test_compiled_equals_eager_on_cuda(integrator: str) -> None:
    """The compiled kernel draws the same random numbers on the GPU as the eager loop."""
    torch.manual_seed(0)  # nn.Linear's initialisation only
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1)).double().cuda()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4000, 4, generator=g, dtype=torch.float64).cuda()
    with torch.no_grad():
        y = model(x)
    loss_fn, w = numeric.from_module(model, nn.functional.mse_loss)
    kw = dict(
        num_chains=16,
        num_burnin=40,
        num_draws=80,
        step_size=1e-4,
        seed=3,
        integrator=integrator,
        anchor_every=16,
    )
    eager = numeric.estimate_llc(loss_fn, w, (x, y), **kw)
    compiled = numeric.estimate_llc(loss_fn, w, (x, y), compile=True, **kw)
    assert eager.config.device.startswith("cuda")
    assert math.isclose(compiled.mean, eager.mean, rel_tol=1e-6, abs_tol=1e-9)
    torch.testing.assert_close(
        torch.as_tensor(compiled.loss_trace), torch.as_tensor(eager.loss_trace)
    )


def test_many_chains_on_cuda_agree_with_the_exact_target() -> None:
    """1,024 chains of a regular model in one call: the pooled estimate against λ_β."""
    m, w_hat = _linear(10_000, 10, 2)
    est = numeric.estimate_llc(
        m.loss_fn, {"w": w_hat}, m.data, num_chains=1024, seed=0, device="cuda"
    )
    ref = expected_llc(m, w_hat, nbeta=est.nbeta, gamma=1.0).value
    assert est.per_chain.shape == (1024,)
    assert abs(est.mean - ref) < 4 * est.stderr
    assert est.stderr < 0.05  # 1,024 chains: a tight error bar, so the check above has teeth


def test_potential_on_cuda_agrees_with_quadrature() -> None:
    """A normal-crossing potential K = w1²w2⁴ at the origin, float64 on the GPU."""
    K = lambda w: w[..., 0] ** 2 * w[..., 1] ** 4  # noqa: E731
    est = numeric.estimate_llc_potential(
        K, [0.0, 0.0], 10_000, num_chains=16, seed=0, device="cuda"
    )
    ref = expected_llc(K, [0.0, 0.0], nbeta=est.nbeta, gamma=est.config.gamma)
    assert est.config.device.startswith("cuda")
    assert est.ess >= 100
    assert abs(est.mean - ref.value) < 4 * est.stderr + ref.abserr


def test_hessian_trace_on_cuda_matches_the_dense_trace() -> None:
    g = torch.Generator().manual_seed(3)
    X = torch.randn(500, 6, generator=g, dtype=torch.float64).cuda()
    w = torch.randn(6, generator=g, dtype=torch.float64).cuda()

    def loss(p: torch.Tensor, batch: tuple[torch.Tensor]) -> torch.Tensor:
        return torch.log1p((batch[0] @ p).square()).mean()

    dense = torch.autograd.functional.hessian(lambda p: loss(p, (X,)), w).trace().item()
    tr = hessian_trace(loss, w, (X,), num_samples=4000, seed=0)
    assert abs(tr.mean - dense) < 4 * tr.stderr
