"""Claim 5 (entropy-SGD finds minima of lower LLC than SGD) by the authors' own procedure.

**Reproduced?** The code of Lau et al.'s MNIST experiment
(``edmundlth/scalable_learning_coefficient_with_sgld`` @ 474a204: ``mnist_expt.py``,
``experiment.py``, ``EntropySGD.py``; the settings of the runs behind the paper's figure as
``plot_mnist_expt.ipynb`` prints them: 784-1024-1024-10 ReLU with biases, 1,863,690 parameters,
lr 10⁻², batch 512, 200 epochs, 80 seeds), as run here (``PAPER_SAMPLER``,
``paper_optimizers``):

* SGD: torch's SGD at lr 10⁻², momentum 0.9, Nesterov. Entropy-SGD: η = 10⁻², L = 5 inner steps,
  momentum 0.9 in both loops (not Nesterov; ``EntropySGD(inner_momentum=True)``), γ₀ = 10⁻⁴,
  γ₁ = 10⁻³, η' = 0.1, ε = 10⁻⁴, α = 0.75. Both from the seed's initialisation, cross-entropy,
  the same number of minibatch gradients (the authors run ⌊batches per epoch / L⌋ outer steps an
  epoch).
* λ̂: plain SGLD from w* (``paper_sgld``): ε = 10⁻⁵, γ = 100, nβ = n/log n, 4 chains of 400
  steps, batches of 512, no burn-in, λ̂ = nβ·(mean minibatch loss over all steps − L_n(w*)).

Published (the same notebook's figures, cells 6 and 13, read off their axes): final λ̂ ≈ 1,010
for SGD (≈ 880–1,140 over the 80 seeds) and ≈ 875 for entropy-SGD (≈ 830–960), about 13% lower.

What differs, each said once: scikit-learn's digits (1,348 training images, 8×8) for MNIST (not
downloadable here), so n = 1,348 and nβ = 187 against 5,452; narrower networks; the run length in
gradient evaluations, chosen, as the authors chose theirs, so that both optimizers reach zero
training error; an epoch skips its last partial batch (``training.train``); each chain walks its
own shuffle of the data (the authors' four chains ran one after another from one shared loader).

**True?** The package's estimator (``numeric.estimate_llc``: its defaults, γ = 1, nβ = n/log n,
with a time budget) at the same end points; its error findings say where an end point is not a
minimum or the estimate cannot be used.

Rules (fixed before the decisive run, in ``entropy.entropy_verdict``): per seed the pair
d_s = λ̂_entropy-SGD − λ̂_SGD (both from the seed's initialisation), the paired t-test; reproduced
when the mean d is negative with one-sided p < 0.05, not reproduced when positive with p < 0.05,
inconclusive otherwise. In the true arm a seed is left out where either estimate carries an error
finding, and fewer than three seeds left are inconclusive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch.nn.functional as F

import numeric

from ..errors import InvalidArgumentError
from .datasets import Dataset
from .entropy import EntropyResult, MinimumPoint, at_minimum, entropy_verdict, trained_minimum
from .llc import llc_at, paper_llc_point
from .networks import num_params
from .optimizers import OptimizerSpec, entropy_sgd, sgd
from .paper_sgld import PaperSGLDOptions, paper_sgld

PAPER_LR = 1e-2
PAPER_BATCH = 512
PAPER_SAMPLER = PaperSGLDOptions(
    step_size=1e-5, num_steps=400, num_chains=4, batch_size=PAPER_BATCH, gamma=100.0,
    nbeta="n/log n", burn_in=0,
)  # fmt: skip
# the final λ̂ of the authors' 80 seeds, read off plot_mnist_expt.ipynb's figures (module docstring)
PUBLISHED = {"SGD": 1010.0, "entropy-SGD": 875.0}


def paper_optimizers(lr: float = PAPER_LR) -> tuple[OptimizerSpec, OptimizerSpec]:
    """(SGD, entropy-SGD) at the authors' settings (module docstring)."""
    esgd = entropy_sgd(
        lr, inner_steps=5, inner_lr=0.1, noise=1e-4, scope=1e-4, scope_growth=1e-3,
        averaging=0.75, momentum=0.9, inner_momentum=True,
    )  # fmt: skip
    return sgd(lr, 0.9, nesterov=True), esgd


@dataclass(frozen=True)
class EntropyPaperResult:
    """Both arms on the same trained networks: the paper procedure's λ̂ (``paper``) and, where
    run, the package's (``true``), each with its points and verdict."""

    paper: EntropyResult
    true: EntropyResult | None


def entropy_paper_claim(
    data: Dataset,
    hidden: Sequence[int],
    grad_evals: int,
    seeds: Sequence[int],
    *,
    sampler: PaperSGLDOptions = PAPER_SAMPLER,
    lr: float = PAPER_LR,
    batch_size: int = PAPER_BATCH,
    package: dict[str, Any] | None = None,
    progress: bool = False,
) -> EntropyPaperResult:
    """Each seed's network trained by both optimizers (``paper_optimizers``) for ``grad_evals``
    minibatch gradients; at each end point the paper procedure's λ̂ (``sampler``, seeded by the
    seed) and, where ``package`` is given (keywords of ``numeric.estimate_llc``; {} for its
    defaults), the package's; both arms' verdicts (module docstring)."""
    if len(set(seeds)) < 2 or len(set(seeds)) != len(seeds):
        raise InvalidArgumentError(f"seeds must list at least two distinct seeds, got {seeds!r}")
    specs = paper_optimizers(lr)
    paper: list[MinimumPoint] = []
    true: list[MinimumPoint] = []
    for seed in seeds:
        for spec in specs:
            net, run = trained_minimum(data, hidden, spec, grad_evals, seed, batch_size)
            net.eval()
            loss_fn, w = numeric.from_module(net, F.cross_entropy)
            r = paper_sgld(loss_fn, w, data.train, sampler, seed=seed)
            est = paper_llc_point(run.steps, r.mean, r.stderr, num_params(net), r.seconds)
            paper.append(at_minimum(net, data, spec.label, seed, run.final_loss, est))
            if package is not None:
                ours, _ = llc_at(net, F.cross_entropy, data.train, step=run.steps,
                                 **{"seed": seed, **package})  # fmt: skip
                true.append(at_minimum(net, data, spec.label, seed, run.final_loss, ours))
            if progress:
                said = (
                    f" (package: {ours.llc:.2f} ± {ours.stderr:.2f})" if package is not None else ""
                )
                print(f"{spec.label} seed {seed}: loss {run.final_loss:.3g}, paper λ̂ "
                      f"{r.mean:.2f} ± {r.stderr:.2f}{said}", flush=True)  # fmt: skip
    labels = (specs[0].label, specs[1].label)
    paper_arm = EntropyResult(tuple(paper), entropy_verdict(paper, *labels))
    true_arm = None
    if package is not None:
        true_arm = EntropyResult(tuple(true), entropy_verdict(true, *labels, void_errors=True))
    return EntropyPaperResult(paper_arm, true_arm)
