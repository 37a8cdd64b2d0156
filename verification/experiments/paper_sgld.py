r"""The paper procedure: plain SGLD and λ̂ exactly as Lau et al. (2025) and devinterp 1.3.2 run it.

Target (REFERENCE §6): the localised tempered posterior p(w) ∝ exp(−nβ·L_n(w) − (γ/2)‖w − w*‖²).
One step, for every chain at once (positions [C, D]), at a fixed ε:

    w_{t+1} = w_t − (ε/2)·(nβ·∇L_{B_t}(w_t) + γ·(w_t − w*)) + √ε·ξ_t,   ξ_t ~ N(0, I_D),

then, with a bounding box b, every coordinate clamped to [w*_i − b, w*_i + b] (devinterp's
``bounding_box_size``). L_{B_t} is the mean loss on the step's minibatch: each chain walks its own
shuffle of the n samples in batches of B (the last batch of an epoch holds the n mod B left over,
as a ``DataLoader`` with ``shuffle=True``), and a batch of B = n is the full data in order. The
trace is ``L_{B_t}(w_t)``, the minibatch loss of the step at the position before it (what
devinterp's ``LLCEstimator`` and the paper's ``trace_batch_loss`` record), and

    λ̂_c = nβ·(mean_{t ≥ burn-in} L_{B_t}(w_t) − L_n(w*)),   λ̂ = mean_c λ̂_c,
    stderr = sd_c(λ̂_c)/√C   (sample sd, ddof 1: the across-chain standard error; NaN for C = 1).

nβ by either convention (``NbetaRule``): ``"n/log n"`` (β = 1/log n, the paper's and this
package's default), ``"B/log B"`` (devinterp's ``default_nbeta(loader)``) or a number.

Randomness: one ``torch.Generator`` (from ``seed``), drawn in this order each step: at the start of
an epoch (B < n) the C shuffles ``argsort(rand(C, n))``, then ξ_t = ``randn(C, D)``. With B = n
nothing but ξ is drawn, so one chain's noise is the stream devinterp's ``SGLD.step(noise_generator=
g)`` draws for a single parameter tensor from the same seed.

A potential K (``paper_sgld_potential``) has no data: the gradient is exact, the trace K(w_t).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, Literal

import torch
from torch import Tensor

from numeric.inputs.data import data_len, take, to_device
from numeric.inputs.data_forms import as_data
from numeric.inputs.problem import DataModel, flat_params

from .._validate import MAX_SEED, check_int, check_real
from ..errors import InvalidArgumentError, InvalidTypeError

__all__ = [
    "NbetaRule",
    "PaperSGLDOptions",
    "PaperSGLDResult",
    "paper_nbeta",
    "paper_sgld",
    "paper_sgld_potential",
    "sgld_step",
]

NbetaRule = Literal["n/log n", "B/log B"]
NBETA_RULES = ("n/log n", "B/log B")


@dataclass(frozen=True)
class PaperSGLDOptions:
    """Settings of the paper procedure. The defaults are the paper code's (Lau et al.,
    ``dln_lambdahat``: ε = 10⁻⁵, γ = 10, 5,000 steps, B = 100, nβ = n/log n, minibatch trace, the
    whole trace averaged) with 4 chains instead of 1, so that λ̂ has a standard error.

    ``burn_in``: an int counts steps, a float in [0, 1) is a fraction of ``num_steps``;
    ``bounding_box``: None, or the half-width b of the box around w*."""

    step_size: float = 1e-5
    num_steps: int = 5_000
    num_chains: int = 4
    batch_size: int = 100
    gamma: float = 10.0
    nbeta: float | NbetaRule = "n/log n"
    burn_in: int | float = 0
    bounding_box: float | None = None

    def __post_init__(self) -> None:
        check_real("step_size", self.step_size, 0.0, open_lo=True)
        check_int("num_steps", self.num_steps, 1)
        check_int("num_chains", self.num_chains, 1)
        check_int("batch_size", self.batch_size, 1)
        check_real("gamma", self.gamma, 0.0)
        if isinstance(self.nbeta, str):
            if self.nbeta not in NBETA_RULES:
                raise InvalidArgumentError(
                    f"nbeta must be a number or one of {NBETA_RULES}, got {self.nbeta!r}"
                )
        else:
            check_real("nbeta", self.nbeta, 0.0, open_lo=True)
        if isinstance(self.burn_in, bool) or not isinstance(self.burn_in, Real):
            raise InvalidTypeError(f"burn_in must be an int or a float, got {self.burn_in!r}")
        if isinstance(self.burn_in, float):
            check_real("burn_in (a fraction)", self.burn_in, 0.0, 1.0)
            if self.burn_in == 1.0:
                raise InvalidArgumentError("burn_in = 1.0 leaves no steps to average")
        else:
            check_int("burn_in", self.burn_in, 0, self.num_steps - 1)
        if self.bounding_box is not None:
            check_real("bounding_box", self.bounding_box, 0.0, open_lo=True)

    @property
    def burn_in_steps(self) -> int:
        """The burn-in as a number of steps (a fraction rounded down)."""
        if isinstance(self.burn_in, float):
            return min(int(self.burn_in * self.num_steps), self.num_steps - 1)
        return int(self.burn_in)


@dataclass(frozen=True, eq=False)  # tensors: compared by identity
class PaperSGLDResult:
    """λ̂ (``mean``) ± ``stderr`` (across chains), each chain's λ̂, the trace [C, T] and the
    settings. ``diagnostics`` is empty (the paper procedure has no findings) and ``config`` is
    the options (``config.gamma``), so a result is what ``verification.calibrate`` scores."""

    mean: float
    stderr: float
    per_chain: tuple[float, ...]
    nbeta: float
    nbeta_rule: str
    init_loss: float  # L_n(w*) (K(w*) for a potential)
    burn_in: int
    loss_trace: Tensor  # [C, num_steps]
    final_position: Tensor  # [C, D]
    config: PaperSGLDOptions
    seconds: float
    diagnostics: tuple = field(default=())


def paper_nbeta(options: PaperSGLDOptions, n: int) -> tuple[float, str]:
    """nβ and its rule: the number given, n/log n, or devinterp's B/log B."""
    if not isinstance(options.nbeta, str):
        return float(options.nbeta), "given"
    m = n if options.nbeta == "n/log n" else min(options.batch_size, n)
    if m < 2:
        raise InvalidArgumentError(f"nβ = {options.nbeta} needs it to be ≥ 2, got {m}")
    return m / math.log(m), options.nbeta


