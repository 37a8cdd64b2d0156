"""The chains drifting into steeper regions: the fixed burn-in's re-measured κ and the draws' check
(``numeric.findings.stiffer_in_draws``, ``numeric.warmup.burn_in.fixed_burn_in``)."""

from __future__ import annotations

import math

import pytest
import torch

import numeric
from numeric.findings.stiffer_in_draws import STIFF_ERROR, STIFF_WARNING, check_stiffer_in_draws
from numeric.types import Tuning


def _tuning(step_size: float, kappa: float) -> Tuning:
    return Tuning(step_size, kappa, math.inf, 0)


def test_stiffness_finding_reads_the_step_times_the_final_curvature() -> None:
    eps = 0.01
    assert check_stiffer_in_draws(_tuning(eps, 25.0), 0.9 * STIFF_WARNING / eps) == ()
    (warn,) = check_stiffer_in_draws(_tuning(eps, 25.0), 1.5 / eps)
    assert (warn.code, warn.severity) == ("stiffer_in_draws", "warning")
    assert warn.values["step_kappa"] == pytest.approx(1.5)
    assert "6.0× the κ = 25" in warn.message  # κ_end = 150 against the κ ε was set for
    (err,) = check_stiffer_in_draws(_tuning(eps, 25.0), 1.01 * STIFF_ERROR / eps)
    assert err.severity == "error"
    # a given ε (no κ it was set for) is judged on ε·κ_end alone
    (given,) = check_stiffer_in_draws(_tuning(eps, math.nan), 3.0 / eps)
    assert given.severity == "error" and "set for" not in given.message
    assert check_stiffer_in_draws(_tuning(eps, 25.0), math.nan) == ()  # not measured


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
