"""The findings every run gets, from the draws' traces: ``summarise_chains`` turns them into λ̂'s
statistics (``numeric.stats.chain_stats``) with the divergence findings and the standard ones
(below-reference loss, mixing, drift: ``standard_findings``, worded in
``numeric.findings.checks``). Each estimator then adds its own findings, in its own order."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from numeric.findings.checks import (
    check_below_reference,
    check_drift,
    check_mixing,
    divergence_findings,
)
from numeric.stats.chain_stats import ChainStats, chain_stats
from numeric.stats.observable import references
from numeric.types import Finding, Trace


def standard_findings(delta: np.ndarray, nbeta: float, st: ChainStats) -> tuple[Finding, ...]:
    return (
        check_below_reference(delta, nbeta, st.stderr)
        + check_mixing(
            st.per_chain, np.full(st.per_chain.size, st.chain_mean_stderr), st.rhat, st.ess
        )
        + check_drift(delta, nbeta)
    )


class ChainSummary(NamedTuple):
    """The draws' traces as numbers: what ``LLCEstimate`` reports and the findings every run gets."""

    stats: ChainStats
    loss: np.ndarray  # [C, T] L_B(w_t), every chain (diverged ones included)
    ref: np.ndarray  # [C, T] L_B(w*) + ĉ·ℓ_t (numeric.stats.observable)
    delta: np.ndarray  # [C', T] loss − ref of the live chains
    alive: np.ndarray  # [C] bool
    divergence: tuple[Finding, ...]  # chains that diverged (raises if all did)
    standard: tuple[Finding, ...]  # below-reference loss, mixing, drift
    linear_coefficient: float = 0.0  # ĉ of numeric.stats.observable (0: ℓ not recorded)


def summarise_chains(
    trace: Trace, alive: np.ndarray, nbeta: float, step_size: float
) -> ChainSummary:
    """Statistics of nβ·(L_B(w_t) − R_t) over the live chains (R_t = L_B(w*) + ĉ·ℓ_t,
    ``numeric.stats.observable``), and their findings."""
    loss, ref, c = references(trace, alive)
    divergence = divergence_findings(alive, step_size, nbeta)
    delta = (loss - ref)[alive]
    st = chain_stats(delta, nbeta)
    return ChainSummary(
        st, loss, ref, delta, alive, divergence, standard_findings(delta, nbeta, st), c
    )
