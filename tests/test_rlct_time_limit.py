"""`rlct.time_limit`: the exact layer's cooperative deadline."""

from __future__ import annotations

import time

import pytest

from rlct import RLCTError
from rlct.time_limit import OutOfTime, check, time_limit


def test_no_deadline_outside_a_block():
    check()  # nothing set: returns
    with time_limit(60):
        check()  # well before the deadline
    check()  # the block's deadline is gone again


def test_past_the_deadline_check_raises_and_is_not_an_rlct_error():
    with time_limit(0.0):
        time.sleep(0.001)
        with pytest.raises(OutOfTime):
            check()
    assert not issubclass(OutOfTime, RLCTError)  # no step of the search takes it for a decline


def test_an_inner_block_keeps_the_earlier_outer_deadline():
    with time_limit(0.0):
        time.sleep(0.001)
        with time_limit(60), pytest.raises(OutOfTime):
            check()
