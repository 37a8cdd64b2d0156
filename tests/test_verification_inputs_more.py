"""More bad input to :mod:`verification` and :mod:`verification.experiments`: each call raises a
package error naming the argument, fast and in bounded memory (``outcome`` of the bad-input
table), and the inputs that used to give a plausible result (a verdict from a negative R-hat, a
loss over n × n broadcast pairs, a checkpoint silently skipped) no longer do."""

from __future__ import annotations

import math
import os
import signal
from dataclasses import replace

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import HealthCheck, given, settings
from test_verification_bad_inputs import HALF, Bad, Estimate, _refuse_work, outcome, run_cli
from torch import nn

import verification
from verification import experiments as ex
from verification import runner
from verification import strategies as vs
from verification.cases import DLNCase, QuadraticCase, RRRCase
from verification.crosschecks import crosscheck
from verification.distributed import run_on_ray
from verification.report import run_report

SMALL = verification.Settings(n=100, num_chains=1)


def _data(rows: int = 20) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(rows, 2, generator=g), torch.randn(rows, 1, generator=g)


def _train(**kw: object) -> object:
    args = {
        "model": nn.Linear(2, 1),
        "loss": ex.mse_loss,
        "data": _data(),
        "optimizer": ex.sgd(0.1),
        "steps": 3,
        "generator": torch.Generator().manual_seed(0),
        **kw,
    }
    return ex.train(**args)


def _table() -> list[Bad]:
    rows = [
        Bad("DecisionRule(z_crit=10**400)", "z_crit", lambda: verification.DecisionRule(10**400)),
        Bad(
            "decide(mean=np.bool_)",
            "estimate.mean",
            lambda: verification.decide("x", HALF, replace(Estimate(), mean=np.bool_(True))),
        ),
        Bad(
            "decide(ess=torch bool)",
            "estimate.ess",
            lambda: verification.decide("x", HALF, replace(Estimate(), ess=torch.tensor(True))),
        ),
        Bad(
            "crosscheck(quadratic case with X = ())",
            "X",
            lambda: crosscheck(QuadraticCase(((1,),), ((1,),), (), "generic"), SMALL),
        ),
        Bad(
            "crosscheck(RRR with M = 10⁷)",
            "floats",
            lambda: crosscheck(RRRCase(10**7, 1, 1, 0), verification.Settings(n=10**4)),
        ),
        Bad(
            "crosscheck(DLN with 10¹⁰ parameters)",
            "parameters",
            lambda: crosscheck(DLNCase((2, 10**5, 10**5, 2), 0), SMALL),
        ),
        Bad("run_on_ray([object()])", "entries[0]", lambda: run_on_ray([object()], SMALL)),
        Bad(
            "run_report(ray_address with the local engine)",
            "ray_address",
            lambda: run_report(True, SMALL, ray_address="auto", entries=[]),
        ),
        Bad(
            "run_report(on_record=3)",
            "on_record",
            lambda: run_report(True, SMALL, on_record=3, entries=[]),
        ),
        Bad(
            "run_report(quick='yes', entries)",
            "quick",
            lambda: run_report("yes", SMALL, entries=[]),
        ),
        Bad(
            "degenerate_polynomials(3)",
            "degenerate_polynomials",
            lambda: vs.degenerate_polynomials(3),
        ),
        Bad(
            "mse_loss([n, 1] against [n])",
            "mse_loss",
            lambda: ex.mse_loss(torch.zeros(3, 1), torch.ones(3)),
        ),
    ]
    # strategies: sizes past the cap (a draw would hang or exhaust memory)
    for fn, arg, v in [
        (vs.normal_crossing_cases, "max_dim", 10**9),
        (vs.newton_polynomials, "depth", 30),
        (vs.newton_polynomials, "max_dim", 10**9),
        (vs.diffeomorphic_polynomials, "dim", 10**6),
        (vs.diffeomorphic_polynomials, "max_degree", 10**9),
        (vs.quadratic_shapes, "max_d", 10**9),
        (vs.quadratic_cases, "max_K", 10**4),
    ]:
        rows.append(Bad(f"{fn.__name__}({arg}={v})", arg, lambda f=fn, a=arg, v=v: f(**{a: v})))
    # experiments: train and the optimizer specs
    for arg, kw in [
        ("checkpoint_at", {"checkpoint_at": [1.5]}),
        ("checkpoint_at", {"checkpoint_at": [math.nan]}),
        ("checkpoint_at", {"checkpoint_at": [True]}),
        ("checkpoint_at", {"checkpoint_at": 5}),
        ("steps", {"steps": 2.5}),
        ("steps", {"steps": True}),
        ("steps", {"steps": 10**12}),
        ("batch_size", {"batch_size": 2.5}),
        ("batch_size", {"batch_size": True}),
        ("generator", {"generator": None}),
        ("data", {"data": (torch.zeros(20, 2), torch.zeros(10, 1))}),
        ("optimizer", {"optimizer": "sgd"}),
    ]:
        rows.append(Bad(f"train({kw})", arg, lambda kw=kw: _train(**kw)))
    for arg, call in [
        ("lr", lambda: ex.sgd(math.inf)),
        ("lr", lambda: ex.sgd(True)),
        ("momentum", lambda: ex.sgd(0.1, -1.0)),
        ("momentum", lambda: ex.sgd(0.1, math.nan)),
        ("weight_decay", lambda: ex.adamw(0.1, math.nan)),
        ("noise", lambda: ex.entropy_sgd(0.1, noise=-1.0)),
        ("inner_lr", lambda: ex.entropy_sgd(0.1, inner_lr=-1.0)),
        ("inner_steps", lambda: ex.entropy_sgd(0.1, inner_steps=2.5)),
        ("inner_steps", lambda: ex.entropy_sgd(0.1, inner_steps=10**9)),
        ("kind", lambda: ex.OptimizerSpec("foo", 0.1)),
    ]:
        rows.append(Bad(f"optimizer spec: {arg}", arg, call))
    return rows


