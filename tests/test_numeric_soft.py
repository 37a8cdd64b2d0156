"""numeric.findings.soft_directions: directions with 0 < nβh < γ + α that the run did not relax
(issue 18's audit).

A linear regression is exactly quadratic, so its Laplace value ½Σ nβh/(nβh + γ) (eigenvalues h of
XᵀX/n, computed here by numpy) is the exact finite-nβ target of λ̂.
"""

from __future__ import annotations

import numpy as np
import torch

import numeric
import numeric.plan.preconditioner
import numeric.plan.soft_whitening


def _regression(soft_scale: float):
    n, d = 5000, 20
    g = torch.Generator().manual_seed(0)
    scales = torch.tensor([1.0] * 10 + [soft_scale] * 10, dtype=torch.float64)
    x = torch.randn(n, d, generator=g, dtype=torch.float64) * scales
    y = x @ torch.randn(d, 1, generator=g, dtype=torch.float64)
    y = y + torch.randn(n, 1, generator=g, dtype=torch.float64)
    model = torch.nn.Linear(d, 1, bias=False).double().eval()
    with torch.no_grad():
        model.weight.copy_(torch.linalg.lstsq(x, y).solution.T)
    loss_fn, w = numeric.from_module(model, lambda o, t: 0.5 * ((o - t) ** 2).mean())
    h = np.linalg.eigvalsh((x.T @ x / n).numpy())
    return loss_fn, w, (x, y), h


def _laplace(h: np.ndarray, nbeta: float, gamma: float) -> float:
    return float(0.5 * np.sum(nbeta * h / (nbeta * h + gamma)))


def test_quadratic_soft_directions_are_whitened_and_recovered() -> None:
    """Ten directions with nβh ≈ 0.5 < γ = 1 carry 1.64 of the exact 6.64. Clamped to the softest
    relevant curvature they relaxed in ~7·10⁴ steps against a ~5·10³-step run (λ̂ 5.20, 4.98,
    5.20 on seeds 0–2); the potential is exactly quadratic along them, so
    ``numeric.plan.soft_whitening`` scales them at their own curvature and the defaults recover the
    exact value."""
    loss_fn, w, data, h = _regression(0.007)
    nbeta = 1e4
    exact = _laplace(h, nbeta, 1.0)
    for seed in (0, 1):
        est = numeric.estimate_llc(
            loss_fn, w, data, nbeta=nbeta, num_chains=4, seed=seed, progress=False
        )
        assert est.config.soft_whitened == 10
        assert abs(est.mean - exact) < 3 * est.stderr, (seed, est.mean, est.stderr)
        assert not [f for f in est.diagnostics if f.severity == "error"], est.diagnostics
        assert "soft_directions" not in {f.code for f in est.diagnostics}


def test_unrelaxed_soft_directions_are_an_error_with_the_missing_amount(monkeypatch) -> None:
    """Where the soft directions stay clamped (here by switching the re-plan off, so that the
    exact target is still the Laplace value) the defaults read the stiff ten's 5.0: the error says
    so, and the amount it predicts missing is the amount λ̂ misses."""
    monkeypatch.setattr(
        numeric.plan.preconditioner, "whiten_quadratic_soft", lambda model, w, info, seed: info
    )
    loss_fn, w, data, h = _regression(0.007)
    nbeta = 1e4
    exact = _laplace(h, nbeta, 1.0)
    soft = 0.5 * np.sum((nbeta * h / (nbeta * h + 1.0))[nbeta * h < 1.0])
    assert 1.5 < soft < 1.8
    est = numeric.estimate_llc(loss_fn, w, data, nbeta=nbeta, num_chains=4, seed=0, progress=False)
    assert est.config.soft_whitened == 0
    assert abs(est.config.laplace_llc - exact) < 1e-6 * exact
    found = [f for f in est.diagnostics if f.code == "soft_directions"]
    assert len(found) == 1 and found[0].severity == "error", est.diagnostics
    shortfall = exact - est.mean
    assert shortfall > 5 * est.stderr  # the estimate does miss them
    assert abs(found[0].values["missing"] - shortfall) < 0.25 * shortfall
    assert abs(found[0].values["share"] - soft) < 1e-6


