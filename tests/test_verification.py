"""The cross-check rule, the closed-form checker, the report writer and the CLI."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sympy as sp

import rlct
from numeric.types import Finding
from verification import assert_llc_matches
from verification.closed_forms import check_closed_forms
from verification.crosschecks import Entry, Settings
from verification.decision import DecisionRule, decide
from verification.report import Report, format_findings, run_cases, write_report


@dataclass(frozen=True)
class FakeEstimate:
    """The fields ``decide`` reads from an LLCEstimate."""

    mean: float
    stderr: float
    ess: float = 1000.0
    rhat: float = 1.0
    nbeta: float = 1000.0
    diagnostics: tuple = field(default=())


@dataclass(frozen=True)
class FakeReference:
    value: float
    abserr: float


HALF = rlct.normal_crossing([1])  # λ = 1/2, m = 1
TIE = rlct.normal_crossing([1, 1])  # λ = 1/2, m = 2


def test_agree_within_z_crit():
    c = decide("x²", HALF, FakeEstimate(0.52, 0.01))
    assert c.verdict == "agree"
    assert c.z == pytest.approx(2.0)


def test_disagree_beyond_z_crit():
    c = decide("x²", HALF, FakeEstimate(0.60, 0.01))
    assert c.verdict == "disagree"
    assert c.z == pytest.approx(10.0)


def test_multiplicity_bias_shifts_the_target():
    # target = 1/2 − (2−1)/log(1000) = 0.5 − 0.14476...; σ_bias = half of the shift.
    c = decide("x²y²", TIE, FakeEstimate(0.36, 0.01))
    shift = 1 / sp.log(1000).evalf()
    assert c.target == pytest.approx(0.5 - float(shift))
    assert c.bias_sigma == pytest.approx(float(shift) / 2)
    assert c.verdict == "agree"


def test_reference_replaces_the_expansion():
    c = decide("x²", HALF, FakeEstimate(0.45, 0.01), reference=FakeReference(0.45, 0.001))
    assert c.target == 0.45
    assert c.verdict == "agree"


def test_a_reference_for_other_settings_than_the_estimates_is_refused():
    """An ExpectedLLC carries the nβ and γ it holds for; the estimate's must match (a reference
    at nβ = 10 against an estimate at nβ = 1,086 gave 'disagree' at z = 5.2)."""
    from types import SimpleNamespace

    from verification.errors import InvalidArgumentError, InvalidTypeError

    ref = SimpleNamespace(value=0.45, abserr=0.001, nbeta=10.0, gamma=1.0)
    with pytest.raises(InvalidArgumentError, match=r"nbeta = 10.*nbeta = 1000"):
        decide("x²", HALF, FakeEstimate(0.45, 0.01), reference=ref)
    est = SimpleNamespace(**vars(FakeEstimate(0.45, 0.01)), config=SimpleNamespace(gamma=100.0))
    ref = SimpleNamespace(value=0.45, abserr=0.001, nbeta=1000.0, gamma=1.0)
    with pytest.raises(
        InvalidArgumentError, match="gamma = 1, but the estimate ran at gamma = 100"
    ):
        decide("x²", HALF, est, reference=ref)
    ref = SimpleNamespace(value=0.45, abserr=0.001, nbeta=1000.0, gamma=100.0)
    assert decide("x²", HALF, est, reference=ref).verdict == "agree"
    with pytest.raises(InvalidTypeError, match="diagnostics must be a sequence"):
        decide("x²", HALF, SimpleNamespace(**{**vars(FakeEstimate(0.5, 0.01)), "diagnostics": 5}))


@pytest.mark.parametrize(
    ("estimate", "reason"),
    [
        (FakeEstimate(0.5, 0.01, ess=20.0), "ESS"),
        (FakeEstimate(0.5, 0.01, rhat=1.3), "R-hat"),
        (
            FakeEstimate(
                0.5, 0.01, diagnostics=(Finding("diverged", "error", "chain 3 blew up", {}),)
            ),
            "diverged",
        ),
    ],
)
def test_broken_chains_are_never_agree(estimate, reason):
    c = decide("x²", HALF, estimate)
    assert c.verdict == "inconclusive"
    assert any(reason in r for r in c.reasons)


def test_report_says_why_a_case_is_inconclusive(tmp_path):
    broken = FakeEstimate(
        0.5, 0.01, diagnostics=(Finding("diverged", "error", "chain 3 blew up", {}),)
    )
    c = decide("x²", HALF, broken)
    assert c.findings == ("[error] diverged: chain 3 blew up",)
    assert decide("x²", HALF, FakeEstimate(0.5, 0.01)).findings == ()
    report = Report([c], (), Settings(), 0.0)
    assert format_findings(report.records) == "- x²: [error] diverged: chain 3 blew up"
    text = write_report(report, tmp_path).read_text()
    assert "- x²: [error] diverged: chain 3 blew up" in text
    assert json.loads((tmp_path / "records.json").read_text())[0]["findings"] == (
        "[error] diverged: chain 3 blew up"
    )


def test_bounds_are_not_compared():
    x, y, z = sp.symbols("x y z")
    ideal = [x * y * z, x**2 - y**3 + z**5]  # degenerate, and no step solves it: bounds only
    c = decide("⟨xyz, x² − y³ + z⁵⟩", rlct.from_ideal(ideal, (x, y, z)), FakeEstimate(0.5, 0.01))
    assert c.verdict == "no exact value"


def test_assert_llc_matches_fails_with_the_numbers():
    assert_llc_matches(FakeEstimate(0.5, 0.01), HALF)
    with pytest.raises(AssertionError, match=r"0\.7 ± 0\.01 vs exact λ = 1/2"):
        assert_llc_matches(FakeEstimate(0.7, 0.01), HALF)


def test_closed_form_checker_finds_no_disagreement_in_linear_networks():
    summaries = {s.formula: s for s in check_closed_forms(max_size=3)}
    rrr_dln = summaries["Aoyagi 2024 DLN (2 layers) vs Aoyagi–Watanabe RRR"]
    # Shapes M, N, H ∈ {1,2,3} with every r ≤ min: Σ (min+1) = 27 + Σ min, and Σ min counts the
    # triples with min ≥ 1, ≥ 2, ≥ 3: 27 + 8 + 1. So 27 + 36 = 63 rows.
    assert rrr_dln.checked == 63
    assert rrr_dln.disagreements == 0
    assert summaries["Aoyagi–Watanabe RRR at full rank vs Jacobian rank"].disagreements == 0
    ideal = summaries["Aoyagi 2024 DLN vs the exact λ of its ideal"]
    assert (ideal.disagreements, ideal.undecided) == (0, 0)
    shapes = {c.case for c in ideal.checks}
    # the two shapes whose ideals needed a blow-up of a codimension-2 subspace (rlct)
    assert {"widths=[1, 2, 2], r=0", "widths=[2, 2, 1], r=0"} <= shapes
    assert {"widths=[1, 1, 1], r=0", "widths=[1, 1, 1], r=1"} <= shapes  # every rank ≤ min width


def _entry(name: str, mean: float) -> Entry:
    def run(settings: Settings, seed: int):
        return decide(name, HALF, FakeEstimate(mean, 0.01))

    return Entry(name, "fake", run)


def test_report_files_and_failed_cases(tmp_path):
    records = run_cases([_entry("good", 0.5), _entry("bad", 0.9)], Settings(), progress=False)
    report = Report(records, check_closed_forms(max_size=2), Settings(), 0.0)
    assert [r.case for r in report.failed] == ["bad"]
    path = write_report(report, tmp_path)
    text = path.read_text()
    assert "| good | 1/2 | 1 | 0.500 ± 0.010" in text
    assert "disagree" in text
    rows = json.loads((tmp_path / "records.json").read_text())
    assert [r["verdict"] for r in rows] == ["agree", "disagree"]
    assert (tmp_path / "records.csv").read_text().count("\n") == 3
    assert (tmp_path / "llc_vs_exact.png").stat().st_size > 1000


def test_decision_rule_is_described():
    assert "3.0" in DecisionRule().describe()


def _fake_run(name: str, mean: float, settings: Settings, seed: int):
    return decide(f"{name} seed={seed}", HALF, FakeEstimate(mean, 0.01))


def _picklable_entries():
    from functools import partial

    return [
        Entry(n, "fake", partial(_fake_run, n, m))
        for n, m in [("a", 0.5), ("b", 0.51), ("c", 0.49)]
    ]


def test_process_pool_gives_the_same_records_as_serial():
    entries = _picklable_entries()
    serial = run_cases(entries, Settings(seed=7), workers=1, progress=False)
    pooled = run_cases(entries, Settings(seed=7), workers=2, progress=False)
    assert [r.case for r in serial] == ["a seed=7", "b seed=8", "c seed=9"]
    assert [(r.case, r.z) for r in pooled] == [(r.case, r.z) for r in serial]


@pytest.mark.xdist_group("ray")  # one local Ray cluster at a time
def test_ray_engine_gives_the_same_records():
    ray = pytest.importorskip("ray", reason="the Ray engine is an optional extra (`ray`)")
    from verification.distributed import run_on_ray

    entries = _picklable_entries()
    serial = run_cases(entries, Settings(seed=3), progress=False)
    # Ray workers import this test module by name: put its folder on their path.
    tests_dir = str(Path(__file__).parent)
    env = {"runtime_env": {"env_vars": {"PYTHONPATH": tests_dir}}}
    remote = run_on_ray(entries, Settings(seed=3), num_cpus=2, init_kwargs=env)
    assert not ray.is_initialized()
    assert [(r.case, r.z, r.verdict) for r in remote] == [(r.case, r.z, r.verdict) for r in serial]


def test_catalogue_entries_pickle():
    import pickle

    from verification.crosschecks import catalogue

    names = [e.name for e in catalogue(quick=False)]
    assert len(names) == len(set(names))
    for e in catalogue(quick=True):
        assert pickle.loads(pickle.dumps(e)).name == e.name


def test_crosscheck_on_a_normal_crossing_potential_agrees():
    from verification import crosscheck
    from verification.cases import PotentialCase

    w = sp.Symbol("w", real=True)
    case = PotentialCase("w⁴", w**4, (w,), (sp.Integer(0),), sp.Rational(1, 4), 1)
    check = crosscheck(case, Settings(n=10_000, num_chains=4, seed=1))
    assert check.exact.lam == sp.Rational(1, 4)
    assert check.verdict == "agree", check
    assert check.reference is not None  # 1-D: the quadrature reference λ_β is used


def test_crosscheck_samples_a_fractional_prior_exponent():
    """x² under |x|^(1/2): λ = (h + 1)/(2k) = 3/4. The prior was cast to int (h = 0, a flat
    prior, λ̂ ≈ 0.51) and the verdict read 'disagree' at z = −24.8."""
    from verification import crosscheck
    from verification.cases import PotentialCase

    x = sp.Symbol("x", real=True)
    case = PotentialCase("x²|x|^½", x**2, (x,), (sp.Rational(1, 2),), sp.Rational(3, 4), 1)
    check = crosscheck(case, Settings(n=10_000, num_chains=4, seed=1))
    assert check.exact.lam == sp.Rational(3, 4)
    assert check.verdict == "agree", check


def test_crosscheck_refuses_a_quadratic_case_without_data():
    from verification import crosscheck
    from verification.cases import QuadraticCase

    with pytest.raises(ValueError, match="needs data"):
        crosscheck(QuadraticCase(((1,),), ((1,),), None, "generic"))


def test_regression_potential_is_the_full_data_loss() -> None:
    """The sufficient-statistics potential behind the report's quadrature reference equals the
    loss of the data at random parameters."""
    import sympy as sp
    import torch

    from verification.cases import PotentialCase
    from verification.models import regression_problem

    a, b = sp.symbols("a b", real=True)
    case = PotentialCase("w1²w2⁴", a**2 * b**4, (a, b), (sp.Integer(0),) * 2, None, None)
    prob = regression_problem(case, 500, torch.Generator().manual_seed(3))
    w = torch.randn(6, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    direct = torch.stack([prob.loss_fn({"w": wi}, prob.data) for wi in w])
    torch.testing.assert_close(prob.potential(w), direct)


def test_models_refuse_strings_and_do_not_run_them(tmp_path: Path) -> None:
    """sympy.Poly(text, …) would run text through sympy's parser (which evaluates Python): the
    potential and the regression's exponents take sympy expressions only."""
    import torch

    from verification.cases import PotentialCase
    from verification.models import polynomial_potential, regression_problem

    marker = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {marker}') or w**2"
    w = sp.Symbol("w", real=True)
    with pytest.raises(TypeError, match=r"^K must be a sympy expression.*refused"):
        polynomial_potential(payload, (w,))
    case = PotentialCase("payload", payload, (w,), (sp.Integer(0),), None, None)
    with pytest.raises(TypeError, match=r"^K must be a sympy expression"):
        regression_problem(case, 10, torch.Generator().manual_seed(0))
    with pytest.raises(TypeError, match=r"^variables must be .* sympy Symbols"):
        polynomial_potential(w**2, ("w",))
    assert not marker.exists()
    # a sympy expression still gives the potential: K(w) = w² + 3w⁴ at w = 0.5 is 0.4375
    K = polynomial_potential(w**2 + 3 * w**4, (w,))
    assert K(torch.tensor([[0.5]], dtype=torch.float64)).item() == pytest.approx(0.4375)


