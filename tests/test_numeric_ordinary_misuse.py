"""A third audit of ordinary use (2026-11-29): each input here was answered wrongly before (a
bare error from deep inside, a silent wrong number, or an estimate of 0 ± 0 without an error)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import numeric
from numeric import InvalidInputError, NumericError

FAST = dict(num_draws=60, num_burnin=20, step_check=False, progress=False)


def _regression(n: int = 64, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return x, torch.sin(x.sum(1, keepdim=True))


def _mlp(hidden: int = 8, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)  # nn.Linear's initialisation only
    return nn.Sequential(nn.Linear(3, hidden), nn.Tanh(), nn.Linear(hidden, 1)).eval()


def test_an_nbeta_beyond_the_dtype_is_a_numeric_error_not_a_math_domain_error() -> None:
    """nβ = 10³⁰⁰ overflows nβ·∇²L in float32; the step-size rule took log(0) there."""
    x = torch.randn(64, 2, generator=torch.Generator().manual_seed(0))
    y = x @ torch.tensor([1.0, -1.0])
    w = torch.linalg.lstsq(x, y[:, None]).solution[:, 0]

    def loss_fn(p, b):
        return 0.5 * (b[0] @ p["w"] - b[1]).square().mean()

    for nbeta in (1e200, 1e300):
        with pytest.raises(NumericError):
            numeric.estimate_llc(loss_fn, {"w": w}, (x, y), nbeta=nbeta, **FAST)


def test_chains_that_never_move_are_an_error_not_zero_plus_minus_zero() -> None:
    est = numeric.estimate_llc_potential(
        lambda w: (w**2).sum(-1), [0.0, 0.0], 1000, step_size=100.0, metric=False, progress=False
    )
    assert est.mean == 0.0  # no proposal accepted: every draw is w*
    errors = {f.code for f in est.diagnostics if f.severity == "error"}
    assert "low_acceptance" in errors


def test_a_summed_loss_is_refused_where_the_first_samples_fit_exactly() -> None:
    """A perfect fit makes L(w*) = 0 on every batch, where a sum and a mean agree; the check
    moves off w* to tell them apart."""
    x, _ = _regression()
    lin = nn.Linear(3, 1, bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0, 3.0]]))
        y = lin(x)
    summed = numeric.from_module(lin, lambda o, t: F.mse_loss(o, t, reduction="sum"))
    with pytest.raises(InvalidInputError, match="sum over the batch"):
        numeric.estimate_llc(*summed, (x, y), **FAST)
    mean = numeric.from_module(lin, F.mse_loss)
    assert np.isfinite(numeric.estimate_llc(*mean, (x, y), **FAST).mean)


def test_the_memory_check_counts_the_activations(monkeypatch) -> None:
    """A wide layer keeps 2·C rows × batch × 4,096 activations for the backward pass: far more
    than the chains' state, which was all the check counted."""
    x, y = _regression(512)
    loss_fn, w = numeric.from_module(_mlp(4096), F.mse_loss)
    monkeypatch.setattr(numeric.backend.memory, "available_memory", lambda device: 64 * 2**20)
    # the state and minibatches fit in 64 MiB (0.01 GiB); 16 rows × 256 samples × 4,096 do not
    with pytest.raises(InvalidInputError, match=r"the activations 0\.[1-9]\d* GiB"):
        numeric.estimate_llc(loss_fn, w, (x, y), num_chains=8, batch_size=256, **FAST)


def test_hessian_measures_check_the_loss_and_params_as_the_estimate_does() -> None:
    x, y = _regression()
    model = _mlp()
    loss_fn, w = numeric.from_module(model, F.mse_loss)
    per_sample = numeric.from_module(model, nn.MSELoss(reduction="none"))
    with pytest.raises(InvalidInputError, match=r"scalar tensor, got a torch.float32 tensor"):
        numeric.hessian_trace(*per_sample, (x, y))
    with pytest.raises(InvalidInputError, match=r"got 3 \(int\)"):
        numeric.hessian_trace(lambda p: 3, torch.ones(5))
    with pytest.raises(InvalidInputError, match="floating-point tensor"):
        numeric.hessian_trace(lambda p: (p.float() ** 2).sum(), torch.ones(5, dtype=torch.long))
    with pytest.raises(InvalidInputError, match="non-empty"):
        numeric.hessian_trace(lambda p: p.sum(), torch.zeros(0))
    with pytest.raises(InvalidInputError, match=r"\['foo'\]"):
        numeric.hessian_trace(loss_fn, {**w, "foo": torch.ones(3)}, (x, y))
    with pytest.raises(InvalidInputError, match="lacks the module's trainable"):
        numeric.hessian_trace(loss_fn, dict(list(w.items())[:2]), (x, y))
    top = numeric.hessian_top_eigenvalues(loss_fn, w, (x, y), k=np.int64(2))
    assert top.shape == (2,)


