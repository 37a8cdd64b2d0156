"""Losses of ``nn.Module``s: ``from_module``, its ``ModuleLoss``, and the checks that the params
given with it and the module's mode make sense (frozen parameters and buffers held fixed, cast to
the run's device and dtype)."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn
from torch.func import functional_call

from numeric.errors import InvalidInputError


class FixedState:
    """The module's buffers and frozen parameters, cast to a run's device and dtype, for
    ``ModuleLoss`` (only where the module's own differ). Compared by identity: a loss holding
    copies is equal only to itself, so a compiled kernel never reuses stale copies."""

    def __init__(self, values: Mapping[str, Tensor]) -> None:
        self.values = dict(values)

    def __repr__(self) -> str:
        return f"FixedState({sorted(self.values)})"


class ModuleCall:
    """The module as a function with its parameters (and fixed state) replaced by ``state``:
    ``model(*args, **kwargs) = functional_call(module, state, args, kwargs)``, what a
    ``model_loss(model, batch)`` of ``from_module`` calls."""

    def __init__(self, module: nn.Module, state: Mapping[str, Tensor]) -> None:
        self.module, self.state = module, state

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return functional_call(self.module, self.state, args, kwargs)


@dataclass(frozen=True)
class ModuleLoss:
    """The module's loss with its parameters replaced by ``params`` (``from_module``).

    * a tuple batch (x..., y): ``loss(module(x...), y)``;
    * a dict batch (``{"input_ids": …, "attention_mask": …}``): ``loss(module(**inputs), batch)``,
      ``inputs`` the batch's entries under ``self.inputs`` (all of them when None); the loss
      reads its targets and masks from the batch;
    * ``takes_model``: ``loss(model, batch)`` for any batch, ``model(...)`` the module called
      with the sampled parameters (``ModuleCall``).

    Built with ``torch.func.functional_call``; the module's buffers and frozen parameters
    (``requires_grad=False``) are used as they are (held fixed), or as ``fixed`` holds them cast
    to the run's device and dtype (``with_fixed_state_on``, which casts a loss module's own
    tensors too: a copy of it). Two instances without ``fixed`` are equal when
    module and loss are the same objects, so a compiled kernel (``compile=True``) is reused by
    later estimates on the same module.
    """

    module: nn.Module
    loss: Callable[..., Tensor]
    fixed: FixedState | None = None
    inputs: tuple[str, ...] | None = None
    takes_model: bool = False

    def __call__(self, params: dict[str, Tensor], batch: Any) -> Tensor:
        state = params if self.fixed is None else {**self.fixed.values, **params}
        if self.takes_model:
            return self.loss(ModuleCall(self.module, state), batch)
        if isinstance(batch, Mapping):
            return self.loss(self._call_with(state, self._inputs(batch)), batch)
        if isinstance(batch, Tensor):
            raise InvalidInputError(
                "from_module's loss takes batches as a tuple (x..., y), the module's inputs then "
                f"the target, or a dict; the data is one tensor (a batch of shape "
                f"{list(batch.shape)}), which would be split into its rows: pass (x, y), a dict, "
                "or from_module(module, model_loss=fn) with fn(model, batch)"
            )
        *xs, y = batch
        return self.loss(functional_call(self.module, state, tuple(xs)), y)

    def _call_with(self, state: Mapping[str, Tensor], kwargs: dict[str, Any]) -> Any:
        """``module(**kwargs)`` with ``state``; a forward that does not take those keywords
        named as such (not as a TypeError deep in the module)."""
        try:
            return functional_call(self.module, state, (), kwargs)
        except TypeError as exc:
            try:
                inspect.signature(self.module.forward).bind(**kwargs)
            except TypeError:
                raise InvalidInputError(
                    f"the module's forward does not take the dict batch's keys {list(kwargs)} as "
                    f"keyword arguments ({exc}): pass from_module(..., inputs=[...]) naming the "
                    "keys it takes, a tuple batch (x..., y), or model_loss=fn(model, batch)"
                ) from exc
            raise

    def _inputs(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        """The entries of a dict batch the module is called with (``inputs``; all by default)."""
        if self.inputs is None:
            return dict(batch)
        if missing := [k for k in self.inputs if k not in batch]:
            raise InvalidInputError(
                f"from_module's inputs name {missing} but the data's batches have the keys "
                f"{list(batch)[:16]}"
            )
        return {k: batch[k] for k in self.inputs}

    def with_fixed_state_on(self, device: torch.device, dtype: torch.dtype) -> ModuleLoss:
        """This loss with the module's fixed state (floating buffers and frozen parameters in
        ``dtype``, all on ``device``) cast where it differs; ``self`` where nothing does."""
        fixed = {}
        for name, t in _fixed_state(self.module).items():
            want = dtype if t.is_floating_point() else t.dtype
            if t.device != device or t.dtype != want:
                fixed[name] = t.detach().to(device, want)
        loss = _loss_on(self.loss, device, dtype)
        if not fixed and loss is self.loss:
            return self
        fixed_state = FixedState(fixed) if fixed else self.fixed
        return ModuleLoss(self.module, loss, fixed_state, self.inputs, self.takes_model)


def _loss_on(
    loss: Callable[[Tensor, Tensor], Tensor], device: torch.device, dtype: torch.dtype
) -> Callable[[Tensor, Tensor], Tensor]:
    """A loss module whose own tensors (cross-entropy's class ``weight``, a buffer) are not all
    on ``device`` in ``dtype`` (the floating ones), as a copy that has them so; else ``loss``."""
    if not isinstance(loss, nn.Module):
        return loss
    own = [*loss.buffers(), *loss.parameters()]
    if all(t.device == device and (t.dtype == dtype or not t.is_floating_point()) for t in own):
        return loss
    return copy.deepcopy(loss).to(device=device, dtype=dtype)


def _fixed_state(module: nn.Module) -> dict[str, Tensor]:
    """Buffers and frozen parameters (``requires_grad=False``) of ``module``, by name."""
    state = dict(module.named_buffers())
    state.update((k, p) for k, p in module.named_parameters() if not p.requires_grad)
    return state


def from_module(
    module: nn.Module,
    loss: Callable[..., Tensor] | None = None,
    *,
    model_loss: Callable[[ModuleCall, Any], Tensor] | None = None,
    inputs: Sequence[str] | None = None,
) -> tuple[ModuleLoss, dict[str, Tensor]]:
    """``(loss_fn, w*)`` for an ``nn.Module``, the loss given in one of two ways:

    * ``loss(output, target)``: tuple batches (x..., y) give ``loss(module(x...), y)``; dict
      batches give ``loss(module(**batch), batch)`` (``inputs``: the keys passed to the module,
      all by default), e.g. ``numeric.causal_lm_loss``;
    * ``model_loss(model, batch)``: ``model(...)`` runs the module with the sampled parameters,
      for batches of any form.

    ``w*`` is a detached copy of the module's trainable parameters (``requires_grad=True``);
    frozen ones are held fixed with the buffers, as in fine-tuning, where the LLC is that of the
    trained part. The loss must return the mean over the batch's samples.
    """
    if not isinstance(module, nn.Module):
        raise InvalidInputError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    if (loss is None) == (model_loss is None):
        raise InvalidInputError(
            "pass one of loss (output, target) -> mean loss and model_loss (model, batch) -> "
            f"mean loss; got {'neither' if loss is None else 'both'}"
        )
    fn = loss if model_loss is None else model_loss
    if not callable(fn):
        kind = "loss (output, target)" if model_loss is None else "model_loss (model, batch)"
        raise InvalidInputError(f"{kind.split()[0]} must be a function {kind} -> mean loss")
    if inputs is not None:
        if isinstance(inputs, str) or not all(isinstance(k, str) for k in inputs) or not inputs:
            raise InvalidInputError(
                f"inputs must be a non-empty list of the dict batch's keys, got {inputs!r}"
            )
        if model_loss is not None:
            raise InvalidInputError("inputs applies to loss(output, batch), not to model_loss")
    params = {k: v.detach().clone() for k, v in module.named_parameters() if v.requires_grad}
    if not params:
        raise InvalidInputError(
            "the module has no trainable parameters (every one has requires_grad=False)"
        )
    keys = None if inputs is None else tuple(inputs)
    return ModuleLoss(module, fn, inputs=keys, takes_model=model_loss is not None), params


def parameter_aliases(module: nn.Module) -> dict[str, str]:
    """Every name of every parameter of ``module`` (tied ones under each of their names) ->
    its first name, the one ``module.named_parameters()`` and ``from_module`` give."""
    first: dict[int, str] = {}
    return {
        name: first.setdefault(id(p), name)
        for name, p in module.named_parameters(remove_duplicate=False)
    }


def check_module_params(loss_fn: ModuleLoss, params: Mapping[str, Any]) -> None:
    """``params`` given with a ``from_module`` loss name the module's trainable parameters, each
    once, with their shapes: no typo (an entry the module ignores would be sampled for nothing),
    no buffer, no frozen parameter (``from_module`` holds them fixed), no tied alias twice, no
    tensor of another shape (a state dict of another architecture would otherwise run), none
    left out (the module's value would be used silently)."""
    names = list(params)
    module = loss_fn.module
    canonical = parameter_aliases(module)
    buffers = {k for k, _ in module.named_buffers()}
    if unknown := [k for k in names if k not in canonical and k not in buffers]:
        raise InvalidInputError(
            f"params has {unknown[:8]}, which are not parameters of the loss's module (its "
            f"parameters are {list(canonical)[:24]}): an entry the module does not use would be "
            "sampled without entering the loss"
        )
    if held := [k for k in names if k in buffers]:
        raise InvalidInputError(
            f"params has the module's buffer(s) {held[:8]}: buffers (batch-norm statistics and "
            "the like) are held fixed, not sampled; pass the parameters (from_module's w*), not "
            "state_dict()"
        )
    own = dict(module.named_parameters(remove_duplicate=False))
    if frozen := [k for k in names if k in own and not own[k].requires_grad]:
        raise InvalidInputError(
            f"params has the module's frozen parameter(s) {frozen[:8]} (requires_grad=False), "
            "which from_module holds fixed with the buffers: leave them out of params to hold "
            "them at the module's values, or set requires_grad=True on them to sample them"
        )
    seen: dict[str, str] = {}
    for k in names:
        if (c := canonical[k]) in seen:
            raise InvalidInputError(
                f"params has {seen[c]!r} and {k!r}, which are the same (tied) parameter of the "
                "module: pass it once"
            )
        seen[c] = k
    for k, value in params.items():
        got, want = tuple(getattr(value, "shape", ())), tuple(own[k].shape)
        if got != want:
            raise InvalidInputError(
                f"params[{k!r}] has shape {got}, but the module's parameter has shape {want}: "
                "w* must be of the loss's module (a state dict of another architecture?)"
            )
    trainable = [k for k, p in module.named_parameters() if p.requires_grad]
    if missing := [k for k in trainable if k not in seen]:
        raise InvalidInputError(
            f"params lacks the module's trainable parameter(s) {missing[:8]}, whose current "
            "values in the module would be used silently: pass all of from_module's w*, or "
            "estimate over a subset with numeric.restrict"
        )


# layers whose output in training mode is random, depends on the rest of the batch, or that
# update their running statistics as they go
TRAIN_MODE_LAYERS = (nn.modules.dropout._DropoutNd, nn.modules.batchnorm._BatchNorm, nn.RReLU)


def train_mode_layers(module: nn.Module) -> list[str]:
    """Names and types of the submodules in training mode that ``TRAIN_MODE_LAYERS`` lists, and
    of instance norms in training mode that track running statistics (each call updates them)."""
    return [
        _named(name, m)
        for name, m in module.named_modules()
        if m.training
        and not (isinstance(m, nn.modules.dropout._DropoutNd) and m.p == 0)  # the identity
        and (
            isinstance(m, TRAIN_MODE_LAYERS)
            or (isinstance(m, nn.modules.instancenorm._InstanceNorm) and m.track_running_stats)
        )
    ]


def batch_statistics_layers(module: nn.Module) -> list[str]:
    """Names and types of the batch norms that keep no running statistics
    (``track_running_stats=False``): they normalise by the batch's own statistics in eval mode
    too, so the loss of a sample depends on which samples share its batch."""
    return [
        _named(name, m)
        for name, m in module.named_modules()
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_mean is None
    ]


def running_statistics(module: nn.Module) -> list[str]:
    """Names of the running-statistics buffers (running_mean, running_var) of the batch and
    instance norms that track them: buffers that change with training."""
    norms = (nn.modules.batchnorm._BatchNorm, nn.modules.instancenorm._InstanceNorm)
    return [
        f"{prefix}.{b}" if prefix else b
        for prefix, m in module.named_modules()
        if isinstance(m, norms) and m.track_running_stats
        for b in ("running_mean", "running_var")
    ]


def _named(name: str, m: nn.Module) -> str:
    return f"'{name}' ({type(m).__name__})" if name else f"the module ({type(m).__name__})"
