"""MALA's step size: Nesterov dual averaging of log ε toward a mean acceptance (Hoffman & Gelman
2014), for the potential estimator's warm-up (``numeric.potential.warmup``) and the HMC reference
(``numeric.potential.hmc``)."""

from __future__ import annotations

import math
from typing import NamedTuple


class DualAveraging(NamedTuple):
    """Nesterov dual averaging of log ε toward a mean acceptance (Hoffman & Gelman 2014)."""

    mu: float  # log 10ε₀
    hbar: float = 0.0
    log_eps_bar: float = 0.0
    t: int = 0

    @staticmethod
    def start(step_size: float) -> DualAveraging:
        return DualAveraging(math.log(10 * step_size))

    def update(self, accept: float, target: float) -> tuple[DualAveraging, float]:
        """The state after one more acceptance, and the next ε."""
        t0, gam, kap = 10.0, 0.05, 0.75
        t = self.t + 1
        hbar = (1 - 1 / (t + t0)) * self.hbar + (target - accept) / (t + t0)
        log_eps = self.mu - math.sqrt(t) / gam * hbar
        w = t**-kap
        log_eps_bar = w * log_eps + (1 - w) * self.log_eps_bar
        return DualAveraging(self.mu, hbar, log_eps_bar, t), math.exp(log_eps)

    @property
    def final(self) -> float:
        return math.exp(self.log_eps_bar)
