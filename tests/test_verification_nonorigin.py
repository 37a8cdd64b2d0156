"""Linear networks away from the origin (issue 64): the strategy's points lie on the zero set and
their closed-form local λ equals the exact ideal computation; the interval bookkeeping; a
non-origin case through the estimator and the decision; the numerical rank decision at a float
factorisation."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from functools import partial

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import HealthCheck, given, settings

import rlct
from verification.calibration import battery, calibrate, default_estimator
from verification.calibration.cases import _network
from verification.calibration.models import hmc_target, shifted_target
from verification.cases import FactorisedCase
from verification.experiments.local_rank import local_rank
from verification.factorisations import chain, disguise, intervals_of, network_points
from verification.strategies import factorised_networks
from verification.targets import linear_network_potential, linear_network_reference


def _generators(case: FactorisedCase) -> tuple[list[sp.Expr], list[sp.Symbol]]:
    """Entries of W_L⋯W_1 − W* in symbols named per layer, W* = the case's product."""
    product, names = None, []
    for k, layer in enumerate(case.layers):
        rows, cols = len(layer), len(layer[0])
        W = sp.Matrix(rows, cols, lambda i, j, k=k: sp.Symbol(f"w{k}_{i}{j}"))
        names += list(W)
        product = W if product is None else W * product
    star = case.true_map
    return [sp.expand(e) for e in product - star], names


def _point(case: FactorisedCase) -> list[int]:
    return [x for layer in case.layers for row in layer for x in row]  # row-major per layer


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(factorised_networks(max_layers=3, max_width=2))
def test_strategy_points_are_zeros_with_the_ideals_local_lambda(drawn):
    _check_against_the_ideal(*drawn)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(factorised_networks(max_layers=2, max_width=2))
def test_strategy_rrr_points_at_most_8_parameters_against_the_ideal(drawn):
    case, exact = drawn
    assert sum(len(w) * len(w[0]) for w in case.layers) <= 8
    _check_against_the_ideal(case, exact)


def _check_against_the_ideal(case: FactorisedCase, exact) -> None:
    gens, names = _generators(case)
    # K(w*) = 0 exactly: every entry of W_L⋯W_1 − W* vanishes at the integer point
    at = dict(zip(names, _point(case)))
    assert all(g.xreplace(at) == 0 for g in gens)
    assert exact.exact and exact == case.exact()
    if len(names) <= 8:
        ideal = rlct.local_ideal_llc(gens, names, _point(case))
        assert ideal.exact and (ideal.lam, ideal.mult) == (exact.lam, exact.mult)


def test_rrr_at_a_surjective_factor_against_the_ideal():
    """M = 2, N = 3, H = 2 at A surjective, B of rank 1 (10 parameters): 3 by the ideal, above
    Aoyagi's global 5/2."""
    case = next(c for c in battery("fast") if "A surjective" in c.name).build.keywords["case"]
    gens, names = _generators(case)
    ideal = rlct.local_ideal_llc(gens, names, _point(case))
    assert (ideal.lam, ideal.mult) == (sp.Integer(3), 1) == (case.exact().lam, case.exact().mult)
    assert case.global_exact().lam == sp.Rational(5, 2)


def _ranks(layers) -> dict[tuple[int, int], int]:
    ms = [sp.Matrix(w) for w in layers]
    out = {(i, i): (ms[0].cols if i == 0 else ms[i - 1].rows) for i in range(len(ms) + 1)}
    for i, j in itertools.combinations(range(len(ms) + 1), 2):
        product = ms[i]
        for m in ms[i + 1 : j]:
            product = m * product
        out[(i, j)] = int(product.rank())
    return out


@pytest.mark.parametrize(
    ("intervals", "L"),
    [([(0, 3), (0, 1), (2, 3)], 3), ([(0, 2), (1, 1), (0, 0), (2, 2), (1, 2)], 2),
     ([(0, 4), (0, 1), (2, 4), (0, 0), (4, 4), (1, 3)], 4)],
)  # fmt: skip
def test_intervals_round_trip_through_the_ranks_of_a_disguised_chain(intervals, L):
    layers = disguise(chain(intervals, L), seed=7)
    assert sorted(intervals_of(_ranks(layers), L)) == sorted(intervals)
    # the disguise changed the matrices, not the local λ
    assert layers != chain(intervals, L)
    assert FactorisedCase(layers).exact() == FactorisedCase(chain(intervals, L)).exact()


def test_the_battery_points_are_exact_and_some_exceed_the_global_lambda():
    points = network_points()
    dims = [sum(len(w) * len(w[0]) for w in c.layers) for c in points]
    assert len(points) >= 20 and min(dims) == 8 and 200 <= max(dims) < 400
    assert all(c.exact().exact for c in points)
    above = [c for c in points if c.exact().lam > c.global_exact().lam]
    assert len(above) >= 8 and all(c.exact().lam >= c.global_exact().lam for c in points)


