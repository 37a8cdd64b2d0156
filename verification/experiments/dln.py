"""Claim 1: λ̂ against λ for deep linear networks (Lau et al. 2025, Fig. 1; Furman & Lau 2024).

Random widths and depths, true maps of random rank (``teachers.random_dln_teacher``), noise-free
labels, λ from Aoyagi's formula. λ̂ at the true parameter, and after training a network from
small initialisation on the same data (the trained point has a positive loss and need not lie on
the most singular orbit, so its λ is Aoyagi's only as far as training found a low-rank solution).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch

import numeric

from .._validate import check_int
from ..errors import InvalidArgumentError
from .llc import LLCPoint, llc_at, mse_loss, point
from .local_rank import LocalRank, local_rank
from .networks import deep_linear
from .optimizers import OptimizerSpec, adam
from .records import Claim, Measurement, Record, Verdict
from .teachers import DLNTeacher
from .training import train

CLAIM = Claim(
    "Lau et al. (2025), Furman & Lau (2024)",
    "Fig. 1 (estimated against true λ, deep linear networks up to 10⁸ parameters)",
    "The SGLD estimate of the LLC at the true parameter of a deep linear network recovers "
    "Aoyagi's learning coefficient λ, at every size.",
)
Where = Literal["true", "trained"]


@dataclass(frozen=True)
class DLNPoint(Record):
    """One network: its teacher, where λ̂ was taken, the estimate, and the training loss there;
    after training, ``local``: the local λ at the trained factorisation (closed form at the
    numerically decided ranks of its partial products, :mod:`.local_rank`; None at the true
    parameter, where every layer has rank r and the local λ is Aoyagi's)."""

    teacher: DLNTeacher
    where: Where
    estimate: LLCPoint
    loss: float
    local: LocalRank | None = None

    @property
    def rel_error(self) -> float:
        """λ̂/λ − 1 (nan where λ = 0)."""
        lam = float(self.teacher.lam)
        return self.estimate.llc / lam - 1 if lam else math.nan


@dataclass(frozen=True)
class DLNResult:
    points: tuple[DLNPoint, ...]
    verdict: Verdict


def dln_point(teacher: DLNTeacher, n: int, **kwargs: Any) -> DLNPoint:
    """λ̂ of one teacher (``dln_estimate``'s arguments), as a record."""
    return dln_estimate(teacher, n, **kwargs)[0]


def dln_data(
    teacher: DLNTeacher, n: int, seed: int, dtype: torch.dtype = torch.float64
) -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Generator]:
    """The n samples (x, y) of ``seed``, shared by ``dln_estimate`` and ``dln_target``, and the
    generator after drawing them (training's initialisation continues from it)."""
    g = torch.Generator().manual_seed(seed)
    return teacher.sample(n, g, dtype), g


def _target_inputs(teacher: DLNTeacher, n: int, seed: int, population: bool) -> torch.Tensor | None:
    """The inputs whose L_n a target samples: ``seed``'s n samples, or None (the population)."""
    return None if population else dln_data(teacher, n, seed, torch.float64)[0][0]


def dln_estimate(
    teacher: DLNTeacher,
    n: int,
    *,
    where: Where = "true",
    seed: int = 0,
    train_steps: int = 2000,
    optimizer: OptimizerSpec | None = None,
    init_scale: float = 0.1,
    dtype: torch.dtype = torch.float64,
    **estimator: Any,
) -> tuple[DLNPoint, numeric.LLCEstimate]:
    """λ̂ of one teacher at the true parameter, or after ``train_steps`` full-batch steps of
    ``optimizer`` (default Adam, lr 0.01) from initialisation ``init_scale``·torch's default;
    the record and the whole estimate (its Laplace value, step check, findings)."""
    if where not in ("true", "trained"):
        raise InvalidArgumentError(f"where must be 'true' or 'trained', got {where!r}")
    check_int("n", n, 1)
    data, g = dln_data(teacher, n, seed, dtype)
    if where == "true":
        net, loss = teacher.module(dtype), 0.0
    else:
        net = deep_linear(teacher.widths, generator=g, scale=init_scale, dtype=dtype)
        run = train(net, mse_loss, data, optimizer or adam(0.01), train_steps, generator=g)
        loss = run.final_loss
    estimator.setdefault("seed", seed)
    point, est = llc_at(net, mse_loss, data, **estimator)
    local = None if where == "true" else local_rank([m.weight for m in net])
    return DLNPoint(teacher, where, point, loss, local), est


def dln_target(
    teacher: DLNTeacher,
    n: int,
    *,
    seed: int = 0,
    num_chains: int = 4,
    num_draws: int = 200_000,
    num_burnin: int = 20_000,
    population: bool = False,
    **potential: Any,
) -> tuple[LLCPoint, numeric.LLCEstimate]:
    """λ_β(γ) = nβ·E_p[L_n] at the true parameter, the target of ``dln_estimate`` at the same
    ``n``, ``seed`` (hence the same inputs), nβ and γ, by an independent sampler: Metropolis-
    adjusted Langevin (``numeric.estimate_llc_potential``) on L_n in closed form
    (``DLNTeacher.loss_potential``; the population loss with ``population=True``). MALA has no
    step-size bias and no gradient noise, so λ_β − λ is the target's finite-nβ distance from
    Aoyagi's λ and λ̂ − λ_β the SGLD estimator's error. Its chains are plain MALA (no
    preconditioner) and long by default; their findings say how far to trust the number."""
    x = _target_inputs(teacher, n, seed, population)
    potential = {
        "num_chains": num_chains,
        "num_draws": num_draws,
        "num_burnin": num_burnin,
        "seed": seed,
        "progress": False,
        **potential,
    }
    start = time.perf_counter()
    est = numeric.estimate_llc_potential(
        teacher.loss_potential(x), teacher.flat_true_parameter(), n, **potential
    )
    return point(est, 0, time.perf_counter() - start), est