def sgld_step(
    w: Tensor,
    grad: Tensor,
    w_star: Tensor,
    noise: Tensor,
    *,
    step_size: float,
    nbeta: float,
    gamma: float,
    bounding_box: float | None = None,
) -> Tensor:
    """w − (ε/2)(nβ·grad + γ(w − w*)) + √ε·noise, clamped to w* ± b with a bounding box."""
    out = w - 0.5 * step_size * (nbeta * grad + gamma * (w - w_star)) + math.sqrt(step_size) * noise
    if bounding_box is not None:
        out = torch.clamp(out, w_star - bounding_box, w_star + bounding_box)
    return out


def _generator(seed: int | torch.Generator, device: torch.device) -> torch.Generator:
    """The user's generator, or one seeded on ``device`` (draws then stay on the chains' device;
    on the CPU the stream is the one devinterp draws from the same seed)."""
    if isinstance(seed, torch.Generator):
        return seed
    return torch.Generator(device=device).manual_seed(check_int("seed", seed, 0, MAX_SEED))


def _check_options(options: object) -> PaperSGLDOptions:
    if not isinstance(options, PaperSGLDOptions):
        raise InvalidTypeError(f"options must be a PaperSGLDOptions, got {options!r:.80}")
    return options


def _run(
    loss_grad: Callable[[Tensor, int], tuple[Tensor, Tensor]],
    w_star: Tensor,
    init_loss: float,
    nbeta: tuple[float, str],
    options: PaperSGLDOptions,
    gen: torch.Generator,
    t0: float,
) -> PaperSGLDResult:
    """The chains from w*, the trace and λ̂ (module docstring)."""
    c, steps = options.num_chains, options.num_steps
    w = w_star.expand(c, -1).clone()
    trace = w.new_empty(c, steps)
    for t in range(steps):
        loss, grad = loss_grad(w, t)
        trace[:, t] = loss
        noise = torch.randn(w.shape, generator=gen, dtype=w.dtype, device=gen.device)
        noise = noise.to(w.device)
        w = sgld_step(
            w, grad, w_star, noise, step_size=options.step_size, nbeta=nbeta[0],
            gamma=options.gamma, bounding_box=options.bounding_box,
        )  # fmt: skip
        if not bool(torch.isfinite(w).all()):
            raise FloatingPointError(
                f"SGLD diverged at step {t + 1} (ε = {options.step_size:g} is too large for "
                f"nβ = {nbeta[0]:.4g}): a position is not finite"
            )
    burn = options.burn_in_steps
    per_chain = nbeta[0] * (trace[:, burn:].double().mean(1) - init_loss)
    se = float(per_chain.std(unbiased=True)) / math.sqrt(c) if c > 1 else math.nan
    return PaperSGLDResult(
        mean=float(per_chain.mean()),
        stderr=se,
        per_chain=tuple(float(x) for x in per_chain),
        nbeta=nbeta[0],
        nbeta_rule=nbeta[1],
        init_loss=init_loss,
        burn_in=burn,
        loss_trace=trace,
        final_position=w,
        config=options,
        seconds=time.perf_counter() - t0,
    )


