"""Lanczos, the deflated Hessian spectrum at w* and the low-rank preconditioner, each against a
dense eigendecomposition or a closed form."""

from __future__ import annotations

import math

import pytest
import torch
from _devices import DEVICES
from torch import Tensor

import numeric
from numeric.hessian.at_w_star import full_data_hessian
from numeric.hessian.dense import hessian_info
from numeric.hessian.lanczos import lanczos
from numeric.hessian.lowrank import LowRankRoot
from numeric.hessian.spectrum import deflated_spectrum, hessian_spectrum
from numeric.inputs.problem import setup_problem
from numeric.options import LLCOptions

DT = torch.float64


def _tanh_mlp_problem(d_in: int = 6, hidden: int = 12, n: int = 400, seed: int = 0):
    """A tanh MLP d_in-hidden-1 at a random point (not a minimum: H has negative eigenvalues)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d_in, generator=g, dtype=DT)
    y = torch.randn(n, 1, generator=g, dtype=DT)
    params = {
        "a": torch.randn(hidden, d_in, generator=g, dtype=DT) / math.sqrt(d_in),
        "b": torch.randn(1, hidden, generator=g, dtype=DT) / math.sqrt(hidden),
    }

    def loss_fn(p, batch):
        xb, yb = batch
        return 0.5 * (torch.tanh(xb @ p["a"].T) @ p["b"].T - yb).square().mean()

    return loss_fn, params, (x, y)


def _problem(loss_fn, params, data, **opts):
    o = LLCOptions(num_chains=2, seed=0, **opts)
    return setup_problem(loss_fn, params, data, o), o


def test_lanczos_extreme_eigenpairs_match_a_dense_eigendecomposition() -> None:
    """The three largest and the lowest Hessian eigenvalues of a tanh MLP (D = 84) after 40
    Lanczos steps, their vectors, and the residuals Lanczos reports (β_m·|s_m|) against
    ‖H·y − θ·y‖ computed afresh."""
    prob, _ = _problem(*_tanh_mlp_problem())
    h = full_data_hessian(prob.model, prob.w_star, 0)
    evals, evecs = torch.linalg.eigh(h)
    g = torch.Generator().manual_seed(1)
    ritz = lanczos(lambda v: h @ v, torch.randn(prob.dim, generator=g, dtype=DT), 40)
    assert ritz.products == 40 and not ritz.invariant
    top = ritz.values[-3:]
    torch.testing.assert_close(top, evals[-3:], rtol=1e-9, atol=0)
    assert float(evals[0]) < 0  # a random point: the lowest eigenvalue is negative
    assert abs(float(ritz.values[0] - evals[0])) < 1e-6 * float(evals.abs().max())
    overlap = (ritz.vectors[:, -1] @ evecs[:, -1]).abs()
    assert float(overlap) > 1 - 1e-9
    for j in (-1, -2, 0):
        y, theta = ritz.vectors[:, j], ritz.values[j]
        actual = float((h @ y - theta * y).norm())
        assert actual == pytest.approx(float(ritz.residuals[j]), rel=1e-3, abs=1e-12)


def test_lanczos_stops_on_an_invariant_krylov_space_and_deflation_finds_every_copy() -> None:
    """A [60, 60] operator with eigenvalues 5 (multiplicity 4), 2 (multiplicity 3), 1 and zeros:
    one run sees one vector per eigenspace and stops after 4 products (4 distinct values); rounds
    on the complement of what is locked find all 8 nonzero directions."""
    g = torch.Generator().manual_seed(0)
    q, _ = torch.linalg.qr(torch.randn(60, 60, generator=g, dtype=DT))
    ev = torch.zeros(60, dtype=DT)
    ev[:4], ev[4:7], ev[7] = 5.0, 2.0, 1.0
    a = (q * ev) @ q.T
    one = lanczos(lambda v: a @ v, torch.randn(60, generator=g, dtype=DT), 30)
    assert one.invariant and one.products == 4
    torch.testing.assert_close(one.values, torch.tensor([0.0, 1.0, 2.0, 5.0], dtype=DT))
    w = torch.zeros(60, dtype=DT)
    info = deflated_spectrum(lambda v: a @ v, w, seed=0, nbeta=10.0, gamma=1.0, alpha=0.0)
    assert sorted(info.locked_values.tolist()) == pytest.approx([1, 2, 2, 2, 5, 5, 5, 5])
    # the locked vectors span exactly the nonzero eigenspaces
    u = info.locked_vectors
    torch.testing.assert_close(u.T @ u, torch.eye(8, dtype=DT), atol=1e-10, rtol=0)
    torch.testing.assert_close(a @ u, u * info.locked_values, atol=1e-10, rtol=0)
    # the Laplace value ½Σ nβh/(nβh + γ) is then exact: 4·50/51 + 3·20/21 + 10/11, halved
    assert info.laplace_llc() == pytest.approx(0.5 * (4 * 50 / 51 + 3 * 20 / 21 + 10 / 11))


def _null_space_operator(d: int, relevant: int, seed: int = 0) -> tuple[Tensor, Tensor]:
    """A [d, d] PSD matrix with ``relevant`` eigenvalues log-uniform in 10⁻²–10³ and the rest 0
    (a singular w*'s Hessian: a null space beside a spread of curvatures), and its eigenvalues."""
    g = torch.Generator().manual_seed(seed)
    ev = torch.zeros(d, dtype=DT)
    ev[:relevant] = 10 ** (5 * torch.rand(relevant, generator=g, dtype=DT) - 2)
    q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=DT))
    return (q * ev) @ q.T, ev


