"""The battery's ReLU networks (verification.calibration.relu): the build, the batched potential
the HMC target runs on, and the target itself against the Laplace value at a regular minimum."""

from __future__ import annotations

import math

import pytest
import torch

from verification.calibration.relu import build_relu, relu_hmc_target, relu_loss, relu_potential

pytestmark = pytest.mark.xdist_group("relu")


def _gradient_norm(built) -> float:
    p = {k: v.clone().requires_grad_(True) for k, v in built.aux["w_hat"].items()}
    relu_loss(p, built.aux["data"]).backward()
    return math.sqrt(sum(float(v.grad.square().sum()) for v in p.values()))


def test_the_student_sits_at_a_minimum_its_extra_units_included():
    built = build_relu(0, d=2, teacher=3, student=6, out=1, n=2_000)
    w = built.aux["w_hat"]
    assert {k: tuple(v.shape) for k, v in w.items()} == {
        "W1": (6, 2), "b1": (6,), "W2": (1, 6), "b2": (1,),
    }  # fmt: skip
    assert _gradient_norm(built) < 0.02  # a kink of relu: L-BFGS leaves a small subgradient
    # unit noise: the fitted loss is near ½ (½·E ε²), below it by the overfit
    assert 0.40 < float(relu_loss(w, built.aux["data"])) < 0.55


def test_the_batched_potential_is_the_loss_of_each_chain():
    built = build_relu(1, d=3, teacher=2, student=4, out=2, n=500)
    K, w_star = relu_potential(built.aux["w_hat"], built.aux["data"])
    assert w_star.numel() == 3 * 4 + 4 + 2 * 4 + 2
    w = w_star + 0.3 * torch.randn(5, w_star.numel(), generator=torch.Generator().manual_seed(0),
                                   dtype=torch.float64)  # fmt: skip
    sizes = [12, 4, 8, 2]
    for c in range(5):
        W1, b1, W2, b2 = w[c].split(sizes)
        p = {"W1": W1.reshape(4, 3), "b1": b1, "W2": W2.reshape(2, 4), "b2": b2}
        assert float(K(w[c : c + 1])[0]) == pytest.approx(float(relu_loss(p, built.aux["data"])),
                                                        rel=1e-12)  # fmt: skip


@pytest.mark.slow
def test_the_hmc_target_agrees_with_a_long_sgld_run():
    """The battery's 2-3-6-1 case at n = 2,000: HMC on the full-data loss and a long full-batch
    SGLD run (another sampler: BAOAB, 5,000 + 10,000 steps) estimate the same λ_β(γ) (≈ 5.7;
    ~80 s). No closed form exists: the rescaling orbits of each unit are flat and curved, so
    even at a regular minimum the Laplace value misses their share (3.24 against HMC's 3.66 ±
    0.10 on a 2-2-1 student)."""
    import numeric

    n = 2_000
    built = build_relu(0, d=2, teacher=3, student=6, out=1, n=n)
    est = numeric.estimate_llc(
        *built.args, num_chains=4, seed=1, batch_size=n, num_burnin=5_000, num_draws=10_000,
        progress=False,
    )  # fmt: skip
    target = relu_hmc_target(built, float(est.nbeta), 1.0)
    assert 5.0 < target.value < 6.5 and target.sigma < 0.15
    assert abs(est.mean - target.value) < 3 * math.hypot(est.stderr, target.sigma)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(d=2, teacher=3, student=2, out=1, n=100), "student"),
        (dict(d=0, teacher=1, student=2, out=1, n=100), "d must"),
        (dict(d=2, teacher=1, student=2, out=1, n=1.5), "n must"),
    ],
)
def test_a_student_narrower_than_its_teacher_or_a_bad_size_is_refused(kw, match):
    from verification.errors import VerificationError

    with pytest.raises(VerificationError, match=match):
        build_relu(0, **kw)


def test_an_hmc_reference_with_an_error_finding_is_no_target():
    from types import SimpleNamespace

    from verification.calibration.models import TargetError, require_usable

    finding = SimpleNamespace(severity="warning")
    require_usable(SimpleNamespace(diagnostics=(finding,)))  # warnings leave it usable
    error = SimpleNamespace(severity="error")
    with pytest.raises(TargetError, match="not usable"):
        require_usable(SimpleNamespace(diagnostics=(finding, error)))
