"""Seed 003 (Saghir et al.), NGD against SGD: the claims as functions returning records.

* ``compare`` / ``compare_verdict`` (Figs 1–2): ReLU MLPs of several widths and depths trained by
  SGD with Nesterov momentum and by NGD (:mod:`.ngd`) from the same initialisations; λ̂ and the
  Hessian trace (``numeric.hessian_trace``) at the end, over seeds, with the paired t-test of the
  per-seed differences per architecture (both optimizers start from the seed's initialisation;
  Welch's unpaired test until issue 62);
* ``smoothing`` / ``smoothing_verdict`` (Fig. 3): NGD's λ̂ against the Fisher smoothing α;
* the swap experiment (Figs 4–6) is :mod:`.saghir_swap`.

Loss: cross-entropy (the paper's negative log-likelihood). λ̂ comes from ``numeric.estimate_llc``
through ``llc_at`` (the package's default nβ = n/log n and γ = 1, fixed chain lengths), so
estimates are comparable across optimizers, not absolute: there is no exact λ for a ReLU MLP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from scipy import stats
from torch import nn

import numeric

from .datasets import Dataset
from .llc import LLCPoint, llc_at
from .networks import relu_mlp
from .ngd import NGDSpec
from .optimizers import OptimizerSpec
from .paper_stats import paired
from .records import Claim, Measurement, Record, Verdict, mean_stderr
from .training import train

PAPER = "Saghir et al. (2024), NGD converges to less degenerate solutions (seed 003)"
CLAIM_COMPARE = Claim(
    PAPER,
    "Figs 1–2",
    "Networks trained with NGD end with a higher λ̂ and a higher Hessian trace than networks "
    "trained with SGD, across widths and depths.",
)
CLAIM_SMOOTHING = Claim(PAPER, "Fig. 3", "Less Fisher smoothing (smaller α) gives NGD a higher λ̂.")


def cross_entropy(pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(pred, y)


def not_a_minimum(pt: LLCPoint) -> bool:
    """The estimator found lower loss than at w* (``below_reference_loss``): w* is not a local
    minimum, and λ̂ there is not a learning coefficient (often negative)."""
    return "below_reference_loss" in pt.findings


def _flagged(points: Sequence[LLCPoint]) -> float:
    return float(np.mean([not_a_minimum(q) for q in points])) if points else 0.0


@dataclass(frozen=True)
class Trained(Record):
    """One training run's end point: losses, accuracy, λ̂ and tr H."""

    widths: str
    optimizer: str
    seed: int
    steps: int
    train_loss: float
    test_loss: float
    test_acc: float
    llc: LLCPoint
    trace: float  # Hutchinson tr ∇²L_n and its standard error
    trace_stderr: float


