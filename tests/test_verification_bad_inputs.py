"""Bad input to every public function of :mod:`verification` and to its CLI.

Each call in ``TABLE`` must raise a package error (:class:`verification.InvalidArgumentError`, or
argparse's exit status 2 for the CLI) whose message names the argument, within a time and memory
bound, and the CLI must fail before any case runs. The hypothesis tests below draw more bad
values for the numeric arguments. ``SILENT`` lists inputs that used to give a plausible verdict
(a NaN estimate "disagreeing", a case's prior dropped from the estimate): each must now be
"inconclusive" with its reason.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import resource
import signal
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from unittest import mock

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import rlct
import verification
import verification.__main__ as cli
from verification import runner
from verification import strategies as vs
from verification.cases import PotentialCase, QuadraticCase
from verification.crosschecks import catalogue, crosscheck
from verification.distributed import run_on_ray
from verification.errors import InvalidArgumentError
from verification.report import Report, run_cases, run_report, write_report

TIME_LIMIT_S = 30  # a hang guard, not a speed goal: every call here fails in milliseconds
MEMORY_LIMIT_MB = 500  # growth of the process's peak RSS allowed for one bad call


@dataclass(frozen=True)
class Estimate:
    """The fields ``decide`` reads from an LLCEstimate."""

    mean: float = 0.5
    stderr: float = 0.01
    ess: float = 1000.0
    rhat: float = 1.0
    nbeta: float = 1000.0
    diagnostics: tuple = ()


@dataclass(frozen=True)
class Reference:
    value: float = 0.5
    abserr: float = 0.001


@dataclass(frozen=True)
class Bad:
    label: str  # what is called, with what
    arg: str  # the argument the error must name
    call: Callable[[], object]


class CLIExit(Exception):
    """argparse's exit, with what it printed."""

    def __init__(self, code: object, stderr: str) -> None:
        super().__init__(stderr)
        self.code = code


class WorkStarted(Exception):
    """A case started running: the CLI accepted a bad option."""


def run_cli(argv: list[str]) -> object:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            return cli.main(argv)
        except SystemExit as e:
            raise CLIExit(e.code, err.getvalue()) from None


HALF = rlct.normal_crossing([1])
W = sp.Symbol("w", real=True)


def _decide(**kw: object) -> Callable[[], object]:
    """decide("x²", λ = 1/2, a healthy estimate) with some arguments replaced."""
    args = {"case": "x²", "exact": HALF, "estimate": Estimate(), **kw}
    case, exact, estimate = args.pop("case"), args.pop("exact"), args.pop("estimate")
    return lambda: verification.decide(case, exact, estimate, **args)


