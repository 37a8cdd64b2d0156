"""Small mode (CPU, minutes: what the tests run) or full mode (``FULL=1``: the papers' sizes, a GPU).

The switch is read once, at the first call of ``mode()``; claim functions take their sizes from the
returned ``Mode`` so that a notebook states which mode produced its numbers.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import torch

from .records import Record


@dataclass(frozen=True)
class Mode(Record):
    """``full``: the papers' sizes; ``device``: where full-mode models and chains live."""

    full: bool
    device: str

    @property
    def name(self) -> str:
        return "full" if self.full else "small"


def parse_full(value: str | None) -> bool:
    """``FULL`` read as a flag: unset, "" or "0" is small mode, "1" full; anything else an error."""
    if value in (None, "", "0"):
        return False
    if value == "1":
        return True
    raise ValueError(f"FULL must be 0 or 1, not {value!r}")


@functools.cache
def mode() -> Mode:
    """The mode of this process, from the environment variable ``FULL`` (read once)."""
    full = parse_full(os.environ.get("FULL"))
    device = "cuda" if full and torch.cuda.is_available() else "cpu"
    return Mode(full, device)
