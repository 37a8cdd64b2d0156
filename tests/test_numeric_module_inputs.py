"""``from_module`` on ordinary modules: frozen parameters, buffers, dtypes, and params that do
not match the module.

The fine-tuning model: a frozen tanh layer (3 → 8) and a trained linear head (8 → 1), the head
solved by least squares on noisy targets, so w* is an exact regular minimum of L_n over the head's
9 parameters, where L_n is exactly quadratic: λ̂ must match ½Σ nβh/(nβh + γ) over the head alone,
not a value over the 41 parameters of the whole network.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import numeric
from numeric.errors import InvalidInputError

SHORT = dict(num_chains=2, num_burnin=50, num_draws=100, seed=0, progress=False)


def _data(n: int = 400) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 3, generator=g, dtype=torch.float64)
    y = torch.sin(x.sum(1, keepdim=True)) + 0.1 * torch.randn(n, 1, generator=g, dtype=x.dtype)
    return x, y


def _fine_tuned() -> tuple[nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    """Frozen first layer, head at the least-squares solution (an exact minimum)."""
    x, y = _data()
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    m[0].requires_grad_(False)
    with torch.no_grad():
        z = torch.cat([torch.tanh(m[0](x)), torch.ones(len(x), 1, dtype=x.dtype)], 1)
        sol = torch.linalg.lstsq(z, y).solution
        m[2].weight.copy_(sol[:8].T)
        m[2].bias.copy_(sol[8])
    return m, (x, y)


def test_frozen_parameters_are_held_fixed_not_sampled():
    m, data = _fine_tuned()
    loss_fn, w = numeric.from_module(m, F.mse_loss)
    assert list(w) == ["2.weight", "2.bias"]
    est = numeric.estimate_llc(loss_fn, w, data, num_chains=4, seed=0, progress=False)
    assert est.config.num_params == 9
    assert est.ess >= 100
    # L_n is exactly quadratic in the head (H = 2·ZᵀZ/n with Z the frozen features and a 1), so
    # λ_β = ½Σ nβh/(nβh + γ) over its 9 eigenvalues, computed here from the features
    x, _ = data
    with torch.no_grad():
        z = torch.cat([torch.tanh(m[0](x)), torch.ones(len(x), 1, dtype=x.dtype)], 1)
    h = torch.linalg.eigvalsh(2 * z.T @ z / len(x))
    nb = est.nbeta
    want = float(0.5 * (nb * h / (nb * h + 1.0)).sum())
    assert 2.0 < want < 4.5  # at most 9/2: nothing from the 32 frozen weights
    assert abs(est.mean - want) <= 4 * est.stderr, (est.mean, want, est.stderr)
    # the same as restricting the whole network to the head explicitly
    all_w = {k: v.detach().clone() for k, v in m.named_parameters()}
    lr, wr = numeric.restrict(loss_fn, all_w, ["2.weight", "2.bias"])
    same = numeric.estimate_llc(lr, wr, data, num_chains=4, seed=0, progress=False)
    assert same.mean == pytest.approx(est.mean, rel=1e-9)


def test_a_module_without_trainable_parameters_is_refused():
    m = nn.Linear(2, 1).requires_grad_(False)
    with pytest.raises(InvalidInputError, match="no trainable parameters"):
        numeric.from_module(m, F.mse_loss)


def _mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda w: {**w, "2.weigth": w.pop("2.weight")}, r"'2\.weigth'.*not parameters"),
        (lambda w: {k: v for k, v in w.items() if k != "2.bias"}, r"lacks .*'2\.bias'.*restrict"),
        (lambda w: {"0.weight": w["0.weight"]}, r"lacks .*'0\.bias'"),
    ],
)
def test_params_that_do_not_match_the_module_are_refused(edit, match):
    loss_fn, w = numeric.from_module(_mlp(), F.mse_loss)
    with pytest.raises(InvalidInputError, match=match):
        numeric.estimate_llc(loss_fn, edit(dict(w)), _data(), **SHORT)


def test_buffers_in_params_are_refused():
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1)).double().eval()
    loss_fn, _ = numeric.from_module(m, F.mse_loss)
    state = {k: v.detach().clone() for k, v in m.state_dict().items() if v.is_floating_point()}
    with pytest.raises(InvalidInputError, match=r"buffer\(s\) \['1\.running_mean'"):
        numeric.estimate_llc(loss_fn, state, _data(), **SHORT)


class _Tied(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(3, 3, bias=False)
        self.b = nn.Linear(3, 3, bias=False)
        self.b.weight = self.a.weight
        self.head = nn.Linear(3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.tanh(self.b(torch.tanh(self.a(x)))))


def test_tied_parameters_are_one_parameter():
    m = _Tied().double()
    loss_fn, w = numeric.from_module(m, F.mse_loss)
    assert list(w) == ["a.weight", "head.weight", "head.bias"]
    est = numeric.estimate_llc(loss_fn, w, _data(), **SHORT)
    assert est.config.num_params == 13
    twice = {**w, "b.weight": w["a.weight"].clone()}
    with pytest.raises(InvalidInputError, match=r"'a\.weight' and 'b\.weight'.*tied"):
        numeric.estimate_llc(loss_fn, twice, _data(), **SHORT)


def _bn_model() -> nn.Module:
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    with torch.no_grad():
        m[1].running_mean.uniform_(-1, 1)
        m[1].running_var.uniform_(0.5, 2)
    return m


def test_a_refused_train_mode_call_leaves_the_module_untouched():
    m = _bn_model()  # training mode
    before = {k: v.clone() for k, v in m.state_dict().items()}
    loss_fn, w = numeric.from_module(m, F.mse_loss)
    x, y = (t.float() for t in _data())
    with pytest.raises(InvalidInputError, match="training mode"):
        numeric.estimate_llc(loss_fn, w, (x, y), **SHORT)
    for k, v in m.state_dict().items():
        assert torch.equal(v, before[k]), k


def test_the_train_mode_guard_sees_through_restrict():
    m = _bn_model()
    loss_fn, w = numeric.from_module(m, F.mse_loss)
    lr, wr = numeric.restrict(loss_fn, w, m[2])
    x, y = (t.float() for t in _data())
    with pytest.raises(InvalidInputError, match=r"training mode.*'1' \(BatchNorm1d\)"):
        numeric.estimate_llc(lr, wr, (x, y), **SHORT)


def test_batch_norm_without_running_statistics_is_refused_in_eval_mode_too():
    """track_running_stats=False: eval mode still normalises by the minibatch's statistics, so
    λ̂ would depend on batch_size (measured 3.9, 6.7, 7.2 at batch 8, 64, 256 on one w*)."""
    torch.manual_seed(0)
    m = nn.Sequential(
        nn.Linear(3, 8), nn.BatchNorm1d(8, track_running_stats=False), nn.Tanh(), nn.Linear(8, 1)
    ).eval()
    loss_fn, w = numeric.from_module(m, F.mse_loss)
    x, y = (t.float() for t in _data())
    with pytest.raises(InvalidInputError, match=r"'1' \(BatchNorm1d\) keep no running stat"):
        numeric.estimate_llc(loss_fn, w, (x, y), **SHORT)
    lr, wr = numeric.restrict(loss_fn, w, m[3])
    with pytest.raises(InvalidInputError, match="track_running_stats=False"):
        numeric.estimate_llc(lr, wr, (x, y), **SHORT)


def test_instance_norm_tracking_statistics_in_training_mode_is_refused_untouched():
    """InstanceNorm with track_running_stats=True updates its running statistics on every
    training-mode call (vmap refuses that with a batch-norm message); without tracking it is a
    per-sample function of w and is estimated in either mode."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 2, 6, generator=g)
    y = x.std(dim=2).sum(1, keepdim=True)
    for track in (True, False):
        torch.manual_seed(0)
        m = nn.Sequential(
            nn.Conv1d(2, 3, 3),
            nn.InstanceNorm1d(3, track_running_stats=track),
            nn.Flatten(),
            nn.Linear(12, 1),
        )
        loss_fn, w = numeric.from_module(m, F.mse_loss)
        before = {k: v.clone() for k, v in m.state_dict().items()}
        if track:
            with pytest.raises(InvalidInputError, match=r"training mode.*'1' \(InstanceNorm1d\)"):
                numeric.estimate_llc(loss_fn, w, (x, y), gamma=100.0, **SHORT)
        else:
            est = numeric.estimate_llc(loss_fn, w, (x, y), gamma=100.0, **SHORT)
            assert est.config.num_params == 34 and est.stderr > 0
        for k, v in m.state_dict().items():
            assert torch.equal(v, before[k]), k


