r"""Hessian-based measures at w*, to set beside the LLC (seed 003).

* ``hessian_trace``: Hutchinson's estimator tr(H) = E[vᵀHv], v Rademacher (or Gaussian), with
  Hv by double backward; the samples are batched (one HVP call for a block of probe vectors, via
  ``torch.func.vmap``) and the standard error is sd/√(num_samples).
* ``hessian_top_eigenvalues``: the k largest-magnitude eigenvalues by Lanczos with full
  reorthogonalisation (``numeric.hessian.lanczos``), each Ritz pair accepted only once its residual
  ‖Hy − θy‖ is at most ``tol``·max|θ|, and runs repeated on the complement of the accepted
  eigenvectors (deflation) until none is left above the k-th in magnitude: a Krylov space sees
  one vector per eigenspace, so a repeated eigenvalue is found by the next run. Where the budget
  of products runs out first, ``ConvergenceError``: no unconverged value is returned.

``loss`` is either ``loss_fn(params, batch)`` with ``data`` (the loss is the full-data mean
L_n = Σ_c (n_c/n)·L_c over chunks c of ``chunk_size`` samples; the Hessian-vector products are
taken chunk by chunk, so memory is bounded by one chunk's graph whatever n is), or a function of
``params`` alone when ``data`` is None (e.g. a potential K applied to a 1-D tensor). ``params``
is a dict of tensors or a tensor. With data the loss is checked as ``estimate_llc`` checks it:
a mean over the batch (not a sum), deterministic, and the data free of NaN and inf.

A loss from ``numeric.from_module`` (also restricted) whose module has dropout or batch norm in
training mode is refused, as ``estimate_llc`` refuses it: there the loss is random or depends on
the batch, and the products would be of a different Hessian at every call. An attention kernel
without a second derivative is run again on torch's math kernel
(``numeric.backend.torch_limits.run_differentiable``); other torch operations without the
derivatives or batching rules needed are ``InvalidInputError``s that name them.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor
from torch.func import vmap

from numeric.backend.denormals import flushing_denormals
from numeric.backend.torch_limits import run_differentiable
from numeric.errors import ConvergenceError, InvalidInputError
from numeric.hessian.lanczos import lanczos, random_start
from numeric.inputs.data import data_len, non_finite_parts, take, to_device
from numeric.inputs.data_forms import as_data
from numeric.inputs.loss_checks import check_mean_and_deterministic
from numeric.inputs.problem import flat_params
from numeric.inputs.restrict import require_eval_mode
from numeric.options import as_seed, check_choice, check_int, check_real

MAX_PROBES = 10**6  # Hutchinson probe vectors: more is days of HVPs


@dataclass(frozen=True)
class HessianTrace:
    mean: float
    stderr: float
    num_samples: int


def _check_callable_alone(loss: Callable[..., Tensor], params: Any) -> None:
    """With ``data=None`` the loss is a function of the parameters alone: say so when its
    signature wants more (a ``loss_fn(params, batch)`` such as ``from_module``'s)."""
    try:
        inspect.signature(loss).bind(params)
    except TypeError as exc:
        raise InvalidInputError(
            f"loss cannot be called as loss(params) ({exc}): with data=None it must be a function "
            "of the parameters alone; a loss_fn(params, batch) such as from_module's needs the "
            "data: hessian_trace(loss_fn, params, data)"
        ) from None
    except ValueError:  # no signature to read (a builtin): the call itself will tell
        pass


Part = tuple[Callable[[Tensor], Tensor], float]  # a chunk's mean loss at flat w, its weight n_c/n


@dataclass(frozen=True)
class _ChunkLoss:
    """What ``loss_checks.check_mean_and_deterministic`` reads of a loss with data."""

    f: Callable[[Tensor, Any], Tensor]
    data: Any
    n: int


def _flat_loss(
    loss: Callable[..., Tensor],
    params: Mapping[str, Tensor] | Tensor,
    data: Any,
    chunk_size: int,
) -> tuple[list[Part], Tensor]:
    """The loss as chunks of the full-data mean at a flat w (one part when ``data`` is None or
    n ≤ ``chunk_size``), and w* flat."""
    if not callable(loss):
        raise InvalidInputError(f"loss must be a function, got {loss!r}")
    check_int("chunk_size", chunk_size, 1)
    require_eval_mode(loss)
    if isinstance(params, Tensor):
        if params.is_meta or not params.is_floating_point() or params.numel() == 0:
            raise InvalidInputError(
                f"params must be a non-empty floating-point tensor with values, got {params.dtype}"
                f" of shape {tuple(params.shape)} on {params.device}"
            )
        w0 = params.detach().reshape(-1).clone()
        if not bool(torch.isfinite(w0).all()):
            raise InvalidInputError("params are not finite")
        shape = params.shape
        unflat: Callable[[Tensor], Any] = lambda f: f.reshape(shape)  # noqa: E731
    else:  # as estimate_llc: the module's names and shapes, its buffers in the params' dtype
        w0, spec, loss = flat_params(loss, params, dtype=None, device=None)
        unflat = spec.unflatten
    if data is None:
        _check_callable_alone(loss, unflat(w0))
        _check_scalar(lambda: loss(unflat(w0)))
        return [(lambda f: loss(unflat(f)), 1.0)], w0
    data = as_data(data)
    n = data_len(data)
    if n == 0:
        raise InvalidInputError("data is empty")
    if bad := non_finite_parts(data):
        raise InvalidInputError(
            f"{', '.join(bad)} {'has' if len(bad) == 1 else 'have'} NaN or inf entries: the loss "
            "and its Hessian at w* are not finite"
        )
    data = to_device(data, w0.device, w0.dtype)  # as estimate_llc: the data follow the params
    first = torch.arange(min(n, 16), device=w0.device)
    out = _check_scalar(lambda: loss(unflat(w0), take(data, first)))
    check_mean_and_deterministic(
        _ChunkLoss(lambda f, b: loss(unflat(f), b), data, n), w0, first, out
    )
    if n <= chunk_size:
        return [(lambda f: loss(unflat(f), data), 1.0)], w0
    parts: list[Part] = []
    for s in range(0, n, chunk_size):
        rows = torch.arange(s, min(s + chunk_size, n), device=w0.device)
        parts.append((lambda f, r=rows: loss(unflat(f), take(data, r)), rows.numel() / n))
    return parts, w0


def _check_scalar(call: Callable[[], Any]) -> Tensor:
    """The loss, called once at w*, returns a floating-point scalar tensor (the mean loss; one
    element of any shape, as autograd takes it): that value."""
    with torch.no_grad():
        out = call()
    if not (isinstance(out, Tensor) and out.numel() == 1 and out.is_floating_point()):
        what = (
            f"a {out.dtype} tensor of shape {tuple(out.shape)}"
            if isinstance(out, Tensor)
            else f"{out!r} ({type(out).__name__})"
        )
        raise InvalidInputError(
            f"loss must return the mean loss as a floating-point scalar tensor, got {what} "
            "(reduction='none' gives one loss per sample: use the mean)"
        )
    return out


def _hvp_fn(parts: list[Part], w0: Tensor) -> Callable[[Tensor], Tensor]:
    """Hessian-vector products at w0 for a block of vectors [k, D]: Σ_c (n_c/n)·∇²L_c·v. One
    part keeps its gradient's graph for every block; several take each chunk's gradient again
    per block and free it, so memory holds one chunk's graph."""
    w = w0.detach().requires_grad_(True)

    def grad_graph(f: Callable[[Tensor], Tensor]) -> Tensor:
        with torch.enable_grad():
            out = f(w)
            if not out.requires_grad:
                raise _independent_loss(out)
            (g,) = torch.autograd.grad(out, w, create_graph=True)
        return g

    if len(parts) == 1:
        g = grad_graph(parts[0][0])
        return lambda vs: _products(g, w, vs)

    def hvp(vs: Tensor) -> Tensor:
        total = torch.zeros_like(vs)
        for f, weight in parts:
            total += weight * _products(grad_graph(f), w, vs)
        return total

    return hvp


def _independent_loss(out: Tensor) -> InvalidInputError:
    """The error for a loss through which no gradient flows to the parameters."""
    return InvalidInputError(
        f"loss's value ({float(out.detach()):.6g} at w*) does not depend on the parameters: no "
        "gradient flows from params to it (a loss built from constants, or from params taken "
        "through .detach(), .data or torch.no_grad()), so its Hessian is not that of a loss of "
        "the parameters"
    )


def _products(g: Tensor, w: Tensor, vs: Tensor) -> Tensor:
    """(∂g/∂w)·v for each row v of ``vs`` [k, D], g = ∇f(w) with its graph."""

    def one(v: Tensor) -> Tensor:
        if not g.requires_grad:  # the gradient does not depend on w: a zero Hessian
            return torch.zeros_like(v)
        (hv,) = torch.autograd.grad(g, w, grad_outputs=v, retain_graph=True, allow_unused=True)
        return torch.zeros_like(v) if hv is None else hv

    with torch.enable_grad():
        try:
            return vmap(one)(vs).detach()
        except RuntimeError:  # some losses do not batch under vmap: fall back to a loop
            return torch.stack([one(v) for v in vs]).detach()


def hessian_trace(
    loss: Callable[..., Tensor],
    params: Mapping[str, Tensor] | Tensor,
    data: Any = None,
    *,
    num_samples: int = 100,
    block: int = 16,
    distribution: Literal["rademacher", "gaussian"] = "rademacher",
    seed: int = 0,
    chunk_size: int = 8192,
) -> HessianTrace:
    """Hutchinson estimate of tr(∇²L(w*)) with its standard error (``num_samples`` probe
    vectors, ``block`` of them per batched HVP, Rademacher or Gaussian entries). A loss through
    which no gradient flows to the parameters is an ``InvalidInputError``."""
    check_int("num_samples", num_samples, 2)
    if num_samples > MAX_PROBES:
        raise InvalidInputError(f"num_samples must be ≤ {MAX_PROBES}, got {num_samples}")
    check_int("block", block, 1)
    check_choice("distribution", distribution, ("rademacher", "gaussian"))
    seed = as_seed(seed)
    parts, w0 = _flat_loss(loss, params, data, chunk_size)
    with flushing_denormals():
        x = run_differentiable(
            lambda: _hutchinson(parts, w0, num_samples, block, distribution, seed)
        )
    _check_finite(x, "vᵀ∇²L·v")
    return HessianTrace(float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), int(x.size))


