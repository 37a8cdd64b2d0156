"""The authors' NGD (Kaldi's online natural gradient with momentum, seed 003) and the paper arm:
the estimate's fixed point against an eigendecomposition, the smoothed solve against a dense
solve, the update schedule, the limit α → ∞ against torch's SGD; matched training loss."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from verification.errors import InvalidArgumentError
from verification.experiments.datasets import digits
from verification.experiments.llc import LLCPoint
from verification.experiments.online_ngd import AxisFisher, OnlineNGD, online_ngd
from verification.experiments.optimizers import sgd
from verification.experiments.paper_sgld import PaperSGLDOptions
from verification.experiments.saghir import Trained, compare_verdict, differences
from verification.experiments.saghir_paper import (
    PaperPoint,
    matched,
    matched_estimates,
    paper_curves,
    paper_end_points,
)
from verification.experiments.saghir_swap import swap

F64 = dict(dtype=torch.float64, device=torch.device("cpu"))


def _fisher(dim: int, alpha: float = 0.01, eta: float = 0.9) -> AxisFisher:
    return AxisFisher(dim, alpha=alpha, eta=eta, epsilon=1e-10, delta=5e-4, update_period=4, **F64)


def _rows_with_spectrum(eigenvalues: list[float], n: int, seed: int) -> tuple[torch.Tensor, ...]:
    """X [n, m] with XᵀX/n = Q·diag(eigenvalues)·Qᵀ exactly, and Q."""
    m = len(eigenvalues)
    g = torch.Generator().manual_seed(seed)
    Q, _ = torch.linalg.qr(torch.randn(m, m, generator=g, dtype=torch.float64))
    P, _ = torch.linalg.qr(torch.randn(n, m, generator=g, dtype=torch.float64))  # PᵀP = I
    X = math.sqrt(n) * P @ torch.diag(torch.tensor(eigenvalues, dtype=torch.float64).sqrt()) @ Q.T
    return X, Q


def test_the_estimate_converges_to_the_top_eigenpairs_plus_the_mean_of_the_rest():
    # η = 1: each update fits T = XᵀX/N alone; the subspace iteration converges to its top r = 3
    # eigenvectors, the other eigenvalues are replaced by their mean (Povey et al. 2015)
    spectrum = [10.0, 5.0, 2.0, 1.0, 0.5, 0.2]
    X, Q = _rows_with_spectrum(spectrum, n=20, seed=0)
    f = _fisher(6, eta=1.0)
    for _ in range(60):
        f.precondition(X)
    rest = float(np.mean(spectrum[3:]))
    expected = Q @ torch.diag(torch.tensor([10.0, 5.0, 2.0, rest, rest, rest], **F64)) @ Q.T
    assert f.rank == 3
    assert torch.allclose(f.matrix(), expected, atol=1e-8)
    assert f.rho == pytest.approx(rest, rel=1e-10)


def test_a_step_is_the_smoothed_inverse_applied_and_rescaled_to_the_gradients_size():
    X, _ = _rows_with_spectrum([4.0, 3.0, 1.0, 0.1, 0.05], n=12, seed=1)
    f = _fisher(5, alpha=0.3)
    for _ in range(5):
        f.precondition(X * (1 + 0.1 * torch.rand(1, dtype=torch.float64).item()))
    F = f.matrix()
    Y = torch.randn(7, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    smoothed = F + 0.3 * torch.trace(F) / 5 * torch.eye(5, dtype=torch.float64)
    direction = torch.linalg.solve(smoothed, Y.T).T  # X·F_s⁻¹ (F_s symmetric)
    expected = direction * Y.norm() / direction.norm()
    assert torch.allclose(f.precondition(Y), expected, atol=1e-12)


def test_the_estimate_is_updated_on_the_first_ten_steps_then_every_fourth():
    X, _ = _rows_with_spectrum([3.0, 2.0, 1.0, 0.5], n=8, seed=3)
    f = _fisher(4)
    g = torch.Generator().manual_seed(4)
    changed = []
    for _ in range(16):
        before = f.matrix().clone()
        f.precondition(X + 0.5 * torch.randn(8, 4, generator=g, dtype=torch.float64))
        changed.append(not torch.equal(before, f.matrix()))
    assert changed == [True] * 10 + [False, False, True, False, False, False]


def test_with_infinite_smoothing_it_is_torch_sgd_with_nesterov_momentum():
    shapes = [(5, 7), (5,), (2, 3, 4)]
    g = torch.Generator().manual_seed(5)
    start = [torch.randn(s, generator=g, dtype=torch.float64) for s in shapes]
    ours = [torch.nn.Parameter(p.clone()) for p in start]
    theirs = [torch.nn.Parameter(p.clone()) for p in start]
    a = OnlineNGD(ours, 0.05, alpha=1e14, momentum=0.9, nesterov=True)
    b = torch.optim.SGD(theirs, 0.05, momentum=0.9, nesterov=True)
    for _ in range(20):
        for p, q, s in zip(ours, theirs, shapes, strict=True):
            grad = torch.randn(s, generator=g, dtype=torch.float64)
            p.grad, q.grad = grad.clone(), grad.clone()
        a.step()
        b.step()
    for p, q in zip(ours, theirs, strict=True):
        assert torch.allclose(p.detach(), q.detach(), rtol=0, atol=1e-9)
    # and a moderate α moves elsewhere: the preconditioner is not the identity
    c = torch.nn.Parameter(start[0].clone())
    opt = OnlineNGD([c], 0.05, alpha=0.01, momentum=0.0, nesterov=False)
    grad = torch.randn(shapes[0], generator=g, dtype=torch.float64)
    c.grad = grad.clone()
    opt.step()
    step = (start[0] - c.detach()) / 0.05
    assert float(step.norm()) == pytest.approx(float(grad.norm()), rel=1e-12)  # the size is kept
    assert float((step * grad).sum() / (step.norm() * grad.norm())) < 0.999


def test_bad_settings_are_refused():
    with pytest.raises(InvalidArgumentError, match="lr"):
        online_ngd(0.0)
    with pytest.raises(InvalidArgumentError, match="eta"):
        online_ngd(0.01, eta=0.0)
    with pytest.raises(InvalidArgumentError, match="eta"):
        online_ngd(0.01, eta=1.5)
    with pytest.raises(InvalidArgumentError, match="Nesterov"):
        online_ngd(0.01, momentum=0.0)
    with pytest.raises(InvalidArgumentError, match="update_period"):
        online_ngd(0.01, update_period=0)
    with pytest.raises(ValueError, match="size 1"):
        _fisher(1)


def _point(opt: str, seed: int, step: int, loss: float, llc: float) -> PaperPoint:
    return PaperPoint("4-3-2", opt, seed, step, loss, llc, 0.1, 1.0)


def test_matched_reads_each_optimizer_where_it_first_reaches_the_level_both_reach():
    pts = [
        _point("SGD", 0, 0, 2.0, 0.0),
        _point("SGD", 0, 10, 0.5, 1.0),
        _point("SGD", 0, 20, 0.2, 1.5),
        _point("NGD", 0, 0, 2.0, 0.0),
        _point("NGD", 0, 10, 0.9, 2.0),
        _point("NGD", 0, 20, 0.4, 2.5),  # NGD ends higher: the level is 0.4
    ]
    (pair,) = matched(pts)
    assert pair.level == 0.4
    assert dict(pair.steps) == {"SGD": 20, "NGD": 20}
    pts[2] = _point("SGD", 0, 20, 0.3, 1.5)
    pts[1] = _point("SGD", 0, 10, 0.35, 1.0)
    (pair,) = matched(pts)
    assert dict(pair.steps) == {"SGD": 10, "NGD": 20}  # SGD was below 0.4 already at step 10
    assert dict(pair.paper_llc) == {"SGD": 1.0, "NGD": 2.5}
    ends = paper_end_points(pts)
    assert [(r.optimizer, r.steps, r.llc.llc) for r in ends] == [("SGD", 20, 1.5), ("NGD", 20, 2.5)]
    assert ends[0].llc.num_params == 4 * 3 + 3 + 3 * 2 + 2


def test_the_paper_arm_runs_and_matched_checkpoints_are_retrained_to_the_same_loss():
    torch.set_num_threads(1)
    data = digits(torch.Generator().manual_seed(0))
    sampler = PaperSGLDOptions(
        step_size=1e-4, num_steps=100, num_chains=2, batch_size=128, gamma=100.0, nbeta="B/log B"
    )
    pts = paper_curves(data, [[64, 6, 10]], (0, 1), steps=120, every=60, sampler=sampler)
    assert len(pts) == 2 * 2 * 3
    start = {(p.seed, p.optimizer): p.train_loss for p in pts if p.step == 0}
    assert start[(0, "SGD")] == start[(0, "NGD")] != start[(1, "SGD")]  # one start per seed
    ends = [p for p in pts if p.step == 120]
    # both optimizers train (NGD at α = 10⁻² slowly); tr H is read at the end only
    assert all(p.train_loss < start[(p.seed, p.optimizer)] - 0.05 for p in ends)
    assert all(math.isfinite(p.trace) == (p.step == 120) for p in pts)
    pairs = matched(pts)
    est = dict(num_chains=2, num_burnin=20, num_draws=20, seed=0)
    runs = matched_estimates(pairs, data, estimator=est, trace_samples=4)
    recorded = {(p.seed, p.optimizer, p.step): p.train_loss for p in pts}
    for r in runs:
        assert r.train_loss == pytest.approx(recorded[(r.seed, r.optimizer, r.steps)], rel=1e-12)


def _est(llc: float, worst: str) -> LLCPoint:
    nan = math.nan
    return LLCPoint(0, llc, 0.1, nan, nan, nan, nan, 10, "", worst, nan)


def test_matched_verdict_is_inconclusive_when_most_estimates_are_unusable():
    runs = []
    for s in range(5):
        bad = "error" if s < 3 else "none"
        runs.append(
            Trained(
                "a",
                "NGD",
                s,
                10,
                0.1,
                0.2,
                0.9,
                _est(10 + 0.1 * s, bad),
                5 + s + 0.3 * (s % 2),
                0.1,
            )
        )
        runs.append(
            Trained("a", "SGD", s, 10, 0.1, 0.2, 0.9, _est(8 - 0.1 * s, "none"), 4 + s, 0.1)
        )
    diffs = differences(runs, "NGD", "SGD")
    assert compare_verdict(diffs, runs, matched_loss=True).outcome == "reproduced"
    v = compare_verdict(diffs, runs, matched_loss=True, require_usable=True)
    assert v.outcome == "inconclusive" and "error finding" in v.sentence
    assert "matched training loss" in v.sentence


def test_swap_takes_any_estimate_of_a_network():
    data = digits(torch.Generator().manual_seed(0))
    calls = []

    def estimate(net: torch.nn.Module, seed: int, step: int) -> LLCPoint:
        calls.append((seed, step))
        weight = float(next(net.parameters()).detach().abs().sum())  # the network it was given
        return _est(weight, "none")

    conts = {"SGD": sgd(0.01, 0.9, nesterov=True), "NGD": online_ngd(0.01, 0.1)}
    runs = swap(
        data, [64, 4, 10], conts["SGD"], conts, (3,), steps_before=5, steps_after=7,
        batch_size=32, estimator=estimate,
    )  # fmt: skip
    assert calls == [(3, 5), (3, 12), (3, 12)]
    (run,) = runs
    # the continuations moved the first layer from where SGD left it, each its own way
    assert run.change("SGD")[0] != 0 and run.change("NGD")[0] != run.change("SGD")[0]
