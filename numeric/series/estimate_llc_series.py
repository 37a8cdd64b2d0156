r"""LLC along training: ``estimate_llc_series`` estimates λ̂ at each checkpoint of a run.

Checkpoint k (k = 0, 1, …) is estimated exactly as
``estimate_llc(loss_fn, params_k, data, seed=seed + k, **options)`` would estimate it, with the
set-up shared: the data are moved to the device once, and every estimate uses one loss object,
so with ``compile=True`` the SGLD kernel compiles once for the whole series
(``numeric.sampler.kernel``'s cache; the drift probe, whose width is the number of slow Hessian
directions a checkpoint's plan finds, enters the graph widened to ``kernel.PROBE_WIDTH``: a
series whose checkpoints found one and then two compiled twice before). Entries that are not
sampled — a restriction's frozen parameters (``select``, ``numeric.restrict``) and a module's
buffers in a ``state_dict`` — are held at the checkpoint's values by one series-private
``RestrictedLoss`` whose frozen tensors are overwritten in place between checkpoints; they are inputs of the compiled graph, not constants,
so they cause no compile of their own. A module's frozen parameters (``requires_grad=False``)
are held at the checkpoint's values too, as ``from_module`` holds them fixed (or, where a
checkpoint leaves them out, at the module's own: ``numeric.inputs.entries``); a tied parameter,
which a ``state_dict`` lists under each of its names, is sampled once, under its first name,
and its other names must hold the same values.

``engine="ray"`` spreads the checkpoints over Ray workers (``numeric.series.ray``): the same
``SeriesTask`` runs there, one worker per CPU core (or per GPU when ``device`` is CUDA), each
estimating checkpoints k ≡ j (mod workers) in order, so the records equal a local run's.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import Tensor

from numeric.errors import InvalidInputError, NumericError
from numeric.inputs.data import to_device
from numeric.inputs.data_forms import as_data
from numeric.inputs.element_masks import ElementMasks
from numeric.inputs.entries import check_tied, parameter_entries, require_running_statistics
from numeric.inputs.problem import LossFn
from numeric.inputs.restrict import (
    FrozenParams,
    RestrictedLoss,
    Selection,
    require_eval_mode,
    root_module,
    select_names,
)
from numeric.option_groups import flatten_groups
from numeric.options import LLCOptions, as_seeds
from numeric.result.llc_estimate import LLCEstimate
from numeric.run.estimate_llc import estimate_llc
from numeric.sampler.chains import default_progress
from numeric.series.checkpoints import Checkpoint, as_checkpoints
from numeric.series.llc_series import LLCSeries

__all__ = ["SeriesTask", "estimate_llc_series"]

Engine = Literal["local", "ray"]
OnError = Literal["raise", "record"]
_OWN = ("loss_fn", "params", "data", "seed", "progress")  # not passed through **options


def estimate_llc_series(
    loss_fn: LossFn,
    checkpoints: Any,
    data: Any,
    *,
    select: Selection | None = None,
    seed: int = 0,
    on_error: OnError = "raise",
    progress: bool | None = None,
    engine: Engine = "local",
    workers: int | None = None,
    ray_init: Mapping[str, Any] | None = None,
    **options: Any,
) -> LLCSeries:
    r"""λ̂ at each checkpoint of a training run, as an ``LLCSeries`` (module docstring).

    ``checkpoints``: a list of state dicts (or params dicts), a dict from steps (or labels) to
    them, ``Checkpoint``\ s, or a ``CheckpointRecorder`` filled by the training loop. Every
    checkpoint has the same names and shapes. With a loss from ``from_module`` each name is a
    parameter or a buffer of the module, and every parameter is present. ``select``: estimate the
    weight-restricted LLC over these parameters only (``numeric.restrict``, element masks
    ``{name: mask}`` included), the others frozen at each checkpoint's values. ``options`` are ``estimate_llc``'s (``num_chains``, ``gamma``,
    ``compile``, ``device``, …); checkpoint k is estimated with seed ``seed + k``.

    ``on_error="record"``: a checkpoint whose estimate raises a ``NumericError`` (a divergence, a
    non-finite loss) gets estimate None and its message in ``errors``, and the series goes on.
    ``progress``: a bar over checkpoints (default: when stderr is a terminal); the estimates'
    own bars are off. ``engine="ray"``: spread over ``workers`` Ray workers (default: one per CPU
    core, or per GPU when ``device`` is CUDA, of the cluster ``ray.init(**ray_init)`` connects to
    or starts); needs the ``ray`` extra.
    """
    if engine not in ("local", "ray"):
        raise InvalidInputError(f"engine must be 'local' or 'ray', not {engine!r}")
    if on_error not in ("raise", "record"):
        raise InvalidInputError(f"on_error must be 'raise' or 'record', not {on_error!r}")
    if engine == "local" and (workers is not None or ray_init is not None):
        raise InvalidInputError("workers and ray_init are for engine='ray'")
    options = flatten_groups(options, caller="estimate_llc_series")
    _check_options(options, seed)
    cps = as_checkpoints(checkpoints)
    seed = as_seeds(seed, len(cps))  # every seed + k, up front; a Python int in the records
    data = as_data(data)  # once, not per checkpoint (nor per Ray worker)
    task = SeriesTask.build(loss_fn, cps, data, select, seed, on_error, options)
    if engine == "ray":
        from numeric.series.ray import run_on_ray

        outcomes = run_on_ray(task, cps, workers=workers, ray_init=ray_init, progress=progress)
    else:
        outcomes = _run_locally(task, cps, progress)
    return LLCSeries(
        labels=tuple(c.label for c in cps),
        steps=tuple(c.step for c in cps),
        seeds=tuple(task.seed_of(k) for k in range(len(cps))),
        estimates=tuple(est for est, _ in outcomes),
        errors=tuple(err for _, err in outcomes),
        free_params=task.free,
        frozen_params=task.frozen,
    )


Outcome = tuple[LLCEstimate | None, str | None]


@dataclass
class SeriesTask:
    """What every checkpoint's estimate shares: the loss, the names sampled and frozen, the data,
    the options. Picklable (a Ray worker receives a copy); ``prepare`` moves the data to the run's
    device once, and the first ``run`` with frozen entries wraps the loss around a copy of their
    values (``_SeriesFrozen``), which later runs overwrite."""

    loss_fn: LossFn
    free: tuple[str, ...]
    frozen: tuple[str, ...]
    data: Any
    options: dict[str, Any]
    seed: int
    on_error: OnError
    order: tuple[str, ...] = ()  # free and frozen names in the checkpoints' order (no aliases)
    masks: ElementMasks | None = None  # select's element masks (their names free and frozen)
    _loss: LossFn | None = None  # the loss the estimates use (set by the first run)
    _prepared: bool = False

    @classmethod
    def build(
        cls,
        loss_fn: LossFn,
        cps: tuple[Checkpoint, ...],
        data: Any,
        select: Selection | None,
        seed: int,
        on_error: OnError,
        options: dict[str, Any],
    ) -> SeriesTask:
        if isinstance(loss_fn, RestrictedLoss):  # its v* would be overridden by each checkpoint
            raise InvalidInputError(
                "estimate_llc_series takes the unrestricted loss and select= (here select="
                f"{list(loss_fn.free)!r}): each checkpoint's own values hold the other "
                "parameters fixed, not those numeric.restrict froze"
            )
        require_eval_mode(loss_fn)  # the module's, not a checkpoint's: refused once, up front
        first = cps[0].params
        _check_same_entries(cps)
        module, where = root_module(loss_fn), f"checkpoint {cps[0].label!r}"
        params, aliases = parameter_entries(module, first, where)
        if module is not None:
            require_running_statistics(module, tuple(first), where)
        for cp in cps:
            check_tied(cp.params, aliases, f"checkpoint {cp.label!r}")
        masks = None
        if isinstance(select, Mapping):  # element masks: each checkpoint's w* around u
            masks = ElementMasks(select, {n: first[n] for n in params})
            chosen = frozenset(masks.names)
        else:
            chosen = params if select is None else select_names(select, params, loss_fn, first)
        free = tuple(n for n in first if n in chosen)
        held = () if masks is None else masks.names
        frozen = tuple(n for n in first if (n not in chosen or n in held) and n not in aliases)
        order = tuple(n for n in first if n not in aliases)
        return cls(loss_fn, free, frozen, data, dict(options), seed, on_error, order, masks)

    def seed_of(self, k: int) -> int:
        """The seed of checkpoint k: ``seed + k``."""
        return self.seed + k

    def prepare(self, like: Tensor) -> None:
        """Move the data to the run's device and dtype (``options`` or ``like``'s), once."""
        if not self._prepared:
            device, dtype = self._placement(like)
            self.data = to_device(self.data, device, dtype)
            self._prepared = True

    def run(self, k: int, cp: Checkpoint) -> Outcome:
        """Checkpoint k's estimate (or, with ``on_error="record"``, its error message)."""
        free = {n: cp.params[n] for n in self.free}
        if self.masks is not None:
            free = self.masks.free_values(free)
        self.prepare(free[self.free[0]])
        loss = self._loss_at(cp)
        try:
            est = estimate_llc(
                loss, free, self.data, seed=self.seed_of(k), progress=False, **self.options
            )
        except NumericError as exc:
            if self.on_error == "raise":
                if hasattr(exc, "add_note"):  # Python ≥ 3.11: the traceback names the checkpoint
                    exc.add_note(f"at checkpoint {cp.label!r} (k = {k}, seed {self.seed_of(k)})")
                raise
            return None, f"{type(exc).__name__}: {exc}"
        return est, None

    def _loss_at(self, cp: Checkpoint) -> LossFn:
        """The loss with the frozen entries at ``cp``'s values (the user's loss when none are)."""
        if not self.frozen:
            return self.loss_fn
        values = {n: cp.params[n] for n in self.frozen}
        if self._loss is None:
            device, dtype = self._placement(cp.params[self.free[0]])
            placed = {n: _placed(v, device, dtype) for n, v in values.items()}
            frozen = _SeriesFrozen(placed)
            order = self.order or tuple(cp.params)
            self._loss = RestrictedLoss(self.loss_fn, self.free, frozen, order, self.masks)
        else:
            assert isinstance(self._loss, RestrictedLoss)
            self._loss.frozen.assign(values)
        return self._loss

    def _placement(self, like: Tensor) -> tuple[torch.device, torch.dtype]:
        device = self.options.get("device")
        return (
            torch.device(device) if device is not None else like.device,
            self.options.get("dtype") or like.dtype,
        )


