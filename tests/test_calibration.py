"""The calibration battery and harness: report arithmetic, argument checks, the battery's
definitions (finite targets, deterministic builds, two-basin cases that must be caught) and an
end-to-end run with short fixed-length chains."""

from __future__ import annotations

import json
import math
import pickle
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pytest
import torch

import numeric
from verification import (
    BatteryCase,
    CalibrationRecord,
    CalibrationReport,
    InvalidArgumentError,
    InvalidTypeError,
    battery,
    calibrate,
)
from verification.calibration import default_estimator
from verification.calibration.models import hmc_target
from verification.calibration.relu import relu_hmc_target

FULL = battery()
NETWORK_FAMILIES = ("reduced-rank regression", "deep linear network")
BY_NAME = {c.name: c for c in FULL}
SHORT = partial(default_estimator, num_burnin=100, num_draws=200)


def rec(estimate=1.0, stderr=0.1, target=1.0, sigma=0.0, findings=(), band=3.0, name="c"):
    return CalibrationRecord.make(
        case=name,
        family="f",
        dim=1,
        kind="potential",
        seed=0,
        estimate=estimate,
        stderr=stderr,
        target=target,
        target_sigma=sigma,
        findings=findings,
        seconds=0.5,
        band=band,
    )


# ---- records and report arithmetic ---------------------------------------------------------------


def test_z_combines_the_standard_error_with_the_targets_sigma():
    r = rec(estimate=1.3, stderr=0.3, target=1.0, sigma=0.4)
    assert r.z == pytest.approx(0.6)  # 0.3 / √(0.3² + 0.4²)
    assert r.correct and r.rel_error == pytest.approx(0.3)
    assert rec(estimate=0.7, stderr=0.3, target=1.0).z == pytest.approx(-1.0)
    assert rec(estimate=0.6, stderr=0.1, target=-0.4).rel_error == pytest.approx(2.5)


def test_the_band_decides_correct():
    assert not rec(estimate=2.6, stderr=0.5, target=1.0).correct  # z = 3.2
    assert rec(estimate=2.6, stderr=0.5, target=1.0, band=3.5).correct
    assert rec(estimate=2.5, stderr=0.5, target=1.0).correct  # z = 3 exactly: inside


def test_nan_and_zero_uncertainty_give_no_z_and_a_wrong_record():
    for r in (
        rec(estimate=math.nan),
        rec(stderr=math.nan),
        rec(target=math.nan),
        rec(stderr=0.0, sigma=0.0),
    ):
        assert math.isnan(r.z) and not r.correct
    assert math.isnan(rec(target=0.0).rel_error)
    d = rec(estimate=math.nan).to_dict()
    assert d["estimate"] is None and d["z"] is None and d["correct"] is False
    json.dumps(d, allow_nan=False)


def test_error_findings_are_the_error_codes_once_each_in_order():
    r = rec(findings=[("b", "error"), ("a", "warning"), ("c", "error"), ("b", "error")])
    assert r.error_findings == ("b", "c") and r.flagged
    assert not rec(findings=[("a", "warning"), ("d", "info")]).flagged


def _mixed_report() -> CalibrationReport:
    err, warn = ("slow", "error"), ("spread", "warning")
    correct = [rec(findings=[err]), rec(findings=[err, err]), rec(), rec(findings=[warn]), rec()]
    wrong = [
        rec(estimate=5.0, findings=[err, warn]),
        rec(estimate=5.0),
        rec(estimate=math.nan, findings=[("DivergenceError", "error")]),
    ]
    return CalibrationReport(tuple(correct + wrong))


def test_confusion_counts_and_rates():
    c = _mixed_report().confusion()
    assert (c.false_alarm, c.quiet, c.caught, c.missed) == (2, 3, 2, 1)
    assert c.false_alarm_rate == pytest.approx(2 / 5)
    assert c.miss_rate == pytest.approx(1 / 3)
    quiet = CalibrationReport((rec(), rec())).confusion()
    assert quiet.false_alarm_rate == 0.0 and math.isnan(quiet.miss_rate)
    assert math.isnan(CalibrationReport(()).confusion().false_alarm_rate)
    assert CalibrationReport(()).confusion().to_dict()["miss_rate"] is None