def test_soft_directions_with_a_quartic_stay_clamped_and_are_flagged() -> None:
    """The same regression plus 10⁻⁴·Σ(w_j − w*_j)⁴ over the soft ten: nβ·10⁻⁴·(3σ)⁴ ≈ 36 where
    the quadratic model says 4.5, so the re-plan leaves them clamped, and the finding stands."""
    _, w, (x, y), _ = _regression(0.007)
    w_star = w["weight"].flatten()

    def loss(p, batch):
        v = p["w"]
        fit = 0.5 * ((batch[0] @ v - batch[1][:, 0]) ** 2).mean()
        return fit + 1e-4 * ((v[10:] - w_star[10:]) ** 4).sum()

    est = numeric.estimate_llc(
        loss, {"w": w_star.clone()}, (x, y), nbeta=1e4, num_chains=4, seed=0, progress=False
    )
    assert est.config.soft_whitened == 0
    assert "soft_directions" in {f.code for f in est.diagnostics}, est.diagnostics


def test_no_soft_directions_finding_where_they_count_little_or_are_stiff() -> None:
    """At γ = 10 the same directions carry 0.2 and relax 10× faster: silent, and λ̂ agrees with
    the exact value. With features of scale 0.03 they are relevant (nβh ≈ 9 > γ): silent too."""
    loss_fn, w, data, h = _regression(0.007)
    est = numeric.estimate_llc(
        loss_fn, w, data, nbeta=1e4, gamma=10.0, num_chains=4, seed=0, progress=False
    )
    assert "soft_directions" not in {f.code for f in est.diagnostics}
    assert abs(est.mean - _laplace(h, 1e4, 10.0)) < 4 * est.stderr
    loss_fn, w, data, h = _regression(0.03)
    est = numeric.estimate_llc(loss_fn, w, data, nbeta=1e4, num_chains=4, seed=0, progress=False)
    assert "soft_directions" not in {f.code for f in est.diagnostics}
    assert abs(est.mean - _laplace(h, 1e4, 1.0)) < 4 * est.stderr


def test_whitened_soft_directions_with_a_prior_centred_at_zero() -> None:
    """γ = 0 and a prior of precision α = 1 centred at 0: the target is the Gaussian
    N(m, A⁻¹), A = nβH + α, A(m − w*) = −αw*, so nβ·E[L_n − L_n(w*)] = ½nβ(tr A⁻¹H + dᵀHd),
    d = m − w* (13.77 here). The clamp read 5.22 (the soft ten unrelaxed, and their shift)."""
    loss_fn, w, (x, y), _ = _regression(0.007)
    nbeta, alpha = 1e4, 1.0
    h = x.T @ x / x.shape[0]
    a = nbeta * h + alpha * torch.eye(h.shape[0], dtype=h.dtype)
    w_star = w["weight"].flatten()
    d = torch.linalg.solve(a, -alpha * w_star)
    exact = float(0.5 * nbeta * (torch.trace(torch.linalg.solve(a, h)) + d @ h @ d))
    assert 13.5 < exact < 14.0
    est = numeric.estimate_llc(
        loss_fn, w, (x, y), nbeta=nbeta, gamma=0.0, prior_precision=alpha, num_chains=4, seed=0,
        progress=False,
    )  # fmt: skip
    assert est.config.soft_whitened == 10
    assert abs(est.mean - exact) < 3 * est.stderr, (est.mean, est.stderr, exact)
    assert not [f for f in est.diagnostics if f.severity == "error"], est.diagnostics


def test_finding_counts_only_the_soft_directions_left_clamped(monkeypatch) -> None:
    """With the re-plan allowed to check 5 of the 10 soft directions (those of largest share),
    the 5 it whitens relax and the finding counts the other 5: their number and their share of
    the Laplace value, not the whitened ones' (an audit read "200 direction(s)" where 64 of the
    200 had been whitened)."""
    monkeypatch.setattr(numeric.plan.soft_whitening, "MAX_CHECKED", 5)
    loss_fn, w, data, h = _regression(0.007)
    nbeta = 1e4
    soft_h = np.sort(h[nbeta * h < 1.0])
    left = soft_h[:5]  # the smallest shares: not checked
    est = numeric.estimate_llc(loss_fn, w, data, nbeta=nbeta, num_chains=4, seed=0, progress=False)
    assert est.config.soft_whitened == 5
    found = [f for f in est.diagnostics if f.code == "soft_directions"]
    assert len(found) == 1, est.diagnostics
    assert found[0].values["directions"] == 5
    share = float(0.5 * np.sum(nbeta * left / (nbeta * left + 1.0)))
    assert abs(found[0].values["share"] - share) < 1e-6
