"""SGLD against MALA, arm *reproduced?*: the paper's own procedure (issue 62).

Source: ``MALA_vs_SGLD.ipynb`` and ``data/mala_v_sgld_results.json`` of
github.com/edmundlth/validating_lambdahat (commit 375e6fa). There: a haiku ReLU MLP 10-20-20-10
with biases (weights truncated-normal with sd 1/√fan_in, the two hidden biases then redrawn
N(0, 1), the output bias 0), float32, inputs U(−10, 10)¹⁰, noise-free labels y = f_{w*}(x), loss
L(w) = mean over samples *and* outputs of (f_w(x) − y)²; n = round(10^(2…5 in 7 steps));
nβ = n/log n, γ = 1, ε = 10⁻⁵, 10,000 steps, no burn-in, 5 runs (one chain each) per n.
SGLD: batch 32, minibatch loss trace. MALA: numpyro ``HMC`` with one leapfrog step of size √ε
(= MALA with step ε), identity mass, no adaptation, no warm-up, 10,000 draws, full-data trace.

Verdict rule (fixed before any run; ``paper_sampler_verdict``), at each n with per-chain λ̂:
d = mean λ̂_SGLD − mean λ̂_MALA, Welch se and df (``paper_stats.welch``), tolerance
τ = 5% of mean λ̂_MALA (the paper's largest relative gap between the two, 2.8% at n = 31,623,
rounded up). *Agree* at n: TOST at 5% (the 90% interval of d inside ±τ). *Disagree* at n:
|d| > τ and Welch p < 0.01. Agreement holds if every n agrees, fails if some n disagrees.
Cost: r(n) = MALA seconds / SGLD seconds for the same chains on the same machine; the claim
(SGLD 7–30× cheaper; the paper's ratios 6.6–32, ``PAPER_TIME_RATIO``) holds if r(largest n) ≥ 7
and fails otherwise. Reproduced if both hold; not reproduced if either fails; else inconclusive.
The λ̂ levels are shown beside the paper's (``PAPER_LLC``) but are not in the rule: the teacher is
a different random draw (jax's PRNG is not torch's), so its λ̂ need not equal the paper's.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from numeric.sampler import mala

from .paper_sgld import PaperSGLDOptions, paper_sgld
from .paper_stats import WelchDiff, equivalent, welch
from .records import Claim, Measurement, Record, Verdict
from .sgld_mala import mlp_potential

CLAIM = Claim(
    "Lau et al. (2025)",
    "SGLD against MALA (validating_lambdahat, MALA_vs_SGLD.ipynb; data/mala_v_sgld_results.json)",
    "On a 10-20-20-10 ReLU network SGLD's λ̂ agrees with MALA's for n = 10²…10⁵, 7–30× cheaper.",
)
# Published means over 5 runs (data/mala_v_sgld_results.json), by n
PAPER_LLC = {
    100: (54.94, 54.27),
    316: (86.72, 86.36),
    1000: (136.92, 140.01),
    3162: (211.21, 215.40),
    10000: (294.94, 296.18),
    31623: (349.34, 359.10),
    100000: (355.78, 349.13),
}  # n: (SGLD, MALA)
PAPER_TIME_RATIO = {
    100: 9.93, 316: 6.59, 1000: 6.68, 3162: 6.99, 10000: 8.36, 31623: 11.76, 100000: 32.13
}  # fmt: skip
TOLERANCE = 0.05
MIN_SPEEDUP = 7.0


def paper_teacher(widths: Sequence[int], seed: int) -> nn.Sequential:
    """haiku's default MLP in float32: w ~ N(0, 1/fan_in) truncated at 2 sd (haiku's
    TruncatedNormal, sd rescaled by 1/0.8796), hidden biases N(0, 1), output bias 0."""
    g = torch.Generator().manual_seed(seed)
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(widths)):
        lin = nn.Linear(a, b)
        with torch.no_grad():
            sd = 1 / math.sqrt(a) / 0.87962566103423978
            nn.init.trunc_normal_(lin.weight, 0.0, sd, -2 * sd, 2 * sd, generator=g)
            last = i == len(widths) - 2
            lin.bias.copy_(torch.zeros(b) if last else torch.randn(b, generator=g))
        layers += [lin] if i == len(widths) - 2 else [lin, nn.ReLU()]
    return nn.Sequential(*layers)


def paper_data(net: nn.Sequential, n: int, seed: int) -> tuple[Tensor, Tensor]:
    """n inputs U(−10, 10)^d (float32) and their noise-free labels."""
    g = torch.Generator().manual_seed(seed + 1)
    x = 20 * torch.rand(n, net[0].in_features, generator=g) - 10
    with torch.no_grad():
        return x, net(x)


def paper_mse(params: dict[str, Tensor], batch: tuple[Tensor, Tensor], net: nn.Module) -> Tensor:
    """mean over samples and outputs of (f_w(x) − y)², the paper's ``mse_loss``."""
    x, y = batch
    return (torch.func.functional_call(net, params, (x,)) - y).square().mean()


@dataclass(frozen=True)
class MALAResult:
    per_chain: tuple[float, ...]
    acceptance: float
    seconds: float


