r"""The step size ε of the data estimator's warm-up (``numeric.warmup.warm_up`` runs it first).

ε = ``step_scale``/κ with κ the largest curvature of the potential where the chains are and
where one step of size ε takes them (``numeric.warmup.curvature.consistent_curvature``; power
iteration with Hessian-vector products). κ is measured at w* and again after 1, 2, 4, …, 64 of
the ``ADAPT_STEPS`` adaptation steps (``adapt_checkpoints``); ε uses the largest of the last
three measurements (``adapt_step_size``). During the flat-direction burn-in and after burn-in κ
is measured again and ε shrunk if it grew by more than half (``shrink_if_stiffer``; after burn-in
with two more burn-in blocks: ``numeric.warmup.burn_in``). A divergence restart caps ε at a
quarter of the diverged run's (``automatic_step``'s ``max_step``:
``numeric.run.divergence_restart``); ``curvature_rule`` words the rule for
``LLCConfig.step_size_rule``. The potential estimator's MALA adapts ε by dual averaging instead
(``numeric.warmup.dual_averaging``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from torch import Tensor

from numeric.errors import InvalidInputError
from numeric.sampler.chains import Chains
from numeric.types import Tuning

ADAPT_STEPS = 128
KAPPA_FLOOR = 1e-12  # a curvature at most this (only possible with γ + α = 0) chooses no ε


# measure(v, iters) -> (κ, v): the curvature where the chains are, power iteration warm-started
# at v [C, D]
Measure = Callable[[Tensor, int], tuple[float, Tensor]]


def automatic_step(kappa: float, step_scale: float, max_step: float = math.inf) -> float:
    """ε = min(step_scale/κ, ``max_step``): the automatic step at curvature κ, under the cap a
    restart set (``run.divergence_restart.restart_options``)."""
    return min(step_scale / kappa, max_step)


def adapt_checkpoints(steps: int) -> list[int]:
    """Geometric checkpoints 0, 1, 2, 4, ... < steps at which the curvature is re-measured."""
    out, k = [0], 1
    while k < steps:
        out.append(k)
        k *= 2
    return out


def adapt_step_size(
    chains: Chains,
    measure: Measure,
    tuning: Tuning,
    v: Tensor,
    steps: int,
    step_scale: float,
    max_step: float = math.inf,
) -> tuple[Tuning, Tensor]:
    """ε = ``automatic_step(κ, step_scale, max_step)`` with κ re-measured at the checkpoints of
    ``adapt_checkpoints`` while the chains run ``steps`` steps; κ is the largest of the last
    three measurements. Returns the tuning (ε, κ) and the power-iteration vectors."""
    cps = adapt_checkpoints(max(steps, 1))
    history: list[float] = []
    for i, cp in enumerate(cps):
        k_now, v = measure(v, 20 if i == 0 else 8)
        history.append(k_now)
        if not max(history[-3:]) > KAPPA_FLOOR:
            raise InvalidInputError(
                f"the step size cannot be chosen: the curvature κ of the potential is "
                f"{max(history[-3:]):.3g} where the chains are and where a step lands, so ε = "
                f"{step_scale:g}/κ is unbounded. With γ + α = 0 nothing holds the chains in the "
                "directions where L_n is flat, and the local posterior may be improper: pass "
                "gamma > 0 (the localisation; the default is 1), or a step_size"
            )
        kappa = max(max(history[-3:]), KAPPA_FLOOR)
        tuning = tuning._replace(step_size=automatic_step(kappa, step_scale, max_step), kappa=kappa)
        nxt = cps[i + 1] if i + 1 < len(cps) else steps
        if nxt > cp:
            chains.advance(nxt - cp, tuning)
    return tuning, v


def shrink_if_stiffer(
    measure: Measure, tuning: Tuning, v: Tensor, step_scale: float, max_step: float = math.inf
) -> tuple[Tuning, Tensor, bool]:
    """Re-measure κ where the chains are; if it grew by more than half,
    ε = ``automatic_step(κ, step_scale, max_step)``."""
    k_now, v = measure(v, 8)
    if not k_now > 1.5 * tuning.kappa:
        return tuning, v, False
    step = automatic_step(k_now, step_scale, max_step)
    return tuning._replace(step_size=step, kappa=k_now), v, True


def curvature_rule(step_scale: float, *, preconditioned: bool | str) -> str:
    """How ε was chosen, as ``LLCConfig.step_size_rule`` says it (``preconditioned``: True or
    "hessian" for the dense preconditioner, "lowrank: …" for the low-rank one)."""
    if isinstance(preconditioned, str) and preconditioned.startswith("lowrank"):
        return (
            f"ε = {step_scale:g}/κ, κ = λ_max(M^½·∇²U_B·M^½) (low-rank preconditioner M: "
            f"{preconditioned.removeprefix('lowrank: ')}) measured by power iteration where the "
            "chains were during adaptation"
        )
    if preconditioned and preconditioned != "none":
        return (
            f"ε = {step_scale:g}/κ, κ = λ_max(M^½·∇²U_B·M^½) (Hessian preconditioner M) "
            "measured by power iteration where the chains were during adaptation"
        )
    return (
        f"ε = {step_scale:g}/κ, κ = nβ·|λ_max(∇²L_B)| + γ + α measured by power "
        "iteration where the chains were during adaptation"
    )
