"""Saddle-to-saddle by the authors' procedure (``saddles_paper``) and the rule's standard error."""

from __future__ import annotations

import math

import numpy as np
import pytest

import rlct
from verification.experiments.llc import paper_llc_point
from verification.experiments.saddles import SaddlePoint, steps_up
from verification.experiments.saddles_paper import (
    PAPER_SADDLE,
    PAPER_SAMPLER,
    PaperSaddle,
    paper_saddle_run,
    plateau_middles,
)


def test_the_settings_are_the_authors_code():
    # edmundlth/validating_lambdahat @ 375e6fa, expt_dln_saddle_dynamics.py's config
    s = PAPER_SADDLE
    assert s.widths == [5, 10, 10, 10, 10, 5] and s.teacher == (10.0, 20.0, 30.0, 40.0, 50.0)
    assert s.init_variance == pytest.approx(10**-1.5) and (s.n, s.lr) == (10_000, 1e-4)
    assert (s.batch_size, s.steps, s.every) == (128, 20_000, 50)
    p = PAPER_SAMPLER
    assert (p.step_size, p.gamma, p.num_steps, p.num_chains, p.batch_size) == (
        1e-6,
        1.0,
        100,
        1,
        128,
    )
    assert (p.nbeta, p.burn_in_steps) == ("n/log n", 0)


def test_plateau_middles_pick_each_ranks_middle_checkpoint():
    assert plateau_middles([0, 0, 0, 1, 1, 2, 2, 2, 2]) == [1, 4, 7]
    assert plateau_middles([3]) == [0]


def test_a_ranks_standard_error_is_its_spread_where_the_estimates_have_none():
    def pt(step: int, rank: int, llc: float) -> SaddlePoint:
        return SaddlePoint(step, 1.0, rank, 10.0, 1.0, paper_llc_point(step, llc, math.nan, 9, 0.1))

    low, high = [1.0, 2.0, 3.0], [9.0, 10.0, 11.5]
    points = [pt(i, 1, v) for i, v in enumerate(low)] + [
        pt(9 + i, 2, v) for i, v in enumerate(high)
    ]
    ok, text, nums = steps_up(points)
    # by hand: each rank's mean and sd/√3, and the step's z between them
    se = [np.std(v, ddof=1) / math.sqrt(3) for v in (low, high)]
    assert nums[0].value == pytest.approx(2.0) and nums[0].stderr == pytest.approx(se[0])
    assert nums[1].value == pytest.approx(np.mean(high)) and nums[1].stderr == pytest.approx(se[1])
    z = (np.mean(high) - 2.0) / math.hypot(*se)
    assert f"z = {z:+.1f}" in text
    # the steps hold, but rank 1's mean 2.0 is not within 25% of λ = 10
    assert not ok and "near λ_k (within 25% at every rank): no" in text


def test_a_short_run_reads_the_realisable_targets_at_each_rank():
    settings = PaperSaddle(teacher=(2.0, 4.0), hidden=(3,), n=400, lr=0.05, batch_size=40,
                           steps=300, every=30)  # fmt: skip
    res = paper_saddle_run(settings, package=dict(num_chains=2, num_burnin=50, num_draws=100))
    ranks = [p.rank for p in res.paper]
    assert [p.step for p in res.paper] == list(range(30, 301, 30))
    assert ranks == sorted(ranks) and ranks[-1] == 2  # both modes learned, in order
    for p in res.paper:  # λ of the learned rank, exactly
        assert p.lam == float(rlct.deep_linear_network([2, 3, 2], p.rank).lam)
    assert res.true is not None
    assert [p.rank for p in res.true] == list(dict.fromkeys(ranks))  # one per rank reached
    assert all(math.isfinite(p.estimate.llc) for p in res.paper + res.true)


@pytest.mark.parametrize(
    ("change", "names"),
    [
        (dict(teacher=()), "teacher and hidden"),
        (dict(teacher=(1.0, -2.0)), r"teacher\[1\]"),
        (dict(hidden=(10, 0)), r"hidden\[1\]"),
        (dict(batch_size=20_000), "batch_size"),
        (dict(every=30_000), "every"),
        (dict(lr=0.0), "lr"),
    ],
)
def test_bad_settings_name_themselves(change, names):
    with pytest.raises(ValueError, match=names):
        PaperSaddle(**change)
