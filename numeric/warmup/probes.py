"""The measurements the data estimator's warm-up and sampling take where the chains are.

``DataProbes`` binds the curvature (``numeric.warmup.curvature``) and the minibatch heating
(``numeric.warmup.friction``) to one run: its problem, plan, kernel constants (anchors), chains and
generator. ``curvature(v, iters)`` and
``heating(tuning, factor)`` are what ``warm_up.warm_up`` and ``draws.sample.sample`` call;
``check_curvature`` is ``curvature`` on a stream of its own, for checks that must not move the
run's (the fixed burn-in's and the draws' κ, ``numeric.findings.stiffer_in_draws``).
"""

from __future__ import annotations

import torch
from torch import Tensor

from numeric.inputs.problem import Problem
from numeric.options import side_seed
from numeric.plan.llc_plan import LLCPlan
from numeric.sampler import sgld
from numeric.sampler.chains import Chains
from numeric.sampler.gradients import gradient_fn
from numeric.sampler.kernel import Kernel
from numeric.types import Tuning
from numeric.warmup.curvature import Curvature, consistent_curvature
from numeric.warmup.friction import minibatch_heating


class DataProbes:
    """The measurements warm-up and sampling take where the chains are (module docstring)."""

    def __init__(
        self,
        problem: Problem,
        plan: LLCPlan,
        kern: Kernel,
        chains: Chains,
        gen: torch.Generator,
        step_scale: float,
        seed: int,
    ) -> None:
        self.problem, self.plan, self.kern, self.chains, self.gen = problem, plan, kern, chains, gen
        self.step_scale = step_scale
        # the heating's Hessian minibatches and probes: a side stream, not the run's
        self.side = torch.Generator(device=gen.device).manual_seed(side_seed(seed))
        # the κ checks' minibatches and start vectors: a third stream, so that adding a check
        # moves neither the run's nor the heating's
        self.checks = torch.Generator(device=gen.device).manual_seed(side_seed(side_seed(seed)))
        model, consts = problem.model, kern.consts

        def curvature_on(g: torch.Generator) -> Curvature:
            """The potential's curvature with Hessian minibatches drawn from ``g``."""
            return Curvature(
                lambda w, difference: model.hvp_at(w, g, difference=difference),
                problem.nbeta,
                consts.gamma,
                consts.alpha,
                plan.pre_s,
                plan.pre_m,
            )

        self._curvature, self._checked = curvature_on(gen), curvature_on(self.checks)

    def curvature(self, v: Tensor, iters: int) -> tuple[float, Tensor]:
        """κ consistent with where a step lands (``curvature.consistent_curvature``)."""
        return self._consistent(self._curvature, self.gen, v, iters)

    def check_curvature(self, v: Tensor | None, iters: int) -> tuple[float, Tensor]:
        """``curvature`` on the checks' stream (a random start where ``v`` is None): a check
        that leaves the run's own stream and the heating's as they were."""
        w = self.chains.position
        if v is None:
            v = torch.randn(w.shape, generator=self.checks, device=w.device, dtype=w.dtype)
        return self._consistent(self._checked, self.checks, v, iters)

    def _consistent(
        self, curvature: Curvature, gen: torch.Generator, v: Tensor, iters: int
    ) -> tuple[float, Tensor]:
        return consistent_curvature(
            curvature, self.chains.position, self.chains.alive, v, self.step_scale, gen, iters,
            self.plan.pre_s,
        )  # fmt: skip

    def heating(self, tuning: Tuning, factor: float) -> float:
        """The factor by which minibatch noise inflates λ̂ where the chains are (``factor``:
        ``sgld.noise_heating``; the noise weighted by λ̂'s directions, ``friction``). Exactly 1
        on the full batch, where ĝ = ∇L_n has no noise: not measured there (on a 12-parameter
        network its quadratures took a quarter of the burn-in)."""
        if self.plan.kernel_spec.full_batch:
            return 1.0
        model, kern = self.problem.model, self.kern
        consts = kern.consts

        def grad(chosen: Tensor) -> sgld.GradientFn:
            return gradient_fn(
                model.f, self.plan.kernel_spec, consts, chosen, model.data, model.indices
            )

        return minibatch_heating(
            grad,
            self.chains.position,
            self.chains.alive,
            self.gen,
            tuning.step_size,
            self.problem.nbeta,
            self.plan.pre_s,
            heating=factor,
            hvp_at=lambda w: model.hvp_at(w, self.side),
            floor=float(consts.gamma + consts.alpha),
            side=self.side,
        )