def _function_table(tmp: Path) -> list[Bad]:
    settings = verification.Settings()
    blocker = tmp / "a file"
    blocker.write_text("not a folder")
    report = Report((), (), settings, 0.0)
    rows: list[Bad] = []
    add = rows.append
    # decide
    for arg, kw in [
        ("case", {"case": 1}),
        ("case", {"case": None}),
        ("exact", {"exact": "1/2"}),
        ("exact", {"exact": 0.5}),
        ("estimate", {"estimate": None}),
        ("estimate", {"estimate": 0.5}),
        ("estimate.mean", {"estimate": replace(Estimate(), mean="0.5")}),
        ("estimate.stderr", {"estimate": replace(Estimate(), stderr=None)}),
        ("estimate.diagnostics", {"estimate": replace(Estimate(), diagnostics=None)}),
        ("rule", {"rule": {"z_crit": 3.0}}),
        ("rule", {"rule": None}),
        ("systematic", {"systematic": -0.1}),
        ("systematic", {"systematic": math.nan}),
        ("systematic", {"systematic": math.inf}),
        ("systematic", {"systematic": "0.1"}),
        ("seconds", {"seconds": "fast"}),
        ("reference", {"reference": object()}),
        ("reference.value", {"reference": Reference(value="0.5")}),
    ]:
        add(Bad(f"decide({kw})", arg, _decide(**kw)))
    # DecisionRule
    for arg, values in [
        ("z_crit", [0.0, -1.0, math.nan, math.inf, "3", True, None]),
        ("min_ess", [-1.0, math.nan, math.inf, "100"]),
        ("max_rhat", [0.5, math.nan, math.inf, None]),
    ]:
        for v in values:
            add(
                Bad(
                    f"DecisionRule({arg}={v!r})",
                    arg,
                    lambda a=arg, v=v: verification.DecisionRule(**{a: v}),
                )
            )
    # Settings
    for arg, values in [
        ("n", [-5, 0, 1, 2.5, "100", True, 10**12, math.nan]),
        ("num_chains", [0, -1, 1.5, "8", 10**9]),
        ("seed", [-1, 1.5, "0", 2**64]),
        ("device", ["nonsense", "", 3, "CPU", "meta", "cuda:-1"]),
        ("rule", [None, "fast"]),
    ]:
        for v in values:
            add(
                Bad(
                    f"Settings({arg}={v!r})",
                    arg,
                    lambda a=arg, v=v: verification.Settings(**{a: v}),
                )
            )
    # crosscheck
    nc = PotentialCase("w²", W**2, (W,), (sp.Integer(0),), sp.Rational(1, 2), 1)
    for label, arg, call in [
        ("crosscheck(object())", "case", lambda: crosscheck(object())),
        ("crosscheck('w**2')", "case", lambda: crosscheck("w**2")),
        ("crosscheck(None)", "case", lambda: crosscheck(None)),
        ("crosscheck(settings='quick')", "settings", lambda: crosscheck(nc, "quick")),
        ("crosscheck(seed=-1)", "seed", lambda: crosscheck(nc, seed=-1)),
        ("crosscheck(seed=1.5)", "seed", lambda: crosscheck(nc, seed=1.5)),
        (
            "crosscheck(quadratic case without X)",
            "X",
            lambda: crosscheck(QuadraticCase(((1,),), ((1,),), None, "generic")),
        ),
    ]:
        add(Bad(label, arg, call))
    # check_closed_forms, catalogue
    for v in [0, -3, 2.5, "4", 11, 10**6, True]:
        add(
            Bad(
                f"check_closed_forms(max_size={v!r})",
                "max_size",
                lambda v=v: verification.check_closed_forms(v),
            )
        )
    for v in [-1, 0.5, "0"]:
        add(
            Bad(
                f"check_closed_forms(seed={v!r})",
                "seed",
                lambda v=v: verification.check_closed_forms(2, v),
            )
        )
    for v in [1, 11, 2.5, "4", True]:
        add(
            Bad(
                f"check_dln_ideals(max_params={v!r})",
                "max_params",
                lambda v=v: verification.check_dln_ideals(v),
            )
        )
    for v in ["yes", 1, None]:
        add(Bad(f"catalogue(quick={v!r})", "quick", lambda v=v: catalogue(v)))
    # run_cases, run_report, write_report, run_on_ray
    for label, arg, call in [
        ("run_cases(settings='x')", "settings", lambda: run_cases([], "x")),
        ("run_cases(workers=0)", "workers", lambda: run_cases([], settings, 0)),
        ("run_cases(workers=-1)", "workers", lambda: run_cases([], settings, -1)),
        ("run_cases(workers=1.5)", "workers", lambda: run_cases([], settings, 1.5)),
        ("run_cases(workers=10**6)", "workers", lambda: run_cases([], settings, 10**6)),
        ("run_cases(threads=0)", "threads", lambda: run_cases([], settings, threads=0)),
        ("run_cases(threads='1')", "threads", lambda: run_cases([], settings, threads="1")),
        ("run_cases([object()])", "entries[0]", lambda: run_cases([object()], settings)),
        (
            "run_report(engine='spark')",
            "engine",
            lambda: run_report(True, settings, engine="spark"),
        ),
        ("run_report(settings=None)", "settings", lambda: run_report(True, None)),
        ("run_report(workers=0)", "workers", lambda: run_report(True, settings, workers=0)),
        ("run_report(threads=0)", "threads", lambda: run_report(True, settings, threads=0)),
        ("run_report(quick='yes')", "quick", lambda: run_report("yes", settings)),
        ("write_report(report='x')", "report", lambda: write_report("x", tmp)),
        ("write_report(out under a file)", "a file", lambda: write_report(report, blocker / "r")),
        ("run_on_ray(num_cpus=0)", "num_cpus", lambda: run_on_ray([], settings, num_cpus=0)),
        ("run_on_ray(threads=0)", "threads", lambda: run_on_ray([], settings, threads=0)),
        ("run_on_ray(settings=None)", "settings", lambda: run_on_ray([], None)),
    ]:
        add(Bad(label, arg, call))
    # assert_llc_matches
    for label, arg, call in [
        (
            "assert_llc_matches(None, λ)",
            "estimate",
            lambda: verification.assert_llc_matches(None, HALF),
        ),
        (
            "assert_llc_matches(est, 0.5)",
            "exact",
            lambda: verification.assert_llc_matches(Estimate(), 0.5),
        ),
        (
            "assert_llc_matches(rule='thorough')",
            "rule",
            lambda: verification.assert_llc_matches(Estimate(), HALF, rule="thorough"),
        ),
        (
            "assert_llc_matches(name=3)",
            "name",
            lambda: verification.assert_llc_matches(Estimate(), HALF, name=3),
        ),
    ]:
        add(Bad(label, arg, call))
    # strategies: empty or malformed size ranges, refused when the strategy is built
    for fn, arg, values in [
        (vs.normal_crossing_cases, "max_dim", [0, -1, 1.5]),
        (vs.normal_crossing_cases, "max_k", [0, -2]),
        (vs.normal_crossing_cases, "priors", ["yes"]),
        (vs.newton_polynomials, "depth", [-1]),
        (vs.newton_polynomials, "max_k", [0]),
        (vs.newton_polynomials, "max_dim", [0, "5"]),
        (vs.rrr_cases, "max_size", [0, -1, None]),
        (vs.dln_cases, "max_layers", [0]),
        (vs.dln_cases, "max_width", [0, 2.5]),
        (vs.quadratic_shapes, "max_d", [0]),
        (vs.quadratic_shapes, "max_p", [-1]),
        (vs.quadratic_shapes, "max_K", [0]),
        (vs.quadratic_cases, "max_K", [0]),
        (vs.quadratic_cases, "data", ["yes"]),
        (vs.bad_inputs, "estimator", ["no"]),
    ]:
        for v in values:
            add(Bad(f"{fn.__name__}({arg}={v!r})", arg, lambda f=fn, a=arg, v=v: f(**{a: v})))
    return rows


