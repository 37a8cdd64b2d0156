"""Bad or odd inputs to `rlct.quadratic` (issue 20): points, shapes, data sets, theorems.

As in `tests/test_rlct_bad_inputs.py`: each case raises the stated `rlct` error naming the
argument, without hanging; sizes whose exact Jacobian or data set would not fit are refused
before anything is allocated, with a message that says what they would need.
"""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Callable
from decimal import Decimal

import numpy as np
import pytest
import sympy as sp
from _bad_inputs import IR, NF, SD, TL, TY, Add, Bad, S, check, deadline, table
from hypothesis import given
from hypothesis import strategies as st

import rlct
import rlct.quadratic as q

x = sp.Symbol("x", real=True)
W2, V2 = [[1, 0], [0, 1]], [[1, 2]]  # a valid point: d = 2, K = 2, p = 1
X3 = [[1, 2], [3, -1], [0, 5]]


def _quadratic_points(add: Add) -> None:
    """rlct.quadratic: points"""
    jr = q.jacobian_rank
    add("jr W=None", lambda: jr(None, V2), S, r"\bW\b")
    add("jr W 1-D", lambda: jr([1, 2], V2), S, r"\bW\b")
    add("jr W=[[]]", lambda: jr([[]], V2), S, r"\bW\b")
    add("jr W 2x0", lambda: jr(np.zeros((2, 0)), np.zeros((1, 0))), S, r"\bW\b")
    add("jr W ragged", lambda: jr([[1, 2], [3]], V2), S, r"\bW\b")
    add("jr W 3-D", lambda: jr(np.zeros((2, 2, 1)), V2), S, r"\bW\b")
    add("jr W scalar", lambda: jr(5, V2), S, r"\bW\b")
    add("jr W string", lambda: jr("[[1, 0], [0, 1]]", V2), S, r"\bW\b")
    add("jr W str entry", lambda: jr([["a", 0], [0, 1]], V2), TY, r"W\[0, 0\]")
    add("jr W sqrt2", lambda: jr([[sp.sqrt(2), 0], [0, 1]], V2), TY, r"W\[0, 0\]")
    add("jr W complex", lambda: jr([[1j, 0], [0, 1]], V2), TY, r"W\[0, 0\]")
    add("jr W np.complex", lambda: jr(np.eye(2, dtype=complex), V2), TY, r"W\[0, 0\]")
    add("jr W bool", lambda: jr([[True, 0], [0, 1]], V2), TY, r"W\[0, 0\]")
    add("jr W np.bool", lambda: jr(np.eye(2, dtype=bool), V2), TY, r"W\[0, 0\]")
    add("jr W None entry", lambda: jr([[None, 0], [0, 1]], V2), TY, r"W\[0, 0\]")
    add("jr W Decimal", lambda: jr([[Decimal(1), 0], [0, 1]], V2), TY, r"W\[0, 0\]")
    add("jr W symbol", lambda: jr([[x, 0], [0, 1]], V2), TY, r"W\[0, 0\]")
    add("jr W nan", lambda: jr([[1, math.nan], [0, 1]], V2), NF, r"W\[0, 1\]")
    add("jr W np nan", lambda: jr(np.array([[1.0, np.nan], [0, 1]]), V2), NF, r"W\[0, 1\]")
    add("jr W inf", lambda: jr([[1, 0], [-math.inf, 1]], V2), NF, r"W\[1, 0\]")
    add("jr W oo", lambda: jr([[sp.oo, 0], [0, 1]], V2), NF, r"W\[0, 0\]")
    add("jr W sympy nan", lambda: jr([[sp.nan, 0], [0, 1]], V2), NF, r"W\[0, 0\]")
    add("jr W zoo", lambda: jr([[sp.zoo, 0], [0, 1]], V2), NF, r"W\[0, 0\]")
    add("jr V=None", lambda: jr(W2, None), S, r"\bV\b")
    add("jr V mismatch", lambda: jr(W2, [[1, 2, 3]]), S, r"\bV\b")
    add("jr V=[[]]", lambda: jr(W2, [[]]), S, r"\bV\b")
    add("jr V 3-D", lambda: jr(W2, np.ones((1, 2, 1))), S, r"\bV\b")
    add("jr V scalar", lambda: jr(W2, 5), S, r"\bV\b")
    add("jr V nan", lambda: jr(W2, [[1, math.nan]]), NF, r"V\[0, 1\]")
    add("jr V str", lambda: jr(W2, [["1", 2]]), TY, r"V\[0, 0\]")
    add("jr X mismatch", lambda: jr(W2, V2, X=[[1, 2, 3]]), S, r"\bX\b")
    add("jr X 1-D", lambda: jr(W2, V2, X=[1, 2]), S, r"\bX\b")
    add("jr X empty", lambda: jr(W2, V2, X=np.zeros((0, 2))), S, r"\bX\b")
    add("jr X nan", lambda: jr(W2, V2, X=[[1, math.nan]]), NF, r"X\[0, 1\]")
    add("jr X str", lambda: jr(W2, V2, X=[["a", 1]]), TY, r"X\[0, 0\]")
    add("jr b long", lambda: jr(W2, V2, b=[1, 2, 3]), S, r"\bb\b")
    add("jr b 2-D", lambda: jr(W2, V2, b=[[1, 2]]), S, r"\bb\b")
    add("jr b scalar", lambda: jr(W2, V2, b=1), S, r"\bb\b")
    add("jr b nan", lambda: jr(W2, V2, b=[1, math.nan]), NF, r"b\[1\]")
    add("jr b bool", lambda: jr(W2, V2, b=[True, False]), TY, r"b\[0\]")
    add("jr centered='yes'", lambda: jr(W2, V2, X3, centered="yes"), TY, "centered")
    add("jr centered=1", lambda: jr(W2, V2, X3, centered=1), TY, "centered")
    add("jr centered=None", lambda: jr(W2, V2, X3, centered=None), TY, "centered")
    add("jr centered no X", lambda: jr(W2, V2, centered=True), S, "centered")
    big_W, big_V = np.ones((100, 2000), dtype=np.int8), np.ones((1, 2000), dtype=np.int8)
    add("jr huge Jacobian", lambda: jr(big_W, big_V), TL, "Jacobian")
    add("jacobian huge", lambda: q.jacobian(big_W, big_V), TL, "Jacobian")
    add("jacobian W nan", lambda: q.jacobian([[math.nan]], [[1]]), NF, r"W\[0, 0\]")
    ql = q.llc
    add("llc W nan", lambda: ql([[math.nan]], [[1]]), NF, r"W\[0, 0\]")
    add("llc V mismatch", lambda: ql(W2, [[1]]), S, r"\bV\b")
    add("llc b nan", lambda: ql(W2, V2, b=[math.nan, 1]), NF, r"b\[0\]")
    add("llc seed=-1", lambda: ql(W2, V2, seed=-1), SD, "seed")
    add("llc seed=1.5", lambda: ql(W2, V2, seed=1.5), SD, "seed")
    add("llc seed=True", lambda: ql(W2, V2, seed=True), SD, "seed")
    add("llc seed='0'", lambda: ql(W2, V2, seed="0"), SD, "seed")
    add("llc allow_prob='no'", lambda: ql(W2, V2, allow_probabilistic="no"), TY, "allow_prob")
    add("llc allow_prob=None", lambda: ql(W2, V2, allow_probabilistic=None), TY, "allow_prob")
    add("llc huge", lambda: ql(big_W, big_V), TL, "Jacobian")


