"""verification.experiments' shared code: records, mode, optimizers, training loop, tasks, LLC."""

from __future__ import annotations

import gzip
import math

import numpy as np
import pytest
import sympy as sp
import torch
from torch import nn

import rlct
from numeric.potential.reference import expected_llc
from verification.experiments import (
    Claim,
    Measurement,
    Verdict,
    adam,
    adamw,
    entropy_sgd,
    llc_along,
    mse_loss,
    records_table,
    sgd,
    train,
)
from verification.experiments.datasets import MNIST_FILES, digits, mnist, mnist_available
from verification.experiments.dln import dln_data, dln_target, dln_target_hmc
from verification.experiments.mode import parse_full
from verification.experiments.networks import deep_linear, num_params, relu_mlp
from verification.experiments.teachers import dln_teacher, random_dln_teacher

CLAIM = Claim("Lau et al. (2025)", "Fig. 1", "λ̂ tracks λ")


def test_verdict_to_dict_is_flat_and_rejects_unknown_outcomes():
    v = Verdict(CLAIM, "reproduced", (Measurement("median |λ̂/λ − 1|", 0.02, 0.005),), "ok")
    d = v.to_dict()
    assert d["claim.where"] == "Fig. 1"
    assert d["median |λ̂/λ − 1|"] == 0.02 and d["median |λ̂/λ − 1|.stderr"] == 0.005
    assert "REPRODUCED" in str(v) and "0.02 ± 0.005" in str(v)
    with pytest.raises(ValueError, match="outcome"):
        Verdict(CLAIM, "sort of", (), "no")


def test_records_table_has_one_row_per_record_and_nested_columns():
    pytest.importorskip("pandas", reason="records_table needs pandas (experiments extra)")
    rows = [Measurement("a", 1.0), Measurement("b", 2.0, 0.5)]
    df = records_table(rows)
    assert list(df["name"]) == ["a", "b"] and df["stderr"].iloc[1] == 0.5
    df2 = records_table([sgd(0.1, 0.9, nesterov=True)])
    assert df2["momentum"].iloc[0] == 0.9 and bool(df2["nesterov"].iloc[0])


@pytest.mark.parametrize(("value", "full"), [(None, False), ("", False), ("0", False), ("1", True)])
def test_parse_full(value, full):
    assert parse_full(value) is full


def test_parse_full_rejects_other_values():
    with pytest.raises(ValueError, match="FULL"):
        parse_full("yes")


def _regression(seed: int, n: int = 64):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g, dtype=torch.float64)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]], dtype=torch.float64)
    return x, y


@pytest.mark.parametrize(
    "opt",
    [
        sgd(0.1),
        sgd(0.05, 0.9, nesterov=True),
        adam(0.05),
        adamw(0.05, 0.01),
        entropy_sgd(0.5, inner_steps=5, inner_lr=0.05, scope=0.03),
    ],
    ids=lambda o: o.label,
)
def test_training_lowers_the_loss_and_is_reproducible(opt):
    data = _regression(0)

    def run(seed):
        g = torch.Generator().manual_seed(seed)
        net = relu_mlp([3, 8, 1], generator=g, dtype=torch.float64)
        r = train(net, mse_loss, data, opt, 60, generator=g, batch_size=16, checkpoint_at=[0, 30])
        return net, r

    net, r = run(1)
    assert [c.step for c in r.checkpoints] == [0, 30, 60]
    assert r.final_loss < 0.5 * r.checkpoints[0].loss
    assert r.losses.shape == (60,) and np.all(np.isfinite(r.losses))
    net2, _ = run(1)
    for a, b in zip(net.parameters(), net2.parameters()):
        assert torch.equal(a, b)
    net3, _ = run(2)
    assert not torch.equal(net[0].weight, net3[0].weight)
    # checkpoints are copies, not views of the live parameters
    assert not torch.equal(r.checkpoints[0].state["0.weight"], net[0].weight)


def _scalar_model(w0: float) -> nn.Module:
    net = nn.Linear(1, 1, bias=False, dtype=torch.float64)
    with torch.no_grad():
        net.weight.fill_(w0)
    return net


