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
# # Furman & Lau: rescaling invariance of the LLC estimate
#
# **Claim** (Furman & Lau 2024, §4, in Lau et al. 2025): a ReLU network computes the same function
# when its first layer is scaled by α and its second by 1/α, so λ is the same; the estimated LLC
# is constant in α too, for α from 10⁻⁴ to 10⁴.
#
# Two arms (issue 62). **Reproduced?** — the paper's own procedure (`rescaling_paper`: the
# authors' `rescaling_invariance.ipynb` in github.com/edmundlth/validating_lambdahat): a 30-40-30
# ReLU network (float32) whose hidden units 1–5 and 8 copy unit 0, n = 10,000 inputs U(−10, 10),
# SGLD in w-coordinates with the per-layer preconditioner α², α⁻² (ε = 10⁻⁵, γ = 0, batches of 500
# in order, 10,000 steps, full-data trace, no burn-in), a different seed at each α, against the
# published `data/llc_rescaling_results_3.json` (λ̂ ≈ 1,110 at every α). Cut on a CPU: α = 10⁻⁴,
# 10⁻², 1, 10², 10⁴ (the paper: 17 values), trace every 10th step; small mode 3 α × 3 chains ×
# 1,000 steps. The preconditioned process is the α = 1 one in law, so this arm tests the float32
# implementation and the noise only. Rule (`rescaling_paper`'s docstring, fixed before the run):
# ANOVA across α p ≥ 0.01 and every per-α mean within 5% of the grand mean.
#
# **True?** — the package's estimator, below. **Here**: a two-layer ReLU MLP 2-4-1 with biases is its own teacher (noise-free labels, n = 1000).
# Three estimates at T_α(w*) for each α (`verification.experiments.rescaling`):
# *invariant* — SGLD in the coordinates u = T_α⁻¹(w), i.e. with the constant preconditioner
# diag(α², α⁻²) and the localisation in the matching metric (the preconditioning that makes a fixed
# step size invariant); *defaults* — the package's defaults in the original coordinates (only
# `num_chains`, `seed`, and fixed lengths in small mode); *fixed step* — no preconditioner, the
# step size chosen at α = 1 used at every α. Each α runs from its own seed (seed + index). The
# verdict reads *defaults* only (the package's estimator in w-coordinates, nβ = n/log n, γ = 1);
# *invariant* is the α = 1 process in law, a sanity check never counted.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from verification.experiments import mode, records_table
from verification.experiments.rescaling import VARIANTS, rescaling_claim
from verification.experiments.rescaling_paper import paper_rescaling_points, paper_rescaling_verdict

torch.set_num_threads(1)  # tiny models: one thread is much faster on a shared machine
M = mode()
t_start = time.perf_counter()

# %% [markdown]
# ## Reproduced? The paper's procedure

# %%
if M.full:  # the decisive CPU slice; the paper ran 17 values of α, 5 runs each
    paper_kw = dict(alphas=[1e-4, 1e-2, 1.0, 1e2, 1e4], num_steps=10_000, num_chains=5)
else:
    paper_kw = dict(alphas=[1e-4, 1.0, 1e4], num_steps=1_000, num_chains=3)
paper_pts, paper_s = paper_rescaling_points(**paper_kw)
for p in paper_pts:
    print(f"α = {p.alpha:g}: λ̂ = {p.mean:.1f} (chains {[round(v) for v in p.per_chain]}), "
          f"paper {p.paper:.1f}")  # fmt: skip
print(paper_rescaling_verdict(paper_pts))
print(f"paper arm {paper_s:.0f} s")

# %% [markdown]
# ## True? The package's estimator

# %%
alphas = [1e-4, 1e-2, 1.0, 1e2, 1e4]
lengths = {} if M.full else dict(num_burnin=200, num_draws=400)
result = rescaling_claim([2, 4, 1], alphas, 1000, seed=0, num_chains=4, **lengths)
cols = [
    "alpha",
    "variant",
    "estimate.llc",
    "estimate.stderr",
    "estimate.findings",
    "estimate.seconds",
]
print(records_table(result.points)[cols].to_string(float_format=lambda v: f"{v:.3g}"))

# %%
fig, ax = plt.subplots(figsize=(5, 3.5))
for i, v in enumerate(VARIANTS):
    pts = result.series(v)
    a = np.array([p.alpha for p in pts]) * (1.15 ** (i - 1))
    ax.errorbar(
        a,
        [p.estimate.llc for p in pts],
        yerr=[2 * p.estimate.stderr for p in pts],
        fmt="o-",
        label=v,
    )
ax.set(xscale="log", xlabel="α (first layer × α, second × 1/α)", ylabel="λ̂ ± 2 se")
ax.legend()
plt.show()

# %% [markdown]
# ## Verdict

# %%
print(result.verdict)
print(f"run time {time.perf_counter() - t_start:.0f} s ({M.name} mode)")
