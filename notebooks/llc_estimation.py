# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Estimating the LLC with SGLD, against exact values
#
# Lau et al. estimate the local learning coefficient by λ̂ = nβ·(E_β[L_n(w)] − L_n(w*)) under the
# localised tempered posterior p(w) ∝ exp(−nβ L_n(w) − γ/2‖w − w*‖²). Here we check it where the
# answer is known exactly, and split the error into its three parts:
#
# * **asymptotic bias**: λ_β − λ, with λ_β the value a perfect sampler returns at this nβ, γ
#   (`expected_llc`, by quadrature); about −(m−1)/log nβ for multiplicity m;
# * **sampler error**: λ̂ − λ_β (step size, mixing, Monte Carlo), which should be within a few
#   standard errors.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp
import torch

import numeric
import rlct
from numeric.hessian.measures import hessian_trace
from numeric.potential.reference import expected_llc
from numeric.series.sweep import temperature_sweep

n = 10_000

# %% [markdown]
# ## 1. Normal-crossing potentials K = Π w_j^(2k_j) at w* = 0

# %%
cases = [[1], [2], [1, 2], [1, 1]]
rows = []
for k in cases:

    def K(w, k=k):
        return math.prod(w[..., j] ** (2 * kj) for j, kj in enumerate(k))

    exact = rlct.normal_crossing(k)
    est = numeric.estimate_llc_potential(K, [0.0] * len(k), n=n, num_chains=8, seed=1)
    ref = expected_llc(K, [0.0] * len(k), nbeta=est.nbeta, gamma=est.config.gamma)
    z = (est.mean - ref.value) / est.stderr
    rows.append((k, exact.lam, exact.mult, ref.value, est.mean, est.stderr, z))
    print(
        f"k={k}: λ = {exact.lam} (m={exact.mult}), λ_β = {ref.value:.4f}, "
        f"λ̂ = {est.mean:.4f} ± {est.stderr:.4f}, z vs λ_β = {z:+.2f}, "
        f"asymptotic bias λ_β − λ = {ref.value - float(exact.lam):+.4f}"
    )
# The sampler agrees with the finite-temperature target; the gap to λ is the m > 1 bias.
assert all(abs(r[6]) < 4 for r in rows)

# %% [markdown]
# For k = [1, 1] (m = 2) the asymptotic bias is clearly visible: λ_β ≈ λ − (m−1)/log nβ, and
# 1/log(1086) ≈ 0.14. Regressing on 1/log nβ and taking the intercept removes most of it (seed 002,
# App. B). We do it first on the exact λ_β (quadrature, no sampling error), then put sampler
# estimates beside the curve. The slope is not exactly −(m−1): higher-order terms and the
# localisation γ bend the curve, which is why the intercept is a bias *reduction*, not an exact λ.


# %%
def K11(w):
    return w[..., 0] ** 2 * w[..., 1] ** 2


nbetas = np.array([1e3, 1e4, 1e5, 1e6, 1e8])
lam_beta = np.array([expected_llc(K11, [0.0, 0.0], nbeta=nb, gamma=1.0).value for nb in nbetas])
x = 1 / np.log(nbetas)
slope, intercept = np.polyfit(x, lam_beta, 1)
print(f"exact λ_β: {np.round(lam_beta, 4)}; intercept {intercept:.3f} (λ = 1/2), slope {slope:.2f}")
assert abs(intercept - 0.5) < abs(lam_beta[0] - 0.5) / 2  # the intercept halves the bias at least

sweep = temperature_sweep(
    numeric.estimate_llc_potential, K11, [0.0, 0.0], n, nbetas=[1e3, 1e4, 1e5], num_chains=8, seed=3
)
print(f"from estimates: intercept {sweep.intercept:.3f} ± {sweep.intercept_stderr:.3f}")
# A sweep from estimates inherits their errors, so compare each estimate with λ_β before trusting
# an extrapolation. Here each agrees with it (plain MALA, which creeps along the flat axes, sat
# below λ_β at nβ = 1e5; the position-dependent steps of estimate_llc_potential fixed that).
for nb, e in zip(sweep.nbetas, sweep.estimates):
    lb = expected_llc(K11, [0.0, 0.0], nbeta=nb, gamma=1.0).value
    print(f"nβ = {nb:.0e}: λ̂ = {e.mean:.4f} ± {e.stderr:.4f}, λ_β = {lb:.4f}")
    assert abs(e.mean - lb) < 4 * e.stderr
fig, ax = plt.subplots(figsize=(4, 3))
ax.plot(x, lam_beta, "k.-", label="λ_β (quadrature)")
xe = 1 / np.log(sweep.nbetas)
ax.errorbar(
    xe,
    [e.mean for e in sweep.estimates],
    yerr=[2 * e.stderr for e in sweep.estimates],
    fmt="o",
    label="SGLD ± 2 se",
)
ax.axhline(0.5, color="C2", ls="--", label="exact λ = 1/2")
ax.set(xlabel="1 / log nβ", ylabel="λ", title="K = w1² w2²")
ax.legend()
plt.show()


