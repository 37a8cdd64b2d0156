"""Verdicts that must not claim more than their points show, and claim arguments refused up
front (issue 18's fourth audit). The points are built by hand, so every expected outcome follows
from the verdict's documented rule, not from a run."""

from __future__ import annotations

import dataclasses
import math

import pytest
import sympy as sp
import torch

from verification.errors import InvalidArgumentError
from verification.experiments.cullen_scaling import ScalingPoint, scaling_verdict
from verification.experiments.dln import DLNPoint, dln_claim, dln_verdict
from verification.experiments.llc import LLCPoint
from verification.experiments.modular import Snapshot
from verification.experiments.rescaling import RescalingPoint, rescaling_claim, rescaling_verdict
from verification.experiments.saddles import saddle_claim
from verification.experiments.sgld_mala import sampler_claim
from verification.experiments.teachers import dln_teacher, random_dln_teacher


def _llc(value: float, worst: str = "none") -> LLCPoint:
    return LLCPoint(0, value, 0.1, 200.0, 1.0, 100.0, 0.0, 40, "", worst, 1.0)


def test_scaling_verdict_without_an_exact_point_is_inconclusive() -> None:
    """No trained point with an exact λ (all above exact_max_rows): nothing to hold the formula
    against, so neither 'reproduced after a correction' nor a mean of an empty list."""
    snap = Snapshot(100, 0.01, 0.02, 1.0, 1.0, 1.0, 1.0)

    def point(p: int, k: int, llc: float) -> ScalingPoint:
        nan = math.nan
        return ScalingPoint(
            p, k, 50, 40, snap, 1e-8, _llc(llc), _llc(llc), 5.0, 5.0, nan, nan, nan, False, -1,
            k * (3 * p - 1) / 2, p * 49 / 2, 0.0,
        )  # fmt: skip

    v = scaling_verdict([point(5, 2, 4.0), point(7, 2, 5.0)], [point(5, 3, 6.0)])
    assert v.outcome == "inconclusive" and "exact λ" in v.sentence


def test_rescaling_needs_two_values_of_alpha_and_positive_ones() -> None:
    one = rescaling_verdict([RescalingPoint(1.0, "defaults", _llc(1.3))])
    assert one.outcome == "inconclusive"
    two = rescaling_verdict(
        [RescalingPoint(50.0, "defaults", _llc(1.3)), RescalingPoint(1e4, "defaults", _llc(1.3))]
    )
    assert two.outcome == "reproduced" and "against α = 50" in two.sentence
    # the invariant series alone is a sanity check: no verdict rests on it (issue 62)
    only_sanity = [RescalingPoint(a, "invariant", _llc(1.3)) for a in (1.0, 10.0)]
    assert rescaling_verdict(only_sanity).outcome == "inconclusive"
    with pytest.raises(InvalidArgumentError, match="α of point 1"):
        rescaling_verdict(
            [
                RescalingPoint(1.0, "invariant", _llc(1.3)),
                RescalingPoint(-1.0, "invariant", _llc(1.3)),
            ]
        )
    with pytest.raises(InvalidArgumentError, match=r"alphas\[1\]"):
        rescaling_claim([1, 2, 1], [1.0, 0.0], 20)


def test_dln_verdict_does_not_depend_on_where_a_failed_estimate_sits() -> None:
    """Errors 1%, 2% and a NaN estimate (no error finding): the NaN is the worst network, so
    the claim is not reproduced in any order (the median and max of a list with NaN in it
    depended on the order, one of which read 'reproduced')."""
    t = dln_teacher([3, 2, 3], 1, seed=0)
    lam = float(t.lam)

    def point(e: float | None) -> DLNPoint:
        return DLNPoint(t, "true", _llc(math.nan if e is None else lam * (1 + e)), 0.0)

    outcomes = {
        dln_verdict([point(e) for e in errs]).outcome
        for errs in ([0.01, None, 0.02], [None, 0.01, 0.02], [0.01, 0.02, None])
    }
    assert outcomes == {"inconclusive"}
    assert dln_verdict([point(0.01), point(0.02), point(0.0)]).outcome == "reproduced"


def test_claim_arguments_are_refused_before_any_work() -> None:
    g = torch.Generator().manual_seed(0)
    t = dln_teacher([3, 2, 3], 1, seed=0)
    calls = {
        "ns": lambda: sampler_claim([2, 3, 1], []),
        "singular_values must list": lambda: saddle_claim([2, 2, 2], [3.0, 2.0, 1.0], 10, 5, [5]),
        r"singular_values\[1\]": lambda: saddle_claim([2, 2, 2], [1.0, 0.0], 10, 5, [5]),
        "min_params": lambda: random_dln_teacher(g, 0, 10),
        "max_depth": lambda: random_dln_teacher(g, 2, 10, max_depth=1),
        r"trained \(of 1 teachers\)": lambda: dln_claim([t], 20, trained=-1),
        "n must": lambda: dln_claim([t], -3),
    }
    for match, call in calls.items():
        with pytest.raises(InvalidArgumentError, match=match):
            call()