@pytest.mark.parametrize("widths", [(2, 2, 2), (3, 2, 3), (4, 3, 4), (3, 1, 2, 3)])
def test_linear_network_min_loss_is_what_an_optimiser_reaches(widths) -> None:
    """The reduced-rank closed form against L-BFGS from a random start: never above it (it is the
    minimum) and within 1e-8 of it (the optimiser finds it)."""
    import torch

    from verification.cases import DLNCase, RRRCase
    from verification.models import linear_network_min_loss, regression_problem

    case = RRRCase(*widths, 0) if len(widths) == 3 else DLNCase(widths, 0)
    prob = regression_problem(case, 2000, torch.Generator().manual_seed(8))
    g = torch.Generator().manual_seed(1)
    ps = {
        k: (v + 0.3 * torch.randn(v.shape, generator=g, dtype=v.dtype)).requires_grad_()
        for k, v in prob.params.items()
    }
    opt = torch.optim.LBFGS(
        list(ps.values()), max_iter=3000, line_search_fn="strong_wolfe", tolerance_grad=1e-12
    )

    def closure():
        opt.zero_grad()
        loss = prob.loss_fn(ps, prob.data)
        loss.backward()
        return loss

    opt.step(closure)
    reached = float(prob.loss_fn(ps, prob.data).detach())
    lmin = linear_network_min_loss(case.widths, prob.data)
    assert lmin <= reached + 1e-12 and reached - lmin < 1e-8
    assert lmin < float(prob.loss_fn(prob.params, prob.data))  # w* = 0 is not the minimum


def test_linear_network_targets_subtract_the_data_shift() -> None:
    """On RRR M = N = H = 2 (λ = 3/2, m = 1) at n = 10⁴ the chains sit at w* = 0, nβ·(L_n(0) −
    min L_n) above the minimum: the target moves down by exactly that, computed here by hand
    from the least-squares fit (H = 2 is full rank, so min L_n is ordinary least squares)."""
    import math

    import torch

    from verification.cases import RRRCase
    from verification.models import regression_problem
    from verification.targets import true_parameter_target

    case = RRRCase(2, 2, 2, 0)
    prob = regression_problem(case, 10_000, torch.Generator().manual_seed(8))
    x, y = prob.data
    resid = y - x @ torch.linalg.pinv(x) @ y
    shift_by_hand = (
        (10_000 / math.log(10_000))
        * 0.5
        * float(y.square().sum(-1).mean() - resid.square().sum(-1).mean())
    )
    target = true_parameter_target(case, prob, case.exact(), 10_000 / math.log(10_000))
    assert target.value == pytest.approx(1.5 - shift_by_hand, abs=1e-9)
    assert 0.5 < shift_by_hand < 1.0 and target.abserr == 0.0
