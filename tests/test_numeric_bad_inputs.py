"""Every public function of `numeric` refuses bad input with a `numeric` error naming the
argument, fast and in bounded memory (issue 20).

Each row is a call and a pattern its message must match. The hang detector (`deadline`) turns a
call that starts work instead of refusing into a failure; none of these takes more than a second
when it refuses as intended.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _bad_inputs import deadline
from hypothesis import given
from hypothesis import strategies as st

import numeric
from numeric import estimate_llc, estimate_llc_potential

G = torch.Generator().manual_seed(0)
X = torch.randn(200, 2, generator=G)
Y = X @ torch.ones(2) + 0.1 * torch.randn(200, generator=G)
MODEL = numeric.GaussianLinear(X, Y)
LOSS, W, DATA = MODEL.loss_fn, {"w": MODEL.minimiser()}, MODEL.data
FAST = {"num_chains": 2, "num_draws": 10, "num_burnin": 10, "step_size": 1e-4}


def K(w):
    return w.square().sum(-1)


def _item_loss(p, b):
    return (b[1] - b[0] @ p["w"]).square().mean().item() * torch.ones(())


def _if_loss(p, b):
    if (p["w"] > 0).all():
        return (b[1] - b[0] @ p["w"]).square().mean()
    return (b[1] - b[0] @ p["w"]).abs().mean()


def _inplace_loss(p, b):
    w = p["w"]
    w.add_(0.0)
    return (b[1] - b[0] @ w).square().mean()


def _sum_loss(p, b):
    return (b[1] - b[0] @ p["w"]).square().sum()


def _random_loss(p, b):  # noise from the global generator: a different loss on every call
    r = b[1] - b[0] @ p["w"]
    return (r + 0.1 * torch.randn_like(r)).square().mean()


def _train_mode(*layers: torch.nn.Module) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(2, 4), *layers, torch.nn.Linear(4, 1)).train()


ROWS = {
    # data
    "data None": (lambda: estimate_llc(LOSS, W, None), "data must be"),
    "data a string": (lambda: estimate_llc(LOSS, W, "abc"), "data must be"),
    "data of different lengths": (lambda: estimate_llc(LOSS, W, (X, Y[:10])), "different lengths"),
    "data 0-dim": (lambda: estimate_llc(LOSS, W, torch.tensor(1.0)), "0-dim"),
    "data an empty tuple": (lambda: estimate_llc(LOSS, W, ()), "empty"),
    "data with NaN": (lambda: estimate_llc(LOSS, W, (X * float("nan"), Y)), r"data\[0\]"),
    # params
    "params a tensor": (lambda: estimate_llc(LOSS, W["w"], DATA), "params"),
    "params empty": (lambda: estimate_llc(LOSS, {}, DATA), "params"),
    "params int": (lambda: estimate_llc(LOSS, {"w": torch.zeros(2, dtype=torch.int64)}, DATA), "params"),
    "params NaN": (lambda: estimate_llc(LOSS, {"w": torch.tensor([np.nan, 0.0])}, DATA), "params"),
    # the loss
    "loss not callable": (lambda: estimate_llc(3, W, DATA), "loss_fn"),
    "loss calls .item()": (lambda: estimate_llc(_item_loss, W, DATA, **FAST), "loss_fn must be traceable"),
    "loss branches on a tensor": (lambda: estimate_llc(_if_loss, W, DATA, **FAST), "loss_fn must be traceable"),
    "loss updates in place": (lambda: estimate_llc(_inplace_loss, W, DATA, **FAST), "loss_fn must be traceable"),
    "loss a constant": (lambda: estimate_llc(lambda p, b: torch.tensor(0.5), W, DATA, **FAST), r"\(0\.5 at w\*\) does not depend on the parameters"),
    "loss of detached params": (lambda: estimate_llc(lambda p, b: LOSS({"w": p["w"].detach()}, b), W, DATA, **FAST), "does not depend on the parameters"),
    "loss returns a vector": (lambda: estimate_llc(lambda p, b: b[1] - b[0] @ p["w"], W, DATA), "scalar"),
    "loss of the wrong shape": (lambda: estimate_llc(LOSS, {"w": torch.zeros(3)}, DATA), "loss_fn"),
    # options
    "gamma a string": (lambda: estimate_llc(LOSS, W, DATA, gamma="1"), "gamma"),
    "gamma NaN": (lambda: estimate_llc(LOSS, W, DATA, gamma=float("nan")), "gamma"),
    "gamma negative": (lambda: estimate_llc(LOSS, W, DATA, gamma=-1.0), "gamma"),
    "step_size a string": (lambda: estimate_llc(LOSS, W, DATA, step_size="0.1"), "step_size"),
    "seed a string": (lambda: estimate_llc(LOSS, W, DATA, seed="0"), "seed"),
    "seed negative": (lambda: estimate_llc(LOSS, W, DATA, seed=-1), "seed"),
    "nbeta True": (lambda: estimate_llc(LOSS, W, DATA, nbeta=True), "nbeta"),
    "num_chains True": (lambda: estimate_llc(LOSS, W, DATA, num_chains=True), "num_chains"),
    "on_divergence misspelled": (lambda: estimate_llc(LOSS, W, DATA, on_divergence="ignore"), "on_divergence"),
    "device nonsense": (lambda: estimate_llc(LOSS, W, DATA, device="nonsense"), "device"),
    "device meta": (lambda: estimate_llc(LOSS, W, DATA, device="meta"), "device 'meta' holds shapes"),
    "step_scale with a given step_size": (lambda: estimate_llc(LOSS, W, DATA, step_size=1e-3, step_scale=1.0), "step_scale = 1 .*no effect"),
    "dtype int": (lambda: estimate_llc(LOSS, W, DATA, dtype=torch.int64), "dtype"),
    "progress a string": (lambda: estimate_llc(LOSS, W, DATA, progress="yes"), "progress"),
    "compile 1": (lambda: estimate_llc(LOSS, W, DATA, compile=1), "compile"),
    "friction NaN": (lambda: estimate_llc(LOSS, W, DATA, friction=float("nan")), "friction"),
    "full_loss_every negative": (lambda: estimate_llc(LOSS, W, DATA, full_loss_every=-1), "full_loss_every"),
    "step_scale 0": (lambda: estimate_llc(LOSS, W, DATA, step_scale=0), "step_scale"),
    "integrator misspelled": (lambda: estimate_llc(LOSS, W, DATA, integrator="leapfrog"), "integrator"),
    "gradient misspelled": (lambda: estimate_llc(LOSS, W, DATA, gradient="exact"), "gradient"),
    # sizes that would hang or exhaust memory
    "num_draws 10^12": (lambda: estimate_llc(LOSS, W, DATA, num_draws=10**12), "num_draws"),
    "num_burnin 10^12": (lambda: estimate_llc(LOSS, W, DATA, num_burnin=10**12), "num_burnin"),
    "num_chains 10^9": (lambda: estimate_llc(LOSS, W, DATA, num_chains=10**9), "num_chains"),
    "batch_size 10^9": (lambda: estimate_llc(LOSS, W, DATA, batch_size=10**9), "batch_size"),
    # the potential estimator
    "n a float": (lambda: estimate_llc_potential(K, [0.0, 0.0], 1000.0), "n must"),
    "n True": (lambda: estimate_llc_potential(K, [0.0, 0.0], True), "n must"),
    "w_star a string": (lambda: estimate_llc_potential(K, "0", 1000), "w_star"),
    "w_star NaN": (lambda: estimate_llc_potential(K, [float("nan")], 1000), "w_star"),
    "w_star 2-D": (lambda: estimate_llc_potential(K, [[0.0, 0.0]], 1000), "w_star"),
    "K not callable": (lambda: estimate_llc_potential(3, [0.0], 1000), "K"),
    "K returns a scalar": (lambda: estimate_llc_potential(lambda w: w.sum(), [0.0, 0.0], 1000), "K"),
    "K NaN at w*": (lambda: estimate_llc_potential(lambda w: w.sum(-1) * np.nan, [0.0], 1000), r"K\(w\*\)"),
    "metric a string": (lambda: estimate_llc_potential(K, [0.0], 1000, metric="yes"), "metric"),
    "potential integrator": (lambda: estimate_llc_potential(K, [0.0], 1000, integrator="baoab"), "integrator"),
    "potential num_chains 10^9": (lambda: estimate_llc_potential(K, [0.0, 0.0], 1000, num_chains=10**9), "num_chains"),
    "prior_exponents negative": (lambda: estimate_llc_potential(K, [0.0], 1000, prior_exponents=[-1]), r"prior_exponents\[0\]"),
    "prior_exponents a string": (lambda: estimate_llc_potential(K, [0.0], 1000, prior_exponents="1"), "prior_exponents"),
    "prior_exponents too few": (lambda: estimate_llc_potential(K, [0.0, 0.0], 1000, prior_exponents=[1]), "prior_exponents"),
    "prior without MALA": (lambda: estimate_llc_potential(K, [0.0], 1000, prior_exponents=[1], metropolis=False), "prior_exponents"),
    # the other public functions
    "from_module of an int": (lambda: numeric.from_module(3, torch.nn.functional.mse_loss), "module"),
    "from_module loss not callable": (lambda: numeric.from_module(torch.nn.Linear(2, 1), 3), "loss"),
    "module with dropout in training mode": (lambda: estimate_llc(*numeric.from_module(_train_mode(torch.nn.Dropout(0.5)), torch.nn.functional.mse_loss), (X, Y[:, None]), **FAST), r"'1' \(Dropout\).*module.eval\(\)"),
    "module given one tensor as data": (lambda: estimate_llc(*numeric.from_module(torch.nn.Linear(2, 1), torch.nn.functional.mse_loss), X, **FAST), r"tuple \(x\.\.\., y\).*one tensor \(a batch of shape \[16, 2\]\)"),
    "module with batch norm in training mode": (lambda: estimate_llc(*numeric.from_module(_train_mode(torch.nn.BatchNorm1d(4)), torch.nn.functional.mse_loss), (X, Y[:, None]), **FAST), r"'1' \(BatchNorm1d\).*module.eval\(\)"),
    "loss a sum over the batch": (lambda: estimate_llc(_sum_loss, W, DATA, **FAST), "sum over the batch, not the mean"),
    "loss random": (lambda: estimate_llc(_random_loss, W, DATA, **FAST), "loss_fn is random"),
    "hessian_trace block 0": (lambda: numeric.hessian_trace(LOSS, W, DATA, block=0), "block"),
    "hessian_trace NaN data": (lambda: numeric.hessian_trace(LOSS, W, (X * float("nan"), Y)), "not finite"),
    "hessian_trace distribution": (lambda: numeric.hessian_trace(LOSS, W, DATA, distribution="uniform"), "distribution"),
    "hessian_trace num_samples 10^12": (lambda: numeric.hessian_trace(LOSS, W, DATA, num_samples=10**12), "num_samples"),
    "hessian_trace num_samples a string": (lambda: numeric.hessian_trace(LOSS, W, DATA, num_samples="5"), "num_samples"),
    "hessian_trace chunk_size 0": (lambda: numeric.hessian_trace(LOSS, W, DATA, chunk_size=0), "chunk_size"),
    "hessian_top_eigenvalues k 0": (lambda: numeric.hessian_top_eigenvalues(LOSS, W, DATA, k=0), "k must"),
    "hessian_top_eigenvalues num_iters 0": (lambda: numeric.hessian_top_eigenvalues(LOSS, W, DATA, num_iters=0), "num_iters"),
    "expected_llc nbeta negative": (lambda: numeric.expected_llc(K, [0.0], nbeta=-1, gamma=1), "nbeta"),
    "expected_llc 5 parameters": (lambda: numeric.expected_llc(K, [0.0] * 5, nbeta=100, gamma=1), "1–3 parameters"),
    "expected_llc num_points 10^9": (lambda: numeric.expected_llc(K, [0.0, 0.0], nbeta=100, gamma=1, num_points=10**9), "num_points"),
    "ess of a 3-D array": (lambda: numeric.ess(np.zeros((2, 3, 4))), r"\[chain, draw\]"),
    "ess of an empty array": (lambda: numeric.ess(np.zeros((0, 10))), "non-empty"),
    "ess of a string": (lambda: numeric.ess("abc"), "numbers"),
    "temperature_sweep one nbeta": (lambda: numeric.temperature_sweep(estimate_llc_potential, K, [0.0], 1000, nbetas=[100]), "nbetas"),
    "GaussianLinear mismatched": (lambda: numeric.GaussianLinear(X, Y[:5]), r"X \[n, d\] and y \[n\]"),
    "GaussianLinear 1-D X": (lambda: numeric.GaussianLinear(Y, Y), r"X \[n, d\] and y \[n\]"),
    "GaussianLinear no samples": (lambda: numeric.GaussianLinear(X[:0], Y[:0]), "n ≥ 1 samples"),
    "expected_llc K of shape [N, 1]": (lambda: numeric.expected_llc(lambda w: w**2, [0.0], nbeta=100, gamma=1), r"must return shape \(3,\), got \(3, 1\)"),
    "expected_llc K keepdim": (lambda: numeric.expected_llc(lambda w: w.square().sum(-1, keepdim=True), [0.0, 0.0], nbeta=100, gamma=1), r"got \(3, 1\)"),
    "expected_llc K a scalar": (lambda: numeric.expected_llc(lambda w: w.sum(), [0.0], nbeta=100, gamma=1), r"got \(\)"),
    "potential in float16 with the metric": (lambda: estimate_llc_potential(K, [0.0, 0.0], 1000, dtype=torch.float16, num_chains=2), "too narrow.*metric=False"),
    "potential in bfloat16 with the metric": (lambda: estimate_llc_potential(K, [0.0], 1000, dtype=torch.bfloat16, metric=True), "too narrow"),
    "ess of a complex array": (lambda: numeric.ess(np.ones((2, 10)) * 1j), "complex"),
    "format_findings of a string": (lambda: numeric.format_findings("abc"), "list of Findings"),
    "hessian_top_eigenvalues NaN data": (lambda: numeric.hessian_top_eigenvalues(LOSS, W, (X * float("nan"), Y)), r"data\[0\] has NaN"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(ROWS))
def test_bad_input_is_refused_naming_the_argument(name: str) -> None:
    call, names = ROWS[name]
    with deadline(20), pytest.raises(numeric.NumericError, match=names):
        call()


@given(
    name=st.sampled_from(["gamma", "prior_precision", "step_size", "nbeta", "step_scale"]),
    value=st.one_of(
        st.sampled_from([float("nan"), float("inf"), -1.0, True, "1", None, [1.0], 1 + 1j])
    ),
)
def test_drawn_bad_numbers_are_refused(name: str, value: object) -> None:
    if value is None and name in ("step_size", "nbeta"):
        return  # None means "choose it": a valid value for these two
    with deadline(20), pytest.raises(numeric.NumericError, match=name):
        estimate_llc(LOSS, W, DATA, **{name: value})


@given(
    name=st.sampled_from(["num_chains", "num_draws", "num_burnin", "batch_size", "seed"]),
    value=st.one_of(st.integers(-(10**15), -1), st.sampled_from([1.5, "3", True, 2**64])),
)
def test_drawn_bad_counts_are_refused(name: str, value: object) -> None:
    with deadline(20), pytest.raises(numeric.NumericError, match=name):
        estimate_llc(LOSS, W, DATA, **{name: value})


def test_a_module_in_eval_mode_is_accepted_and_its_loss_is_a_mean() -> None:
    """The refusals above are of training mode and of sums, not of the layers or of the loss:
    the same module in eval mode gives (loss_fn, w*), and a mean loss passes the check."""
    net = _train_mode(torch.nn.Dropout(0.5), torch.nn.BatchNorm1d(4)).eval()
    loss_fn, w = numeric.from_module(net, torch.nn.functional.mse_loss)
    assert sorted(w) == ["0.bias", "0.weight", "2.bias", "2.weight", "3.bias", "3.weight"]
    data = (X, Y[:, None])
    with torch.no_grad():
        assert float(loss_fn(w, data)) == float(torch.nn.functional.mse_loss(net(X), Y[:, None]))
    est = estimate_llc(loss_fn, w, data, **FAST)
    assert est.config.num_params == 2 * 4 + 4 + 2 * 4 + 4 + 1


def test_dropout_of_rate_zero_in_training_mode_is_the_identity_and_accepted() -> None:
    """A transformer layer built with dropout=0.0 and left in training mode: the same loss as in
    eval mode, so the same estimate (it was refused as making the loss random)."""
    model = _train_mode(torch.nn.Dropout(0.0), torch.nn.Tanh())
    loss_fn, w = numeric.from_module(model, torch.nn.functional.mse_loss)
    trained = estimate_llc(loss_fn, w, (X, Y[:, None]), **FAST)
    model.eval()
    assert estimate_llc(loss_fn, w, (X, Y[:, None]), **FAST).mean == trained.mean


def test_params_of_mixed_dtypes_run_in_the_widest_whatever_their_order() -> None:
    x64 = X.double()
    loss = lambda p, b: (b[1] - b[0] @ (p["a"] + p["b"])).square().mean()  # noqa: E731
    a, b = torch.ones(2, dtype=torch.float64), torch.zeros(2, dtype=torch.float32)
    for params in ({"a": a, "b": b}, {"b": b, "a": a}):
        est = estimate_llc(loss, params, (x64, Y.double()), **FAST)
        assert est.config.dtype == "float64"
