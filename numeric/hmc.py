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

ε is adapted during the burn-in iterations towards an acceptance of ``TARGET_ACCEPTANCE``
(multiplicatively, by the acceptance of each iteration), then fixed; the estimate, its error,
ESS and R-hat come from the draws after burn-in, one value of nβ·(K − K(w*)) per chain and
iteration, with the statistics every estimate uses (``result.chain_stats``). On a 339-parameter
deep linear network at its true parameter (n = 10⁴, γ = 1) 16 chains gave λ_β = 13.80 ± 0.10
(ESS 1,822) where plain MALA gave 13.55 ± 0.38 with ``slow_mixing`` and SGLD with BAOAB at ξ = 2
read 15.3–16.5; on another (15-8-8-10-7) 37.81 ± 0.15, where MALA's runs had read 37.6 and 40.9
(``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from numeric.memory import require_memory
from numeric.options import as_seed, check_dtype, check_int, check_real, default_nbeta
from numeric.potential import as_w_star, check_potential, require_finite_gradient
from numeric.potential_steps import Potential
from numeric.result import chain_stats

__all__ = ["HMCReference", "hmc_llc_potential"]

TARGET_ACCEPTANCE = 0.75
MAX_LEAPFROG = 100_000  # leapfrog steps of one trajectory: a bound on an ε adapted to nothing


@dataclass(frozen=True)
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
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> HMCReference:
    """λ_β of ``K`` at ``w_star`` (a vector: list, array or tensor, on its device) for sample size
    ``n`` by HMC (module docstring), in ``dtype``. ``trajectory`` τ defaults to (π/2)/√γ, a quarter period of the directions held by
    γ alone; ``step_size`` is the starting ε of the adaptation. The chains start at w*."""
    check_int("n", n, 2)
    check_real("nbeta", nbeta, low=0.0, strict=True, optional=True)
    check_dtype(dtype, optional=False)
    nbeta_v, _ = default_nbeta(n, nbeta)
    check_real("gamma", gamma, low=0.0, strict=True)
    check_int("num_chains", num_chains, 2)
    check_int("num_draws", num_draws, 4)
    check_int("num_burnin", num_burnin, 0)
    check_real("trajectory", trajectory, low=0.0, strict=True, optional=True)
    check_real("step_size", step_size, low=0.0, strict=True)
    seed = as_seed(seed)
    tau = (math.pi / 2) / math.sqrt(gamma) if trajectory is None else float(trajectory)
    w0 = as_w_star(w_star, None, dtype)
    require_memory(  # the trace of nβ·(K − K(w*)), float64 in host memory
        {"the trace": num_chains * num_draws * 8},
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
    eps = float(step_size)
    trace = np.empty((num_chains, num_draws))
    accepted = 0.0
    for it in range(num_burnin + num_draws):
        p = torch.randn(w.shape, generator=gen, device=w.device, dtype=w.dtype)
        jitter = 0.5 + float(torch.rand((), generator=gen, device=w.device))
        steps = min(MAX_LEAPFROG, max(1, math.ceil(jitter * tau / eps)))
        h0 = u + 0.5 * p.square().sum(-1)
        x, q, gx = w, p - 0.5 * eps * g, g
        for s in range(steps):
            x = x + eps * q
            ux, gx, lx = u_and_grad(x)
            if s + 1 < steps:
                q = q - eps * gx
        q = q - 0.5 * eps * gx
        h1 = ux + 0.5 * q.square().sum(-1)
        log_a = (h0 - h1).nan_to_num(nan=-math.inf).clamp(max=0.0)
        ok = torch.rand(num_chains, generator=gen, device=w.device, dtype=w.dtype).log() < log_a
        w = torch.where(ok[:, None], x, w)
        u, g, lk = torch.where(ok, ux, u), torch.where(ok[:, None], gx, g), torch.where(ok, lx, lk)
        rate = float(log_a.exp().mean())
        if it < num_burnin:  # ε towards the target acceptance, then fixed
            eps *= math.exp(rate - TARGET_ACCEPTANCE)
        else:
            trace[:, it - num_burnin] = lk.double().cpu().numpy()
            accepted += float(ok.double().mean())
    st = chain_stats(trace, 1.0)
    return HMCReference(
        st.mean,
        st.stderr,
        st.per_chain,
        st.ess,
        st.rhat,
        accepted / num_draws,
        eps,
        tau,
        nbeta_v,
        gamma,
        num_draws,
        num_burnin,
        trace,
    )