def test_gauss_and_gauss_radau_bracket_the_quadratic_form() -> None:
    """For f(x) = x/(x + s) and a PSD operator, the Gauss rule of a Lanczos run overestimates
    q₁ᵀf(A)q₁ and the Gauss–Radau rule with a node at 0 underestimates it, at every length; on a
    matrix with a null space the Gauss rule is far off (it counts the null space's weight on a
    small positive Ritz value) and the bracket tightens as the run grows."""
    a, _ = _null_space_operator(600, 200)
    s = 1.0 / 1086

    def f(t: Tensor) -> Tensor:
        return t.clamp_min(0) / (t.clamp_min(0) + s)

    start = torch.randn(600, generator=torch.Generator().manual_seed(1), dtype=DT)
    q1 = start / start.norm()
    vals, vecs = torch.linalg.eigh(a)
    exact = 600 * float(((vecs.T @ q1).square() * f(vals)).sum())
    widths = []
    for steps in (8, 32, 128):
        ritz = lanczos(lambda x: a @ x, start, steps)
        low, high = ritz.radau_sum(f, 0.0, 1e-12), ritz.spectral_sum(f)
        assert low <= exact + 1e-6 and exact <= high + 1e-6, (steps, low, exact, high)
        widths.append(high - low)
    assert widths[0] > widths[1] > widths[2]
    assert widths[1] > 0.5 * exact  # 32 steps: the Gauss rule alone is no estimate here
    # a negative Ritz value beyond the slack: 0 is no lower end of the spectrum, no bound
    shifted = lanczos(lambda x: a @ x - 0.5 * x, start, 32)
    assert math.isnan(shifted.radau_sum(f, 0.0, 1e-12))


def test_laplace_value_is_bracketed_and_withheld_where_the_bracket_is_wide() -> None:
    """``deflated_spectrum`` on a 2,400-parameter operator with a null space: its Laplace bounds
    contain ½·Σ nβh/(nβh + 1) (up to the one probe's Hutchinson error) and are wide, so
    ``laplace_llc`` is nan (Lanczos quadrature alone read 2–3× the truth); without a null space
    (a bulk in 10⁻²–1) they are narrow and ``laplace_llc`` is the value."""
    nbeta = 1086.0
    w = torch.zeros(2400, dtype=DT)
    a, ev = _null_space_operator(2400, 800)
    exact = 0.5 * float((nbeta * ev / (nbeta * ev + 1)).sum())
    info = deflated_spectrum(lambda v: a @ v, w, seed=0, nbeta=nbeta, gamma=1.0, alpha=0.0)
    low, high = info.laplace_bounds()
    probe = math.sqrt(2 * 2400 * 0.25)  # the Hutchinson probe's sd, at most, in trace units
    assert low - probe <= exact <= high + probe, (low, exact, high)
    assert high > 1.5 * exact and math.isnan(info.laplace_llc())
    bulk = torch.logspace(-2, 0, 2400, dtype=DT)
    info = deflated_spectrum(lambda v: bulk * v, w, seed=0, nbeta=nbeta, gamma=1.0, alpha=0.0)
    exact = 0.5 * float((nbeta * bulk / (nbeta * bulk + 1)).sum())
    assert info.laplace_llc() == pytest.approx(exact, abs=probe)
    low, high = info.laplace_bounds()
    assert high - low < 0.01 * exact


