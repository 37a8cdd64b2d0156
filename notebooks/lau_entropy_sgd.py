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
# # Lau et al.: SGD against entropy-SGD
#
# **Claim** (Lau et al. 2025, MNIST experiment, 80 seeds): entropy-SGD, which is built to seek flat
# regions, finds minima with a lower LLC than SGD.
#
# **Here**: small mode trains a ReLU MLP 64-32-10 with biases (2,410 parameters) on
# scikit-learn's digits (1,348 training images) with cross-entropy, by SGD with Nesterov
# momentum 0.9 and by entropy-SGD (L = 5 inner steps, momentum 0.9 as in the authors' code),
# from the same initialisation per seed and with the same number of minibatch gradients; λ̂ at
# each final point (4 chains, fixed short lengths). Full mode reads MNIST from `$SLT_MNIST_DIR`
# (a 784-1024-1024-10 network, 20 seeds), when the files are there; without them it runs the
# digits with 12 seeds, 2,000 minibatch gradients and the estimator's automatic lengths.

# %%
import time

import matplotlib.pyplot as plt
import torch

from verification.experiments import entropy_sgd, mode, records_table, sgd
from verification.experiments.datasets import digits, mnist, mnist_available
from verification.experiments.entropy import entropy_claim

torch.set_num_threads(1)  # small models: one thread is much faster on a shared machine
M = mode()
t_start = time.perf_counter()
sgd_spec = sgd(0.05, 0.9, nesterov=True)
esgd_spec = entropy_sgd(0.5, inner_steps=5, inner_lr=0.1, noise=1e-3, scope=0.03, momentum=0.9)
if M.full and mnist_available():
    data, hidden, seeds, evals, lengths = mnist(), [1024, 1024], range(20), 20_000, {}
elif M.full:  # no MNIST on this machine: the digits, more seeds, the automatic lengths
    gen = torch.Generator().manual_seed(0)
    data, hidden, seeds, evals, lengths = digits(gen), [32], range(12), 2000, {}
else:
    gen = torch.Generator().manual_seed(0)
    data, hidden, seeds, evals = digits(gen), [32], range(4), 1000
    lengths = dict(num_burnin=150, num_draws=300)
result = entropy_claim(
    data, hidden, sgd_spec, esgd_spec, evals, seeds, num_chains=4, progress=M.full, **lengths
)
cols = [
    "optimizer",
    "seed",
    "train_loss",
    "train_accuracy",
    "test_accuracy",
    "estimate.llc",
    "estimate.stderr",
    "estimate.findings",
]
print(data.name, records_table(result.points)[cols].to_string(float_format=lambda v: f"{v:.3g}"))

# %%
fig, ax = plt.subplots(figsize=(4.5, 3.5))
labels = [sgd_spec.label, esgd_spec.label]
ax.boxplot([result.llcs(lab) for lab in labels])
ax.set_xticks([1, 2], labels)
for i, lab in enumerate(labels, 1):
    ax.plot([i] * len(result.llcs(lab)), result.llcs(lab), "k.", alpha=0.6)
ax.set(ylabel="λ̂ at the final point", title=f"{data.name}, {len(seeds)} seeds each")
plt.show()

# %% [markdown]
# ## Verdict

# %%
print(result.verdict)
print(f"run time {time.perf_counter() - t_start:.0f} s ({M.name} mode)")