def _quadratic_shapes(add: Add) -> None:
    """rlct.quadratic: shapes"""
    gr, grc = q.generic_rank, q.generic_rank_certificate
    for bad, label in [
        (0, "0"),
        (-3, "-3"),
        (1.0, "1.0"),
        (True, "True"),
        ("2", "'2'"),
        (None, "None"),
        (math.nan, "nan"),
    ]:
        add(f"gr d={label}", lambda b=bad: gr(b, 1, 1), S, r"\bd\b")
        add(f"gr p={label}", lambda b=bad: gr(1, b, 1), S, r"\bp\b")
        add(f"gr K={label}", lambda b=bad: gr(1, 1, b), S, r"\bK\b")
        add(f"num_parameters d={label}", lambda b=bad: q.num_parameters(b, 1, 1), S, r"\bd\b")
        add(f"check_theorems K={label}", lambda b=bad: q.check_theorems(1, 1, b), S, r"\bK\b")
    add("gr seed=-1", lambda: gr(2, 1, 1, seed=-1), SD, "seed")
    add("gr X mismatch", lambda: gr(2, 1, 1, X=[[1, 2, 3]]), S, r"\bX\b")
    add("gr X nan", lambda: gr(2, 1, 1, X=[[1, math.nan]]), NF, r"X\[0, 1\]")
    add("gr centered no X", lambda: gr(2, 1, 1, centered=True), S, "centered")
    add("gr centered='yes'", lambda: gr(2, 1, 1, X=X3, centered="yes"), TY, "centered")
    add("gr bias='yes'", lambda: gr(2, 1, 1, bias="yes"), TY, "bias")
    add("gr bias=None", lambda: gr(2, 1, 1, bias=None), TY, "bias")
    add("num_parameters bias=2", lambda: q.num_parameters(2, 1, 1, bias=2), TY, "bias")
    add("gr huge d", lambda: gr(10**6, 1, 1), TL, "Jacobian")
    add("gr huge K", lambda: gr(2, 1, 10**12), TL, "Jacobian")
    add("gr huge p", lambda: gr(3, 10**9, 2), TL, "Jacobian")
    add("grc huge", lambda: grc(1000, 10, 1000), TL, "Jacobian")
    add("grc seed=1.5", lambda: grc(2, 1, 1, seed=1.5), SD, "seed")
    add("check_theorems huge", lambda: q.check_theorems(10**6, 1, 10**6), TL, "Jacobian")
    add("check_theorems seed=-1", lambda: q.check_theorems(2, 1, 1, seed=-1), SD, "seed")
    ct = q.check_theorems
    add("check_theorems secs=-1", lambda: ct(2, 1, 1, search_seconds=-1), "RLCTError", "search_s")
    add("check_theorems secs='1'", lambda: ct(2, 1, 1, search_seconds="1"), TY, "search_s")
    add("check_theorems X mismatch", lambda: q.check_theorems(2, 1, 1, X=[[1]]), S, r"\bX\b")
    add("check_theorems centered=2", lambda: q.check_theorems(2, 1, 1, X3, 2), TY, "centered")
    mad = q.modular_addition_data
    for bad, label in [
        (1, "1"),
        (0, "0"),
        (-5, "-5"),
        (2.0, "2.0"),
        (True, "True"),
        ("7", "'7'"),
        (None, "None"),
    ]:
        add(f"modular_addition_data({label})", lambda b=bad: mad(b), S, r"\bp\b")
    add("modular_addition_data(800)", lambda: mad(800), TL, r"\bp\b")
    add("modular_addition_data(1e9)", lambda: mad(10**9), TL, r"\bp\b")