def test_low_rank_root_is_the_square_root_of_its_square() -> None:
    """S = a₀·I + U·diag(a − a₀)·Uᵀ applied as v @ S equals the dense matrix, S·S = S², and
    ``power`` agrees with the matrix power: symmetric positive definite."""
    g = torch.Generator().manual_seed(2)
    u, _ = torch.linalg.qr(torch.randn(30, 5, generator=g, dtype=DT))
    vals = torch.tensor([0.01, 0.1, 1.0, 4.0, 9.0], dtype=DT)
    m = LowRankRoot(u, vals, 0.5)
    dense = 0.5 * torch.eye(30, dtype=DT) + (u * (vals - 0.5)) @ u.T
    torch.testing.assert_close(m.to_dense(), dense)
    s = m.power(0.5)
    torch.testing.assert_close(s.to_dense() @ s.to_dense(), dense, atol=1e-12, rtol=0)
    assert float(torch.linalg.eigvalsh(s.to_dense()).min()) > 0
    v = torch.randn(3, 30, generator=g, dtype=DT)
    torch.testing.assert_close(v @ s, v @ s.to_dense())


def test_sgld_update_with_the_low_rank_root_equals_it_with_the_dense_matrix() -> None:
    """The fused products (``drift_and_step``: U read twice, not four times) give the update that
    the same preconditioner gives as a dense [D, D] matrix, for every integrator."""
    from numeric.sampler.sgld import GradientEval, SGLDState, update

    g = torch.Generator().manual_seed(5)
    u, _ = torch.linalg.qr(torch.randn(40, 6, generator=g, dtype=DT))
    root = LowRankRoot(u, torch.tensor([0.02, 0.1, 0.5, 2.0, 3.0, 7.0], dtype=DT), 0.3)
    w, noise, xi, grad = (torch.randn(3, 40, generator=g, dtype=DT) for _ in range(4))
    ev = GradientEval(torch.zeros(3, dtype=DT), torch.zeros(3, dtype=DT), grad, None)
    for integrator in ("lm", "euler", "baoab"):
        out = [
            update(
                SGLDState(w, noise),
                ev,
                xi,
                step_size=1e-2,
                nbeta=50.0,
                gamma=2.0,
                center=torch.zeros(40, dtype=DT),
                integrator=integrator,
                friction=3.0,
                preconditioner=pre,
                with_norms=True,
            )
            for pre in (root, root.to_dense())
        ]
        (fused, info_f), (dense, info_d) = out
        torch.testing.assert_close(fused.position, dense.position)
        torch.testing.assert_close(fused.noise, dense.noise)
        torch.testing.assert_close(info_f.drift_sq, info_d.drift_sq)
        assert not torch.equal(fused.position, w)


def test_spectrum_of_a_deep_linear_network_equals_the_dense_hessian() -> None:
    """At the true parameter of a rank-1 deep linear network [3, 5, 6, 4] (D = 69) H has
    r(d_in + d_out − r) = 6 nonzero eigenvalues, several of them repeated: the deflated spectrum
    locks all 6, and its Laplace value, condition number and the preconditioner it builds equal
    the dense Hessian's."""
    from verification.experiments.llc import mse_loss
    from verification.experiments.teachers import dln_teacher

    t = dln_teacher([3, 5, 6, 4], 1, seed=3)
    data = t.sample(2000, torch.Generator().manual_seed(0))
    loss_fn, w = numeric.from_module(t.module(), mse_loss)
    prob, _ = _problem(loss_fn, w, data)
    dense = hessian_info(full_data_hessian(prob.model, prob.w_star, 0), prob.nbeta, 1.0, 0.0)
    info = hessian_spectrum(prob.model, prob.w_star, 0, prob.nbeta, 1.0, 0.0)
    assert int(dense.relevant.sum()) == 6 == info.rank == info.locked_values.numel()
    assert info.laplace_llc() == pytest.approx(dense.laplace_llc(), rel=1e-9)
    assert info.condition_number == pytest.approx(dense.condition_number, rel=1e-9)
    _, s_dense = dense.preconditioner()
    _, s_low = info.preconditioner()
    torch.testing.assert_close(s_low.to_dense(), s_dense, atol=1e-8, rtol=1e-6)


def test_laplace_value_counts_the_pairs_the_hessian_check_dropped() -> None:
    """The rank-3 deep linear network 20-24-22-25-21 (D = 2,083 > 2,048: Lanczos) at its true
    parameter: ``check_slowest`` drops locked pairs whose residual on H is too large, and their
    directions, deflated from the last round, would otherwise be missing from the Laplace value
    (39.8 against the dense Hessian's 44.4); counted at their Ritz values it matches to 1%."""
    from verification.experiments.llc import mse_loss
    from verification.experiments.teachers import dln_teacher

    t = dln_teacher([20, 24, 22, 25, 21], 3, seed=0)
    data = t.sample(10_000, torch.Generator().manual_seed(0))
    loss_fn, w = numeric.from_module(t.module(), mse_loss)
    prob, _ = _problem(loss_fn, w, data)
    dense = hessian_info(full_data_hessian(prob.model, prob.w_star, 0), prob.nbeta, 1.0, 0.0)
    info = hessian_spectrum(prob.model, prob.w_star, 0, prob.nbeta, 1.0, 0.0)
    assert info.dropped_values.numel() > 0
    assert info.laplace_llc() == pytest.approx(dense.laplace_llc(), rel=0.01)