def _min_loss(x: np.ndarray, y: np.ndarray, rank: int) -> float:
    """½·mean‖y − xCᵀ‖² over C of rank ≤ ``rank`` (numpy: least squares, then Eckart–Young)."""
    B, *_ = np.linalg.lstsq(x, y, rcond=None)
    fitted = x @ B
    s = np.linalg.svd(fitted, compute_uv=False)
    resid = ((y - fitted) ** 2).sum(1).mean()
    return 0.5 * (resid + (s[rank:] ** 2).sum() / len(y))


def test_the_shifted_local_target_of_a_non_origin_case():
    case = next(c for c in battery("fast") if "A surjective" in c.name)
    built = case.build(0)
    loss_fn, params, (x, y) = built.args
    fc = case.build.keywords["case"]
    assert [params[f"W{k}"].tolist() for k in range(2)] == [list(map(list, w)) for w in fc.layers]
    nbeta = case.n / math.log(case.n)
    local = shifted_target(built, nbeta, 1.0, case=fc, n=case.n)
    shift = nbeta * (float(loss_fn(params, (x, y))) - _min_loss(x.numpy(), y.numpy(), 2))
    assert local.value == pytest.approx(3.0 - shift, rel=1e-9)  # local λ = 3, m = 1
    assert local.sigma == pytest.approx(3.0 * nbeta / case.n, rel=1e-9)  # β·λ


def test_the_closed_form_potential_is_the_networks_loss():
    """``linear_network_potential`` (sufficient statistics) against the loss on the data, at
    random points of every non-origin case's parameter space: the same L_n to rounding."""
    g = torch.Generator().manual_seed(5)
    for case in [c for c in battery("full") if "away from the origin" in c.family][:6]:
        built = case.build(0)
        loss_fn, params, data = built.args
        potential, w_star = linear_network_potential(built.aux["problem"])
        names = [f"W{k}" for k in range(len(params))]
        assert torch.equal(w_star, torch.cat([params[k].reshape(-1) for k in names]))
        w = w_star + 0.3 * torch.randn(3, w_star.numel(), generator=g, dtype=torch.float64)
        for row, value in zip(w, potential(w)):
            parts = row.split([params[k].numel() for k in names])
            p = {k: t.reshape(params[k].shape) for k, t in zip(names, parts)}
            assert float(value) == pytest.approx(float(loss_fn(p, data)), rel=1e-11, abs=1e-12)


def test_hmc_target_of_a_regular_factorisation_is_its_shifted_value():
    """At a factorisation of maximal rank (2-2-2 with invertible layers: λ = 2, m = 1, a smooth
    fibre) the localised posterior is Gaussian to O(γ/(nβh)), so λ_β(γ) by HMC on the closed
    form must equal λ − nβ·(L_n(w*) − min L_n) (the shifted target), a different computation."""
    fc = FactorisedCase((((2, 1), (1, 1)), ((1, 0), (1, 2))))
    assert fc.exact().lam == 2 and fc.exact().mult == 1
    case = _network(fc, "test", n=10_000)
    built = case.build(0)
    nbeta = case.n / math.log(case.n)
    short = partial(hmc_target, num_chains=16, num_draws=100, num_burnin=60)
    t = short(built, nbeta, 1.0)
    local = shifted_target(built, nbeta, 1.0, case=fc, n=case.n)
    assert t.source.startswith("λ_β(γ), HMC") and 0 < t.sigma < 0.12
    assert abs(t.value - local.value) < 4 * t.sigma + 0.05  # 0.05: the O(γ/(nβh)) terms
    # the localisation matters: at γ = 10⁴ ≫ nβh the chains hardly leave w*
    assert short(built, nbeta, 1e4).value < 0.5 * t.value


def test_a_non_origin_case_runs_through_the_estimator_against_its_hmc_target():
    case = next(c for c in battery("fast") if "A surjective" in c.name)
    assert case.target is hmc_target  # λ_β(γ), not the local λ (docstring of the battery)
    quick = replace(case, target=partial(hmc_target, num_chains=16, num_draws=60, num_burnin=40))
    short = partial(default_estimator, num_burnin=100, num_draws=200)
    (rec,) = calibrate(short, [quick], seeds=(0,)).records
    assert math.isfinite(rec.z) and rec.stderr > 0 and 0 < rec.target_sigma < 0.4
    assert abs(rec.estimate - rec.target) < 2.0


