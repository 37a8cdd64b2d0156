"""Torch's own limits (numeric.backend.torch_limits), the train-mode guard everywhere, tied weights.

* Torch operations without the derivatives or vmap batching rules the estimator needs are named,
  with the way around them: the fused fast path of nn.MultiheadAttention and
  nn.TransformerEncoderLayer in eval mode, scaled-dot-product attention's fused kernels (no
  second derivative), nn.GRU/nn.LSTM (no batching rule), spectral_norm in training mode (out=).
  The errors are real torch errors, raised by the calls the estimator makes.
* ``differentiable_attention()`` (the MHA fast path off, SDPA on its math kernel) is a working
  way around them, and ``run_differentiable`` uses it only where the plain call fails, so other
  losses run bit for bit as before; the Hessian functions use it.
* The Hessian functions and ``estimate_llc_series`` refuse a module in training mode (dropout,
  batch norm), also behind ``numeric.restrict``.
* A tied parameter (an output layer sharing the embedding's weight): a series over recorded
  state dicts equals ``estimate_llc`` at the same weights, bit for bit; a restriction to the
  tied module selects the parameter under its first name.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from torch import Tensor, nn
from torch.func import vmap
from torch.nn import functional as F
from torch.nn.utils import parametrizations

import numeric
from numeric.backend.torch_limits import (
    differentiable_attention,
    explain,
    is_attention_limit,
    raise_if_limitation,
    run_differentiable,
)
from numeric.errors import InvalidInputError
from numeric.hessian.dense import HessianInfo, dense_hessian
from numeric.inputs.problem import setup_problem
from numeric.options import LLCOptions
from numeric.plan import llc_plan, preconditioner

SHORT = dict(num_chains=2, num_burnin=20, num_draws=40, progress=False, step_check=False)

pytestmark = pytest.mark.filterwarnings("ignore:There is a performance drop")


def _seq_data() -> tuple[Tensor, Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(40, 6, 8, generator=g)
    return x, x.mean((1, 2))[:, None]


class _Attention(nn.Module):
    """One nn.MultiheadAttention (no dropout submodule, so train mode is allowed) and a head."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.MultiheadAttention(8, 2, batch_first=True)
        self.o = nn.Linear(8, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.o(self.a(x, x, x, need_weights=False)[0].mean(1))


class _Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.t = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        self.o = nn.Linear(8, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.o(self.t(x).mean(1))


class _Recurrent(nn.Module):
    def __init__(self, cell: type[nn.Module]) -> None:
        super().__init__()
        self.r = cell(8, 4, batch_first=True)
        self.o = nn.Linear(4, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.o(self.r(x)[0][:, -1])


def _model(cls: type[nn.Module], *args: object) -> nn.Module:
    torch.manual_seed(0)
    return cls(*args)


def _error(fn) -> BaseException:
    """The exception ``fn()`` raises (the test fails if it raises none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as exc:
            return exc
    raise AssertionError("expected an error")


def _vmapped_grad(model: nn.Module, x: Tensor, y: Tensor) -> None:
    """The call check_loss makes: the loss vmapped over two chains, with its gradient."""
    loss_fn, w = numeric.from_module(model, F.mse_loss)
    names = list(w)
    flat = torch.cat([w[n].reshape(-1) for n in names])
    sizes = [w[n].numel() for n in names]

    def f(v: Tensor, xb: Tensor, yb: Tensor) -> Tensor:
        parts = torch.split(v, sizes)
        return loss_fn({n: p.view_as(w[n]) for n, p in zip(names, parts)}, (xb, yb))

    def two(t: Tensor) -> Tensor:  # the same 4 samples for both chains
        return t[:4].unsqueeze(0).expand(2, *t[:4].shape)

    ww = flat.expand(2, -1).clone().requires_grad_(True)
    losses = vmap(f, randomness="different")(ww, two(x), two(y))
    torch.autograd.grad(losses.sum(), ww)


def _double_backward(model: nn.Module, x: Tensor, y: Tensor) -> None:
    """One Hessian-vector product of the loss (what the Hessian at w* needs)."""
    params = [p for p in model.parameters()]
    (g, *_) = torch.autograd.grad(F.mse_loss(model(x), y), params, create_graph=True)
    torch.autograd.grad(g.sum(), params[0])


# ---------------------------------------------------------------- explain: real torch errors


def test_the_fused_fast_paths_are_named_with_the_switch_that_turns_them_off() -> None:
    x, y = _seq_data()
    for cls, op in (
        (_Attention, "aten::_native_multi_head_attention"),
        (_Encoder, "aten::_transformer_encoder_layer_fwd"),
    ):
        exc = _error(lambda cls=cls: _vmapped_grad(_model(cls).eval(), x, y))
        why = explain(exc)
        assert why is not None and op in why, (exc, why)
        assert "torch.backends.mha.set_fastpath_enabled(False)" in why
        assert "SDPBackend.MATH" in why
        assert is_attention_limit(exc)


def test_attention_without_a_second_derivative_is_named_with_the_math_kernel() -> None:
    x, y = _seq_data()
    exc = _error(lambda: _double_backward(_model(_Attention), x, y))
    assert "derivative for aten::_scaled_dot_product" in str(exc)
    why = explain(exc)
    assert why is not None and "no second derivative" in why
    assert "torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH)" in why
    assert is_attention_limit(exc)


def test_recurrent_layers_without_a_batching_rule_are_named_with_what_batches() -> None:
    x, y = _seq_data()
    for cell, op in ((nn.GRU, "aten::gru.input"), (nn.LSTM, "aten::lstm.input")):
        exc = _error(lambda cell=cell: _vmapped_grad(_model(_Recurrent, cell), x, y))
        why = explain(exc)
        assert why is not None and f"no batching rule for {op} (" in why, why
        assert "nn.GRUCell" in why and "not supported by torch.func.vmap" in why
        assert not is_attention_limit(exc)


def test_a_recurrence_stepped_over_gru_cells_is_estimated() -> None:
    """The workaround the RNN message names: nn.GRUCell stepped by hand batches under vmap."""

    class Stepped(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.r, self.o = nn.GRUCell(8, 4), nn.Linear(4, 1)

        def forward(self, x: Tensor) -> Tensor:
            h = x.new_zeros(x.shape[0], 4)
            for t in range(x.shape[1]):
                h = self.r(x[:, t], h)
            return self.o(h)

    x, y = _seq_data()
    loss_fn, w = numeric.from_module(_model(Stepped), F.mse_loss)
    est = numeric.estimate_llc(loss_fn, w, (x, y), gamma=100.0, seed=0, **SHORT)
    assert est.config.num_params == 3 * 4 * (8 + 4) + 2 * 3 * 4 + 5
    assert math.isfinite(est.mean)


def test_spectral_norm_in_training_mode_is_named_with_eval() -> None:
    torch.manual_seed(0)
    net = nn.Sequential(parametrizations.spectral_norm(nn.Linear(3, 8)), nn.Tanh(), nn.Linear(8, 1))
    x = torch.randn(20, 3)
    y = x.sum(1, keepdim=True)
    exc = _error(lambda: _vmapped_grad(net, x, y))
    why = explain(exc)
    assert why is not None and "aten::div.out" in why and "module.eval()" in why, (exc, why)


def test_other_errors_are_not_explained_and_chains_are_followed() -> None:
    assert explain(ValueError("shapes (3,) and (4,) do not match")) is None
    flow = RuntimeError(
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow"
    )
    assert explain(flow) is None  # the user's Python if: the caller's own message says so
    torch_error = RuntimeError(
        "derivative for aten::_native_multi_head_attention is not implemented"
    )
    outer = InvalidInputError("loss_fn must be traceable")
    outer.__cause__ = torch_error  # as `raise InvalidInputError(...) from torch_error` sets it
    assert explain(outer) == explain(torch_error) is not None
    assert is_attention_limit(outer)
    with pytest.raises(InvalidInputError, match="fast path") as info:
        raise_if_limitation(torch_error)
    assert info.value.__cause__ is torch_error
    raise_if_limitation(ValueError("not torch's"))  # returns: nothing to name
    raise_if_limitation(info.value)  # returns: already named


# ---------------------------------------------------------------- the ways around them


def test_differentiable_attention_makes_eval_mode_transformers_estimable() -> None:
    x, y = _seq_data()
    loss_fn, w = numeric.from_module(_model(_Encoder).eval(), F.mse_loss)
    assert torch.backends.mha.get_fastpath_enabled()
    with differentiable_attention():
        assert not torch.backends.mha.get_fastpath_enabled()
        est = numeric.estimate_llc(loss_fn, w, (x, y), gamma=100.0, seed=0, **SHORT)
    assert torch.backends.mha.get_fastpath_enabled()  # restored
    assert math.isfinite(est.mean) and est.config.num_params == 609


class _PaddedEncoder(nn.Module):
    """nn.TransformerEncoder over a padded batch: its fast path makes a nested tensor."""

    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        self.t = nn.TransformerEncoder(layer, num_layers=1)
        self.o = nn.Linear(8, 1)

    def forward(self, x: Tensor, pad: Tensor) -> Tensor:
        return self.o(self.t(x, src_key_padding_mask=pad)[:, 0])


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_a_padding_mask_through_the_encoders_fast_path_is_estimated_as_with_it_off() -> None:
    """The nested tensor the fast path builds from src_key_padding_mask has no vmap batching
    rule: the error is named with the switch, and the estimate reruns with the fast path off,
    giving what the user would get with it off."""
    x, y = _seq_data()
    pad = torch.arange(6)[None, :] >= torch.arange(40)[:, None] % 4 + 3  # 3 to 6 tokens kept
    model = _model(_PaddedEncoder).eval()
    with torch.no_grad():
        exc = _error(lambda: vmap(lambda a, b: model(a, b))(x[None, :4], pad[None, :4]))
    assert is_attention_limit(exc)
    assert "enable_nested_tensor=False" in (explain(exc) or "")
    loss_fn, w = numeric.from_module(model, F.mse_loss)
    est = numeric.estimate_llc(loss_fn, w, (x, pad, y), gamma=100.0, seed=0, **SHORT)
    assert torch.backends.mha.get_fastpath_enabled()  # restored
    with differentiable_attention():
        off = numeric.estimate_llc(loss_fn, w, (x, pad, y), gamma=100.0, seed=0, **SHORT)
    assert est.mean == off.mean and math.isfinite(est.mean)


def test_the_hessian_at_w_star_names_the_attention_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """MHA in train mode: the steps' first derivatives work, the Hessian at w* (make_plan:
    Lanczos above MAX_DENSE_DIM parameters, else hessian.dense.dense_hessian) is refused with the
    kernel's name, not a raw torch error; inside differentiable_attention() it is computed."""
    x, y = _seq_data()
    loss_fn, w = numeric.from_module(_model(_Attention), F.mse_loss)
    opts = LLCOptions(gamma=100.0, progress=False)
    problem = setup_problem(loss_fn, w, (x, y), opts)
    assert problem.dim == 297
    match = r"no second derivative.*SDPBackend\.MATH"
    for dense_up_to in (64, preconditioner.MAX_DENSE_DIM):
        monkeypatch.setattr(preconditioner, "MAX_DENSE_DIM", dense_up_to)
        with pytest.raises(InvalidInputError, match=match) as info:
            llc_plan.make_plan(problem, opts)
        assert "derivative for aten::_scaled_dot_product" in str(info.value.__cause__)
    with pytest.raises(InvalidInputError, match=match):
        dense_hessian(lambda v: problem.model.f(v, (x[:4], y[:4])), problem.w_star)
    with differentiable_attention():
        info = llc_plan.make_plan(problem, opts).hessian
    assert isinstance(info, HessianInfo) and info.eigvals.numel() == 297


def test_run_differentiable_retries_attention_only() -> None:
    calls: list[bool] = []

    def fails_once_on_attention() -> float:
        calls.append(torch.backends.mha.get_fastpath_enabled())
        if len(calls) == 1:
            raise RuntimeError(
                "derivative for aten::_native_multi_head_attention is not implemented"
            )
        return 1.5

    assert run_differentiable(fails_once_on_attention) == 1.5
    assert calls == [True, False]  # the retry ran with the fast path off
    assert torch.backends.mha.get_fastpath_enabled()

    def lstm() -> None:
        raise RuntimeError("Batching rule not implemented for aten::lstm.input. We could not ...")

    with pytest.raises(InvalidInputError, match=r"nn\.GRUCell"):
        run_differentiable(lstm)

    def other() -> None:
        raise KeyError("W3")

    with pytest.raises(KeyError):
        run_differentiable(other)


def test_hessian_functions_run_attention_on_the_math_kernel() -> None:
    """hessian_trace on MHA (flash kernel: no second derivative) is retried on the math kernel
    and equals the trace computed inside differentiable_attention() by the user; a model
    without attention is not retried (same bits as before)."""
    x, y = _seq_data()
    loss_fn, w = numeric.from_module(_model(_Attention).eval(), F.mse_loss)
    data = (x, y)
    auto = numeric.hessian_trace(loss_fn, w, data, num_samples=8)
    top = numeric.hessian_top_eigenvalues(loss_fn, w, data, k=2, num_iters=20)
    with differentiable_attention():
        by_hand = numeric.hessian_trace(loss_fn, w, data, num_samples=8)
        top_by_hand = numeric.hessian_top_eigenvalues(loss_fn, w, data, k=2, num_iters=20)
    assert auto == by_hand and math.isfinite(auto.mean) and auto.mean > 0
    assert np.array_equal(top, top_by_hand) and abs(top[0]) >= abs(top[1]) > 0
    assert torch.backends.mha.get_fastpath_enabled()


# ---------------------------------------------------------------- the train-mode guard


def _dropout_net() -> tuple[nn.Module, tuple[Tensor, Tensor]]:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Dropout(0.2), nn.Linear(8, 1))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(60, 3, generator=g)
    return net, (x, torch.sin(x.sum(1, keepdim=True)))


def test_hessian_functions_refuse_training_mode_also_behind_restrict() -> None:
    net, data = _dropout_net()
    loss_fn, w = numeric.from_module(net, F.mse_loss)
    head, u = numeric.restrict(loss_fn, w, net[3])
    for lf, p in ((loss_fn, w), (head, u)):
        with pytest.raises(InvalidInputError, match=r"training mode.*'2' \(Dropout\).*eval\(\)"):
            numeric.hessian_trace(lf, p, data)
        with pytest.raises(InvalidInputError, match=r"training mode.*'2' \(Dropout\)"):
            numeric.hessian_top_eigenvalues(lf, p, data)
    net.eval()
    a = numeric.hessian_trace(loss_fn, w, data, num_samples=8)
    assert a == numeric.hessian_trace(loss_fn, w, data, num_samples=8)  # deterministic now
    assert numeric.hessian_trace(head, u, data, num_samples=8).mean > 0


def test_a_series_refuses_training_mode_once_even_when_recording_errors() -> None:
    net, data = _dropout_net()
    loss_fn, _ = numeric.from_module(net, F.mse_loss)
    states = [{k: v.clone() for k, v in net.state_dict().items()} for _ in range(2)]
    for select in (None, "3"):
        with pytest.raises(InvalidInputError, match=r"training mode.*'2' \(Dropout\)"):
            numeric.estimate_llc_series(loss_fn, states, data, select=select, on_error="record")


# ---------------------------------------------------------------- tied weights


class _TiedLM(nn.Module):
    """An embedding and an output layer sharing its weight (registered as emb.weight first)."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 10)
        self.out.weight = self.emb.weight

    def forward(self, t: Tensor) -> Tensor:
        return self.out(torch.tanh(self.emb(t)))


def _tied_run() -> tuple[nn.Module, tuple[Tensor, Tensor], numeric.CheckpointRecorder]:
    torch.manual_seed(0)
    model = _TiedLM()
    g = torch.Generator().manual_seed(0)
    tok = torch.randint(0, 10, (200,), generator=g)
    data = (tok, (tok + 1) % 10)
    rec = numeric.CheckpointRecorder(model, steps=[0, 60])
    opt = torch.optim.Adam(model.parameters(), lr=3e-2)
    for step in range(61):
        rec(step)
        opt.zero_grad()
        F.cross_entropy(model(data[0]), data[1]).backward()
        opt.step()
    return model, data, rec


def test_a_series_over_a_tied_model_equals_estimate_llc_at_each_checkpoint() -> None:
    model, data, rec = _tied_run()
    loss_fn, w = numeric.from_module(model, F.cross_entropy)
    assert list(w) == ["emb.weight", "out.bias"]
    cp = rec.checkpoints[1].params
    assert list(cp) == ["emb.weight", "out.weight", "out.bias"]
    assert cp["out.weight"] is cp["emb.weight"]  # the recorder keeps one copy of a tied tensor
    series = numeric.estimate_llc_series(loss_fn, rec, data, gamma=100.0, **SHORT)
    assert series.free_params == ("emb.weight", "out.bias") and series.frozen_params == ()
    for k, checkpoint in enumerate(rec.checkpoints):
        params = {n: checkpoint.params[n] for n in ("emb.weight", "out.bias")}
        alone = numeric.estimate_llc(loss_fn, params, data, seed=k, gamma=100.0, **SHORT)
        assert series.estimates[k].mean == alone.mean
        assert np.array_equal(series.estimates[k].loss_trace, alone.loss_trace)
    # state dicts copied name by name (two tensors with equal values) are the same series
    copies = [{n: v.clone() for n, v in c.params.items()} for c in rec.checkpoints]
    again = numeric.estimate_llc_series(loss_fn, copies, data, gamma=100.0, **SHORT)
    assert tuple(again.means) == tuple(series.means)


def test_different_values_under_two_names_of_a_tied_parameter_are_refused() -> None:
    model, data, rec = _tied_run()
    loss_fn, _ = numeric.from_module(model, F.cross_entropy)
    states = [dict(c.params) for c in rec.checkpoints]
    states[1]["out.weight"] = states[1]["emb.weight"] + 1.0
    with pytest.raises(
        InvalidInputError,
        match=r"checkpoint '1' holds different values under 'emb\.weight' and 'out\.weight'.*tied",
    ):
        numeric.estimate_llc_series(loss_fn, states, data, on_error="record", **SHORT)


def test_a_restriction_to_a_tied_module_selects_its_first_name() -> None:
    model, data, rec = _tied_run()
    loss_fn, w = numeric.from_module(model, F.cross_entropy)
    for select in (model.out, "out", ["out.weight", "out.bias"]):
        lr, u = numeric.restrict(loss_fn, w, select)
        assert list(u) == ["emb.weight", "out.bias"], select
        assert lr.frozen.names == ()
    lr, u = numeric.restrict(loss_fn, w, "out.bias")
    assert list(u) == ["out.bias"] and lr.frozen.names == ("emb.weight",)
    est = numeric.estimate_llc(lr, u, data, gamma=100.0, seed=0, **SHORT)
    assert est.config.num_params == 10 and math.isfinite(est.mean)
    series = numeric.estimate_llc_series(loss_fn, rec, data, select=model.out, gamma=100.0, **SHORT)
    assert series.free_params == ("emb.weight", "out.bias") and series.frozen_params == ()


def test_frozen_parameters_are_held_at_each_checkpoint_as_from_module_holds_them() -> None:
    """requires_grad=False: from_module leaves the parameter out of w* (held fixed); a series
    holds it at the checkpoint's values and equals estimate_llc there, bit for bit."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    net[0].weight.requires_grad_(False)
    x = torch.randn(100, 3, generator=torch.Generator().manual_seed(0))
    data = (x, x.sum(1, keepdim=True))
    loss_fn, w = numeric.from_module(net, F.mse_loss)
    series = numeric.estimate_llc_series(loss_fn, [net.state_dict()], data, **SHORT)
    assert series.free_params == tuple(w) == ("0.bias", "2.weight", "2.bias")
    assert series.frozen_params == ("0.weight",)
    alone = numeric.estimate_llc(loss_fn, w, data, seed=0, **SHORT)
    assert series.estimates[0].mean == alone.mean
    net[0].bias.requires_grad_(False)
    rest = {k: v for k, v in w.items() if k != "0.bias"}
    with pytest.raises(InvalidInputError, match=r"submodule '0', whose parameters are all frozen"):
        numeric.restrict(loss_fn, rest, net[0])


def test_a_recorded_state_holds_tensors_only() -> None:
    rec = numeric.CheckpointRecorder(lambda: {"w": torch.zeros(2), "lr": 0.1})
    with pytest.raises(InvalidInputError, match=r"'lr', a float; a checkpoint holds tensors"):
        rec(0)
