"""expected_llc: the closed form and the quadrature against independent computations."""

from __future__ import annotations

import math

import pytest
import torch

from numeric.errors import InvalidInputError
from numeric.potential.reference import GaussianLinear, expected_llc


@pytest.mark.parametrize("k", [1, 2, 3])
def test_quadrature_monomial_without_localisation_is_exact(k: int) -> None:
    """∫ nβ w^{2k} e^{−nβ w^{2k}} / ∫ e^{−nβ w^{2k}} = 1/(2k) for every nβ (a Gamma integral)."""
    r = expected_llc(
        lambda w: w[..., 0] ** (2 * k), [0.0], nbeta=500.0, gamma=0.0, prior_precision=1e-9
    )
    assert r.value == pytest.approx(1 / (2 * k), abs=1e-6)


def test_quadrature_gaussian_3d_matches_closed_form() -> None:
    h = torch.tensor([1.0, 3.0, 0.2], dtype=torch.float64)
    nbeta, gamma = 300.0, 2.0
    r = expected_llc(
        lambda w: 0.5 * (h * w.square()).sum(-1), [0.0, 0.0, 0.0], nbeta=nbeta, gamma=gamma
    )
    exact = float(0.5 * (nbeta * h / (nbeta * h + gamma)).sum())
    assert r.value == pytest.approx(exact, abs=1e-4)


def test_quadrature_off_centre_w_star() -> None:
    r1 = expected_llc(lambda w: (w[..., 0] - 1.0) ** 4, [1.0], nbeta=1e3, gamma=1.0)
    r0 = expected_llc(lambda w: w[..., 0] ** 4, [0.0], nbeta=1e3, gamma=1.0)
    assert r1.value == pytest.approx(r0.value, abs=1e-8)


def test_quadrature_refuses_non_compact_target() -> None:
    with pytest.raises(InvalidInputError, match="non-compact"):
        expected_llc(lambda w: w[..., 0] ** 2 * w[..., 1] ** 2, [0.0, 0.0], nbeta=1e3, gamma=0.0)


def test_linear_closed_form_against_exact_sampling() -> None:
    """Draw exactly from the Gaussian target and compare nβ(E L − L(w*)) with the closed form."""
    g = torch.Generator().manual_seed(0)
    n, d = 500, 3
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = X @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) + torch.randn(
        n, generator=g, dtype=torch.float64
    )
    m = GaussianLinear(X, y, loss_scale=0.5)
    w_star = m.minimiser() + 0.05  # not the minimiser: exercises every term
    nbeta, gamma, alpha = 40.0, 3.0, 0.5
    r = expected_llc(m, w_star, nbeta=nbeta, gamma=gamma, prior_precision=alpha)
    H = X.T @ X / n
    w_hat = m.minimiser()
    P = nbeta * H + (gamma + alpha) * torch.eye(d, dtype=torch.float64)
    mu = torch.linalg.solve(P, nbeta * H @ w_hat + gamma * w_star)
    L = torch.linalg.cholesky(torch.linalg.inv(P))
    w = mu + torch.randn(200_000, d, generator=g, dtype=torch.float64) @ L.T
    loss = 0.5 * (y - w @ X.T).square().mean(-1)
    vals = nbeta * (loss - m.loss_fn({"w": w_star}, m.data))
    se = float(vals.std() / math.sqrt(vals.numel()))
    assert abs(float(vals.mean()) - r.value) < 5 * se
    # and the familiar special case ½·tr(nβH(nβH + γI)⁻¹) at the minimiser without prior
    r0 = expected_llc(m, w_hat, nbeta=nbeta, gamma=gamma)
    ev = torch.linalg.eigvalsh(H)
    assert r0.value == pytest.approx(float(0.5 * (nbeta * ev / (nbeta * ev + gamma)).sum()))


def test_expected_llc_input_errors() -> None:
    with pytest.raises(InvalidInputError):
        expected_llc(lambda w: w[..., 0] ** 2, [0.0], nbeta=0.0, gamma=1.0)
    with pytest.raises(InvalidInputError, match="1–3"):
        expected_llc(lambda w: w.square().sum(-1), [0.0] * 4, nbeta=10.0, gamma=1.0)