def hessian_top_eigenvalues(
    loss: Callable[..., Tensor],
    params: Mapping[str, Tensor] | Tensor,
    data: Any = None,
    *,
    k: int = 1,
    num_iters: int = 100,
    tol: float = 1e-6,
    seed: int = 0,
    chunk_size: int = 8192,
) -> np.ndarray:
    """The k largest-|λ| Hessian eigenvalues at w* (descending |λ|) by Lanczos with deflation
    (module docstring): ``num_iters`` bounds the Hessian-vector products of each Lanczos run,
    ``tol`` the accepted residual ‖Hy − θy‖ relative to max|θ| (at least 100 machine epsilons of
    the parameters' dtype). ``ConvergenceError`` where a run's budget ends first."""
    check_int("num_iters", num_iters, 1)
    check_real("tol", tol, low=0, strict=True)
    seed = as_seed(seed)
    parts, w0 = _flat_loss(loss, params, data, chunk_size)
    d = w0.numel()
    check_int("k", k, 1)
    k = int(k)
    if k > d:
        raise InvalidInputError(f"k must be an int in [1, {d}] (the number of parameters), got {k}")
    tol = max(float(tol), 100 * torch.finfo(w0.dtype).eps)
    with flushing_denormals():
        ev = run_differentiable(lambda: _top_by_lanczos(parts, w0, k, int(num_iters), tol, seed))
    return ev


