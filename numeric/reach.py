r"""Does the local posterior have low-loss regions the chains never reached?

Chains start at w* and explore by small steps; where the localised posterior
exp(−nβ·L_n(w) − (γ/2)‖w − w*‖²) has a second region of low loss behind a barrier, they never
see it and λ̂ describes w*'s basin alone, with error bars that look fine (on a two-parameter
model with 80% of the local posterior's mass in such a region the estimates were 3–10 standard
errors too high, with a warning on 3 seeds of 4 and nothing on the fourth).

The check (``unreached_region``), after the draws, for D ≤ ``MAX_DIM`` and γ + α > 0:

1. ``PROBES`` points w_i = w* + ξ_i/√(γ + α), ξ_i ~ N(0, I), drawn from a generator of their own
   (seeded from the run's seed: the chains' random stream is untouched): the localisation's own
   scale, where the local posterior can put mass.
2. nβ·(L_n(w_i) − L_n(w*)) on the full data (K for potentials); a probe is *low* when it is at
   most the level the chains sample at (the 95th percentile of their nβ·ΔL).
3. For each low probe (the lowest ``MAX_LOW``), L_n on ``SEGMENT_POINTS`` points of the segment
   from the nearest place the chains were (their positions at the full-loss evaluations and at
   the end, and w*) to the probe: a barrier higher than the larger of the two levels by
   ``BARRIER`` (a density ratio of e^-10) means the probe lies in a region the chains did not
   reach.

The finding gives the probe's distance from w*, its level, and the barrier; it does not estimate
the region's mass (probes from the localisation Gaussian rarely land in w*'s own, narrow basin,
so importance weights would not be trustworthy). Its cost: at most ``PROBES + MAX_LOW ·
SEGMENT_POINTS`` = 64 full-data losses, batched.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from numeric.findings import Finding
from numeric.options import side_seed

MAX_DIM = 2048
PROBES = 32
MAX_LOW = 4
SEGMENT_POINTS = 8
BARRIER = 10.0  # nβ·ΔL above both ends: a density ratio of e^-10
LEVEL_QUANTILE = 95.0

# delta_at(w [P, D]) -> nβ·(L(w) − L(w*)) [P]
DeltaAt = Callable[[Tensor], Tensor]


def probe_points(w_star: Tensor, floor: float, seed: int, count: int = PROBES) -> Tensor:
    """``count`` points w* + ξ/√(γ + α) [count, D] from the side stream ``side_seed(seed)``."""
    gen = torch.Generator(device=w_star.device).manual_seed(side_seed(seed))
    xi = torch.randn(
        (count, w_star.numel()), generator=gen, device=w_star.device, dtype=w_star.dtype
    )
    return w_star + xi / math.sqrt(floor)


def unreached_region(
    delta_at: DeltaAt,
    w_star: Tensor,
    visited: Sequence[Tensor],
    chain_levels: np.ndarray,
    floor: float,
    seed: int,
) -> tuple[Finding, ...]:
    """The ``unreached_region`` finding (module docstring), or nothing. ``visited``: positions
    [C, D] the chains were at; ``chain_levels``: their nβ·ΔL draws (any shape)."""
    levels = np.asarray(chain_levels, dtype=np.float64).ravel()
    levels = levels[np.isfinite(levels)]
    if not (floor > 0 and w_star.numel() <= MAX_DIM and levels.size and visited):
        return ()
    level = float(np.percentile(levels, LEVEL_QUANTILE))
    probes = probe_points(w_star, floor, seed)
    with torch.no_grad():
        d = delta_at(probes).double().cpu().numpy()
    low = [i for i in np.argsort(d) if np.isfinite(d[i]) and d[i] <= level][:MAX_LOW]
    places = torch.cat([*visited, w_star[None]]).to(probes)
    for i in low:
        p = probes[i]
        start = places[(places - p).square().sum(-1).argmin()]
        t = torch.linspace(0, 1, SEGMENT_POINTS + 2, dtype=p.dtype, device=p.device)[1:-1, None]
        with torch.no_grad():
            barrier = float(delta_at(start + t * (p - start)).max())
        if barrier > max(level, float(d[i])) + BARRIER:
            return (_finding(float((p - w_star).norm()), float(d[i]), level, barrier, floor),)
    return ()


def _finding(distance: float, probe: float, level: float, barrier: float, floor: float) -> Finding:
    return Finding(
        "unreached_region",
        "warning",
        f"the local posterior has a region the chains did not reach: at distance "
        f"{distance:.3g} from w* (inside the localisation, whose scale is 1/√(γ + α) = "
        f"{1 / math.sqrt(floor):.3g}) nβ·(L_n − L_n(w*)) is {probe:.3g}, no higher than where the "
        f"chains sample ({level:.3g}, 95th percentile), behind a barrier of {barrier:.3g} from "
        "the nearest place they were. λ̂ describes w*'s basin only; if the other region belongs "
        "to the same minimum, run longer or start chains there; if not, raise gamma so that the "
        "localisation excludes it",
        {"distance": distance, "probe_level": probe, "chain_level": level, "barrier": barrier},
    )
