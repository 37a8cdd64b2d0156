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
3. For each low probe (the ``MAX_LOW`` farthest from where the chains were), L_n on
   ``SEGMENT_POINTS`` points of the path (the segment, each point then relaxed down U across the
   segment's direction, so that a curved valley, such as a linear network's set of zero loss,
   is followed rather than cut through)
   from the nearest place the chains were (their positions at the full-loss evaluations and at
   the end, and w*) to the probe: a barrier higher than the larger of the two levels by
   ``BARRIER`` (a density ratio of e^-10) means the probe lies in a region the chains did not
   reach.

Before step 2 each probe descends the localised potential U(w) = nβ·(L_n(w) − L_n(w*)) +
((γ + α)/2)·‖w − w*‖² (``DESCENT_STEPS`` gradient steps, each backtracked per probe, where their
work, probes × rows × parameters × steps, is at most ``DESCENT_WORK``): a raw probe rarely lands
in a narrow basin (a second basin of width 0.02 at distance 1 was hit by 32 probes about half the
time), a probe that descends finds it wherever its catchment holds one of them. The calibration
battery (``verification.calibration``) has two-basin cases whose localised posterior puts most
of its mass in the basin the chains did not reach: λ̂ read 0.49-1.01 against targets of
0.22-0.32, with this finding a warning on 2 of 4 and silent on the other two.

Severity: an error where the unreached region holds mass the estimate leaves out: its lowest
found U is below w*'s (a deeper basin), or it lies at a level the chains sample (U at most their
``LIKELY_QUANTILE`` percentile) and is flatter than w*'s basin (tr H below ``FLATTER`` of w*'s:
wider, so more mass at the same level). A warning otherwise: a region at the chains' levels and
of w*'s curvature is most often a mirror image of w*'s own basin (a sign flip of a factor, a
permutation of units), where λ is the same and λ̂ is right; a deep linear network restricted to
two factors found the other sign of its factorisation at a barrier of 407, and read λ exactly. The
finding gives the region's distance from w*, its level, and the barrier; it does not estimate
the region's mass. Its cost: at most ``PROBES + MAX_LOW · SEGMENT_POINTS`` = 64 full-data losses,
batched, and the descent's gradients where they fit ``DESCENT_WORK``.

