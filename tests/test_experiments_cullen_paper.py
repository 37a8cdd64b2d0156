"""Cullen et al. Figs 1–2 by the authors' procedure (``cullen_paper``): settings, network,
stopping rule, and both arms' rules on records built by hand."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from verification.errors import InvalidArgumentError
from verification.experiments.cullen_paper import (
    PAPER_SAMPLER,
    PAPER_TRAINING,
    PUBLISHED,
    PaperQuadraticNet,
    PaperScalingPoint,
    PaperTraining,
    exponent_intervals,
    paper_scaling_point,
    paper_scaling_verdicts,
    scaling_outcome,
    train_paper,
)
from verification.experiments.cullen_paper_tracking import (
    authors_loss,
    paper_lr_sweep,
    paper_tracking_run,
)
from verification.experiments.modular import modular_task


def test_the_settings_are_the_authors_recorded_runs():
    # geom_phase_transitions @ b4fc699, results/sweep_p_embed_new/*/params.csv
    t = PAPER_TRAINING
    assert (t.lr, t.weight_decay, t.batch_size, t.train_fraction) == (1e-2, 1e-5, 64, 0.4)
    assert (t.checkpoint_every, t.max_steps) == (100, 100_000)
    s = PAPER_SAMPLER
    assert (s.step_size, s.gamma, s.num_chains, s.batch_size) == (5e-4, 5.0, 3, 64)
    assert (s.num_steps - s.burn_in_steps, s.burn_in_steps, s.nbeta) == (500, 100, "B/log B")
    assert PUBLISHED[53, 200] == 1008.8 and PUBLISHED[71, 1600] == 7061.4 and len(PUBLISHED) == 19


def test_the_network_is_v_times_the_square_of_wx_with_linear_layer_bounds():
    net = PaperQuadraticNet(5, 7, torch.Generator().manual_seed(0))
    assert net.W.shape == (7, 10) and net.V.shape == (5, 7)
    assert float(net.W.detach().abs().max()) <= 1 / math.sqrt(10)
    assert float(net.V.detach().abs().max()) <= 1 / math.sqrt(7)
    x = torch.zeros(1, 10)
    x[0, 1] = x[0, 5 + 3] = 1.0  # a = 1, b = 3
    h = net.W[:, 1] + net.W[:, 8]
    expected = net.V @ (h * h)
    assert torch.allclose(net(x)[0], expected)


def test_training_stops_after_the_required_run_of_checkpoints_or_the_step_cap():
    task = modular_task(5, 0.6, seed=0, dtype=torch.float32)
    always = PaperTraining(checkpoint_every=7, stop_accuracy=1e-9, stop_checkpoints=3)
    assert train_paper(task, 4, always, seed=0)[1] == 21
    never = PaperTraining(checkpoint_every=7, stop_accuracy=1.0, max_steps=30)
    _, steps, loss, acc, val = train_paper(task, 4, never, seed=0)
    if val < 1.0:  # a validation accuracy of exactly 1 would stop it at a checkpoint
        assert steps == 30
    assert math.isfinite(loss) and 0 <= acc <= 1


@pytest.mark.parametrize(
    "bad", [dict(train_fraction=1.0), dict(lr=0.0), dict(batch_size=1), dict(stop_accuracy=0.0)]
)
def test_bad_training_settings_name_themselves(bad):
    with pytest.raises(InvalidArgumentError, match=next(iter(bad))):
        PaperTraining(**bad)


def test_exponents_read_proportional_and_constant_series():
    Ks, ps = (200, 400, 800), (53, 61, 71)
    proportional = {(p, K): K * (3 * p - 1) / 2 for p in ps for K in Ks}
    ints = exponent_intervals(proportional)
    assert len(ints) == 6  # three K-series, three p-series
    assert all(b == pytest.approx(1.0) for _, b, _, _ in ints)
    assert scaling_outcome(ints) == "reproduced"
    flat = {(p, K): 100.0 * p + 0.001 * K for p in ps for K in Ks}
    assert scaling_outcome(exponent_intervals(flat)) == "not reproduced"
    assert scaling_outcome([]) == "inconclusive"


def test_the_published_k_series_exponent_matches_an_independent_fit():
    Ks = sorted(K for p, K in PUBLISHED if p == 53)
    ys = [PUBLISHED[53, K] for K in Ks]
    slope = np.polyfit(np.log(Ks), np.log(ys), 1)[0]
    (got,) = [b for n, b, _, _ in exponent_intervals(PUBLISHED) if n == "K at p = 53"]
    assert got == pytest.approx(slope)
    assert 0.7 < slope < 0.8  # 1008.8 → 4804.2 over K = 200 → 1,600


def _point(p: int, K: int, llc: float) -> PaperScalingPoint:
    n = round(0.4 * p * p)
    return PaperScalingPoint(
        p, K, n, 3 * p * K, 600, 0.01, 1.0, 1.0, llc, 1.0, PUBLISHED.get((p, K), math.nan),
        K * (3 * p - 1) / 2, p * (n - 1) / 2, 1.0,
    )  # fmt: skip


def test_the_true_arm_counts_formula_values_above_the_exact_bound():
    # p = 53: N = 1,124, bound 53·1,123/2 = 29,759.5; K = 200 gives 15,800, K = 400 gives 31,600
    pts = [_point(53, 200, 1000.0), _point(53, 400, 1700.0)]
    reproduced, true = paper_scaling_verdicts(pts)
    assert true.outcome == "not reproduced"
    assert {m.name: m.value for m in true.numbers}[
        "grid points where K(3p − 1)/2 > p(N − 1)/2"
    ] == 1
    assert reproduced.outcome == "inconclusive"  # two points: no series of three
    below = paper_scaling_verdicts([_point(53, 200, 1000.0)])[1]
    assert below.outcome == "inconclusive"


def test_a_small_point_runs_end_to_end():
    small = PaperTraining(checkpoint_every=10, max_steps=40)
    sampler = replace(PAPER_SAMPLER, batch_size=8, num_steps=60, burn_in=10)
    q = paper_scaling_point(5, 6, training=small, sampler=sampler)
    assert q.steps <= 40 and math.isnan(q.published) and q.num_params == 3 * 5 * 6
    assert math.isfinite(q.llc) and q.cap == 5 * (q.n_train - 1) / 2


def test_the_tracking_run_reads_every_kth_checkpoint_and_the_last():
    never = PaperTraining(checkpoint_every=10, stop_accuracy=1.0, max_steps=45)
    sampler = replace(PAPER_SAMPLER, batch_size=8, num_steps=30, burn_in=5)
    run, centred = paper_tracking_run(5, 6, llc_every=2, training=never, sampler=sampler)
    assert run.llc == centred.llc and run.steps == centred.steps == 45
    assert [s.step for s in centred.snapshots] == [0, 10, 20, 30, 40, 45]
    assert [s.step for s in run.snapshots] == [0, 10, 20, 30, 40, 45]
    assert [q.step for q in run.llc] == [0, 20, 40, 45]
    assert all(math.isfinite(q.llc) for q in run.llc) and run.K == 6


def test_the_authors_loss_centres_each_sample_across_its_outputs():
    pred = torch.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, 0.0]])
    y = torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    # residuals (−1, −2, −2), mean −5/3 → (2/3, −1/3, −1/3): ½·(6/9)/3 = 1/9;
    # (1, −1, 0), mean 0 → ½·2/3 = 1/3; the mean over the two samples 2/9
    assert float(authors_loss(pred, y)) == pytest.approx(2 / 9)


def test_the_lr_sweep_trains_each_rate_from_the_same_start():
    never = PaperTraining(checkpoint_every=10, stop_accuracy=1.0, max_steps=20)
    sampler = replace(PAPER_SAMPLER, batch_size=8, num_steps=20, burn_in=5)
    runs = paper_lr_sweep((1e-3, 1e-2), 0.5, 5, 6, llc_every=1, training=never, sampler=sampler)
    assert [(r.lr, r.weight_decay, r.steps) for r in runs] == [(1e-3, 0.5, 20), (1e-2, 0.5, 20)]
    # the same seed: the same initial network, so the same λ̂ at step 0
    assert runs[0].llc[0].llc == runs[1].llc[0].llc
    assert runs[0].llc[-1].llc != runs[1].llc[-1].llc
