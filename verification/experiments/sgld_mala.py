"""Claim 2: SGLD and MALA give the same LLC as n grows (Lau et al. 2025, the MALA comparison).

A small ReLU MLP with biases is its own teacher: labels are y = f_{w*}(x), noise-free, so w* is an
exact minimum of L_n (L_n(w*) = 0) at every n. SGLD is ``numeric.estimate_llc`` on the data with
minibatches; MALA is ``numeric.estimate_llc_potential`` on K(w) = L_n(w), the full-data loss
written as a potential of the flat parameter vector (vectorised over chains): exact gradients
and a Metropolis correction, so its only errors are Monte Carlo ones. Both target
nβ·(E_β[L_n] − L_n(w*)) at the same nβ = n/log n and γ.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

import numeric

from .llc import LLCPoint, llc_at, mse_loss, point
from .networks import relu_mlp
from .records import Claim, Measurement, Record, Verdict, z_score

CLAIM = Claim(
    "Lau et al. (2025)",
    "SGLD against MALA (appendix figure: LLC estimates of both samplers as n grows)",
    "On a small ReLU network the SGLD estimate agrees with the MALA estimate within their errors, "
    "for n from 100 to 10⁵, at a fraction of MALA's cost.",
)


def mlp_potential(net: nn.Sequential, x: Tensor, y: Tensor) -> Callable[[Tensor], Tensor]:
    """K(w) = ½·mean_i ‖y_i − f_w(x_i)‖² for the Linear/ReLU stack ``net``, w flat in the order
    of ``net.parameters()``, with any leading (chain) axes."""
    shapes = [
        (m.out_features, m.in_features, m.bias is not None) for m in net if isinstance(m, nn.Linear)
    ]

    def K(w: Tensor) -> Tensor:
        lead, pos, h = w.shape[:-1], 0, x.expand(*w.shape[:-1], *x.shape)
        for i, (o, a, bias) in enumerate(shapes):
            W = w[..., pos : pos + o * a].reshape(*lead, o, a)
            pos += o * a
            h = h @ W.transpose(-1, -2)
            if bias:
                h = h + w[..., pos : pos + o].unsqueeze(-2)
                pos += o
            if i < len(shapes) - 1:
                h = torch.relu(h)
        return 0.5 * (h - y).square().sum(-1).mean(-1)

    return K


@dataclass(frozen=True)
class SamplerPair(Record):
    """SGLD and MALA at one n, and their difference in standard errors."""

    n: int
    sgld: LLCPoint
    mala: LLCPoint
    z: float


@dataclass(frozen=True)
class SamplerResult:
    pairs: tuple[SamplerPair, ...]
    verdict: Verdict


def sampler_pair(
    widths: Sequence[int],
    n: int,
    *,
    seed: int = 0,
    num_chains: int = 4,
    sgld: dict[str, Any] | None = None,
    mala: dict[str, Any] | None = None,
) -> SamplerPair:
    """Both estimates at the teacher ``relu_mlp(widths)`` (seed ``seed``) with n inputs N(0, I)."""
    g = torch.Generator().manual_seed(seed)
    net = relu_mlp(widths, generator=g, dtype=torch.float64)
    x = torch.randn(n, widths[0], generator=g, dtype=torch.float64)
    with torch.no_grad():
        y = net(x)
    s, _ = llc_at(net, mse_loss, (x, y), num_chains=num_chains, seed=seed, **(sgld or {}))
    w_star = torch.cat([p.detach().flatten() for p in net.parameters()])
    t0 = time.perf_counter()
    est = numeric.estimate_llc_potential(
        mlp_potential(net, x, y), w_star, n, num_chains=num_chains, seed=seed, **(mala or {})
    )
    m = point(est, 0, time.perf_counter() - t0)
    return SamplerPair(n, s, m, z_score(s.llc, s.stderr, m.llc, m.stderr))


def sampler_verdict(pairs: Sequence[SamplerPair], z_max: float = 3.0) -> Verdict:
    """Reproduced if every |z| ≤ ``z_max`` and no estimate has an error finding; not reproduced
    if some |z| > ``z_max`` with neither estimate flagged as an error; else inconclusive."""
    worst = max(pairs, key=lambda p: abs(p.z))
    flagged = [p.n for p in pairs if not (p.sgld.ok and p.mala.ok)]
    clean_miss = [p.n for p in pairs if abs(p.z) > z_max and p.sgld.ok and p.mala.ok]
    speed = sum(p.mala.seconds for p in pairs) / sum(p.sgld.seconds for p in pairs)
    nums = (
        *tuple(Measurement(f"z(SGLD − MALA) at n = {p.n}", p.z) for p in pairs),
        Measurement("MALA time / SGLD time", speed),
    )
    ns = f"n = {pairs[0].n}…{pairs[-1].n}"
    if all(abs(p.z) <= z_max for p in pairs) and not flagged:
        outcome, text = (
            "reproduced",
            f"{ns}: all |z| ≤ {z_max:g} (largest {worst.z:+.2f} at n = {worst.n}).",
        )
    elif clean_miss:
        outcome = "not reproduced"
        text = f"{ns}: SGLD and MALA differ by {worst.z:+.1f} standard errors at n = {worst.n}."
    else:
        outcome = "inconclusive"
        text = f"{ns}: largest |z| {abs(worst.z):.2f} at n = {worst.n}; error findings at n = {flagged}."
    return Verdict(CLAIM, outcome, nums, text + f" MALA took {speed:.1f}× SGLD's time.")


def sampler_claim(
    widths: Sequence[int], ns: Sequence[int], *, seed: int = 0, **kw: Any
) -> SamplerResult:
    pairs = tuple(sampler_pair(widths, n, seed=seed, **kw) for n in ns)
    return SamplerResult(pairs, sampler_verdict(pairs))
