"""Optional trace plots (``matplotlib``, the ``plots`` extra)."""

from __future__ import annotations

from typing import Any

import numpy as np

from numeric.errors import InvalidInputError
from numeric.result.llc_estimate import LLCEstimate


def plot_trace(est: LLCEstimate, *, ax: Any = None) -> Any:
    """nβ·(L_B(w_t) − L_B(w*)) per chain (left) and its running mean with λ̂ ± stderr (right)."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))
    else:
        fig = ax[0].figure
    x = est.delta_trace * est.nbeta
    for c in range(x.shape[0]):
        ax[0].plot(x[c], lw=0.6, alpha=0.7)
        ax[1].plot(np.cumsum(x[c]) / np.arange(1, x.shape[1] + 1), lw=0.8)
    ax[0].set(xlabel="draw", ylabel="nβ·(L − L(w*))", title="traces")
    ax[1].axhline(est.mean, color="k", lw=1)
    ax[1].axhspan(est.mean - est.stderr, est.mean + est.stderr, color="k", alpha=0.15)
    ax[1].set(xlabel="draw", ylabel="running mean", title=f"λ̂ = {est.mean:.3g} ± {est.stderr:.2g}")
    fig.tight_layout()
    return fig


def plot_series(series: Any, *, ax: Any = None, exact: Any = None) -> Any:
    """λ̂ ± 2·stderr at each checkpoint of an ``LLCSeries`` against its steps (or positions);
    estimates with an error finding hollow, checkpoints whose estimate failed (``on_error=
    "record"``) as crosses on the axis; ``exact``: a value or one per checkpoint, dashed."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 3.5))
    else:
        fig = ax.figure
    x, y, e = series.x, series.means, 2 * series.stderrs
    failed = np.array([est is None for est in series.estimates], dtype=bool)
    bad = np.array([w == "error" for w in series.worst], dtype=bool) & ~failed
    ax.errorbar(x, y, yerr=e, fmt="-", color="C0", lw=1, capsize=2, zorder=1)
    good = ~bad & ~failed
    if good.any():
        ax.scatter(x[good], y[good], color="C0", zorder=2, label="λ̂ ± 2·stderr")
    if bad.any():
        ax.scatter(
            x[bad], y[bad], facecolors="none", edgecolors="C3", zorder=2,
            label="λ̂ with an error finding",
        )  # fmt: skip
    if failed.any():  # no λ̂: marked on the axis, at the bottom of the plot
        ax.scatter(
            x[failed], np.full(int(failed.sum()), 0.03), marker="x", color="C3", zorder=3,
            transform=ax.get_xaxis_transform(), clip_on=False, label="estimate failed",
        )  # fmt: skip
    if exact is not None:
        ax.plot(x, _exact_line(exact, x.shape), "k--", label="λ")
    has_steps = all(s is not None for s in series.steps)
    ax.set(xlabel="step" if has_steps else "checkpoint", ylabel="LLC", title="λ̂ along training")
    ax.legend()
    fig.tight_layout()
    return fig


def _exact_line(exact: Any, shape: tuple[int, ...]) -> np.ndarray:
    """λ at each checkpoint from a number, one per checkpoint, or results with ``.lam`` (an
    ``rlct.RLCT``)."""
    items = exact if isinstance(exact, (list, tuple, np.ndarray)) else [exact]
    values = [float(getattr(v, "lam", v)) for v in items]
    if len(values) not in (1, shape[0]):
        raise InvalidInputError(
            f"exact has {len(values)} values for {shape[0]} checkpoints: give one, or one each"
        )
    return np.broadcast_to(np.asarray(values, dtype=float), shape)
