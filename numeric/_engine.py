"""Driver shared by the data and potential estimators: adaptation, burn-in, draws, checks.

Internal. The transitions themselves are the pure ``sgld.step`` / ``mala.step``; this module
owns the loop, the traces (preallocated on the device, checked for non-finite values once per
block rather than every step) and the rules that pick ε, the burn-in and the number of draws.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

from numeric.diagnostics import Finding, autocorr_time, direction_ess, direction_rhat, ess
from numeric.errors import DivergenceError, InvalidInputError

OnDivergence = Literal["raise", "continue"]
CHECK_EVERY = 64  # steps between non-finite checks (one host sync each)
BLOCK = 100  # burn-in block length for the stationarity test
MAX_BURNIN_BLOCKS = 40
FEWEST_DRAWS = 4  # per chain: split R-hat halves each chain, and a chain's stderr needs a variance
MIN_DRAWS, MAX_DRAWS, TARGET_ESS = 200, 20_000, 400.0


@dataclass
class Traces:
    """Traces [C, T] of one phase (torch, on the run's device)."""

    loss: Tensor
    ref: Tensor
    dist: Tensor | None  # ‖w − w*‖² per draw (burn-in stationarity); None when untracked
    obs: Tensor | None = None  # [C, T, j] slow observables (the kernel's probe, or positions)


def cat_steps(values: list[Tensor | None]) -> Tensor | None:
    """Per-step records [C, m, ...] of consecutive blocks joined along the step axis; None when
    a block did not record them."""
    return None if any(v is None for v in values) else torch.cat(values, 1)


def join_traces(parts: list[Any]) -> Traces:
    """Consecutive blocks' traces (anything with ``loss``, ``ref``, ``dist``, ``obs``) as one."""
    return Traces(
        *(cat_steps([getattr(p, field) for p in parts]) for field in ("loss", "ref", "dist", "obs"))
    )


def check_block(
    delta: Tensor,
    nbeta: float,
    dim: int,
    first_step: int,
    *,
    step_size: float,
    kappa: float,
    on_divergence: OnDivergence,
    alive: Tensor,
) -> Tensor:
    """Raise (or mark chains dead) on non-finite or exploding nβ·(L − L*) in a block [C, b]."""
    limit = 50.0 * (dim / 2 + 10.0)
    scaled = delta * nbeta
    bad = ~torch.isfinite(scaled) | (scaled > limit)
    if not bool(bad.any()):
        return alive
    chains, steps = bad.nonzero(as_tuple=True)
    order = torch.argsort(steps * bad.shape[0] + chains)
    c, s = int(chains[order[0]]), int(steps[order[0]]) + first_step
    value = float(scaled[chains[order[0]], steps[order[0]]])
    ek = step_size * kappa
    cause = (
        f"step size ε = {step_size:.3g} is probably too large for nβ = {nbeta:.4g}"
        + (
            f" (ε·curvature ≈ {ek:.2g}; stable Langevin needs ε·curvature < 4 everywhere the chain "
            "goes)"
            if math.isfinite(ek)
            else ""
        )
        + "; reduce step_size, or leave it None to have it chosen from the curvature"
    )
    if on_divergence == "raise":
        what = (
            "non-finite loss" if not math.isfinite(value) else f"exploding loss nβ·ΔL = {value:.3g}"
        )
        raise DivergenceError(what, chain=c, step=s, cause=cause)
    dead = bad.any(dim=1)
    return alive & ~dead


class Runner:
    """Holds the mutable loop state around a pure transition.

    ``advance(k)`` runs k steps and returns the traces of those steps, in blocks of at most
    ``CHECK_EVERY`` steps: ``block(state, m, ε, track_dist=…, track_obs=…)`` runs m steps and
    returns (new state, a trace with ``loss``, ``ref``, ``dist`` and ``obs`` [C, m, …], the last
    two None when not tracked), e.g. ``kernel.Kernel``. A per-step ``transition(state, ε) ->
    (new state, loss [C], ref [C])`` may be given instead; it is run as such a block.
    """

    def __init__(
        self,
        state: object,
        transition: Callable[[object, float], tuple[object, Tensor, Tensor]] | None,
        position_of: Callable[[object], Tensor],
        center: Tensor,
        *,
        nbeta: float,
        on_divergence: OnDivergence,
        progress: bool,
        total_hint: int,
        block: Callable[..., tuple[object, Any]] | None = None,
    ) -> None:
        if (transition is None) == (block is None):
            raise ValueError("give exactly one of transition and block")
        self.state = state
        self.block = block if block is not None else self._stepwise(transition)
        self.position_of = position_of
        self.center = center
        self.nbeta = nbeta
        self.on_divergence = on_divergence
        self.step_size = float("nan")
        self.kappa = float("nan")
        self.steps_done = 0
        w = position_of(state)
        self.alive = torch.ones(w.shape[0], dtype=torch.bool, device=w.device)
        self.dim = w.shape[1]
        self.pbar = None
        if progress:
            from tqdm.auto import tqdm

            self.pbar = tqdm(total=total_hint, desc="SGLD", unit="step", file=sys.stderr)

    def _stepwise(
        self, transition: Callable[[object, float], tuple[object, Tensor, Tensor]]
    ) -> Callable[..., tuple[object, Traces]]:
        """A block that applies ``transition`` m times, taking before each step ‖w − w*‖²
        (``track_dist``) and the per-coordinate (w_i − w*_i)² as ``obs`` [C, m, D] (``track_obs``)."""

        def block(
            state: object, m: int, eps: float, *, track_dist: bool, track_obs: bool
        ) -> tuple[object, Traces]:
            loss, ref, dist, obs = [], [], [], []
            for _ in range(m):
                if track_dist or track_obs:
                    sq = (self.position_of(state) - self.center).square()
                    if track_dist:
                        dist.append(sq.sum(-1))
                    if track_obs:
                        obs.append(sq)
                state, lo, re = transition(state, eps)
                loss.append(lo)
                ref.append(re)
            return state, Traces(
                torch.stack(loss, 1),
                torch.stack(ref, 1),
                torch.stack(dist, 1) if track_dist else None,
                torch.stack(obs, 1) if track_obs else None,
            )

        return block

    def advance(self, k: int, *, track_dist: bool = False, track_obs: bool = False) -> Traces:
        """k ≥ 1 steps; ‖w − w*‖² and the slow observables only when asked for."""
        parts = []
        done = 0
        while done < k:
            m = min(CHECK_EVERY, k - done)
            self.state, tr = self.block(
                self.state, m, self.step_size, track_dist=track_dist, track_obs=track_obs
            )
            self.alive = check_block(
                tr.loss - tr.ref,
                self.nbeta,
                self.dim,
                self.steps_done + done,
                step_size=self.step_size,
                kappa=self.kappa,
                on_divergence=self.on_divergence,
                alive=self.alive,
            )
            if self.pbar is not None:
                self.pbar.update(m)
            parts.append(tr)
            done += m
        self.steps_done += k
        return join_traces(parts)

    def close(self) -> None:
        if self.pbar is not None:
            self.pbar.close()


def stationary(prev: Traces, cur: Traces, nbeta: float) -> bool:
    """Two consecutive burn-in blocks agree (|z| < 2 on nβ·ΔL and on ‖w − w*‖²)."""
    for a, b in ((prev.loss - prev.ref, cur.loss - cur.ref), (prev.dist, cur.dist)):
        x = a.double().cpu().numpy() * nbeta
        y = b.double().cpu().numpy() * nbeta
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            return False
        ex, ey = ess(x), ess(y)
        vx, vy = x.var(ddof=1), y.var(ddof=1)
        if not (ex > 1 and ey > 1):
            return False
        se = math.sqrt(vx / ex + vy / ey)
        if se == 0:
            continue
        if abs(x.mean() - y.mean()) / se > 2.0:
            return False
    return True


def burn_in_blocks(runner: Runner, max_blocks: int = MAX_BURNIN_BLOCKS) -> tuple[int, Traces]:
    """Run blocks of ``BLOCK`` steps until two consecutive blocks agree (at least 2 blocks)."""
    prev = runner.advance(BLOCK, track_dist=True)
    blocks = 1
    while blocks < max_blocks:
        cur = runner.advance(BLOCK, track_dist=True)
        blocks += 1
        if stationary(prev, cur, runner.nbeta):
            return blocks * BLOCK, join_traces([prev, cur])
        prev = cur
    return blocks * BLOCK, join_traces([prev, prev])


def draws_from_tail(
    tail: Traces, num_chains: int, *, min_draws: int = MIN_DRAWS, target_ess: float = TARGET_ESS
) -> int:
    """Draws for ≈ ``target_ess`` effective samples given τ measured on the end of burn-in."""
    x = (tail.loss - tail.ref).double().cpu().numpy()
    tau = autocorr_time(x)
    if not math.isfinite(tau):
        return min_draws
    return int(min(MAX_DRAWS, max(min_draws, math.ceil(target_ess * tau / num_chains))))


def draws_until_mixed(
    draws: Callable[[int], Traces],
    num_draws: int,
    positions_of: Callable[[Traces], np.ndarray],
    *,
    extend: bool,
    target_ess: float,
    max_draws: int,
    report: bool = True,
) -> tuple[Traces, int, tuple[float, float]]:
    """``num_draws`` draws and the positions' (ESS, R-hat) over them (``positions_of``: [C, T, j]
    observables); with ``extend``, draws are added until that ESS reaches ``target_ess`` (at
    most ``max_draws`` per chain, three extensions, each sized from the ESS so far). Returns the
    traces, the draws and the mixing; without ``report`` the mixing is measured only as far as
    the extension needs (ESS; R-hat nan: ranking every draw costs as much as a tenth of the
    steps of a small model). The rule reads only the mixing (ESS), never the estimate. R-hat is
    not a target: on K = w1²w2² the rank-based R-hat sees the chains' slow switching between the
    axes, which moves λ̂ little (the z-scores stay calibrated) and would cost runs of 15,000+
    draws."""
    tr = draws(num_draws)
    obs = positions_of(tr) if extend or report else None
    pos_ess = direction_ess(obs) if obs is not None else math.nan
    for _ in range(3 if extend else 0):
        if not (math.isfinite(pos_ess) and pos_ess < target_ess):
            break
        want = math.ceil(num_draws * (1.1 * target_ess / max(pos_ess, 1.0) - 1.0))
        more = min(want, max_draws - num_draws)
        if more <= 0:
            break
        tr = join_traces([tr, draws(more)])
        num_draws += more
        obs = positions_of(tr)
        pos_ess = direction_ess(obs)
    rhat = direction_rhat(obs) if report and obs is not None else math.nan
    return tr, num_draws, (pos_ess, rhat)


def power_iteration(
    hvp: Callable[[Tensor], Tensor], v0: Tensor, iters: int
) -> tuple[Tensor, Tensor]:
    """Largest-|eigenvalue| of each chain's Hessian by power iteration; v0 [C, D] warm start."""
    v = v0 / v0.norm(dim=-1, keepdim=True).clamp_min(1e-30)
    lam = v.new_zeros(v.shape[0])
    for _ in range(iters):
        hv = hvp(v)
        lam = (hv * v).sum(-1)
        nrm = hv.norm(dim=-1, keepdim=True)
        v = torch.where(nrm > 0, hv / nrm.clamp_min(1e-30), v)
    return lam.abs(), v


def adapt_checkpoints(steps: int) -> list[int]:
    """Geometric checkpoints 0, 1, 2, 4, ... < steps at which the curvature is re-measured."""
    out, k = [0], 1
    while k < steps:
        out.append(k)
        k *= 2
    return out


def adapt_step_size(
    runner: Runner,
    measure: Callable[[Tensor, int], tuple[float, Tensor]],
    v: Tensor,
    steps: int,
    step_scale: float,
) -> tuple[float, Tensor]:
    """ε = step_scale/κ with κ re-measured (``measure(v, iters)`` → (κ, v)) at the geometric
    checkpoints of :func:`adapt_checkpoints` while the chains run ``steps`` steps; κ is the
    largest of the last three measurements. Returns the final κ and power-iteration vectors."""
    cps = adapt_checkpoints(max(steps, 1))
    history: list[float] = []
    kappa = float("nan")
    for i, cp in enumerate(cps):
        k_now, v = measure(v, 20 if i == 0 else 8)
        history.append(k_now)
        kappa = max(max(history[-3:]), 1e-12)
        runner.kappa, runner.step_size = kappa, step_scale / kappa
        nxt = cps[i + 1] if i + 1 < len(cps) else steps
        if nxt > cp:
            runner.advance(nxt - cp)
    return kappa, v


def default_nbeta(n: int, nbeta: float | None) -> tuple[float, str]:
    """nβ and the rule that gave it: n/log n (β = 1/log n, the WBIC temperature) unless given."""
    if nbeta is not None:
        return float(nbeta), "given"
    if n < 2:
        raise InvalidInputError("nβ = n/log n needs n ≥ 2; pass nbeta")
    return n / math.log(n), "n/log n"


def noise_drift_ratio(norms: dict) -> float:
    """√(mean ‖noise‖² / mean ‖drift‖²) of the steps sampled into ``norms``."""
    cnt = max(norms["count"], 1)
    return float(
        torch.sqrt(norms["noise"].sum() / cnt / (norms["drift"].sum() / cnt).clamp_min(1e-300))
    )


def dual_averaging(
    runner: Runner,
    steps: int,
    accept_of: Callable[[object], float],
    target: float,
) -> float:
    """Nesterov dual averaging of log ε toward mean acceptance ``target`` (Hoffman & Gelman)."""
    mu = math.log(10 * runner.step_size)
    hbar, log_eps_bar, t0, gam, kap = 0.0, 0.0, 10.0, 0.05, 0.75
    for t in range(1, steps + 1):
        runner.advance(1)
        a = accept_of(runner.state)
        hbar = (1 - 1 / (t + t0)) * hbar + (target - a) / (t + t0)
        log_eps = mu - math.sqrt(t) / gam * hbar
        w = t**-kap
        log_eps_bar = w * log_eps + (1 - w) * log_eps_bar
        runner.step_size = math.exp(log_eps)
    runner.step_size = math.exp(log_eps_bar)
    return runner.step_size


def validate_common(
    nbeta: float,
    gamma: float,
    prior_precision: float,
    step_size: float | None,
    num_chains: int,
    num_draws: int | None,
    num_burnin: int | None,
) -> None:
    if not (isinstance(nbeta, (int, float)) and math.isfinite(nbeta) and nbeta > 0):
        raise InvalidInputError(f"nbeta must be a finite number > 0, got {nbeta!r}")
    if not (math.isfinite(gamma) and gamma >= 0):
        raise InvalidInputError(f"gamma must be finite and ≥ 0, got {gamma!r}")
    if not (math.isfinite(prior_precision) and prior_precision >= 0):
        raise InvalidInputError(f"prior_precision must be finite and ≥ 0, got {prior_precision!r}")
    if step_size is not None and not (math.isfinite(step_size) and step_size > 0):
        raise InvalidInputError(f"step_size must be a finite number > 0, got {step_size!r}")
    if not (isinstance(num_chains, int) and num_chains >= 1):
        raise InvalidInputError(f"num_chains must be an int ≥ 1, got {num_chains!r}")
    if num_draws is not None and not (isinstance(num_draws, int) and num_draws >= FEWEST_DRAWS):
        raise InvalidInputError(
            f"num_draws must be an int ≥ {FEWEST_DRAWS} (a chain's standard error and split "
            f"R-hat need at least {FEWEST_DRAWS} draws), got {num_draws!r}"
        )
    if num_burnin is not None and not (isinstance(num_burnin, int) and num_burnin >= 0):
        raise InvalidInputError(f"num_burnin must be an int ≥ 0, got {num_burnin!r}")


def divergence_findings(alive: np.ndarray, step_size: float, nbeta: float) -> tuple[Finding, ...]:
    """An error finding naming the chains that diverged (and were dropped); raise if all did."""
    if alive.all():
        return ()
    dead = np.nonzero(~alive)[0].tolist()
    if not alive.any():
        raise DivergenceError(
            "every chain diverged", chain=dead[0], step=0, cause="step size too large for nβ"
        )
    return (
        Finding(
            "divergence",
            "error",
            f"chains {dead} diverged (non-finite or exploding loss) and were dropped; the step "
            f"size ε = {step_size:.3g} is probably too large for nβ = {nbeta:.4g}",
            {"num_diverged": float(len(dead))},
        ),
    )
