"""The paper-procedure SGLD (verification.experiments.paper_sgld): its step by hand, against
devinterp 1.3.2's own SGLD optimizer, and its λ̂ against the Laplace value of a regular model."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from verification.errors import InvalidArgumentError, InvalidTypeError
from verification.experiments.paper_sgld import (
    PaperSGLDOptions,
    paper_sgld,
    paper_sgld_potential,
)


def _half_mse(p: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    x, y = batch
    return 0.5 * (x @ p["w"] - y).square().mean()


def _tiny_regression(n: int = 6) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    x = torch.randn(n, 2, generator=g, dtype=torch.float64)
    y = torch.randn(n, generator=g, dtype=torch.float64)
    w_star = torch.tensor([0.3, -0.2], dtype=torch.float64)  # not a minimum: a gradient at w*
    return x, y, w_star


def test_two_steps_match_the_formula_by_hand() -> None:
    """Full batch, 2 chains, 2 steps: w' = w − (ε/2)(nβ·Xᵀ(Xw − y)/n + γ(w − w*)) + √ε·ξ with ξ
    the generator's successive randn(2, 2) draws; the trace is L_n at the pre-step positions."""
    x, y, w_star = _tiny_regression()
    n, eps, nbeta, gamma = len(x), 1e-2, 7.0, 3.0
    opts = PaperSGLDOptions(
        step_size=eps, num_steps=2, num_chains=2, batch_size=n, gamma=gamma, nbeta=nbeta
    )
    res = paper_sgld(_half_mse, {"w": w_star}, (x, y), opts, seed=11)

    g = torch.Generator().manual_seed(11)
    xi1 = torch.randn(2, 2, generator=g, dtype=torch.float64)
    xi2 = torch.randn(2, 2, generator=g, dtype=torch.float64)

    def grad(w: torch.Tensor) -> torch.Tensor:  # ∇ ½·mean (x·w − y)², per row of w
        return ((w @ x.T - y) @ x) / n

    def loss(w: torch.Tensor) -> torch.Tensor:
        return 0.5 * (w @ x.T - y).square().mean(-1)

    w0 = w_star.expand(2, 2)
    w1 = w0 - eps / 2 * (nbeta * grad(w0)) + math.sqrt(eps) * xi1  # w − w* = 0 at step one
    w2 = w1 - eps / 2 * (nbeta * grad(w1) + gamma * (w1 - w_star)) + math.sqrt(eps) * xi2
    torch.testing.assert_close(res.final_position, w2, rtol=1e-12, atol=1e-12)
    expected_trace = torch.stack([loss(w0), loss(w1)], 1)
    torch.testing.assert_close(res.loss_trace, expected_trace, rtol=1e-12, atol=1e-12)
    init = float(loss(w_star[None])[0])
    per_chain = nbeta * (expected_trace.mean(1) - init)
    assert res.per_chain == pytest.approx(per_chain.tolist(), rel=1e-10)
    assert res.mean == pytest.approx(float(per_chain.mean()), rel=1e-10)
    assert res.stderr == pytest.approx(float(per_chain.std()) / math.sqrt(2), rel=1e-10)


def test_bounding_box_burn_in_and_nbeta_rules() -> None:
    x, y, w_star = _tiny_regression(n=40)
    box = PaperSGLDOptions(
        step_size=1.0, num_steps=1, num_chains=3, batch_size=40, bounding_box=0.01
    )
    res = paper_sgld(_half_mse, {"w": w_star}, (x, y), box, seed=0)
    # ε = 1 moves every coordinate far past 0.01 (√ε·|ξ| > 0.01 unless |ξ| < 0.01): clamped
    g = torch.Generator().manual_seed(0)
    xi = torch.randn(3, 2, generator=g, dtype=torch.float64)
    assert bool((xi.abs() > 0.5).any())
    dist = (res.final_position - w_star).abs()
    assert float(dist.max()) == pytest.approx(0.01, abs=1e-15)

    rule = PaperSGLDOptions(num_steps=10, batch_size=8, nbeta="B/log B", burn_in=0.3)
    res = paper_sgld(_half_mse, {"w": w_star}, (x, y), rule, seed=0)
    assert res.nbeta == pytest.approx(8 / math.log(8)) and res.burn_in == 3
    manual = res.nbeta * (res.loss_trace[:, 3:].mean(1) - res.init_loss)
    assert res.per_chain == pytest.approx(manual.tolist(), rel=1e-12)
    default = paper_sgld(
        _half_mse, {"w": w_star}, (x, y), PaperSGLDOptions(num_steps=2, batch_size=8)
    )
    assert default.nbeta == pytest.approx(40 / math.log(40))
    # B = 8 of n = 40: five batches an epoch, each chain's shuffle covers every sample once
    assert res.loss_trace.shape == (4, 10)