@pytest.mark.parametrize("restricted", [False, True])
def test_dtype_casts_the_modules_buffers_too(restricted):
    """float32 module with batch norm, estimated in float64: L_n(w*) is the float64 loss of
    the module with its float32 buffers cast exactly."""
    m = _bn_model().eval()
    x, y = _data()
    loss_fn, w = numeric.from_module(m, F.mse_loss)
    if restricted:
        loss_fn, w = numeric.restrict(loss_fn, w, m[2])
    est = numeric.estimate_llc(loss_fn, w, (x, y), dtype=torch.float64, **SHORT)
    # the user's module is not converted by the estimate
    assert m[1].running_mean.dtype == m[2].weight.dtype == torch.float32
    want = F.mse_loss(copy.deepcopy(m).double()(x), y).item()
    assert est.init_loss == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("restricted", [False, True])
def test_dtype_casts_a_loss_modules_own_tensors(restricted):
    """Cross-entropy with a float32 class weight, estimated in float64: the loss's weight is
    cast in a copy (it failed with "expected scalar type Double but found Float"); the user's
    loss module keeps its float32 weight."""
    m, x, y = _classifier()
    loss = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0]))
    loss_fn, w = numeric.from_module(m, loss)
    if restricted:
        loss_fn, w = numeric.restrict(loss_fn, w, m[2])
    est = numeric.estimate_llc(loss_fn, w, (x, y), dtype=torch.float64, **SHORT)
    assert loss.weight.dtype == torch.float32
    want = F.cross_entropy(copy.deepcopy(m).double()(x.double()), y, weight=loss.weight.double())
    assert est.init_loss == pytest.approx(want.item(), rel=1e-12)