def dln_target_hmc(
    teacher: DLNTeacher,
    n: int,
    *,
    seed: int = 0,
    num_chains: int = 16,
    num_draws: int = 300,
    num_burnin: int = 100,
    population: bool = False,
    **hmc: Any,
) -> numeric.HMCReference:
    """λ_β(γ = 1) as ``dln_target``, by Metropolis-adjusted HMC (``numeric.hmc_llc_potential``)
    instead of MALA: its trajectories cross the flat orbits that plain MALA creeps along, so it
    is the reference to trust where the two differ (on 7-7-13-7-9-5 at n = 10⁴: 13.80 ± 0.10, MALA
    13.55 ± 0.38 with ``slow_mixing``)."""
    x = _target_inputs(teacher, n, seed, population)
    return numeric.hmc_llc_potential(
        teacher.loss_potential(x),
        teacher.flat_true_parameter(),
        n,
        num_chains=num_chains,
        num_draws=num_draws,
        num_burnin=num_burnin,
        seed=seed,
        **hmc,
    )


def _failed_last(e: float) -> float:
    """A sort key that puts a NaN error (an estimate that failed) last, as the worst, instead of
    wherever sorting or max() leaves it."""
    return e if math.isfinite(e) else math.inf


def dln_verdict(
    points: Sequence[DLNPoint], median_tol: float = 0.05, max_tol: float = 0.15
) -> Verdict:
    """At the true parameters: reproduced if the median |λ̂/λ − 1| ≤ ``median_tol`` and every
    network within ``max_tol`` with no error finding; not reproduced if the median over the
    usable estimates (no error finding), at least half the networks, exceeds ``max_tol``;
    inconclusive otherwise (or with no network of λ > 0). An error finding says the number
    cannot be used as it is, so such estimates neither reproduce nor refute the claim."""
    true = [p for p in points if p.where == "true" and p.teacher.lam > 0]
    if not true:
        return Verdict(CLAIM, "inconclusive", (), "no network with λ > 0 at its true parameter")
    errs = [abs(p.rel_error) for p in true]
    med = statistics.median(sorted(errs, key=_failed_last))
    worst = max(errs, key=_failed_last)
    signed = statistics.median(sorted((p.rel_error for p in true), key=_failed_last))
    usable = [abs(p.rel_error) for p in true if p.estimate.ok and math.isfinite(p.rel_error)]
    errors = len(true) - len(usable)
    med_usable = statistics.median(usable) if usable else math.nan
    nums = (
        Measurement("median |λ̂/λ − 1|", med),
        Measurement("max |λ̂/λ − 1|", worst),
        Measurement("median λ̂/λ − 1", signed),
        Measurement("networks with an error finding", errors),
        Measurement("networks", len(true)),
        Measurement("median |λ̂/λ − 1| without an error finding", med_usable),
    )
    trained = [abs(p.rel_error) for p in points if p.where == "trained" and p.teacher.lam > 0]
    if trained:
        nums += (Measurement("median |λ̂/λ − 1| after training", statistics.median(trained)),)
    sizes = [p.teacher.num_params for p in true]
    span = f"{len(true)} networks of {min(sizes)}–{max(sizes)} parameters"
    if med <= median_tol and worst <= max_tol and errors == 0 and all(map(math.isfinite, errs)):
        return Verdict(
            CLAIM, "reproduced", nums, f"{span}: median error {med:.1%}, worst {worst:.1%}."
        )
    if 2 * len(usable) >= len(true) and med_usable > max_tol:
        return Verdict(
            CLAIM,
            "not reproduced",
            nums,
            f"{span}: the {len(usable)} estimates with no error finding miss λ by a median "
            f"{med_usable:.1%} (all {len(true)}: median {med:.1%}, signed {signed:+.1%}, worst "
            f"{worst:.1%}).",
        )
    return Verdict(
        CLAIM,
        "inconclusive",
        nums,
        f"{span}: median error {med:.1%} (signed {signed:+.1%}), worst {worst:.1%}; {errors} "
        f"with an error finding, whose numbers cannot be used as they are (reproduced needs "
        f"≤ {median_tol:.0%}, ≤ {max_tol:.0%} and none; not reproduced a median above "
        f"{max_tol:.0%} over at least half the networks without one).",
    )


def dln_claim(
    teachers: Sequence[DLNTeacher], n: int, *, trained: int = 0, seed: int = 0, **estimator: Any
) -> DLNResult:
    """λ̂ at every teacher's true parameter, and after training for the first ``trained`` ones."""
    check_int(f"trained (of {len(teachers)} teachers)", trained, 0, len(teachers))
    check_int("n", n, 1)
    points = [dln_point(t, n, seed=seed, **estimator) for t in teachers]
    points += [dln_point(t, n, where="trained", seed=seed, **estimator) for t in teachers[:trained]]
    return DLNResult(tuple(points), dln_verdict(points))
