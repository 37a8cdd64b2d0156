"""Seed 003 (Saghir et al.) by the authors' own procedure, and at matched training loss.

**Reproduced?** The authors' code (``cxtraa/ngd_with_slt``: ``experiments/args_ngd_sgd.json``,
``eval_ngd_sgd.ipynb``, ``utils_general.estimate_rlcts_online``), as run here:

* optimizers: SGD with Nesterov momentum 0.9 against Kaldi's online natural gradient with the
  same momentum (:mod:`.online_ngd`: Fisher EMA weight η = 0.9, smoothing α, floors ε = 10⁻¹⁰,
  δ = 5·10⁻⁴), both at lr 10⁻², batch 128, cross-entropy, the same initialisation and minibatch
  order per seed (``saghir.fit``);
* λ̂: devinterp's SGLD (``paper_sgld``), 2 chains of 1,000 draws, no burn-in, γ = 100, ε = 10⁻⁴,
  nβ = B/log B with B = 128 (devinterp's ``optimal_temperature``), on the training data in
  batches of 128; tr H by Hutchinson (the paper: PyHessian, also Hutchinson) at the end.

What differs from the paper, each said once: scikit-learn's digits (1,348 training images, 8×8)
stand in for MNIST (not downloadable here; ``FULL=1`` uses MNIST from ``$SLT_MNIST_DIR``); an
epoch skips its last partial batch (``train``; the paper's loader keeps it); λ̂ subtracts the
full-data L_n(w*) (devinterp of that time subtracted the first draw's batch loss); the run length
is set in steps (digits epochs are 10 steps).

The other two claims take the same procedure through ``paper_estimate`` (λ̂ of a network):
Fig. 3 as ``paper_curves`` over several α and ``saghir.smoothing_verdict``; Figs 4–6 as
``saghir_swap.swap`` with the authors' NGD at α = 10⁻¹ (their swap runs' setting) and
``saghir_swap.swap_verdict``.

**True?** The same runs compared where both optimizers reach the same training loss
(``matched``): per seed, the level is the higher of the two final losses, and each optimizer is
read at its first checkpoint at or below it; there λ̂ comes from the package's estimator
(``saghir.measure``), whose findings say where a checkpoint is not a minimum.

Both arms end in ``saghir.compare_verdict``'s rule (fixed before these runs): per architecture, the
paired NGD − SGD differences of λ̂ and tr H over seeds; reproduced when all are positive and most
significant (paired p < 0.05), not reproduced when one is significantly negative and none
significantly positive, inconclusive otherwise (and when most end points are not minima).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

import numeric

from .datasets import Dataset
from .llc import LLCPoint, paper_llc_point
from .networks import num_params, relu_mlp
from .online_ngd import online_ngd
from .optimizers import OptimizerSpec, sgd
from .paper_sgld import PaperSGLDOptions, PaperSGLDResult, paper_sgld
from .records import Record
from .saghir import Trained, cross_entropy, measure
from .saghir_swap import Estimate
from .training import TrainingRun, train

PAPER_LR = 1e-2
PAPER_BATCH = 128
PAPER_SAMPLER = PaperSGLDOptions(
    step_size=1e-4, num_steps=1_000, num_chains=2, batch_size=PAPER_BATCH, gamma=100.0,
    nbeta="B/log B", burn_in=0,
)  # fmt: skip


def paper_optimizers(alpha: float = 1e-2, lr: float = PAPER_LR) -> dict[str, OptimizerSpec]:
    """SGD and the authors' NGD at the paper's settings (α = 10⁻² in Fig. 1, 10⁻¹ in Fig. 2)."""
    return {"SGD": sgd(lr, 0.9, nesterov=True), "NGD": online_ngd(lr, alpha)}  # type: ignore[dict-item]


@dataclass(frozen=True)
class PaperPoint(Record):
    """One checkpoint of one training run: its training loss and the paper procedure's λ̂."""

    widths: str
    optimizer: str
    seed: int
    step: int
    train_loss: float
    llc: float
    llc_stderr: float
    seconds: float
    trace: float = math.nan  # Hutchinson tr ∇²L_n at the last checkpoint (nan elsewhere)
    trace_stderr: float = math.nan


def paper_llc(
    net: nn.Module, data: Dataset, seed: int, sampler: PaperSGLDOptions
) -> PaperSGLDResult:
    """λ̂ of ``net`` as it is, by the paper's SGLD."""
    loss_fn, w = numeric.from_module(net, cross_entropy)
    return paper_sgld(loss_fn, w, data.train, sampler, seed=seed)


def paper_curves(
    data: Dataset,
    architectures: Sequence[Sequence[int]],
    seeds: Sequence[int],
    *,
    steps: int,
    every: int,
    optimizers: dict[str, OptimizerSpec] | None = None,
    sampler: PaperSGLDOptions = PAPER_SAMPLER,
    batch_size: int = PAPER_BATCH,
    trace_samples: int = 32,
) -> tuple[PaperPoint, ...]:
    """Each architecture × seed × optimizer trained for ``steps``, λ̂ (paper procedure) at every
    ``every``-th step from 0 and tr H at the end; the same seed gives both optimizers the same
    start and batches."""
    optimizers = paper_optimizers() if optimizers is None else optimizers
    out = []
    for widths in architectures:
        name = _name_of(widths)
        for seed in seeds:
            for label, opt in optimizers.items():
                net, run = _trained(
                    data, widths, seed, opt, steps, batch_size, range(0, steps + 1, every)
                )
                for c in run.checkpoints:
                    net.load_state_dict(c.state)
                    r = paper_llc(net, data, seed, sampler)
                    tr = _trace(net, data, seed, trace_samples) if c.step == steps else None
                    at = (tr.mean, tr.stderr) if tr is not None else (math.nan, math.nan)
                    point = (name, label, seed, c.step, c.loss, r.mean, r.stderr, r.seconds)
                    out.append(PaperPoint(*point, *at))
    return tuple(out)