class _SeriesFrozen(FrozenParams):
    """Frozen values private to one series, overwritten in place per checkpoint. Equal only to
    itself, so no other loss can be served the kernel compiled around these tensors."""

    def assign(self, values: Mapping[str, Tensor]) -> None:
        with torch.no_grad():
            for name, v in zip(self.names, self.values):
                v.copy_(values[name])

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other


def _run_locally(task: SeriesTask, cps: tuple[Checkpoint, ...], progress: bool | None) -> list:
    from tqdm.auto import tqdm

    out = []
    bar = tqdm(
        total=len(cps), desc="LLC", unit="checkpoint", file=sys.stderr,
        disable=not default_progress(progress),
    )  # fmt: skip
    with bar:
        for k, cp in enumerate(cps):
            out.append(task.run(k, cp))
            est = out[-1][0]
            bar.set_postfix_str(f"{cp.label}: λ̂ = {est.mean:.4g}" if est else f"{cp.label}: failed")
            bar.update()
    return out


def _check_options(options: dict[str, Any], seed: int) -> None:
    """Names that ``estimate_llc`` takes, with values ``LLCOptions`` accepts."""
    allowed = [p for p in inspect.signature(estimate_llc).parameters if p not in _OWN]
    unknown = [k for k in options if k not in allowed]
    if unknown:
        raise InvalidInputError(
            f"estimate_llc_series got unknown option(s) {', '.join(map(repr, unknown))}; it "
            f"passes on estimate_llc's: {', '.join(allowed)}"
        )
    LLCOptions(**options, seed=seed)


