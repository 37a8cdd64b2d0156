r"""A callback per block of draws, for logging (``DrawsEvent``, ``BlockLog``,
``JsonLinesLogger``).

``estimate_llc(..., callback=f)`` calls ``f(event)`` once per block of draws — the steps between
two full-loss evaluations (``full_loss_every``), and the last, shorter block — never per step:
the SGLD steps run as without it (nothing is added to them; one host sync per block for the
event's numbers). The event is a frozen ``DrawsEvent``: the chains' running means so far, L_n and
the observables at the block's end. ``block`` counts from 0 in each sequence of draws; a 0 after
other blocks means that the draws started again (a restart after a divergence or a heating, the
full-batch switch, or draws made burn-in: ``numeric.draws.burn_in_extension``), and the estimate
is made from the last sequence only. ``JsonLinesLogger`` writes each event as one line of JSON;
a wandb or mlflow logger is the same few lines around ``wandb.log`` / ``mlflow.log_metrics``
(docs/how-to/observables.md), with no dependency here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from torch import Tensor

from numeric.result.llc_estimate import to_plain
from numeric.types import Trace

__all__ = ["BlockLog", "DrawsEvent", "JsonLinesLogger"]


@dataclass(frozen=True, eq=False)  # arrays: compared by identity
class DrawsEvent:
    r"""One block of draws. ``loss_means[c]`` = mean_t L_B(w_{c,t}) and ``llc_means[c]`` =
    nβ·mean_t (L_B(w_{c,t}) − L_B(w*)) over draws 1…``step`` of chain c (λ̂ per chain so far,
    before the control variate's ĉ·ℓ_t correction the estimate applies at the end);
    ``full_loss`` [C] = L_n at the block's end and ``observables`` (name → [C, ...]) there, where
    the block ended at a full-loss evaluation (else None and empty; a thinned observable appears
    at the evaluations it keeps). ``stopped``: "time_budget" or "interrupted" where the block was
    cut (the draws end with it)."""

    phase: str  # "draws"
    block: int  # 0, 1, … within one sequence of draws
    step: int  # draws per chain so far in this sequence, to the end of the block
    loss_means: np.ndarray  # [C]
    llc_means: np.ndarray  # [C]
    nbeta: float
    full_loss: np.ndarray | None = None  # [C]
    observables: dict[str, np.ndarray] = field(default_factory=dict)
    stopped: str | None = None

    def to_plain(self) -> dict[str, Any]:
        """Plain data for ``json.dumps`` (arrays as lists; NaN stays a float NaN)."""
        return to_plain(self)


class BlockLog:
    """Running sums of one sequence of draws, and the callback called with each block's
    ``DrawsEvent`` (``numeric.draws.sample.DataDraws``)."""

    def __init__(self, callback: Callable[[DrawsEvent], Any], nbeta: float) -> None:
        self.callback, self.nbeta = callback, nbeta
        self.loss_sum: np.ndarray | None = None
        self.delta_sum: np.ndarray | None = None
        self.steps = 0
        self.blocks = 0

    def __call__(
        self,
        part: Trace,
        full_loss: Tensor | None,
        values: dict[str, Tensor],
        stopped: str | None = None,
    ) -> None:
        loss = part.loss.double().cpu().numpy()
        delta = loss - part.ref.double().cpu().numpy()
        if self.loss_sum is None or self.delta_sum is None:
            self.loss_sum, self.delta_sum = np.zeros(loss.shape[0]), np.zeros(loss.shape[0])
        self.loss_sum = self.loss_sum + loss.sum(1)
        self.delta_sum = self.delta_sum + delta.sum(1)
        self.steps += loss.shape[1]
        steps = max(self.steps, 1)
        event = DrawsEvent(
            "draws",
            self.blocks,
            self.steps,
            self.loss_sum / steps,
            self.nbeta * self.delta_sum / steps,
            self.nbeta,
            None if full_loss is None else full_loss.double().cpu().numpy(),
            {k: v.cpu().numpy() for k, v in values.items()},
            stopped,
        )
        self.blocks += 1
        self.callback(event)


class JsonLinesLogger:
    """A callback that appends each ``DrawsEvent`` to ``path`` as one line of JSON
    (``DrawsEvent.to_plain``); ``observables=False`` leaves their values out (large ones, the
    per-sample losses, make long lines). Read back with
    ``[json.loads(line) for line in open(path)]``."""

    def __init__(self, path: str | Path, *, observables: bool = True) -> None:
        self.path, self.observables = Path(path), observables

    def __call__(self, event: DrawsEvent) -> None:
        row = event.to_plain()
        if not self.observables:
            row.pop("observables")
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row, allow_nan=True) + "\n")
