"""Argument checks for the public strategies, made when a strategy is built (not at its first
draw, deep inside hypothesis)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TypeVar

from ._validate import check_bool, check_int
from .errors import InvalidTypeError

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
