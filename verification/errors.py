"""Errors raised by :mod:`verification` on bad input; each message names the argument."""

from __future__ import annotations

__all__ = ["InvalidArgumentError", "InvalidTypeError", "VerificationError"]


class VerificationError(Exception):
    """Base class of every error raised by :mod:`verification`."""


class InvalidArgumentError(VerificationError, ValueError):
    """An argument is out of range or malformed (an empty size range, a NaN threshold, ...)."""


class InvalidTypeError(InvalidArgumentError, TypeError):
    """An argument has the wrong type (a float where an int is needed, not a ``CrossCheck``...)."""
