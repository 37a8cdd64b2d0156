r"""What each entry of a parameter dict or ``state_dict`` is, for a loss from ``from_module``:
a parameter to sample, another name of a tied parameter, or a value held fixed.

A module's ``state_dict()`` lists its trainable parameters, its frozen ones
(``requires_grad=False``), its buffers (batch norm's running statistics) and every name of a
tied parameter (an output layer sharing the embedding's weight). ``restrict`` and
``estimate_llc_series`` take such dicts as they take ``from_module``'s w*: only the trainable
parameters, each under its first name, are candidates for sampling; frozen parameters and
buffers are held at the dict's values; the other names of a tied parameter must hold its values
and are dropped (``parameter_entries``, ``check_tied``). Frozen parameters and buffers may be
left out (the module's own values are then used, as ``from_module`` uses them); a trainable
parameter may not (its value would be the module's current one, silently). Every entry has the
module's shape for it.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor, nn

from numeric.errors import InvalidInputError
from numeric.inputs.module_loss import parameter_aliases, running_statistics

_LISTED = 8  # names listed in an error message


def parameter_entries(
    module: nn.Module | None, params: Mapping[str, Tensor], where: str
) -> tuple[tuple[str, ...], dict[str, str]]:
    """(The entries of ``params`` that are ``module``'s trainable parameters, under their first
    names; the entries that are other names of a tied parameter -> the entry that holds it).
    Without a module (a loss not from ``from_module``) every entry is a parameter. ``where``
    names ``params`` in errors ("checkpoint '10'", "params")."""
    names = tuple(params)
    if module is None:
        return names, {}
    canonical = parameter_aliases(module)
    shapes = {n: tuple(p.shape) for n, p in module.named_parameters(remove_duplicate=False)}
    shapes.update((n, tuple(b.shape)) for n, b in module.named_buffers(remove_duplicate=False))
    if unknown := [n for n in names if n not in shapes]:
        raise InvalidInputError(
            f"{where} has {unknown[:_LISTED]}, which are neither parameters nor buffers of the "
            f"loss's module; its parameters are {list(canonical)[:24]}"
        )
    for n in names:
        got = tuple(getattr(params[n], "shape", ()))
        if got != shapes[n]:
            raise InvalidInputError(
                f"{where}[{n!r}] has shape {got}, but the module's {n!r} has shape {shapes[n]}: "
                "a dict of another architecture"
            )
    holder: dict[str, str] = {}  # first name of a parameter -> the entry holding it
    for n in names:
        if n in canonical:
            holder.setdefault(canonical[n], n)
    trainable = {n for n, p in module.named_parameters() if p.requires_grad}
    if missing := [n for n in trainable if n not in holder]:
        raise InvalidInputError(
            f"{where} lacks the module's trainable parameter(s) {missing[:_LISTED]} (the "
            "module's current values would be used silently): give every trainable parameter, "
            "and select some of them to estimate over a subset"
        )
    aliases = {
        n: holder[canonical[n]] for n in names if n in canonical and holder[canonical[n]] != n
    }
    sampled = {n for n in holder.values() if canonical[n] in trainable}
    if not sampled:
        raise InvalidInputError(
            "the loss's module has no trainable parameters (every one has requires_grad=False): "
            "there is nothing to sample"
        )
    return tuple(n for n in names if n in sampled), aliases


def check_tied(params: Mapping[str, Tensor], aliases: Mapping[str, str], where: str) -> None:
    """Every other name of a tied parameter holds the same values as its entry (a module's
    ``state_dict`` lists the one tensor under each name)."""
    for alias, name in aliases.items():
        a, b = params[alias], params[name]
        if a is b:
            continue
        same = a.shape == b.shape and a.dtype == b.dtype
        if not (same and torch.allclose(a, b.to(a.device), rtol=0, atol=0, equal_nan=True)):
            raise InvalidInputError(
                f"{where} holds different values under {name!r} and {alias!r}, which are one "
                "(tied) parameter of the module: save the module's own state_dict, or pass the "
                "parameter under one name"
            )


def require_running_statistics(module: nn.Module, names: tuple[str, ...], where: str) -> None:
    """Checkpoints of a module with running statistics (batch norm, tracking instance norm) hold
    them: those change with training, and the module's current ones (of its last state, not of
    the checkpoint) would be used silently with each checkpoint's weights."""
    held = set(names)
    if lacking := [b for b in running_statistics(module) if b not in held]:
        raise InvalidInputError(
            f"{where} lacks the module's running statistics {lacking[:_LISTED]}, which "
            "change with training: each checkpoint's weights would be evaluated with the module's "
            "current statistics, not the checkpoint's. Record state_dict() (CheckpointRecorder "
            "does), or add the statistics to each checkpoint yourself"
        )
