r"""Weight-restricted LLC: the loss as a function of a chosen subset of the parameters.

Split w = (u, v) into the free parameters u and the frozen ones v. The restricted loss is
L_n^u(u) = L_n(u, v*), and its local learning coefficient at u* is the LLC of the restricted
model (REFERENCE §6 with w replaced by u): the chains move u only, v stays at v*.
``restrict(loss_fn, params, select)`` returns ``(RestrictedLoss, u*)``, a pair that
``estimate_llc`` (and everything it does: preconditioning, anchors, ``compile=True``) takes as
it takes any other.

``select`` names u: a parameter name or a module prefix (``"0"`` selects ``"0.weight"`` and
``"0.bias"``), a list of them, a predicate on names, or a submodule of the module of a loss from
``numeric.from_module`` (or a list mixing names and modules). A tied parameter (one Parameter
registered under several names, e.g. an output layer sharing the embedding's weight) is in
``params`` under its first name only, as ``from_module`` gives it; a submodule or a name that
reaches it through another name (an alias), or a predicate true for any of its names, selects
it by that first name. ``params`` may be the module's ``state_dict()``: its frozen parameters
and buffers are held at its values and the other names of a tied parameter dropped, never
selected (``numeric.inputs.entries``). A dict ``{name: bool mask}`` frees only the masked
elements (``numeric.inputs.element_masks``: one head's rows of a fused q/k/v weight).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from numeric.errors import InvalidInputError
from numeric.inputs.element_masks import ElementMasks
from numeric.inputs.entries import check_tied, parameter_entries
from numeric.inputs.module_loss import (
    ModuleLoss,
    batch_statistics_layers,
    parameter_aliases,
    train_mode_layers,
)
from numeric.inputs.problem import LossFn

__all__ = [
    "FrozenParams",
    "RestrictedLoss",
    "Selection",
    "parameter_aliases",
    "require_eval_mode",
    "restrict",
    "root_module",
    "select_names",
]

Selection = (
    str | nn.Module | Callable[[str], bool] | Iterable[str | nn.Module] | Mapping[str, Tensor]
)
_LISTED = 24  # parameter names listed in an error message


class FrozenParams:
    """The frozen values v*, by name. Equal when names, dtypes, devices and values are equal;
    the hash reads names, shapes and dtypes only (equal objects hash equally)."""

    def __init__(self, values: Mapping[str, Tensor]) -> None:
        self.names: tuple[str, ...] = tuple(values)
        self.values: tuple[Tensor, ...] = tuple(v.detach() for v in values.values())

    def as_dict(self, like: Tensor) -> dict[str, Tensor]:
        """The values on ``like``'s device, floating-point ones in its dtype (no copy when they
        already are; ``restrict(..., device=, dtype=)`` puts them there once)."""
        out = {}
        for name, v in zip(self.names, self.values):
            if v.device != like.device or (v.is_floating_point() and v.dtype != like.dtype):
                v = v.to(like.device, like.dtype if v.is_floating_point() else v.dtype)
            out[name] = v
        return out

    def _key(self) -> tuple:
        return tuple((n, tuple(v.shape), v.dtype) for n, v in zip(self.names, self.values))

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrozenParams):
            return NotImplemented
        if self is other:
            return True
        return self._key() == other._key() and all(
            a.device == b.device and torch.equal(a, b) for a, b in zip(self.values, other.values)
        )

    def __repr__(self) -> str:
        return f"FrozenParams({', '.join(self.names)})"


class RestrictedLoss:
    """``loss_fn({**u, **v*}, batch)`` as a function of the free parameters u alone.

    ``order`` is the order of the names in the full parameter dict (kept, so a module sees its
    parameters as before). Two instances are equal (and hash equally) when ``loss_fn``, the
    free names and v* are equal, so ``compile=True`` reuses the kernel of an equal restriction;
    when ``loss_fn`` is not hashable neither is this (then nothing is cached, as for any loss).
    """

    def __init__(
        self,
        loss_fn: LossFn,
        free: Iterable[str] | Mapping[str, Tensor],
        frozen: FrozenParams,
        order: Iterable[str],
        masks: ElementMasks | None = None,
    ) -> None:
        self.loss_fn, self.free, self.frozen = loss_fn, tuple(free), frozen
        self.order, self.masks = tuple(order), masks  # masks: frozen holds their w* whole
        # u*'s shapes where ``free`` gives its tensors (``restrict``), else unchecked
        self.shapes: dict[str, tuple[int, ...]] | None = (
            {n: tuple(v.shape) for n, v in free.items()} if isinstance(free, Mapping) else None
        )

    def check_params(self, params: Mapping[str, Any]) -> None:
        """``params`` name the free parameters u, each with u*'s shape: a frozen name (the full
        w* passed where u* belongs) would override v* and be sampled, voiding the restriction."""
        if frozen := [k for k in params if k in self.frozen.names and k not in self.free]:
            raise InvalidInputError(
                f"params has {frozen[:8]}, which numeric.restrict froze at w*'s values: a "
                "restricted loss samples only the selected parameters, so pass u* (the second "
                "value restrict returned), not the full w*"
            )
        if unknown := [k for k in params if k not in self.free]:
            raise InvalidInputError(
                f"params has {unknown[:8]}, which the restricted loss does not take (its free "
                f"parameters are {list(self.free)[:_LISTED]})"
            )
        if missing := [k for k in self.free if k not in params]:
            raise InvalidInputError(
                f"params lacks the restriction's free parameter(s) {missing[:8]}: pass all of "
                "u* (the second value numeric.restrict returned)"
            )
        for k, want in (self.shapes or {}).items():
            got = tuple(getattr(params[k], "shape", ()))
            if got != want:
                raise InvalidInputError(
                    f"params[{k!r}] has shape {got}, but the restriction's u* has shape {want}"
                )

    def __call__(self, params: dict[str, Tensor], batch: Any) -> Tensor:
        frozen = self.frozen.as_dict(params[self.free[0]])
        full = {**frozen, **params}
        if self.masks is not None:  # masked parameters: u's elements placed into w*'s
            full.update(self.masks.expand(params, frozen))
        return self.loss_fn({name: full[name] for name in self.order}, batch)

    def with_fixed_state_on(self, device: torch.device, dtype: torch.dtype) -> RestrictedLoss:
        """This restriction of the inner loss with its module's fixed state on ``device`` in
        ``dtype`` (``ModuleLoss.with_fixed_state_on``); ``self`` where nothing changes."""
        cast = getattr(self.loss_fn, "with_fixed_state_on", None)
        inner = cast(device, dtype) if callable(cast) else self.loss_fn
        if inner is self.loss_fn:
            return self
        return RestrictedLoss(inner, self.free, self.frozen, self.order, self.masks)

    def _key(self) -> tuple:
        return (self.loss_fn, self.free, self.frozen, self.order, self.masks)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RestrictedLoss):
            return NotImplemented
        return type(self) is type(other) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"RestrictedLoss({self.loss_fn!r}, free={list(self.free)})"


def restrict(
    loss_fn: LossFn,
    params: Mapping[str, Tensor],
    select: Selection,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> tuple[RestrictedLoss, dict[str, Tensor]]:
    """``(restricted_loss, u*)``: the loss as a function of the selected parameters u, the others
    frozen at their values in ``params`` (module docstring).

    ``device``/``dtype``: where the frozen values are kept (floating-point ones cast); pass the
    ``device``/``dtype`` you give ``estimate_llc`` when it differs from ``params``', so that the
    frozen values are not copied at every step. An empty selection, or a name that selects no
    parameter, is an ``InvalidInputError`` that lists the parameters.
    """
    if not isinstance(params, Mapping) or not params:
        raise InvalidInputError("params must be a non-empty dict of tensors (w*)")
    sampled, aliases = parameter_entries(root_module(loss_fn), params, "params")
    check_tied(params, aliases, "params")
    masks = None
    if isinstance(select, Mapping):  # element masks: their parameters' w* frozen whole too
        masks = ElementMasks(select, {name: params[name] for name in sampled})
    names = frozenset(masks.names) if masks else select_names(select, sampled, loss_fn, params)
    frozen = {}
    for name, value in params.items():
        if (name in names and not masks) or name in aliases:
            continue
        if not isinstance(value, Tensor):
            raise InvalidInputError(f"params[{name!r}] is a {type(value).__name__}, not a tensor")
        cast = dtype if (dtype is not None and value.is_floating_point()) else value.dtype
        frozen[name] = value.detach().to(device=device or value.device, dtype=cast)
    chosen = masks.free_values(params) if masks else params
    free = {name: chosen[name] for name in params if name in names}
    order = [name for name in params if name not in aliases]
    return RestrictedLoss(loss_fn, free, FrozenParams(frozen), order, masks), free


def select_names(
    select: Selection,
    names: tuple[str, ...],
    loss_fn: Any = None,
    params: Mapping[str, Tensor] | None = None,
) -> frozenset[str]:
    """The names among ``names`` that ``select`` picks (module docstring); ``loss_fn`` is where a
    module is looked for. Raises ``InvalidInputError`` for an empty selection or an unknown name."""
    if isinstance(select, str) or isinstance(select, nn.Module):
        items: list[Any] = [select]
    elif callable(select):  # a tied parameter is selected where any of its names is
        others: dict[str, list[str]] = {}
        for alias, name in _aliases_of(loss_fn).items():
            others.setdefault(name, []).append(alias)
        chosen = frozenset(
            n for n in names if any(_as_bool(select(a), a) for a in [n, *others.get(n, [])])
        )
        if not chosen:
            raise InvalidInputError(
                f"the predicate selects no parameter; the parameters are {_listing(names, params)}"
            )
        return chosen
    elif isinstance(select, Iterable) and not isinstance(select, (bytes, Mapping)):
        items = list(select)
    else:
        raise InvalidInputError(
            "select must be a parameter name, a list of names, a predicate on names or an "
            f"nn.Module, not {type(select).__name__}"
        )
    if not items:
        raise InvalidInputError(
            f"select is empty: name at least one parameter of {_listing(names, params)}"
        )
    chosen: set[str] = set()
    for item in items:
        picked = _pick(item, names, loss_fn, params)
        chosen.update(picked)
    return frozenset(chosen)


def _pick(
    item: Any, names: tuple[str, ...], loss_fn: Any, params: Mapping[str, Tensor] | None
) -> list[str]:
    if isinstance(item, nn.Module):
        return _module_names(item, names, loss_fn, params)
    if not isinstance(item, str):
        raise InvalidInputError(
            f"select lists {item!r} ({type(item).__name__}); each entry must be a parameter "
            "name, a module prefix or an nn.Module"
        )
    picked = [n for n in names if n == item or n.startswith(item + ".")]
    for alias, name in _aliases_of(loss_fn).items():  # tied parameters reached by another name
        if (alias == item or alias.startswith(item + ".")) and name in names:
            picked.append(name)
    if not picked:
        root = root_module(loss_fn)
        frozen = (
            [] if root is None else [n for n, p in root.named_parameters() if not p.requires_grad]
        )
        if any(n == item or n.startswith(item + ".") for n in frozen):
            raise InvalidInputError(
                f"select names {item!r}, whose parameters are frozen (requires_grad=False), held "
                f"fixed by from_module's loss; the parameters are {_listing(names, params)}"
            )
        raise InvalidInputError(
            f"select names {item!r}, which is neither a parameter nor a module prefix; the "
            f"parameters are {_listing(names, params)}"
        )
    return picked


def _module_names(
    sub: nn.Module, names: tuple[str, ...], loss_fn: Any, params: Mapping[str, Tensor] | None
) -> list[str]:
    """The parameter names of submodule ``sub`` of the loss's module, as ``params`` spells them."""
    root = root_module(loss_fn)
    if root is None:
        raise InvalidInputError(
            "select is an nn.Module, but loss_fn was not built by numeric.from_module (it has no "
            "module to find it in): select parameters by name or by a predicate on names"
        )
    prefix = next((p for p, m in root.named_modules(remove_duplicate=False) if m is sub), None)
    if prefix is None:
        raise InvalidInputError(
            f"select is a {type(sub).__name__} that is not a submodule of the loss's module "
            f"({type(root).__name__})"
        )
    canonical = parameter_aliases(root)
    local = list(sub.named_parameters())
    if not local:
        raise InvalidInputError(
            f"select is the submodule {prefix or '(the root)'!r}, which has no parameters; the "
            f"parameters are {_listing(names, params)}"
        )
    full: list[str] = []  # a tied parameter under its first name in the root, once
    frozen: list[str] = []  # requires_grad=False and not in params: held fixed by the loss
    for n, p in local:
        name = canonical[f"{prefix}.{n}" if prefix else n]
        if name in full or name in frozen:
            continue
        (frozen if not p.requires_grad and name not in names else full).append(name)
    if not full:
        raise InvalidInputError(
            f"select is the submodule {prefix or '(the root)'!r}, whose parameters are all "
            "frozen (requires_grad=False), held fixed by from_module's loss; the parameters are "
            f"{_listing(names, params)}"
        )
    missing = [n for n in full if n not in names]
    if missing:
        raise InvalidInputError(
            f"params lacks {', '.join(repr(n) for n in missing[:_LISTED])} of the submodule "
            f"{prefix!r}; the parameters are {_listing(names, params)}"
        )
    return full