def test_code_rates_per_code_and_severity():
    rates = {(r.code, r.severity): r for r in _mixed_report().code_rates()}
    assert sorted(rates) == [("DivergenceError", "error"), ("slow", "error"), ("spread", "warning")]
    slow = rates["slow", "error"]  # twice in one record counts once
    assert (slow.on_correct, slow.on_wrong) == (2, 1)
    assert slow.share_of_correct == pytest.approx(2 / 5)
    assert slow.share_of_wrong == pytest.approx(1 / 3)
    assert slow.precision == pytest.approx(1 / 3)
    spread = rates["spread", "warning"]
    assert (spread.on_correct, spread.on_wrong, spread.precision) == (1, 1, 0.5)
    assert rates["DivergenceError", "error"].precision == 1.0


def test_coverage_among_finite_z():
    zs = [0.5, -1.5, 2.5, 3.5]
    report = CalibrationReport((*(rec(estimate=1 + 0.1 * z) for z in zs), rec(stderr=0.0)))
    assert report.coverage() == pytest.approx({1: 0.25, 2: 0.5, 3: 0.75})


def test_report_to_dict_is_json_and_the_table_shows_the_numbers():
    report = _mixed_report()
    d = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert d["confusion"]["caught"] == 2 and d["confusion"]["false_alarm_rate"] == 0.4
    assert len(d["records"]) == 8 and d["records"][7]["error_findings"] == ["DivergenceError"]
    table = report.table()
    assert "false-alarm rate 0.40" in table and "miss rate 0.33" in table
    assert "| slow | error | 2 (0.40) | 1 (0.33) | 0.33 |" in table
    assert table.count("\n| c | 0 | 1 |") == 8


# ---- argument checks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"band": 0.0}, InvalidArgumentError),
        ({"band": math.nan}, InvalidArgumentError),
        ({"band": "3"}, InvalidTypeError),
        ({"seeds": ()}, InvalidArgumentError),
        ({"seeds": (1, 1)}, InvalidArgumentError),
        ({"seeds": (-1,)}, InvalidArgumentError),
        ({"seeds": "0"}, InvalidTypeError),
        ({"seeds": (0.5,)}, InvalidTypeError),
        ({"jobs": 0}, InvalidArgumentError),
        ({"jobs": 1.5}, InvalidTypeError),
        ({"cases": []}, InvalidArgumentError),
        ({"cases": [object()]}, InvalidTypeError),
        ({"cases": FULL[0]}, InvalidTypeError),
        ({"cases": [FULL[0], FULL[0]]}, InvalidArgumentError),
        ({"estimator": 3}, InvalidTypeError),
        ({"progress": "yes"}, InvalidTypeError),
    ],
)
def test_calibrate_refuses_bad_arguments_before_any_work(kwargs, error):
    args = {"estimator": _never_called, "cases": FULL[:1], **kwargs}
    with pytest.raises(error):
        calibrate(**args)


def _never_called(case, built, seed):
    raise AssertionError("the estimator ran before the arguments were checked")


def test_battery_and_report_refuse_bad_arguments():
    with pytest.raises(InvalidArgumentError, match="size"):
        battery("medium")
    with pytest.raises(InvalidTypeError):
        battery(3)
    with pytest.raises(InvalidTypeError, match="records"):
        CalibrationReport((1,))
    with pytest.raises(InvalidArgumentError, match="band"):
        CalibrationReport((), band=-1.0)
    with pytest.raises(InvalidArgumentError, match="kind"):
        BatteryCase("x", "f", 1, "other", 10, FULL[0].build, FULL[0].target)


# ---- the battery --------------------------------------------------------------------------------


