r"""Local learning coefficient of a model with data: ``estimate_llc``.

λ̂ = nβ·(E_w[L_n(w)] − L_n(w*)) with w drawn by SGLD (``numeric.sgld``) from the localised
tempered posterior p(w) ∝ exp(−nβ·L_n(w) − (γ/2)‖w − w*‖² − (α/2)‖w‖²) (REFERENCE §6). Chains are
the leading axis of one [C, D] tensor; the loss is vectorised over chains with ``torch.func.vmap``
(each chain draws its own minibatch: one ``randint`` of shape [C, B] per step).

Defaults and the rules behind them (all recorded in ``LLCEstimate.config``):

* nβ = n / log n (β = 1/log n, the WBIC temperature).
* Gradient estimator ``"control_variate"`` (SGLD-CV, Baker et al. 2019):
  ĝ(w) = ∇L_B(w) − ∇L_B(w*) + ∇L_n(w*). Unbiased; near w* its variance is tiny, so the minibatch
  noise that inflates the sampling temperature by ≈ 1 + ε·nβ²·Var(∇L_B)/4 (large at nβ = n/log n)
  is removed. ``"minibatch"`` is plain SGLD (Lau et al., devinterp).
* Anchors (``anchor_every``, SVRG-style; Dubey et al. 2016): far from w* the control variate
  above does nothing (at a singular w* the chains spread along flat directions, and on
  y = x·w1·w2 at the origin the inflated temperature put SGLD-CV's estimates 1–5 standard errors
  above the exact target). So where the chains spread far from w* (flat directions, below),
  every ⌈n/B⌉ steps (rounded up to a multiple of 8) each chain's position becomes its anchor r,
  with ∇L_n(r) on the full data (about 40% more work), and each step uses
  ĝ = ∇L_B(w) − ∇L_B(a) + ∇L_n(a) with a the nearer of r and w*, chosen before the minibatch is
  drawn (so ĝ stays unbiased). L_B(w*) is still evaluated on every minibatch. Near a minimum
  with a Hessian rule the centre stays at w*: as good there, and cheaper (+45% time on a
  quadratic network in the report, with no gain).
* Integrator ``"auto"``: ``"lm"`` (Leimkuhler–Matthews; ``numeric.sgld``; exact for Gaussian
  directions) near a minimum with a Hessian rule; ``"baoab"`` (underdamped Langevin, LM's
  finite-friction form) where the chains spread along flat directions (below), with friction
  ξ = 2√κ_flat (critical damping of the directions held by γ alone). There ε is set by the
  stiffest curvature κ the chains reach and the flat directions relax in ≈ 1/√(ε·κ_flat) steps
  instead of 2/(ε·κ_flat). The price is minibatch heating: the velocity integrates the gradient
  noise over ≈ 1/(ξ√ε) steps (``sgld.noise_heating``), so during burn-in, as the chains spread
  and the control variate's variance grows, ξ is raised (never lowered) until the heating
  measured where the chains are is at most 1 + ``HEAT_TOL`` (``sgld.friction_for_heating``; ∞,
  i.e. LM, when even LM heats more), and the anchors are refreshed every ⌈n/3B⌉ steps instead of
  every epoch (back to an epoch when ξ reaches ∞). Measured: on y = x·w1·w2 at the noisy saddle
  (n = 2000) standard errors 2.5× smaller in the same time with z-scores against quadrature of
  sd 0.94 (LM: 7 of 8 runs with ‖w − w*‖² unmixed); on RRR M = N = H = 2 at the origin with
  y = 0 (n = 10⁴) ξ rose to 11.7 (relaxation ≈ 1,700 steps instead of 41,000) and the same 50 s
  gave 1.447 ± 0.013 with ‖w − w*‖² at ESS 105 instead of 1.449 ± 0.033 at ESS 10. With noisy
  responses (RRR at the noisy origin) the gradient noise keeps ξ near LM's limit and both are
  slow.
* Preconditioner ``"auto"``: the dense M = (nβ·H⁺ + (γ + α)·I)⁻¹ from H = ∇²L_n(w*)
  (``numeric.precondition``; H from D blocks of Hessian-vector products on at most 16384 samples,
  eigen-decomposed, negative eigenvalues clipped) when D ≤ 2048, the gradient is the control
  variate and ε is not given; otherwise none. Without it ε must resolve the stiffest direction
  (nβ·h_max) while the softest relevant one (nβ·h_min) relaxes h_max/h_min times slower: at a
  minimum of a network with Hessian eigenvalues spread over three decades the default run was
  far too short and said nothing. With it every locally quadratic direction has curvature 1 and
  ε = O(0.1). It is not used with ``gradient="minibatch"``: there a large ε inflates the
  temperature of every direction by 1 + ε·nβ²·Var(ĝ)/4, and plain SGLD is what that option is
  for (comparisons with devinterp). ``"hessian"`` forces it (any D: D² memory, D HVPs);
  ``"none"`` turns it off. The Hessian is computed whenever D ≤ 2048 (or the preconditioner is
  used), also without preconditioning: it names the slow directions for the rules below. Where
  w* is not a minimum (nβ·h_min < −(γ + α), e.g. the true parameter of a singular model with
  noisy data) ``"auto"`` uses no preconditioner and the slow-direction rules are off.
* Step size ε = ``step_scale`` / κ with κ = λ_max(M^{1/2}·∇²U_B(w)·M^{1/2}) (M = I without
  preconditioner: κ = nβ·|λ_max(∇²L_B(w))| + γ + α), the largest curvature of
  the potential where the chains are and where one step of size ε takes them (power iteration
  with Hessian-vector products; the self-consistent ε is found by a damped fixed-point
  iteration, which matters at singular w*, whose curvature is often 0 at w* and large one step
  away). κ is measured at w* and again after 1, 2, 4, …, 64 steps; ε uses the largest of the
  last three measurements. After burn-in κ is measured once more and ε shrunk (with two more
  burn-in blocks) if it grew by more than half.
* Slowest relevant direction (when H is known): the eigenvector of H with the smallest
  nβ·h ≥ γ + α; its preconditioned curvature κ_min (1 with the Hessian preconditioner,
  nβ·h + γ + α without) gives the relaxation time t = 2/(ε·κ_min) steps.
* Flat directions: where no direction has a Hessian rule (w* is not a minimum, or every nβ·h is
  below γ + α, as at a singular w* whose Hessian is 0) the chains spread from w* along
  directions held only by the localisation, (preconditioned) curvature κ_flat = γ + α (1 with
  the preconditioner), relaxation time t_flat (``precondition.relaxation_steps``: 2/(ε·κ_flat)
  under LM, ≈ 1/√(ε·κ_flat) under BAOAB at critical damping). λ̂ depends on that spread: on RRR
  M = N = H = 2 at the noisy origin runs of ~700 LM steps gave 0.87–1.50, an exact sampler 1.11.
* Burn-in: the 128 adaptation steps, then up to 5·t steps, then (flat directions) up to 2·t_flat
  steps in chunks (LM: doubling from 256; BAOAB: half of t_flat, at most doubling) with κ
  re-measured after each and ε shrunk if it grew by more than half (the spread reaches regions of
  higher curvature), and BAOAB's friction raised if the heating grew (at most 20000 steps in
  all), then blocks
  of 100 steps until two consecutive blocks agree (|z| < 2 on nβ·ΔL and on ‖w − w*‖², ESS-based
  errors), at most 40 blocks.
* Draws: enough for ≈ 400 effective samples over all chains given the autocorrelation time
  measured on the last two burn-in blocks, and for ≈ 400 effective samples of the slowest
  direction (its autocorrelation time is ≈ 2t), within [200, 20000] per chain; the
  ``draws_capped`` finding says when the cap binds. Where the loss trace's ESS then falls short of
  200 (its τ, measured on 200 burn-in steps, was too short: 4 chains of a 10⁶-parameter deep
  linear network gave ESS 52 from 4,099 draws), draws are added until it reaches 200 (at most
  20000 per chain, three extensions). With flat directions, draws are added
  (``_engine.draws_until_mixed``, at most 20000 per chain) until ‖w − w*‖² has ESS 400; its ESS and
  R-hat go into ``slow_ess``/``slow_rhat`` and a ``slow_mixing`` warning when ESS < 100 or
  R-hat > max(1.01, 1 + 2m/ESS) (an error when burn-in + draws < t_flat/2, the e-folding time
  of the spread ‖w − w*‖²).
* Mixing of the slow directions: at every draw the gradient estimate d = ∇Û(w) the step used is
  projected on the (up to) three slowest relevant directions, r_j = u_j·d/√(nβh_j + γ + α)
  (unit variance, mean exactly 0 under the target since E_p[∇U] = 0), and the ``slow_mixing``
  finding reports their ESS and R-hat (``diagnostics.direction_mixing``; a warning below ESS 100
  or above R-hat max(1.05, 1 + 2m/ESS), an error below ESS 30, above R-hat max(1.1, 1 + 4m/ESS)
  or when the whole run is shorter than t: R-hat − 1 of well-mixed chains is ≈ m/ESS, large for
  many short chains, ``diagnostics.rhat_limit``): the loss trace is
  dominated by the fast, stiff directions and its ESS can look fine while the soft ones have not
  moved. The gradient rather than the position: where the minimum is a curved manifold the
  chains drift slowly along it, which moves (w − w*)·u_j but not the mean of u_j·∇U, and does
  not change the LLC.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap

from numeric import _engine, kernel, sgld
from numeric._params import ParamSpec, flatten_params
from numeric.data import data_len, non_finite_parts, signature, take, to_device
from numeric.diagnostics import (
    Finding,
    check_draws_capped,
    check_slow_mixing,
    check_step_size,
    direction_mixing,
    ess,
)
from numeric.errors import InvalidInputError
from numeric.precondition import (
    MAX_DENSE_DIM,
    HessianInfo,
    dense_hessian,
    hessian_info,
    relaxation_steps,
)
from numeric.result import (
    FullDataLLC,
    LLCConfig,
    LLCEstimate,
    chain_stats,
    standard_findings,
)

LossFn = Callable[[dict[str, Tensor], Any], Tensor]
Gradient = Literal["control_variate", "minibatch"]
Preconditioning = Literal["auto", "none", "hessian"]
ADAPT_STEPS = 128
HESSIAN_SAMPLES = 16384  # at most this many samples (a fixed random subset) for H at w*
HESSIAN_CHUNK = 2048
MAX_BURNIN_STEPS = 20_000
SLOW_ESS, NUM_SLOW = 400.0, 3
# automatic draws are extended while the loss trace's ESS is below this (its autocorrelation time
# was measured on 200 burn-in steps, which cannot see a longer one)
LOSS_ESS = 200.0
INFLATION_CHAINS = 16  # chains the minibatch-noise inflation is measured on
HEAT_TOL = 0.01  # BAOAB's default friction keeps the minibatch heating at most 1 + this


@dataclass(frozen=True)
class ModuleLoss:
    """``loss(module(x...), y)`` with the module's parameters replaced by ``params``.

    Built with ``torch.func.functional_call``; the module's buffers are used as they are (held
    fixed). Two instances are equal when module and loss are the same objects, so a compiled
    kernel (``compile=True``) is reused by later estimates on the same module.
    """

    module: nn.Module
    loss: Callable[[Tensor, Tensor], Tensor]

    def __call__(self, params: dict[str, Tensor], batch: Sequence[Tensor]) -> Tensor:
        *xs, y = batch
        return self.loss(functional_call(self.module, params, tuple(xs)), y)


def from_module(
    module: nn.Module, loss: Callable[[Tensor, Tensor], Tensor]
) -> tuple[ModuleLoss, dict[str, Tensor]]:
    """``(loss_fn, w*)`` for an ``nn.Module``: ``loss_fn(params, (x..., y)) = loss(module(x...), y)``.

    ``w*`` is a detached copy of the module's parameters. ``loss`` must return the mean over the
    batch.
    """
    params = {k: v.detach().clone() for k, v in module.named_parameters()}
    return ModuleLoss(module, loss), params


class _Model:
    """The loss vectorised over chains, its gradients, HVPs and full-data losses."""

    def __init__(self, loss_fn: LossFn, spec: ParamSpec, data: Any, n: int, batch: int) -> None:
        self.spec, self.data, self.n, self.batch = spec, data, n, batch

        def f(flat: Tensor, b: Any) -> Tensor:
            return loss_fn(spec.unflatten(flat), b)

        self.f = f
        self.per_chain = vmap(f, randomness="different")  # params [C, D], batch [C, B, ...]
        self.shared_batch = vmap(f, in_dims=(0, None), randomness="different")

    def indices(self, c: int, gen: torch.Generator, device: torch.device) -> Tensor:
        return torch.randint(self.n, (c, self.batch), generator=gen, device=device)

    def hvp_at(self, w: Tensor, gen: torch.Generator) -> Callable[[Tensor], Tensor]:
        batch = take(self.data, self.indices(w.shape[0], gen, w.device))
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            losses = self.per_chain(ww, batch)
            (g,) = torch.autograd.grad(losses.sum(), ww, create_graph=True)

        def hvp(v: Tensor) -> Tensor:
            with torch.enable_grad():
                (hv,) = torch.autograd.grad(g, ww, grad_outputs=v, retain_graph=True)
            return hv.detach()

        return hvp

    def chunks(self, c: int) -> list[tuple[int, int]]:
        size = max(self.batch, min(self.n, max(1, 65536 // max(c, 1))))
        return [(s, min(s + size, self.n)) for s in range(0, self.n, size)]

    def full_loss(self, w: Tensor) -> Tensor:
        """L_n at positions [C, D]."""
        return self._data_mean(w, self.shared_batch, w.shape[0], with_grad=False)[0]

    def full_loss_grad(self, w: Tensor) -> tuple[Tensor, Tensor]:
        """(L_n, ∇L_n) at positions [C, D]."""
        return self._data_mean(w, self.shared_batch, w.shape[0], with_grad=True)

    def full_grad(self, w: Tensor) -> tuple[Tensor, Tensor]:
        """(L_n(w), ∇L_n(w)) for one position [D]."""
        return self._data_mean(w, self.f, 1, with_grad=True)

    def _data_mean(
        self, w: Tensor, loss: Callable[[Tensor, Any], Tensor], rows: int, *, with_grad: bool
    ) -> tuple[Tensor, Tensor | None]:
        """Mean over the data of ``loss(w, chunk)`` (one value per position), chunk by chunk
        (``chunks(rows)``), and with ``with_grad`` its gradient (one reverse pass a chunk)."""
        total = w.new_zeros(w.shape[:-1])
        grad = torch.zeros_like(w) if with_grad else None
        for s, e in self.chunks(rows):
            part = take(self.data, torch.arange(s, e, device=w.device))
            if with_grad:
                with torch.enable_grad():
                    ww = w.detach().requires_grad_(True)
                    val = loss(ww, part)
                    (g,) = torch.autograd.grad(val.sum(), ww)
                grad += g * (e - s)
                val = val.detach()
            else:
                with torch.no_grad():
                    val = loss(w, part)
            total += val * (e - s)
        return total / self.n, None if grad is None else grad / self.n


def _hessian(model: _Model, w_star: Tensor, seed: int) -> Tensor:
    """∇²L_n(w*) [D, D] on at most ``HESSIAN_SAMPLES`` samples, chunk by chunk."""
    n, dev = model.n, w_star.device
    m = min(n, HESSIAN_SAMPLES)
    if m < n:
        g = torch.Generator().manual_seed(seed)
        idx = torch.randperm(n, generator=g)[:m].sort().values.to(dev)
    else:
        idx = torch.arange(n, device=dev)
    total = w_star.new_zeros(w_star.numel(), w_star.numel())
    for s in range(0, m, HESSIAN_CHUNK):
        part = take(model.data, idx[s : s + HESSIAN_CHUNK])
        size = min(m, s + HESSIAN_CHUNK) - s
        total += dense_hessian(lambda w, b=part: model.f(w, b), w_star) * (size / m)
    return total


def _check_loss(model: _Model, w_star: Tensor) -> None:
    """Call the loss once on a small batch, turning shape errors into clear messages."""
    idx = torch.arange(min(model.n, 2), device=w_star.device)
    try:
        out = model.f(w_star, take(model.data, idx))
    except (RuntimeError, IndexError, TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"loss_fn(params, batch) failed on a batch of the data at w*: {exc}. Check that the "
            "parameter shapes match the model and that data is a tuple of tensors whose first "
            "axis indexes samples"
        ) from exc
    if not isinstance(out, Tensor) or out.dim() != 0:
        shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise InvalidInputError(f"loss_fn must return the mean loss (a scalar), got {shape}")


def estimate_llc(
    loss_fn: LossFn,
    params: Mapping[str, Tensor],
    data: Any,
    *,
    nbeta: float | None = None,
    gamma: float = 1.0,
    prior_precision: float = 0.0,
    step_size: float | None = None,
    num_chains: int = 4,
    num_draws: int | None = None,
    num_burnin: int | None = None,
    batch_size: int | None = None,
    seed: int = 0,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
    gradient: Gradient = "control_variate",
    integrator: sgld.Integrator | Literal["auto"] = "auto",
    friction: float | None = None,
    preconditioner: Preconditioning = "auto",
    step_scale: float = 0.25,
    full_loss_every: int | None = None,
    anchor_every: int | None = None,
    on_divergence: _engine.OnDivergence = "raise",
    progress: bool | None = None,
    compile: bool = False,
) -> LLCEstimate:
    r"""Estimate the local learning coefficient at ``params`` (= w*) with SGLD.

    ``loss_fn(params, batch)`` returns the mean loss of ``batch`` for a dict of tensors ``params``
    (see ``from_module``); it must be traceable by ``torch.func.vmap`` (no ``.item()``, no
    in-place updates of inputs). ``data`` is a tuple of tensors with samples on the first axis, a
    dict of them (batches are then dicts with the same keys), or anything indexable by a tensor of
    indices; a batch is ``take(data, idx)``. Tensors with NaN or inf entries are not dropped: the
    loss at w* is then not finite, and the error names them.

    Arguments left ``None`` are chosen from the problem (module docstring); ``gamma`` is γ, the
    localisation strength, and ``prior_precision`` α, of a Gaussian prior N(0, α⁻¹ I). A
    non-finite or exploding loss raises ``DivergenceError`` naming chain and step unless
    ``on_divergence="continue"`` (then the diverged chains are dropped and reported). The full-data
    estimate evaluates L_n at the chains every ``full_loss_every`` steps (default ⌈n/B⌉, at most
    draws/10; about one more forward pass per step; 0 turns it off).

    ``anchor_every`` (control-variate gradient only): every this many steps each chain's current
    position becomes its anchor r, with ∇L_n(r) computed on the full data, and each step centres
    the control variate at the nearer of r and w* (module docstring). Default: where the chains
    spread far from w* (no Hessian slow-direction rule applies: w* is not a minimum, or it is
    singular with no direction stiffer than γ + α), ⌈n/B⌉ rounded up to a multiple of 8 (an
    epoch; the full gradients then cost about 40% of the minibatch work); elsewhere 0, the
    centre at w* (near a minimum it is as good and cheaper).

    ``integrator``: ``"auto"`` (LM near a minimum, BAOAB where the chains spread along flat
    directions: module docstring), ``"lm"``, ``"euler"`` (devinterp's update) or ``"baoab"``
    (underdamped Langevin with ``friction`` ξ; default 2√κ of the slowest directions, critical
    damping, raised during burn-in where the chains spread until the minibatch heating is at most
    1%; ``numeric.sgld``). A given ``friction`` is kept, and used only where BAOAB runs.

    ``preconditioner``: ``"auto"`` (the dense Hessian preconditioner when D ≤ 2048, the gradient is
    the control variate and ``step_size`` is None), ``"hessian"`` or ``"none"`` (module
    docstring). A given ``step_size`` is in the preconditioned metric when one is used.

    ``compile=True`` runs the SGLD steps through one ``torch.compile``d kernel of
    ``kernel.UNROLL`` fused steps (same random numbers as the eager loop, so the same estimate up
    to rounding, for C·D up to 2²¹): 10–30× fewer microseconds per step for small models, after a
    one-off compile (20–35 s the first time on a machine, 9–11 s in a later process, which finds
    inductor's generated code on disk). The kernel is cached per process for the same
    ``loss_fn`` object (``from_module`` returns equal ones for the same module), shapes and
    settings, so later estimates on the same model do not compile again. Worth it for long runs
    and for many estimates of one architecture (checkpoints, sweeps).
    """
    _engine.validate_common(
        1.0 if nbeta is None else nbeta,
        gamma,
        prior_precision,
        step_size,
        num_chains,
        num_draws,
        num_burnin,
    )
    if gradient not in ("control_variate", "minibatch"):
        raise InvalidInputError(
            f"gradient must be 'control_variate' or 'minibatch', not {gradient!r}"
        )
    if integrator not in ("auto", "lm", "euler", "baoab"):
        raise InvalidInputError(
            f"integrator must be 'auto', 'lm', 'euler' or 'baoab', not {integrator!r}"
        )
    if friction is not None and not (isinstance(friction, (int, float)) and friction > 0):
        raise InvalidInputError(f"friction must be a number > 0 (or None), got {friction!r}")
    if friction is not None and integrator in ("lm", "euler"):
        raise InvalidInputError(
            f"friction applies to integrator='baoab' (or 'auto'), not {integrator!r}"
        )
    if preconditioner not in ("auto", "none", "hessian"):
        raise InvalidInputError(
            f"preconditioner must be 'auto', 'none' or 'hessian', not {preconditioner!r}"
        )
    if not (math.isfinite(step_scale) and 0 < step_scale < 4):
        raise InvalidInputError(f"step_scale must be in (0, 4), got {step_scale!r}")
    w_star, spec = flatten_params(params, dtype=dtype, device=device)
    dev, dt = w_star.device, w_star.dtype
    n = data_len(data)
    if n < 1:
        raise InvalidInputError("data is empty (n = 0)")
    nbeta_v, nbeta_rule = _engine.default_nbeta(n, nbeta)
    bsz = min(n, 256) if batch_size is None else batch_size
    if not (isinstance(bsz, int) and bsz >= 1):
        raise InvalidInputError(f"batch_size must be an int ≥ 1, got {batch_size!r}")
    if anchor_every is not None:
        if not (isinstance(anchor_every, int) and anchor_every >= 0):
            raise InvalidInputError(f"anchor_every must be an int ≥ 0, got {anchor_every!r}")
        if anchor_every > 0 and gradient != "control_variate":
            raise InvalidInputError(
                "anchor_every applies to gradient='control_variate' only (pass 0 or None)"
            )
    if full_loss_every is not None and not (
        isinstance(full_loss_every, int) and full_loss_every >= 0
    ):
        raise InvalidInputError(f"full_loss_every must be an int ≥ 0, got {full_loss_every!r}")
    data = to_device(data, dev, dt)
    if compile and signature(data) is None:
        raise InvalidInputError(
            "compile=True needs data as a tensor or a tuple of tensors (samples on the first axis)"
        )
    model = _Model(loss_fn, spec, data, n, bsz)
    _check_loss(model, w_star)
    init_loss_t, g_star = model.full_grad(w_star)
    init_loss = float(init_loss_t)
    if not math.isfinite(init_loss):
        bad = non_finite_parts(data)
        verb = "has" if len(bad) == 1 else "have"
        where = f": {', '.join(bad)} {verb} NaN or inf entries" if bad else ""
        raise InvalidInputError(f"L_n(w*) = {init_loss} is not finite{where}")

    c, d = num_chains, spec.dim
    use_pre = preconditioner == "hessian" or (
        preconditioner == "auto"
        and d <= MAX_DENSE_DIM
        and gradient == "control_variate"
        and step_size is None
    )
    hinfo: HessianInfo | None = None
    pre_m = pre_s = None
    if use_pre or d <= MAX_DENSE_DIM:
        hinfo = hessian_info(_hessian(model, w_star, seed), nbeta_v, gamma, prior_precision)
        if nbeta_v * float(hinfo.eigvals.min()) < -hinfo.floor:
            # w* is not a minimum (a saddle, e.g. the true parameter of a singular model): the
            # quadratic picture behind M and the slow-direction rules does not hold there
            use_pre = preconditioner == "hessian"
            slow_info = None
        else:
            slow_info = hinfo
        if use_pre:
            pre_m, pre_s = hinfo.preconditioner()
    else:
        slow_info = None
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    slow_u, slow_k = slow_info.slow_directions(NUM_SLOW) if slow_info else (None, None)
    if slow_u is not None and slow_u.shape[1] > 0:
        probe = slow_u * slow_k.rsqrt()  # u_j/√(nβh_j + c): unit variance if U is quadratic
        kappa_min = 1.0 if pre_s is not None else float(slow_k[0])
    else:
        probe = w_star.new_zeros(d, 0)
        kappa_min = float("nan")
    # No Hessian rule for the slow directions (w* is not a minimum, or no direction has
    # curvature above γ + α, as at a singular w*): the chains spread from w* along directions
    # held only by the localisation, (preconditioned) curvature κ_flat, and the positions'
    # mixing (‖w − w*‖²) is measured instead
    track_positions = d <= MAX_DENSE_DIM and probe.shape[1] == 0
    kappa_flat = 1.0 if pre_s is not None else gamma + prior_precision
    if integrator == "auto":  # momentum where the slow directions are held by γ alone
        integrator = "baoab" if track_positions else "lm"
    xi0 = math.inf  # the friction: ∞ for LM and Euler (LM is BAOAB's ξ = ∞), kern.consts.friction
    if integrator == "baoab":  # default: critical damping of the slowest directions
        slowest = kappa_min if kappa_min > 0 and not track_positions else kappa_flat
        critical = 2.0 * math.sqrt(slowest) if slowest > 0 else 2.0
        xi0 = float(friction) if friction is not None else critical

    cv = gradient == "control_variate"
    epoch = 8 * math.ceil(n / bsz / 8)  # ⌈n/B⌉ steps, rounded up to a multiple of 8
    anchors_auto = anchor_every is None and cv and track_positions
    if anchor_every is None:  # anchors where the chains spread far from w*
        # an epoch of steps; with BAOAB (which moves the chains further between refreshes, and
        # whose velocity accumulates the gradient noise) as often as the full-data gradient
        # costs no more than the steps' own minibatch work (3 passes of B rows a step)
        often = 8 * math.ceil(n / (3 * bsz) / 8)
        anchor_every = (often if integrator == "baoab" else epoch) if anchors_auto else 0
    kspec = kernel.KernelSpec(
        control_variate=cv,
        integrator=integrator,
        stacked=c * d * bsz <= 2**22,  # small models are dispatch-bound: one call for w and w*
        anchored=anchor_every > 0,
    )
    consts = kernel.Constants(
        w_star, g_star, pre_s, probe, nbeta_v, gamma, prior_precision, friction=xi0
    )
    if kspec.anchored:  # until the first refresh every chain is anchored at w*
        consts = consts._replace(
            anchor=w_star.expand(c, d).clone(), g_anchor=g_star.expand(c, d).clone()
        )
    kern = kernel.Kernel(
        model.f,
        kspec,
        consts,
        data,
        compiled=compile,
        cache_key=_cache_key(loss_fn, spec, kspec, data, c, bsz),
    )
    norms = {"drift": w_star.new_zeros(c), "noise": w_star.new_zeros(c), "count": 0, "on": False}
    since_anchor = 0  # steps since the anchors were last set

    def block(
        state: sgld.SGLDState, m: int, eps: float, *, track_dist: bool, track_obs: bool
    ) -> tuple[sgld.SGLDState, kernel.BlockTrace]:
        nonlocal since_anchor, anchor_every
        record = kernel.Record(
            dist=track_dist, obs=track_obs and probe.shape[1] > 0, norms=norms["on"]
        )
        if not kspec.anchored:
            state, tr = kern.run_drawing(state, m, eps, gen, n, bsz, record)
        else:  # split at the anchor refreshes
            parts, done = [], 0
            while done < m:
                if since_anchor >= anchor_every:
                    pos = state.position.detach().clone()
                    kern.update_constants(anchor=pos, g_anchor=model.full_loss_grad(pos)[1])
                    since_anchor = 0
                k = min(m - done, anchor_every - since_anchor)
                state, part = kern.run_drawing(state, k, eps, gen, n, bsz, record)
                since_anchor += k
                done += k
                parts.append(part)
            tr = kernel.cat_traces(parts)
        if norms["on"]:
            norms["drift"] += tr.drift_sq
            norms["noise"] += tr.noise_sq
            norms["count"] += m
        return state, tr

    if progress is None:
        progress = sys.stderr.isatty()
    runner = _engine.Runner(
        sgld.init(w_star.expand(c, d), gen),
        None,
        lambda s: s.position,
        w_star,
        nbeta=nbeta_v,
        on_divergence=on_divergence,
        progress=progress,
        total_hint=(num_burnin or 1000) + (num_draws or 1000),
        block=block,
    )

    def curvature(v: Tensor, iters: int) -> tuple[float, Tensor]:
        pos = runner.state.position
        hvp = model.hvp_at(pos, gen)
        if pre_s is None:
            op, shift, scale = hvp, gamma + prior_precision, nbeta_v
        else:  # M^{1/2}·∇²U_B·M^{1/2}, all of it: the γ + α part is not a multiple of I here

            def op(u: Tensor) -> Tensor:
                return nbeta_v * (hvp(u @ pre_s) @ pre_s) + (gamma + prior_precision) * (u @ pre_m)

            shift, scale = 0.0, 1.0
        lam, v = _engine.power_iteration(op, v, iters)
        lam = lam[runner.alive & torch.isfinite(lam)]
        top = float(lam.max()) if lam.numel() else 0.0
        return scale * top + shift, v

    def relax(kappa: float) -> float:
        """e-folding steps of a direction of curvature κ at the current ε and friction."""
        if not kappa > 0:
            return math.nan
        return relaxation_steps(runner.step_size, kappa, kern.consts.friction)

    def shrink_if_stiffer() -> bool:
        """Re-measure κ where the chains are; if it grew by more than half, ε = step_scale/κ."""
        nonlocal kappa, v
        k_now, v = _consistent_curvature(curvature, runner, v, step_scale, gen, 8, pre_s)
        if not k_now > 1.5 * kappa:
            return False
        kappa = k_now
        runner.kappa, runner.step_size = kappa, step_scale / kappa
        return True

    def heating_here(factor: float = 1.0) -> float:
        """``_inflation`` with ``factor`` (``sgld.noise_heating``) at the chains' positions (up
        to ``INFLATION_CHAINS`` of those alive; nan with none)."""
        chosen = runner.alive.nonzero().squeeze(1)[:INFLATION_CHAINS]
        if chosen.numel() == 0:
            return math.nan
        grad = _gradient_fn(model, kspec, kern.consts, chosen)
        pos = runner.state.position[chosen]
        return _inflation(grad, pos, gen, runner.step_size, nbeta_v, pre_s, heating=factor)

    def cool() -> None:
        """BAOAB with the default friction: raise ξ (never lower it) until the minibatch heating
        measured where the chains are is at most ``HEAT_TOL`` (``sgld.friction_for_heating``);
        as the chains spread the control variate's variance grows with ‖w − a‖²."""
        nonlocal anchor_every
        if integrator != "baoab" or friction is not None:
            return
        excess = heating_here() - 1.0
        if math.isnan(excess):
            return
        need = sgld.friction_for_heating(excess, runner.step_size, HEAT_TOL)
        if need > kern.consts.friction:
            kern.update_constants(friction=need)
        if anchors_auto and math.isinf(kern.consts.friction):
            anchor_every = epoch  # LM's limit: the frequent anchors do not pay

    def relax_flat() -> float:
        return relax(kappa_flat) if track_positions else math.nan

    # ---- step size and burn-in -------------------------------------------------------------
    v = torch.randn(c, d, generator=gen, device=dev, dtype=dt)
    kappa = float("nan")
    burned = 0
    tail: _engine.Traces | None = None
    try:
        if step_size is None:
            adapt = ADAPT_STEPS if num_burnin is None else min(ADAPT_STEPS, num_burnin)

            def measure(v: Tensor, iters: int) -> tuple[float, Tensor]:
                return _consistent_curvature(curvature, runner, v, step_scale, gen, iters, pre_s)

            kappa, v = _engine.adapt_step_size(runner, measure, v, adapt, step_scale)
            burned = adapt
            rule = (
                f"ε = {step_scale:g}/κ, κ = nβ·|λ_max(∇²L_B)| + γ + α measured by power "
                "iteration where the chains were during adaptation"
                if pre_s is None
                else f"ε = {step_scale:g}/κ, κ = λ_max(M^½·∇²U_B·M^½) (Hessian preconditioner M) "
                "measured by power iteration where the chains were during adaptation"
            )
        else:
            runner.step_size = float(step_size)
            rule = "given"
        if num_burnin is None:
            t_relax = relax(kappa_min)
            if math.isfinite(t_relax) and 5 * t_relax > burned:
                extra = min(math.ceil(5 * t_relax), MAX_BURNIN_STEPS) - burned
                if extra > 0:
                    runner.advance(extra)
                    burned += extra
            # 2 relaxation times of the flat directions, over which the chains' spread from w*
            # reaches 1 − e⁻⁴ = 98% of its stationary variance; as they spread the curvature
            # can grow (quartic losses), so κ is re-measured after each doubling of the run
            # (BAOAB: in chunks of half a relaxation time, the friction raised after each so
            # that the minibatch heating stays small as the chains spread)
            cool()
            chunk = 0  # steps in the last chunk
            while burned < min(2 * relax_flat(), MAX_BURNIN_STEPS):
                if integrator == "baoab":  # half a relaxation time (longer as ξ rises), ≤ 2×
                    half = max(32, math.ceil(relax_flat() / 2))
                    chunk = min(2 * chunk, max(chunk, half)) if chunk else half
                else:  # doubling from 256
                    chunk = 2 * chunk if chunk else 256
                k = min(chunk, MAX_BURNIN_STEPS - burned)
                runner.advance(k)
                burned += k
                if step_size is None:
                    shrink_if_stiffer()
                cool()
            b, tail = _engine.burn_in_blocks(runner)
            burned += b
            cool()
            if step_size is None and shrink_if_stiffer():
                tail = runner.advance(2 * _engine.BLOCK)
                burned += 2 * _engine.BLOCK
        elif num_burnin > burned:
            tail = runner.advance(num_burnin - burned)
            burned = num_burnin
            cool()
        wanted = None  # draws the slowest direction needs, when the rule applies
        extend = num_draws is None
        if num_draws is None:
            num_draws = (
                _engine.draws_from_tail(tail, c)
                if tail is not None and tail.loss.shape[1] >= 50
                else 1000
            )
            t_relax = relax(kappa_min)
            if math.isfinite(t_relax):
                wanted = math.ceil(SLOW_ESS * 2 * t_relax / c)
                num_draws = max(num_draws, min(wanted, _engine.MAX_DRAWS))
        # ---- draws ---------------------------------------------------------------------------
        if full_loss_every is None:
            every = max(1, min(math.ceil(n / bsz), num_draws // 10))
        else:
            every = full_loss_every
        norms["on"] = True
        full: list[Tensor] = []

        def draws(count: int) -> _engine.Traces:
            parts, done = [], 0
            while done < count:
                k = min(every, count - done) if every else count - done
                parts.append(runner.advance(k, track_dist=track_positions, track_obs=True))
                done += k
                if k == every:
                    full.append(model.full_loss(runner.state.position))
            return _engine.join_traces(parts)

        def observed(t: _engine.Traces) -> np.ndarray:
            """What the draws are extended on: ‖w − w*‖² where the chains spread (target
            SLOW_ESS), else the loss trace, whose τ measured on 200 burn-in steps can be far too
            short (big models; target LOSS_ESS)."""
            x = t.dist if track_positions else t.loss - t.ref
            return x[..., None].double().cpu().numpy()[runner.alive.cpu().numpy()]

        tr, num_draws, mixing = _engine.draws_until_mixed(
            draws,
            num_draws,
            observed,
            extend=extend,
            target_ess=SLOW_ESS if track_positions else LOSS_ESS,
            max_draws=_engine.MAX_DRAWS,
            report=track_positions,
        )
        xi = kern.consts.friction
        inflation = heating_here(sgld.noise_heating(runner.step_size, integrator, xi))
    finally:
        runner.close()

    loss_tr = tr.loss.double().cpu().numpy()
    ref_tr = tr.ref.double().cpu().numpy()
    alive = runner.alive.cpu().numpy()
    findings: list[Finding] = list(_engine.divergence_findings(alive, runner.step_size, nbeta_v))
    delta = (loss_tr - ref_tr)[alive]
    st = chain_stats(delta, nbeta_v)
    findings.extend(standard_findings(delta, nbeta_v, st))
    findings.extend(check_step_size(_engine.noise_drift_ratio(norms), inflation))
    t_relax = relax(kappa_min)
    slow_ess = slow_rhat = math.nan
    if probe.shape[1] > 0:
        proj = tr.obs.double().cpu().numpy()[alive]
        slow_ess, slow_rhat = direction_mixing(proj)
        findings.extend(
            check_slow_mixing(
                slow_ess,
                slow_rhat,
                relaxation_steps=t_relax,
                num_burnin=burned,
                num_draws=int(num_draws),
                offer_preconditioner=pre_s is None,
                num_chains=int(alive.sum()),
            )
        )
    if track_positions:
        slow_ess, slow_rhat = mixing
        findings.extend(
            check_slow_mixing(
                slow_ess,
                slow_rhat,
                num_burnin=burned,
                num_draws=int(num_draws),
                # ‖w − w*‖² relaxes twice as fast as w: e-folding time t_flat/2
                relaxation_steps=relax_flat() / 2,
                offer_preconditioner=False,
                max_rhat=1.01,
                error_ess=0.0,
                error_rhat=math.inf,
                num_chains=int(alive.sum()),
                subject="the chains' positions",
                measured="‖w − w*‖²",
            )
        )
    if wanted is not None:
        findings.extend(
            check_draws_capped(wanted, int(num_draws), t_relax, offer_preconditioner=pre_s is None)
        )

    full_data = None
    if full:
        ft = torch.stack(full, 1).double().cpu().numpy()[alive]
        fst = chain_stats(ft - init_loss, nbeta_v)
        full_data = FullDataLLC(
            fst.mean,
            fst.std,
            fst.stderr,
            fst.per_chain,
            ft,
            ess(ft) if ft.shape[1] >= 4 else float(ft.size),
        )
    wbic = n * (init_loss + float(delta.mean())) if nbeta_rule == "n/log n" else None
    cfg = LLCConfig(
        n=n,
        nbeta=nbeta_v,
        nbeta_rule=nbeta_rule,
        gamma=float(gamma),
        prior_precision=float(prior_precision),
        step_size=runner.step_size,
        step_size_rule=rule,
        curvature=kappa,
        num_chains=c,
        num_draws=int(num_draws),
        num_burnin=burned,
        batch_size=bsz,
        seed=seed,
        sampler="sgld",
        integrator=integrator,
        gradient=gradient,
        acceptance_rate=float("nan"),
        full_loss_every=every if full else 0,
        anchor_every=anchor_every,
        friction=kern.consts.friction if integrator == "baoab" else math.nan,
        num_params=d,
        device=str(dev),
        dtype=str(dt).removeprefix("torch."),
        preconditioner="hessian" if pre_s is not None else "none",
        condition_number=hinfo.condition_number if hinfo is not None else math.nan,
        relaxation_steps=t_relax,
        laplace_llc=hinfo.laplace_llc() if hinfo is not None else math.nan,
    )
    return LLCEstimate(
        mean=st.mean,
        std=st.std,
        stderr=st.stderr,
        per_chain=st.per_chain,
        loss_trace=loss_tr,
        ref_loss_trace=ref_tr,
        init_loss=init_loss,
        nbeta=nbeta_v,
        ess=st.ess,
        rhat=st.rhat,
        wbic=wbic,
        diagnostics=tuple(findings),
        config=cfg,
        full_data=full_data,
        slow_ess=slow_ess,
        slow_rhat=slow_rhat,
        minibatch_inflation=inflation,
    )


def _consistent_curvature(
    curvature: Callable[[Tensor, int], tuple[float, Tensor]],
    runner: _engine.Runner,
    v: Tensor,
    step_scale: float,
    gen: torch.Generator,
    iters: int,
    sqrt_m: Tensor | None = None,
    rounds: int = 8,
) -> tuple[float, Tensor]:
    """κ such that ε = c/κ is consistent with the curvature where a step of size ε lands.

    κ = max(κ(w), κ(w + √ε·ξ)) at the chains' positions w: at a singular w* the curvature can
    be 0 while one step of size c/κ(w*) lands where it is huge. The damped iteration
    ε ← √(ε·c/κ) from ε = c/κ(w) converges to the fixed point (ε ∝ (nβ·D)^(-1/2) for a loss
    quartic at w*, as for reduced rank regression at the origin). With a preconditioner the step
    is √ε·M^{1/2}·ξ.
    """
    w0 = runner.state.position
    k0, v = curvature(v, iters)
    eps = step_scale / max(k0, 1e-12)
    xi = torch.randn(w0.shape, generator=gen, device=w0.device, dtype=w0.dtype)
    if sqrt_m is not None:
        xi = xi @ sqrt_m
    try:
        for _ in range(rounds):
            runner.state = runner.state._replace(position=w0 + math.sqrt(eps) * xi)
            k1, v = curvature(v, iters)
            new = math.sqrt(eps * step_scale / max(k0, k1, 1e-12))
            done = abs(math.log(new / eps)) < 0.1
            eps = min(eps, new) if done else new
            if done:
                break
    finally:
        runner.state = runner.state._replace(position=w0)
    return step_scale / eps, v


def _gradient_fn(
    model: _Model, spec: kernel.KernelSpec, k: kernel.Constants, chains: Tensor
) -> sgld.GradientFn:
    """ĝ, as the steps compute it, for the chains ``chains`` at positions [C', D] on fresh
    minibatches from a generator (outside the hot loop)."""
    gradient = kernel.make_gradient(model.f, spec)
    if spec.anchored:
        k = k._replace(anchor=k.anchor[chains], g_anchor=k.g_anchor[chains])

    def fn(w: Tensor, gen: torch.Generator) -> sgld.GradientEval:
        idx = model.indices(w.shape[0], gen, w.device)
        return gradient(w, idx, k, model.data)

    return fn


def _cache_key(
    loss_fn: LossFn, spec: ParamSpec, kspec: kernel.KernelSpec, data: Any, c: int, bsz: int
) -> tuple | None:
    """What a compiled kernel is specialised on; None when ``loss_fn`` is not hashable."""
    try:
        hash(loss_fn)
    except TypeError:
        return None
    return (loss_fn, spec, kspec, signature(data), c, bsz)


def _inflation(
    gradient_fn: sgld.GradientFn,
    w: Tensor,
    gen: torch.Generator,
    eps: float,
    nbeta: float,
    sqrt_m: Tensor | None = None,
    samples: int = 8,
    heating: float = 1.0,
) -> float:
    """1 + h·ε·nβ²·mean_i Var((M^{1/2}ĝ)_i)/4 at the final positions (Welford over ``samples``
    batches; the variance in the coordinates z = M^{-1/2}w where the noise is isotropic; h =
    ``heating``, ``sgld.noise_heating``: 1 for LM, more for BAOAB)."""
    mean = torch.zeros_like(w)
    m2 = torch.zeros_like(w)
    for k in range(1, samples + 1):
        g = gradient_fn(w, gen).grad
        if sqrt_m is not None:
            g = g @ sqrt_m
        delta = g - mean
        mean += delta / k
        m2 += delta * (g - mean)
    var = m2 / (samples - 1)
    ok = torch.isfinite(var).all(dim=-1)
    if not bool(ok.any()):
        return float("nan")
    return 1.0 + heating * eps * nbeta**2 * float(var[ok].mean()) / 4.0