def _quadratic_theorems(add: Add) -> None:
    """rlct.quadratic: theorems"""
    add("theorem_4_1 W nan", lambda: q.theorem_4_1([[math.nan]], [[1]]), NF, r"W\[0, 0\]")
    add("theorem_4_2 V mismatch", lambda: q.theorem_4_2(W2, [[1]]), S, r"\bV\b")
    add("theorem_G_5 X mismatch", lambda: q.theorem_G_5(W2, V2, [[1]]), S, r"\bX\b")
    add("theorem_G_6 centered=1", lambda: q.theorem_G_6(W2, V2, X3, 1), TY, "centered")
    add("theorem_G_1 b=None", lambda: q.theorem_G_1(W2, [1, 2], None), S, r"\bb\b")
    add("theorem_G_1 two outputs", lambda: q.theorem_G_1(W2, [[1, 2], [3, 4]], [1, 1]), S, r"\bV\b")
    add("theorem_G_2 b nan", lambda: q.theorem_G_2(W2, [1, 2], [1, math.nan]), NF, r"b\[1\]")
    add("theorem_5_1 b long", lambda: q.theorem_5_1(W2, V2, b=[1, 2, 3]), S, r"\bb\b")
    add("theorem_5_2 X=None", lambda: q.theorem_5_2(W2, V2, None), S, r"\bX\b")
    add("theorem_5_2 X nan", lambda: q.theorem_5_2(W2, V2, [[1, math.nan]]), NF, r"X\[0, 1\]")
    add("theorem_5_5 W str", lambda: q.theorem_5_5([["a"]], [[1]]), TY, r"W\[0, 0\]")
    c53 = q.corollary_5_3
    add("corollary_5_3 V scalar", lambda: c53(W2, 5), S, r"\bV\b")
    add("corollary_5_3 V=None", lambda: c53(W2, None), S, r"\bV\b")
    add("corollary_5_3 p=1", lambda: c53(W2, V2), S, r"\bV\b")
    add("corollary_5_3 V ragged", lambda: c53(W2, [[1, 2], [3]]), S, r"\bV\b")
    big = np.ones((1600, 1), dtype=np.int8)
    add("corollary_5_3 p=800", lambda: c53(big, np.ones((800, 1))), TL, r"\bp\b")
    TV = q.TheoremValue
    add("TheoremValue kind", lambda: TV("T", "c", "guess", 1, 1, ()), IR, "kind")
    add("TheoremValue value l!=u", lambda: TV("T", "c", "value", 1, 2, ()), IR, "lower")
    add("TheoremValue bounds l>u", lambda: TV("T", "c", "bounds", 2, 1, ()), IR, "lower")
    add("TheoremValue lower=0.5", lambda: TV("T", "c", "bounds", 0.5, 1, ()), TY, "lower")
    add("TheoremValue upper=nan", lambda: TV("T", "c", "bounds", 0, math.nan, ()), TY, "upper")
    add("TheoremValue lower=str", lambda: TV("T", "c", "bounds", "x", 1, ()), TY, "lower")
    add("TheoremValue hypotheses", lambda: TV("T", "c", "value", 1, 1, ("h",)), TY, "hypotheses")