def require_eval_mode(loss_fn: Any) -> None:
    """Refuse a loss whose module (found through restrictions) has dropout, batch norm or RReLU
    in training mode, or batch norms without running statistics: there L(w, batch) is random or
    depends on the batch's own statistics, so neither the LLC nor a Hessian of L_n(w) is
    defined."""
    module = root_module(loss_fn)
    if module is None:
        return
    if stochastic := train_mode_layers(module):
        raise InvalidInputError(
            f"the module is in training mode, where its layers {', '.join(stochastic)} make the "
            "loss random (dropout), depend on the batch's own statistics (batch norm) or update "
            "running statistics on every call (instance norm), so L_n(w) is not a function of w; "
            "call module.eval() before estimating (the LLC is that of the evaluated model)"
        )
    if batchwise := batch_statistics_layers(module):
        raise InvalidInputError(
            f"the module's batch norm(s) {', '.join(batchwise)} keep no running statistics "
            "(track_running_stats=False), so even in eval mode they normalise by the batch's own "
            "statistics and a sample's loss depends on which samples share its minibatch: L_n(w) "
            "is not a function of w. Give them running statistics (track_running_stats=True, "
            "then a pass over the training data in train mode) or use nn.LayerNorm / "
            "nn.GroupNorm"
        )


def _aliases_of(loss_fn: Any) -> dict[str, str]:
    """``parameter_aliases`` of the loss's module, the aliases only (empty without a module)."""
    root = root_module(loss_fn)
    if root is None:
        return {}
    return {a: n for a, n in parameter_aliases(root).items() if a != n}


def root_module(loss_fn: Any) -> nn.Module | None:
    """The module of a loss from ``from_module`` (through restrictions), else None."""
    while isinstance(loss_fn, RestrictedLoss):
        loss_fn = loss_fn.loss_fn
    return loss_fn.module if isinstance(loss_fn, ModuleLoss) else None


def _as_bool(value: Any, name: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InvalidInputError(
        f"the predicate must return True or False; for {name!r} it returned {value!r}"
    )


def _listing(names: tuple[str, ...], params: Mapping[str, Tensor] | None) -> str:
    """``a (3×2), b (3), ...``: the names (with shapes when known), at most ``_LISTED``."""

    def one(n: str) -> str:
        v = None if params is None else params.get(n)
        if isinstance(v, Tensor):
            return f"{n} ({'×'.join(map(str, v.shape)) or 'scalar'})"
        return n

    shown = ", ".join(one(n) for n in names[:_LISTED])
    more = f", … ({len(names) - _LISTED} more)" if len(names) > _LISTED else ""
    return shown + more