def test_the_full_battery_spans_the_families():
    assert len(FULL) >= 55 and len(BY_NAME) == len(FULL)  # names unique
    families = {c.family for c in FULL}
    assert len(families) >= 9 and {"two basins", "gradient at w*", "soft directions"} <= families
    large = [c for c in FULL if c.large]
    assert len(large) >= 2 and all(400 <= c.dim <= 2_000 and c.n == 20_000 for c in large)
    assert not any(c.large for c in FULL if c.dim < 400)
    # linear networks: λ_β(γ) by HMC below 400 parameters, the shifted target above
    nets = [c for c in FULL if c.family in NETWORK_FAMILIES or "away from" in c.family]
    assert len(nets) == 13 + 25 and all((c.target is hmc_target) == (not c.large) for c in nets)
    fast = battery("fast")
    assert 6 <= len(fast) <= 10 and all(
        c.dim <= 10 and BY_NAME[c.name].family == c.family for c in fast
    )


def _nominal(case: BatteryCase) -> tuple[float, float]:
    return case.kwargs.get("nbeta", case.n / math.log(case.n)), case.kwargs.get("gamma", 1.0)


def _tensors(obj) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for k in sorted(obj) for t in _tensors(obj[k])]
    if isinstance(obj, list | tuple):
        return [t for x in obj for t in _tensors(x)]
    return []


@pytest.mark.parametrize("case", FULL, ids=lambda c: c.name)
def test_build_is_deterministic_and_the_target_finite(case: BatteryCase):
    a, b = case.build(0), case.build(0)
    ta, tb = _tensors([a.args, a.aux]), _tensors([b.args, b.aux])
    assert (len(ta) > 0) == (case.kind == "data") and len(ta) == len(tb)
    assert all(torch.equal(x, y) for x, y in zip(ta, tb))
    if case.kind == "data":
        loss_fn, params, data = a.args
        assert float(loss_fn(params, data)) == float(b.args[0](b.args[1], b.args[2]))
        # the seed draws the data: another seed, other data
        assert not all(
            torch.equal(x, y) for x, y in zip(_tensors(data), _tensors(case.build(1).args[2]))
        )
    else:
        K, w_star, n = a.args
        w = torch.randn(
            64, case.dim, generator=torch.Generator().manual_seed(0), dtype=torch.float64
        )
        assert torch.equal(K(w), b.args[0](w)) and n == case.n and len(w_star) == case.dim
    assert sum(t.numel() for t in _tensors(a.args[1])) in (0, case.dim)
    if case.target in (hmc_target, relu_hmc_target):  # 20–600 s of HMC each: tested apart
        return
    nbeta, gamma = _nominal(case)
    t = case.target(a, nbeta, gamma)
    assert math.isfinite(t.value) and math.isfinite(t.sigma) and t.sigma >= 0 and t.source
    assert case.target(b, nbeta, gamma) == t
    assert pickle.loads(pickle.dumps(case)).name == case.name  # sent to workers


def _basin_value(case: BatteryCase, built, nbeta: float, gamma: float, edge: float) -> float:
    """λ_β on a uniform grid, x = w_0 restricted to x < edge (inf: the whole line), y ∈ ±0.3."""
    K = built.aux["potential"]
    x = np.linspace(-1.0, min(edge, 2.5), 3001 if case.dim == 2 else 200_001)
    pts = (
        x[:, None]
        if case.dim == 1
        else np.stack(np.meshgrid(x, np.linspace(-0.3, 0.3, 401), indexing="ij"), -1).reshape(-1, 2)
    )
    e = nbeta * (
        K(torch.from_numpy(pts)).numpy() - float(K(torch.zeros(1, case.dim, dtype=torch.float64)))
    )
    U = e + 0.5 * gamma * (pts**2).sum(1)
    p = np.exp(-(U - U.min()))
    return float((p * e).sum() / p.sum())


@pytest.mark.parametrize(
    "case", [c for c in FULL if c.family == "two basins"], ids=lambda c: c.name
)
def test_two_basin_targets_differ_from_the_basin_at_w_star(case: BatteryCase):
    nbeta, gamma = _nominal(case)
    for seed in (0, 1):
        built = case.build(seed)
        target = case.target(built, nbeta, gamma).value
        edge = built.aux["basin_edge"]
        assert 0 < edge < 1
        # the grid reproduces the target over both basins, so its one-basin value can be trusted
        assert _basin_value(case, built, nbeta, gamma, math.inf) == pytest.approx(target, rel=2e-3)
        single = _basin_value(case, built, nbeta, gamma, edge)
        assert 0.4 < single < 0.7 or (case.dim == 2 and 0.9 < single < 1.1)
        assert abs(target - single) > 0.3 * abs(single)


