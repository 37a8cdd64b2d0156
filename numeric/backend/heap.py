"""Giving freed heap memory back to the system during long CPU runs (glibc only).

An eager SGLD step allocates and frees temporaries of the minibatch's size (megabytes at a
batch of 10⁴) between the small tensors the run keeps (its per-step records). glibc's allocator
keeps the freed blocks resident instead of returning or reusing them: a full-batch estimate on a
436-parameter deep linear network at n = 10⁴ grew by 0.1 GB/s to 24 GB and was killed, while
``malloc_trim(0)`` once a second held it at 0.55 GB. ``HeapTrimmer`` does that, at most once per
``interval`` seconds (it only frees memory, so the numbers of a run do not depend on when).
Elsewhere (no glibc: macOS, musl, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time
from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None


MALLOC_TRIM = _malloc_trim()


class HeapTrimmer:
    """``trim()`` returns the freed heap to the system if ``interval`` seconds have passed since
    the last time it did (``clock`` and ``release`` are injectable for tests)."""

    def __init__(
        self,
        interval: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        release: Callable[[int], int] | None = MALLOC_TRIM,
    ) -> None:
        self.interval, self.clock, self.release = interval, clock, release
        self.last = clock()

    def trim(self) -> bool:
        """Release now if due; whether it did."""
        if self.release is None:
            return False
        now = self.clock()
        if now - self.last < self.interval:
            return False
        self.release(0)
        self.last = now
        return True
