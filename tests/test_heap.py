"""numeric.backend.heap: the freed heap is handed back at most once per interval."""

from numeric.backend.heap import HeapTrimmer


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_trims_at_most_once_per_interval() -> None:
    clock, calls = FakeClock(), []
    trimmer = HeapTrimmer(2.0, clock=clock, release=lambda pad: calls.append(pad) or 1)
    clock.now = 1.9
    assert not trimmer.trim()
    clock.now = 2.0
    assert trimmer.trim()
    clock.now = 3.5
    assert not trimmer.trim()
    clock.now = 4.1
    assert trimmer.trim()
    assert calls == [0, 0]


def test_does_nothing_without_glibc() -> None:
    clock = FakeClock()
    trimmer = HeapTrimmer(0.0, clock=clock, release=None)
    clock.now = 10.0
    assert not trimmer.trim()
