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
# # Lau et al.: SGLD against MALA as n grows
#
# **Claim** (Lau et al. 2025, appendix comparing samplers): on a small ReLU network the SGLD
# estimate of the LLC agrees with the estimate of an exact-gradient Metropolis-adjusted sampler
# (MALA) within their errors, over n from 100 to 10⁵, at a fraction of the cost.
#
# **Here**: a ReLU MLP 2-3-1 with biases (13 parameters) is its own teacher (noise-free labels, so
# w* is an exact minimum of L_n). SGLD: `numeric.estimate_llc` with minibatches. MALA:
# `numeric.estimate_llc_potential` on the full-data loss L_n(w) written as a potential of the
# flat parameter vector (`sgld_mala.mlp_potential`), so exact gradients and a Metropolis test.
# Both with the same nβ = n/log n and γ = 1, 4 chains, and fixed lengths in small mode
# (n = 10², 10³, 10⁴; full mode adds 10⁵ and uses the automatic lengths).
#
# Plain MALA creeps along the directions that only γ holds (its step is set by the stiffest
# curvature), and at n ≥ 10⁴ its estimates carry a `slow_mixing` error. So a third, independent
# exact reference runs beside it: Metropolis-adjusted HMC on the same L_n
# (`numeric.hmc_llc_potential`), whose trajectories cross those directions in a few iterations.
# Where MALA is flagged, the verdict compares SGLD with HMC and says so.

# %%
import time

import matplotlib.pyplot as plt
import torch

from verification.experiments import mode, records_table
from verification.experiments.sgld_mala import sampler_claim

torch.set_num_threads(1)  # tiny models: one thread is much faster on a shared machine
M = mode()
t_start = time.perf_counter()
widths = [2, 3, 1]
if M.full:
    ns, lengths, hmc = [10**2, 10**3, 10**4, 10**5], {}, dict(num_burnin=100, num_draws=300)
else:
    ns, lengths = [10**2, 10**3, 10**4], dict(num_burnin=400, num_draws=800)
    hmc = dict(num_burnin=50, num_draws=150)
result = sampler_claim(widths, ns, seed=0, num_chains=4, sgld=lengths, mala=lengths, hmc=hmc)
cols = [
    "n",
    "sgld.llc",
    "sgld.stderr",
    "sgld.seconds",
    "sgld.findings",
    "mala.llc",
    "mala.stderr",
    "mala.seconds",
    "mala.findings",
    "hmc.llc",
    "hmc.stderr",
    "hmc.seconds",
    "hmc.findings",
    "z",
    "z_hmc",
    "z_mala_hmc",
]
print(records_table(result.pairs)[cols].to_string(float_format=lambda v: f"{v:.3g}"))

# %%
fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
for key, off in (("sgld", 0.94), ("mala", 1.0), ("hmc", 1.06)):
    xs = [p.n * off for p in result.pairs]
    ys = [getattr(p, key).llc for p in result.pairs]
    es = [2 * getattr(p, key).stderr for p in result.pairs]
    ax.errorbar(xs, ys, yerr=es, fmt="o-", label=key.upper() + " ± 2 se")
    ax2.plot(
        [p.n for p in result.pairs],
        [getattr(p, key).seconds for p in result.pairs],
        "o-",
        label=key.upper(),
    )
ax.set(xscale="log", xlabel="n", ylabel="λ̂", title="ReLU MLP 2-3-1 at its teacher")
ax2.set(xscale="log", yscale="log", xlabel="n", ylabel="seconds per estimate")
ax.legend()
ax2.legend()
plt.show()

# %% [markdown]
# ## Verdict

# %%
print(result.verdict)
print(f"run time {time.perf_counter() - t_start:.0f} s ({M.name} mode)")