def test_a_loss_undefined_on_some_minibatches_is_named_not_taken_for_a_divergence():
    """Cross-entropy with ignore_index where 70% of the targets are ignored: L_n(w*) is finite,
    but a batch of 4 whose targets are all ignored gives nan at w*. It was a DivergenceError after
    three restarts that advised a larger gamma."""
    m, x, y = _classifier()
    y = y.clone()
    y[torch.rand(len(y), generator=torch.Generator().manual_seed(0)) < 0.7] = -100
    loss_fn, w = numeric.from_module(m, nn.CrossEntropyLoss(ignore_index=-100))
    with pytest.raises(InvalidInputError, match=r"loss at w\* is nan on a minibatch.*batch_size"):
        numeric.estimate_llc(loss_fn, w, (x, y), batch_size=4, **SHORT)


def test_dict_data_with_a_module_loss_says_what_to_pass():
    x, y = _data()
    loss_fn, w = numeric.from_module(_mlp(), F.mse_loss)
    # dict batches call module(**batch): nn.Sequential takes no keywords x, y
    with pytest.raises(InvalidInputError, match=r"keys \['x', 'y'\].*inputs="):
        numeric.estimate_llc(loss_fn, w, {"x": x, "y": y}, **SHORT)


def _classifier() -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(300, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()  # 3 classes
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)), x, y


def test_a_state_dict_with_an_integer_buffer_is_named_as_a_buffer():
    m = _bn_model().eval()
    loss_fn, _ = numeric.from_module(m, F.mse_loss)
    x, y = (t.float() for t in _data())
    with pytest.raises(InvalidInputError, match=r"buffer\(s\) \['1.running_mean'.*state_dict"):
        numeric.estimate_llc(loss_fn, m.state_dict(), (x, y), **SHORT)