def _cli_table(tmp: Path) -> list[Bad]:
    blocker = tmp / "a file"
    blocker.write_text("not a folder")
    out = str(tmp / "cli-report")
    rows = []
    for opt, values in [
        ("--n", ["-5", "0", "1", "abc", "2.5", "1e4", "", str(10**12)]),
        ("--chains", ["0", "-1", "x", "1.5", str(10**9)]),
        ("--workers", ["0", "-2", "x", str(10**6)]),
        ("--seed", ["-1", "x", "1.5", str(2**64)]),
        ("--threads", ["0", "-1", "x"]),
        ("--device", ["nonsense", "", "CPU", "meta", "cuda:-1"]),
        ("--engine", ["spark"]),
    ]:
        for v in values:
            argv = ["--quick", "--no-progress", "--out", out, opt, v]
            rows.append(Bad(f"cli {opt} {v!r}", opt, lambda a=argv: run_cli(a)))
    import torch

    if not torch.cuda.is_available():
        argv = ["--quick", "--no-progress", "--out", out, "--device", "cuda"]
        rows.append(Bad("cli --device cuda (no CUDA here)", "--device", lambda: run_cli(argv)))
    rows.append(
        Bad(
            "cli --ray-address without --engine ray",
            "--ray-address",
            lambda: run_cli(["--quick", "--no-progress", "--out", out, "--ray-address", "auto"]),
        )
    )
    rows.append(
        Bad(
            "cli --out under a file",
            "--out",
            lambda: run_cli(["--quick", "--no-progress", "--out", str(blocker / "r")]),
        )
    )
    return rows


class _Timeout(Exception):
    pass


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kB


