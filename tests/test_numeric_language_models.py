"""The language-model path (issue 63 item 4): dict batches in ``from_module``, the causal-LM
loss, data kept on the host, element masks in ``restrict``, and a tiny GPT-2 end to end."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

import numeric
from numeric.errors import InvalidInputError
from numeric.inputs.host_data import HOST_DATA_FRACTION, HostData, place_data

F64 = torch.float64
SHORT = dict(num_chains=2, num_burnin=10, num_draws=30, batch_size=32, dtype=F64)


class TwoInputs(nn.Module):
    """(x, z) ↦ b(tanh(a(x))) + z: a module whose forward takes two named inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(3, 2), nn.Linear(2, 1)

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x))) + z


def _mse(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return (out - target).square().mean()


@pytest.fixture
def regression():
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)  # the module's initial weights only
    module = TwoInputs().double()
    x, z, y = (torch.randn(200, k, generator=g, dtype=F64) for k in (3, 1, 1))
    return module, {"x": x, "z": z, "y": y}


# ----------------------------------------------------------------------------- dict batches


def test_dict_batch_loss_is_the_modules_loss_on_the_named_inputs(regression):
    module, data = regression
    loss_fn, w = numeric.from_module(module, lambda o, b: _mse(o, b["y"]), inputs=("x", "z"))
    with torch.no_grad():
        a = torch.tanh(data["x"] @ module.a.weight.T + module.a.bias)
        want = ((a @ module.b.weight.T + module.b.bias + data["z"] - data["y"]) ** 2).mean()
    assert float(loss_fn(w, data)) == pytest.approx(float(want), rel=1e-14)
    model_loss_fn, _ = numeric.from_module(
        module, model_loss=lambda model, b: _mse(model(b["x"], z=b["z"]), b["y"])
    )
    assert float(model_loss_fn(w, data)) == pytest.approx(float(want), rel=1e-14)


def test_dict_batches_give_the_tuple_batches_numbers(regression):
    module, data = regression
    tuple_loss, w = numeric.from_module(module, _mse)
    dict_loss, _ = numeric.from_module(module, lambda o, b: _mse(o, b["y"]), inputs=("x", "z"))
    by_tuple = numeric.estimate_llc(
        tuple_loss, w, (data["x"], data["z"], data["y"]), seed=3, **SHORT
    )
    by_dict = numeric.estimate_llc(dict_loss, w, data, seed=3, **SHORT)
    assert by_dict.mean == by_tuple.mean
    assert torch.equal(torch.as_tensor(by_dict.loss_trace), torch.as_tensor(by_tuple.loss_trace))


def test_from_module_refuses_unclear_losses(regression):
    module, data = regression
    with pytest.raises(InvalidInputError, match="neither"):
        numeric.from_module(module)
    with pytest.raises(InvalidInputError, match="both"):
        numeric.from_module(module, _mse, model_loss=lambda m, b: m(b))
    with pytest.raises(InvalidInputError, match="inputs must be"):
        numeric.from_module(module, _mse, inputs="x")
    loss_fn, w = numeric.from_module(module, _mse, inputs=("x", "t"))
    with pytest.raises(InvalidInputError, match=r"\['t'\]"):
        loss_fn(w, data)


# ----------------------------------------------------------------------------- causal-LM loss


def _log_softmax_at(row: list[float], k: int) -> float:
    return row[k] - math.log(sum(math.exp(v) for v in row))