@pytest.mark.parametrize("where", [3, 250])
def test_a_label_out_of_range_is_named_wherever_it_is(where):
    """A class label ≥ C among the first 16 samples (the loss's first call) or after them (the
    full-data pass): an InvalidInputError about the labels, not a raw IndexError."""
    m, x, y = _classifier()
    y = y.clone()
    y[where] = 3
    loss_fn, w = numeric.from_module(m, F.cross_entropy)
    match = "full data.*" if where >= 16 else ""
    with pytest.raises(InvalidInputError, match=match + r"class labels must lie in \[0, C\)"):
        numeric.estimate_llc(loss_fn, w, (x, y), **SHORT)


class _Pair(nn.Module):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind, self.lin = kind, nn.Linear(4, 3)

    def forward(self, x: torch.Tensor):
        z = self.lin(x)
        return (z, z.softmax(-1)) if self.kind == "tuple" else {"logits": z}


@pytest.mark.parametrize("kind", ["tuple", "dict"])
def test_a_module_returning_a_tuple_or_dict_is_told_to_pick_the_output(kind):
    _, x, y = _classifier()
    torch.manual_seed(0)
    m = _Pair(kind)
    loss_fn, w = numeric.from_module(m, F.cross_entropy)
    with pytest.raises(InvalidInputError, match=f"returns a {kind}, not a tensor.*out\\[0\\]"):
        numeric.estimate_llc(loss_fn, w, (x, y), **SHORT)
    pick = (
        (lambda out, t: F.cross_entropy(out[0], t))
        if kind == "tuple"
        else (lambda out, t: F.cross_entropy(out["logits"], t))
    )
    loss_fn, w = numeric.from_module(m, pick)
    assert numeric.estimate_llc(loss_fn, w, (x, y), gamma=100.0, **SHORT).config.num_params == 15


def test_a_sparse_embedding_is_told_to_use_dense_gradients():
    g = torch.Generator().manual_seed(0)
    tok = torch.randint(0, 5, (100, 3), generator=g)
    y = (tok.sum(1, keepdim=True) / 5.0).float()
    for sparse in (True, False):
        torch.manual_seed(0)
        m = nn.Sequential(nn.Embedding(5, 2, sparse=sparse), nn.Flatten(), nn.Linear(6, 1))
        loss_fn, w = numeric.from_module(m, F.mse_loss)
        if sparse:
            with pytest.raises(InvalidInputError, match="sparse=False"):
                numeric.estimate_llc(loss_fn, w, (tok, y), **SHORT)
        else:
            est = numeric.estimate_llc(loss_fn, w, (tok, y), gamma=100.0, **SHORT)
            assert est.config.num_params == 17


def test_nan_inputs_hidden_from_the_loss_value_are_named_by_the_gradient_check():
    m, x, y = _classifier()
    x = x.clone()
    x[7, 2] = float("nan")

    class Hide(nn.Module):
        def forward(self, z: torch.Tensor) -> torch.Tensor:
            return torch.nan_to_num(z)

    loss_fn, w = numeric.from_module(nn.Sequential(m, Hide()), F.cross_entropy)
    with pytest.raises(InvalidInputError, match=r"∇L_n\(w\*\) is not finite.*NaN or inf entries"):
        numeric.estimate_llc(loss_fn, w, (x, y), **SHORT)


def test_a_target_of_another_shape_than_the_output_is_named_not_broadcast():
    """mse_loss of a [B, 1] output against [B] targets is a [B, B] comparison: before, λ̂ = −16.6
    with 'w* is not a local minimum ... train further'; now the shapes are named."""
    m, (x, y) = _fine_tuned()
    loss_fn, w = numeric.from_module(m, F.mse_loss)
    with pytest.raises(InvalidInputError, match=r"target of another shape.*torch.Size\(\[16\]\)"):
        numeric.estimate_llc(loss_fn, w, (x, y[:, 0]), **SHORT)
    est = numeric.estimate_llc(loss_fn, w, (x, y), gamma=100.0, **SHORT)
    assert est.config.num_params == 9
