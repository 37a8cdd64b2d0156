"""Seed 004's models and claim functions: exact λ, the SGD step, hazards, posterior, noise."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch

from verification.experiments.sticky import _hazard, basin_masses, elasticity, escape
from verification.experiments.sticky_2d import drift, drift_verdict, noise_vs_hessian, power_law
from verification.experiments.sticky_models import (
    Data,
    Poly1D,
    Poly2D,
    exact_lambdas,
    population_hessian,
    run_sgd,
)


@pytest.mark.parametrize(("d1", "d2"), [(1, 2), (2, 3), (3, 1)])
def test_exact_lambdas_at_the_1d_minima(d1, d2):
    lams = exact_lambdas(Poly1D(0.75, d1, d2))
    assert [x.lam for x in lams] == [sp.Rational(1, 2 * d1), sp.Rational(1, 2 * d2)]
    assert all(x.mult == 1 and isinstance(x.lam, sp.Rational) for x in lams)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_exact_lambdas_in_2d(d):
    origin, line = exact_lambdas(Poly2D(d))
    # K = r^8·w1^(2d) = r^(8+2d)·cos^(2d)θ near 0: Newton distance 4 + d; on the line K ~ w1^(2d)
    assert origin.lam == sp.Rational(1, 4 + d) and line.lam == sp.Rational(1, 2 * d)


def test_gradients_of_q_match_autograd():
    for model, w in ((Poly1D(1.3, 2, 3), [[0.4]]), (Poly2D(2), [[0.3, -0.7]])):
        x = torch.tensor(w, dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad(model.q(x).sum(), x)
        assert torch.allclose(g, model.grad_q(x.detach()), rtol=1e-12)


def test_one_sgd_step_by_hand():
    # one sample x = 2, y = 1, B = 1: ∇L_B = 2(x²Q − xy)Q'; Q = (w + 1)(w − 1)², Q' = 3w² − 2w − 1
    model = Poly1D(1.0, 1, 2)
    data = Data(np.array([2.0]), np.array([1.0]))
    w = 0.5
    q, dq = (w + 1) * (w - 1) ** 2, 3 * w**2 - 2 * w - 1
    expected = w - 0.1 * 2 * (4 * q - 2) * dq
    run = run_sgd(
        model,
        data,
        torch.tensor([[w]]),
        lr=0.1,
        batch_size=1,
        steps=1,
        generator=torch.Generator().manual_seed(0),
    )
    assert run.positions[-1, 0, 0] == pytest.approx(expected, rel=1e-14)


def test_momentum_follows_torch_sgd():
    model, data = Poly1D(1.0, 1, 2), Data(np.array([1.5]), np.array([-0.5]))
    run = run_sgd(
        model,
        data,
        torch.tensor([[0.2]]),
        lr=0.05,
        batch_size=1,
        steps=3,
        momentum=0.9,
        generator=torch.Generator().manual_seed(0),
    )
    w = torch.tensor([0.2], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.05, momentum=0.9)
    for _ in range(3):
        opt.zero_grad()
        ((1.5 * model.q(w[None])[0] + 0.5) ** 2).backward()
        opt.step()
    assert run.positions[-1, 0, 0] == pytest.approx(w.item(), rel=1e-8)


def test_hazard_counts_events_and_exposure():
    # exits at steps 3, 5 and never (T = 10 → stored as 11); window (0, 10]
    ex = np.array([3, 5, 11])
    events, exposure = _hazard(ex, 0, 10)
    assert events == 2 and exposure == 3 + 5 + 10
    # window (4, 10]: the first trajectory left before it
    assert _hazard(ex, 4, 10) == (1, 1 + 6)


def test_escape_rate_of_an_unstable_minimum_is_high_and_of_a_stable_one_zero():
    stable = escape(
        Poly1D(1.0, 1, 2), lr=0.01, batch_size=30, n=200, num_trajectories=50, steps=200, seed=0
    )
    assert stable.events == 0 and stable.rate == 0
    # lr·32w₀⁴ = 4 > 2: gradient descent itself is unstable at −w₀, every trajectory leaves
    unstable = escape(
        Poly1D(1.0, 1, 2),
        lr=0.125,
        batch_size=30,
        n=200,
        num_trajectories=50,
        steps=200,
        seed=0,
        t_min=0,
    )
    assert unstable.events == 50 and unstable.rate > 0.05


def test_elasticity_recovers_a_power_law():
    class R:
        def __init__(self, lr, rate):
            self.lr, self.rate, self.events = lr, rate, 10_000

    runs = [R(lr, 1e-3 * (lr / 0.01) ** 7) for lr in (0.01, 0.012, 0.015)]
    e = elasticity(runs, "lr")
    assert e.slope == pytest.approx(7, rel=1e-9)


def test_posterior_odds_grow_at_the_rate_set_by_the_lambdas():
    model = Poly1D(1.0, 2, 3)  # λ = 1/4 at −1, 1/6 at +1
    a = basin_masses(model, 1e7, -1.5, 1.5)
    b = basin_masses(model, 1e9, -1.5, 1.5)
    slope = ((b[1] - b[0]) - (a[1] - a[0])) / math.log(100)
    assert slope == pytest.approx(1 / 4 - 1 / 6, abs=2e-3)
    # a symmetric potential has equal basin masses
    s = basin_masses(Poly1D(1.0, 2, 2), 1e5, -1.5, 1.5)
    assert s[0] == pytest.approx(s[1], abs=1e-8)


def test_sgd_started_on_a_fully_degenerate_line_never_moves():
    r = drift(
        Poly2D(2),
        lr=0.05,
        batch_size=5,
        n=None,
        num_trajectories=20,
        steps=50,
        seed=0,
        box=(0.0, 0.4, 1.0),
    )
    assert r.rel_change == 0 and r.line_distance_end == 0
    assert r.along_change == 0 and r.along_change_stderr == 0
    with pytest.raises(ValueError, match="near the lines"):
        drift_verdict(r, r, [0.1, 0.2], [0.1, 0.2])


def test_drift_verdict_reads_runs_started_near_the_lines():
    """Started near (not on) the lines, both move along them; the partially degenerate one drifts
    toward the origin (z < −3), the fully degenerate one over ten times slower but not exactly 0."""
    kw = dict(lr=0.03, batch_size=30, n=None, num_trajectories=200, steps=2000)
    partial = drift(Poly2D(1), seed=1, box=(0.05, 0.4, 1.0), **kw)
    full = drift(Poly2D(2), seed=2, box=(0.05, 0.4, 1.0), **kw)
    assert partial.along_change < -3 * partial.along_change_stderr
    assert full.along_change != 0 and abs(full.along_change) < 0.1 * abs(partial.along_change)
    v = drift_verdict(partial, full, [0.1, 0.3], [0.1, 0.4])
    assert v.outcome == "reproduced"
    assert drift_verdict(partial, full, [0.1, 0.3], [0.4, 0.1]).outcome == "not reproduced"
    # a "full" line that drifts as fast as the partial one does not stick
    assert drift_verdict(partial, partial, [0.1, 0.3], [0.1, 0.4]).outcome == "not reproduced"


def test_noise_covariance_is_proportional_to_the_hessian_at_a_regular_zero():
    pts = noise_vs_hessian(
        Poly1D(1.0, 1, 2), (-1.0,), [1e-4], order=1, batch_size=10, num_batches=4000, seed=0
    )
    p = pts[0]
    assert p.ratio_predicted == pytest.approx(0.2, rel=1e-6)
    assert abs(p.ratio - p.ratio_predicted) < 4 * p.ratio_stderr


def test_noise_along_the_partial_line_vanishes_quadratically():
    pts = noise_vs_hessian(
        Poly2D(1), (0.0, 0.6), [1e-3, 1e-2], order=1, batch_size=10, num_batches=2000, seed=0
    )
    k, _ = power_law(pts, "c_along")
    assert k == pytest.approx(2.0, abs=0.05)


def test_population_hessian_by_hand():
    # K = Q², Q = (w + 1)(w − 1)²: at w = 0, Q = 1, Q' = −1, Q'' = −2, K'' = 2Q'² + 2QQ'' = −2
    H = population_hessian(Poly1D(1.0, 1, 2), torch.tensor([0.0]))
    assert H.item() == pytest.approx(-2.0, rel=1e-12)


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="w0"):
        Poly1D(0.0, 1, 2)
    with pytest.raises(ValueError, match="w_init"):
        run_sgd(
            Poly2D(1),
            None,
            torch.zeros(3, 1),
            lr=0.1,
            batch_size=2,
            steps=1,
            generator=torch.Generator(),
        )
    with pytest.raises(ValueError, match="bad settings"):
        run_sgd(
            Poly1D(1.0, 1, 2),
            Data(np.zeros(3), np.zeros(3)),
            torch.zeros(2, 1),
            lr=0.1,
            batch_size=4,
            steps=1,
            generator=torch.Generator(),
        )
