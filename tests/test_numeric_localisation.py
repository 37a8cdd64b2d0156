"""The beyond_quadratic finding (chains that left the region where the loss at w* is quadratic)
and the still_relaxing one (draws extended while the chains were still drifting)."""

from __future__ import annotations

import math

import pytest
import torch

import numeric
from numeric.findings.beyond_quadratic import check_beyond_quadratic
from numeric.types import Finding

DT = torch.float64


def test_check_beyond_quadratic_on_numbers() -> None:
    """Quiet when λ̂ is near the Laplace value and the curvature where the chains went is that at
    w*; info when they depart but the run mixed; a warning naming larger γ values when the run
    also has mixing findings."""
    assert check_beyond_quadratic(2.05, 0.05, (2.0, 2.0), 1.3, 1.0, 1.0, ()) == ()
    (info,) = check_beyond_quadratic(4.3, 0.1, (2.94, 2.94), 1.2, 1.0, 1.0, ())
    assert (info.code, info.severity) == ("beyond_quadratic", "info")
    assert info.values["llc"] == 4.3 and info.values["laplace"] == 2.94
    capped = Finding("draws_capped", "warning", "")
    (warn,) = check_beyond_quadratic(21.7, 0.8, (40.0, 40.0), 900.0, 1.0, 1.0, (capped,))
    assert warn.severity == "warning" and warn.values["curvature_ratio"] == 900.0
    assert "gamma = 10 and 100" in warn.message and "draws_capped" in warn.message
    # a departure within 3 standard errors is noise, not a finding
    assert check_beyond_quadratic(2.8, 0.3, (2.0, 2.0), 1.0, 1.0, 1.0, ()) == ()


def test_check_beyond_quadratic_against_bounds_on_the_laplace_value() -> None:
    """Above 2,048 parameters the Laplace value is bracketed (Lanczos quadrature): λ̂ inside the
    bracket, or within 25% of its ends, departs from nothing; beyond an end it does, and the
    finding names the bracket, with no single Laplace value (nan) beside the bounds."""
    assert check_beyond_quadratic(11613.0, 24.0, (9000.0, 44063.0), 1.0, 1.0, 1.0, ()) == ()
    assert check_beyond_quadratic(7000.0, 24.0, (9000.0, 44063.0), 1.0, 1.0, 1.0, ()) == ()
    (low,) = check_beyond_quadratic(6000.0, 24.0, (9000.0, 44063.0), 1.0, 1.0, 1.0, ())
    assert "lower bound" in low.message and "[9000, 4.406e+04]" in low.message
    assert math.isnan(low.values["laplace"]) and low.values["laplace_low"] == 9000.0
    (high,) = check_beyond_quadratic(60000.0, 24.0, (9000.0, 44063.0), 1.0, 1.0, 1.0, ())
    assert "upper bound" in high.message and high.values["laplace_high"] == 44063.0
    # bounds within 5% of their midpoint pin the value down
    (near,) = check_beyond_quadratic(6.0, 0.1, (3.9, 4.1), 1.0, 1.0, 1.0, ())
    assert near.values["laplace"] == pytest.approx(4.0)


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


def _trace_source(
    drift: float, chains: int = 4, seed: int = 0, level: float = 0.0, trend: float = 0.0
):
    """``draws(k)``: k more draws of a [C, k] loss trace, ``level`` plus white noise plus a random
    walk of step sd ``drift`` (0: stationary; 0.04: still moving, its ESS no longer grows with
    its length) plus ``trend`` per draw."""
    from numeric.types import Trace

    g = torch.Generator().manual_seed(seed)
    walk = torch.zeros(chains, dtype=DT)

    def draws(k: int) -> Trace:
        out = torch.empty(chains, k, dtype=DT)
        for i in range(k):
            walk.add_(drift * torch.randn(chains, generator=g, dtype=DT) + trend)
            out[:, i] = level + walk + torch.randn(chains, generator=g, dtype=DT)
        return Trace(out, torch.zeros_like(out))

    def observable(t: Trace):
        return (t.loss - t.ref)[..., None].numpy()

    return draws, observable


def test_a_drifting_trace_is_extended_to_the_cap_and_is_an_error() -> None:
    """The sequential rule (``draws.stopping_rule.draws_until_precise``): a stationary trace around
    5 is precise and settled at once and quiet; one whose level still rises (by 2·10⁻³ a draw) moves
    between the halves of its draws however many there are, is extended to the cap, and is an
    error (``still_relaxing``: the move is over 5% of λ̂)."""
    from numeric.draws.stopping_rule import check_precision, draws_until_precise, precision_of

    def precision(t):
        return precision_of((t.loss - t.ref).numpy(), 1.0, 0.05, None)

    draws, _ = _trace_source(0.0, level=5.0)
    _, n, hist, p = draws_until_precise(draws, 220, precision, max_draws=20_000,
                                        stopped=lambda: False)  # fmt: skip
    assert p.done and n == 220 and len(hist) == 1 and check_precision(p, True) == ()
    draws, _ = _trace_source(0.0, level=5.0, trend=2e-3)
    _, n, hist, p = draws_until_precise(draws, 220, precision, max_draws=20_000,
                                        stopped=lambda: False)  # fmt: skip
    assert n == 20_000 and not p.settled and [k for k, _ in hist][:3] == [220, 440, 880]
    (f,) = [f for f in check_precision(p, True) if f.code == "still_relaxing"]
    assert f.severity == "error" and f.values["share"] > 0.05


def test_more_draws_are_projected_from_the_standard_error() -> None:
    """se/wanted = 1.5 asks for 1.1·1.5² − 1 = 1.475 times the draws so far; se/wanted = 2 for
    1.1·2² − 1 = 3.4 times, capped at MAX_GROWTH = 3 (measured again then); an ESS of 50 for
    1.1·100/50 − 1 = 1.2 times and of 10 for 10 times (not capped); λ̂ still moving for at least
    as many again; a standard error that is not finite doubles; at least a quarter more in any
    case."""
    from numeric.types import MAX_GROWTH, Precision

    settled = dict(drift=0.0, drift_stderr=1.0)
    assert abs(Precision(1.0, 0.075, 0.05, 500.0, **settled).more_draws(1000) - 1475) <= 1
    assert MAX_GROWTH == 3.0
    assert Precision(1.0, 0.1, 0.05, 500.0, **settled).more_draws(1000) == 3000
    assert abs(Precision(1.0, 0.1, 0.05, 10.0, **settled).more_draws(1000) - 10_000) <= 1
    assert abs(Precision(1.0, 0.01, 0.05, 50.0, **settled).more_draws(1000) - 1200) <= 1
    moving = Precision(1.0, 0.01, 0.05, 500.0, drift=0.5, drift_stderr=0.1)
    assert not moving.settled and moving.more_draws(1000) == 1000
    assert Precision(1.0, math.inf, 0.05, 500.0, **settled).more_draws(1000) == 1000
    assert Precision(1.0, 0.049, 0.05, 500.0, **settled).more_draws(1000) == 250
