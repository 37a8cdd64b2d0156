"""The RLCT result type: exact values, bounds, and refusal of floats and inconsistent states."""

import dataclasses

import pytest
import sympy as sp

from rlct import RLCT, Condition


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
