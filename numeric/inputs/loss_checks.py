"""Checks that a loss can be estimated, with messages that name what to change: called once on
a few samples (``check_loss``: shapes, a scalar mean, deterministic, traceable by vmap with
gradients, a target broadcast against the output), then over the full data at w*
(``full_grad_at_w_star``: a sample after the first few that the loss cannot take)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import torch
from torch import Tensor

from numeric.backend.torch_limits import raise_if_limitation
from numeric.errors import InvalidInputError
from numeric.inputs.data import take


class DataModel(Protocol):
    """What the checks use of ``numeric.inputs.problem.DataModel``."""

    loss_fn: Callable[..., Tensor]
    n: int
    data: Any

    def f(self, w: Tensor, batch: Any) -> Tensor: ...

    def per_chain(self, w: Tensor, batch: Any) -> Tensor: ...

    def full_grad(self, w: Tensor) -> tuple[Tensor, Tensor]: ...


__all__ = ["check_loss", "check_mean_and_deterministic", "full_grad_at_w_star"]

T = TypeVar("T")


def check_loss(model: DataModel, w_star: Tensor) -> None:
    """Call the loss once on a small batch, and once as the steps do (vmapped over two chains,
    with its gradient), turning shape errors and untraceable code into clear messages."""
    if not callable(model.loss_fn):
        raise InvalidInputError(
            f"loss_fn must be a function (params, batch) -> mean loss, got {model.loss_fn!r}"
        )
    idx = torch.arange(min(model.n, 16), device=w_star.device)
    out = _calling(lambda: _first_call(model, w_star, idx), "on a batch of the data at w*")
    if not isinstance(out, Tensor) or out.dim() != 0:
        shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise InvalidInputError(f"loss_fn must return the mean loss (a scalar), got {shape}")
    check_mean_and_deterministic(model, w_star, idx, out)
    idx = idx[:2]
    try:
        with torch.enable_grad():
            ww = w_star.detach().expand(2, -1).clone().requires_grad_(True)
            losses = model.per_chain(ww, take(model.data, idx.expand(2, -1)))
            if losses.requires_grad:
                torch.autograd.grad(losses.sum(), ww)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise_if_limitation(exc)
        raise InvalidInputError(
            "loss_fn must be traceable by torch.func.vmap with gradients (the chains are one "
            "batch): no .item() or .numpy(), no Python if/while on tensor values, no in-place "
            f"updates of params or batch. It failed as the steps call it: {exc}"
            + (f". {_SPARSE}" if "sparse" in str(exc) else "")
        ) from exc
    if not losses.requires_grad:
        raise InvalidInputError(
            f"loss_fn's value ({float(out):.6g} at w*) does not depend on the parameters: no "
            "gradient flows from params to it (a loss built from constants, or from params "
            "taken through .detach(), .data or torch.no_grad()), so there is nothing to sample"
        )


_SPARSE = (
    "A layer with sparse gradients (nn.Embedding or nn.EmbeddingBag with sparse=True) does not "
    "run under torch.func: build it with sparse=False (the values are the same)"
)


def _hint(exc: BaseException) -> str:
    """What to check where the loss failed on samples of the data with ``exc``."""
    text = str(exc)
    if isinstance(exc, IndexError) and "out of bounds" in text:
        return (
            "A target is outside the range the loss accepts: cross-entropy's class labels must "
            "lie in [0, C) for a model with C outputs (or equal its ignore_index)"
        )
    for kind in ("tuple", "dict", "list"):
        if f"not {kind}" in text or f"'{kind}' object has no attribute" in text:
            return (
                f"The module returns a {kind}, not a tensor: give from_module a loss that picks "
                "the output, e.g. lambda out, y: F.cross_entropy(out[0], y) (or out['logits'])"
            )
    if "sparse" in text:
        return _SPARSE
    if "dtype" in text or "scalar type" in text:
        return (
            "Tensors of different dtypes met in the loss: the parameters and the data's "
            "floating-point parts run in one dtype (the dtype argument, else that of the "
            "parameters), but a tensor the loss holds itself (a loss module's weight, a constant "
            "built in loss_fn) or a data set that is passed through as it is keeps its own; "
            "integer class labels must be int64 (torch.long) for cross-entropy"
        )
    return (
        "Check that the parameter shapes match the model and that data is a tuple of tensors "
        "whose first axis indexes samples"
    )


def _first_call(model: DataModel, w_star: Tensor, idx: Tensor) -> Tensor:
    """L(w*, first samples); torch's warning that a loss broadcast the output against a target
    of another shape (mse_loss on [B, 1] against [B]: a [B, B] loss) is an error, since λ̂ of
    that loss reads as a point that is not a minimum. Other warnings pass on as they came."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = model.f(w_star, take(model.data, idx))
    for w in caught:
        text = str(w.message)
        if "target size" in text and "different to the input size" in text:
            raise InvalidInputError(
                f"the loss compares the model's output with a target of another shape, which "
                f"torch broadcasts (every output against every target): {text} Give the targets "
                "the output's shape (e.g. y[:, None] or out.squeeze(-1) in the loss)"
            )
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return out


