r"""Warm-up and draws of the potential estimator (``estimate_llc_potential``).

Rules (recorded in ``LLCEstimate.config``):

* **Step size**: MALA starts at ε = 1/κ (κ = nβ·|λ_max ∇²K(w*)| + γ + α, power iteration) and
  adapts log ε by dual averaging (Hoffman & Gelman: μ = log 10ε₀, t₀ = 10, γ = 0.05, κ = 0.75)
  toward mean acceptance ``TARGET_ACCEPT`` = 0.8 for ``MALA_ADAPT_STEPS`` steps (higher than the
  d → ∞ optimum 0.574: singular targets have curvature that varies by orders of magnitude, and a
  smaller ε mixes far better there); unadjusted Langevin uses ε = ``step_scale``/κ with κ
  re-measured where the chains go (``warmup.step_size.adapt_step_size``).
* **Position-dependent steps** (``metric``): one ε cannot fit a singular K: on K = w1²w2² the
  curvature across an axis is 2nβ·w1², ~10⁴ at |w1| = 2, while along it it is O(1), so MALA with
  the ε that the stiff places allow creeps along the axes (ESS of w1² 10–150 in 8 × 2,000 draws,
  single estimates off by up to 4.6 standard errors). So, after adaptation, a ``PILOT_STEPS``
  MALA pilot measures the ESS of (w_i − w*_i)² per draw; below ``PILOT_MIN_ESS_PER_DRAW`` (τ > 20
  steps; d ≤ ``MAX_METRIC_DIM``, γ + α > 0) every MALA step is followed by a position-dependent
  one (``target.MetricTransition``). The pilot turned them on for w1²w2², w1²w2⁴,
  w1²w2⁶ and w1²w2²w3² and off for w², w⁴, w⁶, x⁴+y⁶, x⁴+x²y²+y⁶ and a shifted quadratic (12
  seeds each, ``benchmarks/bench_potential_calibration.py``); an iteration with them costs about
  2.4× one without (1.0 ms against 0.42 ms for d = 2, 8 chains).
* **Burn-in** then continues in blocks until stationary (``warmup.burn_in.burn_in_blocks``);
  **draws** target ESS ≈ 1000 (at least 2000 per chain: potentials are cheap), and when chosen
  automatically are extended (up to ``MAX_POTENTIAL_DRAWS`` per chain) until the ESS of the
  positions (w_i − w*_i)² per coordinate (‖w − w*‖² beyond ``MAX_TRACKED_COORDS`` parameters)
  reaches ``POSITION_TARGET_ESS``: the loss trace can mix while the positions do not.
"""

from __future__ import annotations

import math

import torch

from numeric.backend.memory import require_memory
from numeric.draws.sample import draws_from_tail
from numeric.draws.stopping_rule import draws_until_mixed
from numeric.errors import InvalidInputError
from numeric.findings.off_centre import CentreSum
from numeric.findings.unreached_region import MAX_DIM
from numeric.options import PotentialOptions
from numeric.potential.target import METRIC_STEP_RANGE, MetricTransition
from numeric.sampler.chains import Chains, stepwise_block
from numeric.stats.diagnostics import direction_ess
from numeric.types import Draws, Finding, Trace, Tuning, Warmup
from numeric.warmup.burn_in import burn_in_blocks
from numeric.warmup.curvature import Curvature
from numeric.warmup.dual_averaging import DualAveraging
from numeric.warmup.step_size import adapt_step_size

MALA_ADAPT_STEPS = 500
UNADJUSTED_ADAPT_STEPS = 128
TARGET_ACCEPT = 0.8
MAX_TRACKED_COORDS = 16  # mixing measured per coordinate up to this many parameters
POSITION_TARGET_ESS = 800.0  # automatic draws are extended toward this ESS of the positions
MAX_POTENTIAL_DRAWS = 20_000  # per chain, the most that extension adds up to
# position-dependent steps by default up to this many parameters (1 + 2d gradients per Hessian)
MAX_METRIC_DIM = 8
PILOT_STEPS = 200  # MALA steps after adaptation whose positions decide whether to add the metric
PILOT_MIN_ESS_PER_DRAW = 0.05  # below this (τ > 20 steps) the position-dependent step is added
SNAPSHOTS = 16  # chain positions kept per batch of draws, for numeric.findings.unreached_region


def dual_averaging(
    chains: Chains, tuning: Tuning, steps: int, accept: MetricTransition | object
) -> Tuning:
    """``steps`` MALA steps, adapting ε toward ``TARGET_ACCEPT`` after each (the meter of the
    chains' transition, ``accept.meter.last``); the averaged ε at the end."""
    state = DualAveraging.start(tuning.step_size)
    for _ in range(steps):
        chains.advance(1, tuning)
        state, eps = state.update(float(accept.meter.last.mean()), TARGET_ACCEPT)
        tuning = tuning._replace(step_size=eps)
    return tuning._replace(step_size=state.final)


