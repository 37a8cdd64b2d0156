"""The result of ``estimate_llc_series``: one ``LLCEstimate`` per checkpoint, as a typed series.

``records()`` gives one flat row per checkpoint (``pandas.DataFrame(series.records())``),
``to_dict()`` the whole series as plain data, ``plot()`` λ̂ ± 2·stderr along training.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from numeric.findings.checks import worst_severity
from numeric.result.llc_estimate import LLCEstimate
from numeric.types import Finding

__all__ = ["LLCSeries"]


@dataclass(frozen=True)
class LLCSeries:
    """λ̂ at each checkpoint of a training run.

    ``labels``/``steps``: the checkpoints' names and training steps (None where not known);
    ``seeds``: the seed each estimate used (``seed + index``); ``estimates``: one ``LLCEstimate``
    per checkpoint, None where the estimate failed and ``on_error="record"`` kept the message in
    ``errors``; ``free_params``: the parameters the chains moved, ``frozen_params`` the entries
    held at each checkpoint's values (a restriction's frozen parameters, a module's buffers).
    """

    labels: tuple[str, ...]
    steps: tuple[int | None, ...]
    seeds: tuple[int, ...]
    estimates: tuple[LLCEstimate | None, ...]
    errors: tuple[str | None, ...]
    free_params: tuple[str, ...]
    frozen_params: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def means(self) -> np.ndarray:
        """λ̂ per checkpoint (NaN where the estimate failed)."""
        return self._field("mean")

    @property
    def stderrs(self) -> np.ndarray:
        """Standard error of λ̂ per checkpoint (NaN where the estimate failed)."""
        return self._field("stderr")

    @property
    def ess(self) -> np.ndarray:
        return self._field("ess")

    @property
    def findings(self) -> tuple[tuple[Finding, ...], ...]:
        """Each checkpoint's findings (empty where the estimate failed: see ``errors``)."""
        return tuple(() if e is None else e.diagnostics for e in self.estimates)

    @property
    def worst(self) -> tuple[str, ...]:
        """Per checkpoint the most severe finding: "none", "info", "warning" or "error" (a failed
        estimate counts as "error")."""
        return tuple(_worst(e) for e in self.estimates)

    @property
    def x(self) -> np.ndarray:
        """The steps when every checkpoint has one, else the positions 0, 1, …"""
        if all(s is not None for s in self.steps):
            return np.array(self.steps, dtype=np.int64)
        return np.arange(len(self), dtype=np.int64)

    def _field(self, name: str) -> np.ndarray:
        return np.array([math.nan if e is None else getattr(e, name) for e in self.estimates])

    def records(self) -> list[dict[str, Any]]:
        """One flat dict per checkpoint (plain Python scalars and strings): label, step, seed,
        λ̂, its errors and diagnostics, the run's settings and its findings ("code (severity);
        …") and worst severity, and the error message of a failed estimate."""
        return [
            _record(label, step, seed, est, err)
            for label, step, seed, est, err in zip(
                self.labels, self.steps, self.seeds, self.estimates, self.errors
            )
        ]

    def to_dict(self, *, traces: bool = False) -> dict[str, Any]:
        """Plain data (``json.dumps``-able): the checkpoints' labels, steps and seeds, the
        parameter names, each estimate's ``to_dict(traces=traces)`` (None where it failed) and
        the errors."""
        return {
            "labels": list(self.labels),
            "steps": list(self.steps),
            "seeds": list(self.seeds),
            "free_params": list(self.free_params),
            "frozen_params": list(self.frozen_params),
            "estimates": [None if e is None else e.to_dict(traces=traces) for e in self.estimates],
            "errors": list(self.errors),
        }

    def plot(self, *, ax: Any = None, exact: Any = None) -> Any:
        """λ̂ ± 2·stderr along training (``numeric.result.plots.plot_series``; needs matplotlib)."""
        from numeric.result.plots import plot_series

        return plot_series(self, ax=ax, exact=exact)

    def __str__(self) -> str:
        head = f"{'checkpoint':>12}  {'step':>8}  {'LLC':>10}  {'stderr':>8}  {'ESS':>6}  worst"
        lines = [head]
        for r in self.records():
            step = "" if r["step"] is None else str(r["step"])
            lines.append(
                f"{r['label']:>12}  {step:>8}  {r['llc']:>10.4g}  {r['stderr']:>8.2g}  "
                f"{r['ess']:>6.0f}  {r['worst']}"
                + (f": {r['findings']}" if r["findings"] else "")
                + (f" ({r['error']})" if r["error"] else "")
            )
        return "\n".join(lines)


def _worst(est: LLCEstimate | None) -> str:
    if est is None:
        return "error"
    return worst_severity(est.diagnostics)


def _record(
    label: str, step: int | None, seed: int, est: LLCEstimate | None, error: str | None
) -> dict[str, Any]:
    nan = math.nan
    row: dict[str, Any] = {"label": label, "step": step, "seed": seed}
    if est is None:
        keys = ("llc", "stderr", "std", "ess", "rhat", "nbeta", "init_loss", "full_data_llc")
        row.update(dict.fromkeys(keys, nan))
        row.update(num_params=None, step_size=nan, num_burnin=None, num_draws=None)
        row.update(findings="", worst="error", error=error)
        return row
    c = est.config
    row.update(
        llc=est.mean,
        stderr=est.stderr,
        std=est.std,
        ess=est.ess,
        rhat=est.rhat,
        nbeta=est.nbeta,
        init_loss=est.init_loss,
        full_data_llc=est.full_data.mean if est.full_data is not None else nan,
        num_params=c.num_params,
        step_size=c.step_size,
        num_burnin=c.num_burnin,
        num_draws=c.num_draws,
        findings="; ".join(f"{f.code} ({f.severity})" for f in est.diagnostics),
        worst=_worst(est),
        error=None,
    )
    return row
