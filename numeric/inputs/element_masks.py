r"""Element masks for ``numeric.restrict``: the free parameters u as chosen elements of tensors.

``restrict(loss_fn, params, {name: mask})`` (a boolean tensor of the parameter's shape per
name) frees only the elements where the mask is True, e.g. one attention head's rows of a fused
q/k/v weight. For a masked parameter of N elements, k of them selected, u holds those k
(row-major order), a vector [k], and the full tensor the loss sees is

    W = (u ⊕ v*)[π],

``v*`` the N − k masked-out elements of w* and π the permutation [N] that puts each element at
its place (``index_select`` of the concatenation: it batches under ``torch.func.vmap`` and
differentiates, the gradient of the masked-out elements never formed). So the estimate's flat
parameter vector has D = Σ k entries and the other elements stay exactly at w*. A mask of all
True gives u = the whole tensor flattened, and the loss the same numbers as selecting the name.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor

from numeric.errors import InvalidInputError


class ElementMasks:
    """Boolean masks by parameter name and what places u's elements in the full tensors.
    Equal (and hashing equally) when the names and masks are equal."""

    def __init__(self, masks: Mapping[str, Tensor], params: Mapping[str, Tensor]) -> None:
        if not masks:
            raise InvalidInputError("select is an empty dict of element masks")
        self.names: tuple[str, ...] = tuple(masks)
        self.masks: tuple[Tensor, ...] = tuple(
            _checked(name, mask, params) for name, mask in masks.items()
        )
        self._places: dict[tuple[str, torch.device], tuple[Tensor, Tensor]] = {}

    def free_values(self, params: Mapping[str, Tensor]) -> dict[str, Tensor]:
        """u*: each masked parameter's selected elements of w*, a vector [k] (row-major)."""
        return {
            name: params[name].detach().reshape(-1)[mask.reshape(-1).to(params[name].device)]
            for name, mask in zip(self.names, self.masks)
        }

    def counts(self) -> dict[str, int]:
        """k, the selected elements, by name."""
        return {name: int(mask.sum()) for name, mask in zip(self.names, self.masks)}

    def expand(self, free: Mapping[str, Tensor], base: Mapping[str, Tensor]) -> dict[str, Tensor]:
        """The full tensors W = (u ⊕ v*)[π] of the masked names, u from ``free``, v* from
        ``base`` (the full w* values of those names)."""
        out = {}
        for name, mask in zip(self.names, self.masks):
            u, whole = free[name], base[name]
            rest, perm = self._indices(name, mask, whole.device)
            kept = torch.index_select(whole.reshape(-1), 0, rest)
            out[name] = torch.index_select(torch.cat([u, kept]), 0, perm).view(mask.shape)
        return out

    def _indices(self, name: str, mask: Tensor, device: torch.device) -> tuple[Tensor, Tensor]:
        """The masked-out positions [N − k] and the permutation π [N], on ``device``."""
        key = (name, device)
        if key not in self._places:
            flat = mask.reshape(-1).to(device)
            chosen, rest = flat.nonzero().squeeze(1), (~flat).nonzero().squeeze(1)
            perm = torch.empty_like(flat, dtype=torch.long)
            perm[chosen] = torch.arange(chosen.numel(), device=device)
            perm[rest] = chosen.numel() + torch.arange(rest.numel(), device=device)
            self._places[key] = (rest, perm)
        return self._places[key]

    def _key(self) -> tuple:
        return tuple((n, tuple(m.shape)) for n, m in zip(self.names, self.masks))

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ElementMasks):
            return NotImplemented
        return self._key() == other._key() and all(
            torch.equal(a.cpu(), b.cpu()) for a, b in zip(self.masks, other.masks)
        )

    def __repr__(self) -> str:
        return f"ElementMasks({self.counts()})"


def _checked(name: str, mask: object, params: Mapping[str, Tensor]) -> Tensor:
    """``mask`` as a CPU boolean tensor of ``params[name]``'s shape with at least one True."""
    if not isinstance(name, str) or name not in params:
        raise InvalidInputError(
            f"select masks {name!r}, which is not a parameter; the parameters are "
            f"{list(params)[:24]}"
        )
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        kind = f"a {mask.dtype} tensor" if isinstance(mask, Tensor) else type(mask).__name__
        raise InvalidInputError(
            f"select[{name!r}] is {kind}: an element mask is a torch.bool tensor of the "
            "parameter's shape (True: sampled)"
        )
    want = tuple(params[name].shape)
    if tuple(mask.shape) != want:
        raise InvalidInputError(
            f"select[{name!r}] has shape {tuple(mask.shape)}, but the parameter has shape {want}"
        )
    if not bool(mask.any()):
        raise InvalidInputError(f"select[{name!r}] selects no element (the mask is all False)")
    return mask.detach().cpu()
