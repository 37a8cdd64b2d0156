"""Weight-restricted LLC (numeric.restrict): exact restricted λ, selections, equality, errors.

The model is a deep linear network y = W3·W2·W1·x with widths [2, 2, 1, 2] (input first) at a
true parameter w* with W1 invertible and W2, W3 ≠ 0, the responses noise-free (y = f_{w*}(x)), so
L_n(w) = ½·mean‖f_w(x) − f_{w*}(x)‖² and w* is an exact minimum. Freezing layers at w* leaves:

- W3 free: y = W3·z with z = W2·W1·x one-dimensional, a regular model of 2 parameters: λ = 1;
- W1 free: y = A·W1·x with A = W3·W2 of rank 1: W1 ↦ A·W1 has rank rank(A)·M = 2, so of the 4
  parameters 2 are identifiable and λ = 2/2 = 1 (the other two directions are flat);
- W2, W3 free: reduced rank regression on z = W1·x (M = 2 inputs, full-rank covariance), H = 1,
  N = 2, true rank 1: λ = 3/2 (Aoyagi–Watanabe, ``rlct.reduced_rank_regression``), not the
  4/2 of a regular model of 4 parameters.

Tolerances as in test_numeric_llc: ESS ≥ 100, then |λ̂ − λ| ≤ 4·stderr (m = 1: no log bias).
"""

from __future__ import annotations

import pytest
import sympy as sp
import torch
from _devices import ON_CUDA
from _dln import DT, dln_data, dln_loss, true_parameter
from torch import nn

import numeric
import rlct
from numeric.errors import InvalidInputError


def _assert_close(est: numeric.LLCEstimate, target: float) -> None:
    assert est.ess >= 100, est
    assert abs(est.mean - target) <= 4 * est.stderr, (est.mean, target, est.stderr)


RRR = rlct.reduced_rank_regression(M=2, N=2, H=1, r=1).lam


@pytest.mark.parametrize(
    ("free", "lam", "device"),
    [
        (["W3"], sp.Rational(1), "cpu"),
        (["W1"], sp.Rational(1), "cpu"),
        (["W2", "W3"], RRR, "cpu"),
        pytest.param(["W2", "W3"], RRR, *ON_CUDA.values, marks=ON_CUDA.marks),
    ],
)
def test_restricted_deep_linear_network_has_the_exact_lambda(free: list[str], lam, device) -> None:
    w, data = true_parameter(), dln_data()
    assert lam == (sp.Rational(3, 2) if len(free) == 2 else 1)
    loss, sub = numeric.restrict(dln_loss, w, free)
    assert list(sub) == free and all(sub[k] is w[k] for k in free)
    est = numeric.estimate_llc(loss, sub, data, num_chains=4, seed=0, device=device)
    assert est.config.device.startswith(device)
    assert est.config.num_params == sum(w[k].numel() for k in free)
    _assert_close(est, float(lam))
    assert not [f for f in est.diagnostics if f.severity == "error"], est.diagnostics


def test_restricted_estimate_equals_the_hand_frozen_model() -> None:
    """The restriction is only a change of loss: the same numbers as a loss with W1 and W2
    written in as constants, bit for bit."""
    w, data = true_parameter(), dln_data()

    def by_hand(p: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor]):
        return dln_loss({"W1": w["W1"], "W2": w["W2"], "W3": p["W3"]}, batch)

    kw = dict(num_chains=3, num_burnin=20, num_draws=40, seed=5)
    restricted = numeric.estimate_llc(*numeric.restrict(dln_loss, w, "W3"), data, **kw)
    hand = numeric.estimate_llc(by_hand, {"W3": w["W3"]}, data, **kw)
    assert restricted.mean == hand.mean
    assert (restricted.loss_trace == hand.loss_trace).all()
    assert repr(restricted.config) == repr(hand.config)  # (NaN fields: compared as text)


