"""Lau et al.'s entropy-SGD claim by the authors' procedure (``entropy_paper``), both arms."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from verification.experiments.datasets import Dataset
from verification.experiments.entropy import MinimumPoint, entropy_verdict
from verification.experiments.entropy_paper import (
    PAPER_SAMPLER,
    entropy_paper_claim,
    paper_optimizers,
)
from verification.experiments.llc import LLCPoint


def test_the_settings_are_the_authors_code():
    # edmundlth/scalable_learning_coefficient_with_sgld @ 474a204 (mnist_expt.py, experiment.py,
    # EntropySGD.py) with the figure's runs' lr 10⁻² and batch 512 (plot_mnist_expt.ipynb)
    s = PAPER_SAMPLER
    assert (s.step_size, s.num_steps, s.num_chains, s.batch_size) == (1e-5, 400, 4, 512)
    assert (s.gamma, s.nbeta, s.burn_in_steps, s.bounding_box) == (100.0, "n/log n", 0, None)
    sgd, esgd = paper_optimizers()
    assert (sgd.kind, sgd.lr, sgd.momentum, sgd.nesterov) == ("sgd", 1e-2, 0.9, True)
    assert (esgd.kind, esgd.lr, esgd.inner_steps, esgd.inner_lr) == ("entropy_sgd", 1e-2, 5, 0.1)
    assert (esgd.noise, esgd.scope, esgd.scope_growth, esgd.averaging) == (1e-4, 1e-4, 1e-3, 0.75)
    assert (esgd.momentum, esgd.nesterov, esgd.inner_momentum) == (0.9, False, True)


def _points(label: str, values: list[float], errors: frozenset[int] = frozenset()):
    def est(i: int, v: float) -> LLCPoint:
        worst = "error" if i in errors else "none"
        return LLCPoint(0, v, 0.1, 50.0, 1.0, 100.0, 0.0, 10, "", worst, 1.0)

    return [MinimumPoint(label, i, 0.1, 1.0, 0.9, est(i, v)) for i, v in enumerate(values)]


def test_the_true_arm_leaves_out_seeds_with_an_error_finding():
    a, b = "SGD", "entropy-SGD"
    sgd_llc = [10.0, 11.0, 12.0, 10.5, 9.0]
    esgd_llc = [7.0, 8.0, 7.5, 8.2, 30.0]  # seed 4 reads high, and its SGD estimate is an error
    pts = _points(a, sgd_llc, frozenset({4})) + _points(b, esgd_llc)
    kept = entropy_verdict(pts, a, b, void_errors=True)
    assert kept.outcome == "reproduced"
    d = np.array(esgd_llc[:4]) - np.array(sgd_llc[:4])
    assert kept.to_dict()["paired difference (entropy-SGD − SGD)"] == pytest.approx(d.mean())
    assert kept.to_dict()["seeds voided"] == 1
    # without voiding, seed 4 stays in and its +21 swamps the rest
    assert entropy_verdict(pts, a, b).outcome == "inconclusive"
    # fewer than three pairs left: no decision, whatever the two say
    few = _points(a, sgd_llc[:4], frozenset({0, 1})) + _points(b, esgd_llc[:4])
    v = entropy_verdict(few, a, b, void_errors=True)
    assert v.outcome == "inconclusive" and "2 pairs left" in v.sentence


def test_both_arms_read_the_same_trained_networks():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(60, 4, generator=g)
    y = (x[:, 0] > 0.5).long()
    data = Dataset("toy", x[:40], y[:40], x[40:], y[40:], 2)
    sampler = dataclasses.replace(PAPER_SAMPLER, num_steps=60, batch_size=10)
    res = entropy_paper_claim(
        data, [3], 20, [0, 1], sampler=sampler, batch_size=10,
        package=dict(num_chains=2, num_burnin=40, num_draws=80),
    )  # fmt: skip
    assert res.true is not None
    key = [(p.optimizer, p.seed) for p in res.paper.points]
    assert key == [(p.optimizer, p.seed) for p in res.true.points]
    assert key == [(lab, s) for s in (0, 1) for lab in ("SGD+Nesterov(0.9)", "entropy-SGD(L=5)")]
    for p, q in zip(res.paper.points, res.true.points, strict=True):
        assert p.train_loss == q.train_loss and p.train_accuracy == q.train_accuracy
        assert math.isfinite(p.estimate.llc) and math.isfinite(q.estimate.llc)
    # the training steps: 20 gradients are 20 SGD steps and 4 entropy-SGD steps of L = 5
    assert [p.estimate.step for p in res.paper.points] == [20, 4, 20, 4]
    # the paper arm's verdict is the paired test on these points' own numbers
    llc = {(p.optimizer, p.seed): p.estimate.llc for p in res.paper.points}
    d = [llc["entropy-SGD(L=5)", s] - llc["SGD+Nesterov(0.9)", s] for s in (0, 1)]
    got = res.paper.verdict.to_dict()["paired difference (entropy-SGD − SGD)"]
    assert got == pytest.approx(np.mean(d))
