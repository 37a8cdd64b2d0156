"""The estimator's targets for linear networks, from their L_n in closed form.

* ``true_parameter_target`` — chains localised at the true parameter w*, which is not a minimum
  of L_n: λ − (m − 1)/log nβ − nβ·(L_n(w*) − min L_n) (min L_n exactly, by reduced-rank
  regression);
* ``linear_network_reference`` — λ_β(γ) itself, by Metropolis-adjusted HMC on L_n written through
  its sufficient statistics (``linear_network_potential``), wherever w* lies on the zero set:
  the target away from the origin, where the local λ is the estimand only inside a window of γ
  (docs/exact/local.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

import rlct
from numeric.backend.linalg import one_thread
from numeric.potential.hmc import HMCReference, hmc_llc_potential

from .cases import DLNCase, FactorisedCase, RRRCase
from .errors import InvalidArgumentError
from .models import RegressionProblem, linear_network_min_loss

__all__ = [
    "LinearNetworkReference",
    "ShiftedTarget",
    "linear_network_potential",
    "linear_network_reference",
    "true_parameter_target",
]


@dataclass(frozen=True)
class ShiftedTarget:
    """λ_target = λ − (m − 1)/log nβ − nβ·(L_n(w*) − min L_n), ± half the (m − 1)/log nβ term."""

    value: float
    abserr: float
    source = "λ − (m−1)/log nβ − nβ·(L_n(w*) − min L_n)"


def true_parameter_target(
    case: RRRCase | DLNCase | FactorisedCase,
    prob: RegressionProblem,
    exact: rlct.RLCT,
    nbeta: float,
) -> ShiftedTarget:
    """The target of chains localised at the true parameter w* of a linear network, which is not
    a minimum of L_n: λ̂ = nβ·(E[L_n] − L_n(w*)) loses nβ·(L_n(w*) − min L_n) against an estimate
    at the minimum (min L_n exactly, by reduced-rank regression). This data shift is exact for a
    regular model (it is the closed form's b·H·b term) and first order for a singular one, so
    β·λ stays in σ_bias. It varies from data set to data set: on RRR M = N = H = 2 at n = 10⁴,
    0.05 to 0.71 over seeds 0–11 (λ = 3/2)."""
    m = exact.mult or 1
    bias = (m - 1) / math.log(nbeta)
    shift = nbeta * (
        float(prob.loss_fn(prob.params, prob.data))
        - linear_network_min_loss(case.widths, prob.data)
    )
    return ShiftedTarget(float(exact.lam) - bias - shift, 0.5 * bias)


def linear_network_potential(
    problem: RegressionProblem,
) -> tuple[Callable[[Tensor], Tensor], Tensor]:
    """L_n of a linear network (``regression_problem`` of an RRR, DLN or factorised case) as a
    potential of the flat parameters w [..., D] (W0, W1, … row-major, input layer first; leading
    axes kept), and w* in that order.

    Through the sufficient statistics C = mean x·xᵀ and G = C·P*ᵀ − mean x·yᵀ, with P = W_L⋯W_1
    the product and D = P − P*: L_n(w) = L_n(w*) + tr(D·G) + ½‖D·R‖²_F, R·Rᵀ = C. The difference
    is formed without the cancellation of ½(mean‖y‖² − 2 tr(P·mean x·yᵀ) + tr(P·C·Pᵀ)); a
    step costs O(D) whatever n is, so a sampler of the exact posterior (HMC) can run on it."""
    names = sorted((k for k in problem.params if k.startswith("W")), key=lambda k: int(k[1:]))
    if not names or len(names) != len(problem.params):
        raise InvalidArgumentError(
            f"not a linear network's parameters (W0, W1, …): {sorted(problem.params)}"
        )
    layers = [problem.params[k].detach().double() for k in names]
    shapes = [W.shape for W in layers]
    sizes = [W.numel() for W in layers]
    x, y = (t.double() for t in problem.data)
    n = len(x)
    second = x.T @ x / n
    p_star = _chain_product(layers)  # [out, in]
    g = second @ p_star.T - x.T @ y / n  # [in, out]
    with one_thread():
        s, q = torch.linalg.eigh(second)
    root = q * s.clamp_min(0).sqrt()
    base = float(problem.loss_fn(problem.params, problem.data))
    w_star = torch.cat([W.reshape(-1) for W in layers])

    def potential(w: Tensor) -> Tensor:
        blocks = w.split(sizes, dim=-1)
        d = _chain_product([b.reshape(*w.shape[:-1], *sh) for b, sh in zip(blocks, shapes)])
        d = d - p_star
        return base + (d * g.T).sum((-1, -2)) + 0.5 * (d @ root).square().sum((-1, -2))

    return potential, w_star


@dataclass(frozen=True)
class LinearNetworkReference:
    """λ_β(γ) of a linear network's L_n by HMC (``linear_network_reference``): ``value`` ±
    ``abserr`` at ``nbeta`` and ``gamma`` (the fields ``verification.decide`` reads), the HMC run
    itself, and whether it is usable (no error finding of its own)."""

    value: float
    abserr: float
    nbeta: float
    gamma: float
    hmc: HMCReference
    source = "λ_β(γ), HMC on the closed-form L_n"

    @property
    def usable(self) -> bool:
        return not any(f.severity == "error" for f in self.hmc.diagnostics)


def linear_network_reference(
    problem: RegressionProblem,
    nbeta: float,
    gamma: float,
    *,
    num_chains: int = 8,
    num_draws: int = 300,
    num_burnin: int = 100,
    seed: int = 0,
) -> LinearNetworkReference:
    """λ_β(γ) = nβ·(E[L_n] − L_n(w*)) under exp(−nβ·L_n(w) − γ‖w − w*‖²/2) for a linear network,
    by Metropolis-adjusted HMC (``numeric.hmc_llc_potential``, seed ``seed``) on its closed-form
    L_n (``linear_network_potential``): the estimator's exact target at its nβ and γ, wherever w*
    lies on the zero set, up to the HMC run's standard error."""
    potential, w_star = linear_network_potential(problem)
    ref = hmc_llc_potential(
        potential,
        w_star,
        len(problem.data[0]),
        nbeta=nbeta,
        gamma=gamma,
        num_chains=num_chains,
        num_draws=num_draws,
        num_burnin=num_burnin,
        seed=seed,
    )
    return LinearNetworkReference(ref.mean, ref.stderr, ref.nbeta, ref.gamma, ref)


def _chain_product(layers: Sequence[Tensor]) -> Tensor:
    """W_L⋯W_1 of layers W_1, …, W_L (input first; leading axes broadcast)."""
    out = layers[0]
    for W in layers[1:]:
        out = W @ out
    return out
