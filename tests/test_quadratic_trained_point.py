"""Quadratic networks at a trained point (issue 64, item 3): `rlct.quadratic_llc(..., Y=...)`
decides in exact arithmetic whether θ* fits its targets and records it; an exact fit leaves the
rank route's answer standing, any residual turns it into a conditional, non-exact one."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import rlct
from rlct.errors import InvalidShapeError, NonFiniteError
from rlct.quadratic.fit import outputs
from rlct.quadratic.point import parse_point

RNG = np.random.default_rng(7)
W = RNG.integers(-2, 3, size=(2, 3))
V = RNG.integers(-2, 3, size=(2, 3))
X = RNG.integers(-3, 4, size=(15, 2))
Y = ((X @ W) ** 2) @ V.T  # the point's own outputs, integers


def _fit(res: rlct.RLCT) -> rlct.Condition:
    (fit,) = [c for c in res.conditions if c.statement.startswith("θ* fits the targets")]
    return fit


def test_outputs_are_the_networks_outputs_exactly():
    b, c = [1, Fraction(1, 3), -2], [Fraction(1, 7), 5]
    pt = parse_point(W, V, X, b=b)
    got = outputs(pt, np.array(c, dtype=object))
    # by hand, in Fractions: f_k(x) = Σ_j v_kj (w_jᵀx + b_j)² + c_k
    for i in range(len(X)):
        for k in range(2):
            want = c[k] + sum(
                int(V[k, j])
                * (sum(int(X[i, t]) * int(W[t, j]) for t in range(2)) + Fraction(b[j])) ** 2
                for j in range(3)
            )
            assert got[i, k] == want


def test_an_exact_fit_keeps_the_answer_and_records_the_fit():
    plain = rlct.quadratic_llc(W, V, X)
    trained = rlct.quadratic_llc(W, V, X, Y=Y)
    assert plain.exact and trained.exact and (trained.lam, trained.mult) == (plain.lam, plain.mult)
    fit = _fit(trained)
    assert fit.status is True and "n = 15" in fit.statement
    assert trained.conditions[1:] == plain.conditions


def test_a_residual_makes_the_answer_conditional_and_names_it():
    off = Y.astype(object).copy()
    off[4, 1] += Fraction(3, 10**6)
    res = rlct.quadratic_llc(W, V, X, Y=off)
    plain = rlct.quadratic_llc(W, V, X)
    assert not res.exact and res.lam is None
    assert (res.lower, res.upper) == (plain.lam, plain.lam)
    fit = _fit(res)
    assert fit.status is False and "3e-06 (sample 4, output 1)" in fit.statement
    assert "mean squared residual 6e-13" in fit.statement  # (3·10⁻⁶)²/15
    assert "not the Y given" in res.method


def test_float_weights_never_fit_exactly():
    """A trained network's float weights: the binary values' outputs differ from integer targets
    by rounding, which the exact check sees."""
    res = rlct.quadratic_llc(W / 3.0 * 3.0 + 1e-12, V, X, Y=Y)
    assert not res.exact and _fit(res).status is False


def test_centring_ignores_a_constant_offset_per_output():
    shifted = Y + np.array([5, -2])
    assert _fit(rlct.quadratic_llc(W, V, X, Y=shifted)).status is False
    centred = rlct.quadratic_llc(W, V, X, centered=True, Y=shifted)
    assert _fit(centred).status is True and "P⊥" in _fit(centred).statement
    assert centred == rlct.quadratic_llc(W, V, X, centered=True, Y=Y)


def test_output_biases_enter_the_fit():
    b, c = [1, 0, -1], [3, Fraction(-1, 2)]
    pt = parse_point(W, V, X, b=b)
    Yb = outputs(pt, np.array(c, dtype=object))
    assert _fit(rlct.quadratic_llc(W, V, X, b=b, Y=Yb, c=c)).status is True
    assert _fit(rlct.quadratic_llc(W, V, X, b=b, Y=Yb)).status is False  # c = 0 assumed


def test_a_rank_drop_at_a_trained_point_goes_through_the_exact_layer():
    """One unit with zero input weight (w, v) = (0, 1) on data x ∈ {1, 2, 3}: f ≡ 0 fits Y = 0,
    and K ≍ w⁴ gives λ = 1/4 (the ranks alone prove only [0, 1/2])."""
    res = rlct.quadratic_llc([[0]], [[1]], [[1], [2], [3]], Y=[0, 0, 0])
    assert res.exact and res.lam == Fraction(1, 4) and _fit(res).status is True


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"X": None, "Y": Y}, InvalidShapeError, "targets Y need the inputs X"),
        ({"Y": Y[:, :1]}, InvalidShapeError, r"Y has shape \(15, 1\).*15 × 2"),
        ({"Y": Y[:5]}, InvalidShapeError, r"Y has shape \(5, 2\)"),
        ({"Y": Y, "c": [1, 2]}, InvalidShapeError, "give b too"),
        ({"c": [1, 2]}, InvalidShapeError, "with targets Y only"),
        ({"Y": np.where(Y > 0, np.nan, Y.astype(float))}, NonFiniteError, r"Y\[\d+, \d+\]"),
        ({"Y": Y, "b": [0, 0, 0], "c": [1]}, InvalidShapeError, r"c has shape \(1,\)"),
    ],
)
def test_bad_targets_are_named(kwargs, error, match):
    args = {"X": X} | kwargs
    with pytest.raises(error, match=match):
        rlct.quadratic_llc(W, V, **args)