def paper_sgld(
    loss_fn: Callable[[dict[str, Tensor], Any], Tensor],
    params: Mapping[str, Tensor],
    data: Any,
    options: PaperSGLDOptions | None = None,
    *,
    seed: int | torch.Generator = 0,
) -> PaperSGLDResult:
    """λ̂ at w* = ``params`` by the paper procedure: ``loss_fn(params, batch)`` is the mean loss
    of a batch (as ``numeric.estimate_llc`` takes it), ``data`` a tensor or tuple/dict of tensors
    with samples on the first axis. Vectorised over chains (``torch.func.vmap`` of the loss)."""
    t0 = time.perf_counter()
    options = _check_options(PaperSGLDOptions() if options is None else options)
    w_star, spec, loss_fn = flat_params(loss_fn, params, dtype=None, device=None)
    gen = _generator(seed, w_star.device)
    data = to_device(as_data(data), w_star.device, w_star.dtype)
    n = data_len(data)
    if options.batch_size > n:
        raise InvalidArgumentError(
            f"batch_size = {options.batch_size} is more than the n = {n} samples of the data"
        )
    model = DataModel(loss_fn, spec, data, n, options.batch_size)
    init_loss = float(model.full_loss(w_star[None])[0])
    nbeta = paper_nbeta(options, n)
    b, c = options.batch_size, options.num_chains
    per_epoch = math.ceil(n / b)
    order: list[Tensor] = []

    def loss_grad(w: Tensor, t: int) -> tuple[Tensor, Tensor]:
        if b == n:
            idx = torch.arange(n, device=w.device).expand(c, n)
        else:
            j = t % per_epoch
            if j == 0:  # a new epoch: each chain's own shuffle
                order[:] = [
                    torch.argsort(torch.rand(c, n, generator=gen, device=gen.device), dim=1).to(
                        w.device
                    )
                ]
            idx = order[0][:, j * b : (j + 1) * b]
        batch = take(data, idx)
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            loss = model.per_chain(ww, batch)
            (grad,) = torch.autograd.grad(loss.sum(), ww)
        return loss.detach(), grad

    return _run(loss_grad, w_star, init_loss, nbeta, options, gen, t0)


def paper_sgld_potential(
    K: Callable[[Tensor], Tensor],
    w_star: Tensor | list[float],
    n: int,
    options: PaperSGLDOptions | None = None,
    *,
    seed: int | torch.Generator = 0,
) -> PaperSGLDResult:
    """The paper procedure on a potential: L_n = K (batched over leading axes, K(w [C, D]) →
    [C]), exact gradients, trace K(w_t); nβ = n/log n (``"B/log B"`` has no batch here)."""
    t0 = time.perf_counter()
    options = _check_options(PaperSGLDOptions() if options is None else options)
    if options.nbeta == "B/log B":
        raise InvalidArgumentError("nbeta = 'B/log B' needs data; a potential has no batches")
    n = check_int("n", n, 2)
    w0 = torch.as_tensor(w_star, dtype=torch.float64).reshape(-1)
    gen = _generator(seed, w0.device)
    init_loss = float(K(w0[None])[0])

    def loss_grad(w: Tensor, t: int) -> tuple[Tensor, Tensor]:
        del t
        with torch.enable_grad():
            ww = w.detach().requires_grad_(True)
            loss = K(ww)
            (grad,) = torch.autograd.grad(loss.sum(), ww)
        return loss.detach(), grad

    return _run(loss_grad, w0, init_loss, paper_nbeta(options, n), options, gen, t0)
