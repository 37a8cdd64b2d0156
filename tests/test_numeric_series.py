"""LLC along training (numeric.estimate_llc_series): the same estimates as one call per
checkpoint, exact λ along a restricted series, records, checkpoint forms and errors, one
compile per series, and the Ray engine's records equal to a local run's."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
import torch
from _devices import DEVICES
from _dln import dln_data, dln_loss, orbit
from torch import nn

import numeric
import rlct
from numeric.errors import InvalidInputError
from numeric.sampler import kernel
from numeric.series.checkpoints import as_checkpoints

SHORT = dict(num_chains=2, num_burnin=10, num_draws=30, step_size=1e-4)


def _trained(steps: int = 30, every: int = 10):
    """A small MLP trained by full-batch SGD, recorded every ``every`` steps."""
    torch.manual_seed(0)  # nn.Linear's initialisation only
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(300, 3, generator=g)
    y = torch.sin(x[:, :2]) + 0.1 * torch.randn(300, 2, generator=g)
    rec = numeric.CheckpointRecorder(model, every=every)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps + 1):
        rec(step)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return model, (x, y), rec


def _same(a: numeric.LLCEstimate, b: numeric.LLCEstimate) -> bool:
    return (
        a.mean == b.mean
        and np.array_equal(a.loss_trace, b.loss_trace)
        and repr(a.config) == repr(b.config)
    )


def test_series_equals_one_estimate_per_checkpoint() -> None:
    """Checkpoint k is ``estimate_llc(loss_fn, state_k, data, seed=seed + k)``, bit for bit;
    the recorder's steps label the series; the training moved the weights between them."""
    model, data, rec = _trained()
    loss_fn, _ = numeric.from_module(model, nn.functional.mse_loss)
    series = numeric.estimate_llc_series(loss_fn, rec, data, seed=7, **SHORT)
    assert series.steps == (0, 10, 20, 30) and series.labels == ("0", "10", "20", "30")
    assert series.seeds == (7, 8, 9, 10) and series.frozen_params == ()
    assert series.free_params == ("0.weight", "0.bias", "2.weight", "2.bias")
    for k, cp in enumerate(rec):
        alone = numeric.estimate_llc(loss_fn, cp.params, data, seed=7 + k, **SHORT)
        assert _same(series.estimates[k], alone), k
    assert len(set(series.means.tolist())) == 4
    assert rec.checkpoints[0].params["0.weight"].data_ptr() != model[0].weight.data_ptr()


@pytest.mark.parametrize("device", DEVICES)
def test_restricted_series_has_the_exact_lambda_at_every_checkpoint(device: str) -> None:
    """W1 frozen at each checkpoint's own value (different at each): W2, W3 are a reduced rank
    regression on z = W1·x with λ = 3/2 at every checkpoint (rlct). Had a checkpoint run with
    another checkpoint's W1, w* would not be a minimum there."""
    cps, data = orbit(), dln_data()
    lam = rlct.reduced_rank_regression(M=2, N=2, H=1, r=1).lam
    assert lam == sp.Rational(3, 2)
    series = numeric.estimate_llc_series(
        dln_loss, cps, data, select=["W2", "W3"], seed=0, device=device
    )
    assert series.free_params == ("W2", "W3") and series.frozen_params == ("W1",)
    assert series.steps == (0, 100, 200)
    for est in series.estimates:
        assert est.ess >= 100 and est.config.device.startswith(device), est
        assert abs(est.mean - float(lam)) <= 4 * est.stderr, est
        assert not [f for f in est.diagnostics if f.severity == "error"], est.diagnostics
        assert abs(est.init_loss) < 1e-20  # each checkpoint is the minimum of its loss


def test_restricted_series_equals_one_restricted_estimate_per_checkpoint() -> None:
    """The series' one loss object, its frozen W1 overwritten in place, gives what a fresh
    ``restrict`` at each checkpoint gives, bit for bit."""
    cps, data = orbit(), dln_data()
    series = numeric.estimate_llc_series(dln_loss, cps, data, select="W3", **SHORT)
    for k, cp in enumerate(cps.values()):
        alone = numeric.estimate_llc(*numeric.restrict(dln_loss, cp, "W3"), data, seed=k, **SHORT)
        assert _same(series.estimates[k], alone), k


