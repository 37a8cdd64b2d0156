"""The beyond_quadratic finding: chains that left the region where the loss at w* is quadratic."""

from __future__ import annotations

import torch

import numeric
from numeric.findings import Finding
from numeric.localisation import check_beyond_quadratic


def test_check_beyond_quadratic_on_numbers() -> None:
    """Quiet when λ̂ is near the Laplace value and the curvature where the chains went is that at
    w*; info when they depart but the run mixed; a warning naming larger γ values when the run
    also has mixing findings."""
    assert check_beyond_quadratic(2.05, 0.05, 2.0, 1.3, 1.0, 1.0, ()) == ()
    (info,) = check_beyond_quadratic(4.3, 0.1, 2.94, 1.2, 1.0, 1.0, ())
    assert (info.code, info.severity) == ("beyond_quadratic", "info")
    assert info.values["llc"] == 4.3 and info.values["laplace"] == 2.94
    capped = Finding("draws_capped", "warning", "")
    (warn,) = check_beyond_quadratic(21.7, 0.8, 40.0, 900.0, 1.0, 1.0, (capped,))
    assert warn.severity == "warning" and warn.values["curvature_ratio"] == 900.0
    assert "gamma = 10 and 100" in warn.message and "draws_capped" in warn.message
    # a departure within 3 standard errors is noise, not a finding
    assert check_beyond_quadratic(2.8, 0.3, 2.0, 1.0, 1.0, 1.0, ()) == ()


def test_singular_directions_beside_relevant_ones_are_reported() -> None:
    """The rank-1 deep linear network 4-3-5-3 at its true parameter: the Hessian has 6 relevant
    directions (Laplace value 2.79 at nβ = 263) and 36 flat ones along which L_n is quartic and
    which carry λ = 5 − 2.94 beyond the quadratic picture. A short run says so (with its mixing
    findings: a warning that names larger γ)."""
    from verification.experiments.llc import mse_loss
    from verification.experiments.teachers import dln_teacher

    t = dln_teacher([4, 3, 5, 3], 1, seed=0)
    data = t.sample(2000, torch.Generator().manual_seed(0))
    loss_fn, w = numeric.from_module(t.module(), mse_loss)
    est = numeric.estimate_llc(
        loss_fn, w, data, num_chains=4, seed=0, num_burnin=300, num_draws=600
    )
    (f,) = [f for f in est.diagnostics if f.code == "beyond_quadratic"]
    assert 2.5 < est.config.laplace_llc < 3.0  # 6 relevant directions: ½Σ nβh/(nβh + 1) < 3
    assert f.values["llc"] > 1.25 * est.config.laplace_llc
    assert f.values["curvature_ratio"] > 10  # the chains went where L_n is far stiffer
    assert f.severity == "warning" and "gamma" in f.message