def test_more_bad_arguments_give_a_clear_error_fast(monkeypatch):
    monkeypatch.setattr(runner, "_run_one", _refuse_work)
    rows = _table()
    wrong = {b.label: got for b in rows if (got := outcome(b)) != "ok"}
    assert not wrong, wrong


def test_cli_refuses_an_empty_out_and_leaves_the_current_folder_alone(tmp_path, monkeypatch):
    """``--out ""`` meant the current folder: its report.md was deleted and records written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.md").write_text("my notes")
    bad = Bad("cli --out ''", "--out", lambda: run_cli(["--quick", "--no-progress", "--out", ""]))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(runner, "_run_one", _refuse_work)
        assert outcome(bad) == "ok"
    assert (tmp_path / "report.md").read_text() == "my notes"
    assert sorted(os.listdir(tmp_path)) == ["report.md"]


def test_broken_or_overflowing_chain_numbers_are_inconclusive():
    negative = verification.decide("x", HALF, replace(Estimate(), rhat=-1.0))
    assert negative.verdict == "inconclusive"
    assert any("R-hat" in r for r in negative.reasons)
    huge = verification.decide("x", HALF, replace(Estimate(), mean=10**400))
    assert huge.verdict == "inconclusive"
    assert any("estimate is inf" in r for r in huge.reasons)


def test_mse_loss_still_broadcasts_over_leading_chain_axes():
    pred, y = torch.zeros(4, 3, 2), torch.ones(3, 2)
    assert ex.mse_loss(pred, y).item() == pytest.approx(1.0)


def test_optimizer_specs_keep_their_values_as_floats():
    spec = ex.entropy_sgd(1, inner_steps=np.int64(2), momentum=0.5)
    assert (spec.lr, spec.inner_steps, spec.momentum) == (1.0, 2, 0.5)
    assert isinstance(spec.inner_steps, int)


def _draws(strategy, n: int) -> int:
    out = []

    @settings(max_examples=n, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(x):
        out.append(x)

    def alarm(signum, frame):
        raise TimeoutError("a draw is still running after 60 s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(60)
    try:
        collect()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return len(out)


@pytest.mark.parametrize(
    "strategy",
    [
        vs.newton_polynomials(depth=16, max_dim=16),  # hung at depth 30 (10⁹ variables allowed)
        vs.diffeomorphic_polynomials(max_k=10**6),  # hung expanding (x + 2y)^(2·10⁶)
        vs.diffeomorphic_polynomials(dim=6, max_degree=24),
        vs.quadratic_cases(32, 32, 32, data=True),
    ],
    ids=["newton-deep", "diffeo-huge-k", "diffeo-largest", "quadratic-largest"],
)
def test_the_largest_allowed_strategies_draw_fast(strategy):
    assert _draws(strategy, 5) >= 0


@settings(max_examples=20, deadline=None)
@given(vs.newton_polynomials(depth=6, max_dim=4))
def test_newton_polynomials_stay_within_max_dim(case):
    assert case.dim <= 4


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(vs.diffeomorphic_polynomials(max_degree=6, max_k=3))
def test_diffeomorphic_polynomials_stay_within_max_degree(case):
    assert sp.Poly(case.K, *case.variables).total_degree() <= 6


def test_train_checkpoints_every_step_asked_for():
    run = _train(checkpoint_at=[np.int64(1), 0])
    assert [c.step for c in run.checkpoints] == [0, 1, 3]
