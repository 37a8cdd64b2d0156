"""Rescaling invariance, arm *reproduced?*: the paper's own procedure (issue 62).

Source: ``rescaling_invariance.ipynb`` and ``data/llc_rescaling_results_3.json`` of
github.com/edmundlth/validating_lambdahat (commit 375e6fa; the notebook's last configuration,
whose output file is ``_3``). There: a haiku ReLU MLP 30-40-30 (hidden biases N(0, 1), output bias
0), float32, with hidden units 1, 2, 3, 4, 5, 8 copies of unit 0 (incoming weights and bias: the
copied-column degeneracy); n = 10,000 inputs U(−10, 10)³⁰, noise-free labels, loss the mean over
samples and outputs of the squared error. At T_α(w*) = (αW₁, αb₁, W₂/α, b₂), for 17 values
α = 10^(−4…4), 5 runs each (a fresh PRNG key per run and α): SGLD in w-coordinates with the
per-layer preconditioner P = α² (W₁, b₁), α⁻² (W₂), 1 (b₂):

    Δw = −(ε/2)·P·nβ·∇L_B(w) + N(0, ε·P),   ε = 10⁻⁵, γ = 0, nβ = n/log n,

batches of 500 in order (no shuffle), 10,000 steps, the *full-data* loss after each step as the
trace, no burn-in, λ̂ = nβ·(mean trace − L_n(T_α w*)). Published: λ̂ ≈ 1,110 at every α
(``PAPER_MEANS``; per-α means 1,101.8–1,118.5, run sd 5–17).

In exact arithmetic this process at α is the α = 1 process mapped by T_α (the preconditioner is
the metric T_α induces), so invariance holds by construction in law; what this arm can detect is
the float32 implementation failing at extreme α, and sampling noise. It is not counted as
evidence beyond that (the *true?* arm, ``rescaling.rescaling_claim``, is the package's estimator).

Verdict rule (fixed before any run; ``paper_rescaling_verdict``): per-chain λ̂ at each α
(independent chains, a different seed per α). Flat: one-way ANOVA across α has p ≥ 0.01 *and*
every per-α mean is within 5% of the grand mean. Reproduced if flat; not reproduced if ANOVA
p < 0.01 and some per-α mean is more than 5% off; else inconclusive. The level is shown beside the
paper's 1,110 but is not in the rule (the teacher is a different random draw).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .paper_stats import anova_p
from .records import Claim, Measurement, Record, Verdict
from .sgld_mala_paper import paper_data, paper_teacher

CLAIM = Claim(
    "Furman & Lau (2024), in Lau et al. (2025)",
    "§4 rescaling invariance (validating_lambdahat, rescaling_invariance.ipynb; "
    "data/llc_rescaling_results_3.json)",
    "With the rescaling-aware preconditioner, λ̂ of a ReLU network is unchanged for α = 10⁻⁴…10⁴.",
)
# data/llc_rescaling_results_3.json: α → mean of 5 runs
PAPER_MEANS = {
    1e-4: 1109.6, 1e-3: 1107.5, 1e-2: 1101.8, 1e-1: 1113.6, 1.0: 1106.8,
    1e1: 1103.4, 1e2: 1118.4, 1e3: 1113.7, 1e4: 1104.0,
}  # fmt: skip
COPIES = (1, 2, 3, 4, 5, 8)
MAX_REL_DEV = 0.05


def degenerate_teacher(widths: Sequence[int] = (30, 40, 30), seed: int = 0) -> torch.nn.Sequential:
    """``paper_teacher`` with hidden units ``COPIES`` set equal to unit 0 (weights and bias)."""
    net = paper_teacher(widths, seed)
    with torch.no_grad():
        for j in COPIES:
            net[0].weight[j] = net[0].weight[0]
            net[0].bias[j] = net[0].bias[0]
    return net


def _loss(ws: list[Tensor], x: Tensor, y: Tensor) -> Tensor:
    """Per-chain mean squared error of the two-layer network with chain-batched weights."""
    w1, b1, w2, b2 = ws
    h = torch.relu(torch.einsum("bd,chd->cbh", x, w1) + b1[:, None])
    out = torch.einsum("cbh,coh->cbo", h, w2) + b2[:, None]
    return (out - y).square().mean((1, 2))


@dataclass(frozen=True)
class PaperRescalingPoint(Record):
    alpha: float
    per_chain: tuple[float, ...]
    paper: float = math.nan

    @property
    def mean(self) -> float:
        return float(np.mean(self.per_chain))


def paper_rescaling_points(
    alphas: Sequence[float], *, n: int = 10_000, num_steps: int = 10_000, num_chains: int = 5,
    batch_size: int = 500, step_size: float = 1e-5, trace_every: int = 10, seed: int = 0,
) -> tuple[tuple[PaperRescalingPoint, ...], float]:  # fmt: skip
    """λ̂ at T_α(w*) for every α, all α's chains in one batch; α number i draws its noise from
    seed + i. ``trace_every`` thins the full-data trace (the paper: 1). Returns points, seconds."""
    t0 = time.perf_counter()
    net = degenerate_teacher(seed=seed)
    x, y = paper_data(net, n, seed)
    base = [net[0].weight, net[0].bias, net[2].weight, net[2].bias]
    a = torch.tensor([float(v) for v in alphas for _ in range(num_chains)])
    scale = [a[:, None, None], a[:, None], 1 / a[:, None, None], torch.ones_like(a)[:, None]]
    star = [s * p.detach()[None] for s, p in zip(scale, base)]
    precond = [s.square().expand_as(w) for s, w in zip(scale, star)]
    gens = [torch.Generator().manual_seed(seed + i) for i in range(len(alphas))]
    nbeta = n / math.log(n)
    ws = [w.clone() for w in star]
    init = _loss(star, x, y).double()
    total, count = torch.zeros_like(init), 0
    per_epoch = n // batch_size
    for t in range(num_steps):
        j = t % per_epoch
        xb, yb = x[j * batch_size : (j + 1) * batch_size], y[j * batch_size : (j + 1) * batch_size]
        ws = [w.detach().requires_grad_(True) for w in ws]
        grads = torch.autograd.grad(_loss(ws, xb, yb).sum(), ws)
        with torch.no_grad():
            new = []
            for w, g, p in zip(ws, grads, precond):
                shape = (num_chains, *w.shape[1:])
                noise = torch.cat([torch.randn(shape, generator=gen) for gen in gens])
                new.append(w - 0.5 * step_size * p * nbeta * g + (step_size * p).sqrt() * noise)
            ws = new
            if (t + 1) % trace_every == 0:
                total += _loss(ws, x, y).double()
                count += 1
    lam = (nbeta * (total / count - init)).reshape(len(alphas), num_chains)
    if not bool(torch.isfinite(lam).all()):
        raise FloatingPointError("the preconditioned SGLD diverged at some α")
    pts = tuple(
        PaperRescalingPoint(float(al), tuple(float(v) for v in row), _paper(float(al)))
        for al, row in zip(alphas, lam)
    )
    return pts, time.perf_counter() - t0


def _paper(alpha: float) -> float:
    for k, v in PAPER_MEANS.items():
        if math.isclose(k, alpha, rel_tol=1e-6):
            return v
    return math.nan


def paper_rescaling_verdict(points: Sequence[PaperRescalingPoint]) -> Verdict:
    """The rule of the module docstring."""
    if len(points) < 2:
        raise ValueError("paper_rescaling_verdict needs at least two values of α")
    p = anova_p([q.per_chain for q in points])
    grand = float(np.mean([q.mean for q in points]))
    dev = max(abs(q.mean / grand - 1) for q in points)
    nums = [Measurement(f"λ̂ at α = {q.alpha:g}", q.mean) for q in points]
    nums += [Measurement("ANOVA p across α", p), Measurement("max |mean_α/grand − 1|", dev)]
    text = (
        f"α = {points[0].alpha:g}…{points[-1].alpha:g}: grand mean λ̂ = {grand:.1f} (the paper "
        f"1,110 on its own teacher draw), ANOVA p = {p:.2g}, largest per-α deviation {dev:.1%}."
    )
    if p >= 0.01 and dev <= MAX_REL_DEV:
        return Verdict(CLAIM, "reproduced", tuple(nums), text)
    if p < 0.01 and dev > MAX_REL_DEV:
        return Verdict(CLAIM, "not reproduced", tuple(nums), text)
    return Verdict(CLAIM, "inconclusive", tuple(nums), text)