def _check_same_entries(cps: tuple[Checkpoint, ...]) -> None:
    ref = cps[0]
    shapes = {k: tuple(v.shape) for k, v in ref.params.items()}
    for cp in cps[1:]:
        missing = [k for k in shapes if k not in cp.params]
        extra = [k for k in cp.params if k not in shapes]
        if missing or extra:
            what = (f"lacks {missing}" if missing else "") + (
                f"{' and ' if missing else ''}has {extra} not in checkpoint {ref.label!r}"
                if extra
                else ""
            )
            raise InvalidInputError(f"checkpoint {cp.label!r} {what}")
        for k, shape in shapes.items():
            got, was = cp.params[k], ref.params[k]
            if tuple(got.shape) != shape or got.dtype != was.dtype:
                raise InvalidInputError(
                    f"checkpoint {cp.label!r}: {k!r} is {got.dtype} of shape "
                    f"{tuple(got.shape)}, checkpoint {ref.label!r} {was.dtype} of shape {shape}"
                )


def _placed(v: Tensor, device: torch.device, dtype: torch.dtype) -> Tensor:
    """A copy of ``v`` on ``device``, floating-point in ``dtype`` (the run's)."""
    return v.detach().to(device, dtype if v.is_floating_point() else v.dtype, copy=True)
