"""verification.experiments.transformer: the tiny causal transformer, its tasks, training, LLC."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

import numeric
from verification.errors import InvalidArgumentError, InvalidTypeError
from verification.experiments.transformer import (
    TransformerConfig,
    accuracy,
    build_model,
    make_task,
    num_params,
    token_cross_entropy,
    train_transformer,
    transformer_llc,
)

# the fast task (learnt within ~100 Adam steps) at the default sizes: 9,384 parameters
PAIR = TransformerConfig(task="pair_sum")


@pytest.fixture(scope="module")
def trained():
    # one thread, as conftest's per-test fixture sets (a module fixture is built before it): the
    # weights are the same bit for bit only at the same thread count
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train_transformer(PAIR, n=256, n_test=256, steps=200, seed=0)
    finally:
        torch.set_num_threads(old)


def test_parameter_count_is_the_docstring_s():
    import verification.experiments.transformer as mod

    model = build_model(TransformerConfig(), torch.Generator().manual_seed(0))
    count = sum(p.numel() for p in model.parameters())
    assert count == num_params(TransformerConfig()) == 9384
    assert "9,384 parameters" in mod.__doc__
    two = TransformerConfig(num_layers=2, d_model=16, num_heads=4, d_mlp=24, vocab=5, seq_len=6)
    assert sum(p.numel() for p in build_model(two, torch.Generator()).parameters()) == num_params(
        two
    )


def test_tasks_targets_are_the_stated_functions_of_the_prefix():
    g = torch.Generator().manual_seed(1)
    x, y = make_task(TransformerConfig(vocab=5, seq_len=6), 50, g)
    assert x.shape == y.shape == (50, 6) and x.dtype == torch.int64
    assert torch.equal(y, x.cumsum(-1) % 5)
    x, y = make_task(TransformerConfig(task="pair_sum", vocab=5, seq_len=6), 50, g)
    assert torch.equal(y[:, 0], x[:, 0]) and torch.equal(y[:, 1:], (x[:, 1:] + x[:, :-1]) % 5)


def test_the_model_is_causal():
    model = build_model(PAIR, torch.Generator().manual_seed(0)).eval()
    x = torch.randint(8, (3, 8), generator=torch.Generator().manual_seed(2))
    x2 = x.clone()
    x2[:, 5:] = (x2[:, 5:] + 1) % 8
    with torch.no_grad():
        a, b = model(x), model(x2)
    assert a.shape == (3, 8, 8)
    torch.testing.assert_close(a[:, :5], b[:, :5])
    assert not torch.allclose(a[:, 5:], b[:, 5:])


def test_training_reduces_the_loss_far_below_chance(trained):
    chance = math.log(PAIR.vocab)
    losses = trained.run.losses
    assert losses[0] > 0.8 * chance  # starts near chance: log 8 = 2.08
    assert trained.run.final_loss < 0.5 * chance
    assert trained.run.final_loss < 0.05  # measured: 0.003 after 200 steps
    assert trained.test_loss() < 0.05 and accuracy(trained.model, trained.test) > 0.99
    assert not trained.model.training


def test_same_seed_same_weights_bit_for_bit_other_seed_other_weights(trained):
    again = train_transformer(PAIR, n=256, n_test=256, steps=200, seed=0)
    other = train_transformer(PAIR, n=512, n_test=256, steps=5, seed=1)
    first = train_transformer(PAIR, n=512, n_test=256, steps=5, seed=0)
    for name, p in trained.model.state_dict().items():
        assert torch.equal(p, again.model.state_dict()[name]), name
    assert torch.equal(trained.data[0], again.data[0])
    assert not torch.equal(first.model.state_dict()["pos"], other.model.state_dict()["pos"])
    assert not torch.equal(first.data[0], other.data[0])


def test_checkpoints_at_the_steps_asked_for():
    run = train_transformer(PAIR, n=128, n_test=16, steps=6, seed=0, checkpoint_at=(0, 3)).run
    assert [c.step for c in run.checkpoints] == [0, 3, 6]
    assert not torch.equal(run.checkpoints[0].state["pos"], run.checkpoints[-1].state["pos"])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"vocab": 1}, InvalidArgumentError, "vocab"),
        ({"vocab": 8.0}, InvalidTypeError, "vocab"),
        ({"d_model": 30, "num_heads": 4}, InvalidArgumentError, "multiple of num_heads"),
        ({"num_layers": 0}, InvalidArgumentError, "num_layers"),
        ({"task": "sort"}, InvalidArgumentError, "task must be one of"),
        ({"seq_len": True}, InvalidTypeError, "seq_len"),
    ],
)
def test_bad_configs_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        TransformerConfig(**kwargs)


def test_bad_arguments_are_refused():
    g = torch.Generator()
    with pytest.raises(InvalidTypeError, match="config"):
        make_task({"vocab": 8}, 10, g)
    with pytest.raises(InvalidArgumentError, match="n must be"):
        make_task(PAIR, 0, g)
    with pytest.raises(InvalidTypeError, match="generator"):
        make_task(PAIR, 10, 0)
    with pytest.raises(InvalidTypeError, match="generator"):
        build_model(PAIR, None)
    with pytest.raises(InvalidArgumentError, match="dtype"):
        build_model(PAIR, g, torch.int64)
    with pytest.raises(InvalidArgumentError, match="lr"):
        train_transformer(PAIR, n=16, steps=1, lr=0.0)
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        train_transformer(PAIR, n=16, steps=1, batch_size=17)
    with pytest.raises(InvalidArgumentError, match="seed"):
        train_transformer(PAIR, n=16, steps=1, seed=-1)
    with pytest.raises(InvalidArgumentError, match="longer than the model's seq_len"):
        build_model(PAIR, g)(torch.zeros(1, 9, dtype=torch.int64))


def _short(num_chains: int = 2) -> dict:
    """Explicit short lengths on small minibatches, LM steps (no friction, so no heating
    restart), no preconditioner, no step-size check. The estimator still computes the extreme
    Hessian spectrum at w* (Lanczos, ~260 full-data Hessian-vector products): n is kept small."""
    return dict(
        num_chains=num_chains,
        num_burnin=10,
        num_draws=20,
        batch_size=16,
        integrator="lm",
        preconditioner="none",
        step_check=False,
        seed=0,
    )


def test_a_short_estimate_runs_on_the_trained_model(trained):
    loss_fn, params = numeric.from_module(trained.model, token_cross_entropy)
    with warnings.catch_warnings():  # the CPU flash-attention kernel's vmap fallback
        warnings.simplefilter("ignore", UserWarning)
        est = numeric.estimate_llc(loss_fn, params, trained.data, **_short())
    d = num_params(PAIR)
    assert math.isfinite(est.mean) and math.isfinite(est.stderr)
    assert 0 < est.mean < d / 2
    assert est.config.num_params == d
    assert est.nbeta == pytest.approx(256 / math.log(256))


def test_transformer_llc_trains_then_estimates_in_eval_mode():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        record, trained = transformer_llc(PAIR, n=256, steps=100, **_short())
    assert not trained.model.training
    assert record.llc.step == 100 and record.series == ()
    assert 0 < record.llc.llc < record.num_params / 2 and math.isfinite(record.llc.stderr)
    assert record.final_loss < 0.5 * math.log(PAIR.vocab) and record.test_accuracy > 0.9
    assert record.to_dict()["llc.num_params"] == 9384


@pytest.mark.slow
def test_transformer_llc_along_the_checkpoints():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        record, _ = transformer_llc(
            PAIR, n=256, steps=60, checkpoint_at=(0, 30), series=True, **_short(num_chains=4)
        )
    assert [p.step for p in record.series] == [0, 30, 60]
    assert all(math.isfinite(p.llc) and p.num_params == 9384 for p in record.series)
    # the series' last point is the final estimate's set-up at another seed (seed + 2)
    assert 0 < record.series[-1].llc < record.num_params / 2