def full_grad_at_w_star(model: DataModel, w_star: Tensor) -> tuple[Tensor, Tensor]:
    """(L_n(w*), ∇L_n(w*)); the loss failing on some sample after the first 16 (which
    ``check_loss`` tried) is an ``InvalidInputError`` naming what to check."""
    return _calling(
        lambda: model.full_grad(w_star),
        f"on the full data at w*, though it ran on the first {min(model.n, 16)} samples, so some "
        "later sample differs",
    )


def _calling(fn: Callable[[], T], where: str) -> T:
    """``fn()``, a call of the loss; its failure is an ``InvalidInputError`` saying ``where`` it
    failed and what to check (a torch limitation named as such)."""
    try:
        return fn()
    except InvalidInputError:
        raise
    except (RuntimeError, IndexError, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise_if_limitation(exc)
        raise InvalidInputError(
            f"loss_fn(params, batch) failed {where}: {exc}. {_hint(exc)}"
        ) from exc


def check_mean_and_deterministic(model: DataModel, w: Tensor, idx: Tensor, out: Tensor) -> None:
    """L(w, b) is a function of w and b (a second call gives the same value), and a mean over
    the batch, not a sum (b taken twice over gives L(w, b), not 2·L(w, b)). Tolerance: 10³
    machine epsilons of |L|, which summation order and GPU atomics stay well inside."""
    a = float(out)
    if not math.isfinite(a):
        return  # the full-data check names the non-finite data
    with torch.no_grad():
        again = float(model.f(w, take(model.data, idx)))
        doubled = float(model.f(w, take(model.data, torch.cat([idx, idx]))))
    tol = 1e3 * torch.finfo(w.dtype).eps * max(abs(a), abs(again), abs(doubled))
    if abs(again - a) > tol:
        raise InvalidInputError(
            f"loss_fn is random: two calls on the same batch at w* gave {a:.6g} and {again:.6g}. "
            "The estimator needs L(w, batch) to depend on w and the batch only: put a module in "
            "eval mode (dropout off), or draw any noise inside loss_fn from a fixed generator"
        )
    if a == 0:  # a perfect fit on these samples says nothing: the same test where L ≠ 0
        a, doubled, idx = _nonzero_loss(model, w, idx)
        tol = 1e3 * torch.finfo(w.dtype).eps * max(abs(a), abs(doubled))
    if a != 0 and abs(doubled - 2 * a) <= tol and abs(doubled - a) > tol:
        raise InvalidInputError(
            f"loss_fn returns the sum over the batch, not the mean: {a:.6g} on {len(idx)} "
            f"samples, {doubled:.6g} on the same samples twice over. nβ·L_n needs the mean loss "
            "(e.g. reduction='mean')"
        )


def _nonzero_loss(model: DataModel, w: Tensor, idx: Tensor) -> tuple[float, float, Tensor]:
    """(L(v, b), L(v, b twice over), b) at the first of (w*, up to 256 samples) and (w* moved by
    1% of (1 + |w*|) along ±1 in turn, the first samples) where L is finite and not 0; (0, 0, b)
    where there is none (a loss that is 0 there cannot tell a sum from a mean)."""
    wide = torch.arange(min(model.n, 256), device=w.device)
    signs = 1.0 - 2.0 * (torch.arange(w.numel(), device=w.device) % 2).to(w.dtype)
    moved = w + 1e-2 * (1 + w.abs()) * signs.reshape(w.shape)
    for v, b in ((w, wide), (moved, idx)):
        with torch.no_grad():
            a = float(model.f(v, take(model.data, b)))
            if math.isfinite(a) and a != 0:
                return a, float(model.f(v, take(model.data, torch.cat([b, b])))), b
    return 0.0, 0.0, idx
