"""Torch operations without the transforms the estimator needs, recognised from their errors.

The estimator differentiates the loss twice (the Hessian at w*, Hessian-vector products where
the chains are) and runs the chains as one batch through ``torch.func.vmap``. Some of torch's
own kernels support neither, and the error torch raises names an aten operation, not the layer
or what to do. ``explain(exc)`` turns such an error into a sentence naming the operation and the
way around it (``None`` for any other error, e.g. the user's own ``.item()``):

* fused fast paths: ``nn.TransformerEncoderLayer`` and ``nn.MultiheadAttention`` in eval mode run
  one fused kernel (``aten::_transformer_encoder_layer_fwd``, ``aten::_native_multi_head_attention``)
  that has no derivative; ``torch.backends.mha.set_fastpath_enabled(False)`` turns it off;
* attention kernels: ``scaled_dot_product_attention``'s flash / memory-efficient / cuDNN kernels
  have no second derivative; the math kernel (``sdpa_kernel(SDPBackend.MATH)``) has;
* recurrent layers: ``nn.GRU``, ``nn.LSTM``, ``nn.RNN`` (and ``nn.LSTMCell``) have no vmap
  batching rule; a recurrence stepped by hand over ``nn.GRUCell``/``nn.RNNCell`` (CPU) or built
  from ``nn.Linear`` batches;
* ``out=`` operations (``spectral_norm``'s power iteration in training mode), other missing
  batching rules and derivatives, custom ``autograd.Function``s without vmap support, and
  operations whose output shape depends on values (boolean-mask indexing).

``differentiable_attention()`` is the workaround for the first two as a context manager, and
``run_differentiable(fn)`` calls ``fn`` again inside it where the first call failed on one of
them, so that attention models just work while every other loss runs exactly as before.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import TypeVar

import torch

from numeric.errors import InvalidInputError

__all__ = [
    "differentiable_attention",
    "explain",
    "is_attention_limit",
    "raise_if_limitation",
    "run_differentiable",
]

T = TypeVar("T")

_DERIVATIVE = re.compile(r"derivative for (aten::\w+(?:\.\w+)?) is not implemented")
_BATCHING = re.compile(r"[Bb]atching rule not implemented for (aten::\w+(?:\.\w+)?)")
_SPECIAL = re.compile(
    r"(\w+(?:::\w+)?(?:\.\w+)?) requires special handling, and does not yet have a batching rule"
)
_FUNCTION = re.compile(r"You tried to vmap over (\w+), but it does not have vmap support")
_SETUP_CONTEXT = "it must override the setup_context staticmethod"
_DYNAMIC = re.compile(
    r"vmap: We do not support batching operators that can (output|support) dynamic"
)

_FAST_PATHS = {
    "_transformer_encoder_layer_fwd": "nn.TransformerEncoderLayer (or nn.TransformerEncoder)",
    "_native_multi_head_attention": "nn.MultiheadAttention (or a Transformer layer using it)",
}
# nn.TransformerEncoder's fast path turns a padded batch (src_key_padding_mask) into a nested
# tensor, which vmap cannot batch; the fast path off, it keeps the padded tensor
_NESTED = "_nested_tensor_from_mask"
_ATTENTION = ("scaled_dot_product", "flash_attention", "efficient_attention", "cudnn_attention")
_RNN = frozenset({"gru", "lstm", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell"})
_RNN_PREFIXES = ("_thnn_fused_", "_cudnn_rnn", "miopen_rnn", "mkldnn_rnn")

_MATH = (
    "`with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):` around the "
    "estimate (the math kernel computes the same attention and is twice differentiable)"
)
_NO_FASTPATH = "torch.backends.mha.set_fastpath_enabled(False) before estimating"


def explain(exc: BaseException) -> str | None:
    """A sentence naming the torch operation behind ``exc`` (or an exception it was raised from)
    and the workaround, when ``exc`` is one of the torch limitations of the module docstring;
    None otherwise."""
    for e in _chain(exc):
        if (why := _explain_text(str(e))) is not None:
            return why
    return None


def is_attention_limit(exc: BaseException) -> bool:
    """``exc`` (or an exception it was raised from) is a fused attention kernel or fast path
    without the derivatives the estimator needs: ``differentiable_attention()`` avoids it."""
    for e in _chain(exc):
        m = _DERIVATIVE.search(str(e))
        if m and (_is_fast_path(_base(m[1])) or _is_attention(_base(m[1]))):
            return True
        m = _BATCHING.search(str(e)) or _SPECIAL.search(str(e))
        if m and _base(m[1]).startswith(_NESTED):
            return True
    return False


def raise_if_limitation(exc: BaseException) -> None:
    """Raise ``InvalidInputError(explain(exc))`` from ``exc`` when ``explain`` knows it (and
    ``exc`` is not that error already)."""
    if (why := explain(exc)) is not None and str(exc) != why:
        raise InvalidInputError(why) from exc


@contextlib.contextmanager
def differentiable_attention() -> Iterator[None]:
    """Attention through kernels that vmap and differentiate twice: the MHA fast path off and
    ``scaled_dot_product_attention`` on its math kernel. Both switches are process-wide in torch;
    they are restored on exit."""
    mha = getattr(torch.backends, "mha", None)  # torch ≥ 2.2
    fast = mha.get_fastpath_enabled() if mha is not None else None
    if mha is not None:
        mha.set_fastpath_enabled(False)
    try:
        with _math_attention():
            yield
    finally:
        if mha is not None:
            mha.set_fastpath_enabled(fast)


def _math_attention() -> contextlib.AbstractContextManager:
    """``sdpa_kernel(SDPBackend.MATH)`` (torch ≥ 2.3), else its older CUDA-flag form."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:  # torch < 2.3
        return torch.backends.cuda.sdp_kernel(
            enable_flash=False, enable_math=True, enable_mem_efficient=False
        )
    return sdpa_kernel(SDPBackend.MATH)


