"""LLCEstimate as plain data: ``to_dict`` survives JSON and keeps the numbers."""

from __future__ import annotations

import json
import math

import numeric


def _estimate() -> numeric.LLCEstimate:
    return numeric.estimate_llc_potential(
        lambda w: w[..., 0] ** 2 + w[..., 1] ** 4, [0.0, 0.0], 1000, num_chains=3, seed=1,
        num_burnin=100, num_draws=60,
    )  # fmt: skip


def test_to_dict_is_json_and_keeps_the_values() -> None:
    est = _estimate()
    d = json.loads(json.dumps(est.to_dict()))
    assert d["mean"] == est.mean and d["stderr"] == est.stderr
    assert d["per_chain"] == est.per_chain.tolist()
    assert d["config"]["num_draws"] == 60 and d["config"]["sampler"] == "mala"
    assert [f["code"] for f in d["diagnostics"]] == [f.code for f in est.diagnostics]
    assert "loss_trace" not in d and d["full_data"] is None
    assert math.isnan(d["config"]["friction"])  # NaN kept as a float NaN


def test_to_dict_with_traces() -> None:
    est = _estimate()
    d = est.to_dict(traces=True)
    assert len(d["loss_trace"]) == 3 and len(d["loss_trace"][0]) == 60
    assert d["ref_loss_trace"][2][59] == est.ref_loss_trace[2, 59]


def test_to_dict_of_a_data_estimate_has_the_full_data_estimate() -> None:
    import torch

    g = torch.Generator().manual_seed(0)
    x = torch.randn(500, 2, generator=g)
    m = numeric.GaussianLinear(x, x @ torch.ones(2) + torch.randn(500, generator=g))
    est = numeric.estimate_llc(
        m.loss_fn, {"w": m.minimiser()}, m.data, num_chains=2, num_burnin=50, num_draws=40
    )
    d = json.loads(json.dumps(est.to_dict()))
    assert d["full_data"]["mean"] == est.full_data.mean
    assert "loss_trace" not in d["full_data"]
    assert len(est.to_dict(traces=True)["full_data"]["loss_trace"]) == 2
