"""Typed option groups (layer 2): settings a user builds once and passes to any estimate.

``estimate_llc`` takes every setting as a keyword (layer 1); the same settings come in five
frozen, validated groups, which can be kept, passed to a series or a sweep, and reused::

    target = Target(gamma=100.0)
    sampler = Sampler(num_chains=8, batch_size=512)
    est = estimate_llc(loss_fn, params, data, target=target, sampler=sampler, seed=0)

- ``Target``: the tempered, localised posterior whose λ is estimated (nβ, γ, α).
- ``Sampler``: how it is sampled (chains, step, integrator, friction, preconditioner,
  gradients, batch size, anchors, compilation).
- ``Budget``: how long (burn-in and draws, or the stopping rule's rtol / target standard error,
  and a time budget in seconds).
- ``Checks``: the run's own checks (the step-size check, full-loss evaluations, what a
  divergence does, the observables measured at the draws).
- ``Runtime``: where it runs (device, dtype, progress bar, a per-block callback).

A group is validated when it is built, with the same messages as the keywords. A field left at
its default gives way to the keyword of the same name, so one group serves every point of a
sweep; a setting given both in a group and as a different keyword is an error, never a silent
choice. ``estimate_llc_potential`` takes ``target`` and ``budget`` (its sampler is MALA or
unadjusted Langevin on exact gradients: its own keywords).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any

import torch

from numeric.errors import InvalidInputError
from numeric.options import (
    DEFAULT_RTOL,
    DEFAULT_STEP_SCALE,
    Gradient,
    LLCOptions,
    OnDivergence,
    Preconditioning,
)


def _validate(group: object) -> None:
    """Every field of ``group`` through ``LLCOptions``'s checks (a group holds its own
    cross-field rules: step_size with step_scale, friction with the integrator, anchors with the
    gradient)."""
    LLCOptions(**{f.name: getattr(group, f.name) for f in fields(group)})


@dataclass(frozen=True)
class Target:
    """The posterior p(w) ∝ exp(−nβ·L_n(w) − (γ/2)‖w − w*‖² − (α/2)‖w‖²): ``nbeta`` (None:
    n/log n), ``gamma`` γ, ``prior_precision`` α."""

    nbeta: float | None = None
    gamma: float = 1.0
    prior_precision: float = 0.0

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class Sampler:
    """How the target is sampled (``estimate_llc`` documents each field; None: chosen from the
    problem)."""

    num_chains: int = 4
    step_size: float | None = None
    step_scale: float = DEFAULT_STEP_SCALE
    integrator: str = "auto"
    friction: float | None = None
    preconditioner: Preconditioning = "auto"
    gradient: Gradient = "control_variate"
    batch_size: int | None = None
    anchor_every: int | None = None
    compile: bool = False

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class Budget:
    """How long: ``num_burnin`` and ``num_draws`` per chain (None: automatic), the automatic
    draws' stopping rule (standard error ≤ ``rtol``·|λ̂| or ``target_stderr``), and
    ``time_budget`` seconds for the whole estimate."""

    num_burnin: int | None = None
    num_draws: int | None = None
    rtol: float = DEFAULT_RTOL
    target_stderr: float | None = None
    time_budget: float | None = None

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class Checks:
    """The run's own checks: ``step_check`` (None: where the step's bias is not bounded by
    the automatic ε: a given ε, Euler steps, plain minibatch gradients),
    ``full_loss_every`` (None: an epoch; 0: off), ``on_divergence`` ("raise" or "continue"),
    and ``observables`` measured at the draws where the full loss is (name → function of the
    positions [C, D], or named built-ins: ``numeric.draws.observables``)."""

    step_check: bool | None = None
    full_loss_every: int | None = None
    on_divergence: OnDivergence = "raise"
    observables: Any = None

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class Runtime:
    """Where it runs: ``device`` and ``dtype`` (None: the parameters'), ``progress`` (None: a
    bar where stderr is a terminal), ``callback`` (called once per block of draws with a
    ``numeric.DrawsEvent``: a logger; ``numeric.draws.events``), ``chain_block`` (the sampler's
    gradients for at most this many chains at a time, where all at once do not fit in memory;
    the same random numbers, the same estimate up to rounding)."""

    device: torch.device | str | None = None
    dtype: torch.dtype | None = None
    progress: bool | None = None
    callback: Any = None
    chain_block: int | None = None

    def __post_init__(self) -> None:
        _validate(self)


GROUPS: dict[str, type] = {
    "target": Target,
    "sampler": Sampler,
    "budget": Budget,
    "checks": Checks,
    "runtime": Runtime,
}


def _same(a: Any, b: Any) -> bool:
    """Equal settings (floats by value, nan never; devices by torch's comparison)."""
    if a is b:
        return True
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return False
    try:
        return bool(a == b)
    except Exception:
        return False


def apply_groups(
    keywords: Mapping[str, Any],
    groups: Mapping[str, Any],
    *,
    caller: str,
    accepted: tuple[str, ...] = tuple(GROUPS),
) -> dict[str, Any]:
    """``keywords`` (every keyword of ``caller`` by name, as passed) with each group's fields that
    differ from their defaults; a group of the wrong type, a group ``caller`` does not take, a
    field ``caller`` has no keyword for, or a field given also as a different keyword (not at its
    default) is an ``InvalidInputError`` naming both."""
    out = dict(keywords)
    for name, group in groups.items():
        if group is None:
            continue
        cls = GROUPS[name]
        if name not in accepted:
            raise InvalidInputError(
                f"{caller} takes {', '.join(f'{g}=' for g in accepted)} groups, not {name}="
            )
        if not isinstance(group, cls):
            raise InvalidInputError(
                f"{name} must be a numeric.{cls.__name__}, got {type(group).__name__}"
            )
        for f in fields(group):
            value, default = getattr(group, f.name), f.default
            if default is not MISSING and _same(value, default):
                continue  # left at its default: the keyword decides
            if f.name not in out:
                raise InvalidInputError(f"{caller} has no setting {f.name} ({name}.{f.name})")
            given = out[f.name]
            if not _same(given, default) and not _same(given, value):
                raise InvalidInputError(
                    f"{f.name} is given twice: {f.name}={given!r} and {name}={cls.__name__}("
                    f"{f.name}={value!r}); pass it in one place"
                )
            out[f.name] = value
    return out


def llc_defaults() -> dict[str, Any]:
    """``estimate_llc``'s settings at their defaults (``LLCOptions``'s fields a user sets)."""
    internal = ("max_step_size", "min_friction")  # set by the re-run policies, not by a user
    return {f.name: f.default for f in fields(LLCOptions) if f.name not in internal}


def flatten_groups(options: Mapping[str, Any], *, caller: str) -> dict[str, Any]:
    """``options`` (``estimate_llc``'s keywords, groups among them) as keywords only: each
    group's fields that differ from their defaults, checked against the keywords as
    ``apply_groups`` does. For callers that pass the options on (a series)."""
    groups = {k: v for k, v in options.items() if k in GROUPS}
    rest = {k: v for k, v in options.items() if k not in GROUPS}
    defaults = llc_defaults()
    merged = apply_groups({**defaults, **rest}, groups, caller=caller)
    return {k: v for k, v in merged.items() if k in rest or not _same(v, defaults.get(k))}