def plain_mala(
    K: Callable[[Tensor], Tensor], w_star: Tensor, n: int, *, step_size: float, gamma: float, num_steps: int,
    num_chains: int, seed: int,
) -> MALAResult:  # fmt: skip
    """MALA on U = nβ·K + (γ/2)‖w − w*‖², nβ = n/log n, from w*, no warm-up: proposal
    w' = w − (ε/2)∇U(w) + √ε ξ, Metropolis–Hastings accept (the package's step,
    ``numeric.sampler.mala``); λ̂_c = nβ(mean_t K(w_t) − K(w*))."""
    t0 = time.perf_counter()
    g = torch.Generator().manual_seed(seed)
    nbeta = n / math.log(n)

    def u_grad(w: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            k = K(ww)
            u = nbeta * k + 0.5 * gamma * (ww - w_star).square().sum(-1)
            (gr,) = torch.autograd.grad(u.sum(), ww)
        return u.detach(), gr, k.detach()

    state = mala.init(w_star.expand(num_chains, -1).clone(), u_grad)
    total, accepted = torch.zeros(num_chains, dtype=torch.float64), 0.0
    for _ in range(num_steps):
        state, info = mala.step(state, g, u_grad, step_size=step_size)
        total += state.loss.double()
        accepted += float(info.accepted.double().mean())
    k0 = float(K(w_star[None])[0])
    lam = nbeta * (total / num_steps - k0)
    return MALAResult(tuple(float(v) for v in lam), accepted / num_steps, time.perf_counter() - t0)


@dataclass(frozen=True)
class PaperSamplerPoint(Record):
    """Both samplers at one n by the paper's procedure: per-chain λ̂, seconds, their Welch
    difference, MALA's acceptance rate and the paper's published means at this n (nan if none)."""

    n: int
    sgld: tuple[float, ...]
    mala: tuple[float, ...]
    sgld_seconds: float
    mala_seconds: float
    acceptance: float
    diff: WelchDiff
    paper_sgld: float = math.nan
    paper_mala: float = math.nan

    @property
    def time_ratio(self) -> float:
        return self.mala_seconds / self.sgld_seconds

    @property
    def mala_mean(self) -> float:
        return sum(self.mala) / len(self.mala)

    @property
    def sgld_mean(self) -> float:
        return sum(self.sgld) / len(self.sgld)


def paper_sampler_point(
    n: int, *, widths: Sequence[int] = (10, 20, 20, 10), num_steps: int = 10_000,
    num_chains: int = 5, step_size: float = 1e-5, gamma: float = 1.0, batch_size: int = 32,
    seed: int = 0,
) -> PaperSamplerPoint:  # fmt: skip
    """SGLD (``paper_sgld``) and MALA (``plain_mala``) on the paper's teacher at n samples."""
    net = paper_teacher(widths, seed)
    x, y = paper_data(net, n, seed)
    params = {k: v.detach() for k, v in net.named_parameters()}
    opts = PaperSGLDOptions(
        step_size=step_size, num_steps=num_steps, num_chains=num_chains,
        batch_size=min(batch_size, n), gamma=gamma, nbeta="n/log n", burn_in=0,
    )  # fmt: skip
    s = paper_sgld(lambda p, b: paper_mse(p, b, net), params, (x, y), opts, seed=seed)
    w_star = torch.cat([p.detach().flatten() for p in net.parameters()])
    scale = 2.0 / widths[-1]  # mlp_potential is ½·mean_i‖·‖²; the paper's mean is over outputs too
    base = mlp_potential(net, x, y)
    m = plain_mala(
        lambda w: scale * base(w), w_star, n, step_size=step_size, gamma=gamma,
        num_steps=num_steps, num_chains=num_chains, seed=seed + 10_000,
    )  # fmt: skip
    paper = PAPER_LLC.get(n, (math.nan, math.nan))
    return PaperSamplerPoint(
        n, s.per_chain, m.per_chain, s.seconds, m.seconds, m.acceptance,
        welch(s.per_chain, m.per_chain), *paper,
    )  # fmt: skip


def paper_sampler_verdict(points: Sequence[PaperSamplerPoint]) -> Verdict:
    """The rule of the module docstring."""
    if not points:
        raise ValueError("paper_sampler_verdict needs at least one n")
    nums: list[Measurement] = []
    agree, disagree = [], []
    for p in points:
        tol = TOLERANCE * abs(p.mala_mean)
        if equivalent(p.diff, tol):
            agree.append(p.n)
        if abs(p.diff.diff) > tol and p.diff.p < 0.01:
            disagree.append(p.n)
        nums += [
            Measurement(f"λ̂ SGLD − MALA at n = {p.n}", p.diff.diff, p.diff.stderr),
            Measurement(f"Welch df at n = {p.n}", p.diff.df),
            Measurement(f"MALA time / SGLD time at n = {p.n}", p.time_ratio),
        ]
    last = max(points, key=lambda p: p.n)
    cost_ok = last.time_ratio >= MIN_SPEEDUP
    ns = f"n = {points[0].n}…{last.n}"
    text = (
        f"{ns}: agreement within ±{TOLERANCE:.0%} (TOST 5%) at n = {agree}, "
        f"a significant gap beyond it at n = {disagree}; MALA took {last.time_ratio:.1f}× SGLD's "
        f"time at n = {last.n} (the paper: {PAPER_TIME_RATIO.get(last.n, math.nan):.1f}×)."
    )
    if disagree or not cost_ok:
        return Verdict(CLAIM, "not reproduced", tuple(nums), text)
    if len(agree) == len(points):
        return Verdict(CLAIM, "reproduced", tuple(nums), text)
    return Verdict(CLAIM, "inconclusive", tuple(nums), text)


@dataclass(frozen=True)
class PaperSamplerResult:
    points: tuple[PaperSamplerPoint, ...]
    verdict: Verdict


def paper_sampler_claim(ns: Sequence[int], **kw: Any) -> PaperSamplerResult:
    """The paper arm at each n of ``ns`` (``paper_sampler_point``'s keywords)."""
    pts = tuple(paper_sampler_point(int(n), **kw) for n in ns)
    return PaperSamplerResult(pts, paper_sampler_verdict(pts))
