"""Chains whose spread is known: made-up ‖w − w*‖² records, and a deep linear network whose
chains spread along its orbit (the tests of numeric.findings.spreading and
numeric.draws.burn_in_extension)."""

from __future__ import annotations

import numpy as np

import numeric
from verification.experiments.dln import dln_estimate
from verification.experiments.teachers import dln_teacher


def spreads(rise: float, *, t: int = 400, c: int = 4, noise: float = 0.02, seed: int = 0):
    """‖w − w*‖² [T, C]: the line 1 + rise·s, s from 0 to 1 over the draws, times independent
    relative noise of size ``noise`` in every chain."""
    rng = np.random.default_rng(seed)
    line = 1.0 + rise * np.linspace(0.0, 1.0, t)[:, None]
    return line * (1.0 + noise * rng.standard_normal((t, c)))


def dln_868(**estimator) -> numeric.LLCEstimate:
    """The two-layer deep linear network 8-6-8 at its true parameter of full rank (n = 2,000,
    noise-free): 36 directions of the GL(6) orbit are flat at w*, held by γ alone, and the
    curvature changes along them."""
    _, est = dln_estimate(dln_teacher((8, 6, 8), 6, 0), 2000, num_chains=4, seed=0, **estimator)
    return est