def test_float64_params_with_a_float32_batch_norm_run_in_float64() -> None:
    x, y = _regression()
    torch.manual_seed(0)
    bn = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.Linear(8, 1)).eval()
    loss_fn, w = numeric.from_module(bn, F.mse_loss)
    trace = numeric.hessian_trace(loss_fn, {k: v.double() for k, v in w.items()}, (x, y))
    assert np.isfinite(trace.mean) and trace.mean > 0


def test_meta_tensors_are_refused_by_name() -> None:
    x, y = _regression()
    loss_fn, w = numeric.from_module(_mlp(), F.mse_loss)
    with pytest.raises(InvalidInputError, match=r"params\['0.weight'\] is on the meta device"):
        numeric.estimate_llc(loss_fn, {k: v.to("meta") for k, v in w.items()}, (x, y))
    with pytest.raises(InvalidInputError, match="data holds a tensor on the meta device"):
        numeric.estimate_llc(loss_fn, w, (x, y.to("meta")))


def test_params_of_another_architecture_are_refused() -> None:
    x, y = _regression()
    loss_fn, _ = numeric.from_module(_mlp(8), F.mse_loss)
    other = dict(_mlp(4).named_parameters())
    with pytest.raises(InvalidInputError, match=r"params\['0.weight'\] has shape \(4, 3\)"):
        numeric.estimate_llc(loss_fn, other, (x, y), **FAST)


def test_a_frozen_parameter_passed_in_params_is_refused_not_sampled() -> None:
    x, y = _regression()
    model = _mlp()
    model[0].weight.requires_grad_(False)
    loss_fn, w = numeric.from_module(model, F.mse_loss)
    assert "0.weight" not in w  # from_module holds it fixed
    with pytest.raises(InvalidInputError, match=r"frozen parameter\(s\) \['0.weight'\]"):
        numeric.estimate_llc(loss_fn, dict(model.named_parameters()), (x, y), **FAST)


def test_series_seeds_are_python_ints_checked_before_any_estimate() -> None:
    x, y = _regression()
    model = _mlp()
    loss_fn, w = numeric.from_module(model, F.mse_loss)
    calls = []

    def counted(p, b):
        calls.append(1)
        return loss_fn(p, b)

    cps = [dict(w), {k: v.clone() for k, v in w.items()}]
    with pytest.raises(InvalidInputError, match="below 2\\^64"):
        numeric.estimate_llc_series(counted, cps, (x, y), seed=2**64 - 1, gamma=100.0, **FAST)
    assert not calls
    series = numeric.estimate_llc_series(
        loss_fn, cps, (x, y), seed=np.int64(1), gamma=100.0, **FAST
    )
    assert series.seeds == (1, 2) and all(type(s) is int for s in series.seeds)
    assert json.loads(json.dumps(series.to_dict()))["seeds"] == [1, 2]


def test_a_potential_indexing_the_chains_axis_is_refused_at_three_parameters() -> None:
    """K(w) = w[0]² + w[1]² + w[2]² reads the chains' axis; a [3, 3] probe let it through."""
    with pytest.raises(InvalidInputError, match=r"last axis \(w\[\.\.\., j\], not w\[j\]\)"):
        numeric.estimate_llc_potential(
            lambda w: w[0] ** 2 + w[1] ** 2 + w[2] ** 2, [0.0, 0.0, 0.0], 1000, progress=False
        )


def test_estimates_compare_and_hash_by_identity() -> None:
    kw = dict(num_draws=60, num_burnin=20, progress=False)
    a = numeric.estimate_llc_potential(lambda w: w[..., 0] ** 2, [0.0], 100, **kw)
    b = numeric.estimate_llc_potential(lambda w: w[..., 0] ** 2, [0.0], 100, **kw)
    assert a == a and a != b and len({a, b}) == 2


def test_the_recorder_refuses_a_step_again_or_out_of_order() -> None:
    rec = numeric.CheckpointRecorder(_mlp(), every=2)
    assert rec(2) and not rec(3)
    with pytest.raises(InvalidInputError, match="step 3 comes again"):
        rec(3)
    with pytest.raises(InvalidInputError, match="step 2 comes after step 3"):
        rec(2)  # compared with the last step called, not only the last recorded


def test_data_nested_in_data_is_refused_by_name() -> None:
    x, y = _regression()
    loss_fn, w = numeric.from_module(_mlp(), F.mse_loss)
    with pytest.raises(InvalidInputError, match=r"data\[0\] is a tuple: data nested"):
        numeric.estimate_llc(loss_fn, w, ((x,), y), **FAST)


def test_the_activation_count_leaves_out_the_weights_themselves() -> None:
    """Views of w* that autograd saves are the chains' state, counted apart: a forward pass that
    saves a 40 MB view of the weights keeps only its activations (16 × 10 floats per sample)."""
    from numeric.backend.memory import activation_bytes

    w = torch.zeros(10**7, requires_grad=True)
    x = torch.randn(16, 10)

    def forward(b: int) -> torch.Tensor:
        return (x[:b] @ w[:100].reshape(10, 10)).square().mean() + w.sum() * 0

    kept = activation_bytes(forward, w, batch=256, rows=8, n=16)
    assert 0 < kept < 2**20  # 40 MB per row, were the weights counted
