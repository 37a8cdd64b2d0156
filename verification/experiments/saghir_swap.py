"""Seed 003 (Saghir et al.), Figs 4–6: the swap experiment.

Train with SGD, then continue copies from the same state with SGD, with NGD and with SGD at a
raised learning rate; λ̂ before and after the split. λ̂ comes from an ``Estimate`` (network, seed,
step) → ``LLCPoint``: the package's estimator (keyword arguments of ``numeric.estimate_llc``) or
any other, such as the paper procedure's (``saghir_paper.paper_estimate``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from torch import nn

from .datasets import Dataset
from .llc import LLCPoint, llc_at
from .ngd import NGDSpec
from .optimizers import OptimizerSpec
from .records import Claim, Measurement, Record, Verdict, mean_stderr
from .saghir import PAPER, _flagged, cross_entropy, fit

CLAIM_SWAP = Claim(
    PAPER,
    "Figs 4–6",
    "After SGD has converged, continuing with NGD raises λ̂ while continuing with SGD (even at a "
    "raised learning rate) does not.",
)


@dataclass(frozen=True)
class SwapRun(Record):
    """λ̂ at the split and after continuing with each optimizer, for one seed."""

    seed: int
    before: LLCPoint
    after: tuple[tuple[str, LLCPoint], ...]

    def change(self, label: str) -> tuple[float, float]:
        pt = dict(self.after)[label]
        return pt.llc - self.before.llc, math.hypot(pt.stderr, self.before.stderr)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"seed": self.seed, "before": self.before.llc}
        for label, pt in self.after:
            out[label] = pt.llc
            out[f"{label}.stderr"] = pt.stderr
        return out


Estimate = Callable[[nn.Module, int, int], LLCPoint]  # (network, seed, step) → λ̂


def _package_llc(
    net: nn.Module, seed: int, step: int, *, data: Dataset, estimator: dict[str, Any]
) -> LLCPoint:
    del seed  # the estimator's own seed is in ``estimator``
    return llc_at(net, cross_entropy, data.train, step=step, **estimator)[0]


def swap(
    data: Dataset,
    widths: Sequence[int],
    first: OptimizerSpec,
    continuations: dict[str, OptimizerSpec | NGDSpec],
    seeds: Sequence[int],
    *,
    steps_before: int,
    steps_after: int,
    batch_size: int,
    estimator: dict[str, Any] | Estimate,
) -> tuple[SwapRun, ...]:
    """Train with ``first``, estimate λ̂, then continue a copy with each of ``continuations``
    (same minibatch seed for all copies) and estimate again. ``estimator``: keyword arguments of
    ``numeric.estimate_llc``, or a function (network, seed, step) → ``LLCPoint``."""
    if isinstance(estimator, dict):
        estimate: Estimate = functools.partial(_package_llc, data=data, estimator=estimator)
    else:
        estimate = estimator
    out = []
    for seed in seeds:
        net = fit(data, widths, first, steps=steps_before, seed=seed, batch_size=batch_size)
        state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        before = estimate(net, seed, steps_before)
        after = []
        for label, opt in continuations.items():
            cont = fit(
                data,
                widths,
                opt,
                steps=steps_after,
                seed=seed,
                batch_size=batch_size,
                start=state,
                train_seed=10_000 + seed,
            )
            after.append((label, estimate(cont, seed, steps_before + steps_after)))
        out.append(SwapRun(seed, before, tuple(after)))
    return tuple(out)


def swap_verdict(
    runs: Sequence[SwapRun],
    ngd_label: str,
    sgd_labels: Sequence[str],
    *,
    require_usable: bool = False,
) -> Verdict:
    """Reproduced when λ̂ rises under NGD (mean change > 2 standard errors over seeds) and rises
    more than under each SGD continuation (paired over seeds: the same split point).
    ``require_usable``: inconclusive also when more than half of the seeds have an estimate with
    an error finding (as ``saghir.compare_verdict``)."""
    nums, changes = [], {}
    for label in (ngd_label, *sgd_labels):
        d = [r.change(label)[0] for r in runs]
        changes[label] = mean_stderr(d)
        nums.append(Measurement(f"Δλ̂ after the split, {label}", *changes[label]))
    m_ngd, se_ngd = changes[ngd_label]
    ngd_up = m_ngd - 2 * se_ngd > 0
    faster = True
    for s in sgd_labels:
        paired = [r.change(ngd_label)[0] - r.change(s)[0] for r in runs]
        m, se = mean_stderr(paired)
        nums.append(Measurement(f"Δλ̂ NGD − {s} (paired)", m, se))
        faster &= m - 2 * se > 0
    sentence = (
        f"after the split λ̂ changed by {m_ngd:+.3g} ± {se_ngd:.2g} under NGD and by "
        + ", ".join(f"{changes[s][0]:+.3g} ± {changes[s][1]:.2g} under {s}" for s in sgd_labels)
        + f" (means over {len(runs)} seeds)"
    )
    outcome = "reproduced" if ngd_up and faster else "not reproduced"
    if ngd_up != faster:
        outcome = "inconclusive"
    frac = _flagged([dict(r.after)[ngd_label] for r in runs])
    nums.append(Measurement(f"fraction of {ngd_label} end points that are not minima", frac))
    if frac > 0.5:
        outcome = "inconclusive"
        sentence += f"; {frac:.0%} of the {ngd_label} end points are not minima"
    if require_usable:
        flagged = [not all(q.ok for q in (r.before, *(p for _, p in r.after))) for r in runs]
        bad = sum(flagged) / len(flagged)
        nums.append(Measurement("fraction of seeds with an error finding", bad))
        if bad > 0.5:
            outcome = "inconclusive"
            sentence += f"; {bad:.0%} of the seeds have an estimate with an error finding"
    return Verdict(CLAIM_SWAP, outcome, tuple(nums), sentence + ".")