def test_numerical_rank_decision_at_a_noisy_factorisation():
    """Known ranks (W_1, W_2, W_3 of ranks 2, 1, 2, W* of rank 1), float noise 10⁻¹⁰: the ranks,
    λ = 2 and m = 1 come back, with a gap far above 1; noise above the threshold makes every
    product full rank (the decision follows the numbers, not the construction)."""
    layers = disguise(chain([(0, 3), (0, 1), (2, 3), (1, 1)], 3), seed=3)
    g = torch.Generator().manual_seed(0)
    noisy = [torch.tensor(w, dtype=torch.float64) for w in layers]
    noisy = [w + 1e-10 * torch.randn(w.shape, generator=g, dtype=torch.float64) for w in noisy]
    got = local_rank(noisy, rel_tol=1e-6)
    assert (got.layer_ranks, got.product_rank) == ("2,1,2", 1)
    assert (got.lam, got.mult, got.exact) == (2.0, 1, True)
    assert got.gap > 1e5 and got.largest_dropped < 1e-8 and got.smallest_kept > 1e-3
    loud = [w + 1e-3 * torch.randn(w.shape, generator=g, dtype=torch.float64) for w in noisy]
    full = local_rank(loud, rel_tol=1e-6)
    assert full.layer_ranks == "2,2,2" and full.product_rank == 2 and full.gap == math.inf


def test_the_dln_claim_records_the_local_lambda_at_the_trained_point():
    """3-2-3 at rank 1 trained for 50 steps from small initialisation: both layers keep rank 2
    (σ far above 10⁻⁶·σ_max), so the trained product has rank 2 = the hidden width and the local
    λ is 2·(3 + 3 − 2)/2 = 4 (m = 1), against Aoyagi's global 7/2 at the teacher's rank 1."""
    from verification.experiments.dln import dln_claim
    from verification.experiments.teachers import dln_teacher

    t = dln_teacher([3, 2, 3], 1, seed=0)
    true, trained = dln_claim([t], 500, trained=1, train_steps=50, num_chains=2,
                              num_burnin=40, num_draws=80).points  # fmt: skip
    assert true.local is None and t.lam == sp.Rational(7, 2)
    lr = trained.local
    assert (lr.layer_ranks, lr.product_rank, lr.lam, lr.mult) == ("2,2", 2, 4.0, 1)
    # the 3×3 product's third σ is a rounding-level zero (rank ≤ 2 through the hidden width)
    assert lr.exact and lr.rel_tol == 1e-6 and lr.gap > 1e10 and lr.largest_dropped < 1e-12
    assert trained.to_dict()["local.lam"] == 4.0


def test_contradicting_rank_decisions_give_no_lambda():
    """W_2 = diag(1, 10⁻⁴) (2×3), W_3 = diag(1, 10⁻³): each kept at 10⁻⁶ on its own, but their
    product's σ ratio 10⁻⁷ is dropped, so rank W_3W_2 = 1 < rank W_3 = 2 with W_2 surjective:
    no chain has these ranks, and no λ is claimed."""
    f64 = dict(dtype=torch.float64)
    W2 = torch.tensor([[1.0, 0, 0], [0, 1e-4, 0]], **f64)
    got = local_rank([torch.eye(3, **f64), W2, torch.diag(torch.tensor([1.0, 1e-3], **f64))])
    assert (got.layer_ranks, got.product_rank) == ("3,2,2", 1) and not got.exact
    assert math.isnan(got.lam) and "r(1,3) = 1" in got.lam_exact and "contradict" in got.lam_exact


def test_the_catalogues_non_origin_check_compares_with_the_hmc_reference(monkeypatch):
    """The report's networks away from the origin are decided against λ_β(γ) by HMC at the
    estimate's own nβ and γ, not against the local λ (short chains and a short HMC run here)."""
    import numeric
    from verification import crosschecks
    from verification.factorisations import report_points

    seen = []

    def short_hmc(prob, nbeta, gamma, **kw):
        ref = linear_network_reference(prob, nbeta, gamma, num_chains=16, num_draws=60,
                                       num_burnin=40)  # fmt: skip
        seen.append(ref)
        return ref

    monkeypatch.setattr(crosschecks, "linear_network_reference", short_hmc)
    monkeypatch.setattr(
        crosschecks.numeric,
        "estimate_llc",
        partial(numeric.estimate_llc, num_burnin=100, num_draws=200, progress=False),
    )
    case = next(c for c in report_points() if "1-1-2-3" in c.name)  # λ_loc 3/2, global 1/2
    check = crosschecks._run_regression(case, crosschecks.Settings(num_chains=4), 0)
    (ref,) = seen
    assert ref.nbeta == pytest.approx(check.nbeta) and ref.gamma == 1.0
    assert check.reference == pytest.approx(ref.value) and check.target == pytest.approx(ref.value)
    assert check.exact.lam == sp.Rational(3, 2)  # the exact side stays the local λ
    assert ref.value < 0.8  # λ_β(γ = 1) sits near the global 1/2, far below the local 3/2
