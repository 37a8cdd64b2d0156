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
# # Lau et al., Fig. 1: λ̂ against λ for deep linear networks
#
# **Claim** (Lau et al. 2025, Fig. 1; Furman & Lau 2024, Fig. 1): the SGLD estimate of the local
# learning coefficient at the true parameter of a deep linear network recovers the theoretical λ
# (Aoyagi 2024), for networks from 10³ up to 10⁸ parameters.
#
# **Here**: random depths (2–5 layers) and widths, a true map of random rank r with every layer of
# rank r (a point of the most singular orbit, where the local λ is Aoyagi's, exact from
# `rlct.deep_linear_network`), noise-free labels so that w* is an exact minimum of L_n. λ̂ at the
# true parameter, and after training a network from small initialisation on the same data.
# Small mode: 12 networks of 10²–10⁴ parameters on the CPU, n = 2000, with fixed, short chains
# (the package's automatic lengths take minutes to over an hour per network here: see
# `notebooks/README.md`). Full mode
# (`FULL=1`, a GPU): networks up to 10⁸ parameters with the estimator's defaults — not run here
# (no GPU on this machine).

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from verification.experiments import mode, records_table
from verification.experiments.dln import dln_claim
from verification.experiments.teachers import random_dln_teacher

torch.set_num_threads(1)  # tiny models: one thread is much faster on a shared machine
M = mode()
t_start = time.perf_counter()
g = torch.Generator().manual_seed(18)
if M.full:
    teachers = [random_dln_teacher(g, 10**3, 10**8) for _ in range(20)]
    settings = dict(n=10**5, trained=5, num_chains=4, device=M.device, dtype=torch.float32)
else:
    teachers = [random_dln_teacher(g, 10**2, 10**4, max_depth=4) for _ in range(12)]
    settings = dict(n=2000, trained=2, num_chains=4, num_burnin=200, num_draws=400, train_steps=400)
print(
    M,
    len(teachers),
    "networks,",
    min(t.num_params for t in teachers),
    "to",
    max(t.num_params for t in teachers),
    "parameters",
)

# %%
result = dln_claim(teachers, **settings)
table = records_table(result.points)
table["rel_error"] = [p.rel_error for p in result.points]
cols = [
    "where",
    "teacher.widths",
    "teacher.rank",
    "teacher.num_params",
    "teacher.lam",
    "teacher.mult",
    "estimate.llc",
    "estimate.stderr",
    "rel_error",
    "estimate.findings",
    "estimate.seconds",
]
print(table[cols].to_string(float_format=lambda v: f"{v:.3g}"))

# %% [markdown]
# ## The local λ at the trained point (issue 64)
#
# Aoyagi's λ is the *global* one, attained at the most singular points; a trained network sits
# at its own factorisation, whose local λ (`rlct.dln_local_lambda`) is decided by the ranks of
# its partial products. The trained weights are floats, so those ranks are a **numerical
# decision** (σ > 10⁻⁶·σ_max for each product, `verification.experiments.local_rank`), not an
# exact computation: `gap` is the smallest kept σ over the largest dropped one (inf: nothing
# dropped), and where the products' decisions contradict each other (no gap) no λ is given.

# %%
for p in result.points:
    if p.local is not None:
        lr = p.local
        print(
            f"{'-'.join(map(str, p.teacher.widths))} (r = {p.teacher.rank}): global λ "
            f"{p.teacher.lam}, λ̂ {p.estimate.llc:.3g}; local λ at the trained point "
            f"{lr.lam_exact} (layer ranks {lr.layer_ranks}, product rank {lr.product_rank}, "
            f"gap {lr.gap:.3g}, smallest kept σ/σ_max {lr.smallest_kept:.2g})"
        )

# %%
fig, ax = plt.subplots(figsize=(5, 4.5))
for where, marker in (("true", "o"), ("trained", "s")):
    pts = [p for p in result.points if p.where == where and p.teacher.lam > 0]
    lam = np.array([float(p.teacher.lam) for p in pts])
    est = np.array([p.estimate.llc for p in pts])
    err = np.array([2 * p.estimate.stderr for p in pts])
    sc = ax.scatter(
        lam,
        est,
        c=np.log10([p.teacher.num_params for p in pts]),
        marker=marker,
        cmap="viridis",
        label=f"at the {where} parameter",
        vmin=2,
        vmax=4,
    )
    ax.errorbar(lam, est, yerr=err, fmt="none", ecolor="grey", lw=0.8)
lims = [1, 2 * max(float(t.lam) for t in teachers)]
ax.plot(lims, lims, "k--", lw=1, label="λ̂ = λ")
ax.set(xscale="log", yscale="log", xlabel="λ (Aoyagi)", ylabel="λ̂ (SGLD)", title=f"{M.name} mode")
fig.colorbar(sc, label="log10 parameters")
ax.legend()
plt.show()

# %% [markdown]
# ## Verdict
#
# The verdict compares λ̂ with λ, as the paper does. But λ̂ estimates λ_β = nβ·E_β[L_n − L_n(w*)]
# at this n and γ = 1, which approaches λ only slowly as nβ grows: at n = 10⁴ an independent
# sampler (MALA on the closed-form loss, `dln.dln_target`) put λ_β 7–23% below λ on eight
# networks (median 13.5%), with SGLD within 3.5% of it on six of them; on 5-9-5-7 the gap is 17%
# at n = 10³ and 8% at n = 10⁶ (`benchmarks/RESULTS.md`). At this notebook's n = 2000 the
# target lies further below λ than at 10⁴ (the gap shrinks with nβ), so an estimate below λ here
# is not by itself an estimator's error.

# %%
print(result.verdict)
print(f"run time {time.perf_counter() - t_start:.0f} s ({M.name} mode)")