``reach_findings`` makes the check for the data estimator (on full-data losses; the descent on
the first ``DESCENT_ROWS`` samples), with the two other checks that read where the chains were:
the loss's rounding (``numeric.findings.rounding``) and the chains' centre
(``numeric.findings.off_centre``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from numeric.findings.off_centre import check_off_centre
from numeric.findings.rounding import check_resolution, check_rounding
from numeric.findings.standard import ChainSummary
from numeric.inputs.data import take
from numeric.inputs.problem import Problem
from numeric.options import LLCOptions, side_seed
from numeric.stats.chain_stats import FullDataLLC
from numeric.types import Draws, Finding

MAX_DIM = 2048
PROBES = 32
MAX_LOW = 4
SEGMENT_POINTS = 8
BARRIER = 10.0  # nβ·ΔL above both ends: a density ratio of e^-10
LEVEL_QUANTILE = 95.0
# an unreached region with U at most this percentile of the chains' U is an error: the region is
# at a level the chains sample, and a flat one holds more mass than its bottom's density says (the
# battery's sextic far basin: U 0.83 at its lowest found point, above the chains' 75th percentile,
# held 55% of the local posterior's mass)
LIKELY_QUANTILE = 95.0
FLATTER = 0.5  # curvature (tr H) below this share of w*'s: a wider basin at the same level
TRACE_PROBES = 8
DESCENT_STEPS = 40  # backtracked gradient steps of each probe down U
DESCENT_WORK = 2**31  # probes × rows × parameters × steps the descent may cost

# delta_at(w [P, D]) -> nβ·(L(w) − L(w*)) [P]
DeltaAt = Callable[[Tensor], Tensor]
# delta_grad(w [P, D]) -> (nβ·(L(w) − L(w*)) [P], its gradient [P, D])
DeltaGrad = Callable[[Tensor], tuple[Tensor, Tensor]]


def autograd_delta(delta_at: DeltaAt) -> DeltaGrad:
    """``DeltaGrad`` of a differentiable ``delta_at`` (a potential K) by reverse mode."""

    def delta_grad(w: Tensor) -> tuple[Tensor, Tensor]:
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            d = delta_at(ww)
            (g,) = torch.autograd.grad(d.sum(), ww)
        return d.detach(), g

    return delta_grad


def descend(
    delta_grad: DeltaGrad,
    points: Tensor,
    w_star: Tensor,
    floor: float,
    steps: int,
    across: Tensor | None = None,
) -> Tensor:
    """``points`` [P, D] after ``steps`` gradient steps down U = delta + (floor/2)‖w − w*‖²,
    each point's step length grown 1.5× after a step that lowered U and cut 4× (the step not
    taken) after one that did not; non-finite values count as not lower. With ``across`` (a
    unit vector [D]) the steps are orthogonal to it: the points keep their place along it."""
    w = points.detach().clone()
    u, g = _u_and_grad(delta_grad, w, w_star, floor, across)
    size = 1.0 / (floor + g.norm(dim=-1).clamp_min(1e-12))
    for _ in range(steps):
        trial = w - size[:, None] * g
        ut, gt = _u_and_grad(delta_grad, trial, w_star, floor, across)
        better = torch.isfinite(ut) & (ut < u)
        w = torch.where(better[:, None], trial, w)
        u, g = torch.where(better, ut, u), torch.where(better[:, None], gt, g)
        size = torch.where(better, size * 1.5, size / 4)
    return w


def _u_and_grad(
    delta_grad: DeltaGrad, w: Tensor, w_star: Tensor, floor: float, across: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    d, g = delta_grad(w)
    off = w - w_star
    g = g + floor * off
    if across is not None:
        g = g - (g @ across)[:, None] * across
    return d + 0.5 * floor * off.square().sum(-1), g


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
    *,
    delta_grad: DeltaGrad | None = None,
    work_per_point: float = 0.0,
) -> tuple[Finding, ...]:
    """The ``unreached_region`` finding (module docstring), or nothing. ``visited``: positions
    [C, D] the chains were at; ``chain_levels``: their nβ·ΔL draws (any shape); ``delta_grad``
    (default: reverse mode through ``delta_at``) and ``work_per_point`` (rows × parameters of
    one evaluation) for the probes' descent."""
    levels = np.asarray(chain_levels, dtype=np.float64).ravel()
    levels = levels[np.isfinite(levels)]
    if not (floor > 0 and w_star.numel() <= MAX_DIM and levels.size and visited):
        return ()
    level = float(np.percentile(levels, LEVEL_QUANTILE))
    probes = probe_points(w_star, floor, seed)
    work = max(work_per_point, float(w_star.numel())) * probes.shape[0] * 2
    steps = min(DESCENT_STEPS, int(DESCENT_WORK // work))
    if steps > 0:
        probes = descend(delta_grad or autograd_delta(delta_at), probes, w_star, floor, steps)
    steps = min(steps, int(DESCENT_WORK // (work * SEGMENT_POINTS / probes.shape[0])) // MAX_LOW)
    with torch.no_grad():
        d = delta_at(probes).double().cpu().numpy()
    places = torch.cat([*visited, w_star[None]]).to(probes)
    # the low probes farthest from where the chains were first: descended probes gather at the
    # bottoms of basins, and those in the chains' own basin (near where they were) are tested last
    away = torch.cdist(probes, places).min(-1).values.double().cpu().numpy()
    low = [i for i in np.argsort(-away) if np.isfinite(d[i]) and d[i] <= level][:MAX_LOW]
    grad = delta_grad or autograd_delta(delta_at)
    for i in low:
        p = probes[i]
        start = places[(places - p).square().sum(-1).argmin()]
        t = torch.linspace(0, 1, SEGMENT_POINTS + 2, dtype=p.dtype, device=p.device)[1:-1, None]
        path = start + t * (p - start)
        if steps > 0 and p.numel() > 1:  # the path relaxed across itself, into any valley
            along = (p - start) / (p - start).norm().clamp_min(1e-300)
            path = descend(grad, path, w_star, floor, steps, across=along)
        with torch.no_grad():
            barrier = float(delta_at(path).max())
        if barrier > max(level, float(d[i])) + BARRIER:
            u_probe = float(d[i]) + 0.5 * floor * float((p - w_star).square().sum())
            places_u = 0.5 * floor * torch.cat(list(visited)).sub(w_star).square().sum(-1)
            u_chains = float(np.percentile(levels, LIKELY_QUANTILE)) + float(
                places_u.quantile(LIKELY_QUANTILE / 100)
            )
            flatter = _flatter(grad, p, w_star, seed)
            likely = u_probe < 0.0 or (u_probe <= u_chains and flatter)
            return (
                _finding(
                    float((p - w_star).norm()), float(d[i]), level, barrier, floor,
                    likely=likely,
                ),
            )  # fmt: skip
    return ()


def _flatter(grad: DeltaGrad, p: Tensor, w_star: Tensor, seed: int) -> bool:
    """tr ∇²(nβ·L) at ``p`` below ``FLATTER`` times its value at w* (Hutchinson with
    ``TRACE_PROBES`` Rademacher vectors, Hessian-vector products by central differences of the
    gradient): a region wider than w*'s basin at the same level holds more mass. A mirror image
    of w*'s basin (a sign flip or permutation of a network's units) has the same curvature."""
    gen = torch.Generator(device=p.device).manual_seed(side_seed(seed))
    v = torch.randint(0, 2, (TRACE_PROBES, p.numel()), generator=gen, device=p.device)
    v = (2 * v - 1).to(p.dtype)
    traces = []
    for point in (p, w_star):
        h = 1e-4 * (1.0 + float(point.abs().max()))
        _, g = grad(torch.cat([point + h * v, point - h * v]))
        traces.append(float(((g[:TRACE_PROBES] - g[TRACE_PROBES:]) * v).sum(-1).mean()) / (2 * h))
    far, here = traces
    return math.isfinite(far) and math.isfinite(here) and far < FLATTER * here


def _finding(
    distance: float, probe: float, level: float, barrier: float, floor: float, *, likely: bool
) -> Finding:
    more = (
        " It is deeper than w*'s basin, or at a level the chains sample and flatter, so it holds "
        "a share of the local posterior comparable to theirs or larger: λ̂ cannot be used as "
        "it is."
        if likely
        else ""
    )
    return Finding(
        "unreached_region",
        "error" if likely else "warning",
        f"the local posterior has a region the chains did not reach: at distance "
        f"{distance:.3g} from w* (inside the localisation, whose scale is 1/√(γ + α) = "
        f"{1 / math.sqrt(floor):.3g}) nβ·(L_n − L_n(w*)) is {probe:.3g}, no higher than where the "
        f"chains sample ({level:.3g}, 95th percentile), behind a barrier of {barrier:.3g} from "
        "the nearest place they were. λ̂ describes w*'s basin only; if the other region belongs "
        "to the same minimum, run longer or start chains there; if not, raise gamma so that the "
        "localisation excludes it" + more,
        {"distance": distance, "probe_level": probe, "chain_level": level, "barrier": barrier},
    )


def reach_findings(
    problem: Problem,
    opts: LLCOptions,
    drawn: Draws,
    summary: ChainSummary,
    full_data: FullDataLLC | None,
    alive: np.ndarray,
) -> tuple[Finding, ...]:
    """The unreached-region check (``unreached_region``), on full-data losses, whether the chains
    settled around another point (``numeric.findings.off_centre``) and whether λ̂ rests on the
    loss's rounding (``numeric.findings.rounding``)."""
    nbeta, l_star = problem.nbeta, problem.init_loss
    levels = (
        nbeta * (full_data.loss_trace - l_star) if full_data is not None else nbeta * summary.delta
    )
    rounding = check_resolution(summary.stats.mean, nbeta, l_star, problem.w_star.dtype)
    if drawn.visited and not rounding:
        last = drawn.visited[-1][torch.as_tensor(alive, device=drawn.visited[-1].device)]
        rounding = check_rounding(problem, last, summary.stats.mean)
    centre = check_off_centre(drawn.centre, alive, problem.w_star, opts.gamma, opts.prior_precision)
    return (
        rounding
        + centre
        + unreached_region(
            lambda w: nbeta * (problem.model.full_loss(w) - l_star),
            problem.w_star,
            [v[torch.as_tensor(alive, device=v.device)] for v in drawn.visited],
            levels,
            opts.gamma + opts.prior_precision,
            opts.seed,
            delta_grad=_subset_delta(problem),
            work_per_point=float(min(problem.n, DESCENT_ROWS) * problem.dim),
        )
    )


DESCENT_ROWS = 2048  # samples the unreached-region check's descent uses (its ends use all n)


def _subset_delta(problem: Problem) -> Callable[[Tensor], tuple[Tensor, Tensor]]:
    """(nβ·(L_S(w) − L_S(w*)), its gradient) on the first ``DESCENT_ROWS`` samples S: where the
    probes go down (``descend``) a subset finds the basins, at a fraction of the cost."""
    model, nbeta = problem.model, problem.nbeta
    idx = torch.arange(min(problem.n, DESCENT_ROWS), device=problem.w_star.device)
    batch = take(model.data, idx)
    with torch.no_grad():
        ref = model.shared_batch(problem.w_star[None], batch)[0]

    def delta_grad(w: Tensor) -> tuple[Tensor, Tensor]:
        values, grads = [], []
        for s, e in model.blocks(w.shape[0]):  # ``chain_block`` probes at a time, if set
            with torch.enable_grad():
                ww = w[s:e].detach().requires_grad_(True)
                v = model.shared_batch(ww, batch)
                (g,) = torch.autograd.grad(v.sum(), ww)
            values.append(v.detach())
            grads.append(g)
        return nbeta * (torch.cat(values) - ref), nbeta * torch.cat(grads)

    return delta_grad
