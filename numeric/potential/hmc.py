r"""Metropolis-adjusted Hamiltonian Monte Carlo on a potential: an independent reference for λ_β.

Target p(w) ∝ exp(−U(w)), U(w) = nβ·(K(w) − K(w*)) + (γ/2)‖w − w*‖² (as
``estimate_llc_potential``), and λ_β = nβ·E_p[K(w) − K(w*)]. Each iteration draws a momentum
p ~ N(0, I), runs L leapfrog steps of size ε (L = ⌈τ/ε⌉ for a trajectory length τ jittered
uniformly in [τ/2, 3τ/2], so that no orbit of a Gaussian direction is resonant) and accepts the
end point with probability min(1, exp(H₀ − H₁)), H = U + ‖p‖²/2. The chain is exact for any ε
and τ; what they set is how fast it mixes. MALA is the case L = 1, whose steps move a distance of
order ε (diffusively, about √N·ε in N steps); a trajectory moves ballistically, so with τ ≈ 1/√γ
the directions held only by the localisation (curvature γ: the flat orbits of a deep linear
network) decorrelate in a few iterations, where plain MALA's acceptance limits ε by the
stiffest curvature and its chains creep (``plain_mala_creeps``).

ε starts where one leapfrog step is accepted about half the time, is adapted during the burn-in
iterations towards a mean acceptance ``target_acceptance`` by dual averaging of log ε (Hoffman &
Gelman 2014, as MALA's warm-up), then fixed at the average; the estimate, its error,
ESS and R-hat come from the draws after burn-in, one value of nβ·(K − K(w*)) per chain and
iteration, with the statistics and findings every estimate uses (``stats.chain_stats``), and
the positions' mixing as ``estimate_llc_potential`` reads it (the squared offsets (w_i − w*_i)²,
or ‖w − w*‖² in many dimensions: ``slow_mixing``), which the loss trace does not see: on K = w₁²
with τ = 0.05 the loss's ESS was 1,605 and the positions' 18; and whether the chains settled around a
point other than w* (``off_centre``, ``numeric.findings.off_centre``).

A trajectory whose energy error H₁ − H₀ exceeds ``DIVERGENT_ENERGY`` (or is NaN or inf) is
*divergent* (Stan's term): the leapfrog step is unstable where the trajectory went, so the chains
rarely enter regions of high curvature that can carry much of E[K], and the estimate is biased,
usually low, by more than its error bar says. On K = w⁸ (n = 10³, 22 seeds, 8 chains of
100 + 200 iterations) a target of 0.9 left 1–8% of the trajectories divergent and 3 of 22
seeds beyond 3 standard errors of quadrature (one at −6.0); 0.95, the default, 1–4% and none
(mean z −0.5, sd 0.98), in 16 s for the 22. The ``divergent`` finding reports the share
(an error from ``DIVERGENT_ERROR``) and says to raise ``target_acceptance``. On a 339-parameter
deep linear network at its true parameter (n = 10⁴, γ = 1; the earlier multiplicative
adaptation towards 0.75) 16 chains gave λ_β = 13.80 ± 0.10
(ESS 1,822) where plain MALA gave 13.55 ± 0.38 with ``slow_mixing`` and SGLD with BAOAB at ξ = 2
read 15.3–16.5; on another (15-8-8-10-7) 37.81 ± 0.15, where MALA's runs had read 37.6 and 40.9
(``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from numeric.backend.memory import require_memory
from numeric.errors import DivergenceError
from numeric.findings.checks import format_findings
from numeric.findings.off_centre import CentreSum, check_off_centre
from numeric.findings.standard import standard_findings
from numeric.options import as_seed, check_dtype, check_int, check_real, default_nbeta
from numeric.potential.estimate_llc_potential import (
    as_w_star,
    check_potential,
    position_mixing,
    require_finite_gradient,
)
from numeric.potential.target import Potential
from numeric.potential.warmup import MAX_TRACKED_COORDS
from numeric.stats.chain_stats import chain_stats
from numeric.stats.diagnostics import direction_ess, direction_rhat
from numeric.types import Finding
from numeric.warmup.dual_averaging import DualAveraging

__all__ = ["HMCReference", "hmc_llc_potential"]

DIVERGENT_ENERGY = 1000.0  # an energy error H₁ − H₀ above this is a divergent trajectory (Stan)
DIVERGENT_ERROR = 0.05  # a share of divergent HMC trajectories from which the estimate is an error


def divergent_trajectories(fraction: float, target_acceptance: float) -> tuple[Finding, ...]:
    """HMC trajectories whose energy error was huge or non-finite (``numeric.potential.hmc``): the
    leapfrog step is unstable where they went, so high-curvature regions are under-visited and the
    estimate is biased (usually low). A warning for any, an error from ``DIVERGENT_ERROR``."""
    if not fraction > 0:
        return ()
    severity = "error" if fraction >= DIVERGENT_ERROR else "warning"
    return (
        Finding(
            "divergent",
            severity,
            f"{100 * fraction:.3g}% of the draws' trajectories diverged (an energy error above "
            f"{DIVERGENT_ENERGY:g}, or NaN): the leapfrog step is unstable where they went, so the chains rarely "
            "enter regions of high curvature, and the estimate may be biased (usually low) beyond "
            f"its error bar. Raise target_acceptance (now {target_acceptance:g}; 0.97 or 0.99 "
            "gives a smaller step)",
            {"fraction": fraction, "target_acceptance": target_acceptance},
        ),
    )


MAX_LEAPFROG = 100_000  # leapfrog steps of one trajectory: beyond it ε has collapsed


@dataclass(frozen=True, eq=False)  # arrays: compared and hashed by identity
class HMCReference:
    """λ_β by Metropolis-adjusted HMC: the estimate, its error and how the chains mixed."""

    mean: float  # nβ·(E[K] − K(w*)) over all draws
    stderr: float
    per_chain: np.ndarray  # [C] each chain's mean
    ess: float
    rhat: float
    acceptance: float  # over the draws
    step_size: float  # ε after adaptation
    trajectory: float  # τ, the mean trajectory length
    nbeta: float
    gamma: float
    num_draws: int
    num_burnin: int
    trace: np.ndarray  # [C, num_draws] nβ·(K − K(w*))
    divergent: float  # share of the draws' trajectories that diverged (module docstring)
    target_acceptance: float
    # the positions' mixing: least ESS and largest R-hat of the squared offsets (w_i − w*_i)²,
    # or of ‖w − w*‖² beyond ``MAX_TRACKED_COORDS`` parameters (as ``estimate_llc_potential``)
    position_ess: float
    position_rhat: float
    # low ESS, chains that disagree, drift, divergences, positions that mix slowly
    diagnostics: tuple[Finding, ...]

    def __str__(self) -> str:
        head = (
            f"λ_β = {self.mean:.4g} ± {self.stderr:.2g} (HMC: ESS {self.ess:.0f}, R-hat "
            f"{self.rhat:.3f}, positions' ESS {self.position_ess:.0f}, acceptance "
            f"{self.acceptance:.2f}, ε = {self.step_size:.3g}, "
            f"nβ = {self.nbeta:.4g}, γ = {self.gamma:g})"
        )
        return head + ("\n" + format_findings(self.diagnostics) if self.diagnostics else "")


def hmc_llc_potential(
    K: Potential,
    w_star: Any,
    n: int,
    *,
    nbeta: float | None = None,
    gamma: float = 1.0,
    num_chains: int = 8,
    num_draws: int = 200,
    num_burnin: int = 100,
    trajectory: float | None = None,
    step_size: float = 1e-3,
    target_acceptance: float = 0.95,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> HMCReference:
    """λ_β of ``K`` at ``w_star`` (a vector: list, array or tensor, on its device) for sample size
    ``n`` by HMC (module docstring), in ``dtype``. ``trajectory`` τ defaults to (π/2)/√γ, a
    quarter period of the directions held by γ alone; ``step_size`` is the starting ε of the adaptation, which aims at a mean acceptance
    ``target_acceptance`` (raise it where the ``divergent`` finding says so). The chains start at
    w*. Raises ``DivergenceError`` where ε collapses (a trajectory would need more than
    ``MAX_LEAPFROG`` steps): trajectories that leave the region where K is finite, or a K too
    stiff for this τ."""
    check_int("n", n, 2)
    check_real("nbeta", nbeta, low=0.0, strict=True, optional=True)
    check_dtype(dtype, optional=False)
    nbeta_v, _ = default_nbeta(n, nbeta)
    _check_settings(gamma, num_chains, num_draws, num_burnin, trajectory, step_size)
    check_real("target_acceptance", target_acceptance, low=0.0, strict=True, high=1.0)
    seed = as_seed(seed)
    tau = (math.pi / 2) / math.sqrt(gamma) if trajectory is None else float(trajectory)
    w0 = as_w_star(w_star, None, dtype)
    per_coordinate = w0.numel() <= MAX_TRACKED_COORDS
    tracked = w0.numel() if per_coordinate else 1
    require_memory(  # the traces of nβ·(K − K(w*)) and of the positions, float64 in host memory
        {
            "the trace": num_chains * num_draws * 8,
            "the positions": num_chains * num_draws * tracked * 8,
        },
        torch.device("cpu"),
        f"num_chains = {num_chains}, num_draws = {num_draws}",
    )
    k0 = float(check_potential(K, w0))
    require_finite_gradient(K, w0)  # the chains start at w*

    def u_and_grad(w: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """U, ∇U and nβ·(K − K(w*)) at positions [C, D]."""
        with torch.enable_grad():
            x = w.detach().requires_grad_(True)
            k = K(x)
            u = nbeta_v * (k - k0) + 0.5 * gamma * (x - w0).square().sum(-1)
            (g,) = torch.autograd.grad(u.sum(), x)
        return u.detach(), g, (k.detach() - k0) * nbeta_v

    gen = torch.Generator(device=w0.device).manual_seed(seed)
    w = w0.expand(num_chains, -1).clone()
    u, g, lk = u_and_grad(w)
    eps = _reasonable_step(u_and_grad, w, u, g, float(step_size), gen)
    adapting = DualAveraging.start(eps)
    trace = np.empty((num_chains, num_draws))
    positions = np.empty((num_chains, num_draws, tracked))  # squared offsets, or ‖w − w*‖²
    accepted = divergent = 0.0
    last: Tensor | None = None  # the previous iteration's energy errors
    centre = CentreSum()  # each chain's mean of w − w* over the draws (numeric.findings.off_centre)
    for it in range(num_burnin + num_draws):
        p = torch.randn(w.shape, generator=gen, device=w.device, dtype=w.dtype)
        jitter = 0.5 + float(torch.rand((), generator=gen, device=w.device))
        steps = max(1, math.ceil(jitter * tau / eps))
        if steps > MAX_LEAPFROG:
            raise _collapsed(eps, tau, steps, it, last)
        x, ux, gx, lx, last = _trajectory(u_and_grad, w, p, u, g, eps, steps)
        log_a = _log_acceptance(last)
        ok = torch.rand(num_chains, generator=gen, device=w.device, dtype=w.dtype).log() < log_a
        w = torch.where(ok[:, None], x, w)
        u, g, lk = torch.where(ok, ux, u), torch.where(ok[:, None], gx, g), torch.where(ok, lx, lk)
        rate = float(log_a.exp().mean())
        if it < num_burnin:  # ε towards the target acceptance, then fixed at the average
            adapting, eps = adapting.update(rate, target_acceptance)
            if it + 1 == num_burnin:
                eps = adapting.final
        else:
            trace[:, it - num_burnin] = lk.double().cpu().numpy()
            offset = w - w0
            centre.add(offset)
            off = offset.square()
            off = off if per_coordinate else off.sum(-1, keepdim=True)
            positions[:, it - num_burnin] = off.double().cpu().numpy()
            accepted += float(ok.double().mean())
            divergent += float(_divergent(last).double().mean())
    return _reference(
        trace,
        positions,
        accepted / num_draws,
        divergent / num_draws,
        (eps, tau, nbeta_v, gamma, float(target_acceptance)),
        num_burnin,
        per_coordinate,
        check_off_centre(centre.mean(), None, w0, gamma, 0.0),
    )


def _reference(
    trace: np.ndarray,
    positions: np.ndarray,
    acceptance: float,
    divergent: float,
    settings: tuple[float, float, float, float, float],
    num_burnin: int,
    per_coordinate: bool,
    centred: tuple[Finding, ...] = (),
) -> HMCReference:
    """The reference from the draws' traces [C, T] and positions [C, T, j] (the squared offsets
    where ``per_coordinate``, else ‖w − w*‖²): statistics and findings (with ``centred``, the
    ``off_centre`` check's). ``settings``: ε, τ, nβ, γ and the target acceptance."""
    eps, tau, nbeta, gamma, target_acceptance = settings
    num_chains, num_draws, _ = positions.shape
    st = chain_stats(trace, 1.0)
    pos_ess, pos_rhat = direction_ess(positions), direction_rhat(positions)
    findings = standard_findings(trace, 1.0, st) + divergent_trajectories(
        divergent, target_acceptance
    )
    findings += position_mixing(
        pos_ess,
        pos_rhat,
        per_coordinate=per_coordinate,
        num_burnin=num_burnin,
        num_draws=num_draws,
        num_chains=num_chains,
    )
    findings += centred
    return HMCReference(
        st.mean,
        st.stderr,
        st.per_chain,
        st.ess,
        st.rhat,
        acceptance,
        eps,
        tau,
        nbeta,
        gamma,
        num_draws,
        num_burnin,
        trace,
        divergent,
        target_acceptance,
        pos_ess,
        pos_rhat,
        findings,
    )


def _check_settings(
    gamma: float,
    num_chains: int,
    num_draws: int,
    num_burnin: int,
    trajectory: float | None,
    step_size: float,
) -> None:
    check_real("gamma", gamma, low=0.0, strict=True)
    check_int("num_chains", num_chains, 2)
    check_int("num_draws", num_draws, 4)
    check_int("num_burnin", num_burnin, 0)
    check_real("trajectory", trajectory, low=0.0, strict=True, optional=True)
    check_real("step_size", step_size, low=0.0, strict=True)


def _trajectory(
    u_and_grad: Callable[[Tensor], tuple[Tensor, Tensor, Tensor]],
    w: Tensor,
    p: Tensor,
    u: Tensor,
    g: Tensor,
    eps: float,
    steps: int,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """``steps`` leapfrog steps of size ε from (w, p): the end point, U, ∇U and nβ·(K − K(w*))
    there, and the energy error H₁ − H₀ of each chain (NaN where the trajectory left the region
    where U is finite)."""
    x, q, gx = w, p - 0.5 * eps * g, g
    for s in range(steps):
        x = x + eps * q
        ux, gx, lx = u_and_grad(x)
        if s + 1 < steps:
            q = q - eps * gx
    q = q - 0.5 * eps * gx
    energy_error = ux + 0.5 * q.square().sum(-1) - (u + 0.5 * p.square().sum(-1))
    return x, ux, gx, lx, energy_error


def _reasonable_step(
    u_and_grad: Callable[[Tensor], tuple[Tensor, Tensor, Tensor]],
    w: Tensor,
    u: Tensor,
    g: Tensor,
    eps: float,
    gen: torch.Generator,
) -> float:
    """A starting ε for the adaptation (Hoffman & Gelman 2014, Alg. 4): halve or double ``eps``
    until the mean acceptance of one leapfrog step from ``w`` crosses ½ (at most 60 times)."""
    p = torch.randn(w.shape, generator=gen, device=w.device, dtype=w.dtype)

    def accept(e: float) -> float:
        return float(_log_acceptance(_trajectory(u_and_grad, w, p, u, g, e, 1)[-1]).exp().mean())

    up = accept(eps) > 0.5
    for _ in range(60):
        trial = eps * 2.0 if up else eps / 2.0
        if (accept(trial) > 0.5) != up:
            return eps if up else trial
        eps = trial
    return eps


def _log_acceptance(energy_error: Tensor) -> Tensor:
    """[C] log min(1, exp(H₀ − H₁)), −inf where the energy error is NaN (always rejected)."""
    return (-energy_error).nan_to_num(nan=-math.inf).clamp(max=0.0)


def _divergent(energy_error: Tensor) -> Tensor:
    """[C] bool: the trajectory's energy error is above ``DIVERGENT_ENERGY``, NaN or inf."""
    return ~(energy_error <= DIVERGENT_ENERGY)


def _collapsed(eps: float, tau: float, steps: int, it: int, last: Tensor | None) -> DivergenceError:
    """The error for an ε adapted so small that one trajectory would take ``steps`` leapfrog
    steps, with what the previous iteration's trajectories did."""
    if last is None:
        share, chain = 0.0, 0
    else:
        bad = ~torch.isfinite(last)
        share, chain = float(bad.double().mean()), int(bad.nonzero()[0, 0]) if bad.any() else 0
    if share > 0:
        cause = (
            f"{share:.0%} of the last iteration's trajectories ended where U or ∇U is NaN or inf: "
            "they leave the region where K is finite. Pass a shorter `trajectory`, or check K "
            "near w*"
        )
    else:
        cause = (
            "the trajectories kept being rejected at every step size tried: K is too stiff for "
            "this trajectory length at this nβ. Pass a shorter `trajectory` or a larger γ"
        )
    return DivergenceError(
        f"HMC's step size fell to ε = {eps:.3g} in iteration {it}: a trajectory of length "
        f"τ = {tau:.3g} would take {steps:,} leapfrog steps (at most {MAX_LEAPFROG:,})",
        chain=chain,
        step=it,
        cause=cause,
        step_size=eps,
    )