def test_entropy_sgd_step_matches_a_hand_computation():
    # f(w) = ½w² (x = 1, y = 0); η = 0.5, η' = 0.1, L = 2, γ = 0.5, α = 0.75, no noise.
    # inner 1: g' = 1 − 0.5(1 − 1) = 1, x' = 0.9, μ = 0.25·1 + 0.75·0.9 = 0.925
    # inner 2: g' = 0.9 − 0.5(1 − 0.9) = 0.85, x' = 0.815, μ = 0.25·0.925 + 0.75·0.815 = 0.8425
    # outer:   w = 1 − 0.5·(1 − 0.8425) = 0.92125
    net = _scalar_model(1.0)
    data = (torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64))
    opt = entropy_sgd(
        0.5, inner_steps=2, inner_lr=0.1, noise=0.0, scope=0.5, scope_growth=0.0, averaging=0.75
    )
    train(net, mse_loss, data, opt, 1, generator=torch.Generator().manual_seed(0))
    assert net.weight.item() == pytest.approx(0.92125, abs=1e-14)


def test_entropy_sgd_inner_momentum_restarts_at_each_outer_step():
    # The authors' entropy-SGD (Lau et al.'s MNIST code): momentum m in the inner loop too, its
    # velocity u started afresh at each outer step. f(w) = ½w², η = 0.5, η' = 0.1, L = 2,
    # γ = 0.5, α = 0.75, m = 0.5, no noise.
    # outer 1, inner 1: g' = 1, u = 1, x' = 0.9, μ = 0.25·1 + 0.75·0.9 = 0.925
    #          inner 2: g' = 0.9 − 0.5(1 − 0.9) = 0.85, u = 0.5·1 + 0.85 = 1.35, x' = 0.765,
    #                   μ = 0.25·0.925 + 0.75·0.765 = 0.805;  v = 0.195, w = 1 − 0.5·0.195 = 0.9025
    # outer 2, inner 1: g' = 0.9025 = u, x' = 0.81225, μ = 0.8348125
    #          inner 2: g' = 0.81225 − 0.5(0.9025 − 0.81225) = 0.767125, u = 1.218375 (not
    #                   0.5·1.35 + …: restarted), x' = 0.6904125, μ = 0.7265125
    #          outer:   v = 0.5·0.195 + 0.1759875 = 0.2734875, w = 0.9025 − 0.5·v = 0.76575625
    data = (torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64))
    opt = entropy_sgd(
        0.5, inner_steps=2, inner_lr=0.1, noise=0.0, scope=0.5, scope_growth=0.0,
        averaging=0.75, momentum=0.5, inner_momentum=True,
    )  # fmt: skip
    for steps, expected in ((1, 0.9025), (2, 0.76575625)):
        net = _scalar_model(1.0)
        train(net, mse_loss, data, opt, steps, generator=torch.Generator().manual_seed(0))
        assert net.weight.item() == pytest.approx(expected, abs=1e-14)


def test_entropy_sgd_scope_growth_and_momentum_against_a_reference_loop():
    def reference(w, steps, eta, eta_in, L, g0, g1, alpha, m):
        v = None
        for t in range(steps):
            gamma = g0 * (1 + g1) ** t
            xp, mu = w, w
            for _ in range(L):
                xp = xp - eta_in * (xp - gamma * (w - xp))
                mu = (1 - alpha) * mu + alpha * xp
            g = w - mu
            v = g if v is None else m * v + g
            w = w - eta * v
        return w

    net = _scalar_model(2.0)
    data = (torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64))
    opt = entropy_sgd(
        0.3, inner_steps=3, inner_lr=0.2, noise=0.0, scope=0.1, scope_growth=1.0, momentum=0.5
    )
    train(net, mse_loss, data, opt, 4, generator=torch.Generator().manual_seed(0))
    expected = reference(2.0, 4, 0.3, 0.2, 3, 0.1, 1.0, 0.75, 0.5)
    assert net.weight.item() == pytest.approx(expected, abs=1e-13)


