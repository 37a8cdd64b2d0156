"""numeric.plan.soft_whitening: soft directions (0 < nβh < γ + α) scaled at their own curvature only
where the potential is quadratic along them, at w* and at typical points of the target.

The potentials are written out so that every eigenvector is a coordinate: w₁ relevant
(nβ·10 ≫ γ), w₂ soft (nβ·5·10⁻⁵ = 0.5 < γ = 1), w₃ flat (h = 0).
"""

from __future__ import annotations

import pytest
import torch

from numeric.hessian.at_w_star import full_data_hessian
from numeric.hessian.dense import hessian_info
from numeric.inputs.flat_params import flatten_params
from numeric.inputs.problem import DataModel
from numeric.plan.soft_whitening import quadratic_along, soft_candidates, whiten_quadratic_soft

NBETA = 1e4


def _model(quartic: float = 0.0, product: float = 0.0, slope: float = 0.0):
    """L(w) = ½(10w₁² + 5·10⁻⁵w₂²) + quartic·w₂⁴ + product·(w₂w₃)² + slope·w₂, at w* = 0."""

    def loss(p, batch):
        w = p["w"]
        quad = 0.5 * (10.0 * w[0] ** 2 + 5e-5 * w[1] ** 2)
        extra = quartic * w[1] ** 4 + product * (w[1] * w[2]) ** 2 + slope * w[1]
        return quad + extra + 0.0 * batch.sum()

    w, spec = flatten_params({"w": torch.zeros(3, dtype=torch.float64)}, dtype=None, device=None)
    data = torch.zeros(16, 1, dtype=torch.float64)
    model = DataModel(loss, spec, data, n=16, batch=16)
    info = hessian_info(full_data_hessian(model, w, 0), NBETA, 1.0, 0.0)
    return model, w, info


def test_only_the_soft_direction_is_a_candidate() -> None:
    _, _, info = _model()
    (idx,) = soft_candidates(info).tolist()
    assert abs(info.nbeta * float(info.eigvals[idx]) - 0.5) < 1e-9
    assert abs(float(info.eigvecs[1, idx]).__abs__() - 1.0) < 1e-12  # it is w₂


def test_exactly_quadratic_soft_direction_is_whitened() -> None:
    """M along w₂ becomes 1/(nβh + γ) = 1/1.5 instead of 1/k_soft = 1/(10⁵ + 1)."""
    model, w, info = _model()
    assert bool(quadratic_along(model, w, info, soft_candidates(info), seed=0).all())
    whitened = whiten_quadratic_soft(model, w, info, seed=0)
    assert whitened.num_whitened == 1 and info.num_whitened == 0
    soft = int(soft_candidates(info)[0])
    assert float(info.clamped_curvatures()[soft]) == pytest.approx(1e5 + 1.0)
    assert float(whitened.clamped_curvatures()[soft]) == pytest.approx(1.5)
    flat = int(torch.argmin(info.eigvals.abs()))  # w₃ stays clamped to the softest relevant
    assert float(whitened.clamped_curvatures()[flat]) == pytest.approx(1e5 + 1.0)


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"quartic": 1e-4}, "nβ·10⁻⁴·(3σ)⁴ = 36 where the quadratic model says 4.5"),
        ({"product": 1e-3}, "quadratic along w₂ at w*, but stiff (k ≈ 21) where w₃ = ±1"),
        ({"slope": 1e-3}, "a gradient at w*: nβ·10⁻³·3σ = 24 against the model's 4.5"),
    ],
)
def test_non_quadratic_soft_direction_stays_clamped(kwargs: dict, why: str) -> None:
    model, w, info = _model(**kwargs)
    assert soft_candidates(info).numel() == 1, why
    assert not bool(quadratic_along(model, w, info, soft_candidates(info), seed=0).any()), why
    assert whiten_quadratic_soft(model, w, info, seed=0) is info


def test_product_passes_on_the_axis_alone() -> None:
    """The product case fails only at the typical points: at w* along w₂ it is quadratic (w₃ = 0),
    which is why the check goes where the chains go."""
    model, w, info = _model(product=1e-3)
    idx = soft_candidates(info)
    s = float(info.curvatures[idx].rsqrt())
    for t in (-3.0, -1.0, 1.0, 3.0):
        p = w.clone()
        p[1] = t * s
        rise = NBETA * float(model.full_loss(p[None])[0] - model.full_loss(w[None])[0])
        assert rise == pytest.approx(0.5 * 0.5 * (t * s) ** 2, rel=1e-9)