def outcome(bad: Bad) -> str:
    """ "ok", or what went wrong: no error, an unclear error, a hang, too much memory."""

    def alarm(signum, frame):
        raise _Timeout

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(TIME_LIMIT_S)
    before = _peak_rss_mb()
    try:
        bad.call()
        result = "no error"
    except _Timeout:
        result = f"still running after {TIME_LIMIT_S} s"
    except WorkStarted:
        result = "accepted: a case started running"
    except CLIExit as e:
        text = str(e)
        result = "ok" if e.code == 2 and _names(text, bad.arg) else f"exit {e.code}: {text[-200:]}"
    except (InvalidArgumentError, OSError) as e:
        result = "ok" if _names(str(e), bad.arg) else f"{type(e).__name__} not naming it: {e}"
    except Exception as e:  # the table's point: any other error is an unclear one
        result = f"unclear {type(e).__name__}: {str(e)[:200]}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    grown = _peak_rss_mb() - before
    if result == "ok" and grown > MEMORY_LIMIT_MB:
        result = f"peak memory grew by {grown:.0f} MB"
    return result


def _names(message: str, arg: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(arg)}(?!\w)", message) is not None


def _refuse_work(job: object) -> None:
    raise WorkStarted(job)


@pytest.fixture
def no_work(monkeypatch):
    """Any case that starts running raises WorkStarted."""
    monkeypatch.setattr(runner, "_run_one", _refuse_work)


def _labels(rows: list[Bad]) -> list[str]:
    return [b.label for b in rows]


def test_every_bad_argument_to_a_function_gives_a_clear_error(tmp_path, no_work):
    rows = _function_table(tmp_path)
    assert len(rows) > 100
    wrong = {b.label: got for b in rows if (got := outcome(b)) != "ok"}
    assert not wrong, wrong


def test_every_bad_cli_option_fails_before_any_work(tmp_path, no_work):
    rows = _cli_table(tmp_path)
    assert len(rows) >= 30
    wrong = {b.label: got for b in rows if (got := outcome(b)) != "ok"}
    assert not wrong, wrong
    assert not (tmp_path / "cli-report").exists()  # not even the output folder was made


INT_OPTIONS = {"--n": 2, "--chains": 1, "--workers": 1, "--seed": 0, "--threads": 1}


def _not_an_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return not text.startswith("-")  # "-x" is read by argparse as another option
    return False


@given(
    opt=st.sampled_from(sorted(INT_OPTIONS)),
    value=st.one_of(st.integers(max_value=-1), st.text(max_size=8).filter(_not_an_int)),
)
def test_cli_integer_options_refuse_drawn_bad_values(tmp_path_factory, opt, value):
    if isinstance(value, int):
        value = str(INT_OPTIONS[opt] + value)  # below the option's least value
    out = tmp_path_factory.mktemp("cli") / "r"
    bad = Bad(f"cli {opt} {value!r}", opt, lambda: run_cli(["--out", str(out), opt, value]))
    with mock.patch.object(runner, "_run_one", _refuse_work):
        assert outcome(bad) == "ok"
    assert not out.exists()


bad_floats = st.one_of(st.just(math.nan), st.just(math.inf), st.floats(max_value=-1e-300))


@given(arg=st.sampled_from(["z_crit", "min_ess", "max_rhat"]), value=bad_floats)
def test_decision_rule_refuses_drawn_thresholds(arg, value):
    if arg == "max_rhat":
        value = min(value, 0.999) if not math.isnan(value) else value
    bad = Bad(
        f"DecisionRule({arg}={value})", arg, lambda: verification.DecisionRule(**{arg: value})
    )
    assert outcome(bad) == "ok"


@given(
    arg=st.sampled_from(["n", "num_chains", "seed"]),
    value=st.integers(max_value=1) | st.integers(min_value=2**63),
)
def test_settings_refuse_drawn_sizes(arg, value):
    lo, hi = {"n": (2, 10**7), "num_chains": (1, 4096), "seed": (0, 2**63 - 1)}[arg]
    if lo <= value <= hi:
        value = lo - 1
    bad = Bad(f"Settings({arg}={value})", arg, lambda: verification.Settings(**{arg: value}))
    assert outcome(bad) == "ok"


