"""Bad or odd inputs to every public `rlct` function outside `rlct.quadratic` (issue 20).

Each case must raise an `rlct` error (a subclass of :class:`rlct.RLCTError`) of the stated class,
whose message names the argument, without hanging. The table lists explicit cases
(`tests/test_rlct_bad_inputs_quadratic.py` has those of `rlct.quadratic`); the hypothesis tests
below draw more of each kind. Measured on the tables of both files: 403 inputs, 141 answered
wrongly before these tests (a crash with an unrelated error, a hang, a plausible answer to
nonsense, or a message not naming the argument), none after.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from _bad_inputs import IR, NF, NN, TL, TY, Add, Bad, E, N, P, S, check, deadline, table
from hypothesis import assume, given
from hypothesis import strategies as st

import rlct
from rlct import RLCT, Condition
from rlct.algebra import ranks
from rlct.newton.polyhedron import NewtonPolyhedron

x, y, z = sp.symbols("x y z", real=True)
R = sp.Rational
T = sp.Integer(1)
PAYLOAD = "__import__('os').system('true') and 0"
nc, fp, fi = rlct.normal_crossing, rlct.from_polynomial, rlct.from_ideal
rrr, dln = rlct.reduced_rank_regression, rlct.deep_linear_network


def _normal_crossing(add: Add) -> None:
    """normal_crossing(k, h)"""
    add("nc k=None", lambda: nc(None), E, r"\bk\b")
    add("nc k=5", lambda: nc(5), E, r"\bk\b")
    add("nc k='12'", lambda: nc("12"), E, r"\bk\b")
    add("nc k=dict", lambda: nc({0: 1}), E, r"\bk\b")
    add("nc k=set", lambda: nc({1, 2}), E, r"\bk\b")
    add("nc k=[]", lambda: nc([]), E, r"\bk\b")
    add("nc k=[0,0]", lambda: nc([0, 0]), E, r"\bk\b")
    add("nc k=[1,-1]", lambda: nc([1, -1]), E, r"k\[1\]")
    add("nc k=[1.0]", lambda: nc([1.0]), E, r"k\[0\]")
    add("nc k=[0.5]", lambda: nc([0.5]), E, r"k\[0\]")
    add("nc k=[nan]", lambda: nc([math.nan]), E, r"k\[0\]")
    add("nc k=[inf]", lambda: nc([math.inf]), E, r"k\[0\]")
    add("nc k=[True]", lambda: nc([True]), E, r"k\[0\]")
    add("nc k=[np.True_]", lambda: nc([np.True_]), E, r"k\[0\]")
    add("nc k=[Fraction 1/2]", lambda: nc([Fraction(1, 2)]), E, r"k\[0\]")
    add("nc k=[Rational 1/2]", lambda: nc([R(1, 2)]), E, r"k\[0\]")
    add("nc k=['1']", lambda: nc(["1"]), E, r"k\[0\]")
    add("nc k=[None]", lambda: nc([None]), E, r"k\[0\]")
    add("nc k=[1j]", lambda: nc([1j]), E, r"k\[0\]")
    add("nc k=2-D", lambda: nc(np.array([[1, 2]])), E, r"k\[0\]")
    add("nc k=range(1e9)", lambda: nc(range(1, 10**9)), "TooLargeError", r"\bk\b")
    add("nc h=5", lambda: nc([1], 5), P, r"\bh\b")
    add("nc h='12'", lambda: nc([1, 1], "12"), P, r"\bh\b")
    add("nc h=dict", lambda: nc([1], {0: 1}), P, r"\bh\b")
    add("nc h short", lambda: nc([1, 1], [0]), P, r"\bh\b")
    add("nc h long", lambda: nc([1], [0, 0]), P, r"\bh\b")
    add("nc h=[-1]", lambda: nc([1], [-1]), P, r"h\[0\]")
    add("nc h=[-2]", lambda: nc([1], [-2]), P, r"h\[0\]")
    add("nc h=[0.5]", lambda: nc([1], [0.5]), P, r"h\[0\]")
    add("nc h=[nan]", lambda: nc([1], [math.nan]), P, r"h\[0\]")
    add("nc h=[inf]", lambda: nc([1], [math.inf]), P, r"h\[0\]")
    add("nc h=[True]", lambda: nc([1], [True]), P, r"h\[0\]")
    add("nc h=[sqrt 2]", lambda: nc([1], [sp.sqrt(2)]), P, r"h\[0\]")
    add("nc h=[oo]", lambda: nc([1], [sp.oo]), P, r"h\[0\]")
    add("nc h=[nan sympy]", lambda: nc([1], [sp.nan]), P, r"h\[0\]")
    add("nc h=[1j]", lambda: nc([1], [1j]), P, r"h\[0\]")
    add("nc h=[None]", lambda: nc([1], [None]), P, r"h\[0\]")
    add("nc h=[[0]]", lambda: nc([1], [[0]]), P, r"h\[0\]")
    add("nc h=[x]", lambda: nc([1], [x]), P, r"h\[0\]")
    add("nc h=['x']", lambda: nc([1], ["x"]), P, r"h\[0\]")
    add("nc h=['0.5']", lambda: nc([1], ["0.5"]), P, r"h\[0\]")
    add("nc h=[payload]", lambda: nc([1], [PAYLOAD]), P, r"h\[0\]")
    add("nc h=[Decimal]", lambda: nc([1], [Decimal("0.5")]), P, r"h\[0\]")


def _polynomials(add: Add) -> None:
    """from_polynomial(K, variables, prior_exponents) and newton_analysis"""
    add("fp sin", lambda: fp(sp.sin(x) ** 2, (x,)), N, r"\bK\b")
    add("fp 1/x", lambda: fp(1 / x, (x,)), N, r"\bK\b")
    add("fp x**2/y", lambda: fp(x**2 / y, (x, y)), N, r"\bK\b")
    add("fp sqrt x", lambda: fp(sp.sqrt(x) + y**2, (x, y)), N, r"\bK\b")
    add("fp Abs", lambda: fp(sp.Abs(x) + y**2, (x, y)), N, r"\bK\b")
    add("fp exp", lambda: fp(sp.exp(x) - 1, (x,)), N, r"\bK\b")
    add("fp f(x)", lambda: fp(sp.Function("f")(x), (x,)), N, r"\bK\b")
    add("fp x**y", lambda: fp(x**y, (x, y)), N, r"\bK\b")
    add("fp extra symbol", lambda: fp(x**2 + z**2, (x, y)), N, r"\bK\b")
    add("fp 0.5*x**2", lambda: fp(0.5 * x**2, (x,)), N, r"\bK\b")
    add("fp K=0.5", lambda: fp(0.5, (x,)), N, r"\bK\b")
    add("fp K=np.float64", lambda: fp(np.float64(0.5), (x,)), N, r"\bK\b")
    add("fp pi", lambda: fp(sp.pi * x**2, (x,)), N, r"\bK\b")
    add("fp I", lambda: fp(sp.I * x**2, (x,)), N, r"\bK\b")
    add("fp sqrt 2", lambda: fp(sp.sqrt(2) * x**2, (x,)), N, r"\bK\b")
    add("fp nan", lambda: fp(x**2 + sp.nan, (x,)), N, r"\bK\b")
    add("fp oo", lambda: fp(x**2 + sp.oo, (x,)), N, r"\bK\b")
    add("fp zoo", lambda: fp(x**2 + sp.zoo, (x,)), N, r"\bK\b")
    add("fp K=0", lambda: fp(0, (x,)), NN, r"\bK\b")
    add("fp K=x-x", lambda: fp(x - x, (x,)), NN, r"\bK\b")
    add("fp K(0)=1", lambda: fp(x**2 + 1, (x,)), NN, r"\bK\b")
    add("fp K=1", lambda: fp(1, (x,)), NN, r"\bK\b")
    add("fp odd", lambda: fp(x**3 + y**2, (x, y)), NN, r"\bK\b")
    add("fp negative", lambda: fp(-(x**2), (x,)), NN, r"\bK\b")
    add("fp indefinite", lambda: fp(x**2 - 3 * x * y + y**2, (x, y)), NN, r"\bK\b")
    add("fp list", lambda: fp([x**2], (x,)), TY, r"\bK\b")
    add("fp None", lambda: fp(None, (x,)), TY, r"\bK\b")
    add("fp True", lambda: fp(True, (x,)), TY, r"\bK\b")
    add("fp bytes", lambda: fp(b"x**2", (x,)), TY, r"\bK\b")
    add("fp Matrix", lambda: fp(sp.Matrix([x**2]), (x,)), TY, r"\bK\b")
    add("fp Eq", lambda: fp(sp.Eq(x**2, 0), (x,)), TY, r"\bK\b")
    add("fp dict", lambda: fp({x: 2}, (x,)), TY, r"\bK\b")
    add("fp string payload", lambda: fp(PAYLOAD, (x,)), N, r"\bK\b")
    add("fp string float", lambda: fp("0.5*x**2", (x,)), N, r"\bK\b")
    add("fp string unknown name", lambda: fp("x**2 + t**2", (x,)), N, r"\bK\b")
    add("fp string syntax", lambda: fp("x**2 +", (x,)), N, r"\bK\b")
    add("fp huge power", lambda: fp(sp.Pow(x, 10**10, evaluate=False), (x,)), TL, r"\bK\b")
    add("fp huge string power", lambda: fp("x**10**10", (x,)), TL, r"\bK\b")
    add("fp huge expansion", lambda: fp((x + y + 1) ** 400 - 1, (x, y)), TL, r"\bK\b")
    xs40 = sp.symbols("w0:40", real=True)
    chain = sum((xs40[i] * xs40[i + 1]) ** 2 for i in range(39))  # no blocks: one path of 40
    add("fp 40-variable chain", lambda: fp(chain, xs40), TL, r"\bK\b")
    add("fp vars=x", lambda: fp(x**2, x), N, "variables")
    add("fp vars=None", lambda: fp(x**2, None), N, "variables")
    add("fp vars='x'", lambda: fp(x**2, "x"), N, "variables")
    add("fp vars=()", lambda: fp(x**2, ()), N, "variables")
    add("fp vars=(x,x)", lambda: fp(x**2, (x, x)), N, "variables")
    add("fp vars=(x,1)", lambda: fp(x**2, (x, 1)), N, "variables")
    add("fp vars=(x,x+y)", lambda: fp(x**2, (x, x + y)), N, "variables")
    add("fp vars=set", lambda: fp(x**2 + y**2, {x, y}), N, "variables")
    add("fp prior=5", lambda: fp(x**2, (x,), 5), P, "prior_exponents")
    add("fp prior short", lambda: fp(x**2 + y**2, (x, y), [0]), P, "prior_exponents")
    add("fp prior=[-1]", lambda: fp(x**2, (x,), [-1]), P, r"prior_exponents\[0\]")
    add("fp prior=[0.5]", lambda: fp(x**2, (x,), [0.5]), P, r"prior_exponents\[0\]")
    add("fp prior=[payload]", lambda: fp(x**2, (x,), [PAYLOAD]), P, r"prior_exponents\[0\]")
    add("na sin", lambda: rlct.newton_analysis(sp.sin(x), (x,)), N, r"\bK\b")
    add("na None", lambda: rlct.newton_analysis(x**2, None), N, "variables")


def _ideals(add: Add) -> None:
    """from_ideal(generators, variables, prior_exponents) and ideal_analysis"""
    add("fi gens=expr", lambda: fi(x * y, (x, y)), TY, "generators")
    add("fi gens=str", lambda: fi("x*y", (x, y)), TY, "generators")
    add("fi gens=None", lambda: fi(None, (x, y)), TY, "generators")
    add("fi gens=5", lambda: fi(5, (x, y)), TY, "generators")
    add("fi gens=dict", lambda: fi({x: 1}, (x,)), TY, "generators")
    add("fi gens=set", lambda: fi({x, y**2}, (x, y)), TY, "generators")
    add("fi gens=[]", lambda: fi([], (x,)), N, "generator")
    add("fi gens=[0]", lambda: fi([0], (x,)), NN, "generator")
    add("fi f(0)!=0", lambda: fi([x + 1], (x,)), NN, r"f_1")
    add("fi sin", lambda: fi([x, sp.sin(y)], (x, y)), N, r"f_2")
    add("fi 1/x", lambda: fi([1 / x], (x,)), N, r"f_1")
    add("fi float", lambda: fi([0.5 * x], (x,)), N, r"f_1")
    add("fi extra symbol", lambda: fi([x, z], (x, y)), N, r"f_2")
    add("fi [[x]]", lambda: fi([[x]], (x,)), TY, r"f_1")
    add("fi [None]", lambda: fi([None], (x,)), TY, r"f_1")
    add("fi [True]", lambda: fi([True], (x,)), TY, r"f_1")
    add("fi payload", lambda: fi([x, PAYLOAD], (x,)), N, r"f_2")
    add("fi huge", lambda: fi([sp.Pow(x, 10**10, evaluate=False)], (x,)), TL, r"f_1")
    add("fi vars=x", lambda: fi([x], x), N, "variables")
    add("fi vars=None", lambda: fi([x], None), N, "variables")
    add("fi prior=[-1]", lambda: fi([x], (x,), [-1]), P, r"prior_exponents\[0\]")
    add("ia gens=expr", lambda: rlct.ideal_analysis(x, (x,)), TY, "generators")


def _closed_forms(add: Add) -> None:
    """reduced_rank_regression(M, N, H, r), regular_value, deep_linear_network, dln_active_set"""
    for bad, label in [
        (0, "0"),
        (-1, "-1"),
        (2.0, "2.0"),
        (math.nan, "nan"),
        (math.inf, "inf"),
        (True, "True"),
        (np.True_, "np.True_"),
        ("2", "'2'"),
        (None, "None"),
        (Fraction(2), "Fraction(2)"),
        (R(3, 2), "3/2"),
        (np.float64(2), "np.float64"),
        (2j, "2j"),
    ]:
        add(f"rrr M={label}", lambda b=bad: rrr(b, 2, 2, 1), S, r"\bM\b")
        add(f"rrr H={label}", lambda b=bad: rrr(2, 3, b, 1), S, r"\bH\b")
        add(f"regular_value {label}", lambda b=bad: rlct.regular_value(b), S, "num_params")
        add(f"dln widths[1]={label}", lambda b=bad: dln([3, b, 4], 1), S, r"widths\[1\]")
        if label not in ("0",):
            add(f"rrr r={label}", lambda b=bad: rrr(2, 3, 4, b), S, r"\br\b")
            add(f"dln r={label}", lambda b=bad: dln([3, 2, 4], b), S, r"\br\b")
    add("rrr r > min", lambda: rrr(2, 3, 4, 3), S, r"\br\b")
    add("dln r > min", lambda: dln([3, 2, 4], 3), S, r"\br\b")
    add("dln widths=[]", lambda: dln([], 0), S, "widths")
    add("dln widths=[3]", lambda: dln([3], 0), S, "widths")
    add("dln widths=5", lambda: dln(5, 0), S, "widths")
    add("dln widths=None", lambda: dln(None, 0), S, "widths")
    add("dln widths='34'", lambda: dln("34", 1), S, "widths")
    add("dln widths=dict", lambda: dln({3: 1, 4: 1}, 1), S, "widths")
    add("dln widths=set", lambda: dln({3, 4}, 1), S, "widths")
    add("dln widths=range(1e9)", lambda: dln(range(1, 10**9), 0), TL, "widths")
    add("dln_active_set widths=5", lambda: rlct.dln_active_set(5, 0), S, "widths")
    add("dln_active_set r>min", lambda: rlct.dln_active_set([3, 2, 4], 5), S, r"\br\b")


def _results(add: Add) -> None:
    """results: RLCT and Condition"""
    ok = Condition("c", True)
    add("RLCT lam=0.5", lambda: RLCT.exact_value(0.5, 1, "m"), TY, "lam")
    add("RLCT lam=nan", lambda: RLCT.exact_value(math.nan, 1, "m"), TY, "lam")
    add("RLCT lam=sympy nan", lambda: RLCT.exact_value(sp.nan, 1, "m"), TY, "lam")
    add("RLCT lam=oo", lambda: RLCT.exact_value(sp.oo, 1, "m"), TY, "lam")
    add("RLCT lam=sqrt2", lambda: RLCT.exact_value(sp.sqrt(2), 1, "m"), TY, "lam")
    add("RLCT lam=-1", lambda: RLCT.exact_value(-1, 1, "m"), IR, "lam")
    add("RLCT lam=payload", lambda: RLCT.exact_value(PAYLOAD, 1, "m"), TY, "lam")
    add("RLCT mult=0", lambda: RLCT.exact_value(T, 0, "m"), TY, "mult")
    add("RLCT mult=1.0", lambda: RLCT.exact_value(T, 1.0, "m"), TY, "mult")
    add("RLCT mult=True", lambda: RLCT.exact_value(T, True, "m"), TY, "mult")
    add("RLCT mult='1'", lambda: RLCT.exact_value(T, "1", "m"), TY, "mult")
    add("RLCT method=5", lambda: RLCT.exact_value(T, 1, 5), TY, "method")
    add("RLCT conditions str", lambda: RLCT.exact_value(T, 1, "m", ("c",)), TY, "conditions")
    add("RLCT conditions=Cond", lambda: RLCT.exact_value(T, 1, "m", ok), TY, "conditions")
    add("RLCT unproven", lambda: RLCT.exact_value(T, 1, "m", (Condition("c", None),)), IR, "cond")
    add("RLCT bounds l>u", lambda: RLCT.bounds(1, 0, "m"), IR, "lower")
    add("RLCT bounds lower<0", lambda: RLCT.bounds(-1, 1, "m"), IR, "lower")
    add("RLCT bounds upper=0.5", lambda: RLCT.bounds(0, 0.5, "m"), TY, "upper")
    add("RLCT exact='yes'", lambda: RLCT(T, 1, "yes", T, T, "m"), TY, "exact")
    add("RLCT exact, lam=None", lambda: RLCT(None, 1, True, T, T, "m"), IR, "lam")
    add("RLCT exact, lam!=lower", lambda: RLCT(T, 1, True, 0, T, "m"), IR, "lam")
    add("RLCT inexact, lam, l<u", lambda: RLCT(T, None, False, 0, 2, "m"), IR, "lam")
    add("Condition statement=5", lambda: Condition(5, True), TY, "statement")
    add("Condition status=1", lambda: Condition("c", 1), TY, "status")
    add("Condition status='yes'", lambda: Condition("c", "yes"), TY, "status")


def _polyhedron_and_ranks(add: Add) -> None:
    """rlct.newton.polyhedron.NewtonPolyhedron and rlct.algebra.ranks"""
    NP = NewtonPolyhedron
    add("NP float exponent", lambda: NP([[1.5, 2]]), E, "exponent")
    add("NP bool exponent", lambda: NP([[True, 2]]), E, "exponent")
    add("NP str exponent", lambda: NP([["1", 2]]), E, "exponent")
    add("NP nan exponent", lambda: NP([[math.nan, 2]]), E, "exponent")
    add("NP negative", lambda: NP([[-1, 2]]), E, "exponent")
    add("NP empty", lambda: NP([]), E, "exponent")
    add("NP [[]]", lambda: NP([[]]), E, "exponent")
    add("NP ragged", lambda: NP([[1, 2], [1]]), E, "exponent")
    add("NP zero vector", lambda: NP([[0, 0], [2, 0]]), E, "exponent")
    add("NP scalar", lambda: NP(5), E, "exponent")
    add("NP [5]", lambda: NP([5]), E, "exponent")
    add("NP 40-D faces", lambda: NP((2 * np.eye(40, dtype=int)).tolist()).compact_faces, TL, "face")
    add("NP distance tau=0", lambda: NP([[2, 0], [0, 2]]).distance([0, 1]), P, "tau")
    add("NP distance tau<0", lambda: NP([[2, 0], [0, 2]]).distance([-1, 1]), P, "tau")
    add("NP distance tau len", lambda: NP([[2, 0], [0, 2]]).distance([1]), P, "tau")
    add("NP distance tau nan", lambda: NP([[2, 0], [0, 2]]).distance([math.nan, 1]), P, "tau")
    add("NP face tau=0", lambda: NP([[2, 0], [0, 2]]).face_at_distance([1, 0]), P, "tau")
    add("exact_rank float", lambda: ranks.exact_rank([[0.5, 1], [1, 1]]), TY, "entry")
    add("exact_rank nan", lambda: ranks.exact_rank([[math.nan]]), TY, "entry")
    add("exact_rank str", lambda: ranks.exact_rank([["1"]]), TY, "entry")
    add("exact_rank bool", lambda: ranks.exact_rank([[True]]), TY, "entry")
    add("exact_rank ragged", lambda: ranks.exact_rank([[1, 2], [3]]), S, "matrix")
    add("exact_rank 3-D", lambda: ranks.exact_rank(np.zeros((2, 2, 2), dtype=int)), S, "matrix")
    add("exact_rank scalar", lambda: ranks.exact_rank(5), S, "matrix")
    add("exact_rank bound=-1", lambda: ranks.exact_rank([[1]], -1), S, "upper_bound")
    add("exact_rank bound=0.5", lambda: ranks.exact_rank([[1]], 0.5), S, "upper_bound")
    add("rational_rank nan", lambda: ranks.rational_rank([[math.nan]]), NF, "entry")
    add("rational_rank str", lambda: ranks.rational_rank([["1/2"]]), TY, "entry")
    add("rational_rank ragged", lambda: ranks.rational_rank([[1, 2], [3]]), S, "matrix")


CASES = table(
    _normal_crossing, _polynomials, _ideals, _closed_forms, _results, _polyhedron_and_ranks
)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Bad):
    check(case)


# --------------------------------------------------------------------------------------------
# Valid but large inputs finish (no quadratic-time loops)
# --------------------------------------------------------------------------------------------


def test_a_deep_linear_network_with_many_layers():
    # widths 3, 5 × 100,000, 4 and r = 1: M_s = 2, 4, …, 4, 3. Sorted 2, 3, 4, …: every prefix
    # passes (2 + 3 + 4(k − 1) ≥ 4k), so S is every layer, ℓ = 100,001, Σ = 400,005,
    # M̄ = ⌈Σ/ℓ⌉ = 5, a = Σ − 4ℓ = 1 and m = a(ℓ − a) + 1 = 100,001.
    widths = [3] + [5] * 100_000 + [4]
    with deadline(20):
        r = rlct.deep_linear_network(widths, 1)
    ell, total, a = 100_001, 400_005, 1
    pairs = Fraction(total**2 - (2**2 + 3**2 + 100_000 * 4**2), 2)
    lam = (
        Fraction(1 * (3 + 4 - 1), 2)
        + Fraction(a * (ell - a), 4 * ell)
        - Fraction(ell - 1, 4 * ell) * total**2
        + pairs / 2
    )
    assert r.exact and r.mult == 100_001
    assert r.lam == R(lam.numerator, lam.denominator)


# --------------------------------------------------------------------------------------------
# Generated: every kind of bad scalar, at every argument that takes a count or a number
# --------------------------------------------------------------------------------------------

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
exactness_breakers = st.one_of(
    st.floats(),
    st.booleans(),
    st.none(),
    st.complex_numbers().filter(lambda c: c.imag != 0),
    st.text(alphabet="abc.()_", min_size=1, max_size=8),
    st.sampled_from([sp.sqrt(2), sp.pi, sp.oo, -sp.oo, sp.nan, sp.zoo, sp.I, x]),
)


@given(bad_counts, st.integers(0, 3))
def test_bad_counts_to_closed_forms(bad, position):
    assume(not (position == 3 and type(bad) is int and bad == 0))  # r = 0 is a valid rank
    args = [3, 4, 2, 1]
    args[position] = bad
    name = ["M", "N", "H", r"r \(true rank\)"][position]
    with pytest.raises(rlct.InvalidShapeError, match=rf"^{name}"):
        rlct.reduced_rank_regression(*args)


@given(bad_counts)
def test_bad_widths(bad):
    with pytest.raises(rlct.InvalidShapeError, match=r"^widths\[1\]"):
        rlct.deep_linear_network([3, bad, 4], 0)


@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=4).filter(any), st.data(), exactness_breakers
)
def test_one_bad_prior_exponent(k, data, bad):
    h = [0] * len(k)
    j = data.draw(st.integers(0, len(k) - 1))
    h[j] = bad
    with pytest.raises(rlct.InvalidPriorError, match=rf"^h\[{j}\]"):
        rlct.normal_crossing(k, h)
    variables = sp.symbols(f"u0:{len(k)}", real=True)
    K = sum(v ** (2 * e) for v, e in zip(variables, k) if e)
    with pytest.raises(rlct.InvalidPriorError, match=rf"^prior_exponents\[{j}\]"):
        rlct.from_polynomial(K, variables, h)


@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=4),
    st.data(),
    st.one_of(
        st.floats(),
        st.booleans(),
        st.none(),
        st.text(max_size=3),
        st.integers(max_value=-1),
        st.fractions().filter(lambda f: f.denominator != 1),
    ),
)
def test_one_bad_exponent(k, data, bad):
    j = data.draw(st.integers(0, len(k) - 1))
    k = [*k[:j], bad, *k[j + 1 :]]
    with pytest.raises(rlct.InvalidExponentError, match=rf"^k\[{j}\]"):
        rlct.normal_crossing(k)


non_polynomial_parts = st.sampled_from(
    [
        sp.sin(x),
        sp.exp(y) - 1,
        sp.log(1 + x),
        sp.Abs(x - y),
        sp.sqrt(x**2 + 1) - 1,
        1 / x,
        x ** R(1, 3),
        sp.Function("g")(y),
        x**y,
    ]
)


@given(non_polynomial_parts)
def test_non_polynomial_parts_are_named(part):
    with pytest.raises(rlct.NotPolynomialError, match=r"^K\b"):
        rlct.from_polynomial(x**2 + y**2 + part, (x, y))
    with pytest.raises(rlct.NotPolynomialError, match=r"^f_2\b"):
        rlct.from_ideal([x, y + part], (x, y))


@given(st.text(alphabet="xy+-*/^() 0123456789.,[]'_a", max_size=24))
def test_any_short_string_as_K_gives_an_answer_or_an_rlct_error(text):
    with deadline(20):
        try:
            r = rlct.from_polynomial(text, (x, y))
        except rlct.RLCTError:
            return
    assert r.lower > 0 and r.lower <= r.upper


def test_a_high_degree_irreducible_polynomial_in_three_variables_is_answered_at_once():
    """x^k + y^k + z^k is Newton's case (λ = 3/k, m = 1), but FLINT's factorisation of it took
    minutes at k = 110, 150 and 500 (not interruptible: a deadline cannot fire inside it); its
    square-free part is now kept whole above rlct.algebra.factor.SPLIT_MAX_DEGREE."""
    x, y, z = sp.symbols("x y z")
    for k in (110, 150, 500):
        with deadline(20):
            r = rlct.from_polynomial(x**k + y**k + z**k, [x, y, z])
        assert r.exact and (r.lam, r.mult) == (sp.Rational(3, k), 1)


def test_coefficients_beyond_the_float_range_are_exact_not_an_overflow():
    """(x − 10¹⁵⁵·y)² + x⁶: the float eigenvector search for a negative quadratic face overflowed
    (10³¹⁰ as a float); u = x − 10¹⁵⁵·y makes it u² + x⁶, λ = 1/2 + 1/6."""
    x, y, z = sp.symbols("x y z")
    r = rlct.from_polynomial((x - 10**155 * y) ** 2 + x**6, [x, y])
    assert r.exact and (r.lam, r.mult) == (sp.Rational(2, 3), 1)
    three = rlct.from_polynomial((x - 10**200 * y + z) ** 2 + (y - z) ** 2 + x**6, [x, y, z])
    assert three.exact and three.lam == sp.Rational(7, 6)


def test_a_sympy_poly_is_read_as_its_expression_and_checked_as_one():
    """A Poly was refused by type; it is now its expression, with the same checks (floats,
    symbols outside the variables) and the same values."""
    x, y, z = sp.symbols("x y z")
    got = rlct.from_polynomial(sp.Poly(x**2 * y**4, x, y), [x, y])
    assert (got.lam, got.mult) == (rlct.from_polynomial(x**2 * y**4, [x, y]).lam, 1)
    assert got.lam == sp.Rational(1, 4)
    ideal = rlct.from_ideal([sp.Poly(x * y, x, y), x**2], [x, y])
    assert ideal.exact and ideal.lam == sp.Rational(1, 2)
    with pytest.raises(rlct.NotPolynomialError, match="floating-point"):
        rlct.from_polynomial(sp.Poly(sp.Float(0.5) * x**2, x), [x, y])
    with pytest.raises(rlct.NotPolynomialError, match=r"symbols \['z'\]"):
        rlct.from_polynomial(sp.Poly(x**2 + z**2, x, z), [x, y])
    # over GF(7), 7xy is 0: the Poly's expression would be x² + y², not the indefinite form
    with pytest.raises(rlct.NotPolynomialError, match="GF"):
        rlct.from_polynomial(sp.Poly(x**2 + 7 * x * y + y**2, x, y, modulus=7), [x, y])


HUGE = 10**5000  # 5,001 digits: Python converts at most 4,300 to a string


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: rlct.reduced_rank_regression(HUGE, HUGE, HUGE, 1), r"\bM\b"),
        (lambda: rlct.deep_linear_network([HUGE, HUGE], 1), r"widths\[0\]"),
        (lambda: rlct.deep_linear_network([3, 2], HUGE), r"\br\b|rank"),
        (lambda: rlct.regular_value(HUGE), "num_params"),
        (lambda: rlct.normal_crossing([HUGE]), r"k\[0\]"),
        (lambda: rlct.normal_crossing([2], [R(1, HUGE)]), r"h\[0\]'s denominator"),
        (lambda: rlct.from_polynomial(x**2, [x], ["10**10000"]), r"prior_exponents\[0\]"),
    ],
)
def test_integers_of_more_than_a_thousand_digits_are_refused_by_name(call, name):
    """Results built from them could not be printed: str() of an int of more than 4,300 digits
    raises deep inside (a bare ValueError, or a result whose str, repr and to_dict fail)."""
    with pytest.raises(rlct.TooLargeError, match=name):
        call()


def test_a_thousand_digit_exponent_is_still_answered_and_printable():
    r = rlct.normal_crossing([10**999])
    assert r.lam == R(1, 2 * 10**999) and str(r) and r.to_dict()