# %% [markdown]
# ## 2. Reduced rank regression at the origin
#
# y = BAx with A: H×M, B: N×H and true map 0 (r = 0), the most singular point. The exact λ is
# Aoyagi–Watanabe's closed form. The chains are localised at the true parameter w* = 0, which is
# not a minimum of L_n (the responses are noise): the estimator's target, nβ·(E_β[L_n] − L_n(w*)),
# then lies below λ. For a regular model the shift is −λ/log n; here it is not known in closed
# form, so we compute it with an exact sampler. L_n is a polynomial in (A, B) through the sufficient
# statistics Sxx = mean xxᵀ, Sxy = mean xyᵀ, so the same L_n is a potential K that
# `estimate_llc_potential` samples with MALA (exact, no minibatch noise, position-dependent steps
# where plain MALA creeps). SGLD on the data must agree with it.

# %%
M = N = H = 2
exact = rlct.reduced_rank_regression(M, N, H, 0)
g = torch.Generator().manual_seed(0)
x_ = torch.randn(n, M, generator=g, dtype=torch.float64)
y_ = torch.randn(n, N, generator=g, dtype=torch.float64)


def rrr_loss(p, batch):
    xb, yb = batch
    return 0.5 * (yb - xb @ p["A"].T @ p["B"].T).square().sum(-1).mean()


Sxx, Sxy, Syy = x_.T @ x_ / n, x_.T @ y_ / n, y_.square().sum(1).mean()


def rrr_potential(w):
    """L_n(A, B) = ½(mean‖y‖² − 2 tr(BA·Sxy) + tr(BA·Sxx·(BA)ᵀ)), w = (vec A, vec B)."""
    A = w[..., : H * M].reshape(*w.shape[:-1], H, M)
    B = w[..., H * M :].reshape(*w.shape[:-1], N, H)
    P = B @ A
    cross = torch.einsum("...nm,mn->...", P, Sxy)
    quad = torch.einsum("...nm,mk,...nk->...", P, Sxx, P)
    return 0.5 * (Syy - 2 * cross + quad)


w_star = {"A": torch.zeros(H, M, dtype=torch.float64), "B": torch.zeros(N, H, dtype=torch.float64)}
est = numeric.estimate_llc(rrr_loss, w_star, (x_, y_), num_chains=8, seed=0)
ref = numeric.estimate_llc_potential(
    rrr_potential, [0.0] * (H * M + N * H), n=n, num_chains=8, num_draws=4000, seed=1
)
print(exact)
print(est)
print(f"exact sampler on the same L_n: {ref.mean:.3f} ± {ref.stderr:.3f}")
z = (est.mean - ref.mean) / math.hypot(est.stderr, ref.stderr)
print(
    f"SGLD − exact sampler: z = {z:+.2f}; shift from λ: {ref.mean - float(exact.lam):+.3f}, "
    f"against −λ/log n = {-float(exact.lam) / math.log(n):+.3f} for a regular model"
)
assert abs(z) < 4
assert ref.mean < float(exact.lam) - float(exact.lam) / math.log(n)

# %% [markdown]
# The shift is about 2.4 times the regular model's −λ/log n. SGLD needs a long run to reach it:
# the chains must spread along the directions held by the localisation alone. Overdamped SGLD
# (LM) does that in 2/(ε·γ) steps (about 10⁵ here). At such points the default integrator is
# BAOAB (underdamped, with momentum), which needs about 1/√(ε·γ) steps at low friction. But its
# velocity accumulates the minibatch gradient noise. With noisy responses, as here, that noise is
# large, and the rule that keeps the heating within 1% raises the friction close to LM's limit.
# The default then burns in for up to 20,000 steps and draws until ‖w − w*‖² has mixed (at most
# 20,000 draws). Measured on data seeds 0–2 (estimator seed 0): 1.131 ± 0.027, 1.204 ± 0.018 and
# 1.247 ± 0.018, against 1.124, 1.238 and 1.157 from the exact sampler (z = +0.19, −1.26, +3.03).
# The earlier default ran 528 + 200 steps and gave 0.87–1.50 (standard errors 0.19–0.28) over
# estimator seeds 0–2 on data seed 0. Even now ‖w − w*‖² has not mixed (ESS 11–20), and the
# `slow_mixing` warning says that the error bar understates the uncertainty. On noise-free data
# (y = 0, `tests/test_numeric_llc.py`) the same rule leaves the friction at 11.7, and ‖w − w*‖²
# reaches ESS 105 in the same time that gave LM ESS 10.

# %% [markdown]
# ## 3. The LLC beside the Hessian trace (seed 003)
#
# At a singular point the Hessian sees only the quadratic part: for K = w1² + w2⁴ the Hessian at 0
# has trace 2 and rank 1, while λ = 1/2 + 1/4 = 3/4. Hutchinson's estimator recovers the trace.


# %%
def K24(w):
    return w[..., 0] ** 2 + w[..., 1] ** 4


tr = hessian_trace(lambda w: K24(w), torch.zeros(2, dtype=torch.float64), num_samples=64)
est = numeric.estimate_llc_potential(K24, [0.0, 0.0], n=n, num_chains=8, seed=2)
print(
    f"Hessian trace {tr.mean:.3f} ± {tr.stderr:.3f}; LLC {est.mean:.3f} ± {est.stderr:.3f}; exact λ = 3/4"
)
x_s, y_s = sp.symbols("x y")
assert rlct.from_polynomial(x_s**2 + y_s**4, (x_s, y_s)).lam == sp.Rational(3, 4)