def test_bad_options_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="step_size"):
        PaperSGLDOptions(step_size=0.0)
    with pytest.raises(InvalidArgumentError, match="nbeta"):
        PaperSGLDOptions(nbeta="n/log(n)")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="burn_in"):
        PaperSGLDOptions(burn_in=1.0)
    with pytest.raises(InvalidTypeError, match="burn_in"):
        PaperSGLDOptions(burn_in=True)
    with pytest.raises(InvalidTypeError, match="options"):
        paper_sgld(_half_mse, {"w": torch.zeros(2)}, (torch.zeros(4, 2), torch.zeros(4)), {})  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        paper_sgld(
            _half_mse, {"w": torch.zeros(2)}, (torch.zeros(4, 2), torch.zeros(4)),
            PaperSGLDOptions(batch_size=5),
        )  # fmt: skip
    with pytest.raises(InvalidArgumentError, match="B/log B"):
        paper_sgld_potential(
            lambda w: w.square().sum(-1), [0.0], 100, PaperSGLDOptions(nbeta="B/log B")
        )


def test_three_steps_match_devinterp_sgld_optimizer() -> None:
    """devinterp 1.3.2's ``SGLD`` optimizer on nn.Linear(4, 1, bias=False) (one parameter tensor,
    so its per-parameter noise draw is one randn of the whole vector), full-batch gradients, its
    noise from a generator seeded as ours: the same positions and minibatch losses after 3 steps."""
    pytest.importorskip("devinterp")
    from devinterp.optim.sgld import SGLD

    g = torch.Generator().manual_seed(1)
    x = torch.randn(50, 4, generator=g)
    y = torch.randn(50, generator=g)
    model = torch.nn.Linear(4, 1, bias=False)
    with torch.no_grad():
        model.weight.copy_(torch.randn(1, 4, generator=g))
    w_star = model.weight.detach().clone()
    eps, nbeta, gamma, box = 1e-3, 30.0, 5.0, 0.05
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "SGLD has been deprecated"
        opt = SGLD(
            model.parameters(), lr=eps, localization=gamma, nbeta=nbeta, bounding_box_size=box
        )
    noise = torch.Generator().manual_seed(5)
    theirs = []
    for _ in range(3):
        opt.zero_grad()
        loss = 0.5 * (model(x)[:, 0] - y).square().mean()
        theirs.append(float(loss.detach()))
        loss.backward()
        opt.step(noise_generator=noise)

    def loss_fn(
        p: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor]
    ) -> torch.Tensor:
        xb, yb = batch
        return 0.5 * (xb @ p["weight"][0] - yb).square().mean()

    opts = PaperSGLDOptions(
        step_size=eps, num_steps=3, num_chains=1, batch_size=50, gamma=gamma, nbeta=nbeta,
        bounding_box=box,
    )  # fmt: skip
    ours = paper_sgld(loss_fn, {"weight": w_star}, (x, y), opts, seed=5)
    moved = float((model.weight.detach() - w_star).abs().max())
    assert moved > 1e-3  # the steps did move the weights
    torch.testing.assert_close(
        ours.final_position[0], model.weight.detach()[0], rtol=1e-5, atol=1e-6
    )
    assert ours.loss_trace[0].tolist() == pytest.approx(theirs, rel=1e-5)


def test_lambda_hat_near_laplace_value_on_a_regular_regression() -> None:
    """Realisable linear regression (y = x·1, d = 3, n = 2000) at its least-squares ŵ: λ̂ at
    γ = 10, nβ = n/log n, ε = 10⁻⁴, B = 100, 8 chains × 3,000 steps (20% burn-in) within 3
    stderr of ½Σ nβh/(nβh + γ) over the eigenvalues h of XᵀX/n."""
    g = torch.Generator().manual_seed(0)
    n, d, gamma = 2000, 3, 10.0
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = x @ torch.ones(d, dtype=torch.float64)
    w_hat = torch.linalg.lstsq(x, y[:, None]).solution[:, 0]
    opts = PaperSGLDOptions(
        step_size=1e-4, num_steps=3000, num_chains=8, batch_size=100, gamma=gamma, burn_in=0.2
    )
    res = paper_sgld(_half_mse, {"w": w_hat}, (x, y), opts, seed=1)
    nbeta = n / math.log(n)
    h = torch.linalg.eigvalsh(x.T @ x / n)
    laplace = float(0.5 * (nbeta * h / (nbeta * h + gamma)).sum())
    assert res.nbeta == pytest.approx(nbeta)
    assert 0 < res.stderr < 0.2
    assert abs(res.mean - laplace) <= 3 * res.stderr, (res.mean, res.stderr, laplace)


