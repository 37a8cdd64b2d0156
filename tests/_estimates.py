"""A stand-in for an estimate: what ``verification.decide`` reads of one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FakeEstimate:
    """What ``decide`` reads of an estimate."""

    mean: float
    stderr: float = 0.01
    ess: float = 1000.0
    rhat: float = 1.0
    nbeta: float = 1000.0
    diagnostics: tuple = ()
