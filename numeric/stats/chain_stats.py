"""λ̂'s statistics over a [chain, draw] array of losses: ``chain_stats`` (per-chain means, the
error of the mean, ESS, R-hat) and ``full_data_estimate`` (the same for the full-data losses,
``FullDataLLC``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from numeric.stats.diagnostics import chain_mean_stderr, ess, split_rhat


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


def full_data_estimate(
    losses: tuple, alive: np.ndarray, init_loss: float, nbeta: float
) -> FullDataLLC | None:
    """The estimate from full-data losses L_n(w_t) [C, T_full] (None when none were taken)."""
    if not losses:
        return None
    ft = torch.stack(list(losses), 1).double().cpu().numpy()[alive]
    fst = chain_stats(ft - init_loss, nbeta)
    return FullDataLLC(
        fst.mean,
        fst.std,
        fst.stderr,
        fst.per_chain,
        ft,
        ess(ft) if ft.shape[1] >= 4 else float(ft.size),
    )