def test_causal_lm_loss_against_a_hand_computed_cross_entropy():
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(3, 4, 5, generator=g, dtype=F64)
    ids = torch.tensor([[1, 4, 2, 0], [3, 3, 1, 2], [0, 2, 2, 2]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 0]])  # right padding
    labels = ids.clone()
    labels[1, 2] = -100  # an ignored label
    rows = logits.tolist()
    # sequence 0: tokens 1, 2 predicted (3 is padding); 1: tokens 1, 3 (2 ignored); 2: none
    l0 = -(_log_softmax_at(rows[0][0], 4) + _log_softmax_at(rows[0][1], 2)) / 2
    l1 = -(_log_softmax_at(rows[1][0], 3) + _log_softmax_at(rows[1][2], 2)) / 2
    want = (l0 + l1 + 0.0) / 3
    batch = {"input_ids": ids, "attention_mask": mask, "labels": labels}
    assert float(numeric.causal_lm_loss(logits, batch)) == pytest.approx(want, rel=1e-13)

    class Output:
        def __init__(self, logits: torch.Tensor) -> None:
            self.logits = logits

    assert float(numeric.causal_lm_loss(Output(logits), batch)) == pytest.approx(want, rel=1e-13)
    # no padding: the mean over sequences of each one's mean over its 3 predicted tokens
    full = -sum(_log_softmax_at(rows[i][t], int(ids[i, t + 1])) for i in range(3) for t in range(3))
    assert float(numeric.causal_lm_loss(logits, ids)) == pytest.approx(full / 9, rel=1e-13)