def run_differentiable(fn: Callable[[], T]) -> T:
    """``fn()``; where it fails on an attention kernel without the derivatives needed, ``fn()``
    again inside ``differentiable_attention()`` (so any loss that works runs exactly as
    before). A torch limitation left is an ``InvalidInputError`` naming it (``explain``)."""
    try:
        return fn()
    except Exception as exc:
        if not is_attention_limit(exc):
            raise_if_limitation(exc)
            raise
    with differentiable_attention():
        try:
            return fn()
        except Exception as exc:
            raise_if_limitation(exc)
            raise


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or during (at most 8, no cycles)."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen and len(seen) < 8:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def _base(op: str) -> str:
    """``aten::gru.input`` -> ``gru``."""
    return op.removeprefix("aten::").split(".")[0]


def _is_fast_path(name: str) -> bool:
    return name in _FAST_PATHS


def _is_attention(name: str) -> bool:
    return any(a in name for a in _ATTENTION)


def _is_rnn(name: str) -> bool:
    return name in _RNN or name.startswith(_RNN_PREFIXES)


def _explain_text(text: str) -> str | None:
    """The sentence for one exception's text, or None."""
    if m := _DERIVATIVE.search(text):
        return _no_derivative(m[1])
    if m := (_BATCHING.search(text) or _SPECIAL.search(text)):
        return _no_batching(m[1], out_variant="out= or view ops" in text)
    if m := _FUNCTION.search(text):
        return (
            f"the model's torch.autograd.Function {m[1]} does not support torch.func.vmap, which "
            "runs the chains as one batch: give it a setup_context staticmethod and "
            "generate_vmap_rule = True (or write its vmap staticmethod)"
        )
    if _SETUP_CONTEXT in text:
        return (
            "a torch.autograd.Function in the model takes ctx in forward, which torch.func.vmap "
            "(the chains are one batch) does not support: move the saving of tensors to a "
            "setup_context staticmethod and set generate_vmap_rule = True"
        )
    if _DYNAMIC.search(text):
        return (
            "torch.func.vmap (the chains are one batch) cannot run an operation whose output "
            "shape depends on the values (indexing with a boolean mask, nonzero, masked_select, "
            "unique): use torch.where(mask, x, y) or multiply by the mask instead"
        )
    return None


def _no_derivative(op: str) -> str:
    """Torch implements no derivative for ``op``."""
    name = _base(op)
    if _is_fast_path(name):
        return (
            f"{_FAST_PATHS[name]} in eval mode runs torch's fused fast path {op}, which has no "
            f"derivative, and the estimator differentiates the loss: call {_NO_FASTPATH}, and "
            f"put {_MATH}"
        )
    second = name.endswith("_backward")
    order = "second derivative" if second else "derivative"
    if _is_attention(name):
        kernel = f"aten::{name.removesuffix('_backward')}" if second else op
        return (
            f"scaled_dot_product_attention ran its fused kernel {kernel}, which has no {order} "
            f"(torch implements no derivative for {op}), and the estimator needs Hessian-vector "
            f"products of the loss: put {_MATH}"
        )
    return (
        f"torch implements no {order} for {op}, which the loss calls, and the estimator needs "
        "the gradient and Hessian-vector products of the loss: the model is not supported as "
        "written; replace that operation by differentiable ones"
    )


def _no_batching(op: str, *, out_variant: bool) -> str:
    """``torch.func.vmap`` has no batching rule for ``op``."""
    name = _base(op)
    lead = f"torch.func.vmap, which runs the chains as one batch, has no batching rule for {op}"
    if name.startswith(_NESTED):
        return (
            f"{lead}: nn.TransformerEncoder's fast path turns a batch with src_key_padding_mask "
            f"into a nested tensor, which vmap cannot batch: call {_NO_FASTPATH} (or build the "
            "encoder with enable_nested_tensor=False)"
        )
    if _is_rnn(name):
        return (
            f"{lead} (the fused kernel of nn.GRU, nn.LSTM, nn.RNN or nn.LSTMCell), so the model "
            "is not supported by torch.func.vmap as written: step the recurrence by hand over the "
            "sequence with nn.GRUCell or nn.RNNCell (these batch on CPU; on GPU they may call a "
            "fused kernel that does not), or with a cell built from nn.Linear, torch.sigmoid and "
            "torch.tanh (any device, and the way for an LSTM)"
        )
    if out_variant or op.endswith(".out"):
        return (
            f"{lead}, an operation writing into an existing tensor (out=), as the power "
            "iteration of nn.utils.parametrizations.spectral_norm does in training mode: call "
            "module.eval() (it then uses its stored vectors), or drop the out= write"
        )
    return (
        f"{lead}, which the loss calls, so the model is not supported by torch.func.vmap as "
        "written: replace that operation by ones vmap supports"
    )