@torch.no_grad()
def _eval(net: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    out = net(x)
    return float(cross_entropy(out, y)), float((out.argmax(-1) == y).double().mean())


def measure(
    net: nn.Module,
    data: Dataset,
    *,
    label: str,
    widths: Sequence[int],
    seed: int,
    steps: int,
    estimator: dict[str, Any],
    trace_samples: int,
) -> Trained:
    """λ̂ (``llc_at``), tr H (Hutchinson) and the losses of ``net`` as it is."""
    pt, _ = llc_at(net, cross_entropy, data.train, step=steps, **estimator)
    loss_fn, w = numeric.from_module(net, cross_entropy)
    tr = numeric.hessian_trace(loss_fn, w, data.train, num_samples=trace_samples, seed=seed)
    train_loss, _ = _eval(net, *data.train)
    test_loss, test_acc = _eval(net, *data.test)
    return Trained(
        "-".join(map(str, widths)),
        label,
        seed,
        steps,
        train_loss,
        test_loss,
        test_acc,
        pt,
        tr.mean,
        tr.stderr,
    )


def fit(
    data: Dataset,
    widths: Sequence[int],
    optimizer: OptimizerSpec | NGDSpec,
    *,
    steps: int,
    seed: int,
    batch_size: int,
    start: dict[str, torch.Tensor] | None = None,
    train_seed: int | None = None,
) -> nn.Sequential:
    """A ReLU MLP initialised from ``seed`` (or loaded from ``start``) trained for ``steps``."""
    net = relu_mlp(widths, generator=torch.Generator().manual_seed(seed), dtype=data.x_train.dtype)
    if start is not None:
        net.load_state_dict(start)
    g = torch.Generator().manual_seed(seed if train_seed is None else train_seed)
    train(net, cross_entropy, data.train, optimizer, steps, generator=g, batch_size=batch_size)
    return net


def compare(
    data: Dataset,
    architectures: Sequence[Sequence[int]],
    optimizers: dict[str, OptimizerSpec | NGDSpec],
    seeds: Sequence[int],
    *,
    steps: int,
    batch_size: int,
    estimator: dict[str, Any],
    trace_samples: int = 32,
) -> tuple[Trained, ...]:
    """Every architecture × optimizer × seed; the same seed gives the same initialisation and
    minibatch order for both optimizers."""
    out = []
    for widths in architectures:
        for seed in seeds:
            for label, opt in optimizers.items():
                net = fit(data, widths, opt, steps=steps, seed=seed, batch_size=batch_size)
                out.append(
                    measure(
                        net,
                        data,
                        label=label,
                        widths=widths,
                        seed=seed,
                        steps=steps,
                        estimator=estimator,
                        trace_samples=trace_samples,
                    )
                )
    return tuple(out)


@dataclass(frozen=True)
class Difference(Record):
    """mean(a) − mean(b) over the seeds run with both, the paired t (df = seeds − 1) and its
    two-sided p."""

    quantity: str
    widths: str
    mean_a: float
    mean_b: float
    difference: float
    t: float
    p: float


def _difference(a: dict[int, float], b: dict[int, float], quantity: str, widths: str) -> Difference:
    d = paired(a, b, f"{quantity} ({widths})")
    return Difference(quantity, widths, d.mean_a, d.mean_b, d.diff, d.t, d.p)


def differences(runs: Sequence[Trained], a: str, b: str) -> tuple[Difference, ...]:
    """Per architecture: λ̂ and tr H of optimizer ``a`` minus ``b``, paired by seed."""
    out = []
    for widths in dict.fromkeys(r.widths for r in runs):
        ra = {r.seed: r for r in runs if r.widths == widths and r.optimizer == a}
        rb = {r.seed: r for r in runs if r.widths == widths and r.optimizer == b}
        llc = {k: r.llc.llc for k, r in ra.items()}, {k: r.llc.llc for k, r in rb.items()}
        trace = {k: r.trace for k, r in ra.items()}, {k: r.trace for k, r in rb.items()}
        out.append(_difference(*llc, "λ̂", widths))
        out.append(_difference(*trace, "tr H", widths))
    return tuple(out)


def compare_verdict(
    diffs: Sequence[Difference],
    runs: Sequence[Trained] = (),
    *,
    matched_loss: bool = False,
    require_usable: bool = False,
) -> Verdict:
    """Reproduced when NGD − SGD is positive for both quantities in every architecture and
    significant (p < 0.05) in most; not reproduced when it is significantly negative and nowhere
    significantly positive. Inconclusive otherwise, and whenever more than half of either
    optimizer's end points are not minima (``not_a_minimum``): λ̂ then compares slopes, not LLCs.
    ``matched_loss``: the runs were read at matched training loss (the sentence says which).
    ``require_usable``: inconclusive also when more than half of either optimizer's estimates
    carry an error finding (the estimator says the number cannot be used as it is)."""
    nums = [
        Measurement(
            f"{d.quantity} NGD − SGD ({d.widths}); t = {d.t:.2f}, p = {d.p:.2g}", d.difference
        )
        for d in diffs
    ]
    flagged = {}
    for opt in dict.fromkeys(r.optimizer for r in runs):
        mine = [r for r in runs if r.optimizer == opt]
        flagged[opt] = _flagged([r.llc for r in mine])
        nums.append(
            Measurement(f"mean training loss, {opt}", *mean_stderr([r.train_loss for r in mine]))
        )
        nums.append(Measurement(f"fraction of {opt} end points that are not minima", flagged[opt]))
    pos = [d.difference > 0 for d in diffs]
    sig = [d.difference > 0 and d.p < 0.05 for d in diffs]
    neg_sig = [d.difference < 0 and d.p < 0.05 for d in diffs]
    sentence = (
        f"NGD − SGD is positive in {sum(pos)} of {len(diffs)} comparisons (λ̂ and tr H per "
        f"architecture), significantly (paired p < 0.05) in {sum(sig)}; significantly negative in "
        f"{sum(neg_sig)}"
    )
    if all(pos) and sum(sig) > len(diffs) / 2:
        outcome = "reproduced"
    elif any(neg_sig) and not any(sig):
        outcome = "not reproduced"
    else:
        outcome = "inconclusive"
    losses = {o: np.mean([r.train_loss for r in runs if r.optimizer == o]) for o in flagged}
    if losses:
        sentence += " (mean training loss " + ", ".join(f"{o} {x:.3g}" for o, x in losses.items())
        sentence += (
            ": at matched training loss)"
            if matched_loss
            else ": the comparison is at equal steps, not at equal loss)"
        )
    voids = []
    if require_usable:
        unusable = {
            o: float(np.mean([not r.llc.ok for r in runs if r.optimizer == o])) for o in flagged
        }
        for o, f in unusable.items():
            nums.append(Measurement(f"fraction of {o} estimates with an error finding", f))
        voids.append(
            (unusable, "estimates carry an error finding, so their λ̂ cannot be used as it is")
        )
    voids.append(
        (
            flagged,
            "end points are not minima (the estimator finds lower loss nearby: "
            "below_reference_loss), so λ̂ there is no LLC and the comparison confounds the "
            "optimizer with how far training got",
        )
    )
    for fractions, why in voids:
        most = [o for o, f in fractions.items() if f > 0.5]
        if most:
            outcome = "inconclusive"
            sentence += f"; but most {' and '.join(most)} {why}"
    return Verdict(CLAIM_COMPARE, outcome, tuple(nums), sentence + ".")


def smoothing_verdict(
    runs: Sequence[Trained], alphas: Sequence[float], *, require_usable: bool = False
) -> Verdict:
    """Slope of λ̂ on log α (``alphas[i]`` is run i's) over all runs and seeds, by least squares
    with its standard error and p-value. ``require_usable`` (as in ``compare_verdict``):
    inconclusive also when more than half of one α's estimates carry an error finding."""
    if len(alphas) != len(runs):
        raise ValueError(f"{len(runs)} runs but {len(alphas)} values of α")
    x = np.log(alphas)
    y = np.array([r.llc.llc for r in runs])
    fit_ = stats.linregress(x, y)
    nums = (
        Measurement("dλ̂/d log α", float(fit_.slope), float(fit_.stderr)),
        Measurement("p-value of the slope", float(fit_.pvalue)),
    )
    falls = fit_.slope < 0 and fit_.pvalue < 0.05
    rises = fit_.slope > 0 and fit_.pvalue < 0.05
    frac = _flagged([r.llc for r in runs])
    nums = (*nums, Measurement("fraction of end points that are not minima", frac))
    sentence = (
        f"λ̂ changes by {fit_.slope:.3g} ± {fit_.stderr:.2g} per unit log α (p = {fit_.pvalue:.2g}) "
        f"over α = {', '.join(f'{a:g}' for a in sorted(set(alphas)))}"
    )
    outcome = "reproduced" if falls else "not reproduced" if rises else "inconclusive"
    if frac > 0.5:
        outcome = "inconclusive"
        sentence += f"; {frac:.0%} of the end points are not minima (below_reference_loss)"
    if require_usable:
        bad = {a: np.mean([not r.llc.ok for r, b in zip(runs, alphas) if b == a]) for a in alphas}
        worst = max(bad.values())
        nums = (*nums, Measurement("largest fraction of one α's estimates with an error", worst))
        if worst > 0.5:
            outcome = "inconclusive"
            sentence += f"; {worst:.0%} of one α's estimates carry an error finding"
    return Verdict(CLAIM_SMOOTHING, outcome, nums, sentence + ".")