def _quadratic(d: int, stiff: int, n: int = 1000, device: str = "cpu"):
    """½·Σ s_j (w_j − c_j)² times a data factor of mean 1: ``stiff`` eigenvalues 10²–10⁴ above a
    bulk 10⁻²–1 (the low-rank preconditioner whitens the outliers). The loss's constants live on
    ``device``; w* and the data stay on the CPU (the estimator moves them)."""
    s = torch.cat([torch.logspace(2, 4, stiff), torch.logspace(-2, 0, d - stiff)])
    centre = torch.randn(d, generator=torch.Generator().manual_seed(0))
    x = torch.ones(n, 1)
    s_on, centre_on = s.to(device), centre.to(device)

    def loss_fn(p, b):
        return 0.5 * (s_on * (p["w"] - centre_on).square()).sum() * b[0].square().mean()

    return loss_fn, {"w": centre.clone()}, (x,), s


@pytest.mark.parametrize("device", DEVICES)
def test_large_quadratic_with_outliers_lands_on_its_closed_form(device: str) -> None:
    """D = 2,100 > 2,048: 12 outlier eigenvalues over a bulk. "auto" whitens them (low-rank
    preconditioner, found by Lanczos), the slow-direction rule sets the run length, and the
    estimate lands on λ_β = ½·Σ nβs/(nβs + γ) within 4 standard errors, with no error finding."""
    loss_fn, w, data, s = _quadratic(2100, 12, device=device)
    est = numeric.estimate_llc(loss_fn, w, data, num_chains=4, seed=0, batch_size=8, device=device)
    assert est.config.device.startswith(device)
    ref = 0.5 * float((est.nbeta * s / (est.nbeta * s + 1.0)).sum())
    c = est.config
    assert c.preconditioner == "lowrank"
    # the 12 outliers and the top of the bulk whitened: the rest's stiffest curvature κ_r is the
    # bulk's nβ·1 + γ at most, against nβ·10⁴ + γ unpreconditioned
    rest = float(c.step_size_rule.split("κ_r = ")[1].split(")")[0])
    assert rest <= est.nbeta + 1.0 and c.condition_number > 1e5
    assert c.laplace_llc == pytest.approx(ref, rel=0.05)  # Lanczos quadrature on the bulk
    assert math.isfinite(c.relaxation_steps) and math.isfinite(est.slow_ess)
    assert not [f for f in est.diagnostics if f.severity == "error"], est.diagnostics
    assert abs(est.mean - ref) < 4 * est.stderr, (est.mean, ref, est.stderr)


@pytest.mark.parametrize("device", DEVICES)
def test_momentum_where_the_step_outpaces_the_slowest_direction(device: str) -> None:
    """D = 2,100, curvatures nβ·s + γ over two decades and no outlier to whiten (the low-rank
    preconditioner would gain less than 2×, so "auto" takes none): after adaptation κ/κ_min ≈ 45
    ≥ 16, so the run switches from LM to BAOAB at critical damping of the slowest relevant
    direction; its relaxation time is then ≈ 12 steps instead of 2/(ε·κ_min) ≈ 314, and the
    estimate lands on the closed form with no finding. A well-conditioned linear regression keeps
    LM."""
    loss_fn, w, data, s = _quadratic(2100, 0, n=500, device=device)
    est = numeric.estimate_llc(loss_fn, w, data, num_chains=2, seed=14, batch_size=8, device=device)
    c = est.config
    ref = 0.5 * float((est.nbeta * s / (est.nbeta * s + 1.0)).sum())
    assert c.preconditioner == "none" and c.integrator == "baoab"
    kappa_min = est.nbeta * float(s[est.nbeta * s >= 1.0].min()) + 1.0
    assert c.friction >= 2 * math.sqrt(kappa_min)  # critical damping, or raised for heating
    assert c.relaxation_steps < 0.1 * 2 / (c.step_size * kappa_min)
    assert not [f for f in est.diagnostics if f.severity != "info"], est.diagnostics
    assert abs(est.mean - ref) < 4 * est.stderr, (est.mean, ref, est.stderr)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(500, 3, generator=g, dtype=DT)
    lin = numeric.GaussianLinear(x, x @ torch.tensor([1.0, -2.0, 0.5], dtype=DT))
    est = numeric.estimate_llc(lin.loss_fn, {"w": lin.minimiser()}, lin.data, seed=0)
    assert est.config.integrator == "lm"