def test_crosscheck_names_a_k_that_is_not_a_polynomial_in_its_variables() -> None:
    from verification.models import polynomial_potential

    x, a = sp.symbols("x a")
    with pytest.raises(InvalidArgumentError, match=r"symbols \['a'\]"):
        polynomial_potential(a * x**2, (x,))
    with pytest.raises(InvalidArgumentError, match="must be a polynomial"):
        polynomial_potential(sp.sin(x) ** 2, (x,))


def test_the_report_names_what_each_reference_is() -> None:
    """The report labelled every reference λ_β, also the linear networks' shifted expansion and
    the quadratic networks' Laplace value; each now says which it is."""
    import numeric
    import rlct
    from verification.decision import LaplaceReference, decide, reference_source
    from verification.report import _compared_with
    from verification.targets import ShiftedTarget

    quad = numeric.expected_llc(lambda w: w[..., 0] ** 2, [0.0], nbeta=100, gamma=1.0)
    assert reference_source(quad) == "λ_β, quadrature"
    assert reference_source(ShiftedTarget(1.0, 0.1)).startswith("λ − (m−1)/log nβ")
    est = numeric.estimate_llc_potential(
        lambda w: w[..., 0] ** 2, [0.0], 1000, num_chains=4, seed=0
    )
    record = decide("w²", rlct.normal_crossing([1]), est, reference=LaplaceReference(0.49, 0.0))
    assert record.reference_source.startswith("Laplace")
    assert "Laplace" in _compared_with(record)
    assert record.to_dict()["reference_source"].startswith("Laplace")


def test_scaling_verdict_reads_exponents_not_levels() -> None:
    """λ̂ at a third of the exact λ but proportional to K and to 3p − 1 reproduces the claimed
    scaling (after a correction: the exact λ is K(3p − 2)/2, not the formula); λ̂ flat in K does
    not; a two-point series cannot decide."""
    snap = Snapshot(100, 0.01, 0.02, 1.0, 1.0, 1.0, 1.0)

    def point(p: int, k: int, llc: float) -> ScalingPoint:
        lam = k * (3 * p - 2) / 2
        return ScalingPoint(
            p, k, 500, 40, snap, 1e-8, _llc(llc), _llc(llc), 5.0, 5.0, lam, lam, lam, True, -1,
            k * (3 * p - 1) / 2, p * 499 / 2, 0.0,
        )  # fmt: skip

    wobble = (1.002, 0.998, 1.001)  # three points leave 1 df: t_{0.975} = 12.7
    by_p = [point(p, 16, w * 16 * (3 * p - 1) / 6) for p, w in zip((7, 11, 13), wobble)]
    by_k = [point(11, k, w * k * 32 / 6) for k, w in zip((8, 16, 32), wobble)]
    v = scaling_verdict(by_p, by_k)
    assert v.outcome == "reproduced after a correction"
    nums = {m.name: m.value for m in v.numbers}
    assert nums["exponent of λ̂ in K"] == pytest.approx(1.0, abs=0.02)
    assert nums["exponent of the exact λ in K"] == pytest.approx(1.0, abs=1e-12)
    # polished points that do not fit their data: the exact λ is not the data's, so the formula
    # is not checked against it and no correction is claimed from it; the scaling still decides
    unfit = [dataclasses.replace(q, polished_loss=0.15) for q in by_p + by_k]
    v = scaling_verdict(unfit[:3], unfit[3:])
    nums = {m.name: m.value for m in v.numbers}
    assert v.outcome == "reproduced" and "not checked" in v.sentence
    assert nums["points with an exact λ that fit their training data"] == 0
    assert nums["largest polished training loss"] == 0.15
    fit_k = [dataclasses.replace(q, polished_loss=1e-18) for q in by_k]
    v = scaling_verdict(unfit[:3], fit_k)
    assert v.outcome == "reproduced after a correction" and "3 of 6" in v.sentence
    flat = [point(11, k, w * 50.0) for k, w in zip((8, 16, 32), wobble)]
    assert scaling_verdict(by_p, flat).outcome == "not reproduced"
    assert scaling_verdict(by_p, by_k[:2]).outcome == "inconclusive"
