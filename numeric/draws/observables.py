r"""Observables at the draws: functions of the chains' positions recorded where the full loss is
evaluated (``numeric.draws.sample``), kept on ``LLCEstimate.observables`` as arrays
[chain, draw, ...].

An **observable** is a pure function of the positions w [C, D] (the flat parameters, chains on the
leading axis, in ``ParamSpec`` order) that returns a tensor [C, ...], vectorised over the chains.
It must draw no random numbers from the run and change no state: the chains' trajectory is then
the same with and without it, bit for bit. It is evaluated at every full-loss evaluation (every
``full_loss_every`` steps of the draws: ``LLCEstimate.config.full_loss_every``), so row t of
each array is the chains at the same step as ``full_data.loss_trace[:, t]``; with ``max_draws``
an observable keeps at most that many rows, at evaluations 0, s, 2s, … (s doubled each time the
rows would exceed the budget; its draw axis is then its own).

Built-ins that need the model and the data are **bindable**: ``bind(problem)`` returns the
function (``per_sample_losses``: ℓ_i(w) for every sample, for WAIC and the singular fluctuation,
``numeric.result.fluctuation``). ``positions`` keeps the positions themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
from torch import Tensor
from torch.func import vmap

from numeric.errors import InvalidInputError
from numeric.inputs.data import take
from numeric.inputs.problem import Problem

__all__ = [
    "BoundObservable",
    "Observable",
    "ObservableRecorder",
    "PerSampleLosses",
    "Positions",
    "bind_observables",
    "per_sample_losses",
    "positions",
]

ROWS_PER_CALL = 65_536  # chain·sample pairs per vmapped call of the per-sample losses


class Observable(Protocol):
    """positions [C, D] → values [C, ...], vectorised over chains, drawing nothing random."""

    def __call__(self, positions: Tensor) -> Tensor: ...


def _check_budget(name: str, max_draws: Any) -> None:
    if max_draws is not None and not (
        isinstance(max_draws, int) and not isinstance(max_draws, bool) and max_draws >= 2
    ):
        raise InvalidInputError(
            f"{name}: max_draws must be an int ≥ 2 (or None), got {max_draws!r}"
        )


@dataclass(frozen=True)
class Positions:
    """The chains' positions w [C, D] themselves, at most ``max_draws`` rows (None: every
    evaluation)."""

    max_draws: int | None = None
    name: str = "positions"

    def __post_init__(self) -> None:
        _check_budget("positions", self.max_draws)

    def __call__(self, positions: Tensor) -> Tensor:
        return positions.detach().clone()


def positions(max_draws: int | None = None, *, name: str = "positions") -> Positions:
    """The positions [C, D] as an observable, thinned to at most ``max_draws`` rows per chain."""
    return Positions(max_draws, name)


@dataclass(frozen=True)
class PerSampleLosses:
    r"""ℓ_i(w) = ``loss_fn(params(w), sample i)`` for every sample i = 1…n: [C, n] per draw (so
    L_n(w) = mean_i ℓ_i(w)). In the package's convention the tempered posterior is
    ∝ exp(−β·Σ_i ℓ_i(w)), so ℓ_i plays the part of the negative log-likelihood −log p(x_i | w)
    up to a constant (a loss ½(y − f)² is the Gaussian one with σ = 1; (y − f)² has σ² = ½).
    Costs C·n forward passes of one sample per evaluation (vmapped) and keeps C·n numbers a
    row."""

    max_draws: int | None = None
    name: str = "per_sample_loss"

    def __post_init__(self) -> None:
        _check_budget("per_sample_losses", self.max_draws)

    def bind(self, problem: Problem) -> Observable:
        model = problem.model
        one = vmap(model.f, in_dims=(None, 0), randomness="different")  # samples [m, 1, ...]
        each = vmap(one, in_dims=(0, None), randomness="different")  # chains [C, D]
        n, data = model.n, model.data

        def losses(w: Tensor) -> Tensor:
            size = max(1, ROWS_PER_CALL // max(w.shape[0], 1))
            parts = []
            with torch.no_grad():
                for s in range(0, n, size):
                    idx = torch.arange(s, min(s + size, n), device=w.device)[:, None]
                    parts.append(each(w, take(data, idx)))
            return torch.cat(parts, -1)

        return losses


def per_sample_losses(
    max_draws: int | None = None, *, name: str = "per_sample_loss"
) -> PerSampleLosses:
    """Every sample's loss ℓ_i(w) at the draws [C, n] (``PerSampleLosses``), for
    ``numeric.waic``."""
    return PerSampleLosses(max_draws, name)


@dataclass(frozen=True)
class BoundObservable:
    """An observable ready to run: its name, the function and its row budget."""

    name: str
    fn: Callable[[Tensor], Tensor]
    max_draws: int | None = None


def bind_observables(
    observables: Mapping[str, Any] | None, problem: Problem, num_chains: int
) -> tuple[BoundObservable, ...]:
    """The options' observables (``options.as_observables``), bound to ``problem`` where they
    have ``bind``, and tried once at w* for every chain (a wrong shape is refused before the
    run, not after its warm-up)."""
    out = []
    for name, obs in (observables or {}).items():
        bind = getattr(obs, "bind", None)
        fn = bind(problem) if callable(bind) else obs
        budget = getattr(obs, "max_draws", None)
        _check_budget(name, budget)
        out.append(BoundObservable(name, fn, budget))
    if out:
        ObservableRecorder(tuple(out)).values(problem.w_star.expand(num_chains, problem.dim))
    return tuple(out)


class ObservableRecorder:
    """The rows of each observable over one sequence of draws: ``values(w)`` evaluates those
    whose turn it is (every ``stride``-th evaluation), ``keep`` stores them, halving the rows and
    doubling the stride past ``max_draws``; ``arrays()`` gives [C, T, ...] numpy arrays."""

    def __init__(self, bound: tuple[BoundObservable, ...]) -> None:
        self.bound = bound
        self.rows: dict[str, list[Tensor]] = {b.name: [] for b in bound}
        self.strides = {b.name: 1 for b in bound}
        self.evaluations = 0

    def values(self, w: Tensor) -> dict[str, Tensor]:
        """The values at positions ``w`` [C, D] of the observables due at this evaluation."""
        out = {}
        for b in self.bound:
            if self.evaluations % self.strides[b.name]:
                continue
            with torch.no_grad():
                v = b.fn(w)
            if not isinstance(v, Tensor):
                raise InvalidInputError(
                    f"observable {b.name!r} returned {type(v).__name__}: it must return a tensor "
                    "[C, ...]"
                )
            if v.dim() == 0 or v.shape[0] != w.shape[0]:
                raise InvalidInputError(
                    f"observable {b.name!r} returned shape {tuple(v.shape)}: it must return "
                    f"[C, ...] with the C = {w.shape[0]} chains on the leading axis"
                )
            out[b.name] = v.detach()
        return out

    def keep(self, values: dict[str, Tensor]) -> None:
        """Store one evaluation's values (from ``values``) and count it."""
        for b in self.bound:
            if b.name not in values:
                continue
            rows = self.rows[b.name]
            rows.append(values[b.name])
            if b.max_draws is not None and len(rows) > b.max_draws:
                self.rows[b.name] = rows[::2]
                self.strides[b.name] *= 2
        self.evaluations += 1

    def arrays(self, num_chains: int) -> dict[str, np.ndarray]:
        """Each observable's rows as [C, T, ...] ([C, 0] where none was taken)."""
        return {
            name: torch.stack(rows, 1).cpu().numpy() if rows else np.zeros((num_chains, 0))
            for name, rows in self.rows.items()
        }
