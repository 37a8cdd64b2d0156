"""Claim 5: entropy-SGD finds minima of lower LLC than SGD (Lau et al. 2025, MNIST experiment).

A ReLU MLP with biases is trained on a classification set (small mode: scikit-learn's digits;
full mode: MNIST from ``$SLT_MNIST_DIR``) with cross-entropy by SGD with Nesterov momentum and by
entropy-SGD, from the same initialisations (one per seed), with the same number of minibatch
gradient evaluations (an entropy-SGD step costs ``inner_steps`` of them). λ̂ at each final point;
the per-seed differences with the paired t-test and the Wilcoxon signed-rank test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import InvalidArgumentError
from .datasets import Dataset
from .llc import LLCPoint, llc_at
from .networks import relu_mlp
from .optimizers import OptimizerSpec
from .paper_stats import paired
from .records import Claim, Measurement, Record, Verdict, mean_stderr
from .training import TrainingRun, train

CLAIM = Claim(
    "Lau et al. (2025)",
    "SGD against entropy-SGD on MNIST (LLC of the minima found, 80 seeds)",
    "Entropy-SGD finds minima with a lower LLC than SGD.",
)


@dataclass(frozen=True)
class MinimumPoint(Record):
    """One trained network: optimizer, seed, train loss and accuracy, test accuracy, λ̂."""

    optimizer: str
    seed: int
    train_loss: float
    train_accuracy: float
    test_accuracy: float
    estimate: LLCPoint


@dataclass(frozen=True)
class EntropyResult:
    points: tuple[MinimumPoint, ...]
    verdict: Verdict

    def llcs(self, optimizer: str) -> np.ndarray:
        return np.array([p.estimate.llc for p in self.points if p.optimizer == optimizer])


def accuracy(net: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float((net(x).argmax(-1) == y).double().mean())


def trained_minimum(
    data: Dataset,
    hidden: Sequence[int],
    optimizer: OptimizerSpec,
    grad_evals: int,
    seed: int,
    batch_size: int = 64,
) -> tuple[torch.nn.Module, TrainingRun]:
    """The seed's ReLU MLP (hidden widths ``hidden``) trained by ``optimizer`` for ``grad_evals``
    minibatch gradients (an entropy-SGD step costs ``inner_steps`` of them), and its run."""
    g = torch.Generator().manual_seed(seed)
    widths = [data.num_features, *hidden, data.num_classes]
    net = relu_mlp(widths, generator=g, dtype=data.x_train.dtype)
    per_step = optimizer.inner_steps if optimizer.kind == "entropy_sgd" else 1
    if grad_evals < per_step or grad_evals % per_step:  # equal budgets, nothing rounded away
        raise InvalidArgumentError(
            f"grad_evals = {grad_evals} must be a positive multiple of {optimizer.label}'s "
            f"{per_step} gradients per step"
        )
    run = train(
        net,
        F.cross_entropy,
        data.train,
        optimizer,
        grad_evals // per_step,
        generator=g,
        batch_size=batch_size,
    )
    return net, run


def at_minimum(
    net: torch.nn.Module, data: Dataset, label: str, seed: int, loss: float, est: LLCPoint
) -> MinimumPoint:
    """The record of a trained network and an estimate at it."""
    return MinimumPoint(
        label, seed, loss, accuracy(net, *data.train), accuracy(net, *data.test), est
    )


def minimum_point(
    data: Dataset,
    hidden: Sequence[int],
    optimizer: OptimizerSpec,
    grad_evals: int,
    seed: int,
    *,
    batch_size: int = 64,
    **estimator: Any,
) -> MinimumPoint:
    """Train from the seed's initialisation for ``grad_evals`` minibatch gradients; λ̂ at the end."""
    net, run = trained_minimum(data, hidden, optimizer, grad_evals, seed, batch_size)
    estimator.setdefault("seed", seed)
    est, _ = llc_at(net, F.cross_entropy, data.train, **estimator)
    return at_minimum(net, data, optimizer.label, seed, run.final_loss, est)


MIN_PAIRS = 3  # seeds left after voiding below which the rule does not decide