def test_entropy_sgd_noise_comes_from_the_generator():
    data = _regression(0)
    opt = entropy_sgd(0.5, inner_steps=3, inner_lr=0.05, noise=0.1)

    def run(seed):
        net = relu_mlp([3, 4, 1], generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        train(net, mse_loss, data, opt, 3, generator=torch.Generator().manual_seed(seed))
        return net[0].weight.detach().clone()

    torch.manual_seed(123)
    a = run(5)
    torch.manual_seed(456)  # the global generator must not matter
    assert torch.equal(a, run(5))
    assert not torch.equal(a, run(6))


def test_training_rejects_bad_settings():
    data = _regression(0, n=8)
    net = relu_mlp([3, 2, 1], generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="batch_size"):
        train(net, mse_loss, data, sgd(0.1), 2, generator=g, batch_size=9)
    with pytest.raises(ValueError, match="checkpoint"):
        train(net, mse_loss, data, sgd(0.1), 2, generator=g, checkpoint_at=[3])
    with pytest.raises(ValueError, match="Nesterov"):
        sgd(0.1, nesterov=True)


def test_networks_have_the_stated_shapes():
    g = torch.Generator().manual_seed(0)
    mlp = relu_mlp([4, 5, 3], generator=g)
    assert num_params(mlp) == 4 * 5 + 5 + 5 * 3 + 3
    assert isinstance(mlp[1], nn.ReLU) and len(mlp) == 3
    dln = deep_linear([4, 5, 3], generator=g, scale=0.1)
    assert num_params(dln) == 4 * 5 + 5 * 3
    assert dln[0].weight.abs().max() <= 0.1 / 2


@pytest.mark.parametrize(("widths", "rank"), [((4, 3, 5, 3), 1), ((5, 4, 6), 3), ((3, 3, 3), 0)])
def test_dln_teacher_has_the_stated_rank_and_an_exact_minimum(widths, rank):
    t = dln_teacher(widths, rank, seed=7)
    assert t.lam == rlct.deep_linear_network(list(widths), rank).lam
    assert isinstance(t.lam, sp.Rational)
    state = t.true_state()
    product = torch.eye(widths[0], dtype=torch.float64)
    # rank up to a relative tolerance far above rounding: torch's default (ε·max(m, n)·σ₁) sits
    # at the rounding noise of U·Vᵀ itself, and read a rank-1 layer as rank 2 on an AVX-512 CPU
    for i in range(len(widths) - 1):
        assert torch.linalg.matrix_rank(state[f"{i}.weight"], rtol=1e-10).item() == rank
        product = state[f"{i}.weight"] @ product
    assert torch.linalg.matrix_rank(product, rtol=1e-10).item() == rank
    x, y = t.sample(50, torch.Generator().manual_seed(0))
    assert mse_loss(t.module()(x), y).item() == 0.0


def test_dln_loss_potential_is_the_networks_mean_square_loss():
    t = dln_teacher((3, 4, 2), 1, seed=5)
    g = torch.Generator().manual_seed(0)
    x, y = t.sample(40, g)
    w = t.flat_true_parameter() + 0.3 * torch.randn(
        3, t.num_params, generator=g, dtype=torch.float64
    )
    net = t.module()
    K = t.loss_potential(x)
    for i in range(3):
        torch.nn.utils.vector_to_parameters(w[i], net.parameters())
        assert K(w)[i].item() == pytest.approx(mse_loss(net(x), y).item(), rel=1e-12)
        assert K(w[i]).item() == pytest.approx(K(w)[i].item(), rel=1e-14)
    assert K(t.flat_true_parameter()).item() == pytest.approx(0.0, abs=1e-28)
    # inputs √d·e_j have Σ̂ = I: the population loss ½‖P − P*‖²_F
    basis = math.sqrt(3) * torch.eye(3, dtype=torch.float64)
    assert torch.allclose(t.loss_potential(None)(w), t.loss_potential(basis)(w), rtol=1e-13)
    with pytest.raises(ValueError, match="must be"):
        t.loss_potential(torch.zeros(5, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="parameters"):
        K(torch.zeros(2, t.num_params + 1, dtype=torch.float64))


def test_dln_target_matches_quadrature_and_lies_below_lambda():
    # 1-1-1 of rank 0: L = ½·σ̂²·(ab)², λ = 1/2 with m = 2, so at nβ = 21.7 the target is far
    # below λ (≈ λ − (m − 1)/log nβ); MALA's estimate against 2-D quadrature of the same target
    t = dln_teacher((1, 1, 1), 0, seed=0)
    n = 100
    x = dln_data(t, n, seed=3)[0][0]  # the inputs dln_target samples at that seed
    point, est = dln_target(t, n, seed=3, num_draws=20_000, num_burnin=2_000)
    exact = expected_llc(t.loss_potential(x), t.flat_true_parameter(), nbeta=est.nbeta, gamma=1.0)
    assert abs(point.llc - exact.value) < 4 * point.stderr + exact.abserr
    assert exact.value < 0.5 - 0.2  # the finite-nβ target, not λ


def test_dln_target_by_hmc_matches_quadrature():
    # the same 1-1-1 target as above, by Metropolis-adjusted HMC instead of MALA. 1,600 draws:
    # the target has heavy tails along the axes (ab = 0), and with 400 draws one of the 16
    # chains read 0.61 against 0.29 on one machine's rounding (stderr 0.027, ESS 506); with
    # 1,600 the stderr is 0.007–0.011 over seeds 3–5 (ESS 3,100–6,600)
    t = dln_teacher((1, 1, 1), 0, seed=0)
    n = 100
    x = dln_data(t, n, seed=3)[0][0]
    ref = dln_target_hmc(t, n, seed=3, num_draws=1600)
    exact = expected_llc(t.loss_potential(x), t.flat_true_parameter(), nbeta=ref.nbeta, gamma=1.0)
    assert abs(ref.mean - exact.value) < 4 * ref.stderr + exact.abserr
    assert ref.stderr < 0.05 * exact.value  # precise enough that the comparison can fail
    assert ref.ess > 500 and ref.rhat < 1.05


def test_random_dln_teachers_lie_in_the_size_range_and_are_reproducible():
    ts = [random_dln_teacher(torch.Generator().manual_seed(s), 100, 1000) for s in range(10)]
    assert all(100 <= t.num_params <= 1000 for t in ts)
    assert all(0 <= t.rank <= min(t.widths) for t in ts)
    assert random_dln_teacher(torch.Generator().manual_seed(3), 100, 1000) == ts[3]
    assert len({t.widths for t in ts}) > 5


def test_digits_split():
    pytest.importorskip("sklearn", reason="digits needs scikit-learn (experiments extra)")
    d = digits(torch.Generator().manual_seed(0), test_fraction=0.25)
    assert d.x_train.shape == (1348, 64) and d.x_test.shape == (449, 64)
    assert 0 <= float(d.x_train.min()) and float(d.x_train.max()) <= 1
    assert set(d.y_train.tolist()) == set(range(10))


def _write_idx(path, array: np.ndarray, compress: bool) -> None:
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in array.shape)
    raw = header + array.astype(np.uint8).tobytes()
    if compress:
        with gzip.open(str(path) + ".gz", "wb") as f:
            f.write(raw)
    else:
        path.write_bytes(raw)


@pytest.mark.parametrize("compress", [False, True])
def test_mnist_reads_idx_files(tmp_path, compress):
    rng = np.random.default_rng(0)
    images = {"train": rng.integers(0, 256, (5, 28, 28)), "test": rng.integers(0, 256, (3, 28, 28))}
    for part, stem_x, stem_y in (
        ("train", MNIST_FILES["train_x"], MNIST_FILES["train_y"]),
        ("test", MNIST_FILES["test_x"], MNIST_FILES["test_y"]),
    ):
        _write_idx(tmp_path / stem_x, images[part], compress)
        _write_idx(tmp_path / stem_y, np.arange(len(images[part])) % 10, compress)
    assert mnist_available(tmp_path)
    d = mnist(tmp_path, kind="fashion")
    assert d.name == "fashion" and d.x_train.shape == (5, 784) and d.y_test.tolist() == [0, 1, 2]
    assert d.x_train[1, 3].item() == pytest.approx(images["train"][1, 0, 3] / 255)


def test_mnist_errors_name_the_problem(tmp_path, monkeypatch):
    monkeypatch.delenv("SLT_MNIST_DIR", raising=False)
    assert not mnist_available()
    with pytest.raises(FileNotFoundError, match="SLT_MNIST_DIR"):
        mnist()
    with pytest.raises(FileNotFoundError, match="train-images"):
        mnist(tmp_path)
    (tmp_path / MNIST_FILES["train_x"]).write_bytes(b"\x00\x00\x09\x01\x00\x00\x00\x01\x07")
    for key in ("train_y", "test_x", "test_y"):
        _write_idx(tmp_path / MNIST_FILES[key], np.zeros(1), False)
    with pytest.raises(ValueError, match="not an IDX file"):
        mnist(tmp_path)


def test_llc_along_checkpoints_of_a_regular_model():
    # y = x·w + noise with w ∈ R²: regular, λ = d/2 = 1 at the least-squares minimum.
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2000, 2, generator=g, dtype=torch.float64)
    y = x @ torch.tensor([[1.0], [2.0]], dtype=torch.float64) + torch.randn(
        2000, 1, generator=g, dtype=torch.float64
    )
    net = nn.Linear(2, 1, bias=False, dtype=torch.float64)
    run = train(net, mse_loss, (x, y), sgd(0.3), 40, generator=g, checkpoint_at=[20])
    pts = llc_along(
        run.checkpoints, net, mse_loss, (x, y), num_chains=4, num_draws=400, num_burnin=200
    )
    assert [p.step for p in pts] == [20, 40]
    assert pts[-1].num_params == 2 and pts[-1].nbeta == pytest.approx(2000 / math.log(2000))
    assert abs(pts[-1].llc - 1.0) < 4 * pts[-1].stderr + 0.05
    assert torch.equal(net.weight, run.final.state["weight"])


def test_experiments_import_neither_sklearn_nor_pandas():
    import subprocess
    import sys

    code = "import sys, verification.experiments; print('sklearn' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"