def test_potential_matches_its_laplace_value() -> None:
    """K(w) = ½(w₁² + 4w₂²) at n = 10⁴ (nβ = n/log n), γ = 1: λ_β = ½Σ nβh/(nβh + 1)."""
    n, gamma = 10_000, 1.0
    curv = torch.tensor([1.0, 4.0], dtype=torch.float64)
    opts = PaperSGLDOptions(step_size=2e-5, num_steps=3000, num_chains=8, gamma=gamma, burn_in=0.2)
    res = paper_sgld_potential(
        lambda w: 0.5 * (curv * w.square()).sum(-1), [0.0, 0.0], n, opts, seed=2
    )
    nbeta = n / math.log(n)
    target = float(0.5 * (nbeta * curv / (nbeta * curv + gamma)).sum())
    assert abs(res.mean - target) <= 3 * res.stderr, (res.mean, res.stderr, target)


# ---- the calibrate adapters and the report's accuracy summary ----------------------------------


def _case(name: str):
    from verification.calibration import battery

    return next(c for c in battery("fast") if c.name == name)


def test_paper_sgld_estimator_runs_in_calibrate_at_the_paper_settings() -> None:
    from verification.calibration import calibrate, paper_sgld_estimator
    from verification.calibration.models import closed_form_target

    case = _case("linear regression (d=3)")
    built = case.build(0)
    est = paper_sgld_estimator(case, built, 0, num_steps=50)
    assert est.diagnostics == () and est.config.gamma == 10.0 and est.config.step_size == 1e-5
    assert est.nbeta == pytest.approx(case.n / math.log(case.n))
    assert est.loss_trace.shape == (4, 50) and est.config.batch_size == 100
    report = calibrate(lambda c, b, s: paper_sgld_estimator(c, b, s, num_steps=50), [case])
    (record,) = report.records
    expected = closed_form_target(built, case.n / math.log(case.n), 10.0).value
    assert record.target == pytest.approx(expected) and record.findings == ()


def test_devinterp_estimator_reports_across_chain_stderr() -> None:
    pytest.importorskip("devinterp")
    from verification.calibration import devinterp_estimator

    case = _case("linear regression (d=3)")
    est = devinterp_estimator(case, case.build(0), 0)
    per = torch.tensor(est.per_chain, dtype=torch.float64)
    assert len(est.per_chain) == 10 and est.diagnostics == ()
    assert est.nbeta == pytest.approx(256 / math.log(256)) and est.config.gamma == 0.0
    assert est.mean == pytest.approx(float(per.mean()), rel=1e-6)
    assert est.stderr == pytest.approx(float(per.std()) / math.sqrt(10), rel=1e-9)
    potential = _case("Newton K = x⁴ + y⁶")
    with pytest.raises(InvalidArgumentError, match="potential"):
        devinterp_estimator(potential, potential.build(0), 0)


def test_a_target_that_does_not_exist_is_a_failed_run() -> None:
    """γ = 0 on y = x·w0·w1: the flat valleys make the posterior improper; no crash, a failure."""
    from types import SimpleNamespace

    from verification.calibration import calibrate

    def at_gamma_zero(case, built, seed):
        return SimpleNamespace(
            mean=0.3, stderr=0.01, diagnostics=(), nbeta=46.0, config=SimpleNamespace(gamma=0.0)
        )

    (record,) = calibrate(at_gamma_zero, [_case("regression y = x·w0·w1 (n=2000)")]).records
    assert record.failure.startswith("no target at nβ = 46, γ = 0") and not record.correct
    assert record.estimate == 0.3 and math.isnan(record.target)


def test_accuracy_summary_by_hand() -> None:
    from verification.calibration import CalibrationRecord, CalibrationReport

    def rec(est: float, se: float, target: float, seconds: float, failure: str = ""):
        return CalibrationRecord.make(
            case="c", family="f", dim=1, kind="data", seed=0, estimate=est, stderr=se,
            target=target, target_sigma=0.0, findings=(), seconds=seconds, failure=failure,
        )  # fmt: skip

    # z = 1, −3, 0.5; one failed run (no z)
    report = CalibrationReport(
        (rec(1.1, 0.1, 1.0, 2.0), rec(1.7, 0.1, 2.0, 4.0), rec(0.55, 0.1, 0.5, 1.0),
         rec(math.nan, math.nan, 1.0, 9.0, "boom"))
    )  # fmt: skip
    acc = report.accuracy()
    assert (acc.runs, acc.with_z, acc.failed) == (4, 3, 1)
    assert acc.mean_bias == pytest.approx((0.1 - 0.3 + 0.05) / 3)
    assert acc.mean_rel_bias == pytest.approx((0.1 - 0.15 + 0.1) / 3)
    assert acc.mean_abs_z == pytest.approx(4.5 / 3) and acc.median_abs_z == pytest.approx(1.0)
    assert acc.coverage_2 == pytest.approx(2 / 3) and acc.median_seconds == pytest.approx(3.0)
    assert report.to_dict()["accuracy"]["failed"] == 1
    assert "|z| ≤ 2: 0.67 of 3" in report.table()
