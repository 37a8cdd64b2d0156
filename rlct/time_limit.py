"""A cooperative time limit on the exact layer's search.

Most of :mod:`rlct` answers in milliseconds, but the search for a resolution (eliminations,
coordinate blow-ups, Newton polyhedra of the charts) can grow without a useful bound on some
ideals in eight or more variables. A caller that only wants an answer it can get quickly (an
optional refinement, such as :func:`rlct.quadratic.llc` at a rank drop) runs the search under
:func:`time_limit`; the search calls :func:`check` at its steps and, past the deadline, raises
:class:`OutOfTime`, which is not an :class:`rlct.RLCTError`, so no step mistakes it for a
declined case. Outside a ``time_limit`` block :func:`check` does nothing. A step that is one
call into FLINT (a factorisation) is not interrupted, so the search can end some seconds late.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["OutOfTime", "check", "time_limit"]

_DEADLINE: ContextVar[float | None] = ContextVar("rlct_deadline", default=None)


class OutOfTime(Exception):
    """The exact layer's search ran past the deadline set by :func:`time_limit`."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Run the block with a deadline ``seconds`` from now (an enclosing, earlier one is kept)."""
    deadline = time.monotonic() + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(deadline if outer is None else min(outer, deadline))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check() -> None:
    """Raise :class:`OutOfTime` when a deadline is set and has passed."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise OutOfTime("the exact layer's time limit ran out")
