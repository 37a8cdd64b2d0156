"""The potential estimator and Hutchinson's trace on CUDA, against exact values.

Every test here carries the ``gpu`` marker (run with ``--rungpu`` on a machine with CUDA). The
GPU cases of the data estimator are device parameters of the CPU tests beside them
(``test_numeric_llc``, ``test_numeric_kernel``: same seed, compile = eager, many chains).
"""

from __future__ import annotations

import pytest
import torch

import numeric
from numeric.hessian.measures import hessian_trace
from numeric.potential.reference import expected_llc

pytestmark = pytest.mark.gpu


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