def _hutchinson(
    parts: list[Part],
    w0: Tensor,
    num_samples: int,
    block: int,
    distribution: str,
    seed: int,
) -> np.ndarray:
    """vᵀ∇²f(w0)v for ``num_samples`` probe vectors v, ``block`` of them per batched HVP."""
    hvp = _hvp_fn(parts, w0)
    gen = torch.Generator(device=w0.device).manual_seed(seed)
    vals = []
    left = num_samples
    while left > 0:
        k = min(block, left)
        v = torch.randn(k, w0.numel(), generator=gen, device=w0.device, dtype=w0.dtype)
        if distribution == "rademacher":
            v = torch.sign(v)
        vals.append((hvp(v) * v).sum(-1))
        left -= k
    return torch.cat(vals).double().cpu().numpy()


def _top_by_lanczos(
    parts: list[Part], w0: Tensor, k: int, steps: int, tol: float, seed: int
) -> np.ndarray:
    """The k largest-|λ| eigenvalues of ∇²L(w0), descending |λ|: Lanczos runs of at most
    ``steps`` products, each on the complement of the eigenvectors accepted so far; a run's
    Ritz pairs are accepted in order of |θ| while their residuals are ≤ ``tol``·max|θ|. Done
    when k are accepted and a further run's largest |θ| plus its residual is at most the k-th
    (or the complement is empty): the extreme Ritz values converge first (Kaniel–Paige), so
    nothing larger is left there."""
    d = w0.numel()
    hvp = _hvp_fn(parts, w0)
    gen = torch.Generator(device=w0.device).manual_seed(seed)
    values: list[float] = []
    locked = w0.new_zeros(0, d)
    while locked.shape[0] < d:
        try:
            ritz = lanczos(lambda v: hvp(v[None])[0], random_start(d, gen, w0), steps, locked)
        except FloatingPointError:
            ritz = None
        if ritz is None or not bool(torch.isfinite(ritz.values).all()):
            raise _not_finite("a Hessian-vector product")
        magnitude = ritz.values.abs()
        order = torch.argsort(magnitude, descending=True).tolist()
        scale = max(float(magnitude[order[0]]), max(map(abs, values), default=0.0), 1e-300)
        if len(values) >= k:
            kth = sorted(map(abs, values), reverse=True)[k - 1]
            if float(magnitude[order[0]] + ritz.residuals[order[0]]) <= kth * (1 + tol):
                break
        accepted = []
        for i in order:
            if float(ritz.residuals[i]) > tol * scale:
                break
            accepted.append(i)
        if not accepted:
            top = order[0]
            raise ConvergenceError(
                f"hessian_top_eigenvalues: the largest-|λ| Ritz value {float(ritz.values[top]):.6g}"
                f" still had residual {float(ritz.residuals[top]):.3g} after {ritz.products} "
                f"Hessian-vector products, above tol·max|θ| = {tol * scale:.3g}, so it is not "
                f"yet an eigenvalue; raise num_iters (now {steps}) or tol"
            )
        values.extend(float(ritz.values[i]) for i in accepted)
        found = torch.cat([locked, ritz.vectors[:, accepted].T])
        locked = torch.linalg.qr(found.T)[0].T  # orthonormal rows
    out = np.array(values, dtype=np.float64)
    return out[np.argsort(-np.abs(out), kind="stable")][:k]


def _check_finite(x: np.ndarray, what: str) -> None:
    """Non-finite Hessian products: NaN or inf in the data, or a loss that is not twice
    differentiable at w*; never returned as a number."""
    if not np.all(np.isfinite(x)):
        raise _not_finite(what)


def _not_finite(what: str) -> InvalidInputError:
    """The error for non-finite Hessian products (``_check_finite``)."""
    return InvalidInputError(
        f"{what} is not finite: the loss or its second derivatives at w* are NaN or inf "
        "(check the data for NaN/inf and that the loss is twice differentiable there)"
    )