CASES = table(_quadratic_points, _quadratic_shapes, _quadratic_theorems)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Bad):
    check(case)


@pytest.mark.parametrize(
    "call",
    [
        lambda: q.modular_addition_data(10**9),
        lambda: q.generic_rank(10**6, 1, 1),
        lambda: q.check_theorems(10**6, 1, 10**6),
        lambda: rlct.deep_linear_network(range(1, 10**9), 0),
        lambda: rlct.normal_crossing(range(1, 10**9)),
    ],
    ids=["modular_addition_data", "generic_rank", "check_theorems", "dln", "normal_crossing"],
)
def test_huge_sizes_fail_before_allocating(call: Callable[[], object]):
    tracemalloc.start()
    try:
        with deadline(20), pytest.raises(rlct.TooLargeError, match=r"would need|at most"):
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20  # 10 MiB


def test_oversized_arrays_are_refused_from_their_shapes():
    """The size check reads the shapes of array inputs before any entry is converted: a 10⁴ × 10⁴
    W took 9 s and 4 GB to refuse, a 10⁷-row X 71 s, and check_theorems computed for 75 s before
    refusing the biased Jacobian of 800,000 samples (G.1/G.2)."""
    big_w, big_v = np.zeros((10**4, 10**4)), np.zeros((1, 10**4))  # untouched pages
    long_x, tall_x = np.zeros((10**7, 2)), np.zeros((800_000, 1))
    calls = (
        lambda: q.jacobian_rank(big_w, big_v),
        lambda: q.llc(big_w, [[1.0] * 10**4]),
        lambda: q.generic_rank(2, 1, 1, long_x),
        lambda: q.check_theorems(1, 1, 2, tall_x),
    )
    for call in calls:
        tracemalloc.start()
        try:
            with deadline(20), pytest.raises(rlct.TooLargeError, match="would need"):
                call()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 10 * 2**20  # 10 MiB