def pilot_creeps(chains: Chains, tuning: Tuning, pilot: int) -> tuple[bool | None, str]:
    """Whether plain MALA moves the positions too slowly: ESS of (w_i − w*_i)² per draw over a
    ``pilot``-step run below ``PILOT_MIN_ESS_PER_DRAW``; None when there is no room for a pilot."""
    if pilot < 50:
        return None, "no room in num_burnin for a pilot"
    tr = chains.advance(pilot, tuning, track_obs=True)
    alive = chains.alive.cpu().numpy()
    pos_ess = direction_ess(tr.obs.double().cpu().numpy()[alive])
    per_draw = pos_ess / (int(alive.sum()) * pilot)
    slow = not (math.isfinite(per_draw) and per_draw >= PILOT_MIN_ESS_PER_DRAW)
    return slow, (
        f"a {pilot}-step MALA pilot gave position ESS {per_draw:.3f} per draw "
        f"({'<' if slow else '≥'} {PILOT_MIN_ESS_PER_DRAW:g})"
    )


def creeping_finding(why: str, d: int, floor: float, *, asked_off: bool) -> Finding:
    """Warning: plain MALA creeps and no position-dependent steps were taken."""
    if floor <= 0:
        fix = "they need γ + α > 0, the floor of their metric"
    elif asked_off:
        fix = "pass metric=None (the default) or metric=True"
    else:
        fix = f"they are on by default only up to {MAX_METRIC_DIM} parameters: pass metric=True"
    return Finding(
        "plain_mala_creeps",
        "warning",
        f"{why}: plain MALA creeps along flat directions, and position-dependent steps were not "
        f"used; {fix}. Regions no chain reaches are invisible to ESS and R-hat: on K = w1²w2⁴ "
        "such runs of 20,000 draws were off by up to 7 standard errors, most with no other finding",
        {"position_ess_per_draw_threshold": PILOT_MIN_ESS_PER_DRAW, "num_params": float(d)},
    )


def _adapt(
    chains: Chains, curvature: Curvature, opts: PotentialOptions, gen: torch.Generator, mala
) -> tuple[Tuning, str]:
    """ε: given, MALA's dual averaging from 1/κ, or unadjusted Langevin's curvature rule.
    Draws v [C, D] from ``gen`` first (also when ε is given: it keeps the stream)."""
    w = chains.position
    v = torch.randn(w.shape, generator=gen, device=w.device, dtype=w.dtype)
    if opts.step_size is not None:
        return Tuning(float(opts.step_size), math.nan), "given"

    def measure(v: torch.Tensor, iters: int) -> tuple[float, torch.Tensor]:
        return curvature(chains.position, chains.alive, v, iters)

    if opts.metropolis:
        kappa = max(measure(v, 30)[0], 1e-12)
        tuning = Tuning(1.0 / kappa, kappa)
        adapt = (
            MALA_ADAPT_STEPS if opts.num_burnin is None else min(MALA_ADAPT_STEPS, opts.num_burnin)
        )
        if adapt > 0:
            tuning = dual_averaging(chains, tuning, adapt, mala)
        return tuning, (
            f"MALA: dual averaging of log ε toward acceptance {TARGET_ACCEPT} over "
            f"{adapt} steps, from ε₀ = 1/κ"
        )
    adapt = UNADJUSTED_ADAPT_STEPS
    if opts.num_burnin is not None:
        adapt = min(adapt, opts.num_burnin)
    tuning, _ = adapt_step_size(
        chains, measure, Tuning(math.nan, math.nan), v, adapt, opts.step_scale
    )
    return tuning, (
        f"ε = {opts.step_scale:g}/κ, κ = nβ·|λ_max(∇²K)| + γ + α measured by power "
        "iteration where the chains were during adaptation"
    )


def metric_may_run(opts: PotentialOptions, d: int) -> bool:
    """Whether position-dependent steps can follow the MALA steps: asked for (``metric=True``),
    or by default (``None``) up to ``MAX_METRIC_DIM`` parameters; never without Metropolis."""
    return opts.metropolis and (
        opts.metric is True or (opts.metric is None and d <= MAX_METRIC_DIM)
    )


def check_run_fits(opts: PotentialOptions, w: torch.Tensor) -> None:
    """Refuse a run whose chains (with the metric's D×D matrices) and traces cannot fit, or
    whose dtype is too narrow for the position-dependent metric where it may run (its
    eigen-decompositions, ``numeric.sampler.mmala``, and finite-difference Hessian need float32)."""
    if w.element_size() < 4 and metric_may_run(opts, w.numel()):
        raise InvalidInputError(
            f"dtype {w.dtype} is too narrow for the position-dependent metric that "
            f"estimate_llc_potential adds up to {MAX_METRIC_DIM} parameters (its Hessian by "
            "finite differences and eigen-decompositions need float32 or float64): pass "
            "dtype=torch.float32, or metric=False for plain MALA in this dtype"
        )
    c, d, item = opts.num_chains, w.numel(), w.element_size()
    draws = opts.num_draws if opts.num_draws is not None else MAX_POTENTIAL_DRAWS
    metric = c * d * d * item * 6 if metric_may_run(opts, d) else 0
    require_memory(
        {
            "the chains' state": c * d * item * 16,
            "the metric": metric,
            "the traces": c * draws * (2 * item + 3 * 8),
        },
        w.device,
        f"num_chains = {c}, {d} parameters and "
        + (f"num_draws = {draws}" if opts.num_draws is not None else "automatic draws"),
    )


