"""The RLCT result type: exact values, bounds, and refusal of floats and inconsistent states."""

import dataclasses
import json

import pytest
import sympy as sp

import rlct
from rlct import RLCT, Condition

X, Y = sp.symbols("x y", real=True)


def test_exact_value_has_equal_bounds():
    r = RLCT.exact_value(sp.Rational(3, 4), 2, "test")
    assert r.lower == r.lam == r.upper == sp.Rational(3, 4)
    assert r.exact and r.mult == 2


def test_frozen():
    r = RLCT.exact_value(1, 1, "test")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.lam = sp.Integer(2)


def test_floats_are_refused():
    with pytest.raises(TypeError, match="float"):
        RLCT.exact_value(0.5, 1, "test")
    with pytest.raises(TypeError, match="float"):
        RLCT.bounds(0, 0.5, "test")


def test_exact_result_cannot_rest_on_unproven_condition():
    with pytest.raises(ValueError, match="unproven"):
        RLCT.exact_value(1, 1, "test", (Condition("something", None),))


def test_bounds_must_be_ordered():
    with pytest.raises(ValueError, match="exceeds"):
        RLCT.bounds(1, sp.Rational(1, 2), "test")


def test_bounds_report_failed_conditions():
    c = Condition("K_γ has no real torus zero", False)
    r = RLCT.bounds(sp.Rational(1, 4), 1, "test", (c, Condition("ok", True)))
    assert not r.exact and r.lam is None and r.mult is None
    assert r.failed_conditions == (c,)
    assert "not exact" in str(r) and "[fails]" in str(r)


def test_to_dict_is_plain_json():
    r = RLCT.exact_value(sp.Rational(3, 4), 2, "m", (Condition("c", True),))
    d = r.to_dict()
    assert (
        json.loads(json.dumps(d))
        == d
        == {
            "lam": "3/4",
            "mult": 2,
            "exact": True,
            "lower": "3/4",
            "upper": "3/4",
            "method": "m",
            "conditions": [{"statement": "c", "status": "holds"}],
        }
    )


def test_to_dict_of_bounds_keeps_the_three_statuses():
    conds = (Condition("a", True), Condition("b", False), Condition("c", None))
    d = RLCT.bounds(0, sp.Rational(7, 2), "m", conds).to_dict()
    assert (d["lam"], d["mult"], d["exact"], d["lower"], d["upper"]) == (
        None,
        None,
        False,
        "0",
        "7/2",
    )
    assert [c["status"] for c in json.loads(json.dumps(d))["conditions"]] == [
        "holds",
        "fails",
        "undecided",
    ]


@pytest.mark.parametrize(
    "result",
    [
        rlct.normal_crossing([1, 2], [0, sp.Rational(1, 2)]),
        rlct.from_polynomial((X**2 - Y**3) ** 2, (X, Y)),  # degenerate: bounds, a failed face
        rlct.from_ideal([X * Y, X**2], (X, Y)),
        rlct.deep_linear_network([3, 2, 4], 1),
        rlct.quadratic_llc([[0, 0], [1, 0]], [[1, 0]]),
    ],
    ids=["normal_crossing", "degenerate", "ideal", "dln", "quadratic"],
)
def test_to_dict_round_trips_through_json(result: RLCT):
    assert RLCT.from_dict(json.loads(json.dumps(result.to_dict()))) == result


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"lam": 0.75}, "float"),  # a JSON number is a float: refused, never rationalised
        ({"lam": "__import__('os')"}, "not allowed"),
        ({"conditions": [{"statement": "c", "status": True}]}, "status"),
        ({"conditions": "c"}, "conditions"),
        ({"exact": "true"}, "exact"),
    ],
)
def test_from_dict_validates(change: dict, error: str):
    d = {**RLCT.exact_value(sp.Rational(3, 4), 1, "m").to_dict(), **change}
    with pytest.raises(rlct.RLCTError, match=error):
        RLCT.from_dict(d)