def _mlp() -> tuple[nn.Sequential, tuple[torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)  # nn.Linear's initialisation only
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(400, 3, generator=g)
    with torch.no_grad():
        y = model(x) + 0.1 * torch.randn(400, 2, generator=g)
    return model, (x, y)


def test_every_form_of_selection_picks_the_same_parameters() -> None:
    """Names, a module prefix, a predicate, a submodule, and a list mixing them; the free
    parameters keep the order of params, and the estimate is the same whichever form named them."""
    model, data = _mlp()
    loss_fn, w = numeric.from_module(model, nn.functional.mse_loss)
    forms = [
        ["2.weight", "2.bias"],
        ["2.bias", "2.weight"],
        "2",
        lambda name: name.startswith("2."),
        model[2],
        [model[2]],
        ["2.weight", model[2]],
    ]
    kw = dict(num_chains=2, num_burnin=10, num_draws=20, step_size=1e-4, seed=1)
    ests = []
    for select in forms:
        loss, sub = numeric.restrict(loss_fn, w, select)
        assert list(sub) == ["2.weight", "2.bias"]
        assert loss.frozen.names == ("0.weight", "0.bias")
        ests.append(numeric.estimate_llc(loss, sub, data, **kw))
    assert ests[0].config.num_params == 10
    assert len({e.mean for e in ests}) == 1
    first, _ = numeric.restrict(loss_fn, w, model[0])
    assert first.free == ("0.weight", "0.bias")


def test_restricted_losses_are_equal_for_equal_inputs() -> None:
    """Equal (and equally hashed) restrictions let compile=True reuse a kernel; a different
    frozen value, selection or loss gives a different one."""
    model, _ = _mlp()
    loss_fn, w = numeric.from_module(model, nn.functional.mse_loss)
    a, _ = numeric.restrict(loss_fn, w, "2")
    b, _ = numeric.restrict(*numeric.from_module(model, nn.functional.mse_loss), "2")
    assert a == b and hash(a) == hash(b)
    moved = {**w, "0.bias": w["0.bias"] + 1e-6}
    c, _ = numeric.restrict(loss_fn, moved, "2")
    assert c != a and hash(c) == hash(a)  # the hash reads names and shapes only
    assert numeric.restrict(loss_fn, w, "0")[0] != a
    assert numeric.restrict(numeric.from_module(model, nn.functional.l1_loss)[0], w, "2")[0] != a
    unhashable = numeric.restrict(lambda p, b: loss_fn(p, b), w, "2")[0]
    assert hash(unhashable) == hash(unhashable)  # a plain function hashes by identity


def test_frozen_values_follow_the_run_dtype_and_device() -> None:
    """float32 parameters estimated in float64: the frozen values are cast (at every call when
    restrict was not told the dtype, once when it was); both give the same estimate."""
    model, data = _mlp()
    loss_fn, w = numeric.from_module(model.double(), nn.functional.mse_loss)
    w32 = {k: v.float() for k, v in w.items()}
    kw = dict(num_chains=2, num_burnin=10, num_draws=20, step_size=1e-4, seed=2, dtype=DT)
    loss, sub = numeric.restrict(loss_fn, w32, "2")
    assert loss.frozen.values[0].dtype == torch.float32
    cast_loss, cast_sub = numeric.restrict(loss_fn, w32, "2", dtype=DT, device="cpu")
    assert cast_loss.frozen.values[0].dtype == DT
    a = numeric.estimate_llc(loss, sub, data, **kw)
    b = numeric.estimate_llc(cast_loss, cast_sub, data, **kw)
    assert a.config.dtype == "float64" and a.mean == b.mean


def test_bad_selections_name_what_exists() -> None:
    model, _ = _mlp()
    loss_fn, w = numeric.from_module(model, nn.functional.mse_loss)
    listing = r"0\.weight \(4×3\), 0\.bias \(4\), 2\.weight \(2×4\), 2\.bias \(2\)"
    with pytest.raises(InvalidInputError, match="select is empty.*" + listing):
        numeric.restrict(loss_fn, w, [])
    with pytest.raises(InvalidInputError, match="'3.weight'.*neither.*" + listing):
        numeric.restrict(loss_fn, w, ["2.weight", "3.weight"])
    with pytest.raises(InvalidInputError, match="predicate selects no parameter.*" + listing):
        numeric.restrict(loss_fn, w, lambda name: name.startswith("fc"))
    with pytest.raises(InvalidInputError, match=r"must return True or False.*'0\.weight'"):
        numeric.restrict(loss_fn, w, lambda name: "yes")
    with pytest.raises(InvalidInputError, match="Linear that is not a submodule"):
        numeric.restrict(loss_fn, w, nn.Linear(4, 2))
    with pytest.raises(InvalidInputError, match="submodule '1', which has no parameters"):
        numeric.restrict(loss_fn, w, model[1])
    with pytest.raises(InvalidInputError, match=r"not built by numeric\.from_module"):
        numeric.restrict(lambda p, b: loss_fn(p, b), w, model[2])
    with pytest.raises(InvalidInputError, match="each entry must be"):
        numeric.restrict(loss_fn, w, ["2", 3])
    with pytest.raises(InvalidInputError, match="select must be"):
        numeric.restrict(loss_fn, w, 2.0)
    with pytest.raises(InvalidInputError, match="non-empty dict"):
        numeric.restrict(loss_fn, {}, "2")
    many = {f"p{i}": torch.zeros(1) for i in range(30)}
    with pytest.raises(InvalidInputError, match=r"p23 \(1\), … \(6 more\)"):
        numeric.restrict(lambda p, b: p["p0"].sum(), many, "q")


class _Tied(nn.Module):
    """Two linear maps sharing one weight (``b.weight`` is ``a.weight``), then a readout."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b, self.out = nn.Linear(3, 3), nn.Linear(3, 3), nn.Linear(3, 1)
        self.b.weight = self.a.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.b(torch.tanh(self.a(x)))))


def _with_state_dict(model: nn.Module, n_out: int = 1):
    """The model's from_module loss, its w*, its state_dict, and data (an eval-mode model)."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(300, 3, generator=g)
    y = torch.randn(300, n_out, generator=g)
    model.eval()
    loss_fn, w = numeric.from_module(model, nn.functional.mse_loss)
    return loss_fn, w, {k: v.clone() for k, v in model.state_dict().items()}, (x, y)


def test_a_state_dict_restricts_as_the_modules_own_parameters_do() -> None:
    """``restrict`` on a ``state_dict()``: a tied weight once (under its first name), batch
    norm's running statistics and a frozen layer held at the dict's values, never selected; the
    estimate is bit for bit the one on from_module's w*."""
    torch.manual_seed(0)
    bn = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 1))
    bn.train()
    bn(torch.randn(64, 3))  # running statistics that are not the initial ones
    frozen = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    frozen[0].requires_grad_(False)
    kw = dict(num_chains=2, num_burnin=10, num_draws=30, step_size=1e-4, seed=0)
    for model, select, free in [
        (_Tied(), "out", ["out.weight", "out.bias"]),
        (_Tied(), "b", ["a.weight", "b.bias"]),
        (_Tied(), lambda name: name.startswith("b."), ["a.weight", "b.bias"]),
        (bn, "1", ["1.weight", "1.bias"]),
        (frozen, lambda name: True, ["2.weight", "2.bias"]),
    ]:
        loss_fn, w, state, data = _with_state_dict(model)
        from_state, u_state = numeric.restrict(loss_fn, state, select)
        from_w, u_w = numeric.restrict(loss_fn, w, select)
        assert list(u_state) == list(u_w) == free, (model, list(u_state))
        a = numeric.estimate_llc(from_state, u_state, data, **kw)
        b = numeric.estimate_llc(from_w, u_w, data, **kw)
        assert a.mean == b.mean and (a.loss_trace == b.loss_trace).all(), model
    loss_fn, _, state, _ = _with_state_dict(frozen)
    with pytest.raises(InvalidInputError, match=r"submodule '0', whose parameters are all frozen"):
        numeric.restrict(loss_fn, state, frozen[0])
    with pytest.raises(InvalidInputError, match=r"'0\.weight', whose parameters are frozen"):
        numeric.restrict(loss_fn, state, "0.weight")
    loss_fn, _, state, _ = _with_state_dict(_Tied())
    state["b.weight"] = state["b.weight"] + 1.0
    with pytest.raises(
        InvalidInputError, match=r"different values under 'a\.weight' and 'b\.weight'"
    ):
        numeric.restrict(loss_fn, state, "out")
    loss_fn, _, state, _ = _with_state_dict(bn)
    state["3.weight"] = torch.zeros(1, 5)
    with pytest.raises(
        InvalidInputError, match=r"params\['3\.weight'\] has shape \(1, 5\).*\(1, 4\)"
    ):
        numeric.restrict(loss_fn, state, "0")
    del state["3.weight"]
    with pytest.raises(
        InvalidInputError, match=r"lacks the module's trainable parameter.*3\.weight"
    ):
        numeric.restrict(loss_fn, state, "0")
