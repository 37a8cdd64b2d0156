"""Shared by the bad-input tests of `rlct`: a table row, the check, and a hang detector."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

import rlct
import rlct.errors

# The expected errors, by name (rlct.errors.<name>).
E, P = "InvalidExponentError", "InvalidPriorError"
N, NN = "NotPolynomialError", "NotNonNegativeError"
S, NF = "InvalidShapeError", "NonFiniteError"
TY, TL, IR = "InvalidTypeError", "TooLargeError", "InvalidResultError"
SD = "InvalidSeedError"


@dataclass(frozen=True)
class Bad:
    """A call that must raise ``rlct.errors.<error>`` with a message matching ``names``."""

    id: str
    call: Callable[[], object]
    error: str
    names: str


Add = Callable[[str, Callable[[], object], str, str], None]


def table(*sections: Callable[[Add], None]) -> list[Bad]:
    """The rows that the ``sections`` add, each section a function of ``add``."""
    rows: list[Bad] = []
    for section in sections:
        section(lambda id, call, error, names: rows.append(Bad(id, call, error, names)))
    ids = [row.id for row in rows]
    assert len(ids) == len(set(ids)), "table ids must be unique"
    return rows


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in the main thread after ``seconds``: a hang detector, not a speed
    goal (every case fails in milliseconds when it fails as intended)."""

    def fire(signum: int, frame: object) -> None:
        raise TimeoutError(f"no answer within {seconds} s: the call hangs")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def check(case: Bad) -> None:
    """The call raises the stated rlct error, naming the argument, within 20 s."""
    error = getattr(rlct.errors, case.error)
    assert issubclass(error, rlct.RLCTError)
    with deadline(20), pytest.raises(error, match=case.names):
        case.call()
