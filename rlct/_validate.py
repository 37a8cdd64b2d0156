"""Input validation shared by the exact layer."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence, Set
from itertools import islice
from numbers import Integral, Rational, Real

import numpy as np
import sympy as sp

from .errors import (
    InvalidExponentError,
    InvalidPriorError,
    InvalidShapeError,
    InvalidTypeError,
    RLCTError,
    TooLargeError,
)
from .parsing import parse_expression

MAX_ITEMS = 1_000_000
"""The longest sequence argument (coordinates, layers, generators) read."""

MAX_DIGITS = 1_000
"""The most decimal digits of an integer argument (a size, an exponent, a prior's numerator or
denominator): results built from larger ones could not be printed (Python converts at most
4,300 digits to a string) nor be meant."""


_DIGITS_BOUND = 10**MAX_DIGITS


def _digits_ok(value: int, name: str) -> None:
    """Refuse |value| ≥ 10^MAX_DIGITS (TooLargeError), before anything formats it."""
    if abs(value) >= _DIGITS_BOUND:
        raise TooLargeError(f"{name} has more than {MAX_DIGITS:,} digits")


def items(
    value: object, name: str, error: type[RLCTError], what: str, limit: int = MAX_ITEMS
) -> list[object]:
    """The entries of an ordered sequence argument (list, tuple, range, numpy array, iterator).

    Strings, bytes, mappings and sets are refused (a string would be read letter by letter, and
    a set or dict has no order that could match the coordinates); so are non-iterables. At most
    ``limit`` entries are read: a longer (or endless) sequence raises TooLargeError before it is
    copied.
    """
    scalar_array = isinstance(value, np.ndarray) and value.ndim == 0
    if (
        isinstance(value, (str, bytes, Mapping, Set))
        or scalar_array
        or not isinstance(value, Iterable)
    ):
        raise error(
            f"{name} must be a sequence of {what} (list, tuple or array), got {value!r} "
            f"({type(value).__name__})"
        )
    size = len(value) if hasattr(value, "__len__") else None
    out = [] if size is not None and size > limit else list(islice(iter(value), limit + 1))
    if len(out) > limit or (size is not None and size > limit):
        count = f"{size:,}" if size is not None else f"more than {limit:,}"
        raise TooLargeError(f"{name} has {count} entries; at most {limit:,} are read")
    return out


def seconds_value(value: object, name: str) -> float:
    """A time limit in seconds: a finite real number ≥ 0 (an int or a float; bools refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (Real, np.integer, np.floating)
    ):
        raise InvalidTypeError(f"{name} must be a number of seconds, got {value!r}")
    try:
        seconds = float(value)
    except OverflowError:  # an int beyond the floats
        seconds = math.inf
    if not math.isfinite(seconds) or seconds < 0:
        raise RLCTError(f"{name} must be a finite number of seconds ≥ 0, got {value!r}")
    return seconds


def flag(value: object, name: str) -> bool:
    """A bool (or numpy bool); 1, "yes" and None are refused rather than read as truth values."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidTypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def exact_rational(
    value: object, name: str, error: type[RLCTError] = InvalidTypeError
) -> sp.Rational:
    """An exact rational number: an int, numpy integer, Fraction or sympy Rational, or a string
    such as "-3/4" read by :func:`rlct.parsing.parse_expression` (never evaluated as code).

    Floats are refused, never rationalised (0.1 is not 1/10); so are bools and everything else.
    ``error`` is the class raised (its message names ``name``).
    """
    if isinstance(value, (bool, np.bool_)):
        raise error(f"{name} = {value!r} is a bool; give an int, Fraction or Rational")
    if isinstance(value, (float, np.floating, sp.Float)):
        raise error(f"{name} = {value!r} is a float; give an int, Fraction or Rational")
    if isinstance(value, str):
        value = parse_expression(value, name, error=error)
    if isinstance(value, sp.Rational):
        return value
    if isinstance(value, (Integral, np.integer)):
        return sp.Integer(int(value))
    if isinstance(value, Rational):  # Fraction, or any other exact rational type
        return sp.Rational(int(value.numerator), int(value.denominator))
    if isinstance(value, sp.Basic):
        raise error(f"{name} = {value} is not a rational number")
    raise error(f"{name} = {value!r} ({type(value).__name__}) is not a rational number")


def exponent_vector(k: Sequence[object], name: str = "k") -> tuple[int, ...]:
    """Validate non-negative integer exponents, not all zero."""
    entries = items(k, name, InvalidExponentError, "non-negative integers")
    if not entries:
        raise InvalidExponentError(f"{name} is empty: at least one coordinate is needed")
    out = []
    for j, kj in enumerate(entries):
        if isinstance(kj, bool) or not (isinstance(kj, Integral) or (isinstance(kj, sp.Integer))):
            raise InvalidExponentError(f"{name}[{j}] = {kj!r} is not an integer")
        _digits_ok(int(kj), f"{name}[{j}]")
        if kj < 0:
            raise InvalidExponentError(f"{name}[{j}] = {kj} is negative; exponents must be ≥ 0")
        out.append(int(kj))
    if all(v == 0 for v in out):
        raise InvalidExponentError(f"{name} is all zero: K ≡ 1 does not vanish, so it has no RLCT")
    return tuple(out)


def prior_vector(h: Sequence[object] | None, d: int, name: str = "h") -> tuple[sp.Rational, ...]:
    """Validate prior exponents h_j > −1 (rational); None means the flat prior h = 0."""
    if h is None:
        return (sp.Integer(0),) * d
    entries = items(h, name, InvalidPriorError, "rational numbers > −1")
    if len(entries) != d:
        raise InvalidPriorError(f"{name} has length {len(entries)} but there are {d} coordinates")
    out = []
    for j, hj in enumerate(entries):
        r = exact_rational(hj, f"{name}[{j}]", InvalidPriorError)
        _digits_ok(int(r.p), f"{name}[{j}]'s numerator")
        _digits_ok(int(r.q), f"{name}[{j}]'s denominator")
        if r <= -1:
            raise InvalidPriorError(
                f"{name}[{j}] = {r} ≤ −1: the prior |w_j|^{r} is not integrable at 0"
            )
        out.append(r)
    return tuple(out)


def count(
    value: object, name: str, minimum: int = 1, error: type[RLCTError] = InvalidShapeError
) -> int:
    """An int (or numpy / sympy integer) ≥ ``minimum``; bools, floats and strings are refused
    with ``error`` (a size's InvalidShapeError by default; a seed's InvalidSeedError)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        raise error(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    _digits_ok(int(value), name)
    if value < minimum:
        kind = {0: "a non-negative integer", 1: "a positive integer"}.get(
            minimum, f"an integer ≥ {minimum}"
        )
        raise error(f"{name} must be {kind}, got {value}")
    return int(value)
