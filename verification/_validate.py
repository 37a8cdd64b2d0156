"""Argument checks shared by :mod:`verification`: each failure names the argument and the range;
``checked`` makes a strategy's checks when it is built (not at its first draw, deep inside
hypothesis)."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from numbers import Integral, Real
from typing import TypeVar

from .errors import InvalidArgumentError, InvalidTypeError

DEVICE_TYPES = ("cpu", "cuda", "mps")


def check_int(name: str, value: object, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in [lo, hi] (bools are refused: ``True`` is not a size)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InvalidTypeError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        allowed = f"≥ {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise InvalidArgumentError(f"{name} must be an integer {allowed}, got {v}")
    return v


def check_real(
    name: str, value: object, lo: float, hi: float = math.inf, *, open_lo: bool = False
) -> float:
    """``value`` as a finite float in [lo, hi] (or (lo, hi] with ``open_lo``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidTypeError(f"{name} must be a real number, got {value!r}")
    bracket = "(" if open_lo else "["
    try:
        v = float(value)
    except OverflowError:  # an int or Fraction beyond the float range (10**400)
        raise InvalidArgumentError(
            f"{name} must be a finite number in {bracket}{lo}, {hi}], got {value!r:.80}"
        ) from None
    low_ok = v > lo if open_lo else v >= lo
    if not (math.isfinite(v) and low_ok and v <= hi):
        raise InvalidArgumentError(
            f"{name} must be a finite number in {bracket}{lo}, {hi}], got {v}"
        )
    return v


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidTypeError(f"{name} must be True or False, got {value!r}")
    return value


def check_type(name: str, value: object, kind: type | tuple[type, ...]) -> None:
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InvalidTypeError(
            f"{name} must be a {names}, got {type(value).__name__} {value!r:.80}"
        )


def check_device(name: str, value: object) -> str | None:
    """A torch device spelling (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...) or None; availability
    is not checked here (a Ray head without a GPU may send work to workers with one)."""
    if value is None:
        return None
    import torch

    if not isinstance(value, str | torch.device):
        raise InvalidTypeError(
            f"{name} must be a device name such as 'cpu' or 'cuda', got {value!r}"
        )
    try:
        dev = torch.device(value)
    except (RuntimeError, ValueError):
        dev = None
    if dev is None or dev.type not in DEVICE_TYPES:
        raise InvalidArgumentError(
            f"{name}={value!r} is not a device the estimates run on ('cpu', 'cuda', 'cuda:1', 'mps')"
        )
    return str(dev)


def device_unavailable(device: str) -> str | None:
    """Why ``device`` cannot be used on this machine, or None when it can."""
    import torch

    dev = torch.device(device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            return f"device {device!r}: CUDA is not available on this machine"
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            return f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s)"
    elif dev.type == "mps" and not torch.backends.mps.is_available():
        return f"device {device!r}: MPS is not available on this machine"
    return None


MAX_N = 10**7  # the regression cases hold n samples (up to 10 floats each) in memory
MAX_CHAINS = 4096  # bounds memory: every chain keeps traces of up to ~40,000 draws
MAX_SEED = 2**63 - 1  # entry i gets seed + i; torch generators take seeds below 2^64
MAX_DATA_FLOATS = 10**8  # a case's data and parameters in memory (800 MB as float64)


def check_data_size(what: str, n: int, per_sample: int, fixed: int = 0) -> None:
    """Refuse a case whose data (n samples of ``per_sample`` numbers) and ``fixed`` parameters
    would hold more than ``MAX_DATA_FLOATS`` floats, before anything is allocated."""
    total = n * per_sample + fixed
    if total > MAX_DATA_FLOATS:
        raise InvalidArgumentError(
            f"{what}: n = {n:,} samples of {per_sample:,} numbers and {fixed:,} parameters are "
            f"{total:,} floats, more than the {MAX_DATA_FLOATS:,} allowed: reduce n or the sizes"
        )


def check_settings(settings: object, rule_type: type) -> None:
    """Validate and normalise a :class:`verification.Settings` in place (it is frozen);
    ``rule_type`` is the class its ``rule`` must be (``crosscheck.DecisionRule``)."""

    def put(name: str, value: object) -> None:
        object.__setattr__(settings, name, value)

    put("n", check_int("n", settings.n, 2, MAX_N))
    put("num_chains", check_int("num_chains", settings.num_chains, 1, MAX_CHAINS))
    put("seed", check_int("seed", settings.seed, 0, MAX_SEED))
    put("device", check_device("device", settings.device))
    check_type("rule", settings.rule, rule_type)


S = TypeVar("S")

OPTIONAL_BOOL = object()  # a spec for ``checked``: True, False or None


def checked(**spec: object) -> Callable[[Callable[..., S]], Callable[..., S]]:
    """Check a strategy's arguments when it is built, not at its first draw deep inside
    hypothesis: an int spec is the least allowed size, a pair (lo, hi) the allowed range (an upper
    bound keeps every draw fast and small), ``bool`` asks for True/False."""

    def wrap(make: Callable[..., S]) -> Callable[..., S]:
        sig = inspect.signature(make)

        @functools.wraps(make)
        def build(*args: object, **kwargs: object) -> S:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as err:
                raise InvalidTypeError(f"{make.__name__}: {err}") from None
            bound.apply_defaults()
            for name, want in spec.items():
                value, label = bound.arguments[name], f"{make.__name__}: {name}"
                if want is bool or (want is OPTIONAL_BOOL and value is not None):
                    check_bool(label, value)
                elif want is not OPTIONAL_BOOL:
                    check_int(label, value, *(want if isinstance(want, tuple) else (want,)))
            return make(*args, **kwargs)

        return build

    return wrap
