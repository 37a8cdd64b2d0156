"""The gradient at w* (numeric.findings.gradient_at_w_star): the shift S it causes, and the finding.

Linear regression L_n(w) = ½·mean(y − xᵀw)² is exactly quadratic, so at w* = ŵ + d (ŵ the least-
squares solution) the localised posterior is Gaussian and λ̂ = ½·tr(nβH·A⁻¹) − S exactly, with
H = XᵀX/n, g = H·d, A = nβH + γ: the formula is checked against the sampler, not against itself.
"""

from __future__ import annotations

import math

import pytest
import torch

import numeric
from numeric.findings.gradient_at_w_star import check_gradient, gradient_shift
from numeric.hessian.dense import HessianInfo

D = 3


def _regression(n: int = 500) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(n, D, generator=g, dtype=torch.float64) * torch.tensor([1.0, 0.5, 0.2])
    y = x @ torch.tensor([1.0, -2.0, 0.5], dtype=x.dtype) + 0.3 * torch.randn(
        n, generator=g, dtype=x.dtype
    )
    w_hat = torch.linalg.lstsq(x, y[:, None]).solution[:, 0]
    return x, y, w_hat


def _loss(params: dict[str, torch.Tensor], batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    x, y = batch
    return 0.5 * (y - x @ params["w"]).square().mean()


def _expected(x: torch.Tensor, d: torch.Tensor, nbeta: float, gamma: float) -> tuple[float, float]:
    """(Laplace value, S) of the module docstring, by dense linear algebra."""
    h = x.T @ x / len(x)
    a = nbeta * h + gamma * torch.eye(D, dtype=x.dtype)
    g = h @ d
    lap = 0.5 * float(torch.trace(nbeta * h @ torch.linalg.inv(a)))
    ai_g = torch.linalg.solve(a, g)
    s = 0.5 * nbeta**2 * float(ai_g @ (nbeta * h + 2 * gamma * torch.eye(D, dtype=x.dtype)) @ ai_g)
    return lap, s


def test_gradient_shift_matches_dense_algebra():
    x, _, _ = _regression()
    h = x.T @ x / len(x)
    vals, vecs = torch.linalg.eigh(h)
    d = torch.tensor([0.3, -0.2, 0.5], dtype=x.dtype)
    info = HessianInfo(vals, vecs, nbeta=80.0, floor=2.0)
    _, want = _expected(x, d, 80.0, 2.0)
    assert gradient_shift(info, h @ d) == pytest.approx(want, rel=1e-10)
    # nothing resolved: every direction counts as flat, nβ²‖g‖²/c, an upper bound
    empty = HessianInfo(vals[:0], vecs[:, :0], nbeta=80.0, floor=2.0)
    bound = gradient_shift(empty, h @ d)
    assert bound == pytest.approx(80.0**2 * float((h @ d).square().sum()) / 2.0, rel=1e-12)
    assert bound > want


def test_lambda_hat_is_the_laplace_value_less_the_shift():
    x, y, w_hat = _regression()
    d = torch.tensor([0.0, 0.0, 0.6], dtype=x.dtype)  # off the minimum along the softest input
    est = numeric.estimate_llc(
        _loss, {"w": w_hat + d}, (x, y), num_chains=4, seed=0, progress=False
    )
    lap, s = _expected(x, d, est.nbeta, 1.0)
    assert s > 0.3  # the gradient matters here
    assert abs(est.mean - (lap - s)) <= 4 * est.stderr + 0.02 * lap, (est.mean, lap, s)
    codes = {f.code: f for f in est.diagnostics}
    assert "gradient_at_w_star" in codes
    assert codes["gradient_at_w_star"].values["shift"] == pytest.approx(s, rel=0.05)


def test_no_finding_at_the_minimum():
    x, y, w_hat = _regression()
    est = numeric.estimate_llc(_loss, {"w": w_hat}, (x, y), num_chains=4, seed=0, progress=False)
    assert "gradient_at_w_star" not in {f.code for f in est.diagnostics}


@pytest.mark.parametrize(
    ("shift", "llc", "stderr", "severity"),
    [
        (0.01, 10.0, 0.1, None),  # below 3 se
        (0.1, 10.0, 0.01, None),  # below 2% of λ̂
        (0.5, 10.0, 0.01, "warning"),
        (6.0, 10.0, 0.1, "error"),
        (0.07, -0.05, 0.02, "error"),  # the untrained network: a negative λ̂
    ],
)
def test_the_finding_rule(shift, llc, stderr, severity):
    found = check_gradient(shift, 0.3, llc, stderr, 80.0)
    assert [f.severity for f in found] == ([] if severity is None else [severity])
    if found:
        assert math.isclose(found[0].values["shift"], shift)