def test_the_dense_hessian_takes_samples_in_proportion_to_its_products(monkeypatch) -> None:
    """D products on at most max(2048, 2²²/D) samples (a prefix of the same seeded draw as the
    Lanczos path's 16384), each vmapped call at most 2¹⁴ products × samples: on least squares
    with D = 400 and n = 20,000, H = XᵀX/m over exactly those m = 10,485 samples."""
    from numeric.hessian import at_w_star
    from numeric.hessian.at_w_star import HESSIAN_WORK, hessian_subset

    cpu = torch.device("cpu")
    big, small = hessian_subset(20_000, 3, cpu), hessian_subset(20_000, 3, cpu, hvps=400)
    assert big.numel() == 16384 and small.numel() == HESSIAN_WORK // 400 == 10485
    assert set(small.tolist()) <= set(big.tolist())
    assert hessian_subset(1500, 3, cpu, hvps=2048).numel() == 1500  # n below 2048: all of them
    g = torch.Generator().manual_seed(0)
    x = torch.randn(20_000, 400, generator=g, dtype=DT)
    y = x @ torch.randn(400, generator=g, dtype=DT)

    def loss_fn(p, b):
        return 0.5 * ((b[0] @ p["w"] - b[1]) ** 2).mean()

    w = torch.linalg.lstsq(x, y).solution
    opts = LLCOptions(num_chains=1, seed=3)
    prob = setup_problem(loss_fn, {"w": w}, (x, y), opts)
    blocks = []
    dense = at_w_star.dense_hessian

    def recording(f, w, block=64):
        blocks.append(block)
        return dense(f, w, block)

    monkeypatch.setattr(at_w_star, "dense_hessian", recording)
    h = full_data_hessian(prob.model, prob.w_star, 3)
    xs = x[small]
    torch.testing.assert_close(h, xs.T @ xs / xs.shape[0], rtol=1e-10, atol=1e-12)
    assert blocks == [8] * 5 + [64]  # 2¹⁴ // 2048 per full chunk; the last has 245 samples


def _orthogonal_dln(h: int, n: int):
    """x ↦ W2·W1·W0·x at Haar-orthogonal W_i (h × h), labels from itself: H = ∇²L_n(w*) has a
    null space of dimension 2h² (the GL(h) orbits) and the identifiable eigenvalues 3·eig(S),
    S = XᵀX/n, each h times (JJᵀ = 3·I in the product's coordinates when every W_i is
    orthogonal)."""
    g = torch.Generator().manual_seed(0)
    ws = {}
    for i in range(3):
        q, r = torch.linalg.qr(torch.randn(h, h, generator=g))
        ws[f"W{i}"] = q * torch.sign(torch.diagonal(r))
    x = torch.randn(n, h, generator=g)

    def loss_fn(p, b):
        return 0.5 * (b[0] @ p["W0"].T @ p["W1"].T @ p["W2"].T - b[1]).square().sum(-1).mean()

    with torch.no_grad():
        y = x @ ws["W0"].T @ ws["W1"].T @ ws["W2"].T
    return loss_fn, ws, (x, y), 3 * torch.linalg.eigvalsh(x.double().T @ x.double() / n)


def test_softest_relevant_curvature_is_checked_on_the_hessian_itself() -> None:
    """A deep linear network of width 32 (D = 3,072, float32): deflating by imperfectly converged
    locked vectors made Lanczos report pairs in the gap between the null space and 3·λ_min(S)
    (θ = 1.6·10⁻³ with a residual of 10⁻¹⁶ on the deflated operator, 0.069 on H), which set the
    slowest relevant curvature 1,000× too low. Checked on H, the three slowest relevant
    curvatures are nβ·3·λ_min(S) + γ and so is κ_r."""
    loss_fn, ws, data, eig = _orthogonal_dln(32, 8192)
    prob, _ = _problem(loss_fn, ws, data)
    info = hessian_spectrum(prob.model, prob.w_star, 0, prob.nbeta, 1.0, 0.0)
    softest = prob.nbeta * float(eig.min()) + 1.0
    _, curvatures = info.slow_directions(3)
    assert curvatures.tolist() == pytest.approx([softest] * 3, rel=1e-3)
    assert info.rest_curvature() == pytest.approx(softest, rel=1e-3)
    assert info.products <= 256 + 8  # the rounds, and a few checks
