"""numeric.findings.rounding: λ̂ that rests on the rounding of L(w) is named.

The audit's cases: K = c + w₁² + w₂² (λ = 1, λ_β = nβ/(nβ + γ/2)) in float32, where the constant c
makes each K(w) round by about ε·c and nβ multiplies it. In float64, or with c = 0, nothing
fires; nor on a data model in float32 at a small L(w*)."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

import numeric
from numeric.findings.rounding import ROUGH_ERROR, check_resolution

SHORT = dict(num_chains=2, num_burnin=100, num_draws=300, seed=0, progress=False)


def test_the_ratio_and_its_thresholds():
    eps32 = torch.finfo(torch.float32).eps
    assert check_resolution(1.0, 1000.0, 1.0, torch.float64) == ()
    (w,) = check_resolution(1.0, 1000.0, 100.0, torch.float32)  # r = 1.2e-2
    assert w.severity == "warning" and w.values["resolution"] == pytest.approx(1000 * eps32 * 100)
    (e,) = check_resolution(1.0, 5.4e6, 1.0, torch.float32)  # r = 0.64
    assert e.severity == "error" and "float64" in e.message
    assert check_resolution(50.0, 187.0, 0.0076, torch.float32) == ()  # a trained MLP's scale


@pytest.mark.parametrize(("offset", "n"), [(1.0, 10**8), (1e4, 10**4)])
def test_a_float32_potential_with_a_large_constant_is_an_error(offset, n):
    def K(w):
        return offset + w[..., 0] ** 2 + w[..., 1] ** 2

    est = numeric.estimate_llc_potential(K, [0.0, 0.0], n, dtype=torch.float32, **SHORT)
    found = {f.code: f for f in est.diagnostics}
    assert found["loss_resolution"].severity == "error", est
    exact = numeric.estimate_llc_potential(K, [0.0, 0.0], n, dtype=torch.float64, **SHORT)
    assert "loss_resolution" not in {f.code for f in exact.diagnostics}


def test_a_float32_network_at_a_small_loss_is_not_flagged():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 3, generator=g)
    y = torch.sin(x.sum(1, keepdim=True))
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opt = torch.optim.LBFGS(m.parameters(), max_iter=200)

    def closure():
        opt.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        return loss

    opt.step(closure)
    loss_fn, w = numeric.from_module(m, F.mse_loss)
    est = numeric.estimate_llc(loss_fn, w, (x, y), gamma=100.0, **SHORT)
    assert "loss_resolution" not in {f.code for f in est.diagnostics}
    # the same model with a constant 10⁵ added to its loss: r = nβ·ε·L(w*) ≈ 0.6
    shifted, w2 = numeric.from_module(m, lambda out, t: F.mse_loss(out, t) + 1e5)
    est = numeric.estimate_llc(shifted, w2, (x, y), gamma=100.0, **SHORT)
    assert "loss_resolution" in {f.code for f in est.diagnostics}


class _Offset(torch.nn.Module):
    """x·w + c: a constant c inside the prediction, cancelled by targets that carry it too."""

    def __init__(self, w: torch.Tensor, c: float) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(w.shape[0], 1, bias=False)
        with torch.no_grad():
            self.lin.weight.copy_(w.T)
        self.register_buffer("c", torch.tensor(c, dtype=w.dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) + self.c


@pytest.mark.parametrize("seed", [0, 1])
def test_rounding_inside_the_loss_is_measured_against_float64(seed: int) -> None:
    """Residuals ~1 on predictions ~c: float32 rounds each residual to a multiple of ulp(c). At
    c = 10⁵ that is 2⁻⁷ ≈ 0.008 on any IEEE float32 arithmetic (whatever the kernels' order),
    while the posterior moves predictions by about 1/√nβ ≈ 0.003: each of n = 1000 residuals
    errs by up to 0.004, and nβ = 10⁵ turns the loss's error into several units of temperature,
    so the float32 differences nβ·(L(w) − L(w*)) are not float64's (rms ≫ ``ROUGH_ERROR``):
    rounding_bias is an error. At c = 0 (predictions ~3, ulp 2.4·10⁻⁷) the same differences agree
    to ~10⁻³, far below either threshold: no finding. The float64 run at c = 10⁵ is exact to
    its last bits where it matters and lands within its error bar on ½Σ nβh/(nβh + 1)."""
    n, nbeta = 1000, 1e5
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g, dtype=torch.float64)
    y = x @ torch.randn(5, 1, generator=g, dtype=torch.float64)
    y = y + torch.randn(n, 1, generator=g, dtype=torch.float64)
    w_hat = torch.linalg.lstsq(x, y).solution
    h = torch.linalg.eigvalsh(x.T @ x / n)
    exact = float(0.5 * (nbeta * h / (nbeta * h + 1.0)).sum())

    def run(c: float, dtype: torch.dtype) -> numeric.LLCEstimate:
        model = _Offset(w_hat, c).to(dtype).eval()
        loss_fn, w = numeric.from_module(model, lambda o, t: 0.5 * ((o - t) ** 2).mean())
        return numeric.estimate_llc(
            loss_fn, w, (x.to(dtype), (y + c).to(dtype)), nbeta=nbeta, batch_size=n,
            num_chains=4, seed=seed, progress=False,
        )  # fmt: skip

    def rounding(est: numeric.LLCEstimate) -> numeric.Finding | None:
        return next((f for f in est.diagnostics if f.code == "rounding_bias"), None)

    coarse = rounding(run(1e5, torch.float32))
    assert coarse is not None and coarse.severity == "error"
    assert coarse.values["rms"] >= ROUGH_ERROR
    assert rounding(run(0.0, torch.float32)) is None
    wide = run(1e5, torch.float64)
    assert rounding(wide) is None
    assert abs(wide.mean - exact) < 4 * wide.stderr


def test_a_float32_divergence_across_fourteen_decades_names_float64() -> None:
    """Features from 10⁻³ to 10³ at nβ = 10⁸: curvatures span 10¹⁴× the localisation, far beyond
    float32's 7 digits. The run diverges after its restarts (float64 runs: a separate check in
    the audit, λ̂ 2.47 against 2.49); the error, which blamed only the localisation, now names
    float64."""
    n = 1000
    g = torch.Generator().manual_seed(0)
    scales = torch.tensor([1e-3, 1e-3, 1.0, 1e3, 1e3], dtype=torch.float64)
    x = torch.randn(n, 5, generator=g, dtype=torch.float64) * scales
    y = x @ torch.randn(5, 1, generator=g, dtype=torch.float64)
    y = y + torch.randn(n, 1, generator=g, dtype=torch.float64)
    model = torch.nn.Linear(5, 1, bias=False).double()
    with torch.no_grad():
        model.weight.copy_(torch.linalg.lstsq(x, y).solution.T)
    loss_fn, w = numeric.from_module(model.float().eval(), lambda o, t: 0.5 * ((o - t) ** 2).mean())
    with pytest.raises(numeric.DivergenceError, match=r"float32 resolves.*dtype=torch.float64"):
        numeric.estimate_llc(
            loss_fn, w, (x.float(), y.float()), nbeta=1e8, num_chains=4, seed=0, batch_size=256
        )
