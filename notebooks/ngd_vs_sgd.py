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
# # Natural-gradient descent against SGD: Saghir et al. (seed 003)
#
# The paper trains fully connected ReLU networks on MNIST and Fashion-MNIST with SGD and with
# natural-gradient descent (NGD) using a smoothed Fisher F_s = F + κI, κ = (α/D)·max(tr F, ε), and
# finds that NGD's solutions have a higher estimated LLC λ̂ and a higher Hessian trace. Claims,
# each checked by a function of `verification.experiments.saghir` returning records and a verdict:
#
# 1. **Figs 1–2**: NGD ends with higher λ̂ and tr H than SGD across widths and depths (Fig. 1 quotes
#    t-tests over seeds).
# 2. **Fig. 3**: less smoothing (smaller α) gives NGD a higher λ̂.
# 3. **Figs 4–6 (swap)**: after SGD has converged, continuing with NGD raises λ̂; continuing with
#    SGD, even at a raised learning rate, does not.
#
# Each claim has two arms (issue 62). **Reproduced?** The authors' own procedure
# (`verification.experiments.saghir_paper`): their code's optimizer, Kaldi's online natural
# gradient with Nesterov momentum (`online_ngd`), against SGD with the same momentum, and λ̂ by
# devinterp's SGLD at their settings (`paper_sgld`). **True?** The same runs read at matched
# training loss with the package's estimator. Beside them, the paper's equations as written
# (`verification.experiments.ngd`: the exact empirical Fisher of each minibatch, by the Woodbury
# identity, no momentum) against SGD with Nesterov momentum 0.9, λ̂ from `numeric.estimate_llc`
# (nβ = n/log n, γ = 1) at fixed chain lengths. All at the paper's learning rate 10⁻², batch 128,
# α = 10⁻², ε = 10⁻¹⁰, cross-entropy, the same initialisation and minibatch order per seed; tr H by
# Hutchinson (`numeric.hessian_trace`). A ReLU network has no exact λ: the verdicts rest on
# differences between optimizers and their t/p values. Small mode trains on scikit-learn's digits
# (1,348 training images, 8×8); `FULL=1` on MNIST and Fashion-MNIST from
# `$SLT_MNIST_DIR` when the IDX files are there (digits otherwise), with the paper's widths.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display

from verification.experiments import mode, records_table, sgd
from verification.experiments.datasets import digits, mnist, mnist_available
from verification.experiments.ngd import ngd
from verification.experiments.online_ngd import online_ngd
from verification.experiments.saghir import (
    compare,
    compare_verdict,
    differences,
    fit,
    measure,
    smoothing_verdict,
)
from verification.experiments.saghir_paper import (
    matched,
    matched_estimates,
    paper_curves,
    paper_end_points,
    paper_estimate,
)
from verification.experiments.saghir_swap import swap, swap_verdict

torch.set_num_threads(1)  # small models: one thread is much faster on a shared machine
M = mode()
if M.full and mnist_available():
    datasets = [mnist(kind="mnist"), mnist(kind="fashion")]
else:
    datasets = [digits(torch.Generator().manual_seed(0))]
data = datasets[0]
D_IN = data.num_features
SMALL = dict(
    archs=([D_IN, 16, 10], [D_IN, 16, 16, 10]),
    seeds=(0, 1, 2),
    steps=800,
    alphas=(1e-3, 1e-2, 1.0),
    alpha_seeds=(0, 1),
    swap_seeds=(0, 1, 2),
    before=600,
    after=400,
    chains=4,
    burnin=200,
    draws=200,
    trace=32,
)
FULL = dict(
    archs=([D_IN, 64, 10], [D_IN, 256, 10], [D_IN, 256, 256, 10]),
    seeds=tuple(range(8)),
    steps=20_000,
    alphas=(1e-3, 1e-2, 1e-1, 1.0),
    alpha_seeds=tuple(range(4)),
    swap_seeds=tuple(range(5)),
    before=10_000,
    after=10_000,
    chains=8,
    burnin=None,
    draws=None,
    trace=200,
)
S = FULL if M.full else SMALL
EST = dict(
    num_chains=S["chains"], num_burnin=S["burnin"], num_draws=S["draws"], seed=0, device=M.device
)
LR, BATCH = 0.01, 128
OPTS = {"SGD": sgd(LR, 0.9, nesterov=True), "NGD": ngd(LR, alpha=0.01, eps=1e-10)}
print(
    f"mode {M.name} on {M.device}; data {[d.name for d in datasets]} "
    f"({data.x_train.shape[0]} training rows); {S}"
)
T0 = time.perf_counter()
verdicts = []

