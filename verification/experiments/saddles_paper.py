"""Claim 4 (saddle-to-saddle: λ̂ steps up with each drop of the loss) by the authors' own procedure.

**Reproduced?** The authors' code (``edmundlth/validating_lambdahat`` @ 375e6fa,
``expt_dln_saddle_dynamics.py`` at its defaults), as run here (``PAPER_SADDLE``,
``paper_saddle_run``):

* the teacher 10·diag(1, 2, 3, 4, 5), n = 10⁴ inputs N(0, I₅), noise-free targets;
* a deep linear network 5-10-10-10-10-5 without biases (4 hidden layers of 10, 400 parameters),
  entries N(0, σ²) with σ² = 10^(−1.5);
* SGD at lr 10⁻⁴, batches of 128 from a fresh shuffle each epoch (the last partial batch
  dropped), 20,000 steps; the loss the mean over all n × 5 entries of (ŷ − y)²;
* every 50 steps, λ̂ by plain SGLD (``paper_sgld``) from the checkpoint w_t, ε = 10⁻⁶, γ = 1,
  nβ = n/log n, one chain of 100 steps, batches of 128, no burn-in, on the **realisable** targets
  y = f(x; w_t) (the network's own outputs at the checkpoint, so w_t is a global minimum of the
  loss the chain samples and L_n(w_t) = 0), against Aoyagi's λ of the learned rank
  (``rlct.deep_linear_network``).

What differs, each said once: our own draws of the data, the initialisation and the noise
(torch, not jax's PRNG); the learned rank k read as the number of the product's singular values
above 5 (half the teacher's smallest), where the authors' ``matrix_rank`` at float32 tolerance
counts the unlearned modes too.

**True?** The exact λ of the learned rank, λ_k = ``rlct.deep_linear_network(widths, k)``: the
realisable targets make w_t a minimum, so λ_k is what λ̂ estimates as n grows. And the package's
estimator (its defaults, γ = 1) on the same realisable targets at the middle checkpoint of each
learned rank (``plateau_middles``); its findings say where an estimate cannot be used.

Rule (fixed before the runs, ``saddles.steps_up``): the mean λ̂ per learned rank rises by more than
two standard errors from each rank to the next, every estimate is valid (λ̂ > 0), and the mean
λ̂ lies within 25% of λ_k at every rank with λ_k > 0; with one chain per checkpoint, a rank's
standard error is the spread of its checkpoints' λ̂ over √(their number). Reproduced if both hold;
not reproduced otherwise; inconclusive where training reached a single rank.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

import numeric
import rlct

from .._validate import check_int, check_real
from ..errors import InvalidArgumentError
from .llc import llc_at, paper_llc_point
from .networks import deep_linear, num_params
from .optimizers import sgd
from .paper_sgld import PaperSGLDOptions, paper_sgld
from .records import Record, Verdict
from .saddles import SaddlePoint, learned_rank, product, saddle_verdict
from .training import TrainingRun, train


@dataclass(frozen=True)
class PaperSaddle(Record):
    """The authors' settings (module docstring)."""

    teacher: tuple[float, ...] = (10.0, 20.0, 30.0, 40.0, 50.0)
    hidden: tuple[int, ...] = (10, 10, 10, 10)
    init_variance: float = 10**-1.5
    n: int = 10_000
    lr: float = 1e-4
    batch_size: int = 128
    steps: int = 20_000
    every: int = 50

    def __post_init__(self) -> None:
        """Every setting checked before any training (a bad one names itself)."""
        if not self.teacher or not self.hidden:
            raise InvalidArgumentError("teacher and hidden must each list at least one value")
        for i, t in enumerate(self.teacher):
            check_real(f"teacher[{i}]", t, 0.0, open_lo=True)
        for i, h in enumerate(self.hidden):
            check_int(f"hidden[{i}]", h, 1)
        check_real("init_variance", self.init_variance, 0.0, open_lo=True)
        check_real("lr", self.lr, 0.0, open_lo=True)
        check_int("n", self.n, 2)
        check_int(f"batch_size (n = {self.n})", self.batch_size, 1, self.n)
        check_int("steps", self.steps, 1)
        check_int(f"every (steps = {self.steps})", self.every, 1, self.steps)

    @property
    def widths(self) -> list[int]:
        d = len(self.teacher)
        return [d, *self.hidden, d]


