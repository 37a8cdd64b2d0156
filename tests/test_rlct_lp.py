"""rlct.algebra.lp: the exact simplex against closed forms, a programme that cycles without an
anti-cycling rule, and scipy's floating-point optimum."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from rlct.algebra.lp import lp_min
from rlct.errors import InvalidShapeError, RLCTError


def test_a_small_programme_and_its_vertex() -> None:
    """min x + 2y s.t. x + y − s = 1 (x + y ≥ 1), x, y, s ≥ 0: 1 at (1, 0, 0)."""
    value, x = lp_min([1, 2, 0], [[1, 1, -1]], [1])
    assert value == 1 and x == (1, 0, 0)
    assert all(isinstance(v, Fraction) for v in x)


def test_beales_programme_ends_at_its_optimum() -> None:
    """Beale's example (1955), on which the simplex method with the steepest-cost rule and the
    first tied row cycles forever: Bland's rule reaches the optimum −5/4 at x₄ = x₆ = 1."""
    c = [0, 0, 0, Fraction(-3, 4), 20, Fraction(-1, 2), 6]
    a = [
        [1, 0, 0, Fraction(1, 4), -8, -1, 9],
        [0, 1, 0, Fraction(1, 2), -12, Fraction(-1, 2), 3],
        [0, 0, 1, 0, 0, 1, 0],
    ]
    value, x = lp_min(c, a, [0, 0, 1])
    assert value == Fraction(-5, 4)
    assert x[3] == 1 and x[5] == 1 and x[0] == Fraction(3, 4)


def test_infeasible_redundant_and_unbounded_programmes() -> None:
    assert lp_min([1, 1], [[1, 1], [1, 1]], [1, 2]) is None  # x + y = 1 and = 2
    assert lp_min([1, 1], [[1, -1]], [-1]) == (1, (0, 1))  # a negative right-hand side
    value, x = lp_min([1, 0], [[1, 1], [2, 2]], [1, 2])  # the second row repeats the first
    assert value == 0 and x == (0, 1)
    with pytest.raises(RLCTError, match="unbounded"):
        lp_min([-1, 0], [[1, -1]], [0])
    assert lp_min([1, 2], [], []) == (0, (0, 0))  # no equation: the origin
    with pytest.raises(RLCTError, match="unbounded"):
        lp_min([-1, 2], [], [])
    with pytest.raises(InvalidShapeError, match="2 entries"):
        lp_min([1, 1], [[1]], [1])


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 3).flatmap(
        lambda m: st.tuples(
            st.lists(st.integers(0, 3), min_size=4, max_size=4),
            st.lists(st.lists(st.integers(-2, 2), min_size=4, max_size=4), min_size=m, max_size=m),
            st.lists(st.integers(-3, 3), min_size=m, max_size=m),
        )
    )
)
def test_the_optimum_is_scipys(problem) -> None:
    """Random programmes in four variables with costs ≥ 0 (so bounded below): feasible exactly
    where scipy's HiGHS finds them feasible, with the same optimal value, and the point returned
    satisfies every equation exactly."""
    c, a, b = problem
    got = lp_min(c, a, b)
    ref = linprog(c, A_eq=np.array(a, dtype=float), b_eq=b, bounds=[(0, None)] * 4, method="highs")
    assert (got is not None) == (ref.status == 0)
    if got is None:
        return
    value, x = got
    assert float(value) == pytest.approx(ref.fun, abs=1e-9)
    assert all(v >= 0 for v in x)
    assert all(sum(r * v for r, v in zip(row, x)) == rhs for row, rhs in zip(a, b))