# %% [markdown]
# ## 1. NGD against SGD (Figs 1–2): the authors' procedure, then at matched loss
#
# **Reproduced?** The paper's equations (6–7) are not what its code runs. The authors' code
# (`cxtraa/ngd_with_slt`) trains with Kaldi's *online* natural gradient (Povey et al. 2015; a
# low-rank-plus-identity Fisher per axis of each weight, an exponential moving average with weight
# η = 0.9 on the new batch, the step rescaled to the gradient's size) and Nesterov momentum 0.9,
# against SGD with the same momentum, and estimates λ̂ with devinterp's SGLD (2 chains of 1,000
# draws, γ = 100, ε = 10⁻⁴, nβ = B/log B). `verification.experiments.saghir_paper` runs exactly
# that (`online_ngd`, `paper_sgld`), with λ̂ along training and tr H at the end; the comparison
# is the paper's, at the end of training. **True?** The same runs read where both optimizers reach
# the same training loss, with the package's estimator, whose error findings void an estimate
# (rule fixed before the run, `saghir_paper`'s docstring).

# %%
PAPER = (
    dict(archs=([D_IN, 16, 10], [D_IN, 64, 10], [D_IN, 256, 10]), seeds=tuple(range(8)))
    if M.full
    else dict(archs=([D_IN, 16, 10],), seeds=(0, 1, 2))
)
# digits: 3,000 steps (small), 10,000 (full: NGD at α = 10⁻² trains the wider networks to a loss
# of ≈ 0.02 only by then); MNIST: the paper's 20 epochs
PAPER_STEPS = (
    (10_000 if M.full else 3_000) if data.name == "digits" else 20 * (data.x_train.shape[0] // 128)
)
PAPER["every"] = PAPER_STEPS // (10 if M.full else 2)
points = paper_curves(
    data, PAPER["archs"], PAPER["seeds"], steps=PAPER_STEPS, every=PAPER["every"],
    trace_samples=S["trace"],
)  # fmt: skip
curves_table = records_table(points)
fig, ax = plt.subplots(1, 2, figsize=(11, 3.5))
for opt in ("SGD", "NGD"):
    sub = curves_table[curves_table.optimizer == opt].groupby("step")
    ax[0].errorbar(sub.llc.mean().index, sub.llc.mean(), sub.llc.sem(), marker="o", label=opt)
    ax[1].plot(sub.train_loss.mean(), sub.llc.mean(), marker="o", label=opt)
ax[0].set(xlabel="step", ylabel="λ̂ (paper procedure)", title=curves_table.widths.iloc[0])
ax[1].set(xlabel="training loss", ylabel="λ̂ (paper procedure)", xscale="log")
ax[0].legend()
plt.tight_layout()
plt.show()
ends = paper_end_points(points)
display(records_table(differences(ends, "NGD", "SGD")))
v_paper = compare_verdict(differences(ends, "NGD", "SGD"), ends)
print("Reproduced?", v_paper)

# %%
pairs = matched(points)
display(records_table(pairs))
EST_TRUE = dict(seed=0, time_budget=30.0, device=M.device) if M.full else EST
at_matched = matched_estimates(pairs, data, estimator=EST_TRUE, trace_samples=S["trace"])
cols = ["widths", "optimizer", "seed", "steps", "train_loss", "llc.llc", "llc.stderr", "trace"]
display(records_table(at_matched)[[*cols, "llc.findings"]])
v_true = compare_verdict(
    differences(at_matched, "NGD", "SGD"), at_matched, matched_loss=True, require_usable=True
)
print("True?", v_true)
verdicts += [v_paper, v_true]

# %% [markdown]
# ## 1b. The paper's equations as written: exact-Fisher NGD at equal steps
#
# NGD by Eqs 6–7 (`experiments.ngd`: the exact empirical Fisher of each batch, no momentum) against
# SGD with Nesterov momentum, λ̂ by the package's estimator at fixed short chains, compared at the
# end of training (the comparison before issue 62's paper arm).

# %%
runs = compare(
    data,
    S["archs"],
    OPTS,
    S["seeds"],
    steps=S["steps"],
    batch_size=BATCH,
    estimator=EST,
    trace_samples=S["trace"],
)
table = records_table(runs)
display(
    table[
        [
            "widths",
            "optimizer",
            "seed",
            "train_loss",
            "test_loss",
            "test_acc",
            "llc.llc",
            "llc.stderr",
            "trace",
            "trace_stderr",
            "llc.findings",
        ]
    ]
)
diffs = differences(runs, "NGD", "SGD")
display(records_table(diffs))
fig, ax = plt.subplots(1, 2, figsize=(11, 3.5))
for i, (col, name) in enumerate((("llc.llc", "λ̂"), ("trace", "tr H"))):
    for j, opt in enumerate(OPTS):
        sub = table[table.optimizer == opt]
        g = sub.groupby("widths")[col]
        ax[i].errorbar(
            np.arange(g.ngroups) + 0.1 * j, g.mean(), g.sem(), marker="o", ls="", label=opt
        )
    ax[i].set(xticks=range(g.ngroups), xticklabels=list(g.groups), ylabel=name)
    ax[i].legend()
plt.tight_layout()
plt.show()
v = compare_verdict(diffs, runs)
verdicts.append(v)
print(v)

# %% [markdown]
# The two optimizers do not reach the same training loss in the same number of steps at the same
# learning rate (table above): at lr = 10⁻² NGD's step is the SGD step preconditioned by
# (F + κI)⁻¹, which here makes slower progress than Nesterov-momentum SGD. λ̂ and tr H both grow
# as the loss falls, so the end-of-training comparison mixes "which optimizer" with "how far
# along". Where an end point is still on a slope the estimator finds lower loss nearby and says so
# (`below_reference_loss`; λ̂ then comes out near zero or negative): there λ̂ is not an LLC, and
# the verdict rule calls the comparison inconclusive. With the damping α = 10⁻² the empirical Fisher
# of a 128-sample batch is nearly singular and NGD diverges at lr ≥ 0.03 (training loss 10–80),
# so a larger NGD rate is not a way out. The along-training curves below put the two side by side
# at equal steps and equal losses.

# %%
widths = S["archs"][0]
arch = "-".join(map(str, widths))
curves = [r for r in runs if r.widths == arch and r.seed == 0]  # the end points, from above
for label, opt in OPTS.items():
    for stop in (S["steps"] // 4, S["steps"] // 2):
        net = fit(data, widths, opt, steps=stop, seed=0, batch_size=BATCH)
        curves.append(
            measure(
                net,
                data,
                label=label,
                widths=widths,
                seed=0,
                steps=stop,
                estimator=EST,
                trace_samples=S["trace"],
            )
        )
ct = records_table(curves).sort_values("steps")
fig, ax = plt.subplots(1, 3, figsize=(14, 3.5))
for label in OPTS:
    sub = ct[ct.optimizer == label]
    ax[0].errorbar(sub.steps, sub["llc.llc"], sub["llc.stderr"], marker="o", label=label)
    ax[1].errorbar(sub.steps, sub.trace, sub.trace_stderr, marker="o", label=label)
    ax[2].errorbar(sub.train_loss, sub["llc.llc"], sub["llc.stderr"], marker="o", label=label)
ax[0].set(xlabel="step", ylabel="λ̂")
ax[1].set(xlabel="step", ylabel="tr H")
ax[2].set(xlabel="training loss", ylabel="λ̂", xscale="log")
ax[0].legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 2. Fisher smoothing α (Fig. 3)
#
# **Reproduced?** The authors' NGD at several α, each from the seed's initialisation, λ̂ by their
# procedure at the end of training; the rule is `smoothing_verdict`'s slope of λ̂ on log α.

# %%
ALPHAS_PAPER = (1e-3, 1e-2, 1e-1, 1.0)
alpha_points = paper_curves(
    data, [widths], S["alpha_seeds"], steps=PAPER_STEPS, every=PAPER_STEPS,
    optimizers={f"NGD α={a:g}": online_ngd(LR, a) for a in ALPHAS_PAPER},
    trace_samples=S["trace"],
)  # fmt: skip
alpha_ends = paper_end_points(alpha_points)
display(records_table(alpha_ends)[["optimizer", "seed", "train_loss", "llc.llc", "llc.stderr"]])
v = smoothing_verdict(alpha_ends, [float(r.optimizer.split("=")[1]) for r in alpha_ends])
verdicts.append(v)
print("Reproduced?", v)

# %% [markdown]
# The package's estimator with the equations' NGD (section 1b's), at fixed short chains:

# %%
# α = 10⁻² (the comparison's NGD) at the same seeds is reused from section 1
alpha_runs = [r for r in runs if r.widths == arch and r.optimizer == "NGD"]
alpha_runs = [r for r in alpha_runs if r.seed in S["alpha_seeds"]]
alpha_of = [0.01] * len(alpha_runs)
for seed in S["alpha_seeds"]:
    for a in S["alphas"]:
        if a == 0.01:
            continue
        net = fit(data, widths, ngd(LR, alpha=a), steps=S["steps"], seed=seed, batch_size=BATCH)
        alpha_runs.append(
            measure(
                net,
                data,
                label=f"NGD α={a:g}",
                widths=widths,
                seed=seed,
                steps=S["steps"],
                estimator=EST,
                trace_samples=S["trace"],
            )
        )
        alpha_of.append(a)
display(
    records_table(alpha_runs)[["optimizer", "seed", "train_loss", "llc.llc", "llc.stderr", "trace"]]
)
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.errorbar(
    alpha_of,
    [r.llc.llc for r in alpha_runs],
    [r.llc.stderr for r in alpha_runs],
    marker="o",
    ls="",
)
ax.set(xscale="log", xlabel="α", ylabel="λ̂ (NGD)")
plt.show()
v = smoothing_verdict(alpha_runs, alpha_of)
verdicts.append(v)
print(v)

# %% [markdown]
# ## 3. The swap experiment (Figs 4–6)
#
# Train with SGD, then continue three copies from the same state (same minibatch order): with SGD at
# the same rate, with NGD, and with SGD at a 10× raised rate (the paper's control for "NGD just
# takes bigger steps"; the paper trains at 10⁻⁴ before the split and raises SGD to 10⁻²; in small
# mode 10⁻⁴ does not train in 600 steps, so the split happens after SGD at 10⁻²).

# %% [markdown]
# **Reproduced?** The authors' swap: SGD with Nesterov momentum, then copies continued with SGD,
# with their NGD (α = 10⁻¹, as in all their swap runs) and with SGD at 10× the rate; λ̂ by their
# procedure before and after. Their own result files (`experiments/ngd_sgd/*.html` in their
# repository: 19 swap runs on MNIST, Fashion-MNIST and a CNN) end with NGD's λ̂ above SGD's in
# every run, by 2–71% (e.g. 46.7 against 43.3 at lr 10⁻², where both train to a loss of 3·10⁻⁴).

# %%
paper_conts = {
    "SGD": sgd(LR, 0.9, nesterov=True),
    "NGD": online_ngd(LR, 0.1),
    "SGD ×10 lr": sgd(10 * LR, 0.9, nesterov=True),
}
paper_swaps = swap(
    data, widths, paper_conts["SGD"], paper_conts, S["swap_seeds"], steps_before=S["before"],
    steps_after=S["after"], batch_size=BATCH, estimator=paper_estimate(data),
)  # fmt: skip
display(records_table(paper_swaps))
v = swap_verdict(paper_swaps, "NGD", ["SGD", "SGD ×10 lr"])
verdicts.append(v)
print("Reproduced?", v)

# %% [markdown]
# The package's estimator with the equations' NGD (section 1b's), at fixed short chains:

# %%
first = sgd(LR, 0.9, nesterov=True)
conts = {"SGD": first, "NGD": ngd(LR, alpha=0.01), "SGD ×10 lr": sgd(10 * LR, 0.9, nesterov=True)}
swaps = swap(
    data,
    widths,
    first,
    conts,
    S["swap_seeds"],
    steps_before=S["before"],
    steps_after=S["after"],
    batch_size=BATCH,
    estimator=EST,
)
display(records_table(swaps))
fig, ax = plt.subplots(figsize=(5, 3.5))
for i, label in enumerate(conts):
    d = [r.change(label)[0] for r in swaps]
    ax.scatter([i] * len(d), d)
ax.axhline(0, color="grey")
ax.set(xticks=range(len(conts)), xticklabels=list(conts), ylabel="λ̂ after − before")
plt.show()
v = swap_verdict(swaps, "NGD", ["SGD", "SGD ×10 lr"])
verdicts.append(v)
print(v)

# %% [markdown]
# ## Verdicts

# %%
elapsed = time.perf_counter() - T0
display(records_table(verdicts)[["claim.where", "outcome", "sentence"]])
display(Markdown(f"Mode **{M.name}** on {M.device} ({data.name}), run time {elapsed:.0f} s."))
print(f"mode {M.name}, run time {elapsed:.0f} s")
for v in verdicts:
    print(v, end="\n\n")
