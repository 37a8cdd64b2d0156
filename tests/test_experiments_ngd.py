"""NGD (seed 003): the step against a hand computation, the Woodbury solve, training; the verdicts."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch import nn

from verification.experiments import mse_loss, train
from verification.experiments.llc import LLCPoint
from verification.experiments.networks import relu_mlp
from verification.experiments.ngd import NGD, damped_fisher_solve, ngd, per_sample_gradients
from verification.experiments.saghir import (
    Trained,
    compare_verdict,
    differences,
    smoothing_verdict,
)
from verification.experiments.saghir_swap import SwapRun, swap_verdict


def _linear(w: list[float]) -> nn.Linear:
    net = nn.Linear(len(w), 1, bias=False, dtype=torch.float64)
    with torch.no_grad():
        net.weight.copy_(torch.tensor([w], dtype=torch.float64))
    return net


def test_ngd_step_matches_a_hand_computation():
    # f(x) = w·x, ℓ_i = ½(w·x_i − y_i)², so g_i = (w·x_i − y_i)·x_i; two samples, D = 2
    w = np.array([0.5, -1.0])
    X = np.array([[1.0, 2.0], [3.0, -1.0]])
    y = np.array([1.0, 0.0])
    r = X @ w - y  # residuals (−2.5, 2.5)
    G = r[:, None] * X  # per-sample gradients
    g = G.mean(0)
    F = G.T @ G / 2
    alpha, lr = 0.3, 0.1
    kappa = alpha / 2 * np.trace(F)
    expected = w - lr * np.linalg.solve(F + kappa * np.eye(2), g)

    net = _linear(list(w))
    data = (torch.tensor(X), torch.tensor(y)[:, None])
    train(net, mse_loss, data, ngd(lr, alpha=alpha), 1, generator=torch.Generator().manual_seed(0))
    assert net.weight.detach().numpy()[0] == pytest.approx(expected, rel=1e-12)


def test_per_sample_gradients_match_autograd_row_by_row():
    net = relu_mlp([3, 4, 2], generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    y = torch.tensor([0, 1, 1, 0, 1])
    G = per_sample_gradients(net, torch.nn.functional.cross_entropy, x, y)
    for i in range(5):
        net.zero_grad()
        torch.nn.functional.cross_entropy(net(x[i : i + 1]), y[i : i + 1]).backward()
        row = torch.cat([p.grad.reshape(-1) for p in net.parameters()])
        assert torch.allclose(G[i], row, atol=1e-12)


def test_woodbury_solve_equals_the_dense_solve_and_tends_to_sgd():
    gen = torch.Generator().manual_seed(0)
    G = torch.randn(6, 20, generator=gen, dtype=torch.float64)
    g = G.mean(0)
    d, kappa = damped_fisher_solve(G, g, alpha=0.5, eps=1e-10)
    dense = torch.linalg.solve(G.T @ G / 6 + kappa * torch.eye(20, dtype=torch.float64), g)
    assert kappa == pytest.approx(0.5 / 20 * float(G.square().sum() / 6))
    assert torch.allclose(d, dense, rtol=1e-10)
    # heavy smoothing: the NGD direction is the gradient divided by κ
    d_big, k_big = damped_fisher_solve(G, g, alpha=1e8, eps=1e-10)
    assert torch.allclose(d_big * k_big, g, rtol=1e-5)
    # the ε floor: a zero Fisher gives κ = α·ε/D
    z = torch.zeros(3, 4, dtype=torch.float64)
    _, k0 = damped_fisher_solve(z, z[0], 2.0, 1e-3)
    assert k0 == pytest.approx(2.0 * 1e-3 / 4)


def test_ngd_training_lowers_the_loss_and_is_reproducible():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, generator=gen, dtype=torch.float64)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]], dtype=torch.float64)

    def run():
        g = torch.Generator().manual_seed(1)
        net = relu_mlp([3, 8, 1], generator=g, dtype=torch.float64)
        r = train(
            net,
            mse_loss,
            (x, y),
            ngd(0.05, alpha=0.1),
            60,
            generator=g,
            batch_size=16,
            checkpoint_at=[0],
        )
        return net, r

    net, r = run()
    assert r.final_loss < 0.5 * r.checkpoints[0].loss
    net2, _ = run()
    assert all(torch.equal(a, b) for a, b in zip(net.parameters(), net2.parameters()))
    assert r.optimizer.label == "NGD(α=0.1)"


def test_ngd_step_without_its_batch_is_an_error():
    net = _linear([1.0, 2.0])
    opt = NGD(net.parameters(), 0.1)
    with pytest.raises(RuntimeError, match="observe_batch"):
        opt.step(lambda: net.weight.sum())
    other = _linear([0.0, 0.0])
    with pytest.raises(ValueError, match="parameters"):
        opt.observe_batch(
            other,
            mse_loss,
            torch.zeros(1, 2, dtype=torch.float64),
            torch.zeros(1, 1, dtype=torch.float64),
        )
    with pytest.raises(ValueError, match="positive"):
        ngd(0.0)


def _pt(llc: float, se: float = 0.1, findings: str = "") -> LLCPoint:
    nan = math.nan
    return LLCPoint(0, llc, se, nan, nan, nan, nan, 10, findings, "none", nan)


def _trained(
    opt: str, widths: str, llc: float, trace: float, seed: int, findings: str = ""
) -> Trained:
    return Trained(widths, opt, seed, 10, 0.1, 0.2, 0.9, _pt(llc, findings=findings), trace, 0.1)


def test_compare_verdict_follows_the_t_tests():
    rng = np.random.default_rng(0)
    runs = []
    for s in range(6):
        runs.append(_trained("NGD", "a", 10 + rng.normal(0, 0.3), 5 + rng.normal(0, 0.3), s))
        runs.append(_trained("SGD", "a", 8 + rng.normal(0, 0.3), 4 + rng.normal(0, 0.3), s))
    diffs = differences(runs, "NGD", "SGD")
    assert [d.quantity for d in diffs] == ["λ̂", "tr H"]
    assert diffs[0].difference == pytest.approx(
        np.mean([r.llc.llc for r in runs if r.optimizer == "NGD"])
        - np.mean([r.llc.llc for r in runs if r.optimizer == "SGD"])
    )
    assert all(d.p < 0.01 for d in diffs)  # paired, 5 df
    # paired by seed: t of the per-seed differences, by hand
    d = np.array([r.llc.llc for r in runs if r.optimizer == "NGD"]) - np.array(
        [r.llc.llc for r in runs if r.optimizer == "SGD"]
    )
    assert diffs[0].t == pytest.approx(d.mean() / (d.std(ddof=1) / math.sqrt(d.size)))
    assert compare_verdict(diffs).outcome == "reproduced"
    flipped = differences(runs, "SGD", "NGD")
    assert compare_verdict(flipped).outcome == "not reproduced"
    # end points that are not minima make λ̂ no LLC: the comparison is then inconclusive
    bad = [
        _trained(
            r.optimizer, r.widths, r.llc.llc, r.trace, r.seed, "below_reference_loss (warning)"
        )
        if r.optimizer == "SGD"
        else r
        for r in runs
    ]
    v = compare_verdict(differences(bad, "NGD", "SGD"), bad)
    assert v.outcome == "inconclusive" and "not minima" in v.sentence


def test_smoothing_and_swap_verdicts():
    alphas = [1e-3, 1e-2, 1e-1]
    runs = [
        _trained("NGD", "a", 10 + 2 * math.log10(a) + 0.01 * s, 1, s)
        for s in (0, 1)
        for a in alphas
    ]
    # λ̂ = 10 + 2·log10 α rises with α: the paper's claim (falls with α) is not reproduced
    v = smoothing_verdict(runs, alphas * 2)
    assert v.outcome == "not reproduced"
    assert v.numbers[0].value == pytest.approx(2 / math.log(10), rel=1e-6)
    with pytest.raises(ValueError, match="values of α"):
        smoothing_verdict(runs, alphas)
    swaps = [
        SwapRun(s, _pt(10), (("SGD", _pt(10.05)), ("NGD", _pt(12 + 0.1 * s)), ("hi", _pt(9.9))))
        for s in range(4)
    ]
    v = swap_verdict(swaps, "NGD", ["SGD", "hi"])
    assert v.outcome == "reproduced"
    assert v.numbers[0].value == pytest.approx(2.15)


def test_smoothing_verdict_voids_an_alpha_whose_estimates_carry_errors():
    alphas = [1e-3, 1e-2, 1e-1]
    runs = [
        _trained("NGD", "a", 10 - 2 * math.log10(a) + 0.01 * s, 1, s)
        for s in (0, 1)
        for a in alphas
    ]
    assert smoothing_verdict(runs, alphas * 2, require_usable=True).outcome == "reproduced"
    # one α's two estimates flagged with an error: more than half, so the reading is void
    flagged = [
        replace(r, llc=replace(r.llc, worst="error")) if a == 1e-1 else r
        for r, a in zip(runs, alphas * 2)
    ]
    assert smoothing_verdict(flagged, alphas * 2).outcome == "reproduced"
    v = smoothing_verdict(flagged, alphas * 2, require_usable=True)
    assert v.outcome == "inconclusive" and "error finding" in v.sentence


def test_swap_verdict_voids_when_most_seeds_carry_an_error_finding():
    def run(s, worst_before):
        before = replace(_pt(10), worst=worst_before)
        return SwapRun(s, before, (("SGD", _pt(10.05)), ("NGD", _pt(12 + 0.1 * s))))

    clean = [run(s, "none") for s in range(4)]
    assert swap_verdict(clean, "NGD", ["SGD"], require_usable=True).outcome == "reproduced"
    two = [run(s, "error" if s < 2 else "none") for s in range(4)]  # half: not more than half
    assert swap_verdict(two, "NGD", ["SGD"], require_usable=True).outcome == "reproduced"
    three = [run(s, "error" if s < 3 else "none") for s in range(4)]
    assert swap_verdict(three, "NGD", ["SGD"]).outcome == "reproduced"
    v = swap_verdict(three, "NGD", ["SGD"], require_usable=True)
    assert v.outcome == "inconclusive" and "error finding" in v.sentence
