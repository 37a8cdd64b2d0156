"""The configuration an ``estimate_llc`` run reports (``LLCEstimate.config``), from its
problem, plan, options, warm-up and draws."""

from __future__ import annotations

import math

from numeric.hessian.dense import HessianInfo
from numeric.hessian.spectrum import pinned
from numeric.inputs.problem import Problem
from numeric.options import LLCOptions
from numeric.plan.llc_plan import LLCPlan
from numeric.result.llc_estimate import LLCConfig, run_fields
from numeric.types import Draws, Warmup
from numeric.warmup.burn_in import relax

__all__ = ["run_config"]


def run_config(
    problem: Problem, plan: LLCPlan, opts: LLCOptions, warm: Warmup, drawn: Draws
) -> LLCConfig:
    """The ``LLCConfig`` of a finished run of ``estimate_llc``: what was chosen, and by which rule."""
    tuning, hinfo, w = warm.tuning, plan.hessian, problem.w_star
    bounds = hinfo.laplace_bounds()  # equal where exact: pinned gives the value itself
    return LLCConfig(
        n=problem.n,
        nbeta=problem.nbeta,
        nbeta_rule=problem.nbeta_rule,
        **run_fields(opts, warm, drawn),
        batch_size=problem.batch_size,
        sampler="sgld",
        integrator=plan.integrator,
        gradient="exact" if problem.full_batch else opts.gradient,
        acceptance_rate=float("nan"),
        full_loss_every=drawn.full_loss_every if drawn.full_losses else 0,
        anchor_every=tuning.anchor_every,
        friction=tuning.friction if plan.integrator == "baoab" else math.nan,
        num_params=problem.dim,
        device=str(w.device),
        dtype=str(w.dtype).removeprefix("torch."),
        preconditioner=plan.preconditioner,
        soft_whitened=hinfo.num_whitened if isinstance(hinfo, HessianInfo) else 0,
        condition_number=hinfo.condition_number,
        relaxation_steps=relax(tuning, plan.kappa_min),
        laplace_llc=pinned(bounds),
        laplace_llc_bounds=bounds,
    )
