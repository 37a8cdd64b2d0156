"""Claim 1 (deep linear networks), arm *reproduced?*: the authors' own sweep (issue 62).

Source: ``gen_commands_expt_dln.py``, ``expt_dln.py``, ``dln.py``, ``utils.py`` and
``plots_final.ipynb`` of github.com/edmundlth/validating_lambdahat (commit 375e6fa); the figure's
smallest sweep is ``rand_rank_batch500_width5-50_layer2-5_trainTrue_n100000_eps5e-07_nstep10000``.
There, for each seed:

* widths: L = randint(2, 5) layers (2–4) of widths randint(5, 50) each (5–49; the last is the
  output), input width randint(5, 50); no biases;
* the true parameter: haiku's default init (truncated normal on ±2σ, σ = 1/√fan_in), then each
  matrix, with probability ``prop_rank_reduce`` = 0.5, has its rank r lowered by randint(0, r)
  (its smallest singular values set to 0);
* n = 10⁵ inputs U(−10, 10), noise-free labels y = P*x, the loss the mean over samples *and*
  outputs of (f_w(x) − y)², float32;
* plain SGLD (``paper_sgld``): ε = 5·10⁻⁷, γ = 1, nβ = n/log n, batches of 500, minibatch trace,
  10,000 steps, one chain; λ̂ from the last 10% of the trace (``BURN_IN_PROP = 0.9``);
* the λ it is plotted against: Aoyagi's formula at the rank of the product P* (the paper's
  ``true_dln_learning_coefficient(true_rank, …)``).

What differs here, said once: torch's generator, not jax's (our own teacher draws); each matrix's
rank reduction drawn on its own (the paper's code reuses one key for every matrix, so matrices of
equal rank get equal reductions); ``num_chains`` chains per network, vectorised (the paper: one).

Verdict rule (fixed before any run; ``paper_dln_verdict``). Over the k networks with paper λ > 0:
the ordinary least-squares fit log λ̂ = a + b·log λ over those with λ̂ > 0, the 95% interval of the
slope b with Student's t at k − 2 degrees of freedom, and ρ = median λ̂/λ. The paper's Fig. 1
claims points on the diagonal of a log–log plot: *reproduced* if at least 5 networks are fitted,
the interval lies inside [0.9, 1.1] and |ρ − 1| ≤ 0.15; *not reproduced* if the interval misses
[0.9, 1.1], |ρ − 1| > 0.3, or more than a quarter of the λ̂ are ≤ 0; *inconclusive* otherwise.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

import numeric
import rlct

from .._validate import check_int
from ..errors import InvalidArgumentError
from .local_rank import LocalRank, local_rank
from .networks import deep_linear, linear_product
from .paper_sgld import PaperSGLDOptions, paper_sgld
from .paper_stats import LogLogFit, loglog_fit
from .records import Claim, Measurement, Record, Verdict

CLAIM = Claim(
    "Lau et al. (2025)",
    "Fig. 1 (validating_lambdahat, expt_dln.py; plots_final.ipynb, λ̂ with 90% burn-in)",
    "At the true parameter of a deep linear network the SGLD estimate λ̂ lies on the diagonal "
    "λ̂ = λ of a log–log plot against Aoyagi's λ at the true map's rank.",
)
# The sweep's settings (gen_commands_expt_dln.py, the 5–50 sweep of plots_final.ipynb)
PAPER_WIDTHS = (5, 50)  # randint bounds, the upper one excluded
PAPER_LAYERS = (2, 5)
PAPER_N = 100_000
PAPER_OPTIONS = PaperSGLDOptions(
    step_size=5e-7, num_steps=10_000, num_chains=1, batch_size=500, gamma=1.0,
    nbeta="n/log n", burn_in=0.9,
)  # fmt: skip
SLOPE_BAND = (0.9, 1.1)
LEVEL_TOL, LEVEL_FAIL = 0.15, 0.3


@dataclass(frozen=True)
class PaperDLNTeacher(Record):
    """A teacher of the paper's sweep: widths (input first), the seed of its draw, each layer's
    rank, the product's rank, the paper's λ (Aoyagi at the product's rank, m) and the local λ at
    this factorisation (``local``: the closed form at its partial products' ranks)."""

    widths: tuple[int, ...]
    seed: int
    layer_ranks: tuple[int, ...]
    rank: int
    lam: float
    mult: int
    local: LocalRank

    @property
    def num_params(self) -> int:
        return sum(a * b for a, b in itertools.pairwise(self.widths))

    def layers(self, dtype: torch.dtype = torch.float64) -> list[Tensor]:
        """W_1, …, W_L (input first, W_k of shape h_k × h_(k−1)), redrawn from ``seed``."""
        return _draw_layers(self.widths, self.layer_ranks, self.seed, dtype)

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["widths"] = "-".join(map(str, self.widths))
        out["layer_ranks"] = ",".join(map(str, self.layer_ranks))
        out["num_params"] = self.num_params
        return out


def _draw_layers(
    widths: Sequence[int], ranks: Sequence[int], seed: int, dtype: torch.dtype
) -> list[Tensor]:
    """haiku's default init (σ = 1/√fan_in, truncated at ±2σ) in float64, each matrix's smallest
    singular values then set to zero down to its rank."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for (a, b), r in zip(itertools.pairwise(widths), ranks, strict=True):
        sd = 1 / math.sqrt(a)
        W = torch.nn.init.trunc_normal_(
            torch.empty(b, a, dtype=torch.float64), 0.0, sd, -2 * sd, 2 * sd, generator=g
        )
        if r < min(a, b):
            U, S, Vh = torch.linalg.svd(W, full_matrices=False)
            W = (U[:, :r] * S[:r]) @ Vh[:r]
        out.append(W.to(dtype))
    return out


def paper_dln_teacher(
    generator: torch.Generator,
    *,
    width_range: tuple[int, int] = PAPER_WIDTHS,
    layer_range: tuple[int, int] = PAPER_LAYERS,
    prop_rank_reduce: float = 0.5,
) -> PaperDLNTeacher:
    """One draw of the paper's sweep (module docstring); ranges as numpy's randint (high
    excluded)."""
    lo, hi = width_range
    if not 1 <= lo < hi or not 1 <= layer_range[0] < layer_range[1]:
        raise InvalidArgumentError(f"bad ranges: widths {width_range}, layers {layer_range}")
    if not 0 <= prop_rank_reduce <= 1:
        raise InvalidArgumentError(f"prop_rank_reduce must lie in [0, 1], got {prop_rank_reduce}")

    def randint(a: int, b: int) -> int:
        return int(torch.randint(a, b, (), generator=generator))

    depth = randint(*layer_range)
    hidden = [randint(lo, hi) for _ in range(depth)]
    widths = (randint(lo, hi), *hidden)
    ranks = []
    for a, b in itertools.pairwise(widths):
        r = min(a, b)
        if float(torch.rand((), generator=generator)) < prop_rank_reduce:
            r -= randint(0, max(1, r))
        ranks.append(r)
    seed = randint(0, 2**31 - 1)
    local = local_rank(_draw_layers(widths, ranks, seed, torch.float64))
    exact = rlct.deep_linear_network(list(widths), local.product_rank)
    return PaperDLNTeacher(
        widths, seed, tuple(ranks), local.product_rank, float(exact.lam), int(exact.mult), local
    )


def paper_dln_data(
    teacher: PaperDLNTeacher, n: int, seed: int, dtype: torch.dtype = torch.float32
) -> tuple[Tensor, Tensor]:
    """n inputs U(−10, 10) and their noise-free labels P*x, from ``seed``."""
    check_int("n", n, 1)
    g = torch.Generator().manual_seed(seed)
    x = 20 * torch.rand(n, teacher.widths[0], generator=g, dtype=torch.float64) - 10
    return x.to(dtype), (x @ linear_product(teacher.layers()).T).to(dtype)


def paper_mse(pred: Tensor, y: Tensor) -> Tensor:
    """The paper's loss: mean over samples and outputs of (f_w(x) − y)²."""
    return (pred - y).square().mean()


def teacher_module(teacher: PaperDLNTeacher, dtype: torch.dtype) -> torch.nn.Sequential:
    """A ``deep_linear`` network holding the teacher's layers."""
    net = deep_linear(teacher.widths, generator=torch.Generator().manual_seed(0), dtype=dtype)
    net.load_state_dict({f"{i}.weight": W for i, W in enumerate(teacher.layers(dtype))})
    return net


@dataclass(frozen=True)
class PaperDLNPoint(Record):
    """The paper procedure's λ̂ at one teacher's true parameter (``stderr`` NaN for one chain)."""

    teacher: PaperDLNTeacher
    n: int
    llc: float
    stderr: float
    seconds: float

    @property
    def ratio(self) -> float:
        """λ̂ over the paper's λ."""
        return self.llc / self.teacher.lam if self.teacher.lam else math.nan


def paper_dln_point(
    teacher: PaperDLNTeacher,
    n: int = PAPER_N,
    options: PaperSGLDOptions = PAPER_OPTIONS,
    *,
    seed: int = 0,
    device: str | torch.device = "cpu",
) -> PaperDLNPoint:
    """λ̂ of the paper procedure at ``teacher``'s true parameter on ``seed``'s n samples (float32,
    the paper's dtype, on ``device``); the chains' noise and batches from ``seed`` + 1."""
    data = paper_dln_data(teacher, n, seed)
    net = teacher_module(teacher, torch.float32).to(device)
    loss_fn, w_star = numeric.from_module(net, paper_mse)
    res = paper_sgld(loss_fn, w_star, data, options, seed=seed + 1)
    return PaperDLNPoint(teacher, n, res.mean, res.stderr, res.seconds)


@dataclass(frozen=True)
class PaperDLNResult:
    points: tuple[PaperDLNPoint, ...]
    fit: LogLogFit | None
    verdict: Verdict


def paper_dln_verdict(
    pairs: Sequence[tuple[float, float]], what: str = "λ̂"
) -> tuple[LogLogFit | None, Verdict]:
    """The module docstring's rule on (λ, λ̂) pairs, with λ > 0 (the others are left out)."""
    pairs = [(lam, est) for lam, est in pairs if lam > 0]
    positive = [(lam, est) for lam, est in pairs if math.isfinite(est) and est > 0]
    bad = len(pairs) - len(positive)
    if len(positive) < 3:
        return None, Verdict(
            CLAIM, "inconclusive", (Measurement("networks fitted", len(positive)),),
            f"{len(positive)} networks with λ > 0 and {what} > 0: too few to fit a slope.",
        )  # fmt: skip
    fit = loglog_fit([p[0] for p in positive], [p[1] for p in positive])
    lo, hi = fit.interval(0.95)
    rho = fit.median_ratio
    nums = (
        Measurement("slope b of log λ̂ on log λ", fit.slope, fit.stderr),
        Measurement("95% interval of b, low", lo),
        Measurement("95% interval of b, high", hi),
        Measurement("median λ̂/λ", rho),
        Measurement("networks fitted", len(positive)),
        Measurement(f"networks with {what} ≤ 0 or not finite", bad),
    )
    text = (
        f"{len(positive)} networks: slope {fit.slope:.3f} (95% [{lo:.3f}, {hi:.3f}], df "
        f"{fit.df}), median {what}/λ = {rho:.3f}, {bad} with {what} ≤ 0"
    )
    band_lo, band_hi = SLOPE_BAND
    if hi < band_lo or lo > band_hi or abs(rho - 1) > LEVEL_FAIL or 4 * bad > len(pairs):
        return fit, Verdict(CLAIM, "not reproduced", nums, text + ".")
    if len(positive) >= 5 and band_lo <= lo and hi <= band_hi and abs(rho - 1) <= LEVEL_TOL:
        return fit, Verdict(CLAIM, "reproduced", nums, text + ".")
    return fit, Verdict(
        CLAIM, "inconclusive", nums,
        text + f" (reproduced needs ≥ 5 networks, the interval inside [{band_lo}, {band_hi}] "
        f"and |median − 1| ≤ {LEVEL_TOL}).",
    )  # fmt: skip


def paper_dln_claim(
    teachers: Sequence[PaperDLNTeacher],
    n: int = PAPER_N,
    options: PaperSGLDOptions = PAPER_OPTIONS,
    *,
    seed: int = 0,
    progress: bool = False,
    device: str | torch.device = "cpu",
) -> PaperDLNResult:
    """The paper procedure at every teacher (each on its own samples, seed + 2i), and the
    verdict against the paper's λ."""
    points = []
    for i, t in enumerate(teachers):
        t0 = time.perf_counter()
        points.append(paper_dln_point(t, n, options, seed=seed + 2 * i, device=device))
        if progress:
            p = points[-1]
            print(
                f"{'-'.join(map(str, t.widths))} (D = {t.num_params}, r = {t.rank}): λ̂ = "
                f"{p.llc:.4g}, λ = {t.lam:g}, local {t.local.lam_exact} "
                f"({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
    fit, verdict = paper_dln_verdict([(p.teacher.lam, p.llc) for p in points])
    return PaperDLNResult(tuple(points), fit, verdict)