def entropy_verdict(
    points: Sequence[MinimumPoint],
    sgd_label: str,
    esgd_label: str,
    alpha: float = 0.05,
    *,
    void_errors: bool = False,
) -> Verdict:
    """Both optimizers start from each seed's initialisation, so the runs are pairs: the paired
    t-test on the per-seed differences d_s = λ̂_entropy-SGD − λ̂_SGD (df = seeds − 1), with the
    Wilcoxon signed-rank test beside it. Reproduced if the mean difference is negative with
    one-sided p < ``alpha``; not reproduced if positive with p < ``alpha``; inconclusive
    otherwise. (Issue 62 changed Welch's unpaired test to the paired one before the rerun.)
    With ``void_errors`` a seed is left out where either estimate carries an error finding, and
    fewer than ``MIN_PAIRS`` seeds left are inconclusive."""
    from scipy import stats

    void = {p.seed for p in points if void_errors and not p.estimate.ok}
    a_by = {
        p.seed: p.estimate.llc for p in points if p.optimizer == sgd_label and p.seed not in void
    }
    b_by = {
        p.seed: p.estimate.llc for p in points if p.optimizer == esgd_label and p.seed not in void
    }
    if void_errors and len(set(a_by) & set(b_by)) < MIN_PAIRS:
        left = len(set(a_by) & set(b_by))
        text = f"{len(void)} seeds voided by error findings, {left} pairs left: no decision."
        return Verdict(CLAIM, "inconclusive", (Measurement("seeds voided", len(void)),), text)
    d = paired(b_by, a_by, "λ̂")
    a = np.array([a_by[k] for k in d.seeds])
    b = np.array([b_by[k] for k in d.seeds])
    ma, sa = mean_stderr(a)
    mb, sb = mean_stderr(b)
    w = stats.wilcoxon(b - a) if np.any(b != a) else None
    p_lower = d.p / 2 if d.t < 0 else 1 - d.p / 2
    p_higher = 1 - p_lower
    flagged = sum(not p.estimate.ok for p in points)
    nums = (
        Measurement(f"λ̂ {sgd_label}", ma, sa),
        Measurement(f"λ̂ {esgd_label}", mb, sb),
        Measurement("paired difference (entropy-SGD − SGD)", d.diff, d.stderr),
        Measurement("paired t", d.t),
        Measurement("one-sided p (entropy-SGD lower)", p_lower),
        Measurement("Wilcoxon signed-rank p (two-sided)", float(w.pvalue) if w else 1.0),
        Measurement("estimates with an error finding", flagged),
        Measurement("seeds voided", len(void)),
    )
    text = (
        f"{len(d.seeds)} seeds, each optimizer from the seed's initialisation: λ̂ {mb:.1f} ± {sb:.1f} "
        f"({esgd_label}) against {ma:.1f} ± {sa:.1f} ({sgd_label}), paired difference "
        f"{d.diff:+.2f} ± {d.stderr:.2f}, t = {d.t:+.2f} at {len(d.seeds) - 1} df, one-sided "
        f"p = {p_lower:.3g}"
        + (f"; {flagged} estimates carry an error finding" if flagged else "")
        + (f" ({len(void)} seeds left out for it)" if void else "")
        + "."
    )
    if p_lower < alpha:
        return Verdict(CLAIM, "reproduced", nums, text)
    if p_higher < alpha:
        return Verdict(CLAIM, "not reproduced", nums, text)
    return Verdict(CLAIM, "inconclusive", nums, text)


def entropy_claim(
    data: Dataset,
    hidden: Sequence[int],
    sgd_spec: OptimizerSpec,
    esgd_spec: OptimizerSpec,
    grad_evals: int,
    seeds: Sequence[int],
    *,
    progress: bool = False,
    **kw: Any,
) -> EntropyResult:
    """Both optimizers from each seed's initialisation, λ̂ at each end point, and the verdict.
    ``progress`` shows a bar and writes each point's λ̂ as it is found (long full-mode runs)."""
    from tqdm.auto import tqdm

    if len(set(seeds)) < 2 or len(set(seeds)) != len(seeds):  # pairs by seed: each seed once
        raise InvalidArgumentError(f"seeds must list at least two distinct seeds, got {seeds!r}")
    jobs = [(s, spec) for s in seeds for spec in (sgd_spec, esgd_spec)]
    pts = []
    with tqdm(total=len(jobs), desc="trained minima", unit="net", disable=not progress) as bar:
        for s, spec in jobs:
            pts.append(minimum_point(data, hidden, spec, grad_evals, s, **kw))
            est = pts[-1].estimate
            if progress:
                tqdm.write(f"{spec.label} seed {s}: λ̂ = {est.llc:.2f} ± {est.stderr:.2f}")
            bar.update()
    return EntropyResult(tuple(pts), entropy_verdict(pts, sgd_spec.label, esgd_spec.label))