@pytest.mark.skipif(
    np.finfo(np.longdouble).nmant < 61, reason="long double is no wider than 2⁻⁶⁰ here"
)
def test_long_doubles_are_taken_at_their_exact_value():
    """1 + 2⁻⁶⁰ in long double is not 1: the neuron is not repeated, rank 3 and λ = 3/2 exact,
    as the exact point gives (it was rounded to float64: rank 2, bounds)."""
    from fractions import Fraction

    e = np.longdouble(2) ** -60
    W = np.array([[1, 1], [1, 1 + e]], dtype=np.longdouble)
    exact = [[1, 1], [1, 1 + Fraction(1, 2**60)]]
    assert q.jacobian_rank(W, [[1, 1]]) == q.jacobian_rank(exact, [[1, 1]]) == 3
    r = q.llc(W, [[1, 1]])
    assert (r.exact, r.lam) == (True, sp.Rational(3, 2))


def test_the_size_messages_say_what_would_be_needed():
    with pytest.raises(rlct.TooLargeError, match=r"p = 800.*640,000 × 1,600.*GiB"):
        q.modular_addition_data(800)
    with pytest.raises(rlct.TooLargeError, match=r"500,500 × 1,001,000"):
        q.generic_rank(1000, 1, 1000)


bad_counts = st.one_of(
    st.integers(max_value=0),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=5),
    st.none(),
    st.fractions().filter(lambda f: f.denominator != 1),
    st.complex_numbers(),
    st.lists(st.integers(1, 3), max_size=2),
)


@given(bad_counts, st.integers(0, 2))
def test_bad_counts_to_quadratic_shapes(bad, position):
    args = [2, 1, 2]
    args[position] = bad
    name = ["d", "p", "K"][position]
    for fn in (q.generic_rank, q.num_parameters, q.check_theorems):
        with pytest.raises(rlct.InvalidShapeError, match=rf"^{name}\b"):
            fn(*args)


@given(bad_counts)
def test_bad_moduli(bad):
    with pytest.raises(rlct.InvalidShapeError, match=r"^p\b"):
        q.modular_addition_data(bad)


@given(
    st.integers(1, 3),
    st.integers(1, 3),
    st.data(),
    st.one_of(
        st.floats(allow_nan=False, allow_infinity=False).map(lambda v: ("ok", v)),
        st.sampled_from([math.nan, math.inf, -math.inf, sp.nan, sp.oo, sp.zoo]).map(
            lambda v: ("NonFiniteError", v)
        ),
        st.sampled_from(["1", None, 1j, True, np.True_, sp.sqrt(2), x, [1]]).map(
            lambda v: ("InvalidTypeError", v)
        ),
    ),
)
def test_one_bad_entry_in_a_quadratic_point(d, K, data, entry):
    kind, value = entry
    W = np.ones((d, K), dtype=object)
    i, j = data.draw(st.integers(0, d - 1)), data.draw(st.integers(0, K - 1))
    W[i, j] = value
    if kind == "ok":  # floats are exact binary fractions: accepted
        assert 0 <= q.jacobian_rank(W, np.ones((1, K), dtype=int)) <= q.num_parameters(d, 1, K)
        return
    error = rlct.NonFiniteError if kind == "NonFiniteError" else rlct.InvalidShapeError
    if kind == "InvalidTypeError":
        error = (rlct.InvalidTypeError, rlct.InvalidShapeError)  # [1] makes W ragged
    with pytest.raises(error, match=r"^W"):
        q.jacobian_rank(W, np.ones((1, K), dtype=int))


def test_float_points_say_they_are_read_at_their_binary_values():
    """0.3 = 3·0.1 in decimals, not in binary: the repeated neuron the user may mean is not one,
    and the result says how the floats were read; the same point in integers does not."""
    with_floats = q.llc([[0.1, 0.3], [0.7, 2.1]], [[1, 1]])
    exact = q.llc([[1, 3], [7, 21]], [[1, 1]])
    note = "exact binary values"
    assert any(note in c.statement and c.status for c in with_floats.conditions)
    assert not any(note in c.statement for c in exact.conditions)
    # rank 3 in binary (λ = 3/2 by the ranks); 2 in the decimals meant, where w2 = 3·w1 and the
    # map's ideal gives 5/4 (the parallel features of tests/test_quadratic.py)
    assert with_floats.exact and with_floats.lam == sp.Rational(3, 2)
    assert exact.exact and exact.lam == sp.Rational(5, 4)