def test_records_to_dict_str_and_plot() -> None:
    model, data, rec = _trained(steps=20)
    loss_fn, _ = numeric.from_module(model, nn.functional.mse_loss)
    series = numeric.estimate_llc_series(loss_fn, rec, data, **SHORT)
    rows = series.records()
    assert [r["step"] for r in rows] == [0, 10, 20]
    for row, est in zip(rows, series.estimates):
        assert row["llc"] == est.mean and row["stderr"] == est.stderr and row["ess"] == est.ess
        assert row["num_draws"] == 30 and row["num_params"] == 26 and row["error"] is None
        assert row["findings"] == "; ".join(f"{f.code} ({f.severity})" for f in est.diagnostics)
        assert all(isinstance(v, (int, float, str, type(None))) for v in row.values()), row
    assert len({tuple(r) for r in rows}) == 1  # one column set: a DataFrame without gaps
    plain = json.loads(json.dumps(series.to_dict()))
    assert plain["steps"] == [0, 10, 20] and plain["estimates"][1]["mean"] == series.means[1]
    assert "loss_trace" not in plain["estimates"][0]
    assert len(series.to_dict(traces=True)["estimates"][0]["loss_trace"]) == 2
    text = str(series).splitlines()
    assert len(text) == 4 and text[1].split()[:3] == ["0", "0", f"{series.means[0]:.4g}"]
    matplotlib = pytest.importorskip("matplotlib", reason="plots are the optional `plots` extra")
    matplotlib.use("Agg")
    fig = series.plot(exact=13.0)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "step" and ax.get_ylabel() == "LLC"
    assert list(ax.lines[-1].get_ydata()) == [13.0] * 3
    matplotlib.pyplot.close(fig)
    fig = series.plot(exact=rlct.normal_crossing([1, 1, 1]))  # an RLCT: its λ = 1/2
    assert list(fig.axes[0].lines[-1].get_ydata()) == [0.5] * 3
    matplotlib.pyplot.close(fig)
    with pytest.raises(InvalidInputError, match="2 values for 3 checkpoints"):
        series.plot(exact=[1.0, 2.0])


def test_checkpoint_forms_and_labels() -> None:
    model, data, rec = _trained(steps=10, every=5)
    loss_fn, _ = numeric.from_module(model, nn.functional.mse_loss)
    states = [cp.params for cp in rec]
    kw = dict(num_chains=2, num_burnin=4, num_draws=8, step_size=1e-4)
    forms = {
        "list": (states, ("0", "1", "2"), (None, None, None)),
        "dict of steps": (dict(zip([0, 5, 10], states)), ("0", "5", "10"), (0, 5, 10)),
        "dict of labels": (dict(zip("abc", states)), ("a", "b", "c"), (None, None, None)),
        "checkpoints": (
            [numeric.Checkpoint(s, step=5 * i) for i, s in enumerate(states)],
            ("0", "5", "10"),
            (0, 5, 10),
        ),
        "recorder": (rec, ("0", "5", "10"), (0, 5, 10)),
    }
    means = set()
    for name, (cps, labels, steps) in forms.items():
        series = numeric.estimate_llc_series(loss_fn, cps, data, **kw)
        assert (series.labels, series.steps) == (labels, steps), name
        means.add(tuple(series.means.tolist()))
    assert len(means) == 1  # the same estimates whatever the form
    assert list(numeric.estimate_llc_series(loss_fn, states, data, **kw).x) == [0, 1, 2]