def test_causal_lm_loss_refuses_mismatched_shapes():
    with pytest.raises(InvalidInputError, match="do not match"):
        numeric.causal_lm_loss(torch.zeros(2, 4, 5), torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(InvalidInputError, match="integer"):
        numeric.causal_lm_loss(torch.zeros(2, 4, 5), torch.zeros(2, 4))
    with pytest.raises(InvalidInputError, match="'labels' or 'input_ids'"):
        numeric.causal_lm_loss(torch.zeros(2, 4, 5), {"ids": torch.zeros(2, 4, dtype=torch.long)})


# ----------------------------------------------------------------------------- host data


def test_host_data_gives_the_resident_numbers_at_one_seed(regression):
    module, data = regression
    loss_fn, w = numeric.from_module(module, lambda o, b: _mse(o, b["y"]), inputs=("x", "z"))
    floats32 = {k: v.float() for k, v in data.items()}  # cast per minibatch to the run's dtype
    resident = numeric.estimate_llc(loss_fn, w, floats32, seed=5, **SHORT)
    streamed = numeric.estimate_llc(loss_fn, w, HostData(floats32), seed=5, **SHORT)
    assert streamed.mean == resident.mean
    assert torch.equal(torch.as_tensor(streamed.loss_trace), torch.as_tensor(resident.loss_trace))


def test_host_data_rows_and_placement():
    x = torch.arange(12.0).reshape(6, 2)
    y = torch.arange(6)
    held = HostData((x, y)).to_run(torch.device("cpu"), F64)
    xs, ys = held[torch.tensor([[5, 0], [2, 2]])]
    assert xs.dtype == F64 and ys.dtype == torch.int64
    assert xs.tolist() == [[[10.0, 11.0], [0.0, 1.0]], [[4.0, 5.0], [4.0, 5.0]]]
    assert ys.tolist() == [[5, 0], [2, 2]]
    assert len(held) == 6
    # on the CPU host and device are one: data are never held back automatically
    assert isinstance(place_data((x, y), torch.device("cpu"), F64), tuple)
    assert 0 < HOST_DATA_FRACTION < 1
    with pytest.raises(InvalidInputError, match="tensors"):
        HostData((x, [1, 2, 3, 4, 5, 6]))


# ----------------------------------------------------------------------------- element masks


def test_an_all_true_mask_is_the_whole_parameter_bit_for_bit(regression):
    module, data = regression
    loss_fn, w = numeric.from_module(module, lambda o, b: _mse(o, b["y"]), inputs=("x", "z"))
    by_name, u_name = numeric.restrict(loss_fn, w, "a.weight")
    mask = torch.ones_like(w["a.weight"], dtype=torch.bool)
    by_mask, u_mask = numeric.restrict(loss_fn, w, {"a.weight": mask})
    assert u_mask["a.weight"].shape == (6,)
    whole = numeric.estimate_llc(by_name, u_name, data, seed=7, **SHORT)
    masked = numeric.estimate_llc(by_mask, u_mask, data, seed=7, **SHORT)
    assert masked.mean == whole.mean
    assert torch.equal(torch.as_tensor(masked.loss_trace), torch.as_tensor(whole.loss_trace))


def _qkv_head_mask(d: int, heads: int, head: int, *, rows: bool) -> torch.Tensor:
    """One head's q, k and v outputs of a fused [3d] projection: rows of an nn.Linear weight
    [3d, d] (``rows``) or columns of a transformers Conv1D weight [d, 3d]."""
    hd = d // heads
    out = torch.zeros(3 * d, dtype=torch.bool)
    for j in range(3):
        out[j * d + head * hd : j * d + (head + 1) * hd] = True
    return out[:, None].expand(3 * d, d).clone() if rows else out[None, :].expand(d, 3 * d).clone()


def test_one_heads_mask_samples_only_its_elements():
    torch.manual_seed(0)
    qkv = nn.Linear(8, 24).double()
    g = torch.Generator().manual_seed(2)
    x = torch.randn(100, 8, generator=g, dtype=F64)
    y = torch.randn(100, 24, generator=g, dtype=F64)
    loss_fn, w = numeric.from_module(qkv, _mse)
    mask = _qkv_head_mask(8, 2, 1, rows=True)
    restricted, u = numeric.restrict(loss_fn, w, {"weight": mask})
    assert u["weight"].tolist() == w["weight"][mask].tolist()
    # the full weight the loss sees: u in the head's rows, w* elsewhere, exactly
    moved = {"weight": u["weight"] + 1.0}
    with torch.no_grad():
        seen = restricted.masks.expand(moved, {"weight": w["weight"]})["weight"]
    assert torch.equal(seen[~mask], w["weight"][~mask])
    assert torch.equal(seen[mask], moved["weight"])
    # the gradient reaches the selected elements only, as the full gradient's entries there
    full = torch.func.grad(loss_fn)(w, (x, y))["weight"]
    part = torch.func.grad(restricted)(u, (x, y))["weight"]
    assert part.shape == (int(mask.sum()),) == (96,)
    assert torch.allclose(part, full[mask], rtol=1e-12, atol=0)

    class Trap:
        """The loss plus +inf wherever a masked-out element differs from w* (never, if the
        masked-out gradient is never applied), else exactly 0."""

        def __call__(self, params, batch):
            moved_out = ((params["weight"] - w["weight"]) * ~mask).abs().sum()
            return loss_fn(params, batch) + torch.where(moved_out > 0, math.inf, 0.0)

    trapped, u_t = numeric.restrict(Trap(), w, {"weight": mask})
    plain, u_p = numeric.restrict(lambda p, b: loss_fn(p, b), w, {"weight": mask})
    est_t = numeric.estimate_llc(trapped, u_t, (x, y), seed=1, **SHORT)
    est_p = numeric.estimate_llc(plain, u_p, (x, y), seed=1, **SHORT)
    assert est_t.config.num_params == est_p.config.num_params == 96
    assert math.isfinite(est_t.mean) and est_t.mean == est_p.mean


def test_a_series_over_element_masks_is_each_checkpoints_restriction(regression):
    module, data = regression
    loss_fn, w = numeric.from_module(module, lambda o, b: _mse(o, b["y"]), inputs=("x", "z"))
    mask = torch.tensor([[True, False, True], [False, False, True]])
    later = {k: v + 0.1 for k, v in w.items()}
    series = numeric.estimate_llc_series(
        loss_fn, [w, later], data, select={"a.weight": mask}, seed=4, **SHORT
    )
    for k, params in enumerate([w, later]):
        restricted, u = numeric.restrict(loss_fn, params, {"a.weight": mask})
        assert u["a.weight"].tolist() == params["a.weight"][mask].tolist()
        alone = numeric.estimate_llc(restricted, u, data, seed=4 + k, **SHORT)
        assert series.estimates[k].config.num_params == 3
        assert series.estimates[k].mean == alone.mean


def test_element_masks_refuse_bad_masks(regression):
    module, _ = regression
    loss_fn, w = numeric.from_module(module, _mse)
    with pytest.raises(InvalidInputError, match=r"torch\.bool"):
        numeric.restrict(loss_fn, w, {"a.weight": torch.ones(2, 3)})
    with pytest.raises(InvalidInputError, match="shape"):
        numeric.restrict(loss_fn, w, {"a.weight": torch.ones(3, 2, dtype=torch.bool)})
    with pytest.raises(InvalidInputError, match="no element"):
        numeric.restrict(loss_fn, w, {"a.weight": torch.zeros(2, 3, dtype=torch.bool)})
    with pytest.raises(InvalidInputError, match="not a parameter"):
        numeric.restrict(loss_fn, w, {"a.wieght": torch.ones(2, 3, dtype=torch.bool)})


# ----------------------------------------------------------------------------- a tiny GPT-2

D_MODEL, HEADS, VOCAB, SEQ = 16, 2, 12, 16


def _gpt2_and_data():
    """A 1-layer GPT-2 (transformers, no weights downloaded) and 128 right-padded sequences
    that count up by a per-sequence step mod V (the next token is learnable from two before)."""
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(
        vocab_size=VOCAB, n_positions=SEQ, n_embd=D_MODEL, n_layer=1, n_head=HEADS,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, attn_implementation="eager",
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    with torch.random.fork_rng():  # transformers draws the initial weights from the global
        torch.manual_seed(0)  # stream: seeded here, restored after
        model = transformers.GPT2LMHeadModel(config)
    g = torch.Generator().manual_seed(0)
    n = 128
    start = torch.randint(VOCAB, (n, 1), generator=g)
    step = torch.randint(1, 4, (n, 1), generator=g)
    ids = (start + step * torch.arange(SEQ)) % VOCAB
    lengths = torch.randint(10, SEQ + 1, (n, 1), generator=g)
    mask = (torch.arange(SEQ) < lengths).long()
    return model, {"input_ids": ids * mask, "attention_mask": mask}, g


@pytest.mark.slow  # ≈ 5 min on a busy 2-core CPU: transformers' forward is ~0.1 s per call here
def test_tiny_gpt2_one_head_llc_along_training():
    model, data, g = _gpt2_and_data()
    loss_fn, _ = numeric.from_module(model, numeric.causal_lm_loss)
    recorder = numeric.CheckpointRecorder(model, steps=[20, 40])
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(1, 41):
        idx = torch.randint(128, (32,), generator=g)
        loss = numeric.causal_lm_loss(model(**{k: v[idx] for k, v in data.items()}), {
            k: v[idx] for k, v in data.items()
        })  # fmt: skip
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
        recorder(step)
    assert losses[-1] < 0.8 * losses[0]  # training has made progress
    model.eval()
    name = "transformer.h.0.attn.c_attn.weight"
    mask = _qkv_head_mask(D_MODEL, HEADS, 0, rows=False)  # Conv1D: [d, 3d], heads in columns
    count = D_MODEL * 3 * (D_MODEL // HEADS)
    assert int(mask.sum()) == count == 384
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    series = numeric.estimate_llc_series(
        loss_fn, recorder, data, select={name: mask}, seed=0,
        num_chains=2, num_burnin=40, num_draws=60, batch_size=32,
    )  # fmt: skip
    assert series.steps == (20, 40)
    for est in series.estimates:
        assert est.config.num_params == count
        assert math.isfinite(est.mean) and math.isfinite(est.stderr) and est.stderr > 0
        assert est.mean < count / 2 + 3 * est.stderr
    after = dict(model.named_parameters())
    assert all(torch.equal(before[k], after[k]) for k in before)  # the module is never written
