"""λ̂'s statistics over a [chain, draw] array of losses: ``chain_stats`` (per-chain means, the
error of the mean, ESS, R-hat), ``full_data_estimate`` (the same for the full-data losses,
``FullDataLLC``), ``full_data_stderr`` (the error bar those losses give a minibatch λ̂) and
``floored`` (a standard error raised to such a floor)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from numeric.stats.diagnostics import chain_mean_stderr, ess, split_rhat

MIN_FULL_EVALUATIONS = 4  # full-data losses per chain from which their error bar is read
# their autocorrelation time, in evaluations, from which that error bar stands for λ̂'s
MIN_FULL_TAU = 2.0


@dataclass(frozen=True, eq=False)  # arrays: compared and hashed by identity
class FullDataLLC:
    """The estimate from full-data losses L_n(w_t) evaluated every ``config.full_loss_every``."""

    mean: float
    std: float
    stderr: float
    per_chain: np.ndarray  # [C]
    loss_trace: np.ndarray  # [C, T_full] L_n(w_t)
    ess: float


@dataclass(frozen=True, eq=False)  # arrays: compared and hashed by identity
class ChainStats:
    mean: float
    std: float
    stderr: float
    per_chain: np.ndarray
    ess: float
    rhat: float
    chain_mean_stderr: float  # one chain's mean, from all chains (diagnostics.chain_mean_stderr)


def chain_stats(delta: np.ndarray, nbeta: float) -> ChainStats:
    """Statistics of nβ·delta over [chain, draw]: per-chain means, the error of the mean, ESS,
    R-hat, and one chain mean's pooled error (for the χ² test of ``check_mixing``)."""
    x = np.asarray(delta, dtype=np.float64)
    c, t = x.shape
    per_chain = nbeta * x.mean(axis=1)
    mean = float(per_chain.mean())
    std = float(per_chain.std(ddof=1)) if c > 1 else float("nan")
    e = ess(x) if t >= 4 else float(x.size)
    sd = float(x.std(ddof=1)) * nbeta if x.size > 1 else float("nan")
    se_ess = sd / math.sqrt(e) if e > 0 else float("nan")
    se_between = std / math.sqrt(c) if c > 1 else float("nan")
    stderr = float(np.nanmax([se_ess, se_between]))
    rhat = split_rhat(x) if (t >= 4 and c * t >= 8) else float("nan")
    return ChainStats(mean, std, stderr, per_chain, e, rhat, nbeta * chain_mean_stderr(x))


def full_trace(losses: Sequence[torch.Tensor], alive: np.ndarray) -> np.ndarray:
    """The full-data losses L_n(w_t), one [C] tensor per evaluation, as [live chain, evaluation]
    in float64."""
    return torch.stack(list(losses), 1).double().cpu().numpy()[alive]


def full_data_estimate(
    losses: tuple, alive: np.ndarray, init_loss: float, nbeta: float
) -> FullDataLLC | None:
    """The estimate from full-data losses L_n(w_t) [C, T_full] (None when none were taken)."""
    if not losses:
        return None
    ft = full_trace(losses, alive)
    fst = chain_stats(ft - init_loss, nbeta)
    return FullDataLLC(
        fst.mean,
        fst.std,
        fst.stderr,
        fst.per_chain,
        ft,
        ess(ft) if ft.shape[1] >= 4 else float(ft.size),
    )


def full_data_stderr(full: np.ndarray | None, nbeta: float) -> float:
    r"""The standard error of λ̂ that the full-data losses L_n(w_t) [live chain, evaluation] give
    (``chain_stats``), as a floor under a minibatch λ̂'s: E[L_B(w) − L_B(w*) | w] = L_n(w) −
    L_n(w*), so the minibatch trace is the full-data one plus batch noise, and its mean's error is
    at least the full-data trace's. The batch noise can hide slow movement of L_n from the
    minibatch trace's ESS: on a ReLU 2-3-6-1 at n = 10⁴ (B = 256) the minibatch trace read ESS
    200–1,800 where L_n at the same chains read 12–90, and λ̂ spread 0.58 over 30 seeds against
    a stated 0.44, 5 of 30 at |z| > 3 with no finding; with this floor 1 (benchmarks/RESULTS.md,
    "ReLU minibatch calibration"). nan (no floor) with fewer than ``MIN_FULL_EVALUATIONS``
    evaluations per chain, or where consecutive evaluations are nearly independent (τ below
    ``MIN_FULL_TAU`` evaluations): there the evaluations, every ``full_loss_every`` steps, thin a
    trace that mixes faster than they are taken, and their error overstates λ̂'s by up to
    √(every/τ) (a deep linear network 3-3-3-3, n = 10⁴: 0.237 at τ = 1.4 evaluations against the
    minibatch trace's 0.158). On the full batch the two traces are the same losses, the
    full-data one thinned, and it is not used."""
    if full is None or full.ndim != 2 or full.shape[1] < MIN_FULL_EVALUATIONS:
        return math.nan
    st = chain_stats(full, nbeta)
    if not (st.ess > 0 and full.size / st.ess >= MIN_FULL_TAU):
        return math.nan
    return st.stderr


def floored(st: ChainStats, floor: float) -> ChainStats:
    """``st`` with its standard error raised to ``floor`` where that is larger (nan: as it is)."""
    if math.isfinite(floor) and floor > st.stderr:
        return dataclasses.replace(st, stderr=floor)
    return st
