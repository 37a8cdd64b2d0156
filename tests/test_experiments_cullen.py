"""Seed 002: the modular-addition task, the quadratic network, metrics, and the exact values."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

import rlct
from verification.experiments.cullen import (
    Estimator,
    laplace_llc,
    polish,
    train_quadratic,
)
from verification.experiments.cullen_dynamics import (
    GrokRun,
    SensitivityPoint,
    lr_verdict,
    sensitivity_verdict,
    tracking_verdict,
)
from verification.experiments.cullen_scaling import FIT_LOSS, scaling_point
from verification.experiments.llc import LLCPoint
from verification.experiments.modular import (
    FullDataLoss,
    QuadraticNet,
    Snapshot,
    accuracy,
    centred_mse,
    grokking_severity,
    modular_task,
    paper_formula,
    sample_cap,
)


def test_task_split_and_exact_inputs():
    t = modular_task(7, 0.5, seed=3)
    assert t.n_train == 24 and t.x_val.shape == (25, 14)
    X, Y = rlct.modular_addition_data(7)
    assert np.array_equal(t.exact_inputs(), X[t.train_rows])
    assert torch.equal(t.y_train, torch.as_tensor(Y[t.train_rows], dtype=torch.float64))
    assert modular_task(7, 0.5, seed=3).train_rows.tolist() == t.train_rows.tolist()
    with pytest.raises(ValueError, match="fraction"):
        modular_task(7, 1.0, seed=0)


def test_quadratic_net_is_v_times_squared_projections():
    net = QuadraticNet(4, 3, 5, generator=torch.Generator().manual_seed(0))
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    W, V = net.W.detach(), net.V.detach()
    for k in range(3):
        Qk = sum(V[k, j] * torch.outer(W[:, j], W[:, j]) for j in range(5))
        assert torch.allclose(net(x)[:, k], torch.einsum("ni,ij,nj->n", x, Qk, x))


def test_centred_loss_ignores_a_constant_offset_and_accuracy_can_see_it():
    y = torch.eye(3, dtype=torch.float64).repeat(2, 1)
    pred = y.clone()
    shifted = pred + torch.tensor([0.0, 0.0, 5.0], dtype=torch.float64)
    assert centred_mse(shifted, y).item() == pytest.approx(0.0, abs=1e-15)
    assert accuracy(shifted, y) == pytest.approx(1 / 3)
    assert accuracy(shifted, y, centre=shifted.mean(0)) == 1.0
    # ½·mean‖r − r̄‖²: residual (1, 0, 0) on one row of two
    r = torch.zeros(2, 3, dtype=torch.float64)
    r[0, 0] = 1.0
    assert centred_mse(y[:2] - r, y[:2]).item() == pytest.approx(0.5 * (0.25 + 0.25) / 2)


def test_full_data_loss_ignores_the_batch():
    t = modular_task(5, 0.6, seed=0)
    net = QuadraticNet(10, 5, 3, generator=torch.Generator().manual_seed(0))
    loss = FullDataLoss(net, *t.train)
    params = {k: v.detach() for k, v in net.named_parameters()}
    whole = centred_mse(net(t.x_train), t.y_train)
    assert loss(params, (torch.zeros(2, 1),)).item() == pytest.approx(whole.item())
    assert loss.data()[0].shape == (t.n_train, 1)


def _snap(step, at, av):
    return Snapshot(step, 0.0, 0.0, 0.0, 0.0, at, av)


def test_grokking_severity_by_hand():
    snaps = [_snap(0, 0.1, 0.1), _snap(1, 1.0, 0.2), _snap(2, 1.0, 0.96)]
    assert grokking_severity(snaps) == pytest.approx((0 + 0.8 + 0.04) / 3)
    assert grokking_severity(snaps[:2]) == 0.0  # never reached 0.95


def test_formula_cap_and_laplace():
    assert paper_formula(53, 1024) == 1024 * 158 / 2
    assert sample_cap(53, 1124) == 53 * 1123 / 2
    eigs = np.array([-1e-3, 0.0, 1.0, 3.0])
    # ½[1·nβ/(nβ + γ) + 3nβ/(3nβ + γ)] with nβ = 2, γ = 2
    assert laplace_llc(eigs, 2.0, 2.0) == pytest.approx(0.5 * (0.5 + 0.75))
    assert laplace_llc(eigs, 1e12, 1.0) == pytest.approx(1.0, rel=1e-9)


def test_polish_reaches_a_critical_point():
    t = modular_task(5, 0.6, seed=0)
    net, snaps, _ = train_quadratic(t, 4, lr=0.01, weight_decay=0.1, steps=50, seed=0)
    grad = polish(net, t)
    assert grad < 1e-6
    assert centred_mse(net(t.x_train), t.y_train).item() <= snaps[-1].train_loss


def test_scaling_point_at_a_small_size():
    t = modular_task(5, 0.6, seed=0)  # N = 15: cap p(N − 1)/2 = 35
    pt = scaling_point(
        t,
        4,
        lr=0.01,
        weight_decay=0.1,
        steps=300,
        seed=0,
        settings=Estimator(2, 50, 50),
        cold=(1e4, 100.0),
    )
    assert pt.exact and pt.exact_lam == pt.generic_rank / 2
    # 36 parameters, N = 15 samples of 5 outputs: it memorises, and the polished point fits them
    assert pt.polished_loss <= FIT_LOSS and pt.fits
    # each unit loses its scaling and the input null direction: rank ≤ K(3p − 2) = 52
    assert pt.exact_lam <= min(4 * 13, 2 * pt.cap) / 2 + 1e-9
    assert pt.paper == 4 * 14 / 2 and pt.cap == 35
    assert math.isfinite(pt.llc.llc) and math.isfinite(pt.laplace_cold)
    assert pt.laplace < pt.laplace_cold <= pt.exact_lam + 1e-6


def _pt(step, llc, se=1.0):
    nan = math.nan
    return LLCPoint(step, llc, se, nan, nan, nan, nan, 10, "", "none", nan)


def _run(lr, gsm, llcs, val):
    snaps = tuple(Snapshot(s, 0.1, v, 1.0, 0.5, 1.0, 0.5) for s, v in zip(range(0, 500, 100), val))
    pts = tuple(_pt(s, x) for s, x in zip(range(100, 500, 100), llcs))
    return GrokRun(11, 8, 60, lr, 0.1, 400, 0, snaps, pts, gsm, 0.0, 200, 100)


def test_tracking_and_lr_verdicts_on_synthetic_runs():
    # λ̂ rises and falls with the validation loss: reproduced
    up_down = _run(0.01, 0.2, [20, 30, 12, 5], [1.0, 2.0, 3.0, 1.5, 1.0])
    v = tracking_verdict(up_down)
    assert v.outcome == "reproduced" and v.numbers[0].value == pytest.approx(1.0)
    # λ̂ only rises while the validation loss falls: not reproduced
    assert tracking_verdict(
        _run(0.01, 0.2, [5, 10, 20, 30], [3.0, 2.5, 2.0, 1.0, 0.5])
    ).outcome == ("not reproduced")
    runs = [
        _run(lr, math.exp(-50 * lr), [10, 40 - 500 * lr, 12, 5], [1, 2, 3, 2, 1])
        for lr in (0.001, 0.01, 0.02, 0.04)
    ]
    v = lr_verdict(runs)
    assert v.outcome == "reproduced"
    assert v.numbers[0].value == pytest.approx(-50, rel=1e-9)
    # three runs whose log GSM falls at t = −2.85 with 1 df: two-sided p ≈ 0.21, one-sided 0.11,
    # not significant (two standard errors used to pass it); the peak unchanged: inconclusive
    noisy = [
        _run(lr, math.exp(g), [10, 20, 12, 5], [1, 2, 3, 2, 1])
        for lr, g in ((0.001, 0.0), (0.002, -0.4), (0.004, -0.3))
    ]
    v = lr_verdict(noisy)
    p = {m.name: m.value for m in v.numbers}["one-sided p of the GSM slope (t, k − 2 df)"]
    assert v.outcome == "inconclusive" and 0.05 < p < 0.5
    # the peak rising with lr, significantly: not reproduced
    rising = [
        _run(lr, math.exp(-50 * lr), [10, 40 + 500 * lr, 12, 5], [1, 2, 3, 2, 1])
        for lr in (0.001, 0.01, 0.02, 0.04)
    ]
    assert lr_verdict(rising).outcome == "not reproduced"


def test_sensitivity_verdict_counts_falling_slopes():
    pts = [
        SensitivityPoint(g, e, _pt(0, 100 / g**0.5 * e * 1e4, 0.1), 50.0)
        for g in (1.0, 4.0, 16.0)
        for e in (1e-4, 1e-3)
    ]
    v = sensitivity_verdict(pts, 248.0)
    assert v.outcome == "reproduced"
    assert v.numbers[0].value == pytest.approx(-0.5, abs=1e-6)


def test_lr_verdict_reads_raw_accuracies_when_asked():
    # GSM on centred accuracies 0 (no run counts as grokked), on raw ones decaying as e^(−50·lr)
    runs = [
        replace(
            _run(lr, 0.0, [10, 40 - 500 * lr, 12, 5], [1, 2, 3, 2, 1]), gsm_raw=math.exp(-50 * lr)
        )
        for lr in (0.001, 0.01, 0.02, 0.04)
    ]
    assert lr_verdict(runs).outcome == "inconclusive"  # no GSM slope: the peak alone falls
    v = lr_verdict(runs, raw=True)
    assert v.outcome == "reproduced" and v.numbers[0].value == pytest.approx(-50, rel=1e-9)