# ---- running ------------------------------------------------------------------------------------


def test_calibrate_end_to_end_with_short_chains():
    cases = [BY_NAME["linear regression (d=3)"], BY_NAME["Newton K = x⁴ + y⁶"]]
    seen: list[str] = []
    report = calibrate(SHORT, cases, seeds=(0,), progress=lambda r: seen.append(r.case))
    assert [r.case for r in report.records] == [c.name for c in cases] == seen
    lin, newton = report.records
    assert lin.target == pytest.approx(1.5, abs=0.01) and lin.dim == 3 and lin.kind == "data"
    assert newton.target == pytest.approx(0.409, abs=0.01) and newton.kind == "potential"
    for r in report.records:
        assert math.isfinite(r.z) and r.stderr > 0 and r.seconds > 0 and r.seed == 0
        assert abs(r.estimate - r.target) < 0.5 and r.correct == (abs(r.z) <= 3)
    assert sum(vars(report.confusion()).values()) == 2


@dataclass(frozen=True)
class _Config:
    gamma: float = 1.0


@dataclass(frozen=True)
class _FakeEstimate:
    mean: float
    stderr: float
    nbeta: float
    diagnostics: tuple = ()
    config: _Config = field(default_factory=_Config)


def _threads_estimator(case, built, seed):
    """λ̂ = the torch threads it ran on (one per worker), nothing sampled."""
    return _FakeEstimate(float(torch.get_num_threads()), 0.1, case.n / math.log(case.n))


def _diverging_estimator(case, built, seed):
    raise numeric.DivergenceError("loss not finite", chain=2, step=7, cause="ε too large")


def test_a_divergence_is_a_failed_run_that_counts_as_caught():
    report = calibrate(_diverging_estimator, FULL[:1], seeds=(3,))
    (r,) = report.records
    assert math.isnan(r.estimate) and not r.correct and r.error_findings == ("DivergenceError",)
    assert "chain 2, step 7" in r.failure and r.seed == 3
    assert report.confusion().caught == 1


def test_worker_processes_give_the_serial_records_in_order():
    cases = [c for c in FULL if c.kind == "potential"][:3]
    serial = calibrate(_threads_estimator, cases, seeds=(0, 1))
    pooled = calibrate(_threads_estimator, cases, seeds=(0, 1), jobs=2)
    key = [(r.case, r.seed, r.estimate, r.target, r.z) for r in serial.records]
    assert [(r.case, r.seed, r.estimate, r.target, r.z) for r in pooled.records] == key
    assert [k[:2] for k in key] == [(c.name, s) for c in cases for s in (0, 1)]
    assert all(r.estimate == 1.0 for r in pooled.records)  # one torch thread per worker


def test_a_report_round_trips_through_its_json_and_rescores_findings() -> None:
    """``from_dict`` rebuilds the records from their raw numbers: same z and counts; a premise
    finding (w* not a minimum) does not make a record flagged."""
    from verification.calibration import CalibrationRecord, CalibrationReport

    common = dict(family="f", dim=2, kind="data", seed=0, target_sigma=0.0, seconds=1.0)
    records = (
        CalibrationRecord.make(case="a", estimate=1.0, stderr=0.1, target=1.05, findings=[
            ("gradient_at_w_star", "error")], **common),
        CalibrationRecord.make(case="b", estimate=2.0, stderr=0.1, target=1.0, findings=[
            ("slow_mixing", "error"), ("drift", "warning")], **common),
        CalibrationRecord.make(case="c", estimate=float("nan"), stderr=float("nan"),
            target=float("nan"), findings=[("DivergenceError", "error")], **common),
    )  # fmt: skip
    report = CalibrationReport(records)
    again = CalibrationReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert [r.z for r in again.records][:2] == pytest.approx([-0.5, 10.0])
    assert again.confusion() == report.confusion()
    c = again.confusion()
    assert (c.false_alarm, c.quiet, c.caught, c.missed) == (0, 1, 2, 0)
    assert again.records[1].findings == (("slow_mixing", "error"), ("drift", "warning"))
