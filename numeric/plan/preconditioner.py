r"""The preconditioner M, decided before the first step from H(w*) (``hessian_rule``). The rules,
each recorded in ``LLCEstimate.config``:

* **Hessian at w*** H = ∇²L_n(w*), on at most 16384 samples, and for the dense Hessian at most
  max(2048, 2²²/D) (``hessian.at_w_star.hessian_subset``, ``full_data_hessian``):
  dense (D blocks of Hessian-vector products, eigen-decomposed: ``numeric.hessian.dense``) when
  D ≤ 2048; above that its extreme spectrum by deflated Lanczos (``numeric.hessian.spectrum``:
  rounds of 32 Hessian-vector products, at most 256, the converged relevant eigenpairs of each round
  locked before the next, so repeated eigenvalues are found too), whatever the preconditioner: it
  names the slow directions for the plan's rules (``numeric.plan.llc_plan``), and the lowest
  eigenvalue says whether w* is a minimum. Where w* is not a minimum (nβ·h_min < −(γ + α), e.g. the
  true parameter of a singular model with noisy data) ``"auto"`` uses no preconditioner and the
  slow-direction rules are off.
* **Preconditioner** ``"auto"`` (only with the control-variate gradient and ε not given): the
  dense M = (nβ·H⁺ + (γ + α)·I)⁻¹ (negative eigenvalues clipped) when D ≤ 2048; above that the
  low-rank M of ``numeric.hessian.spectrum`` (the locked stiff directions whitened, the rest scaled
  by its own stiffest curvature κ_r) when it divides the stiffest curvature by at least
  ``LOWRANK_GAIN`` = 2 (outliers above a bulk), otherwise none. Without one ε must resolve the
  stiffest direction (nβ·h_max) while the softest relevant one (nβ·h_min) relaxes h_max/h_min
  times slower: at a minimum of a network with Hessian eigenvalues spread over three decades
  the default run was far too short and said nothing. With the dense one every locally quadratic
  direction has curvature 1 and ε = O(0.1). Neither is used with ``gradient="minibatch"``: there
  a large ε inflates the temperature of every direction by 1 + ε·nβ²·Var(ĝ)/4, and plain SGLD is
  what that option is for (comparisons with devinterp). ``"hessian"`` forces the dense one (any
  D whose D×D matrix takes at most ``MAX_DENSE_BYTES`` = 4 GiB and fits the free memory, else
  refused before any allocation: ``hessian.dense.require_dense_fits``; D² memory, D HVPs),
  ``"lowrank"`` the low-rank one (any D: k·D memory, two [C, D]·[D, k]
  products a step); ``"none"`` turns them off. Both are fixed positive-definite matrices, so the
  target is unchanged. The dense one scales the directions below the softest relevant one like
  it, except the soft ones (0 < nβh < γ + α) along which the potential is checked quadratic
  wherever the target puts the chains (``numeric.plan.soft_whitening``): those at their own
  curvature.

The plan (``numeric.plan.llc_plan``) takes M, the slowest relevant direction's curvature
(``slowest_relevant_curvature``) and the flat directions' (``flat_curvature``) from here.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from numeric.errors import InvalidInputError
from numeric.hessian.at_w_star import full_data_hessian
from numeric.hessian.dense import MAX_DENSE_DIM, HessianInfo, hessian_info
from numeric.hessian.spectrum import LOWRANK_GAIN, SpectrumInfo, finite, hessian_spectrum
from numeric.inputs.problem import Problem
from numeric.options import LLCOptions
from numeric.plan.soft_whitening import whiten_quadratic_soft

CurvatureInfo = HessianInfo | SpectrumInfo


def lowest_eigenvalue(info: CurvatureInfo) -> float:
    return info.lowest if isinstance(info, SpectrumInfo) else float(info.eigvals.min())


def _dense_hessian(problem: Problem, opts: LLCOptions) -> HessianInfo:
    """H(w*) eigen-decomposed (by differences of the gradient where double backward is not
    finite)."""
    h = full_data_hessian(problem.model, problem.w_star, opts.seed)
    if not bool(torch.isfinite(h).all()):  # autograd's second derivative can be NaN where the
        # loss is smooth (w ** 0 with a tensor exponent at w = 0): central differences instead
        h = full_data_hessian(problem.model, problem.w_star, opts.seed, difference=True)
        if not bool(torch.isfinite(h).all()):
            raise InvalidInputError(
                "∇²L_n(w*) is not finite, by double backward or by differences of the gradient: "
                "the loss is not twice differentiable at w*"
            )
    return hessian_info(h, problem.nbeta, opts.gamma, opts.prior_precision)


def _spectrum(problem: Problem, opts: LLCOptions) -> SpectrumInfo:
    """The extreme spectrum of H(w*) by deflated Lanczos (``numeric.hessian.spectrum``)."""
    info = hessian_spectrum(
        problem.model,
        problem.w_star,
        opts.seed,
        problem.nbeta,
        opts.gamma,
        opts.prior_precision,
    )
    if not finite(info):
        raise InvalidInputError(
            "∇²L_n(w*)·v is not finite, by double backward or by differences of the gradient: "
            "the loss is not twice differentiable at w*"
        )
    return info


def hessian_rule(
    problem: Problem, opts: LLCOptions
) -> tuple[CurvatureInfo, CurvatureInfo | None, str]:
    """(H(w*) as computed, the same if its slow directions apply (w* a minimum), the
    preconditioner: "hessian", "lowrank" or "none")."""
    d = problem.dim
    automatic = (
        opts.preconditioner == "auto"
        and (opts.gradient == "control_variate" or problem.full_batch)
        and opts.step_size is None
    )
    info: CurvatureInfo
    if opts.preconditioner == "lowrank":
        info, kind = _spectrum(problem, opts), "lowrank"
    elif d <= MAX_DENSE_DIM or opts.preconditioner == "hessian":
        info = _dense_hessian(problem, opts)
        kind = "hessian" if opts.preconditioner == "hessian" or automatic else "none"
    else:
        info = _spectrum(problem, opts)
        kind = "lowrank" if automatic and info.gain() >= LOWRANK_GAIN else "none"
    if problem.nbeta * lowest_eigenvalue(info) < -info.floor:
        # w* is not a minimum (a saddle, e.g. the true parameter of a singular model): the
        # quadratic picture behind M and the slow-direction rules does not hold there
        forced = opts.preconditioner in ("hessian", "lowrank")
        return info, None, kind if forced else "none"
    if kind == "hessian" and isinstance(info, HessianInfo):  # soft directions where quadratic
        info = whiten_quadratic_soft(problem.model, problem.w_star, info, opts.seed)
    return info, info, kind


def flat_curvature(info: CurvatureInfo, kind: str, floor: float) -> float:
    """The preconditioned curvature of a direction flat at w* (held by c = γ + α alone): c
    without a preconditioner; c/k_soft with the dense one (it scales flat directions like the
    softest relevant one, k_soft; 1 when there is none); c/κ_r with the low-rank one."""
    if kind == "lowrank" and isinstance(info, SpectrumInfo):
        return info.floor / info.rest_curvature()
    if kind == "hessian" and isinstance(info, HessianInfo):
        k_soft = info.softest_relevant
        return 1.0 if math.isnan(k_soft) else info.floor / k_soft
    return floor


def slowest_relevant_curvature(info: CurvatureInfo, kind: str, curvatures: Tensor) -> float:
    """The preconditioned curvature of the slowest relevant direction (curvature
    ``curvatures[0]`` unpreconditioned): 1 with the dense preconditioner, 1 (whitened) or κ/κ_r
    with the low-rank one, κ itself without."""
    if kind == "hessian":
        return 1.0
    if kind == "lowrank" and isinstance(info, SpectrumInfo):
        if info.slowest_is_whitened():
            return 1.0
        return float(curvatures[0]) / info.rest_curvature()
    return float(curvatures[0])