PAPER_SADDLE = PaperSaddle()
PAPER_SAMPLER = PaperSGLDOptions(
    step_size=1e-6, num_steps=100, num_chains=1, batch_size=128, gamma=1.0, nbeta="n/log n",
    burn_in=0,
)  # fmt: skip


def entry_mse(pred: Tensor, y: Tensor) -> Tensor:
    """The authors' loss: the mean over every entry of (ŷ − y)² (all samples and outputs)."""
    return (pred - y).square().mean()


@dataclass(frozen=True)
class PaperSaddleResult:
    """The training run, both arms' points (the true arm's None where not run) and verdicts."""

    settings: PaperSaddle
    run: TrainingRun
    paper: tuple[SaddlePoint, ...]
    paper_verdict: Verdict
    true: tuple[SaddlePoint, ...] | None
    true_verdict: Verdict | None


def plateau_middles(ranks: Sequence[int]) -> list[int]:
    """The index of the middle checkpoint of each learned rank's checkpoints (a plateau's most
    settled point), in the order the ranks were reached."""
    at: dict[int, list[int]] = {}
    for i, k in enumerate(ranks):
        at.setdefault(k, []).append(i)
    return [idx[len(idx) // 2] for idx in at.values()]


def paper_saddle_run(
    settings: PaperSaddle = PAPER_SADDLE,
    *,
    seed: int = 0,
    sampler: PaperSGLDOptions = PAPER_SAMPLER,
    package: dict[str, Any] | None = None,
) -> PaperSaddleResult:
    """Train by the authors' procedure and read λ̂ along it (module docstring); with ``package``
    (keywords of ``numeric.estimate_llc``, {} for its defaults) the package's λ̂ too, on the same
    realisable targets, at the middle checkpoint of each learned rank (``plateau_middles``)."""
    s = settings
    g = torch.Generator().manual_seed(seed)
    d = len(s.teacher)
    x = torch.randn(s.n, d, generator=g, dtype=torch.float64)
    data = (x, x @ torch.diag(torch.tensor(s.teacher, dtype=torch.float64)))
    net = deep_linear(s.widths, generator=g, scale=1.0)
    with torch.no_grad():
        for layer in net:
            layer.weight.normal_(0.0, math.sqrt(s.init_variance), generator=g)
    at = range(s.every, s.steps + 1, s.every)
    run = train(net, entry_mse, data, sgd(s.lr), s.steps, generator=g, batch_size=s.batch_size,
                checkpoint_at=at)  # fmt: skip
    depth, s_min = len(s.widths) - 1, min(s.teacher)
    ranks = [learned_rank(product(c.state, depth), s_min) for c in run.checkpoints]
    lams = {k: float(rlct.deep_linear_network(s.widths, k).lam) for k in set(ranks)}
    middles = set(plateau_middles(ranks)) if package is not None else set()
    paper, true = [], []
    for i, (c, k) in enumerate(zip(run.checkpoints, ranks, strict=True)):
        net.load_state_dict(c.state)
        with torch.no_grad():
            own = (x, net(x))  # the realisable targets: w_t fits them exactly
        loss_fn, w = numeric.from_module(net, entry_mse)
        r = paper_sgld(loss_fn, w, own, sampler, seed=seed * 100_003 + c.step)
        est = paper_llc_point(c.step, r.mean, r.stderr, num_params(net), r.seconds)
        paper.append(SaddlePoint(c.step, c.loss, k, lams[k], sampler.gamma, est))
        if package is not None and i in middles:
            ours, _ = llc_at(net, entry_mse, own, step=c.step, **{"seed": seed, **package})
            true.append(SaddlePoint(c.step, c.loss, k, lams[k], package.get("gamma", 1.0), ours))
    true_points = tuple(true) if package is not None else None
    return PaperSaddleResult(
        s, run, tuple(paper), saddle_verdict(paper),
        true_points, saddle_verdict(true) if true_points else None,
    )  # fmt: skip
