"""A ``torch.compile`` backend: inductor, with small matrix products as fused loops.

Vectorised over chains, a small model's layers become batched products such as
[C, B, 4] × [C, 4, 3]. Inductor hands every ``mm``/``bmm`` to the BLAS library, which for such
shapes costs ~300 µs a call on one core (call and packing overheads, about 1 GFLOP/s). Written
as a broadcast product and a sum, inductor fuses them into the neighbouring loops instead. Large
products keep the BLAS call.

With ``long_axis_inner`` (for minibatches laid out with the batch axis innermost in memory,
``numeric.inputs.data.Gatherer(batch_inner=True)``) an unrolled product [.., m, k] × [.., k, n] with
m > n is computed as its transpose [.., n, m] and returned as a transposed view: the long axis
is then innermost in the buffer too, and inductor vectorises the loops along it instead of along
a 3- or 4-wide feature axis (RRR at 256 chains: 8 steps in 3.0 ms instead of 7.3 ms).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sys
from collections.abc import Callable
from typing import Any

import torch

aten = torch.ops.aten

SMALL = 32  # a product is "small" when two of its three dimensions m, k, n are at most this
UNROLL_K = 16  # contractions over at most this many terms are unrolled


def _small(*dims: object) -> bool:
    """Two of m, k, n at most ``SMALL`` (static sizes only; a symbolic size keeps BLAS)."""
    if not all(isinstance(x, int) for x in dims):
        return False
    return sum(x <= SMALL for x in dims) >= 2


def _contract(a: torch.Tensor, b: torch.Tensor, k: int, long_axis_inner: bool) -> torch.Tensor:
    """Σ_i a[..., :, i] ⊗ b[..., i, :]: unrolled into k broadcast products when k ≤ ``UNROLL_K``
    (no reduction loop at all: 1.4× faster for RRR at 256 chains), else one broadcast product
    reduced over k. ``long_axis_inner``: an unrolled result with m > n is built as [.., n, m]
    and returned transposed (the module docstring says why)."""
    if k <= UNROLL_K and long_axis_inner and a.shape[-2] > b.shape[-1]:
        return _contract(b.mT, a.mT, k, False).mT  # (AB)ᵀ = BᵀAᵀ, built [.., n, m]
    if k <= UNROLL_K:
        out = a[..., :, 0:1] * b[..., 0:1, :]
        for i in range(1, k):
            out = out + a[..., :, i : i + 1] * b[..., i : i + 1, :]
        return out
    return (a.unsqueeze(-1) * b.unsqueeze(-3)).sum(-2)


def _small_product(
    fallback: Callable[..., Any] | None, long_axis_inner: bool
) -> Callable[..., Any]:
    """Decomposition of ``mm`` ([m, k] × [k, n]) or ``bmm`` ([N, m, k] × [N, k, n]): the
    contraction when small on CPU, else ``fallback`` (inductor's own rule, or NotImplemented:
    keep the op)."""

    def product(a: torch.Tensor, b: torch.Tensor) -> Any:
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        if a.device.type == "cpu" and _small(m, k, n) and k != 0:
            return _contract(a, b, k, long_axis_inner)
        return fallback(a, b) if fallback is not None else NotImplemented

    return product


class _Decompositions(dict):
    """Inductor's decomposition table with ``_small_product`` for ``mm`` and ``bmm``, pickled by
    reference: inductor pickles the table into its FX-graph cache key, and the table's operators
    and closures do not pickle (every graph bypassed the cache: 8 s of code generation per
    compile for a linear regression). The key holds the flag and a hash of this module's
    source, so an edited rule is a new key."""

    def __init__(self, long_axis_inner: bool) -> None:
        from torch._inductor.decomposition import select_decomp_table

        super().__init__(select_decomp_table())
        for op in (aten.mm.default, aten.bmm.default):
            self[op] = _small_product(self.get(op), long_axis_inner)
        self.long_axis_inner = long_axis_inner

    def __reduce__(self) -> tuple[Any, ...]:
        return (_decompositions, (self.long_axis_inner, _SOURCE_HASH))


def _decompositions(long_axis_inner: bool, _source_hash: str = "") -> _Decompositions:
    return _Decompositions(long_axis_inner)


def _source_hash() -> str:
    try:
        return hashlib.sha256(inspect.getsource(sys.modules[__name__]).encode()).hexdigest()
    except (OSError, TypeError):  # no source (frozen): a key per process
        return f"no-source-{os.getpid()}-{id(_Decompositions)}"


_SOURCE_HASH = _source_hash()


def small_matmul_backend(*, long_axis_inner: bool = False) -> Callable[..., Any]:
    """A ``torch.compile`` backend: ``compile_fx`` with ``_small_product`` in front of inductor's
    decompositions of ``mm`` and ``bmm``."""

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        from torch._inductor.compile_fx import compile_fx

        # AOTAutograd's cache key ignores custom decompositions: a graph cached by the plain
        # inductor backend would be returned unchanged. Inductor's own FX-graph cache applies
        # (its key is the decomposed graph and ``_Decompositions``' reduction).
        with torch._functorch.config.patch(enable_autograd_cache=False):
            return compile_fx(gm, example_inputs, decompositions=_Decompositions(long_axis_inner))

    return backend