def test_recorder_schedule_and_sources() -> None:
    w = {"w": torch.zeros(2)}
    rec = numeric.CheckpointRecorder(lambda: w, steps=[1, 3])
    recorded = [rec(step) for step in range(5)]
    assert recorded == [False, True, False, True, False]
    w["w"] += 1  # the recorder kept copies
    assert [cp.params["w"].tolist() for cp in rec] == [[0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(InvalidInputError, match="step 3 comes after step 4"):
        rec(3)  # step 4 was not recorded, but the weights are already past step 3
    with pytest.raises(InvalidInputError, match="every must be an int"):
        numeric.CheckpointRecorder(nn.Linear(1, 1), every=0)
    with pytest.raises(InvalidInputError, match="steps must be ints"):
        numeric.CheckpointRecorder(nn.Linear(1, 1), steps=[1, -2])
    with pytest.raises(InvalidInputError, match="source must be"):
        numeric.CheckpointRecorder(3)


class _Scaled(nn.Module):
    """y = scale·(A x): ``scale`` a buffer (held fixed, like BatchNorm's statistics)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(2, 1)
        self.register_buffer("scale", torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale * self.lin(x)


@pytest.mark.parametrize("device", DEVICES)
def test_buffers_in_state_dicts_are_held_at_each_checkpoints_values(device: str) -> None:
    """A module's buffer in the state dicts (CPU tensors) is held at each checkpoint's value,
    on the run's device too; each checkpoint equals its own call bit for bit."""
    torch.manual_seed(0)
    model = _Scaled()
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 2, generator=g)
    y = x.sum(1, keepdim=True)
    loss_fn, _ = numeric.from_module(model, nn.functional.mse_loss)
    states = []
    for s in (1.0, 3.0):
        model.scale.fill_(s)
        states.append({k: v.clone() for k, v in model.state_dict().items()})
    kw = dict(SHORT, device=device)
    series = numeric.estimate_llc_series(loss_fn, states, data := (x, y), **kw)
    assert series.frozen_params == ("scale",) and series.free_params == ("lin.weight", "lin.bias")
    for k, s in enumerate((1.0, 3.0)):
        model.scale.fill_(s)
        params = {n: states[k][n] for n in ("lin.weight", "lin.bias")}
        alone = numeric.estimate_llc(loss_fn, params, data, seed=k, **kw)
        assert _same(series.estimates[k], alone), k
        assert alone.config.device.startswith(device)
    assert series.estimates[0].init_loss != series.estimates[1].init_loss


def test_checkpoints_without_a_modules_running_statistics_are_refused() -> None:
    """Parameter-only checkpoints of a module with batch norm would pair each checkpoint's
    weights with the module's final running statistics (checkpoint 0 read 6.31 instead of 8.33
    in the audit that found it); state_dict() checkpoints hold them and run."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 2, generator=g)
    y = x.sum(1, keepdim=True)
    states = []
    for _ in range(2):
        model.train()
        model(x)  # moves the running statistics
        states.append({k: v.clone() for k, v in model.state_dict().items()})
    model.eval()
    loss_fn, _ = numeric.from_module(model, nn.functional.mse_loss)
    params_only = [{k: v for k, v in s.items() if not k.startswith("1.")} for s in states]
    params_only = [
        {**p, "1.weight": s["1.weight"], "1.bias": s["1.bias"]} for p, s in zip(params_only, states)
    ]
    with pytest.raises(
        InvalidInputError,
        match=r"lacks the module's running statistics \['1.running_mean', '1.running_var'\]",
    ):
        numeric.estimate_llc_series(loss_fn, params_only, (x, y), **SHORT)
    series = numeric.estimate_llc_series(loss_fn, states, (x, y), **SHORT)
    assert "1.running_mean" in series.frozen_params and len(series.estimates) == 2


def test_on_error_record_keeps_going() -> None:
    model, data, rec = _trained(steps=20)
    loss_fn, _ = numeric.from_module(model, nn.functional.mse_loss)
    states = [dict(cp.params) for cp in rec]
    states[1]["2.bias"] = torch.full((2,), math.nan)
    with pytest.raises(InvalidInputError, match="not finite"):
        numeric.estimate_llc_series(loss_fn, states, data, **SHORT)
    series = numeric.estimate_llc_series(loss_fn, states, data, on_error="record", **SHORT)
    assert series.estimates[1] is None and "not finite" in series.errors[1]
    assert series.errors[0] is None and series.estimates[2] is not None
    assert math.isnan(series.means[1]) and series.worst[1] == "error"
    assert series.records()[1]["error"].startswith("InvalidInputError")
    assert series.findings[1] == ()
    matplotlib = pytest.importorskip("matplotlib", reason="plots are the optional `plots` extra")
    matplotlib.use("Agg")
    fig = series.plot()  # the failed checkpoint marked, not left out
    marks = {c.get_label(): c.get_offsets() for c in fig.axes[0].collections if c.get_label()}
    failed = np.asarray(marks["estimate failed"])
    assert failed[:, 0].tolist() == [series.x[1]]
    matplotlib.pyplot.close(fig)


def test_bad_series_inputs_say_what_is_wrong() -> None:
    model, data, rec = _trained(steps=10)
    loss_fn, _ = numeric.from_module(model, nn.functional.mse_loss)
    states = [dict(cp.params) for cp in rec]
    cases = [
        (states[0], {}, "one dict of tensors; pass a list"),
        ([], {}, "checkpoints is empty"),
        (5, {}, "checkpoints must be"),
        ([states[0], [1, 2]], {}, "checkpoint '1' is a list"),
        ([states[0], {**states[1], "0.bias": 1.0}], {}, "'0.bias' is a float"),
        ([states[0], {k: v for k, v in states[1].items() if k != "2.bias"}], {}, "lacks"),
        ([states[0], {**states[1], "2.bias": torch.zeros(3)}], {}, r"shape \(3,\)"),
        ([{**s, "extra": torch.zeros(1)} for s in states], {}, "neither parameters nor"),
        ([{k: v for k, v in s.items() if k != "2.bias"} for s in states], {}, "lacks the module"),
        (states, {"num_chain": 2}, "unknown option.*'num_chain'"),
        (states, {"num_chains": 0}, "num_chains"),
        (states, {"engine": "dask"}, "engine must be"),
        (states, {"on_error": "skip"}, "on_error must be"),
        (states, {"workers": 2}, "for engine='ray'"),
        (states, {"select": ["1.weight"]}, "neither a parameter"),
    ]
    for cps, kw, match in cases:
        with pytest.raises(InvalidInputError, match=match):
            numeric.estimate_llc_series(loss_fn, cps, data, **kw)


def test_checkpoints_of_the_trainable_parameters_hold_the_frozen_ones_fixed() -> None:
    """A module with a frozen layer (fine-tuning): checkpoints holding only the trainable
    parameters, as such a run saves them, give the records of full state dicts (the frozen
    values are the module's own, which training did not change)."""
    model, data, rec = _trained(steps=20)
    model[0].requires_grad_(False)
    loss_fn, _ = numeric.from_module(model, nn.functional.mse_loss)
    full = [dict(cp.params) for cp in rec]
    for state in full:
        state.update({k: v.clone() for k, v in model[0].state_dict(prefix="0.").items()})
    trainable = [{k: v for k, v in s.items() if not k.startswith("0.")} for s in full]
    a = numeric.estimate_llc_series(loss_fn, full, data, **SHORT)
    b = numeric.estimate_llc_series(loss_fn, trainable, data, **SHORT)
    assert a.free_params == b.free_params == ("2.weight", "2.bias")
    assert a.records() == b.records()


def test_more_ray_workers_than_the_cluster_has_are_refused() -> None:
    """Each worker holds one CPU for the whole series: a third on two CPUs would never start
    (the series waited forever); refused before any actor is made."""
    from types import SimpleNamespace

    from numeric.series.ray import _run

    fake = SimpleNamespace(cluster_resources=lambda: {"CPU": 2.0})
    task = SimpleNamespace(options={})
    with pytest.raises(InvalidInputError, match=r"workers = 3, but the Ray cluster has 2 CPU"):
        _run(fake, task, tuple(range(3)), 3, False)


def test_numeric_does_not_import_ray() -> None:
    code = "import sys, numeric; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.xdist_group("ray")  # one local Ray cluster at a time
def test_ray_engine_gives_the_same_records() -> None:
    ray = pytest.importorskip("ray", reason="the Ray engine is an optional extra (`ray`)")
    model, data, rec = _trained(steps=30)
    loss_fn, _ = numeric.from_module(model, nn.functional.mse_loss)
    local = numeric.estimate_llc_series(loss_fn, rec, data, seed=3, **SHORT)
    remote = numeric.estimate_llc_series(
        loss_fn, rec, data, seed=3, engine="ray", workers=2, ray_init={"num_cpus": 2}, **SHORT
    )
    assert not ray.is_initialized()
    assert remote.records() == local.records()
    for a, b in zip(remote.estimates, local.estimates):
        assert _same(a, b)


@pytest.mark.slow
def test_compiled_restricted_series_compiles_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """compile=True on a restricted series (W1 frozen at each checkpoint's value): one
    torch.compile and no recompilation for three checkpoints, and the estimates of the eager
    series up to rounding, so the frozen values the compiled graph reads are each checkpoint's.
    Slow: one compile (20–60 s on a shared CPU)."""
    cps, data = orbit(), dln_data()
    kw = dict(select=["W2", "W3"], num_chains=4, num_burnin=40, num_draws=200, seed=1)
    eager = numeric.estimate_llc_series(dln_loss, cps, data, **kw)
    compiles = []
    real = torch.compile

    def counting(*args, **kwargs):
        compiles.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(torch, "compile", counting)
    monkeypatch.setattr(torch._dynamo.config, "error_on_recompile", True)
    before = len(kernel._COMPILED)
    compiled = numeric.estimate_llc_series(dln_loss, cps, data, compile=True, **kw)
    assert len(compiles) == 1 and len(kernel._COMPILED) == min(before + 1, kernel.CACHE_SIZE)
    for a, b in zip(compiled.estimates, eager.estimates):
        assert math.isclose(a.mean, b.mean, rel_tol=1e-6, abs_tol=1e-9), (a.mean, b.mean)
        np.testing.assert_allclose(a.loss_trace, b.loss_trace, rtol=1e-9, atol=1e-12)


@pytest.mark.slow
def test_a_compiled_series_whose_plans_differ_in_slow_directions_compiles_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tanh MLP's last layer along training (select="2", γ = 100): the plan finds one slow
    direction at the first checkpoint and more later, so the drift probe's width changes; the
    compiled kernel takes it widened to ``PROBE_WIDTH`` and compiled twice before (7.5 s at the
    second checkpoint), once now, with the records of the eager series up to rounding. Slow: one
    compile."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(500, 3, generator=g)
    y = torch.sin(x.sum(1, keepdim=True)) + 0.1 * torch.randn(500, 1, generator=g)
    rec = numeric.CheckpointRecorder(model, steps=[20, 100, 200])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(201):
        rec(step)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    model.eval()
    loss_fn, _ = numeric.from_module(model, nn.functional.mse_loss)
    kw = dict(select="2", num_chains=4, num_burnin=200, num_draws=400, gamma=100.0, seed=0)
    eager = numeric.estimate_llc_series(loss_fn, rec, (x, y), **kw)
    widths, real = [], kernel._widened

    def widened(probe: torch.Tensor) -> torch.Tensor:
        widths.append(probe.shape[1])
        return real(probe)

    monkeypatch.setattr(kernel, "_widened", widened)
    monkeypatch.setattr(torch._dynamo.config, "error_on_recompile", True)
    compiled = numeric.estimate_llc_series(loss_fn, rec, (x, y), compile=True, **kw)
    assert len(set(widths)) > 1  # the premise: the plans' probes differ in width
    for a, b in zip(compiled.estimates, eager.estimates):
        assert math.isclose(a.mean, b.mean, rel_tol=1e-5, abs_tol=1e-8), (a.mean, b.mean)


def test_checkpoints_that_cannot_be_told_apart_are_refused() -> None:
    """Live state dicts (every checkpoint the final weights), steps that repeat or go down,
    labels twice, a step that is not an int ≥ 0, a numpy int step (kept as a Python int, so the
    records stay JSON), checkpoints of other dtypes, and a recorder given an int or both
    schedules, or one that recorded nothing: each named (the fourth audit)."""
    model = nn.Linear(2, 1)
    live = [model.state_dict() for _ in range(2)]
    copies = [{k: v.clone() for k, v in model.state_dict().items()} for _ in range(3)]
    checks = {
        "same tensors in memory": lambda: as_checkpoints(live),
        r"steps must increase, got \[30, 0\]": lambda: as_checkpoints(
            {30: copies[0], 0: copies[1]}
        ),
        "same label twice": lambda: as_checkpoints({0: copies[0], "0": copies[1]}),
        "step must be ints": lambda: as_checkpoints([numeric.Checkpoint(copies[0], 1.5)]),
        r"steps=\[1000\]": lambda: numeric.CheckpointRecorder(model, steps=1000),
        "not both": lambda: numeric.CheckpointRecorder(model, every=10, steps=[3]),
    }
    for match, call in checks.items():
        with pytest.raises(InvalidInputError, match=match):
            call()
    steps = as_checkpoints({np.int64(0): copies[0], np.int64(10): copies[1]})
    assert [type(c.step) for c in steps] == [int, int]
    rec = numeric.CheckpointRecorder(model, steps=[1000])
    rec(5)
    with pytest.raises(InvalidInputError, match=r"recorded nothing.*\[1000\].*step 5"):
        numeric.estimate_llc_series(
            numeric.from_module(model, torch.nn.functional.mse_loss)[0], rec, None
        )
    mixed = [copies[0], {k: v.double() for k, v in copies[2].items()}]
    x = torch.randn(20, 2)
    loss_fn, _ = numeric.from_module(model, torch.nn.functional.mse_loss)
    with pytest.raises(InvalidInputError, match=r"checkpoint '1': 'weight' is torch.float64"):
        numeric.estimate_llc_series(loss_fn, mixed, (x, x[:, :1]), num_chains=2, num_draws=20)
