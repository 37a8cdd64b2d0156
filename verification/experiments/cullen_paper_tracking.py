"""Seed 002 (Cullen et al.), Figs 3 and 4 by the authors' own procedure: λ̂ along the training
run their plotting cell reads, against the validation loss (``paper_tracking_run``), and along
each run of their batch-128 learning-rate sweep (``paper_lr_sweep``).

The run (``plots_for_paper.ipynb`` @ c94530f, ``plot_losses_and_llc``'s default path,
``results/sweep_batch_lr_wd/run_batch_size=128_lr=0.0001_weight_decay=0.0001`` @ 73829da): p = 53,
K = 1,024, trained by :mod:`.cullen_paper`'s loop at Adam lr 10⁻⁴, weight decay 10⁻⁴, batch 128;
it stopped at step 7,700, three checkpoints after its validation accuracy first reached 0.95.
λ̂ at the checkpoints as the authors' training loop computes it (``training.py`` @ 0021909:
devinterp's SGLD, ε = 5·10⁻⁴, γ = 5, nβ = default_nbeta of the batch-128 training loader, 3
chains of 100 + 500); their ``results/run/loss_data.csv`` @ c94530f holds that series for the same
training (its losses match the sweep file's row for row), the sweep file an earlier one whose
sampler is not recorded.

The validation loss the authors record is not the loss they train: their ``test`` applies the
centred loss to one sample at a time, which centres each residual across the p outputs
(``authors_loss``). ``paper_tracking_run`` keeps both, so ``cullen_dynamics.tracking_verdict``
(its rule fixed before issue 62's reruns) can be read against each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import torch

import numeric

from .._validate import check_int
from .cullen_dynamics import GrokRun
from .cullen_paper import (
    PAPER_SAMPLER,
    PaperQuadraticNet,
    PaperTraining,
    train_paper,
)
from .llc import LLCPoint, paper_llc_point
from .modular import ModularTask, Snapshot, centred_mse, modular_task, snapshot
from .paper_sgld import PaperSGLDOptions, paper_sgld

PAPER_TRACKING = PaperTraining(lr=1e-4, weight_decay=1e-4, batch_size=128)
TRACKING_SAMPLER = replace(PAPER_SAMPLER, batch_size=128)
TRACKING_SHAPE = (53, 1024)


def authors_loss(pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The loss the authors' ``test`` records: their centred loss applied to one sample at a time,
    which centres the residual across the p outputs, mean_i ½‖r_i − r̄_i·1‖²/p."""
    r = y - pred
    return 0.5 * (r - r.mean(-1, keepdim=True)).square().sum(-1).mean() / r.shape[-1]


@torch.no_grad()
def authors_snapshot(net: PaperQuadraticNet, task: ModularTask, s: Snapshot) -> Snapshot:
    """The snapshot ``s`` of ``net`` with the authors' recorded losses (``authors_loss``) in place
    of the loss centred over the data set; the accuracies are the same."""
    train = float(authors_loss(net(task.x_train), task.y_train))
    val = float(authors_loss(net(task.x_val), task.y_val))
    return replace(s, train_loss=train, val_loss=val)


def paper_tracking_run(
    p: int = TRACKING_SHAPE[0],
    K: int = TRACKING_SHAPE[1],
    *,
    llc_every: int = 4,
    seed: int = 0,
    training: PaperTraining = PAPER_TRACKING,
    sampler: PaperSGLDOptions | None = None,
) -> tuple[GrokRun, GrokRun]:
    """Train by the authors' loop with snapshots at every checkpoint and the paper procedure's
    λ̂ at every ``llc_every``-th one and at the last, for ``cullen_dynamics.tracking_verdict``
    (its rule, fixed before issue 62's reruns). Two ``GrokRun`` with the same λ̂: the losses as
    the authors record them (``authors_loss``), and centred over the data set (the loss trained).
    ``sampler=None``: ``TRACKING_SAMPLER`` on the training's batches (their loop's loader)."""
    check_int("llc_every", llc_every, 1)
    sampler = sampler or replace(TRACKING_SAMPLER, batch_size=training.batch_size)
    task = modular_task(p, training.train_fraction, seed=seed, dtype=torch.float32)
    snaps: dict[str, list[Snapshot]] = {"authors": [], "centred": []}
    pts: list[LLCPoint] = []

    def llc(step: int, net: PaperQuadraticNet) -> None:
        r = paper_sgld(*numeric.from_module(net, centred_mse), task.train, sampler, seed=seed)
        pts.append(paper_llc_point(step, r.mean, r.stderr, 3 * p * K, r.seconds))

    def record(step: int, net: PaperQuadraticNet) -> None:
        s = snapshot(net, task, step)
        snaps["centred"].append(s)
        snaps["authors"].append(authors_snapshot(net, task, s))

    def at(step: int, net: PaperQuadraticNet) -> None:
        record(step, net)
        if (step // training.checkpoint_every) % llc_every == 0:
            llc(step, net)

    net, steps, *_ = train_paper(task, K, training, seed, on_checkpoint=at)
    if snaps["centred"][-1].step != steps:  # the step cap fell between checkpoints
        record(steps, net)
    if pts[-1].step != steps:
        llc(steps, net)

    at_lr = (task, K, training.lr, training.weight_decay, steps, seed)
    return GrokRun.of(*at_lr, snaps["authors"], pts), GrokRun.of(*at_lr, snaps["centred"], pts)


# Fig. 4 (grokking severity against the learning rate): the authors' lr sweep at batch 128
# (``results/sweep_batch_lr_wd/run_batch_size=128_lr=L_weight_decay=W``, the loop above)
PAPER_LRS = (1e-4, 5e-4, 1e-3, 5e-3, 1e-2)


def paper_lr_sweep(
    lrs: Sequence[float] = PAPER_LRS,
    weight_decay: float = 1e-4,
    p: int = TRACKING_SHAPE[0],
    K: int = TRACKING_SHAPE[1],
    *,
    llc_every: int = 1,
    seed: int = 0,
    training: PaperTraining = PAPER_TRACKING,
    sampler: PaperSGLDOptions | None = None,
) -> tuple[GrokRun, ...]:
    """One ``paper_tracking_run`` per learning rate (the same seed: the same initialisation and
    split; ``training`` gives the other settings), for ``cullen_dynamics.lr_verdict(runs,
    raw=True)`` (GSM on raw accuracies, as the paper defines it and as the authors' runs stop).
    λ̂ at every checkpoint by default, as the authors' loop computes it: at the larger rates the
    peak comes at the first checkpoint, which a sparser cadence misses."""
    out = []
    for lr in lrs:
        at = replace(training, lr=lr, weight_decay=weight_decay)
        run = paper_tracking_run(p, K, llc_every=llc_every, seed=seed, training=at, sampler=sampler)
        out.append(run[0])
    return tuple(out)