SIZE_ARGS = [
    (vs.normal_crossing_cases, "max_dim", 1),
    (vs.normal_crossing_cases, "max_k", 1),
    (vs.newton_polynomials, "depth", 0),
    (vs.newton_polynomials, "max_dim", 1),
    (vs.rrr_cases, "max_size", 1),
    (vs.dln_cases, "max_layers", 1),
    (vs.dln_cases, "max_width", 1),
    (vs.quadratic_shapes, "max_p", 1),
    (vs.quadratic_cases, "max_d", 1),
    (vs.diffeomorphic_polynomials, "dim", 2),
    (vs.diffeomorphic_polynomials, "max_degree", 2),
    (vs.diffeomorphic_polynomials, "max_k", 1),
]


@given(which=st.sampled_from(SIZE_ARGS), below=st.integers(1, 2**40))
def test_strategies_refuse_drawn_empty_ranges_when_built(which, below):
    fn, arg, least = which
    bad = Bad(f"{fn.__name__}({arg}={least - below})", arg, lambda: fn(**{arg: least - below}))
    assert outcome(bad) == "ok"


# --- inputs that used to give a plausible verdict -------------------------------------------

NON_FINITE = [math.nan, math.inf, -math.inf]


def _silent_table() -> list[tuple[str, Callable[[], object], str]]:
    """(label, call returning a CrossCheck, a word its reasons must contain)."""
    rows = []
    for field, word in [
        ("mean", "estimate"),
        ("stderr", "standard error"),
        ("ess", "ESS"),
        ("rhat", "R-hat"),
        ("nbeta", "nβ"),
    ]:
        for v in NON_FINITE:
            est = replace(Estimate(), **{field: v})
            rows.append((f"decide({field}={v})", _decide(estimate=est), word))
    for v in NON_FINITE:
        ref = Reference(value=v)
        rows.append((f"decide(reference value {v})", _decide(reference=ref), "reference"))
        ref = Reference(abserr=v)
        rows.append((f"decide(reference error {v})", _decide(reference=ref), "reference"))
    tie = rlct.normal_crossing([1, 1])
    rows.append(
        ("decide(m = 2, nβ = 1)", _decide(exact=tie, estimate=replace(Estimate(), nbeta=1.0)), "nβ")
    )
    rows.append(
        (
            "decide(stderr = −0.01)",
            _decide(estimate=replace(Estimate(), stderr=-0.01)),
            "standard error",
        )
    )
    return rows


@pytest.mark.parametrize(("label", "call", "word"), _silent_table(), ids=lambda x: str(x)[:40])
def test_broken_numbers_are_inconclusive_never_a_verdict(label, call, word):
    check = call()
    assert check.verdict == "inconclusive", (label, check.verdict, check.reasons)
    assert any(word in r for r in check.reasons), check.reasons


@given(
    field=st.sampled_from(["mean", "stderr", "ess", "rhat", "nbeta"]),
    value=st.sampled_from(NON_FINITE),
    mean=st.floats(-10, 10),
)
def test_drawn_non_finite_estimates_are_inconclusive(field, value, mean):
    est = replace(Estimate(mean=mean), **{field: value})
    assert verification.decide("x²", HALF, est).verdict == "inconclusive"


@pytest.mark.parametrize(
    ("k", "h"), [((1,), (1,)), ((2,), (1,)), ((1, 1), (1, 0))], ids=["w2h1", "w4h1", "w2w2h10"]
)
def test_cases_with_a_prior_are_estimated_with_it(k, h):
    """The prior Π|w_j|^(h_j) is sampled with the potential (before, the estimate dropped it and
    h = 1 "disagreed" at z = −51): the verdict compares like with like and agrees."""
    import sympy as sp

    from verification.cases import PotentialCase

    ws = sp.symbols(f"w0:{len(k)}", real=True)
    K = sp.Mul(*[w ** (2 * kj) for w, kj in zip(ws, k, strict=True)])
    lam = min(sp.Rational(hj + 1, 2 * kj) for kj, hj in zip(k, h, strict=True))
    case = PotentialCase("prior", K, ws, tuple(sp.Integer(x) for x in h), lam, 1)
    check = crosscheck(case, verification.Settings(n=10_000, num_chains=8))
    assert check.exact.lam == lam
    assert check.verdict == "agree", check