def _choose_metric(
    chains: Chains, tuning: Tuning, opts: PotentialOptions, d: int, floor: float
) -> tuple[bool, str, tuple[Finding, ...]]:
    """Whether to add position-dependent steps (a pilot decides when ``metric`` is None, or warns
    when it is False or impossible), the rule's addition, and the creeping finding if any."""
    metric, note, findings = opts.metric, "", ()
    if opts.metropolis and not metric:
        pilot = PILOT_STEPS
        if opts.num_burnin is not None:
            pilot = min(PILOT_STEPS, opts.num_burnin - chains.steps_done)
        slow, why = pilot_creeps(chains, tuning, pilot)
        if metric is None:  # no room for a pilot: on where possible, the safe choice
            metric = slow is not False and metric_may_run(opts, d) and floor > 0
            note = f"; {why}: position-dependent steps {'on' if metric else 'off'}"
        if slow and not metric:
            findings = (creeping_finding(why, d, floor, asked_off=opts.metric is False),)
    if metric:
        lo, hi = METRIC_STEP_RANGE
        note += (
            f"; each MALA step is followed by a position-dependent one (metric |∇²U| "
            f"floored at γ + α, ε' log-uniform in [{lo:g}, {hi:g}] per chain and step)"
        )
    return bool(metric), note, findings


def warm_up_potential(
    chains: Chains,
    curvature: Curvature,
    opts: PotentialOptions,
    gen: torch.Generator,
    mala,
    floor: float,
) -> Warmup:
    """Step size, the metric decision and burn-in (module docstring). ``mala``: the chains'
    MALA transition (its meter feeds dual averaging; with the metric its ``MetricTransition``
    twin replaces it)."""
    chains.phase("warm-up: step size")
    tuning, rule = _adapt(chains, curvature, opts, gen, mala)
    metric, note, findings = False, "", ()
    if opts.metropolis:
        metric, note, findings = _choose_metric(chains, tuning, opts, chains.dim, floor)
        if metric:
            step = MetricTransition(mala.target, mala.gen, mala.meter)
            chains.block = stepwise_block(step, lambda s: s.position, mala.target.w_star)
    tail: Trace | None = None
    fixed = None if opts.num_burnin is None else opts.num_burnin - chains.steps_done
    chains.phase("burn-in", fixed)
    if opts.num_burnin is None:
        tail = burn_in_blocks(chains, tuning)
    elif opts.num_burnin > chains.steps_done:
        tail = chains.advance(opts.num_burnin - chains.steps_done, tuning)
    return Warmup(tuning, tail, chains.steps_done, rule + note, findings, metric)


def sample_potential(
    chains: Chains, opts: PotentialOptions, warm: Warmup, w_star: torch.Tensor
) -> Draws:
    """The draws (module docstring); the transitions' recording must be on. ``Draws.centre``
    holds each chain's mean of w − ``w_star`` at the pieces' ends
    (``numeric.findings.off_centre``)."""
    num_draws = opts.num_draws
    if num_draws is None:
        tail = warm.tail
        num_draws = (
            draws_from_tail(tail, opts.num_chains, min_draws=2000, target_ess=1000.0)
            if tail is not None and tail.steps >= 50
            else 1000
        )
    per_coordinate = chains.dim <= MAX_TRACKED_COORDS
    visited: list[torch.Tensor] = []
    centre = CentreSum()

    def draws(k: int) -> Trace:
        """k draws in up to ``SNAPSHOTS`` pieces (each step draws its own numbers, so the pieces
        change nothing), keeping the positions after each for
        ``numeric.findings.unreached_region``."""
        chains.phase("draws", k)
        piece, parts = math.ceil(k / SNAPSHOTS), []
        for s in range(0, k, piece):
            parts.append(
                chains.advance(
                    min(piece, k - s),
                    warm.tuning,
                    track_dist=not per_coordinate,
                    track_obs=per_coordinate,
                )
            )
            centre.add(chains.position - w_star)
            if chains.dim <= MAX_DIM:
                visited.append(chains.position.detach().clone())
        return Trace.join(parts)

    def positions_of(t: Trace) -> object:
        pos = t.obs if per_coordinate else t.dist[..., None]
        return pos.double().cpu().numpy()[chains.alive.cpu().numpy()]

    trace, num_draws, mixing, _ = draws_until_mixed(
        draws,
        num_draws,
        positions_of,
        extend=opts.num_draws is None,
        target_ess=POSITION_TARGET_ESS,
        max_draws=MAX_POTENTIAL_DRAWS,
        rounds=3,
    )
    offsets = trace.obs.sum(-1) if per_coordinate else trace.dist  # ‖w − w*‖² [C, T]
    spread = None if offsets is None else offsets.double().cpu().numpy().T
    return Draws(
        trace,
        num_draws,
        None,
        mixing,
        visited=tuple(visited),
        spread=spread,
        centre=centre.mean(),
    )
