r"""Whether the chains settled around a point other than w* (``check_off_centre``).

The chains sample p(w) ∝ exp(−nβ·L_n(w) − (γ/2)‖w − w*‖² − (α/2)‖w‖²). Where L_n near w* is
even about w* (a quadratic, a normal crossing at w*, a deep linear network's orbits through
w*, on average) the posterior mean E[w] is w*, up to the prior's pull toward 0 along the
directions the loss does not hold, at most α‖w*‖/(γ + α). Where the zero set of L_n runs from
w* to a more singular point within the localisation's reach ~1/√(γ + α), the posterior's mass
moves there as nβ grows (the volume of {L_n < t} near a point scales as t^λ), and λ̂ tends to
that point's λ, not w*'s, with no other finding to say so: f(x) = v·(wᵀx)² at w = 0 ∈ R³,
v = 1 has λ = 3/4, the point v = 0 one unit along the zero set w = 0 has λ = 1/2, and at
n = 10⁶, γ = 1 the estimate on its loss reads 0.48 ± 0.01 with the chains' mean at v ≈ 0 (at
γ = 100 it stays at w* and reads 0.71 ± 0.01).

The statistic: μ_c, chain c's mean of w − w* over the draws' evaluation points (``CentreSum``),
and T = mean over pairs c ≠ c' of ⟨μ_c, μ_c'⟩, an unbiased estimate of ‖E[μ_c]‖² for
independent chains (‖μ̄‖² less the chains' own scatter, which in many flat directions is
large), with the leave-one-chain-out jackknife's standard error s. The centre lies
d = (√T − α‖w*‖/(γ + α))·√(γ + α) localisation lengths from w* (the prior's largest pull taken
off); the ``off_centre`` warning comes from d ≥ ``LENGTHS`` at T/s ≥ ``SIGNIFICANT``, with at
least ``MIN_CHAINS`` chains. Measured (``benchmarks/RESULTS.md``): the quadratic network above
d = 0.99 (z = 58) at γ = 1 and 0 at γ = 100; K = w₀²w₁², x²y⁴, a regular K and three deep linear
networks at their true parameters d ≤ 1.0 at z ≤ 2.5; the README's trained tanh network d = 0.38
(z = 1.2) at γ = 100 and d = 5.4 (z = 20) at γ = 1, where its chains wander far from w*.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from numeric.types import Finding

LENGTHS = 0.5  # the centre's distance from w* in localisation lengths 1/√(γ + α)
SIGNIFICANT = 3.0  # and T over its jackknife standard error
MIN_CHAINS = 3  # a jackknife over chains needs three


class CentreSum:
    """Σ (w − w*) per chain [C, D] over the offsets ``add`` is given, and their count."""

    def __init__(self) -> None:
        self.total: Tensor | None = None
        self.count = 0

    def add(self, offset: Tensor) -> None:
        """Count the chains' offsets w − w* [C, D] (the caller's tensor is not changed)."""
        offset = offset.detach()
        self.total = offset.clone() if self.total is None else self.total.add_(offset)
        self.count += 1

    def mean(self) -> Tensor | None:
        """μ_c [C, D], or None where nothing was added."""
        return None if self.total is None else self.total / self.count


def centre_offset(means: np.ndarray) -> tuple[float, float]:
    """(T, s): the unbiased ‖E[μ_c]‖² from chain means ``means`` [C, D] (float64 Gram matrix)
    and its jackknife standard error over chains (module docstring); s is nan below
    ``MIN_CHAINS`` chains."""
    mu = np.asarray(means, dtype=np.float64)
    c = mu.shape[0]
    if c < 2:
        return math.nan, math.nan
    gram = mu @ mu.T
    off = gram.sum() - np.trace(gram)  # Σ_{c ≠ c'} ⟨μ_c, μ_c'⟩
    t = float(off / (c * (c - 1)))
    if c < MIN_CHAINS:
        return t, math.nan
    row = gram.sum(axis=1) - np.diag(gram)  # Σ_{c' ≠ c} ⟨μ_c, μ_c'⟩
    loo = (off - 2 * row) / ((c - 1) * (c - 2))
    return t, float(math.sqrt((c - 1) / c * float(np.square(loo - loo.mean()).sum())))


def check_off_centre(
    means: Tensor | None,
    alive: np.ndarray | None,
    w_star: Tensor,
    gamma: float,
    prior: float,
) -> tuple[Finding, ...]:
    """The ``off_centre`` warning (module docstring) from the live chains' means ``means``
    [C, D] of w − w* (``alive`` [C] bool; None: all); ``gamma``, ``prior``: γ and α. Nothing
    where γ + α = 0 (no localisation length) or fewer than ``MIN_CHAINS`` chains are alive."""
    floor = gamma + prior
    if means is None or not floor > 0:
        return ()
    if alive is not None:
        means = means[torch.as_tensor(np.asarray(alive, dtype=bool), device=means.device)]
    if means.shape[0] < MIN_CHAINS:
        return ()
    mu = means.double().cpu().numpy()
    if not np.isfinite(mu).all():
        return ()
    t, s = centre_offset(mu)
    pull = prior * float(w_star.double().norm()) / floor
    distance = math.sqrt(max(t, 0.0))
    lengths = (distance - pull) * math.sqrt(floor)
    z = t / s if s > 0 else (math.inf if t > 0 else 0.0)
    if not (lengths >= LENGTHS and z >= SIGNIFICANT):
        return ()
    scale = 1 / math.sqrt(floor)
    base = gamma if gamma > 0 else floor
    prior_note = f", after the prior's pull toward 0 of at most {pull:.3g}" if pull > 0 else ""
    return (
        Finding(
            "off_centre",
            "warning",
            f"the chains settled around a point other than w*: the mean of w − w* is "
            f"{distance:.3g} from w* (z = {z:.1f} over {mu.shape[0]} chains), "
            f"{lengths:.2g} localisation lengths 1/√(γ + α) = {scale:.3g}{prior_note}. Where the "
            "zero set of the loss runs from w* to a more singular point the localisation reaches, "
            "the posterior's mass moves there as nβ grows and λ̂ tends to that point's λ, not w*'s. "
            f"Estimate again at gamma = {10 * base:g} and {100 * base:g}: where λ̂ moves with "
            "γ, the larger γ's value is w*'s own",
            {"distance": distance, "lengths": lengths, "z": z, "scale": scale, "gamma": gamma},
        ),
    )
