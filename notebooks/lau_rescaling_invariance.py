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
# **Here**: a two-layer ReLU MLP 2-4-1 with biases is its own teacher (noise-free labels, n = 1000).
# Three estimates at T_α(w*) for each α (`verification.experiments.rescaling`):
# *invariant* — SGLD in the coordinates u = T_α⁻¹(w), i.e. with the constant preconditioner
# diag(α², α⁻²) and the localisation in the matching metric (the preconditioning that makes a fixed
# step size invariant); *defaults* — the package's defaults in the original coordinates (only
# `num_chains`, `seed`, and fixed lengths in small mode); *fixed step* — no preconditioner, the
# step size chosen at α = 1 used at every α.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from verification.experiments import mode, records_table
from verification.experiments.rescaling import VARIANTS, rescaling_claim

torch.set_num_threads(1)  # tiny models: one thread is much faster on a shared machine
M = mode()
t_start = time.perf_counter()
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