def _trained(
    data: Dataset,
    widths: Sequence[int],
    seed: int,
    opt: OptimizerSpec,
    steps: int,
    batch_size: int,
    checkpoint_at: Iterable[int] = (),
) -> tuple[nn.Module, TrainingRun]:
    """The seed's ReLU MLP trained by ``opt`` for ``steps`` (batches from the same seed): the same
    arguments give the same weights bit for bit, so a checkpoint can be rebuilt by re-training."""
    net = relu_mlp(widths, generator=torch.Generator().manual_seed(seed)).to(data.x_train.dtype)
    g = torch.Generator().manual_seed(seed)
    run = train(
        net, cross_entropy, data.train, opt, steps, generator=g, batch_size=batch_size,
        checkpoint_at=checkpoint_at,
    )  # fmt: skip
    return net, run


def _trace(net: nn.Module, data: Dataset, seed: int, samples: int) -> numeric.HessianTrace:
    loss_fn, w = numeric.from_module(net, cross_entropy)
    return numeric.hessian_trace(loss_fn, w, data.train, num_samples=samples, seed=seed)


def _name_of(widths: Sequence[int]) -> str:
    """A network's name in the records: its widths joined by "-" ("64-16-10")."""
    return "-".join(map(str, widths))


def _widths_of(name: str) -> list[int]:
    """The widths back from a record's name (``_name_of``)."""
    return [int(w) for w in name.split("-")]


def _num_params(widths: Sequence[int]) -> int:
    return sum(a * b + b for a, b in itertools.pairwise(widths))


def paper_estimate(data: Dataset, sampler: PaperSGLDOptions = PAPER_SAMPLER) -> Estimate:
    """The paper procedure's λ̂ as an ``Estimate`` (network, seed, step) → ``LLCPoint``, for
    ``saghir_swap.swap``; the seed seeds the sampler, as in ``paper_curves``."""

    def estimate(net: nn.Module, seed: int, step: int) -> LLCPoint:
        r = paper_llc(net, data, seed, sampler)
        return paper_llc_point(step, r.mean, r.stderr, num_params(net), r.seconds)

    return estimate


def paper_end_points(points: Sequence[PaperPoint]) -> tuple[Trained, ...]:
    """The last checkpoint of every run as a ``Trained`` record (λ̂ by the paper procedure, which
    has no findings, and tr H): the paper's comparison, at the end of training."""
    last = max(p.step for p in points)
    out = []
    for p in (q for q in points if q.step == last):
        widths = _widths_of(p.widths)
        llc = paper_llc_point(p.step, p.llc, p.llc_stderr, _num_params(widths), p.seconds)
        losses = (p.train_loss, math.nan, math.nan)  # test loss and accuracy are not read
        run = (p.widths, p.optimizer, p.seed, p.step)
        out.append(Trained(*run, *losses, llc, p.trace, p.trace_stderr))
    return tuple(out)


@dataclass(frozen=True)
class MatchedPair(Record):
    """Per architecture and seed: the loss level both optimizers reach and the step at which
    each first reaches it (with its loss and the paper procedure's λ̂ there)."""

    widths: str
    seed: int
    level: float
    steps: tuple[tuple[str, int], ...]
    losses: tuple[tuple[str, float], ...]
    paper_llc: tuple[tuple[str, float], ...]


def matched(points: Sequence[PaperPoint]) -> tuple[MatchedPair, ...]:
    """For each architecture and seed: level = the higher of the optimizers' final training
    losses; each optimizer's first checkpoint with loss ≤ level."""
    out = []
    keys = dict.fromkeys((p.widths, p.seed) for p in points)
    for widths, seed in keys:
        mine = sorted(
            (p for p in points if (p.widths, p.seed) == (widths, seed)),
            key=operator.attrgetter("step"),
        )
        labels = list(dict.fromkeys(p.optimizer for p in mine))
        level = max(_of(mine, o)[-1].train_loss for o in labels)
        first = {o: next(p for p in _of(mine, o) if p.train_loss <= level) for o in labels}
        out.append(
            MatchedPair(
                widths,
                seed,
                level,
                tuple((o, p.step) for o, p in first.items()),
                tuple((o, p.train_loss) for o, p in first.items()),
                tuple((o, p.llc) for o, p in first.items()),
            )
        )
    return tuple(out)


def _of(points: Sequence[PaperPoint], optimizer: str) -> list[PaperPoint]:
    return [p for p in points if p.optimizer == optimizer]


def matched_estimates(
    pairs: Sequence[MatchedPair],
    data: Dataset,
    *,
    estimator: dict[str, Any],
    optimizers: dict[str, OptimizerSpec] | None = None,
    batch_size: int = PAPER_BATCH,
    trace_samples: int = 32,
) -> tuple[Trained, ...]:
    """The package's λ̂ and tr H (``saghir.measure``) at each matched checkpoint (re-trained from
    its seed to that step)."""
    optimizers = paper_optimizers() if optimizers is None else optimizers
    out = []
    for pair in pairs:
        widths = _widths_of(pair.widths)
        for label, step in pair.steps:
            net, _ = _trained(data, widths, pair.seed, optimizers[label], step, batch_size)
            trained = measure(
                net, data, label=label, widths=widths, seed=pair.seed, steps=step,
                estimator=estimator, trace_samples=trace_samples,
            )  # fmt: skip
            out.append(trained)
    return tuple(out)
