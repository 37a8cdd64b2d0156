r"""Hessian-based measures at w*, to set beside the LLC (seed 003).

* ``hessian_trace``: Hutchinson's estimator tr(H) = E[vᵀHv], v Rademacher (or Gaussian), with
  Hv by double backward; the samples are batched (one HVP call for a block of probe vectors, via
  ``torch.func.vmap``) and the standard error is sd/√(num_samples).
* ``hessian_top_eigenvalues``: the k largest-magnitude eigenvalues by block power (subspace)
  iteration with QR and a Rayleigh–Ritz step.

``loss`` is either ``loss_fn(params, batch)`` with ``data`` (the loss is the full-data mean,
accumulated over chunks of ``chunk_size``), or a function of ``params`` alone when ``data`` is
None (e.g. a potential K applied to a 1-D tensor). ``params`` is a dict of tensors or a tensor.

A loss from ``numeric.from_module`` (also restricted) whose module has dropout or batch norm in
training mode is refused, as ``estimate_llc`` refuses it: there the loss is random or depends on
the batch, and the products would be of a different Hessian at every call. An attention kernel
without a second derivative is run again on torch's math kernel
(``numeric.torch_limits.run_differentiable``); other torch operations without the derivatives
or batching rules needed are ``InvalidInputError``s that name them.
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

from numeric.data import data_len, take, to_device
from numeric.data_input import as_data
from numeric.denormals import flushing_denormals
from numeric.errors import InvalidInputError
from numeric.model import flat_params
from numeric.options import as_seed, check_choice, check_int, check_real
from numeric.restrict import require_eval_mode
from numeric.torch_limits import run_differentiable

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


def _flat_loss(
    loss: Callable[..., Tensor],
    params: Mapping[str, Tensor] | Tensor,
    data: Any,
    chunk_size: int,
) -> tuple[Callable[[Tensor], Tensor], Tensor]:
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
        return (lambda f: loss(unflat(f))), w0
    data = as_data(data)
    n = data_len(data)
    if n == 0:
        raise InvalidInputError("data is empty")
    data = to_device(data, w0.device, w0.dtype)  # as estimate_llc: the data follow the params
    first = torch.arange(min(n, 16), device=w0.device)
    _check_scalar(lambda: loss(unflat(w0), take(data, first)))

    def full(f: Tensor) -> Tensor:
        total = f.new_zeros(())
        for s in range(0, n, chunk_size):
            e = min(s + chunk_size, n)
            rows = torch.arange(s, e, device=w0.device)
            total = total + loss(unflat(f), take(data, rows)) * (e - s)
        return total / n

    return full, w0


def _check_scalar(call: Callable[[], Any]) -> None:
    """The loss, called once at w*, returns a floating-point scalar tensor (the mean loss; one
    element of any shape, as autograd takes it)."""
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


def _hvp_fn(f: Callable[[Tensor], Tensor], w0: Tensor) -> Callable[[Tensor], Tensor]:
    """Hessian-vector products at w0 for a block of vectors [k, D]."""
    w = w0.detach().requires_grad_(True)
    with torch.enable_grad():
        (g,) = torch.autograd.grad(f(w), w, create_graph=True)

    def hvp(vs: Tensor) -> Tensor:
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

    return hvp


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
    vectors, ``block`` of them per batched HVP, Rademacher or Gaussian entries)."""
    check_int("num_samples", num_samples, 2)
    if num_samples > MAX_PROBES:
        raise InvalidInputError(f"num_samples must be ≤ {MAX_PROBES}, got {num_samples}")
    check_int("block", block, 1)
    check_choice("distribution", distribution, ("rademacher", "gaussian"))
    seed = as_seed(seed)
    f, w0 = _flat_loss(loss, params, data, chunk_size)
    with flushing_denormals():
        x = run_differentiable(lambda: _hutchinson(f, w0, num_samples, block, distribution, seed))
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
    """The k largest-|λ| Hessian eigenvalues at w* (descending |λ|) by subspace iteration."""
    check_int("num_iters", num_iters, 1)
    check_real("tol", tol, low=0, strict=True)
    seed = as_seed(seed)
    f, w0 = _flat_loss(loss, params, data, chunk_size)
    d = w0.numel()
    check_int("k", k, 1)
    k = int(k)
    if k > d:
        raise InvalidInputError(f"k must be an int in [1, {d}] (the number of parameters), got {k}")
    with flushing_denormals():
        ev = run_differentiable(lambda: _subspace_iteration(f, w0, k, num_iters, tol, seed))
    _check_finite(ev, "the eigenvalues")
    return ev[np.argsort(-np.abs(ev))]


def _hutchinson(
    f: Callable[[Tensor], Tensor],
    w0: Tensor,
    num_samples: int,
    block: int,
    distribution: str,
    seed: int,
) -> np.ndarray:
    """vᵀ∇²f(w0)v for ``num_samples`` probe vectors v, ``block`` of them per batched HVP."""
    hvp = _hvp_fn(f, w0)
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


def _subspace_iteration(
    f: Callable[[Tensor], Tensor], w0: Tensor, k: int, num_iters: int, tol: float, seed: int
) -> np.ndarray:
    """The Ritz values of ∇²f(w0) on a k-dimensional subspace after at most ``num_iters`` power
    steps (fewer once they agree to ``tol``), ascending."""
    d = w0.numel()
    hvp = _hvp_fn(f, w0)
    gen = torch.Generator(device=w0.device).manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(d, k, generator=gen, device=w0.device, dtype=w0.dtype))
    prev = None
    for _ in range(num_iters):
        z = hvp(q.T).T  # [d, k]
        t = q.T @ z
        evals, evecs = torch.linalg.eigh(0.5 * (t + t.T))
        q, _ = torch.linalg.qr(z @ evecs)
        if prev is not None and torch.allclose(evals, prev, rtol=tol, atol=tol * evals.abs().max()):
            break
        prev = evals
    return evals.double().cpu().numpy()


def _check_finite(x: np.ndarray, what: str) -> None:
    """Non-finite Hessian products: NaN or inf in the data, or a loss that is not twice
    differentiable at w*; never returned as a number."""
    if not np.all(np.isfinite(x)):
        raise InvalidInputError(
            f"{what} is not finite: the loss or its second derivatives at w* are NaN or inf "
            "(check the data for NaN/inf and that the loss is twice differentiable there)"
        )
