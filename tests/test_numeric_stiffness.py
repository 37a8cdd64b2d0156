"""The chains drifting into steeper regions: the fixed burn-in's re-measured κ and the draws' check
(``numeric.findings.stiffer_in_draws``, ``numeric.warmup.burn_in.fixed_burn_in``)."""

from __future__ import annotations

import math

import pytest
import torch

import numeric
from numeric.findings.stiffer_in_draws import (
    STIFF_UNSTABLE,
    STIFF_WARNING,
    check_stiffer_in_draws,
    euler_inflation,
)
from numeric.potential.reference import expected_llc
from numeric.types import Tuning
from verification.calibration.models import build_linear


def _tuning(step_size: float, kappa: float) -> Tuning:
    return Tuning(step_size, kappa, math.inf, 0)


def test_stiffness_finding_reads_the_step_times_the_final_curvature() -> None:
    eps = 0.01
    assert check_stiffer_in_draws(_tuning(eps, 25.0), 0.9 * STIFF_WARNING / eps) == ()
    (warn,) = check_stiffer_in_draws(_tuning(eps, 25.0), 1.5 / eps)
    assert (warn.code, warn.severity) == ("stiffer_in_draws", "warning")
    assert warn.values["step_kappa"] == pytest.approx(1.5)
    assert "6.0× the κ = 25" in warn.message  # κ_end = 150 against the κ ε was set for
    # LM and BAOAB sample a quadratic direction exactly below the stability edge ε·κ = 4
    for integrator in ("lm", "baoab"):
        (near,) = check_stiffer_in_draws(_tuning(eps, 25.0), 3.9 / eps, integrator)
        assert near.severity == "warning"
        (err,) = check_stiffer_in_draws(_tuning(eps, 25.0), 1.01 * STIFF_UNSTABLE / eps, integrator)
        assert err.severity == "error"
    # a given ε (no κ it was set for) is judged on ε·κ_end alone
    (given,) = check_stiffer_in_draws(_tuning(eps, math.nan), 5.0 / eps)
    assert given.severity == "error" and "set for" not in given.message
    assert check_stiffer_in_draws(_tuning(eps, 25.0), math.nan) == ()  # not measured


def test_euler_steps_are_an_error_unless_the_step_check_extrapolated() -> None:
    """Euler's variance along κ is 1/(1 − εκ/4) of the truth: 2× at εκ = 2."""
    eps = 0.01
    assert euler_inflation(2.0) == pytest.approx(2.0) and euler_inflation(4.0) == math.inf
    (raw,) = check_stiffer_in_draws(_tuning(eps, 25.0), 2.0 / eps, "euler")
    assert raw.severity == "error" and "2.00×" in raw.message
    (fixed,) = check_stiffer_in_draws(_tuning(eps, 25.0), 2.0 / eps, "euler", corrected=True)
    assert fixed.severity == "warning" and "extrapolation" in fixed.message
    (past,) = check_stiffer_in_draws(_tuning(eps, 25.0), 4.5 / eps, "euler", corrected=True)
    assert past.severity == "error"


def _regression(seed: int):
    """y = x·1 + noise, 3 features, n = 10⁴, localised at ŵ: λ_β in closed form, κ ≈ nβ."""
    built = build_linear(seed, unit=3, n=10_000)
    return built.args, built.aux["model"], built.aux["w_star"]


def test_lm_at_a_step_near_its_stability_edge_is_correct_and_only_warned() -> None:
    """LM at ε·κ ≈ 3.9 on a Gaussian posterior reads λ_β (an error here was a false alarm)."""
    args, model, w = _regression(1)
    est = numeric.estimate_llc(
        *args, num_chains=4, seed=1, integrator="lm", step_size=3.5e-3, batch_size=10_000,
        progress=False,
    )  # fmt: skip
    (stiff,) = [f for f in est.diagnostics if f.code == "stiffer_in_draws"]
    assert 3.0 < stiff.values["step_kappa"] < STIFF_UNSTABLE and stiff.severity == "warning"
    ref = expected_llc(model, w, nbeta=est.nbeta, gamma=est.config.gamma).value
    assert abs(est.mean - ref) < 3 * est.stderr, (est.mean, est.stderr, ref)


def test_euler_at_a_stiff_step_is_an_error_where_it_biases_the_estimate() -> None:
    """Euler at ε·κ ≈ 1.1: λ̂ ≈ 1.38·λ_β; the step-size check's bias (2.3 se) falls short of its
    threshold, so the stiffness finding is what says the number cannot be used."""
    args, model, w = _regression(1)
    est = numeric.estimate_llc(
        *args, num_chains=4, seed=1, integrator="euler", step_size=1e-3, batch_size=10_000,
        progress=False,
    )  # fmt: skip
    ref = expected_llc(model, w, nbeta=est.nbeta, gamma=est.config.gamma).value
    assert est.mean > ref + 4 * est.stderr  # the bias the finding names is there
    (stiff,) = [f for f in est.diagnostics if f.code == "stiffer_in_draws"]
    assert stiff.severity == "error" and est.step_check is not None and not est.step_check.applied


def _deep_linear_network(h: int, n: int = 8192):
    """x ↦ W2·W1·W0·x at random orthogonal W_i, noise-free labels from itself: λ = h²/2."""
    g = torch.Generator().manual_seed(0)

    def orthogonal() -> torch.Tensor:
        q, r = torch.linalg.qr(torch.randn(h, h, generator=g))
        return q * torch.sign(torch.diagonal(r))

    ws = {f"W{i}": orthogonal() for i in range(3)}
    x = torch.randn(n, h, generator=g)

    def f(p: dict[str, torch.Tensor], xb: torch.Tensor) -> torch.Tensor:
        return xb @ p["W0"].T @ p["W1"].T @ p["W2"].T

    with torch.no_grad():
        y = f(ws, x)

    def loss_fn(p: dict[str, torch.Tensor], b: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return 0.5 * (f(p, b[0]) - b[1]).square().sum(-1).mean()

    return loss_fn, ws, (x, y)


def test_fixed_burn_in_re_measures_the_curvature_as_the_chains_spread() -> None:
    """At γ = 1 the chains drift along the GL(h) orbits into steeper regions. With a given
    num_burnin ε used to stay at the adaptation's c/κ: 1,000 + 3,000 steps at h = 20 gave
    λ̂ = 213.2 ± 3.1 against λ = 200 (+6.6%; with 6,243 + 18,729 steps 285 ± 3, +42%), the
    chains ending at εκ = 4.8. Re-measured after doubling chunks, ε shrinks as they go."""
    loss_fn, ws, data = _deep_linear_network(20)
    est = numeric.estimate_llc(
        loss_fn, ws, data, num_chains=4, batch_size=256, num_burnin=1000, num_draws=3000,
        step_check=False, seed=0, progress=False,
    )  # fmt: skip
    assert abs(est.mean - 200.0) <= max(3 * est.stderr, 0.03 * 200.0), (est.mean, est.stderr)
    assert est.config.step_size < 0.5 * 0.0999  # the adaptation's ε, shrunk at least twofold
    stiff = [f for f in est.diagnostics if f.code == "stiffer_in_draws"]
    assert all(f.severity != "error" for f in stiff), stiff
